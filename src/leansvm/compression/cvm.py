"""Compressed SVMs (Xu, Gardner, Tyree, Weinberger, arXiv:1501.06478; Burges & Schölkopf, NIPS 1997).

The full model is an expansion f*(x) = sum_i a_i k(s_i, x) + b* over m
support vectors s_i (one coefficient column per output). Compression finds
r << m vectors z_j and coefficients beta_j with
f(x) = sum_j beta_j k(z_j, x) + c close to f*. Two steps:

**1. LARS-SVM selection (section 4, eqs. 5-9).** The paper retrains the
SVM on its support vectors with an L0 budget on the coefficients, fixes the
bias, rewrites the objective as a quadratic ``beta' K beta - 2 q' P beta``
(eq. 7), factorises the kernel matrix K = V L V' (eq. 8), sets
P = L^(1/2) V' so that P'P = K, and relaxes L0 to L1 (eq. 9)::

    min_beta || q - P beta ||^2   s.t.  ||beta||_1 <= t.

The extracted text leaves q's definition ambiguous (the hinge terms of
eq. 6 do not reduce to a pure least-squares form in P). **We implement
q = P a**, i.e. the squared RKHS distance between the compressed and the
full function, ||w - w*||^2 = (beta - a)' K (beta - a) = ||P a - P beta||^2,
which is Burges & Schölkopf's reduced-set criterion and bounds
|f(x) - f*(x)| <= ||w - w*|| sqrt(k(x, x)) at every x. The L1 path is
scikit-learn's ``lars_path(P, q, method='lar')`` stopped after the
requested number of active vectors (LARS adds exactly one per step).

For candidates S other than the whole pool (see below) the same objective
reads beta' K_SS beta - 2 beta'(K a)_S, so q = L^(-1/2) V' (K a)_S with
P'q = (K a)_S; when S is the whole pool this is q = P a.

Cost and scale: the eigendecomposition is O(s^3) time and O(s^2) memory for
s candidates, so all m support vectors are candidates only when
m <= ``EIG_MAX`` (3000). Larger pools select among a random subsample of
s = max(EIG_MAX, 3 n) support vectors (n = vectors wanted), with (K a)_S
from the full model's outputs at the subsample: O(s^3 + s m d) time,
O(s^2) memory, and the exact objective restricted to those candidates (the
gradient step then moves the vectors anyway). LARS on the s x s P costs
O(n s^2).

Multi-class (beyond the paper): all outputs share one pool. Selection is
simultaneous matching pursuit in the same RKHS metric, on the stacked outputs
(group LARS is not in scikit-learn): with residual correlations
C = K (A - B) (m x n_outputs) the next vector maximises
sum_p C_jp^2 / K_jj over the outputs it may serve, every output's
coefficient moves by C_jp / K_jj, and at sizes growing by 1.5x all
coefficients are refitted exactly (B_S = K_SS^-1 (K A)_S per output,
orthogonal matching pursuit). Only kernel columns of selected vectors are
ever computed: O(n m d + n m p) time, O(m n) memory.

For one-vs-one models each vector keeps a class and only carries the k-1
pairs involving it, as in LIBSVM's layout, so the compressed model is a
valid LIBSVM model file and costs n kernel values + n (k-1) products per
test point.

**2. Gradient support vectors (eq. 10).** Jointly over positions Z (r x d),
coefficients B and intercepts c, minimise the squared mismatch with the full
model's outputs on fitting points x_1..x_N::

    L(Z, B, c) = 1/(2N) sum_i sum_p (f*_p(x_i) - sum_j B_jp k(x_i, z_j) - c_p)^2.

With R = F* - K~ B - 1c' (N x p), K~_ij = k(x_i, z_j) and G = -R B' / N:
dL/dB = -K~' R / N (masked to the allowed pairs), dL/dc = -1'R / N and
dL/dz_j = sum_i G_ij dk(x_i, z_j)/dz_j with

    rbf      dk/dz = 2 gamma k (x - z)
    poly     dk/dz = degree gamma (gamma x'z + coef0)^(degree-1) x
    sigmoid  dk/dz = gamma (1 - k^2) x
    linear   dk/dz = x

solved by SciPy's L-BFGS-B from the LARS-SVM solution; at the end B and c
are refitted in closed form (least squares with Z fixed: the bias refit).
One evaluation costs O(N r d + N r p_c) where p_c is the number of outputs a
vector serves (k-1 for one-vs-one).

Two changes of the residual R (beyond the paper; same gradient formulas with
R replaced by the weighted residual):

* ``loss='margin'``: where |F*_ip| >= 1 the residual is s - f while s f < 1
  (s = sign F*_ip) and 0 beyond, a squared hinge at the full model's margin;
  inside the margin it is F* - f as in eq. 10. The loss is C^1, piecewise
  quadratic in the outputs; no closed-form refit follows.
* weights (one-vs-one, k > 2): pair (i, j)'s residual counts only at points
  whose full-model class is i or j. Computed as (point rows, pair columns)
  blocks, one evaluation costs O(N r d + N r (k-1)) for shared vectors.

Two more parameters of the gradient step (beyond the paper's eq. 10, after
its section 4 remark that kernel parameters may be tuned for the CVM model):

* ``learn_gamma`` (rbf): theta also holds log(gamma); with H = G * K~ and
  D_ij = |x_i - z_j|^2, dL/dlog(gamma) = -gamma sum_ij H_ij D_ij, D from
  the inner products already computed (no extra kernel evaluation).
* :func:`optimise_vectors` can choose its iterate on held-out points: the
  last one whose agreement with the full model's labels is within one
  standard error of the best (the LARS-SVM start included).
"""

