r"""The main job's (C, gamma) search: as wide as LIBSVM's ``grid.py``, at the cost of a few cells.

grid.py fits 110 cells (C = 2^-5 .. 2^15, gamma = 2^-15 .. 2^3, steps of 2^2)
times 5 folds, each started anew. Here the same ranges (gamma as factors of
'scale' = 1 / (d Var X), 18 octaves: :data:`GAMMA_OCTAVES`) cost far less:

* **C is a path.** Per (gamma, fold) one warm-started regularisation path
  (:func:`leansvm.paths.binary_path.iter_binary_path`) over C in steps of 2^1, safe
  screening (Ogawa et al.) off by default: with it, the same choices took
  1.0-1.4x the time (banana, page-blocks0, satimage, magic, wdbc; the
  references cost more than they remove at steps of 2^1; ``benchmarks/main_job/bench_search.py``). The
  folds advance in lockstep and the path stops by the rules of
  :func:`_stop_reason` (accuracy clearly peaked, flat, repeating a larger
  gamma's path along the small-gamma ridge, dominated there, too costly), or
  when no sample is at its bound: then the solution is the hard-margin one, the
  same for every larger C. Cost is modelled work (the solvers' step and chunk
  counts, :attr:`PathEnd.work`), not wall seconds: without a time limit the same
  data give the same cells and choice on a quiet or a loaded machine. A path
  scored in part (the pilot's first octaves, a window an edge extends) goes on
  from its last point (:class:`PathEnd`). The
  folds are solved to :data:`SEARCH_TOL`; the chosen cell's model is trained at
  the caller's tolerance.
* **Kernel rows are computed once** per (gamma, round) for all folds and
  one-vs-one pairs (:func:`leansvm.paths.binary_path.row_cache`); the inner
  products X X' once per round for every gamma (:func:`_gamma_cache`).
* **Successive halving** (Jamieson & Talwalkar; scikit-learn's
  ``HalvingGridSearchCV`` over rows): round 0 scores a coarse gamma grid
  (steps of 2^2, grid.py's) on a small stratified subsample; every next round
  keeps the best third of the gammas, adds their neighbours at half the step
  (coarse to fine) and triples the rows, up to ``max_rows``. Round 0's pilot
  (the first octaves of C, to order the gammas) goes from the largest gamma
  down and ends at the first one that repeats the gamma above it along the
  small-gamma ridge: the smaller ones would repeat it too, and are not scored. A kept gamma
  whose best C is far above the others' runs after them, so that a cheap path
  leads the stop rules and the costly one (small gamma, large C) goes on only
  while it is ahead.
* **Edges extend.** When a round's best gamma lies on the edge of the range,
  2^2 more are tried beyond it (up to :data:`MAX_EXTENSION` octaves); when the
  best C is the path's last, its path goes on to larger C; when it is the
  first, the path is run again from 2^-4 lower. The same moves inside the
  default ranges (a gamma the pilot left out, a narrower window of a later
  round) are noted apart (``edges_moved``): the report says "range extended"
  only for moves past them.

* **A closing race.** The last round's two best cells and SVC()'s default gamma ('scale', C
  2^-2..2^5) are scored once more on twice its rows (every row where there are fewer), and
  the choice is made there (:func:`_closing_race`): the last round's best cells are often apart
  by less than their standard error, and a well-known default stays in the race, scored like
  every cell.

The choice (:func:`choose_cell`) is on the last round's cells (the race's, where it ran): the best mean
K-fold accuracy, and, with ``one_se`` > 0, the cell with the fewest support
vectors among those within ``one_se`` standard errors of it (the one-SE rule of
Hastie et al. toward the cheaper model).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.validation import check_X_y

from leansvm.core.clock import work_time
from leansvm.core.validation import per_sample_C
from leansvm.core.kernels import Kernel, resolve_gamma
from leansvm.core.threads import run_parallel
from leansvm.paths.model_selection import cached_accuracy, fold_labels, fold_paths
from leansvm.progress import Progress
from leansvm.paths.binary_path import row_cache

__all__ = ["SearchResult", "wide_search", "choose_cell", "stratified_order",
           "C_OCTAVES", "GAMMA_OCTAVES"]

#: log2 C range (grid.py's -c range)
C_OCTAVES = (-5.0, 15.0)
#: log2 of gamma / 'scale' (18 octaves as grid.py's 2^-15 .. 2^3)
GAMMA_OCTAVES = (-12.0, 6.0)
#: folds in parallel threads from this many rows on (wdbc's 455: 0.70 s in one thread, 0.79 s in two)
PARALLEL_MIN_ROWS = 1000
#: the folds' stopping tolerance (LIBSVM's -e; its default, and the final model's, is 1e-3). With 1e-2 the
#: nine KEEL sets chose the same cells or cells of the same CV accuracy and test accuracy (banana,
#: twonorm, mushroom: a neighbour, test accuracy equal or +0.07 points) in 0.6-0.95x the time
#: (page-blocks0 8.3 -> 6.9 s, banana 15.6 -> 9.6 s; ``benchmarks/main_job/bench_search.py``)
SEARCH_TOL = 1e-2
#: a kept gamma whose best C is this many octaves above the kept ones' smallest runs last in the
#: next round (:meth:`_Round.next_windows`)
COSTLY_OCTAVES = 4.0
#: a path repeats another (the 'ridge' rule, :class:`Mirror`) when their mean accuracies differ by at most
#: this many rows of the round, or MIRROR_TOL
MIRROR_ROWS = 2.5
MIRROR_TOL = 0.002
#: the furthest an edge extends the ranges, in octaves beyond each end
MAX_EXTENSION = 6.0


@dataclass
class Cell:
    """One (gamma, C) cell as scored in one round (K-fold over ``rows`` rows)."""

    log2_gamma: float
    log2_C: float
    accuracy: float            # mean over the folds
    se: float                  # standard error of the mean over the folds
    n_support: float           # mean #SV over the folds' training parts
    rows: int
    round: int


@dataclass
class SearchResult:
    """The searched surface, the choice and what the search did."""

    C: float
    gamma: float
    accuracy: float
    se: float
    n_support: float
    scale: float                                  # gamma = scale * 2^log2_gamma
    cells: list = field(default_factory=list)     # every Cell of every round
    rounds: list = field(default_factory=list)    # per round: rows, folds, gammas scored, kept, seconds
    extended: list = field(default_factory=list)  # sentences: which edge moved past the default ranges
    edges_moved: list = field(default_factory=list)   # ... and which moved inside them (a gamma the pilot left out)
    n_paths: int = 0                              # (gamma, fold) paths solved
    n_fits: int = 0                               # (gamma, fold, C) solutions
    seconds: float = 0.0
    stopped: str | None = None                    # why halving stopped before its last round (time limit)
    race: str | None = None                       # what the closing race scored (None: it did not run)

    def final_cells(self) -> list:
        last = self.rounds[-1]["round"] if self.rounds else 0
        return [c for c in self.cells if c.round == last]


def stratified_order(y, random_state=0) -> np.ndarray:
    """A permutation of the rows whose every prefix holds each class in its proportion
    (within one row): each class shuffled, then the classes interleaved by relative rank."""
    rng = np.random.default_rng(random_state)
    keys = np.empty(len(y))
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        keys[rng.permutation(idx)] = (np.arange(idx.size) + rng.random()) / idx.size
    return np.argsort(keys, kind="stable")


def _gamma_cache(kernel_name, X, gamma, inner, cache_size, tol):
    """The row cache of one gamma. For the RBF kernel, dense rows and a cache that holds them all,
    it is filled at once from the round's inner products X X', computed for the first gamma and
    kept in ``inner`` (a dict) for the others."""
    cache = row_cache(Kernel.from_params(kernel_name, gamma, 3, 0.0, X), X, cache_size, tol)
    if kernel_name == "rbf" and not sp.issparse(cache.X) and cache.capacity >= cache.n:
        if "XX'" not in inner:
            inner["XX'"] = cache.X @ cache.X.T
        cache.fill_from_inner(inner["XX'"])
    return cache


@dataclass
class Leader:
    """The round's best cell so far: its accuracy and standard error, its gamma, its position on the
    ridge (log2 gamma + log2 C) and the work of its path (:attr:`PathEnd.work`)."""

    accuracy: float = -np.inf
    se: float = 0.0
    log2_gamma: float = -np.inf
    ridge: float = np.inf
    work: float = np.inf


@dataclass
class Mirror:
    """What a gamma's path would repeat on the small-gamma ridge: the cells (log2 C -> mean accuracy)
    of the nearest larger gamma scored in the round, ``shift`` octaves above it. For small gamma the
    RBF SVM tends to a linear SVM with C' ~ C gamma (Keerthi & Lin, 2003), so there the path at
    gamma / 2^shift repeats the larger gamma's, ``shift`` octaves of C later."""

    cells: dict
    shift: float
    base: float            # the larger gamma's first mean (majority rate at small C: no information)
    tol: float             # |difference| of means counted as the same (a few rows of the round)

    def repeated(self, log2_Cs, means, steps=3, rise=0.005) -> bool:
        """Whether the path's last ``steps`` cells, and every informative one before them, repeat
        the larger gamma's cells ``shift`` octaves lower within ``tol`` (informative: above that
        path's first mean by ``rise``)."""
        pairs = [(m, self.cells.get(round(c - self.shift, 6))) for c, m in zip(log2_Cs, means)]
        if len(pairs) < steps or any(h is None or h <= self.base + rise for _, h in pairs[-steps:]):
            return False
        return all(abs(m - h) <= self.tol for m, h in pairs if h is not None and h > self.base + rise)


