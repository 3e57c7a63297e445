"""Dask: blockwise prediction, distributed budget training, parallel model selection.

Everything here runs on any Dask scheduler: a ``distributed.Client`` (pass it,
or its scheduler address ``"tcp://host:8786"`` as ``client=``), the default
client when one exists, else Dask's local threaded scheduler.

Prediction (:func:`predict`, :func:`decision_function`, :func:`predict_proba`,
:func:`score_samples`) takes any fitted leansvm model (anything with ``expansion_``:
classifiers, regressors, one-class models; a precomputed kernel's X holds the kernel values
against the training samples) and a
``dask.array`` (n x d, any row chunks; NumPy or ``scipy.sparse`` blocks, e.g.
``X.map_blocks(scipy.sparse.csr_matrix)``; other block types are refused),
a ``dask.dataframe`` or a NumPy array.
The model is sent to the cluster once (``client.scatter``: one key, fetched by each worker
when its first block needs it; or one ``dask.delayed`` key without a client) and every row block is
predicted on a worker by the model's own method, so results equal in-memory
prediction row by row. Results are lazy ``dask.array`` objects: compute
them with the client that predicted (``client.compute(result)``, or
``result.compute()`` when it is the default client; the scattered model
belongs to that client), or store them with ``dask.array.to_zarr`` & co.

Budget training on data larger than one machine's memory: :func:`fit_budget`
(parameter mixing of budgeted SGD chains, one per worker, merged back to the
budget), and :func:`fit_reduced` (a ReducedSVC / ReducedSVR whose every iteration is
summed over the workers' blocks). Model selection on the cluster: :func:`fit_svccv` (joblib's Dask
backend under :class:`leansvm.SVCCV`) and :func:`svm_paths` (one screened
C path per gamma as a Dask task).

``pip install 'leansvm[dask]'``; Dask is imported only when these are used.
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

__all__ = ["predict", "decision_function", "predict_proba", "score_samples", "fit_budget", "fit_svccv", "svm_paths",
           "fit_reduced", "get_client", "as_dask_array"]


# -- plumbing -----------------------------------------------------------------------------
def _require_dask():
    try:
        import dask  # noqa: F401
        import dask.array  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("leansvm.distributed needs Dask: pip install 'leansvm[dask]'") from exc


#: clients this module opened for scheduler addresses (kept open: scattered models live with them)
_CLIENTS: dict = {}


def get_client(client=None):
    """A ``distributed.Client``: ``client`` itself; for an address string, a client connected to it
    (opened once and kept; compute results with it: ``get_client(address).compute(result)``); when ``client`` is None the default client if one exists, else None (Dask's
    local scheduler). ``client=False``: None, whatever clients exist (for ``compute(scheduler='threads')``)."""
    if client is False:
        return None
    if client is None:
        try:
            from distributed import default_client
            return default_client()
        except (ImportError, ValueError):
            return None
    if isinstance(client, str):
        found = _CLIENTS.get(client)
        if found is None or found.status in ("closing", "closed"):
            from distributed import Client
            found = _CLIENTS[client] = Client(client)
        return found
    return client


def as_dask_array(X, chunk_rows: int = 100_000):
    """X as a 2-D ``dask.array`` chunked by rows only (dask/pandas data frames, NumPy arrays)."""
    _require_dask()
    import dask.array as da

    if hasattr(X, "to_dask_array") and not isinstance(X, da.Array):      # dask DataFrame
        X = X.to_dask_array()
    elif not isinstance(X, da.Array):
        if hasattr(X, "to_numpy"):                                        # pandas
            X = X.to_numpy()
        X = np.asarray(X)
        X = da.from_array(X, chunks=(min(chunk_rows, max(X.shape[0], 1)), X.shape[1] if X.ndim == 2 else -1))
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (samples x features), got {X.ndim} dimension(s)")
    meta = getattr(X, "_meta", None)
    if meta is not None and not isinstance(meta, np.ndarray) and not sp.issparse(meta):
        raise ValueError(f"blocks of type {type(meta).__module__}.{type(meta).__name__} are not supported: "
                         "use NumPy or scipy.sparse blocks (e.g. X.map_blocks(scipy.sparse.csr_matrix))")
    if len(X.chunks[1]) > 1:                                              # whole rows per block
        X = X.rechunk({1: -1})
    return X


def _check_model(model, method):
    if not hasattr(model, "expansion_"):
        raise ValueError(f"{type(model).__name__} is not a fitted leansvm model (no expansion_)")
    if not callable(getattr(model, method, None)):
        raise AttributeError(f"{type(model).__name__} has no {method}")


def _one_copy(obj, client):
    """One handle on ``obj`` for all tasks: a scattered future, or one delayed key.

    Not ``scatter(broadcast=True)``: replicating conflicts with the Active Memory Manager's
    ReduceReplicas policy, on by default (``Client.scatter``'s documentation), and one test run
    in six hung in ``client.compute`` with the workers and the scheduler idle. Each worker
    fetches the one copy when its first task needs it."""
    if client is not None:
        return client.scatter(obj, hash=False)
    import dask
    return dask.delayed(obj, pure=True, traverse=False)


def _apply_block(block, model, method, empty):
    """``model.<method>(block)`` for one row block (runs on a worker); ``empty`` for 0 rows."""
    if block.shape[0] == 0:
        return empty
    return np.asarray(getattr(model, method)(block))


def _output_meta(model, method, n_features):
    """(dtype, number of columns or None for 1-D) of the method's output, from one zero row."""
    probe = np.asarray(getattr(model, method)(np.zeros((1, n_features))))
    return probe.dtype, (None if probe.ndim == 1 else probe.shape[1])


def _blockwise(model, X, method, client):
    _require_dask()
    _check_model(model, method)
    X = as_dask_array(X)
    n_features = getattr(model, "n_features_in_", None)   # a loaded precomputed-kernel model has none
    if n_features is None:
        n_features = X.shape[1] if model.expansion_.kernel.pairwise else model.expansion_.n_features
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but {type(model).__name__} expects {n_features}")
    client = get_client(client)
    handle = _one_copy(model, client)
    dtype, n_out = _output_meta(model, method, n_features)
    if n_out is None:
        empty = np.empty((0,), dtype=dtype)
        return X.map_blocks(_apply_block, handle, method, empty, drop_axis=1, dtype=dtype, meta=empty)
    empty = np.empty((0, n_out), dtype=dtype)
    return X.map_blocks(_apply_block, handle, method, empty, chunks=(X.chunks[0], (n_out,)), dtype=dtype,
                        meta=empty)


# -- prediction ---------------------------------------------------------------------------
def predict(model, X, client=None):
    """Lazy ``dask.array`` of ``model.predict`` over the row blocks of X (labels as ``classes_``)."""
    return _blockwise(model, X, "predict", client)


def decision_function(model, X, client=None):
    """Lazy ``dask.array`` of ``model.decision_function`` (shape as in memory: (n,) or (n, outputs))."""
    return _blockwise(model, X, "decision_function", client)


def predict_proba(model, X, client=None):
    """Lazy ``dask.array`` of ``model.predict_proba`` (n x n_classes); the model must support it."""
    return _blockwise(model, X, "predict_proba", client)


def score_samples(model, X, client=None):
    """Lazy ``dask.array`` of a one-class model's ``score_samples`` (n,)."""
    return _blockwise(model, X, "score_samples", client)


# -- distributed budget training ----------------------------------------------------------
def _training_blocks(X, y, label):
    """Delayed (X_block, y_block) pairs, one per row block / partition, and d."""
    import dask
    import dask.array as da

    if hasattr(X, "to_delayed") and hasattr(X, "columns") and not isinstance(X, da.Array):  # dask DataFrame
        if label is None or y is not None:
            raise ValueError("with a dask DataFrame give the label column as label=, not y")
        if label not in X.columns:
            raise ValueError(f"label column {label!r} not in the data frame's columns {list(X.columns)}")
        split = dask.delayed(_split_frame, nout=2)
        pairs = [split(part, label) for part in X.to_delayed()]
        return pairs, len(X.columns) - 1
    if y is None:
        raise ValueError("give y (labels) for a dask array X, or a dask DataFrame with label=")
    X = as_dask_array(X)
    if not isinstance(y, da.Array):
        y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got {y.ndim} dimensions")
    if not np.isnan(X.shape[0]) and not np.isnan(y.shape[0]) and X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
    if not isinstance(y, da.Array):
        y = da.from_array(y, chunks=(X.chunks[0],))
    if y.chunks[0] != X.chunks[0]:
        y = y.rechunk((X.chunks[0],))
    return list(zip(X.to_delayed().ravel(), y.to_delayed().ravel())), X.shape[1]


def _split_frame(part, label):
    return part.drop(columns=[label]).to_numpy(dtype=np.float64), part[label].to_numpy()


def _block_stats(Xb, yb):
    """(rows, sum, sum of squares, labels present) of one block: for n, 'scale' gamma, classes."""
    Xb = np.asarray(Xb, dtype=np.float64)
    return Xb.shape[0], float(Xb.sum()), float(np.einsum("ij,ij->", Xb, Xb)), np.unique(np.asarray(yb))


def _continue_chain(model, Xb, yb, params, classes, n_total, seed, first_block):
    """One ``partial_fit`` pass over one block, starting a fresh BSGDClassifier on a chain's first block.

    The chain's CPU seconds (this process's, summed over its tasks) ride along in ``chain_cpu_s_``.
    """
    import time

    from leansvm.budget.bsgd_classifier import BSGDClassifier

    start = time.process_time()
    if model is None:
        model = BSGDClassifier(random_state=seed, **params)
        model.partial_fit(Xb, yb, classes=classes, n_samples_total=n_total)
        model.chain_cpu_s_ = time.process_time() - start
        return model
    if first_block:                      # a later round / the final pass: start from the combined model
        import copy
        model = copy.deepcopy(model)     # chains must not share one object (threaded schedulers)
        model.chain_cpu_s_ = 0.0
    model.partial_fit(Xb, yb)
    model.chain_cpu_s_ = getattr(model, "chain_cpu_s_", 0.0) + time.process_time() - start
    return model


def _union_states(models, start=None):
    """Average of the chain models as one state per binary problem: f = (1/W) sum_w f_w.

    Support vectors are concatenated, coefficients divided by W, biases averaged; the step
    count is the start's plus every chain's own steps.
    """
    from leansvm.budget.bsgd import BudgetState

    n_problems = len(models[0].states_)
    out = []
    for p in range(n_problems):
        parts = [m.states_[p] for m in models if m.states_[p] is not None]
        if not parts:
            out.append(None)
            continue
        t0 = 0 if start is None or start.states_[p] is None else start.states_[p].t
        out.append(BudgetState(np.vstack([s.support_vectors for s in parts]),
                               np.concatenate([s.alpha for s in parts]) / len(parts),
                               bias=float(np.mean([s.bias for s in parts])),
                               t=t0 + sum(s.t - t0 for s in parts), lam=parts[0].lam))
    return out


def _project_onto_vectors(state, union, kernel):
    """``state`` with its coefficients re-solved so that its function is closest to ``union``'s.

    With Z = state's vectors and (U, a) the union's: alpha = argmin ||sum_j alpha_j phi(z_j) -
    sum_u a_u phi(u)||^2 = K_ZZ^+ K_ZU a (the orthogonal projection of w_union onto span phi(Z);
    pseudo-inverse over eigenvalues above 1e-10 of the largest). Merging k*B vectors down to B
    in one go, with no SGD steps in between to correct, leaves the coefficients far from this
    optimum (400k checker rows, B = 100, 2 chains: test accuracy 0.947 after merging, 0.985 after
    the projection, 0.985 for the union itself); the bias is kept.
    """
    if state is None or state.n_support == 0 or union is None:
        return state
    Z = state.support_vectors
    vals, vecs = np.linalg.eigh(kernel.block(Z, Z))
    keep = vals > 1e-10 * max(vals.max(), 1e-300)
    rhs = vecs[:, keep].T @ (kernel.block(Z, union.support_vectors) @ union.alpha)
    state.alpha = vecs[:, keep] @ (rhs / vals[keep])
    return state


def _combine(union, classes, d, random_state, params):
    """The chains' average (their union) brought back to the budget: merge, then re-solve the
    coefficients by projecting the union onto the merged vectors (:func:`_project_onto_vectors`)."""
    from leansvm.budget.bsgd_classifier import BSGDClassifier

    combined = BSGDClassifier.from_states(union, classes, n_features_in=d, random_state=random_state, **params)
    kernel = combined.expansion_.kernel
    reduced = combined.reduce_to_budget().states_
    projected = [_project_onto_vectors(s, u, kernel) for s, u in zip(reduced, union)]
    return BSGDClassifier.from_states(projected, classes, n_features_in=d, random_state=random_state, **params)


def _run_chains(client, chains, start, epochs, step, rng, args):
    """Every chain's tasks (``epochs`` passes over its blocks, from ``start`` or fresh); the end models."""
    handle = None if start is None else _one_copy(start, client)
    ends = []
    for chain in chains:
        model, seed = handle, int(rng.randint(2**31 - 1))
        for e in range(int(epochs)):
            for j, (xb, yb) in enumerate(chain):
                model = step(model, xb, yb, *args, seed, e == 0 and j == 0)
        ends.append(model)
    return _compute(client, *ends)


def _n_workers(client) -> int:
    if client is None:
        import os
        return os.cpu_count() or 1
    return max(1, len(client.scheduler_info(n_workers=-1)["workers"]))


def _compute(client, *things):
    if client is not None:
        return client.compute(list(things), sync=True)
    import dask
    # here, whatever default client exists: the caller sums the results in this process
    return list(dask.compute(*things, scheduler="threads"))


def _resolve_gamma(gamma, stats, n_total, d):
    if not isinstance(gamma, str):
        return float(gamma)
    if gamma == "auto":
        return 1.0 / d
    if gamma == "scale":
        total, squares, count = sum(s[1] for s in stats), sum(s[2] for s in stats), n_total * d
        var = squares / count - (total / count) ** 2
        return 1.0 / (d * var) if var > 0 else 1.0
    raise ValueError(f"gamma must be 'scale', 'auto' or a positive float, got {gamma!r}")


def fit_budget(X, y=None, *, budget=500, label=None, classes=None, n_models=None, rounds=1, epochs=1,
               final_blocks=None, combine="merge", client=None, random_state=0, **params):
    """A budgeted kernel SVM trained where the data lives; returns a fitted ``BSGDClassifier``.

    ``X``: a ``dask.array`` (with ``y`` a dask or NumPy array of labels) or a ``dask.dataframe``
    (with ``label=`` naming its label column); row blocks / partitions are the chunks of the
    stream. Algorithm (parameter mixing of budgeted SGD):

    1. the blocks are dealt round-robin to ``n_models`` chains (default: one per Dask worker);
       each chain is a sequence of tasks ``BSGDClassifier.partial_fit(block)`` (``epochs``
       passes over its blocks), each task running where its block is, with lambda = 1 / (N C)
       for the full stream length N, so every chain estimates the same objective (1);
    2. the chain models are averaged, f = (1/W) sum_w f_w (the union of their support vectors,
       coefficients / W, mean bias) and brought back to ``budget`` vectors per binary problem by
       the estimator's own budget maintenance (merging for RBF: ``reduce_to_budget``) followed by
       the projection of the union onto the kept vectors (coefficients re-solved, see
       :func:`_project_onto_vectors`: merging alone lost up to 4 points of accuracy), or, with
       ``combine='compress'`` in the last round, by ``leansvm.compress`` to ``budget`` vectors
       per problem (returns a ``CompressedSVC``; no final pass);
    3. ``rounds > 1``: every chain starts again from the combined model for a further pass;
    4. a final pass (``final_blocks`` blocks; default 1 with 'merge' when something was combined,
       else 0): SGD continues
       from the combined model over that many randomly chosen blocks in one chain (the step
       count t goes on from the chains' total, so steps are small) and the bias is re-fitted on
       the last of them. Averaging k chains that each saw N/k rows costs accuracy (each chain
       is a weaker model); this short pass recovers it (400k checker rows, B = 100, mean of 3
       seeds, 4 chains: 0.986 -> 0.993; 2 chains: 0.984 -> 0.990; single-machine BSGD 0.982).

    ``params`` are ``BSGDClassifier`` parameters (C, lambda_, gamma, maintenance, n_merge,
    multiclass, ...); ``gamma='scale'`` / ``'auto'`` are resolved on the whole data
    (one distributed pass). The result carries ``distributed_info_`` (chains, blocks, rows,
    support vectors before reduction, CPU seconds of every chain per round and of the final pass).
    """
    _require_dask()
    import dask

    from leansvm.budget.bsgd_classifier import BSGDClassifier

    if combine not in ("merge", "compress"):
        raise ValueError(f"combine must be 'merge' or 'compress', got {combine!r}")
    for name, value in (("budget", budget), ("rounds", rounds), ("epochs", epochs)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    final_default = final_blocks is None
    if final_default:
        final_blocks = 1 if combine == "merge" else 0
    if int(final_blocks) != final_blocks or final_blocks < 0:
        raise ValueError(f"final_blocks must be a non-negative integer, got {final_blocks!r}")
    if combine == "compress" and final_blocks:
        raise ValueError("combine='compress' returns a CompressedSVC, which SGD cannot continue: "
                         "use final_blocks=0 (or combine='merge')")
    BSGDClassifier(budget=budget, **params)._check_params()          # bad parameters fail here, not on workers
    client = get_client(client)
    pairs, d = _training_blocks(X, y, label)
    if not pairs:
        raise ValueError("X holds no row blocks")
    stats = _compute(client, *[dask.delayed(_block_stats)(xb, yb) for xb, yb in pairs])
    n_total = int(sum(s[0] for s in stats))
    if n_total == 0:
        raise ValueError("X holds no rows")
    found = np.unique(np.concatenate([s[3] for s in stats]))
    classes = found if classes is None else np.unique(np.asarray(classes))
    if classes.size < 2:
        raise ValueError(f"fit_budget needs samples of at least two classes, got {classes.tolist()!r}")
    gamma = _resolve_gamma(params.get("gamma", "scale"), stats, n_total, d)
    params = {**params, "gamma": gamma, "budget": int(budget)}
    n_models = min(int(n_models or _n_workers(client)), len(pairs))
    if final_default and n_models == 1 and int(rounds) == 1:
        final_blocks = 0                  # one chain: nothing was combined, nothing to correct
    chains = [pairs[i::n_models] for i in range(n_models)]
    rng = check_random_state(random_state)
    step = dask.delayed(_continue_chain, pure=False)
    args = (params, classes, n_total)
    info = {"n_models": n_models, "n_blocks": len(pairs), "n_rows": n_total, "rounds": int(rounds),
            "union_support": [], "chain_cpu_s": [], "final_blocks": int(final_blocks), "final_cpu_s": 0.0}
    start = None
    for r in range(int(rounds)):
        models = _run_chains(client, chains, start, epochs, step, rng, args)
        info["chain_cpu_s"].append([float(getattr(m, "chain_cpu_s_", 0.0)) for m in models])
        union = _union_states(models, start)
        info["union_support"].append(int(sum(s.n_support for s in union if s is not None)))
        if combine == "compress" and r == int(rounds) - 1:
            from leansvm.compression.compressed_svc import compress
            full = BSGDClassifier.from_states(union, classes, n_features_in=d, random_state=random_state, **params)
            result = compress(full, n_sv=int(budget) * len(union), random_state=random_state)
            result.distributed_info_ = info
            return result
        start = _combine(union, classes, d, random_state, params)
    if final_blocks:
        chosen = [pairs[i] for i in np.sort(rng.permutation(len(pairs))[:int(final_blocks)])]
        (start,) = _run_chains(client, [chosen], start, 1, step, rng, args)
        info["final_cpu_s"] = float(getattr(start, "chain_cpu_s_", 0.0))
        del start.chain_cpu_s_
    start.distributed_info_ = info
    return start


# -- parallel model selection -------------------------------------------------------------
def fit_svccv(estimator, X, y, client=None):
    """``estimator.fit(X, y)`` for a :class:`leansvm.SVCCV` with its path tasks on Dask.

    SVCCV runs its screened regularisation paths (:func:`leansvm.svm_path`, warm start + safe
    screening over the whole C grid; one per gamma and fold) as joblib tasks; here joblib's Dask
    backend sends those tasks to the cluster's workers (``n_jobs`` of the estimator is ignored:
    as many tasks in flight as the cluster takes). Results are those of a local fit (the tasks
    and their order are the same). Returns the fitted estimator.
    """
    from joblib import parallel_config

    client = get_client(client)
    if client is None:
        raise ValueError("fit_svccv needs a distributed client (or a scheduler address)")
    params = estimator.get_params(deep=False)
    if "n_jobs" in params:
        estimator.set_params(n_jobs=-1)
    try:
        with parallel_config(backend="dask", client=client, n_jobs=-1):
            estimator.fit(X, y)
    finally:
        if "n_jobs" in params:
            estimator.set_params(n_jobs=params["n_jobs"])
    return estimator


def svm_paths(X, y, gammas, Cs=None, client=None, **path_options):
    """``[leansvm.svm_path(X, y, Cs, gamma=g, **path_options) for g in gammas]``, one Dask task per gamma.

    X and y are sent to the cluster once (``client.scatter``) and every path runs on a worker.
    """
    import dask

    from leansvm.paths.model_selection import svm_path

    gammas = [gammas] if isinstance(gammas, (str, int, float)) else list(gammas)
    if not gammas:
        raise ValueError("gammas must hold at least one value")
    client = get_client(client)
    X_h, y_h = _one_copy(X, client), _one_copy(y, client)
    task = dask.delayed(svm_path, pure=True)
    return _compute(client, *[task(X_h, y_h, Cs, gamma=g, **path_options) for g in gammas])


# -- a reduced model trained where the data lives ---------------------------------------------------
def _sample_rows(Xb, yb, rows):
    Xb = Xb.toarray() if sp.issparse(Xb) else np.asarray(Xb, dtype=np.float64)
    return Xb[rows], np.asarray(yb)[rows]


def _block_problem(Xb, yb, targets, settings, held):
    """One row block's objective (its rows' sum / its rows) without its ``held`` rows (held out to choose
    the iterate), kept on the worker that holds the block."""
    from leansvm.reduced.reduced_svm import label_problem, label_targets
    Xb = sp.csr_matrix(Xb, dtype=np.float64) if sp.issparse(Xb) else np.ascontiguousarray(Xb, dtype=np.float64)
    keep = np.setdiff1d(np.arange(Xb.shape[0]), held)
    yb = np.asarray(yb)
    if keep.size < Xb.shape[0]:
        Xb, yb = Xb[keep], yb[keep]
    return label_problem(Xb, label_targets(yb, targets), **settings)


def _rows_per_block(rows, ends) -> list:
    """Sorted global ``rows`` split by the blocks that end at ``ends`` (cumulative), as local indices."""
    starts = np.concatenate([[0], ends[:-1]])
    picks = np.split(rows, np.searchsorted(rows, ends[:-1]))
    return [p - s for p, s in zip(picks, starts)]


def _gather_rows(client, pairs, ends, rows):
    """(X, y) of the sorted global ``rows``, gathered from the blocks (``pairs``) that hold them, dense."""
    import dask
    sample = _compute(client, *[dask.delayed(_sample_rows)(xb, yb, mine)
                                for (xb, yb), mine in zip(pairs, _rows_per_block(rows, ends))])
    return np.vstack([a for a, _ in sample]), np.concatenate([b for _, b in sample])


#: glibc's mallopt parameter for the trim threshold
_M_TRIM_THRESHOLD = -1


@contextlib.contextmanager
def _freed_memory_kept():
    """Within: glibc keeps freed memory for reuse, where the environment set ``MALLOC_TRIM_THRESHOLD_`` (a
    Dask nanny sets it to 65,536 for its workers, so that they return memory to the system); after:
    that threshold again. Under it every row block's temporaries were fresh pages: one objective of
    1,000 vectors on 100,000 rows took 0.071 s in a worker against 0.054 s in the client
    (``benchmarks/deploy/bench_dask_worker_env.py``). Elsewhere (another C library, no such setting)
    it does nothing."""
    trim = os.environ.get("MALLOC_TRIM_THRESHOLD_", "")
    libc = None
    if trim.isdigit() and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL("libc.so.6")
            if not libc.mallopt(_M_TRIM_THRESHOLD, 2**30):
                libc = None
        except (OSError, AttributeError):
            libc = None
    try:
        yield
    finally:
        if libc is not None:
            libc.mallopt(_M_TRIM_THRESHOLD, int(trim))


def _block_objective(problem, theta):
    """(rows, loss, gradient) of one block: its row blocks split over the worker's leansvm threads, one
    BLAS thread each (as in memory: ``one_blas_thread``), freed memory kept for reuse meanwhile."""
    from leansvm.core.threads import one_blas_thread
    with one_blas_thread(), _freed_memory_kept():
        loss, grad = problem.objective(theta)
    return problem.N, loss, grad


def _block_coefficient_sums(problem, Z, B, c, gamma, system):
    """One block's sums for the Newton steps on the coefficients (``leansvm.reduced.newton``), one BLAS
    thread per leansvm thread as in memory."""
    from leansvm.compression.cvm import block_dtype_for
    from leansvm.reduced.newton import KernelRows
    with _freed_memory_kept():
        return KernelRows(problem.X, problem.F, problem.huber, block_dtype_for(B)).sums(Z, B, c, gamma, system)


class SummedProblem:
    """The objective of a reduced model summed over row blocks held by Dask workers: each block's problem
    stays where it was built; an evaluation sends theta (r (d + p) + p numbers) and gets back each block's
    loss and gradient, weighted by its share of the rows. ``template``: a problem of the same shapes on
    a sample, for packing and unpacking theta; the ridge on the coefficients is added here, once."""

    def __init__(self, template, parts, n_total, ridge, client):
        self.template, self.parts, self.n_total, self.ridge, self.client = template, parts, n_total, ridge, client
        self.learn_gamma = template.learn_gamma
        self.pack, self.unpack, self.kernel_at = template.pack, template.unpack, template.kernel_at

    def objective(self, theta):
        if self.client is not None:      # theta rides with each task: one round trip, not two (scatter)
            pieces = self.client.gather([self.client.submit(_block_objective, p, theta, pure=False)
                                         for p in self.parts])
        else:
            pieces = [_block_objective(p, theta) for p in self.parts]
        loss = sum(n * value for n, value, _ in pieces) / self.n_total
        grad = sum(n * g for n, _, g in pieces) / self.n_total
        return self.template.with_ridge(theta, loss, grad, self.ridge)

    def coefficient_sums(self, Z, kernel):
        """sums(B, c, system) for the Newton steps on the coefficients with Z and ``kernel`` fixed
        (``leansvm.reduced.newton.newton_coefficients``), summed over the blocks: each block returns
        p r^2 + O(p r) numbers."""
        def sums(B, c, system):
            args = (Z, B, c, kernel.gamma, system)
            if self.client is not None:
                pieces = self.client.gather([self.client.submit(_block_coefficient_sums, p, *args, pure=False)
                                             for p in self.parts])
            else:
                pieces = [_block_coefficient_sums(p, *args) for p in self.parts]
            return sum(pieces[1:], pieces[0])
        return sums


def fit_reduced(estimator, X, y=None, *, label=None, client=None):
    """Fit ``estimator`` (a :class:`~leansvm.ReducedSVC` or :class:`~leansvm.ReducedSVR`) on a dask array
    (or a dask DataFrame with ``label=``) where its row blocks lie; returns the estimator, fitted.

    The start is the in-memory fit's: the same random rows (``reduced_svm.start_rows``), gathered from
    the blocks that hold them. Then each block's objective is built
    once on the worker that holds the block and every L-BFGS iteration is summed over them
    (:class:`SummedProblem`): only theta and the gradients travel. Every iteration runs on every row
    (``subsample`` is not used: no phases). With ``early_stopping`` the in-memory fit's held-out rows are
    gathered here, left out of the blocks' sums, and choose the iterate as in memory. Without a
    ``distributed`` client the blocks are computed into this process and summed here."""
    import dask

    from leansvm.core.kernels import Kernel
    from leansvm.reduced.reduced_svm import (ReducedSVC, held_out_score, label_problem, label_targets, random_rows,
                                             start_rows)

    _require_dask()
    client = get_client(client)
    started = time.perf_counter()
    pairs, d = _training_blocks(X, y, label)
    stats = _compute(client, *[dask.delayed(_block_stats)(xb, yb) for xb, yb in pairs])
    n_total = int(sum(s[0] for s in stats))
    classifier = isinstance(estimator, ReducedSVC)
    classes = np.unique(np.concatenate([s[3] for s in stats])) if classifier else None
    if classifier and len(classes) < 2:
        raise ValueError(f"{type(estimator).__name__} needs at least two classes, got {len(classes)}")
    n_vectors = estimator._check_parameters(n_total)
    rng = check_random_state(estimator.random_state)
    ends = np.cumsum([s[0] for s in stats])
    targets = classes if classifier else None
    # the in-memory fit's draws: its held-out rows (early_stopping), then its start's sample of the
    # training rows, each gathered from the blocks that hold them
    train, held = estimator._held_out(n_total, rng)
    n_vectors = min(n_vectors, train.size)
    Xs, ys = _gather_rows(client, pairs, ends, train[random_rows(train.size, start_rows(n_vectors), rng)])
    monitor = None
    if held is not None:
        Xh, yh = _gather_rows(client, pairs, ends, held)
        monitor = (held_out_score(Xh, label_targets(yh, targets), classifier), held.size, 0.0)
    kernel = Kernel("rbf", _resolve_gamma(estimator.gamma, stats, n_total, d))
    Fs = label_targets(ys, targets)
    Z, B, c, kernel = estimator._start(Xs, Fs, kernel, n_vectors, rng, near_boundary=classifier)
    settings = estimator._settings(kernel, "margin" if classifier else "squared", B)
    made = [dask.delayed(_block_problem)(xb, yb, targets, settings, mine)
            for (xb, yb), mine in zip(pairs, _rows_per_block(held if held is not None else np.arange(0), ends))]
    parts = client.compute(made) if client is not None else _compute(None, *made)
    problem = SummedProblem(label_problem(Xs[:1], Fs[:1], **settings), parts, train.size,
                            1.0 / (float(estimator.C) * train.size), client)
    Z, B, c, kernel, iterations, stopped = estimator._optimise(
        [lambda B, kernel: problem], kernel, Z, B, c, f"{type(estimator).__name__} (Dask)", monitor, started)
    B, c = estimator._newton(problem.coefficient_sums(Z, kernel), Z, B, c, kernel, monitor, started)
    if classifier:
        estimator.classes_, estimator.multiclass_ = classes, "ovr"
    estimator.n_features_in_ = d
    return estimator._finish(Z, B, c, kernel, iterations, stopped)