from __future__ import annotations

import contextlib
import hashlib
import warnings
from dataclasses import dataclass, field

import numba
import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path

from leansvm.compression import rbf_objective
from leansvm.core.jit import njit
from leansvm.core.kernels import Kernel, inner_products, squared_row_norms
from leansvm.core.threads import SPLIT_MIN_ENTRIES, split_range

#: largest number of candidate vectors whose kernel matrix is eigendecomposed (eq. 8)
EIG_MAX = 3000
#: losses of the gradient step: eq. 10's squared mismatch, or the same with targets clipped at the margin
LOSSES = ("squared", "margin")


# -- output blocks: which vectors serve which outputs -------------------------------------
def ovo_pair_columns(n_classes: int) -> list[np.ndarray]:
    """For each class c, the one-vs-one output columns (LIBSVM's pair order) involving c."""
    cols = [[] for _ in range(n_classes)]
    p = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            cols[i].append(p)
            cols[j].append(p)
            p += 1
    return [np.asarray(c, dtype=np.intp) for c in cols]


def output_blocks(groups: np.ndarray | None, group_columns: list[np.ndarray] | None, n_outputs: int):
    """[(vector rows, output columns)]: vector j serves only its group's columns.

    ``groups=None`` means every vector serves every output (binary, one-vs-rest).
    Vectors sorted by group (as :func:`compress` orders them) give each block
    a slice of rows, so that the products below work on views of the N x r
    kernel matrix instead of copies of its columns (satimage, 480 vectors in
    six blocks, 4,118 points: 35.7 -> 14.8 s per compression).
    """
    if groups is None:
        return [(None, np.arange(n_outputs))]
    blocks = []
    for g, cols in enumerate(group_columns):
        rows = np.flatnonzero(groups == g)
        if rows.size and cols.size:
            contiguous = rows[-1] - rows[0] + 1 == rows.size
            blocks.append((slice(int(rows[0]), int(rows[-1]) + 1) if contiguous else rows, cols))
    return blocks


def _outer(rows):
    """``rows`` indexing a block's rows together with an array of columns: M[_outer(rows), cols]."""
    return rows if isinstance(rows, slice) else rows[:, None]


def blocked_apply(Kt: np.ndarray, B: np.ndarray, blocks, n_outputs: int) -> np.ndarray:
    """Kt @ (B restricted to the blocks), (N x r) @ (r x p) -> N x p."""
    out = np.zeros((Kt.shape[0], n_outputs))
    for rows, cols in blocks:
        if rows is None:
            out[:, cols] += Kt @ B[:, cols]
        else:
            out[:, cols] += Kt[:, rows] @ B[_outer(rows), cols]
    return out


def mask_from_blocks(blocks, n_vectors: int, n_outputs: int) -> np.ndarray:
    mask = np.zeros((n_vectors, n_outputs), dtype=bool)
    for rows, cols in blocks:
        mask[(slice(None) if rows is None else _outer(rows)), cols] = True
    return mask