def _stop_reason(means, log2_Cs, log2_gamma, work, leader: Leader, mirror: Mirror | None = None, patience=2,
                 drop=0.005, flat=4, behind=0.005, rising=0.005, cost_factor=4.0, min_work=0.5):
    """Why a path stops after its latest C (the last of ``log2_Cs``), or None to go on.

    * 'peaked': ``patience`` steps after its best it is more than ``drop`` below it;
    * 'flat': no improvement for ``flat`` steps once it has risen above its first value (a small
      gamma's path stays at the majority-class rate until C is large enough: not flat, just early);
    * 'ridge': it repeats the path of a larger gamma scored before, shifted along C
      (:meth:`Mirror.repeated`): the rest of it is that path's, already scored (wdbc, page-blocks0:
      gammas 2^2 apart at the small end repeat each other to a row);
    * 'dominated': a gamma below the leader's, past the leader's ridge point (log2 gamma + log2 C
      above the leader's), below the
      leader by more than ``behind`` and two of its standard errors, and rising less than ``rising``
      over two steps. What this corner (where grid.py spends most of its time) could still
      reach lies at larger gamma and smaller C, cheap to solve;
    * 'cost': not ahead of the leader and already ``cost_factor`` times the leader path's work and
      over ``min_work`` modelled CPU seconds (counted in the search's result: the one rule that may
      cut a path that would have won). Work, not wall seconds: the same data give the same choice
      on a loaded machine.
    """
    k, best, log2_C = len(means) - 1, int(np.argmax(means)), log2_Cs[-1]
    if k - best >= patience and means[-1] < means[best] - drop:
        return "peaked"
    if k - best >= flat and means[best] > means[0]:
        return "flat"
    if mirror is not None and mirror.repeated(log2_Cs, means):
        return "ridge"
    if k >= 2 and log2_gamma < leader.log2_gamma and log2_gamma + log2_C > leader.ridge \
            and means[-1] < leader.accuracy - max(behind, 2 * leader.se) \
            and means[-1] - means[-3] < rising:
        return "dominated"
    if work > max(cost_factor * leader.work, min_work) and means[-1] < leader.accuracy:
        return "cost"
    return None


