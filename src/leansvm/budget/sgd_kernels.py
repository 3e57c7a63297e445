"""The compiled kernel evaluations of budgeted SGD: dot products of a row (dense or CSR) with the
budget vectors, kernel values, the RBF margin with a vectorised exp, and storing a row as a vector."""

from __future__ import annotations

import numpy as np

from leansvm.core.jit import njit


# -- kernel values -----------------------------------------------------------------------------
@njit(cache=True)
def _kernel_value(dot, xsq, ysq, kcode, gamma, coef0, degree):
    if kcode == 2:
        d2 = xsq + ysq - 2.0 * dot
        if d2 < 0.0:
            d2 = 0.0
        return np.exp(-gamma * d2)
    if kcode == 0:
        return dot
    if kcode == 1:
        return (gamma * dot + coef0) ** degree
    return np.tanh(gamma * dot + coef0)


@njit(cache=True, fastmath={"reassoc", "contract", "arcp", "nsz"})
def _dots_dense(SV, n_sv, x, out):
    d = x.shape[0]
    for j in range(n_sv):
        s = 0.0
        for k in range(d):
            s += SV[j, k] * x[k]
        out[j] = s


@njit(cache=True)
def _dots_sparse(SV, n_sv, data, indices, lo, hi, out):
    for j in range(n_sv):
        s = 0.0
        for p in range(lo, hi):
            s += SV[j, indices[p]] * data[p]
        out[j] = s


@njit(cache=True)
def _dots_row(Xd, data, indices, indptr, sparse, i, SV, n_sv, out):
    """out[j] = sv_j'x_i for the first n_sv vectors (x_i a dense row or a CSR row)."""
    if sparse:
        _dots_sparse(SV, n_sv, data, indices, indptr[i], indptr[i + 1], out)
    else:
        _dots_dense(SV, n_sv, Xd[i], out)


# The per-step margin is most of the non-maintenance time: compiled with the reassociation and
# contraction flags (the dot products and the sum vectorise; no nnan / ninf, so inf tests elsewhere
# stay valid) and a branch-free exp that LLVM vectorises (numba's scalar np.exp does not).
_FAST = {"reassoc", "contract", "arcp", "nsz"}


@njit(cache=True, fastmath=_FAST, inline="always")
def exp_nonpositive(v):
    """exp(v) for v <= 0: v = k ln 2 + r, |r| <= ln2 / 2, exp(r) by its degree-12 Taylor
    polynomial (truncation < 1e-17), times 2^k. Relative error below 2e-15 on [-40, 0] (where
    kernel values matter), growing to 3e-14 at -700 (the reduction is reassociated); 0 below -745."""
    v = max(v, -745.0)
    k = np.floor(v * 1.4426950408889634 + 0.5)
    r = v - k * 0.6931471803691238 - k * 1.9082149292705877e-10
    p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (
        1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 + r * (
            1.0 / 3628800 + r * (1.0 / 39916800 + r / 479001600.0)))))))))))
    return p * 2.0 ** k


@njit(cache=True, fastmath=_FAST)
def rbf_margin(dots, sv_sq, alpha, n_sv, x_sq, gamma, bias):
    """f(x) = bias + sum_j alpha_j exp(-gamma (||sv_j||^2 + ||x||^2 - 2 sv_j'x)) from the dots."""
    f = bias
    for j in range(n_sv):
        d2 = max(sv_sq[j] + x_sq - 2.0 * dots[j], 0.0)
        f += alpha[j] * exp_nonpositive(-gamma * d2)
    return f


@njit(cache=True)
def _margin(Xd, data, indices, indptr, sparse, x_sq, i, SV, sv_sq, alpha, n_sv, kbuf, kcode, gamma,
            coef0, degree, bias):
    """f(x_i) = bias + sum_j alpha_j k(sv_j, x_i) with the current model (kbuf: the dots)."""
    _dots_row(Xd, data, indices, indptr, sparse, i, SV, n_sv, kbuf)
    if kcode == 2:
        return rbf_margin(kbuf, sv_sq, alpha, n_sv, x_sq[i], gamma, bias)
    f = bias
    for j in range(n_sv):
        f += alpha[j] * _kernel_value(kbuf[j], sv_sq[j], x_sq[i], kcode, gamma, coef0, degree)
    return f


@njit(cache=True)
def _store_row(Xd, data, indices, indptr, sparse, x_sq, i, SV, sv_sq, slot):
    """Copy x_i (dense or CSR row) into budget slot ``slot``."""
    if sparse:
        SV[slot, :] = 0.0
        for q in range(indptr[i], indptr[i + 1]):
            SV[slot, indices[q]] = data[q]
    else:
        for c in range(SV.shape[1]):
            SV[slot, c] = Xd[i, c]
    sv_sq[slot] = x_sq[i]
