"""Feature scaling that travels with the model, in LIBSVM ``svm-scale``'s terms.

LIBSVM's practical guide (and its ``easy.py``) scales every feature before training; a model
is only right on inputs scaled the same way. ``svm-scale`` maps feature i linearly from
[min_i, max_i] to [lower, upper]:

    x'_i = lower + (upper - lower) (x_i - min_i) / (max_i - min_i),

and drops features with min_i = max_i (x'_i = 0). Its range file (``svm-scale -s FILE``,
read back by ``-r FILE``) is::

    x
    lower upper
    i min_i max_i          (one line per feature with min_i != max_i, 1-based i)

:class:`FeatureScaler` keeps exactly (lower, upper, min, max), so any scaling it does can be
written as a range file that the real ``svm-scale -r`` applies. Its own fit, with
[lower, upper] = [-1, 1], by ``scaling``:

* ``"range"`` (the default): svm-scale's own map, ``svm-scale -l -1 -u 1``: feature i from
  [min_i, max_i] over the training rows to [-1, 1]. Sparse rows (a sparse row's absent entries
  count as 0, as svm-scale counts them) get the same map shifted so that 0 stays 0, written as
  min_i = -(max_i - min_i) / 2, max_i = (max_i - min_i) / 2: nothing is densified, and the
  shift changes no RBF kernel value (k(x, z) depends on x - z only). ``gamma='scale'`` does see
  a shift (1 / (d Var X) over every entry), so the main job decides between dense and sparse
  rows by their numbers before it scales them (:func:`leansvm.job.data.working_form`): the same
  numbers as an array, a LIBSVM file or a table are then scaled to the same numbers;
* ``"standard"``: z-scores, z_i = (x_i - mean_i) / std_i, written as min_i = mean_i - std_i,
  max_i = mean_i + std_i (sparse rows are densified);
* ``"max-abs"``: x_i / max|x_i|, written as min_i = -max|x_i|, max_i = max|x_i| (zeros kept).

Which is the job's default is measured, not assumed: ``benchmarks/main_job/bench_recipe.py``
(BENCHMARKS.md, "The main job against LIBSVM's recipe").

A range file written by ``svm-scale`` itself is read the same way; if it maps 0 to non-zero
values, sparse input is densified (as ``svm-scale`` writes every feature then). A ``y``
section (target scaling, for regression) is refused.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from leansvm.core.validation import widen

__all__ = ["FeatureScaler", "SCALINGS", "range_file_path"]

#: what :class:`FeatureScaler` fits (the first is its default)
SCALINGS = ("range", "standard", "max-abs")
#: the names the native files store (files written before "range" was a fit stored "range" for a
#: map read from svm-scale's range file, so the fit is stored as "widths")
_STORED_NAMES = {"range": "widths"}
_STORED_KINDS = {"widths": "range", "range": "svm-scale"}


def _column_extreme(X, which) -> np.ndarray:
    """Each column's min or max (a sparse column's absent entries count as 0)."""
    if sp.issparse(X):
        return np.asarray(getattr(X, which)(axis=0).todense(), dtype=float).ravel()
    return getattr(X, which)(axis=0).astype(float, copy=False)


def range_file_path(model_path) -> str:
    """Where the range file of a LIBSVM model file lives: ``MODEL.range`` beside it."""
    return os.fspath(model_path) + ".range"


class FeatureScaler(TransformerMixin, BaseEstimator):
    """Features scaled as svm-scale's (lower, upper, min, max); ``scaling``: "range" (svm-scale's
    map; sparse rows shifted so that zeros stay zeros), "standard" (z-scores) or "max-abs"
    (module docstring)."""

    def __init__(self, scaling="range"):
        self.scaling = scaling

    def fit(self, X, y=None):
        if self.scaling not in SCALINGS:
            raise ValueError(f"scaling must be one of {', '.join(map(repr, SCALINGS))}, got {self.scaling!r}")
        if sp.issparse(X):
            X = sp.csr_matrix(X).toarray() if self.scaling == "standard" else sp.csr_matrix(X)
        else:
            X = np.asarray(X, dtype=float)
        if self.scaling == "standard":
            center, half = X.mean(axis=0), X.std(axis=0)
            low, high = center - half, center + half
        else:
            low, high = _column_extreme(X, "min"), _column_extreme(X, "max")
            if self.scaling == "max-abs":
                high = np.maximum(high, -low)
                low = -high
            elif sp.issparse(X):                             # svm-scale's widths, zeros kept
                high = (high - low) / 2
                low = -high
        self.kind_, self.lower_, self.upper_ = self.scaling, -1.0, 1.0
        self.min_, self.max_ = low, high
        self.n_features_in_ = X.shape[1]
        return self

    @classmethod
    def to_range(cls, X, lower=-1.0, upper=1.0) -> "FeatureScaler":
        """svm-scale's own scaling: every feature mapped from [min, max] over the rows of X (a sparse
        row's absent entries count as 0, as svm-scale counts them) to [lower, upper]."""
        if not lower < upper:
            raise ValueError(f"the lower limit must be below the upper one, got {lower:g} and {upper:g}")
        scaler = cls()
        X = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X, dtype=float)
        scaler.min_, scaler.max_ = _column_extreme(X, "min"), _column_extreme(X, "max")
        scaler.kind_, scaler.lower_, scaler.upper_ = "svm-scale", float(lower), float(upper)
        scaler.n_features_in_ = X.shape[1]
        return scaler

    def affine(self):
        """(offset, factor) per feature: x' = offset + factor * x; (0, 0) for dropped features."""
        width = self.max_ - self.min_
        live = width > 0
        factor = np.where(live, (self.upper_ - self.lower_) / np.where(live, width, 1.0), 0.0)
        # about the middles, so that a symmetric range maps 0 to exactly 0 (sparse data stays sparse)
        offset = (self.lower_ + self.upper_) / 2 - factor * (self.min_ + self.max_) / 2
        return np.where(live, offset, 0.0), factor

    def transform(self, X):
        check_is_fitted(self, "min_")
        X = widen(X, self.n_features_in_)                    # LIBSVM data: trailing features absent
        if X.shape[1] > self.n_features_in_:                 # as svm-scale: unknown features are dropped
            X = X[:, :self.n_features_in_]
        offset, factor = self.affine()
        if sp.issparse(X):
            if not np.any(offset):                           # zeros stay zeros: scale the columns only
                return sp.csr_matrix(X) @ sp.diags(factor)
            X = X.toarray()
        return offset + np.asarray(X, dtype=float) * factor

    def what(self) -> str:
        """What the scaling does to each feature, in words."""
        check_is_fitted(self, "min_")
        zeros_kept = not np.any(self.affine()[0])
        return {"range": "mapped from its range over the training rows to [-1, 1] as svm-scale -l -1 -u 1 maps it"
                         + (" (shifted so that zeros stay zeros, which the RBF kernel does not see)" if zeros_kept
                            else ""),
                "standard": "standardised (z-scores)", "max-abs": "scaled by its largest absolute value (zeros kept)",
                "svm-scale": f"mapped to [{self.lower_:g}, {self.upper_:g}] by svm-scale's ranges"}[self.kind_]

    def describe(self) -> str:
        return f"{self.n_features_in_} feature(s), each {self.what()}; kept with the model"

    # -- storage ---------------------------------------------------------------------------------
    def to_json(self) -> dict:
        check_is_fitted(self, "min_")
        return {"kind": "scaler", "scaling": _STORED_NAMES.get(self.kind_, self.kind_), "lower": self.lower_,
                "upper": self.upper_, "min": self.min_.tolist(), "max": self.max_.tolist()}

    @classmethod
    def from_json(cls, state: dict) -> "FeatureScaler":
        scaler = cls()
        scaler.kind_ = _STORED_KINDS.get(state["scaling"], state["scaling"])
        scaler.lower_, scaler.upper_ = float(state["lower"]), float(state["upper"])
        scaler.min_, scaler.max_ = (np.asarray(state[k], dtype=float) for k in ("min", "max"))
        if scaler.min_.shape != scaler.max_.shape or scaler.min_.ndim != 1 or scaler.kind_ not in (
                SCALINGS + ("svm-scale",)):
            raise ValueError("inconsistent feature scaling")
        scaler.n_features_in_ = scaler.min_.size
        return scaler

    def range_file_text(self) -> str:
        """The svm-scale range file (``%.17g``, as svm-scale writes it)."""
        check_is_fitted(self, "min_")
        lines = ["x", f"{self.lower_:.17g} {self.upper_:.17g}"]
        lines += [f"{i + 1} {lo:.17g} {hi:.17g}" for i, (lo, hi) in enumerate(zip(self.min_, self.max_)) if hi != lo]
        return "\n".join(lines) + "\n"

    @classmethod
    def from_range_file(cls, path, n_features=None) -> "FeatureScaler":
        """Read an svm-scale range file; ``ValueError`` naming the file and line when it is not one."""
        name = os.fspath(path)
        with open(name, encoding="ascii", errors="replace") as f:
            lines = [line.split() for line in f if line.strip()]
        if not lines or lines[0] != ["x"]:
            raise ValueError(f"{name}: not an svm-scale range file (the first line must be 'x'"
                             + ("; a 'y' section scales targets, which classification does not use)"
                                if lines and lines[0] == ["y"] else ")"))
        try:
            lower, upper = (float(v) for v in lines[1])
            entries = [(int(i), float(lo), float(hi)) for i, lo, hi in lines[2:]]
        except (ValueError, IndexError):
            raise ValueError(f"{name}: not an svm-scale range file (expected 'lower upper', then "
                             "'index min max' lines)") from None
        if any(i < 1 for i, _, _ in entries) or not lower < upper:
            raise ValueError(f"{name}: feature indices start at 1 and lower < upper")
        d = max([n_features or 0] + [i for i, _, _ in entries])
        scaler = cls()
        scaler.kind_, scaler.lower_, scaler.upper_ = "svm-scale", lower, upper
        scaler.min_, scaler.max_ = np.zeros(d), np.zeros(d)
        for i, lo, hi in entries:
            scaler.min_[i - 1], scaler.max_[i - 1] = lo, hi
        scaler.n_features_in_ = d
        return scaler