@dataclass
class PathEnd:
    """Where one gamma's scored C path stopped: its cells and each (fold, pair) path's last point, from
    which the path can go on to larger C (:func:`_score_gamma`'s ``resume``)."""

    log2_Cs: list          # the C reached, in order
    scores: list           # per C: (mean accuracy, SE, mean #SV)
    points: list           # per fold, per binary problem: its PathPoint at the last C
    seconds: float         # the path's wall time, every part of it
    reason: str | None     # why it stopped ('hard margin', a _stop_reason), None: at its window's end
    fits: int = 0          # (fold, C) solutions of the latest part
    work: float = 0.0      # modelled CPU seconds of its solves, every part (``modelled_us`` of
                           # binary_path._CachedSolver): the stop rules' and ranking's cost, load-free


def _score_gamma(X, y, folds, fold_info, weights, log2_gamma, scale, log2_Cs, options, kernel_name, inner,
                 leader: Leader, resume: PathEnd | None = None, mirror: Mirror | None = None) -> PathEnd:
    """Lockstep warm-started (optionally screened) C paths of one gamma over every fold; cells scored until the accuracy peaks.

    Returns the :class:`PathEnd`: per C reached (mean accuracy, SE, mean #SV), and why the path
    stopped early ('hard margin': no sample at its bound, so every larger C has this solution; a
    :func:`_stop_reason`; None: it ran to its last C). ``resume``: the end of an earlier part of this
    path (same rows and folds), which goes on over ``log2_Cs`` (all above its last C), warm from
    its points; its cells count for the stop rules. ``mirror``: for the 'ridge' rule."""
    start = time.perf_counter() - (resume.seconds if resume is not None else 0.0)
    gamma = scale * 2.0 ** log2_gamma
    cache = _gamma_cache(kernel_name, X, gamma, inner, options["cache_size"], options["tol"])
    Cs = 2.0 ** np.asarray(log2_Cs, float)
    paths, pair_weights = [], []          # per fold: one path and the C factors c_i per binary problem
    for f, ((train, test), (classes, problems, _)) in enumerate(zip(folds, fold_info)):
        pair_weights.append([weights[np.asarray(train)[idx]] for idx, _ in problems])
        paths.append(fold_paths(X, train, problems, weights, Cs, cache, screening=options["screening"],
                                tol=options["tol"], cache_size=options["cache_size"],
                                random_state=options["random_state"],
                                starts=resume.points[f] if resume is not None else None))
    # the folds' solves side by side (the compiled solvers release the GIL) when every row is cached:
    # the shared cache is then only read, never filled or evicted
    n_threads = options["n_jobs"] if cache.n >= PARALLEL_MIN_ROWS and cache.holds_all() else 1
    end = PathEnd(list(resume.log2_Cs) if resume else [], list(resume.scores) if resume else [],
                  resume.points if resume else [], 0.0, None, work=resume.work if resume else 0.0)
    for k, C in enumerate(Cs):
        accs, svs, bound = [], [], 0
        solved = _advance_all(paths, n_threads)
        for (train, test), (classes, problems, y_test), fold_points, fold_weights in zip(folds, fold_info, solved,
                                                                                         pair_weights):
            fold_fits = [point.fit for point in fold_points]
            end.work += sum(fit.stats.get("modelled_us", 0.0) for fit in fold_fits) / 1e6
            accs.append(cached_accuracy(cache, train, test, problems, fold_fits, y_test, classes.size))
            in_sv = np.zeros(len(train), bool)
            for (idx, _), fit, w in zip(problems, fold_fits, fold_weights):
                in_sv[idx[fit.alpha > 0]] = True
                bound += int(np.count_nonzero(fit.alpha >= C * w * (1 - 1e-12)))
            svs.append(int(in_sv.sum()))
            end.fits += 1
        accs = np.asarray(accs)
        end.scores.append((float(accs.mean()), float(accs.std(ddof=1) / math.sqrt(accs.size))
                           if accs.size > 1 else 0.0, float(np.mean(svs))))
        end.log2_Cs.append(float(log2_Cs[k]))
        end.points = solved
        end.reason = "hard margin" if bound == 0 else _stop_reason(
            [m for m, _, _ in end.scores], end.log2_Cs, log2_gamma, end.work, leader, mirror)
        if end.reason is not None:
            break
    for pair_paths in paths:
        for p in pair_paths:
            p.close()
    end.seconds = time.perf_counter() - start
    return end


