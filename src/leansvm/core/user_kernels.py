"""Kernels the user gives instead of naming one: a precomputed kernel matrix (LIBSVM ``-t 4``,
scikit-learn ``kernel='precomputed'``) or a Python function (scikit-learn's callable kernel).

**Precomputed.** LIBSVM's own representation is kept, so that every solver, cache, multi-class
reduction and model file works on it unchanged: a sample is the row

    [serial, k(x, x_1), k(x, x_2), ..., k(x, x_n)]         (serial = 1-based training index)

and k(u, v) = u[serial(v)], the column of u named by v's serial (LIBSVM's
``x[(int)(y->value)].value``). Training rows carry their serial, so any subset of them (a
one-vs-one pair, a fold, a working set) still finds its columns; a test row's serial column
is unused (0); a support vector needs only its serial (one column). scikit-learn's API takes
the bare matrix (n_train x n_train at fit, n_test x n_train at predict);
:func:`with_serials` adds the column.

**Callable.** k(X, Y) returns the (len X) x (len Y) kernel block; it is called on blocks of
rows (a cache row, a prediction block), so it must accept any two sets of rows. The support
vectors are kept as rows of X (scikit-learn keeps the whole training set instead). On samples
that are not numeric rows (strings, graphs) the function is called on the samples themselves,
once for the training matrix, and the model is a precomputed-kernel one
(:func:`leansvm.core.validation.raw_samples_as_gram`), as scikit-learn does.

Both kinds are exact-solver kernels only (:class:`leansvm.SVC`, ``NuSVC``, ``SVR``,
``NuSVR``, ``OneClassSVM``); the budget, compression and path methods need a named kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from leansvm.core.kernels import Kernel

__all__ = ["PrecomputedKernel", "CallableKernel", "kernel_of", "with_serials", "is_precomputed", "named_kernel",
           "names_precomputed", "trains_on_gram", "check_storable"]


def _dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X)


@dataclass(frozen=True)
class _OwnBlocks(Kernel):
    """A kernel whose blocks come from its own :meth:`block`, not from inner products."""

    def block_into(self, out, X, Y, x_norms=None, y_norms=None, YT=None) -> np.ndarray:
        out[...] = self.block(X, Y, dtype=out.dtype)
        return out


@dataclass(frozen=True)
class PrecomputedKernel(_OwnBlocks):
    """k(u, v) = u[serial(v)]: the kernel value stored in u's row (see the module docstring)."""

    name: str = "precomputed"
    pairwise = True        # scikit-learn's word: X holds values over pairs of samples

    def __post_init__(self):
        pass

    @staticmethod
    def serials(Y) -> np.ndarray:
        """The 1-based training serials in column 0 of ``Y``, as integers; ValueError if not."""
        col = _dense(Y[:, :1]).ravel() if Y.shape[1] else np.zeros(0)
        serial = np.rint(col).astype(np.int64)
        if col.size != Y.shape[0] or not np.all(serial == col) or (serial.size and serial.min() < 1):
            raise ValueError("precomputed kernel: the support vectors must be training serials "
                             "1, 2, ... (LIBSVM's 0:serial)")
        return serial

    def block(self, X, Y, x_norms=None, y_norms=None, dtype=np.float64) -> np.ndarray:
        cols = self.serials(Y)
        if cols.size and cols.max() >= X.shape[1]:
            raise ValueError(f"precomputed kernel: a row holds kernel values against {X.shape[1] - 1} "
                             f"training samples, the model needs sample {cols.max()}")
        out = X[:, cols]
        return np.ascontiguousarray(_dense(out), dtype=dtype)

    def transform_inner(self, G, X=None, Y=None, x_norms=None, y_norms=None):
        raise TypeError("a precomputed kernel has no inner-product form")

    def diagonal(self, X) -> np.ndarray:
        return np.asarray(_dense(X[np.arange(X.shape[0]), self.serials(X)]), dtype=np.float64).ravel()

    def support_rows(self, support_vectors):
        """A support vector is its serial: column 0 only."""
        return support_vectors[:, :1]

    def params(self) -> dict:
        return {"kernel": "precomputed"}