# -- step 1: LARS-SVM on P = L^(1/2) V' --------------------------------------------------
def lars_problem(kernel: Kernel, S, Ka: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P, q) of eq. 9 over candidate vectors S: K_SS = V L V' (eq. 8), P = L^(1/2) V', P'q = (K a)_S.

    ``Ka`` holds the full model's outputs (minus intercept) at the candidates,
    (K a)_S. Then ||P beta - q||^2 = beta' K_SS beta - 2 beta'(K a)_S + const,
    the RKHS distance to the full model up to a constant, and
    q = L^(-1/2) V' (K a)_S (when S is the whole pool, q = P a).
    Eigenvalues below 1e-12 of the largest are dropped (rank-deficient K).
    """
    lam, V = _kernel_eigh(kernel, S)
    keep = lam > 1e-12 * max(lam[-1], 1e-300)
    lam, V = lam[keep], V[:, keep]
    P = np.sqrt(lam)[:, None] * V.T
    q = (V.T @ Ka) / np.sqrt(lam)
    return P, q


#: the eigendecompositions kept by :func:`reuse_eigendecompositions` (None: not inside one)
_EIGH_MEMO: dict | None = None


@contextlib.contextmanager
def reuse_eigendecompositions():
    """Within the block, :func:`lars_problem` reuses the last eigendecomposition of K_SS for the same
    kernel and candidates (one kept; released at the end of the block).

    A size search compresses one model at several sizes; below ``eig_max`` the candidates are the
    same each time (the same random subsample for the same ``random_state``), so K_SS = V L V' need
    not be recomputed: it dominated each compression of magic (27 of 30 s, 3,000 candidates).
    Not thread-safe: the memo is module-wide while the block runs.
    """
    global _EIGH_MEMO
    outer, _EIGH_MEMO = _EIGH_MEMO, {}
    try:
        yield
    finally:
        _EIGH_MEMO = outer


def _digest(kernel: Kernel, S) -> tuple:
    h = hashlib.sha1()
    parts = (S.data, S.indices, S.indptr) if sp.issparse(S) else (np.ascontiguousarray(S),)
    for a in parts:
        h.update(np.ascontiguousarray(a).view(np.uint8))
    return kernel.name, kernel.gamma, kernel.degree, kernel.coef0, S.shape, h.hexdigest()


def _kernel_eigh(kernel: Kernel, S):
    """(L, V) of K_SS = V L V' (eq. 8), from the memo of :func:`reuse_eigendecompositions` if there."""
    key = _digest(kernel, S) if _EIGH_MEMO is not None else None
    if key is not None and key in _EIGH_MEMO:
        return _EIGH_MEMO[key]
    lam, V = scipy.linalg.eigh(kernel(S), overwrite_a=True, check_finite=False)
    if key is not None:
        _EIGH_MEMO.clear()
        _EIGH_MEMO[key] = (lam, V)
    return lam, V