def _advance_all(paths, n_jobs):
    """Every fold's next path points (one per binary path of the fold), the paths in up to ``n_jobs``
    threads (1: in this thread). Each (fold, pair) path is one job: satimage's 5 x 15 balance over
    two threads where 5 fold jobs would not."""
    if n_jobs == 1:
        return [[next(p) for p in pair_paths] for pair_paths in paths]
    flat = run_parallel([(next, (p,)) for pair_paths in paths for p in pair_paths], n_jobs)
    out, k = [], 0
    for pair_paths in paths:
        out.append(flat[k:k + len(pair_paths)])
        k += len(pair_paths)
    return out


def choose_cell(cells, one_se=0.0) -> Cell:
    """The best mean accuracy (ties: fewer SV, then smaller C, then smaller gamma); with ``one_se`` > 0
    the fewest support vectors among cells within ``one_se`` standard errors of the best."""
    best = max(cells, key=lambda c: (c.accuracy, -c.n_support, -c.log2_C, -c.log2_gamma))
    floor = best.accuracy - one_se * best.se - 1e-12
    return min((c for c in cells if c.accuracy >= floor),
               key=lambda c: (c.n_support, -c.accuracy, c.log2_C, c.log2_gamma))


def _costly(best_C) -> set:
    """The gammas whose best C (``best_C``: log2 gamma -> log2 C of its best cell) lies
    :data:`COSTLY_OCTAVES` or more above the smallest of them: small gamma and large C, the costly
    solves."""
    lowest = min(best_C.values())
    return {g for g, C in best_C.items() if C - lowest >= COSTLY_OCTAVES}


def _cheap_unless_ahead(cells, chosen, one_se=0.0) -> Cell:
    """The choice of a search that a time limit stopped before its last round: ``chosen``, unless it
    lies on a costly gamma (its best C :data:`COSTLY_OCTAVES` or more above the smallest best C of
    the round's gammas: small gamma, large C) and is not more than one standard error ahead of
    the best cell of the other gammas, which is then chosen. The next round would have run that
    gamma after the others and gone on only while it stayed ahead (:meth:`_Round.next_windows`);
    without it, a corner within noise of the cheap cells would win on the small subsample (magic
    under ``leansvm fit --budget-seconds 20``: C = 2^16, gamma = 2^-7 x scale at 0.8680 +- 0.0048 on
    1,333 rows against 0.8672 at 2^-2 x scale; on 4,000 rows the corner's paths fall to 0.857)."""
    costly = _costly({g: max((c for c in cells if c.log2_gamma == g), key=lambda c: c.accuracy).log2_C
                      for g in {c.log2_gamma for c in cells}})
    cheap = [c for c in cells if c.log2_gamma not in costly]
    if chosen.log2_gamma not in costly or not cheap:
        return chosen
    alternative = choose_cell(cheap, one_se)
    return chosen if chosen.accuracy - alternative.accuracy > chosen.se else alternative


def _round_sizes(n, min_rows, max_rows, factor):
    """Subsample sizes of the rounds: the last min(n, max_rows), each earlier one ``factor`` times smaller,
    the first at least ``min_rows`` (one round when the data are small)."""
    last = min(n, max_rows)
    sizes = [last]
    while sizes[0] / factor >= min_rows:
        sizes.insert(0, int(round(sizes[0] / factor)))
    return sizes


def _C_grid(window, step):
    return list(np.arange(window[0], window[1] + 1e-9, step))


