"""LAPACK's Cholesky factorisation and solve (dpotrf, dpotrs), callable from compiled code.

The IRWLS working-set system M x = B (M = K_11 + D^-1 + mu I, symmetric positive definite, up
to 128 x 128, two or three right-hand sides) is factored once or twice per chunk; the rounds
that drop a few clipped rows reuse the factor (``irwls_subproblem._solve_principal``). numba's
``np.linalg.cholesky`` copies M, checks it and zeroes a triangle, and a substitution written in
Python runs one dependent multiply-add at a time; LAPACK's blocked routines do both in about
two thirds of the time (96 x 96, two right-hand sides: 47 -> 31 us).

The routines are scipy's own (``scipy.linalg.cython_lapack``, the LAPACK scipy links), declared
to LLVM by symbol name: a function compiled against them is resolved when it is loaded, so
numba's on-disk cache stays valid in every process (a ctypes pointer would be baked into the
cached code and refused by the cache).
"""
import llvmlite.binding as llvm
import numpy as np
from numba import types
from numba.extending import get_cython_function_address

from leansvm.core.jit import njit

for _name in ("dpotrf", "dpotrs"):
    llvm.add_symbol("leansvm_" + _name, get_cython_function_address("scipy.linalg.cython_lapack", _name))

_ptr = types.voidptr
#: dpotrf(uplo, n, a, lda, info)
_dpotrf = types.ExternalFunction("leansvm_dpotrf", types.void(_ptr, _ptr, _ptr, _ptr, _ptr))
#: dpotrs(uplo, n, nrhs, a, lda, b, ldb, info)
_dpotrs = types.ExternalFunction("leansvm_dpotrs", types.void(_ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr,
                                                              _ptr))

_LOWER = 76  # b'L'


@njit(cache=True, nogil=True)
def cholesky_factor(M):
    """Factor symmetric positive definite M (m x m, C order) in place; returns LAPACK's info.

    The factor goes to M's upper triangle and diagonal (row-major M is column-major M', the
    same matrix, whose lower triangle LAPACK factors); the strict lower triangle is left as it
    was. info > 0: M is not positive definite (the leading minor of that order failed).
    """
    ints = np.empty(2, dtype=np.int32)          # n, info
    ints[0], ints[1] = M.shape[0], 0
    uplo = np.full(1, _LOWER, dtype=np.uint8)
    _dpotrf(uplo.ctypes, ints[0:1].ctypes, M.ctypes, ints[0:1].ctypes, ints[1:2].ctypes)
    return ints[1]


@njit(cache=True, nogil=True)
def factored_solve(F, B):
    """Solve M X' = B' in place from :func:`cholesky_factor`'s F of M. B is (k, m) C order:
    k right-hand sides of length m, replaced by the solutions."""
    ints = np.empty(3, dtype=np.int32)          # n, nrhs, info
    ints[0], ints[1], ints[2] = F.shape[0], B.shape[0], 0
    uplo = np.full(1, _LOWER, dtype=np.uint8)
    n_ptr = ints[0:1].ctypes
    _dpotrs(uplo.ctypes, n_ptr, ints[1:2].ctypes, F.ctypes, n_ptr, B.ctypes, n_ptr, ints[2:3].ctypes)
    return ints[2]


@njit(cache=True, nogil=True)
def cholesky_solve(M, B):
    """Solve M X' = B' in place for symmetric positive definite M; returns LAPACK's info.

    :func:`cholesky_factor` of M (M holds its factor afterwards), then :func:`factored_solve`.
    info > 0: M is not positive definite and B is unchanged.
    """
    info = cholesky_factor(M)
    if info != 0:
        return info
    return factored_solve(M, B)