def lars_select(P: np.ndarray, q: np.ndarray, n_select: int) -> np.ndarray:
    """Indices of the first ``n_select`` columns LARS activates on min ||q - P beta||^2 (eq. 9)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        _, active, _ = lars_path(P, q, method="lar", max_iter=int(n_select) + 2, return_path=False)
    return np.asarray(active, dtype=np.intp)[:n_select]


def lars_candidates(m: int, n_select: int, eig_max: int, rng) -> np.ndarray:
    """All m support vectors when m <= eig_max, else a random subsample of max(eig_max, 3 n) of them."""
    size = min(m, max(int(eig_max), 3 * int(n_select)))
    if size >= m:
        return np.arange(m)
    return np.sort(rng.choice(m, size, replace=False))


def somp_select(kernel: Kernel, S, KA: np.ndarray, n_select: int, groups=None, group_columns=None,
                refit_growth: float = 1.5) -> np.ndarray:
    """Simultaneous (orthogonal) matching pursuit over shared vectors, RKHS metric (see module doc).

    ``KA`` = K A (m x p), the full model's outputs at its own support vectors
    minus intercepts. ``groups`` (m,) and ``group_columns`` restrict vector j
    to the outputs of its group (one-vs-one classes).
    """
    m, p = KA.shape
    norms = squared_row_norms(S)
    diag = np.maximum(np.array(kernel.diagonal(S), dtype=np.float64), 1e-300)
    if groups is None:
        allowed = np.ones((m, p), dtype=bool)
    else:
        allowed = np.zeros((m, p), dtype=bool)
        for g, cols in enumerate(group_columns):
            allowed[np.ix_(groups == g, cols)] = True
    C = np.array(KA, dtype=np.float64, order="C", copy=True)
    n_select = int(min(n_select, m))
    Kcols = np.empty((m, n_select))
    B = np.zeros((n_select, p))
    selected = []
    available = np.ones(m, dtype=bool)
    next_refit = 4
    masked = groups is not None
    score = np.empty(m)
    _deflate(C, np.zeros(m), np.zeros(p), allowed, masked, diag, score)    # the scores of C as it is
    floor = 1e-24 * max(1.0, float(np.abs(KA).max()) ** 2)
    for step in range(n_select):
        score[~available] = -np.inf
        j = int(np.argmax(score))
        if not np.isfinite(score[j]) or score[j] <= floor:
            break
        Kcols[:, step] = kernel.block(S[j:j + 1], S, x_norms=norms[j:j + 1], y_norms=norms)[0]
        delta = np.where(allowed[j], C[j] / diag[j], 0.0)
        B[step] = delta
        selected.append(j)
        available[j] = False
        if len(selected) >= next_refit or step == n_select - 1:
            sel = np.asarray(selected)
            B[:len(sel)] = _rkhs_refit(Kcols[:, :len(sel)], sel, KA, allowed[sel])
            C = np.ascontiguousarray(KA - _masked_product(Kcols[:, :len(sel)], B[:len(sel)], allowed[sel]))
            _deflate(C, np.zeros(m), np.zeros(p), allowed, masked, diag, score)
            next_refit = int(np.ceil(len(selected) * refit_growth)) + 1
        else:
            _deflate(C, np.ascontiguousarray(Kcols[:, step]), delta, allowed, masked, diag, score)
    return np.asarray(selected, dtype=np.intp)


@njit(cache=True, nogil=True)
def _deflate(C, k, delta, allowed, masked, diag, score):
    """C <- C - k delta' in place, and score_i = sum_c allowed_ic C_ic^2 / diag_i of the result: the
    matching-pursuit step and the next selection's scores in one pass over C (m x p; letter's 6,670
    support vectors x 325 outputs: the rank-one update and the masked norms were four passes and two
    temporaries per selected vector)."""
    m, p = C.shape
    for i in range(m):
        ki = k[i]
        total = 0.0
        for c in range(p):
            v = C[i, c] - ki * delta[c]
            C[i, c] = v
            if not masked or allowed[i, c]:
                total += v * v
        score[i] = total / diag[i]


def _masked_product(Kc, B, allowed):
    """Kc @ (B * allowed), grouping vectors by their pattern of allowed outputs."""
    out = np.zeros((Kc.shape[0], B.shape[1]))
    patterns, inverse = np.unique(allowed, axis=0, return_inverse=True)
    for g, pattern in enumerate(patterns):
        rows = np.flatnonzero(inverse.ravel() == g)
        cols = np.flatnonzero(pattern)
        if cols.size:
            out[:, cols] += Kc[:, rows] @ B[np.ix_(rows, cols)]
    return out


def _rkhs_refit(Kc, sel, KA, allowed):
    """B_S = K_SS^-1 (K A)_S per output over the vectors allowed to serve it (tiny ridge)."""
    Kss = Kc[sel]
    B = np.zeros((sel.size, KA.shape[1]))
    patterns, inverse = np.unique(allowed.T, axis=0, return_inverse=True)  # outputs sharing a vector set
    for g, pattern in enumerate(patterns):
        outs = np.flatnonzero(inverse.ravel() == g)
        rows = np.flatnonzero(pattern)
        if rows.size == 0:
            continue
        A = Kss[np.ix_(rows, rows)]
        A = A + 1e-10 * max(np.trace(A) / rows.size, 1e-300) * np.eye(rows.size)
        B[np.ix_(rows, outs)] = scipy.linalg.solve(A, KA[np.ix_(sel[rows], outs)], assume_a="pos",
                                                   check_finite=False)
    return B


# -- least-squares coefficients and intercepts on fitting points ---------------------------
def refit_coefficients(Kt: np.ndarray, F: np.ndarray, blocks, ridge: float = 1e-8):
    """(B, c) minimising ||F - Kt B - 1 c'||^2 with B restricted to the blocks (the bias refit).

    Centring removes c; each output solves its own normal equations on the
    vectors serving it (Gram matrix Kc'Kc computed once), with a relative
    ridge ``ridge`` for rank-deficient kernels.
    """
    N, r = Kt.shape
    p = F.shape[1]
    kmean = Kt.mean(axis=0)
    fmean = F.mean(axis=0)
    Kc = Kt - kmean
    Fc = F - fmean
    gram = Kc.T @ Kc
    rhs = Kc.T @ Fc
    B = np.zeros((r, p))
    mask = mask_from_blocks(blocks, r, p)
    patterns, inverse = np.unique(mask.T, axis=0, return_inverse=True)
    for g, pattern in enumerate(patterns):
        outs = np.flatnonzero(inverse.ravel() == g)
        rows = np.flatnonzero(pattern)
        if rows.size == 0:
            continue
        A = gram[np.ix_(rows, rows)]
        A = A + ridge * max(np.trace(A) / rows.size, 1e-300) * np.eye(rows.size)
        B[np.ix_(rows, outs)] = scipy.linalg.solve(A, rhs[np.ix_(rows, outs)], assume_a="pos",
                                                   check_finite=False)
    c = fmean - kmean @ B
    return B, c


# -- step 2: gradient support vectors (eq. 10) -------------------------------------------
@dataclass
class GradientProblem:
    """The eq. 10 objective over packed parameters theta = [Z.ravel(), B[mask], c]."""

    kernel: Kernel
    X: object                 # fitting points, N x d, dense or CSR
    F: np.ndarray             # full model's outputs at X, N x p
    blocks: list
    n_vectors: int
    weights: np.ndarray | None = None   # N x p non-negative weights of the residuals (None: all 1)
    loss: str = "squared"               # 'squared' (eq. 10) or 'margin' (targets clipped at the margin)
    point_blocks: list | None = None    # [(point rows, output cols)]: only these entries count (weight 1)
    learn_gamma: bool = False           # rbf: log(gamma) is one more parameter (the last entry of theta)
    block_dtype: object = np.float32    # the RBF objective in row blocks of this dtype where it applies
                                        # (rbf_objective); None: on the whole N x r matrix in float64
    mask: np.ndarray = field(init=False)
    _blocked: object = field(init=False, default=None, repr=False)

    def __post_init__(self):
        self.N, self.d = self.X.shape
        self.p = self.F.shape[1]
        self.mask = mask_from_blocks(self.blocks, self.n_vectors, self.p)
        self.x_norms = squared_row_norms(self.X)
        self.sparse = sp.issparse(self.X)
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if self.learn_gamma and self.kernel.name != "rbf":
            raise ValueError(f"learn_gamma needs the rbf kernel, not {self.kernel.name!r}")
        if self.point_blocks is not None:
            if self.weights is not None:
                raise ValueError("give weights or point_blocks, not both")
            # vectors restricted to outputs on the whole matrix: dense weights instead (the row blocks
            # take point blocks with restricted vectors as they are)
            if self.blocks[0][0] is not None and not self.in_row_blocks(self.kernel):
                self.weights = np.zeros(self.F.shape)
                for rows, cols in self.point_blocks:
                    self.weights[np.ix_(rows, cols)] = 1.0
                self.point_blocks = None
        if self.weights is not None and self.weights.shape != self.F.shape:
            raise ValueError(f"weights must have shape {self.F.shape}, got {self.weights.shape}")
        self.saturated = np.abs(self.F) >= 1.0 if self.loss == "margin" else None
        self.sign = np.where(self.F >= 0, 1.0, -1.0)

    def residuals(self, pred: np.ndarray, rows=None, cols=None) -> np.ndarray:
        """Residuals r with loss 0.5 sum w r^2 / N and dL/dpred = -w r / N (see the module doc).

        'squared': r = F - pred. 'margin': where |F| >= 1 the full model is
        beyond its margin and only the side counts: r = s - pred while
        s pred < 1 (s = sign F), else 0 (a squared hinge at the margin).
        ``rows, cols``: pred is the block F[rows][:, cols] only; a slice of ``rows`` alone: those
        rows, every output (the row blocks of :mod:`.rbf_objective`).
        """
        if rows is None:
            at = (slice(None), slice(None))
        elif isinstance(rows, slice) and cols is None:
            at = (rows, slice(None))
        else:
            at = np.ix_(rows, cols)
        R = self.F[at] - pred
        if self.saturated is not None:
            sign = self.sign[at]
            hinge = np.where(sign * pred < 1.0, sign - pred, 0.0)
            R = np.where(self.saturated[at], hinge, R)
        return R

    def loss_beyond_residuals(self, pred: np.ndarray, rows=None, cols=None) -> float:
        """The part of sum_i loss_i (before / N) that 0.5 sum w r^2 leaves out: 0 here; a loss whose
        residual is clipped (a smoothed hinge, :mod:`leansvm.reduced`) adds its linear part."""
        return 0.0

    def pack(self, Z, B, c, kernel: Kernel | None = None):
        parts = [np.asarray(Z, dtype=np.float64).ravel(), B[self.mask], c]
        if self.learn_gamma:
            parts.append([np.log((kernel or self.kernel).gamma)])
        return np.concatenate(parts)

    def unpack(self, theta):
        r, d = self.n_vectors, self.d
        Z = theta[:r * d].reshape(r, d)
        nb = int(self.mask.sum())
        B = np.zeros((r, self.p))
        B[self.mask] = theta[r * d:r * d + nb]
        c = theta[r * d + nb:r * d + nb + self.p]
        return Z, B, c

    def kernel_at(self, theta) -> Kernel:
        """The kernel of parameters theta: ``kernel``, with gamma = exp(theta[-1]) when ``learn_gamma``."""
        if not self.learn_gamma:
            return self.kernel
        return Kernel(self.kernel.name, float(np.exp(theta[-1])), self.kernel.degree, self.kernel.coef0)

    def in_row_blocks(self, kernel) -> bool:
        """Whether the objective with ``kernel`` runs in ``block_dtype`` row blocks (:mod:`.rbf_objective`)."""
        return self.block_dtype is not None and rbf_objective.applies(kernel, self.X)

    def objective(self, theta):
        """(L, dL/dtheta) of eq. 10 (see the module docstring for the gradients)."""
        Z, B, c = self.unpack(theta)
        k = self.kernel_at(theta)
        if self.in_row_blocks(k):
            if self._blocked is None:
                self._blocked = rbf_objective.BlockedRBF(self, self.block_dtype)
            loss, gZ, gB, gc, S = self._blocked.objective(Z, B, c, k.gamma)
            return loss, np.concatenate([gZ.ravel(), gB[self.mask], gc, [-k.gamma * S] if self.learn_gamma else []])
        inner = inner_products(self.X, Z, np.float64)    # rows split over leansvm's threads when large
        Kt = self._kernel_from_inner(inner, Z, k)
        if self.point_blocks is None:
            loss, G, gB, gc = self._output_gradients(Kt, B, c)
        else:
            loss, G, gB, gc = self._point_block_gradients(Kt, B, c)
        extra = []
        if k.name == "rbf":
            XH, H_cols, sq = self._rbf_tail(G, Kt, inner, Z)
            gZ = 2.0 * k.gamma * (XH - Z * H_cols[:, None])
            if self.learn_gamma:   # dk/dlog(gamma) = -gamma |x - z|^2 k
                extra = [-k.gamma * sq]
        elif k.name == "poly":
            T = k.gamma * inner + k.coef0
            H = G * (k.degree * k.gamma * T ** (k.degree - 1)) if k.degree >= 1 else np.zeros_like(G)
            gZ = self._XT(H)
        elif k.name == "sigmoid":
            gZ = self._XT(G * (k.gamma * (1.0 - Kt * Kt)))
        else:
            gZ = self._XT(G)
        return loss, np.concatenate([gZ.ravel(), gB[self.mask], gc, extra])

    def _output_gradients(self, Kt, B, c):
        """(L, dL/dKt, dL/dB, dL/dc) over all N x p outputs (weighted when ``weights``)."""
        pred = blocked_apply(Kt, B, self.blocks, self.p) + c
        R = self.residuals(pred)
        N = self.N
        if self.weights is None:
            loss = (0.5 * float(np.einsum("ij,ij->", R, R)) + self.loss_beyond_residuals(pred)) / N
        else:
            loss = 0.5 * float(np.einsum("ij,ij,ij->", R, R, self.weights)) / N
            R = R * self.weights
        G = np.zeros_like(Kt)                    # dL/dKt = -R B' / N (masked)
        gB = np.zeros_like(B)
        for rows, cols in self.blocks:
            if rows is None:
                G -= R[:, cols] @ B[:, cols].T / N
                gB[:, cols] = -(Kt.T @ R[:, cols]) / N
            else:
                G[:, rows] -= (R[:, cols] / N) @ B[_outer(rows), cols].T
                gB[_outer(rows), cols] = -(Kt[:, rows].T @ R[:, cols]) / N
        return loss, G, gB, -R.sum(axis=0) / N

    def _point_block_gradients(self, Kt, B, c):
        """The same over the (point rows, output cols) blocks only, shared vectors.

        Each block costs |rows| r |cols| per product instead of N r p: for
        one-vs-one pairs weighted to the point's class, (k-1) instead of k(k-1)/2.
        The blocks are split over leansvm's threads (their rows are disjoint, one class each, so
        each writes its own rows of G; dL/dB and dL/dc are summed per thread).
        """
        N = self.N
        G = np.zeros_like(Kt)
        blocks = self.point_blocks

        def part(a, b):
            loss, gB, gc = 0.0, np.zeros_like(B), np.zeros(self.p)
            for rows, cols in blocks[a:b]:
                Kr = Kt[rows]
                Bc = B[:, cols]
                R = self.residuals(Kr @ Bc + c[cols], rows, cols)
                loss += 0.5 * float(np.einsum("ij,ij->", R, R)) / N
                G[rows] -= R @ Bc.T / N
                gB[:, cols] -= Kr.T @ R / N
                gc[cols] -= R.sum(axis=0) / N
            return loss, gB, gc

        parts = split_range(part, len(blocks)) if Kt.size >= SPLIT_MIN_ENTRIES else [part(0, len(blocks))]
        return (sum(loss for loss, _, _ in parts), G, sum(gB for _, gB, _ in parts),
                sum(gc for _, _, gc in parts))

    def _rbf_tail(self, G, Kt, inner, Z):
        """With H = G * Kt (dL/d inner, up to -2 gamma): (H' X, H's column sums, and for the learned
        gamma sum_ij H_ij |x_i - z_j|^2), by row ranges over leansvm's threads."""
        z_norms = squared_row_norms(Z)

        def rows(a, b):
            H = G[a:b] * Kt[a:b]
            cols = H.sum(axis=0)
            XH = self._XT(H, a, b)
            sq = (self.x_norms[a:b] @ H.sum(axis=1) + z_norms @ cols
                  - 2.0 * float(np.einsum("ij,ij->", H, inner[a:b]))) if self.learn_gamma else 0.0
            return XH, cols, sq
        parts = split_range(rows, self.N) if self.N * Z.shape[0] >= SPLIT_MIN_ENTRIES and not self.sparse \
            else [rows(0, self.N)]
        return sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts)

    def _XT(self, H, a=0, b=None):
        """H' X[a:b] (r x d) for dense or CSR X, H holding the rows a:b."""
        X = self.X if a == 0 and b is None else self.X[a:b]
        return np.asarray((X.T @ H).T) if self.sparse else H.T @ X

    def _kernel_from_inner(self, inner, Z, kernel):
        K = np.array(inner, dtype=np.float64, copy=True)
        return kernel.transform_inner(K, x_norms=self.x_norms, y_norms=squared_row_norms(Z))

    def kernel_matrix(self, Z, kernel: Kernel | None = None):
        return (kernel or self.kernel).block(self.X, Z, x_norms=self.x_norms)