class _Round:
    """One round of the search: K folds of one subsample, a C path per gamma scored on them."""

    def __init__(self, X, y, rows, number, search):
        self.X, self.y = X[rows], y[rows]
        self.number, self.search = number, search
        classes, y_enc = np.unique(self.y, return_inverse=True)
        self.weights = per_sample_C(1.0, search["class_weight"], classes, y_enc, np.ones(y_enc.size))
        self.folds = list(StratifiedKFold(search["n_folds"], shuffle=True,
                                          random_state=search["random_state"]).split(self.X, self.y))
        self.fold_info = [fold_labels(self.y, train, test) for train, test in self.folds]
        self.inner = {}              # X X' of the round's rows, shared by its gammas
        self.leader = Leader()
        self.surface = {}            # log2 gamma -> [(log2 C, mean accuracy, SE, mean #SV)] along its path
        self.windows = {}            # log2 gamma -> (first, last) log2 C of its path
        self.paths = []              # (log2 gamma, last log2 C, work, why it stopped) per path run
        self.ends = {}               # log2 gamma -> PathEnd of its latest path (to go on from; its reason: why it
                                     # stopped before its window's end, None: it did not)
        self.extended = []           # edges moved past the default ranges (:meth:`extend`)
        self.edges_moved = []        # edges moved inside them
        self.n_fits = 0

    def score(self, g, window):
        """The C path of gamma = scale 2^g over ``window`` (log2 C), every fold in lockstep; a path of
        this gamma scored before from the same first C (the :meth:`pilot`'s, or one that an edge
        extends) goes on from where it ended, or is taken as it is when a rule stopped it."""
        end = self._path(g, window, self.leader, self._mirror(g, window[1], {h: self.ends[h] for h in self.surface}))
        self.surface[g] = [(c, *sc) for c, sc in zip(end.log2_Cs, end.scores)]
        self.windows[g] = window
        self.paths.append((float(g), end.log2_Cs[-1], end.work, end.reason))
        top = max(self.surface[g], key=lambda cell: cell[1])
        if top[1] > self.leader.accuracy:
            self.leader = Leader(top[1], top[2], g, g + top[0], end.work)

    def _mirror(self, g, last, scored) -> Mirror | None:
        """The :class:`Mirror` of gamma 2^g, whose path ends at log2 C = ``last``: the nearest larger
        gamma of ``scored`` (log2 gamma -> PathEnd), unless part of what it predicts is unknown (a
        path cut by the 'cost' rule, or one that ran to the end of a window shorter than the shifted
        one while still rising)."""
        above = [h for h in scored if h > g]
        if not above:
            return None
        h = min(above)
        end = scored[h]
        means = [m for m, _, _ in end.scores]
        if end.reason == "cost" or (end.reason is None and int(np.argmax(means)) == len(means) - 1
                                    and end.log2_Cs[-1] < last - (h - g) - 1e-9):
            return None
        return Mirror({round(c, 6): m for c, m in zip(end.log2_Cs, means)}, h - g, means[0],
                      max(MIRROR_ROWS / self.X.shape[0], MIRROR_TOL))

    def _path(self, g, window, leader, mirror=None) -> PathEnd:
        s = self.search
        log2_Cs, end = _C_grid(window, s["C_step"]), self.ends.get(g)
        if end is not None and end.log2_Cs[0] == log2_Cs[0]:
            log2_Cs = [c for c in log2_Cs if c > end.log2_Cs[-1] + 1e-9]
            if end.reason is not None or not log2_Cs:
                return end                 # stopped by a rule (which the same cells repeat), or done
        else:
            end = None
        end = _score_gamma(self.X, self.y, self.folds, self.fold_info, self.weights, g, s["scale"], log2_Cs,
                           s["options"], s["kernel"], self.inner, leader, resume=end, mirror=mirror)
        self.n_fits += end.fits
        self.ends[g] = end
        return end

    def pilot(self, windows, octaves=8.0):
        """A priority per gamma: its best mean accuracy over the first ``octaves`` of its window (small
        C, cheap to solve), so that the most promising path runs first and leads the stop rules. Its
        paths go on from there when :meth:`score` runs them. The largest gamma goes first, and each
        smaller one stops by the 'ridge' rule where it repeats the one above it (wdbc: the three
        smallest gammas' paths were half the search's solver time, at C up to 2^5). The first gamma
        the rule stops ends the pilot: every smaller one is further along the same small-gamma limit
        (Keerthi & Lin: gamma -> 0 with C gamma fixed), so its path would repeat this one's, shifted
        along C; those gammas get no priority and are not scored, unless an edge extension reaches
        them (:meth:`extend`: the best cell on the smallest gamma scored adds the next one). wdbc:
        450 -> 315 fold solves, 0.41 -> 0.24 s; the same choice on the nine KEEL sets and magic."""
        piloted, priority = {}, {}
        for g in sorted(windows, reverse=True):
            lo, hi = windows[g]
            last = min(hi, lo + octaves)
            piloted[g] = self._path(g, (lo, last), Leader(), self._mirror(g, last, piloted))
            priority[g] = max(m for m, _, _ in piloted[g].scores)
            if piloted[g].reason == "ridge":
                break
        return priority

    def run(self, windows, priority, step, progress):
        """Score the gammas of ``windows`` that have a ``priority``, the highest first (None: a
        :meth:`pilot`'s), then move the edges the best cell lies on until it is inside (:meth:`extend`)."""
        priority = self.pilot(windows) if priority is None else priority
        title = f"search round {self.number + 1} ({self.X.shape[0]} rows)"
        with Progress(len(priority), title, "gammas", progress) as bar:
            for g in sorted(priority, key=lambda g: (-priority[g], g)):
                self.score(g, windows[g])
                bar.update()
            while self.extend(step):     # not counted in the bar: how many is not known ahead
                pass

    def best(self):
        """(log2 gamma, index along its path) of the best mean accuracy so far."""
        g = max(self.surface, key=lambda g: max(m for _, m, _, _ in self.surface[g]))
        return g, int(np.argmax([m for _, m, _, _ in self.surface[g]]))

    def extend(self, step) -> bool:
        """Move one edge the best cell lies on, at most :data:`MAX_EXTENSION` octaves beyond the
        default ranges: a best C at the end of its window (the path not stopped by a rule: every
        later C would be scored by the same rule, or has the same hard-margin solution) runs that
        path 4 octaves further, one at its start runs it from 4 octaves lower; a best gamma on the edge of
        the gammas scored adds the next one, ``step`` beyond. A move past the default ranges is noted in
        ``extended``, one inside them (a gamma the pilot left out, a window narrower than the range) in
        ``edges_moved``. Returns whether it moved one."""
        s = self.search
        g, k = self.best()
        (lo, hi), n = self.windows[g], len(self.surface[g])
        lo_C, hi_C = s["C_octaves"][0] - MAX_EXTENSION, s["C_octaves"][1] + MAX_EXTENSION
        if k == n - 1 and self.ends[g].reason is None and self.surface[g][-1][0] + s["C_step"] <= hi_C:
            top = min(self.surface[g][-1][0] + 4, hi_C)
            self._moved(top > s["C_octaves"][1], f"C above 2^{self.surface[g][-1][0]:g} at gamma 2^{g:g} x scale")
            self.score(g, (lo, top))
            return True
        if k == 0 and lo - s["C_step"] >= lo_C:
            bottom = max(lo - 4, lo_C)
            self._moved(bottom < s["C_octaves"][0], f"C below 2^{lo:g} at gamma 2^{g:g} x scale")
            self.score(g, (bottom, hi))
            return True
        lo_g, hi_g = s["gamma_octaves"][0] - MAX_EXTENSION, s["gamma_octaves"][1] + MAX_EXTENSION
        for edge, beyond, limit_ok in ((max(self.surface), step, lambda x: x <= hi_g),
                                       (min(self.surface), -step, lambda x: x >= lo_g)):
            if g == edge and limit_ok(edge + beyond):
                new = edge + beyond
                self._moved(not s["gamma_octaves"][0] <= new <= s["gamma_octaves"][1],
                            f"gamma {'above' if beyond > 0 else 'below'} 2^{edge:g} x scale")
                self.score(new, self.windows[edge])
                return True
        return False

    def _moved(self, past_default: bool, what: str):
        (self.extended if past_default else self.edges_moved).append(what)

    def cells(self):
        return [Cell(float(g), float(c), m, se, nsv, self.X.shape[0], self.number)
                for g, got in self.surface.items() for c, m, se, nsv in got]

    def ranked(self):
        """The gammas best first, by their best mean accuracy; except that a gamma below the best one,
        within one standard error of it and whose path took more than twice the work, goes last: on
        the small-gamma ridge, accuracy within noise of the best costs many times the time (large C)."""
        top = {g: max(self.surface[g], key=lambda cell: cell[1]) for g in self.surface}
        best = max(top, key=lambda g: top[g][1])
        work = {g: w for g, _, w, _ in self.paths}             # the last run of each gamma's path
        slow = {g for g in top if g < best and top[g][1] >= top[best][1] - top[best][2]
                and work[g] > 2 * work[best]}
        return sorted(self.surface, key=lambda g: (g in slow, -top[g][1], g))

    def kept(self, keep):
        """The first ``keep`` fraction of the gammas (at least 2) in :meth:`ranked` order."""
        ranked = self.ranked()
        return ranked[:max(2, int(math.ceil(keep * len(ranked))))]

    def next_windows(self, kept, step, margin):
        """The gammas of the next round (each kept one, in rank order, and its neighbours ``step`` away)
        with their C windows (``margin`` octaves around the best C of the nearest kept gammas) and
        priorities (the rank of the nearest kept gamma; the kept gammas themselves first). A kept
        gamma whose best C lies :data:`COSTLY_OCTAVES` or more above the smallest best C of the kept
        ones goes after the others: its solves are the costly ones (small gamma, large C), and
        ahead in the order it would lead the next round's stop rules (magic's corner: 365 of the
        last round's 371 s); behind, it goes on only while it is ahead, or until the 'cost' rule
        stops it. The order depends on the scores only, not on timings."""
        best_C = {g: max(self.surface[g], key=lambda cell: cell[1])[0] for g in kept}
        costly = _costly(best_C)
        order = sorted(kept, key=lambda g: g in costly)   # stable: rank order kept
        windows, priority = {}, {}
        for rank, g in enumerate(order):
            for x in (g, g - step, g + step):
                near = [h for h in kept if abs(h - x) <= step + 1e-9]
                windows[float(x)] = (min(best_C[h] for h in near) - margin, max(best_C[h] for h in near) + margin)
                priority.setdefault(float(x), -rank - (0.5 if x != g else 0.0))
        return windows, priority