@dataclass(frozen=True)
class CallableKernel(_OwnBlocks):
    """k(X, Y) = function(X, Y), checked for shape and finite values on every block."""

    name: str = "callable"
    function: object = None

    def __post_init__(self):
        if not callable(self.function):
            raise ValueError(f"kernel must be a name, 'precomputed' or a callable, got {self.function!r}")

    def block(self, X, Y, x_norms=None, y_norms=None, dtype=np.float64) -> np.ndarray:
        K = np.asarray(_dense(self.function(X, Y)), dtype=dtype)
        if K.shape != (X.shape[0], Y.shape[0]):
            raise ValueError(f"the kernel function returned shape {K.shape} for {X.shape[0]} and {Y.shape[0]} "
                             f"rows; it must return ({X.shape[0]}, {Y.shape[0]})")
        if not np.all(np.isfinite(K)):
            raise ValueError("the kernel function returned NaN or inf")
        return np.ascontiguousarray(K)

    def transform_inner(self, G, X=None, Y=None, x_norms=None, y_norms=None):
        raise TypeError("a kernel function has no inner-product form")

    def diagonal(self, X, step: int = 256) -> np.ndarray:
        return np.concatenate([np.diag(self.block(X[a:a + step], X[a:a + step]))
                               for a in range(0, X.shape[0], step)] or [np.zeros(0)])

    def params(self) -> dict:
        return {"kernel": self.function}


def is_precomputed(estimator) -> bool:
    """Whether a fitted estimator's kernel is precomputed (read from the model, not the parameter)."""
    expansion = getattr(estimator, "expansion_", None)
    return isinstance(getattr(expansion, "kernel", None), PrecomputedKernel)


def names_precomputed(kernel) -> bool:
    """Whether a ``kernel`` parameter says 'precomputed' (it may also be a name or a function)."""
    return isinstance(kernel, str) and kernel == "precomputed"


def trains_on_gram(estimator) -> bool:
    """Whether ``estimator``'s fit trains on a kernel matrix: ``kernel='precomputed'``, or a kernel
    function whose matrix on non-numeric samples was computed up front
    (:func:`leansvm.core.validation.raw_samples_as_gram`)."""
    return names_precomputed(getattr(estimator, "kernel", None)) or getattr(estimator, "_raw_fit_samples", None) is not None


def kernel_of(estimator, X) -> Kernel:
    """The kernel an exact estimator's parameters name: a user's function, a precomputed matrix
    or LIBSVM's four (gamma resolved against X)."""
    if trains_on_gram(estimator):
        return PrecomputedKernel()
    if callable(estimator.kernel):
        return CallableKernel(function=estimator.kernel)
    return Kernel.from_params(estimator.kernel, estimator.gamma, estimator.degree, estimator.coef0, X)


def with_serials(estimator, K, *, training: bool) -> np.ndarray:
    """scikit-learn's precomputed matrix as LIBSVM's rows [serial | K] (dense float64).

    Training: K must be square (n x n); serials 1..n. Prediction: n_test x n_train; serial 0.
    """
    if sp.issparse(K):
        raise TypeError(f"Sparse precomputed kernels are not supported by {type(estimator).__name__} (as by "
                        "scikit-learn's SVMs): a kernel matrix is dense; pass K.toarray()")
    K = np.asarray(K)
    n, m = K.shape
    if training and n != m:
        raise ValueError(f"{type(estimator).__name__}: a precomputed kernel must be a square matrix "
                         f"(n_samples x n_samples) at fit time; got {n}x{m}")
    first = np.arange(1, n + 1, dtype=np.float64) if training else np.zeros(n)
    return np.hstack([first[:, None], K])


def named_kernel(name: str, gamma: float = 1.0, degree: int = 3, coef0: float = 0.0) -> Kernel:
    """The kernel a model file names: LIBSVM's four or 'precomputed'."""
    if name == "precomputed":
        return PrecomputedKernel()
    return Kernel(name, float(gamma), int(degree), float(coef0))


def check_storable(kernel: Kernel, what: str) -> None:
    """ValueError for a kernel function: a file cannot hold Python code."""
    if isinstance(kernel, CallableKernel):
        raise ValueError(f"a model with a kernel function ({kernel.function!r}) cannot be written as {what}: "
                         "the function is Python code; save the estimator with joblib or pickle instead")