#: the float32 row blocks compute the outputs K B to about eps32 x max_k sum_j |B_jk| (an RBF kernel
#: value is at most 1): where that passes this share of the margin, the objective runs in float64
#: blocks instead. Large C gives large coefficients whose terms cancel: at the starting fit,
#: magic at C = 2^17 (40 vectors) 0.038, a9a at C = 2^18 0.14, checker at C = 2^20 0.019, where
#: L-BFGS stopped after 11-44 iterations (a relative decrease under 1e-9: rounding noise) and
#: float64 ran its 1,000 to half the loss (magic 40 / 80 / 160 vectors tested 0.862 / 0.871 / 0.870
#: against 0.854 / 0.868 / 0.869); the C <= 2^11 models of the promise sets 1e-5 to 3e-5
FLOAT32_OUTPUT_ROUNDING_MAX = 1e-3


def block_dtype_for(B) -> type:
    """np.float32 for the row blocks of coefficients ``B`` (r x p) where its rounding of the outputs
    stays within FLOAT32_OUTPUT_ROUNDING_MAX, else np.float64."""
    rounding = np.finfo(np.float32).eps * float(np.abs(B).sum(axis=0).max(initial=0.0))
    return np.float32 if rounding <= FLOAT32_OUTPUT_ROUNDING_MAX else np.float64