#: where a search stopped by its time limit scores SVC()'s default gamma as well: log2 C from
#: 2^-2 to 2^5 (C = 1, SVC()'s default, and 8, beside the 10 LIBSVM's guide and users try first)
DEFAULT_CELL_WINDOW = (-2.0, 5.0)


def _with_the_default(rnd, result) -> str:
    """Score gamma = 'scale' (SVC()'s default, log2 factor 0) on the round a time limit ended the
    search at, when the round has not: a search too short to resolve as finely as grid.py keeps a
    well-known default in the race, scored like every cell. Returns the sentence that says so."""
    if 0.0 in rnd.surface:
        return ""
    rnd.score(0.0, DEFAULT_CELL_WINDOW)
    result.cells += [c for c in rnd.cells() if c.log2_gamma == 0.0]
    return (f"; gamma = 'scale' (SVC()'s default) scored on its rows as well, at C 2^{DEFAULT_CELL_WINDOW[0]:g}"
            f"..2^{DEFAULT_CELL_WINDOW[1]:g}")


#: the closing race: the last round's best cells that go on (:func:`_closing_race`), on this many
#: times the last round's rows
RACE_CELLS, RACE_GROWTH = 2, 2


def _closing_race(X, y, order, rnd, result, search, time_left) -> str | None:
    """One more round after the last: its ``RACE_CELLS`` best cells at their C and SVC()'s default
    gamma ('scale', C 2^-2..2^5), K-fold on ``RACE_GROWTH`` times its rows; the choice is made on it
    (where the last round had every row, the default gamma joins it: :func:`_with_the_default`).
    The last round's best cells are often apart by less than their standard error: a9a's 4,000 rows
    chose C 2^8, gamma 2^-10.5 x scale at 0.8470 +- 0.0091 (test 0.8502; SVC()'s defaults 0.8506),
    and on 8,000 rows the default gamma led. Skipped (None) when its estimate (the last round's
    seconds per cell x the rows' growth^1.5, per cell) is past ``time_left``; else the log's sentence."""
    last = result.rounds[-1]
    rows = min(X.shape[0], RACE_GROWTH * last["rows"])
    if rows == last["rows"]:
        return _with_the_default(rnd, result).lstrip("; ") or None
    ranked = sorted(result.final_cells(), key=lambda c: (-c.accuracy, c.n_support, c.log2_C, c.log2_gamma))
    windows = [(c.log2_gamma, (c.log2_C, c.log2_C)) for c in ranked[:RACE_CELLS]] + [(0.0, DEFAULT_CELL_WINDOW)]
    estimate = _next_round_seconds(last["seconds"], rnd, windows, search["C_step"], rows / last["rows"])
    if time_left is not None and estimate > time_left:
        return None
    t0, race = work_time(), _Round(X, y, np.sort(order[:rows]), last["round"] + 1, search)
    for g, window in windows:           # two cells of one gamma: each its own path, both kept
        scored = {cell[0]: cell for cell in race.surface.get(g, [])}       # log2 C -> (log2 C, mean, SE, #SV)
        race.score(g, window)
        race.surface[g] = sorted({**scored, **{cell[0]: cell for cell in race.surface[g]}}.values())
    result.cells += race.cells()
    result.n_paths += search["n_folds"] * len(race.paths)
    result.n_fits += race.n_fits
    result.rounds.append({"round": race.number, "rows": int(rows), "folds": search["n_folds"],
                          "gammas": sorted(race.surface), "kept": sorted(race.surface),
                          "seconds": work_time() - t0, "paths": race.paths, "race": True})
    return (f"closing race on {rows} rows: the last round's best {RACE_CELLS} cells and gamma = 'scale' "
            f"(SVC()'s default) at C 2^{DEFAULT_CELL_WINDOW[0]:g}..2^{DEFAULT_CELL_WINDOW[1]:g}")