#: a learned RBF gamma stays within this factor of where it started (its log is a bounded L-BFGS-B
#: variable): on mushroom (gamma 0.00046, 5 vectors, a confirming fold of the main job) L-BFGS took
#: log(gamma) past the range of float32, the kernel values became NaN and the learned kernel
#: infinite; where the learned gamma helps it moves far less (letter 2 %: 0.19 -> 0.11)
GAMMA_FACTOR_BOUND = 1e3


def optimise_vectors(problem: GradientProblem, Z0, B0, c0, max_iter: int = 100, tol: float = 1e-9,
                     callback=None, monitor=None, n_validation: int = 0, check_every: int = 10,
                     patience: int | None = None, gamma_range: tuple | None = None, slack: float | None = None):
    """L-BFGS-B on eq. 10 from (Z0, B0, c0); returns (Z, B, c, scipy result).

    Validation-based choice of the iterate (beyond the paper): ``monitor(Z, B, c, kernel)``
    returns the agreement on ``n_validation`` held-out points (the share of
    them labelled as the full model labels them), computed at the start and
    every ``check_every`` iterations. The returned iterate is the last one
    whose agreement is within one standard error, sqrt(a (1 - a) / n_validation),
    of the best agreement a (the one-standard-error rule, leaning towards more
    iterations, which lowered the test error in every measurement): the start,
    the LARS-SVM solution, is kept when it labels held-out points clearly
    better than every later iterate (``slack``: that tolerance instead, for a score that is not a
    share, 0 for the best iterate). With ``patience``, L-BFGS stops when the
    best agreement has not improved for that many iterations.
    ``res.best_iteration`` / ``res.best_score`` describe the iterate returned.
    ``res.kernel``: the kernel of the returned iterate (its gamma learned when
    ``problem.learn_gamma``, within ``GAMMA_FACTOR_BOUND`` of the start either way, or within
    ``gamma_range`` = (lowest, highest) when given). Warns
    (``ConvergenceWarning``) when it stops at ``max_iter``.
    """
    theta0 = problem.pack(Z0, B0, c0)
    bounds = None
    if problem.learn_gamma:       # every parameter free but log(gamma)
        reach = np.log(GAMMA_FACTOR_BOUND)
        low, high = (theta0[-1] - reach, theta0[-1] + reach) if gamma_range is None else np.log(gamma_range)
        bounds = [(None, None)] * (theta0.size - 1) + [(float(low), float(high))]
    kept = []             # [(agreement, iteration, theta)]: each beats every later one (decreasing agreement)
    state = {"iteration": 0, "best_iteration": 0}

    def check(theta):
        agreement = monitor(*problem.unpack(theta), problem.kernel_at(theta))
        if not kept or agreement > kept[0][0]:
            state["best_iteration"] = state["iteration"]
        kept[:] = [e for e in kept if e[0] > agreement]
        kept.append((agreement, state["iteration"], theta.copy()))

    def step(theta):
        state["iteration"] += 1
        if callback is not None:
            callback(theta)
        if monitor is not None and state["iteration"] % check_every == 0:
            check(theta)
            if patience is not None and state["iteration"] - state["best_iteration"] >= patience:
                raise StopIteration

    if monitor is not None:
        check(theta0)
    res = minimize(problem.objective, theta0, jac=True, method="L-BFGS-B", callback=step, bounds=bounds,
                   options={"maxiter": int(max_iter), "ftol": tol, "gtol": 1e-10, "maxcor": 20})
    if monitor is None:
        theta, res.best_iteration, res.best_score = res.x, int(res.nit), None
    else:
        if state["iteration"] % check_every:
            check(res.x)
        top = kept[0][0]
        if slack is None:
            slack = np.sqrt(top * (1.0 - top) / max(n_validation, 1))
        res.best_score, res.best_iteration, theta = [e for e in kept if e[0] >= top - slack - 1e-12][-1]
    if res.status == 1:
        warnings.warn(f"gradient support vectors: L-BFGS stopped after max_iter={max_iter} iterations "
                      f"(objective {res.fun:.3g}); raise max_iter for a closer fit", ConvergenceWarning,
                      stacklevel=3)
    Z, B, c = problem.unpack(theta)
    res.kernel = problem.kernel_at(theta)
    return Z, B, c, res


def own_pair_blocks(point_classes: np.ndarray, n_classes: int) -> list:
    """[(rows of the points of class c, the k-1 pair columns of c)]: :func:`own_pair_weights` as blocks."""
    cols = ovo_pair_columns(n_classes)
    return [(np.flatnonzero(point_classes == c), cols[c]) for c in range(n_classes)
            if np.any(point_classes == c)]


def own_pair_weights(point_classes: np.ndarray, n_classes: int) -> np.ndarray:
    """N x k(k-1)/2 weights: 1 where one-vs-one pair (i, j) involves the point's class, else 0.

    A point of class c gets the full model's label when c wins its k-1 pairs;
    the other pairs' outputs at that point do not decide the vote, so the
    gradient step does not spend vectors on matching them there.
    """
    cols = ovo_pair_columns(n_classes)
    W = np.zeros((point_classes.size, n_classes * (n_classes - 1) // 2))
    for c in range(n_classes):
        W[np.ix_(point_classes == c, cols[c])] = 1.0
    return W