def _next_round_seconds(seconds, rnd, windows, C_step, factor) -> float:
    """The next round's time, estimated from this one's: its seconds per (gamma, C) cell scored, times
    ``factor``^1.5 for ``factor`` times the rows (kernel rows and solves grow faster than the rows, less
    than their square), times the next round's cells at most (every C of every (gamma, window) pair: its paths stop
    earlier by the search's rules). The next round keeps a third of the gammas (the last round two)
    over windows of a few octaves: on letter (26 classes) the 444-row round took 32.8 s over its 10
    gammas and the 1,333-row round 24.0 s over 6, where the round's seconds x 3^1.5 said 170 s."""
    done = sum(len(cells) for cells in rnd.surface.values())
    ahead = sum(len(_C_grid(window, C_step)) for _, window in windows)
    return seconds / max(done, 1) * factor ** 1.5 * ahead


def wide_search(X, y, *, kernel="rbf", class_weight=None, n_folds=5, min_rows=400, max_rows=4000,
                factor=3, keep=1 / 3, C_octaves=C_OCTAVES, gamma_octaves=GAMMA_OCTAVES, C_step=1.0,
                gamma_step=2.0, C_margin=3.0, one_se=0.0, screening=None, tol=None, cache_size=400.0,
                random_state=0, progress=None, time_limit=None, n_jobs=-1, race=True) -> SearchResult:
    """Choose (C, gamma) by K-fold accuracy over grid.py's ranges (module docstring).

    ``X`` (dense or sparse, features scaled as for the model) and ``y`` (any
    labels, two or more classes). Rounds: :func:`_round_sizes` over nested
    stratified subsamples (:func:`stratified_order`), stratified folds
    (``StratifiedKFold``); ``keep`` of the gammas (at least 2; into the last
    round only 2) go on to the next round with their neighbours at half the gamma step, each path over
    ``C_margin`` octaves around its nearest kept gamma's best C.
    ``class_weight``: None, 'balanced' or a dict, as in ``SVC``. The folds'
    models use the augmented bias (the formulation in which the screening
    rules are proven); the caller trains the chosen cell exactly. ``time_limit`` (seconds): no
    further round starts when the elapsed time plus the next round's estimate (the last round's
    seconds per cell x ``factor``^1.5 x its cells at most: :func:`_next_round_seconds`) would exceed it; the choice is then the last round's (``stopped`` says so),
    a costly corner only when it is ahead by more than its standard error (:func:`_cheap_unless_ahead`).
    ``n_jobs`` (joblib's meaning; -1: every core): threads over the folds of each C step, when the
    round's kernel rows are all cached (dense RBF data within ``cache_size``); else one. ``tol``: the
    folds' stopping tolerance (None: :data:`SEARCH_TOL`). ``race``: the closing race after the last
    round (:func:`_closing_race`; not after a search the time limit stopped).
    """
    tol = SEARCH_TOL if tol is None else tol
    start = time.perf_counter()
    X, y = check_X_y(X, y, accept_sparse="csr")            # finite, 2-D, one label per row
    classes, counts = np.unique(y, return_counts=True)
    if classes.size < 2:
        raise ValueError(f"wide_search needs at least two classes; y holds only {classes[0]!r}")
    if counts.min() < n_folds:
        raise ValueError(f"wide_search: class {classes[np.argmin(counts)]!r} has {counts.min()} row(s), fewer than "
                         f"the {n_folds} folds")
    order = stratified_order(y, random_state)
    search = {"class_weight": class_weight, "n_folds": n_folds, "random_state": random_state, "kernel": kernel,
              "scale": resolve_gamma("scale", X), "C_step": C_step, "C_octaves": C_octaves,
              "gamma_octaves": gamma_octaves,
              "options": {"screening": screening, "tol": tol, "cache_size": cache_size, "random_state": random_state,
                          "n_jobs": n_jobs}}
    result = SearchResult(np.nan, np.nan, np.nan, np.nan, np.nan, search["scale"])
    windows = {float(g): C_octaves for g in np.arange(gamma_octaves[0], gamma_octaves[1] + 1e-9, gamma_step)}
    step, priority = gamma_step, None
    sizes = _round_sizes(X.shape[0], min_rows, max_rows, factor)
    for r, size in enumerate(sizes):
        t0 = work_time()                  # the round's work, its compilation left out: the estimate's unit
        rnd = _Round(X, y, np.sort(order[:size]), r, search)
        rnd.run(windows, priority, step, progress)
        seconds = work_time() - t0
        result.cells += rnd.cells()
        result.extended += [f"round {r + 1}: {e}" for e in rnd.extended]
        result.edges_moved += [f"round {r + 1}: {e}" for e in rnd.edges_moved]
        result.n_paths += n_folds * len(rnd.paths)
        result.n_fits += rnd.n_fits
        kept = rnd.kept(keep if r + 2 < len(sizes) else 0.0)     # into the last, costliest round: the best 2
        result.rounds.append({"round": r, "rows": int(size), "folds": n_folds, "gammas": sorted(rnd.surface),
                              "kept": sorted(kept), "seconds": seconds, "paths": rnd.paths})
        if r + 1 == len(sizes):
            break
        step = step / 2
        windows, priority = rnd.next_windows(kept, step, C_margin)
        if time_limit is not None:
            estimate = _next_round_seconds(seconds, rnd, windows.items(), C_step, factor)
            if time.perf_counter() - start + estimate > time_limit:
                result.stopped = (f"halving stopped after {size} rows ({size // classes.size} per class), short of "
                                  f"the {sizes[-1]} its last round takes: the next round ({sizes[r + 1]} rows) was "
                                  f"estimated at {estimate:.0f} s, past the time limit of {time_limit:.0f} s")
                result.stopped += _with_the_default(rnd, result)
                break
    if race and result.stopped is None:
        result.race = _closing_race(X, y, order, rnd, result, search,
                                    None if time_limit is None else time_limit - (time.perf_counter() - start))
    chosen = choose_cell(result.final_cells(), one_se)
    if result.stopped is not None:
        best, chosen = chosen, _cheap_unless_ahead(result.final_cells(), chosen, one_se)
        if chosen is not best:
            result.stopped += (f"; the best cell, C 2^{best.log2_C:g} at gamma 2^{best.log2_gamma:g} x scale "
                               f"({best.accuracy:.4f}), lies in the costly small-gamma corner within one standard "
                               f"error of the others' best, which is chosen")
    result.C, result.gamma = 2.0 ** chosen.log2_C, search["scale"] * 2.0 ** chosen.log2_gamma
    result.accuracy, result.se, result.n_support = chosen.accuracy, chosen.se, chosen.n_support
    result.seconds = time.perf_counter() - start
    return result
