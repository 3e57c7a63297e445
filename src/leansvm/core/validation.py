"""The one validation path of every leansvm estimator (scikit-learn's ``validate_data``).

Training input goes through :func:`validate_training_data`, prediction input
through :func:`validate_predict_data`, hyper-parameters through the
``check_*`` helpers, and ``fit`` itself through :func:`fit_transaction`.
Every problem is a ``ValueError`` that names it:

* X: NaN or inf, empty (no samples or no features), not 2-D, complex, strings,
  values so large that squared norms (hence every kernel) overflow float64;
  float32, integer, non-contiguous arrays and CSR/CSC/COO input with int32 or
  int64 indices are legal (converted to float64 C-order or canonical CSR);
* y: NaN, continuous or multi-output targets, labels that cannot be ordered
  (mixed types such as ``["a", 1]``), a single class; labels of any orderable
  type are legal (str, bool, int including negative ints, integral floats);
* sample_weight: wrong length or shape, NaN/inf, all zero or negative (a zero or negative weight
  leaves its sample out, as scikit-learn's LIBSVM);
* prediction: unfitted estimator (``NotFittedError``), wrong number of
  features, the same X checks as in training.

:func:`fit_transaction` makes ``fit`` all-or-nothing: when it raises anything
(including ``KeyboardInterrupt`` from inside a solver) every fitted attribute
is removed, so the estimator is unfitted, never half-fitted.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from leansvm.core.row_norms import canonical_sparse, squared_row_norms
from leansvm.core.user_kernels import is_precomputed, trains_on_gram, with_serials

__all__ = [
    "validate_training_data", "validate_regression_data", "validate_predict_data", "per_sample_C", "fit_transaction",
    "check_C", "check_positive_number", "check_int", "is_fitted_attribute",
]


# -- X ----------------------------------------------------------------------------------
def _check_magnitude(X, estimator, training: bool):
    """Squared row norms must be finite: every kernel uses x'x (or u'v) of these rows."""
    with np.errstate(over="ignore", invalid="ignore"):
        norms = squared_row_norms(X)
    if not np.all(np.isfinite(norms)):
        row = int(np.flatnonzero(~np.isfinite(norms))[0])
        # at fit, scikit-learn's words for the same input (which it detects after its solver)
        start = "The dual coefficients or intercepts are not finite: " if training else ""
        raise ValueError(f"{start}{type(estimator).__name__}'s X row {row} has values so large that its "
                         "squared norm overflows float64; rescale the data (e.g. StandardScaler)")


def _not_numeric(X) -> bool:
    """Whether X cannot be numeric rows (strings, objects, ragged lists)."""
    if sp.issparse(X):
        return False
    try:
        return np.asarray(X).dtype.kind not in "biufc"
    except (ValueError, TypeError):
        return True


def raw_samples_as_gram(estimator, X, training: bool):
    """scikit-learn's kernel function on samples that are not numeric rows (strings, graphs): the
    function is called on the samples themselves and the model trains on the kernel matrix it
    returns, as on a precomputed one (scikit-learn does the same). The training samples are kept
    (``_raw_fit_samples``) for the matrix k(X, training samples) at prediction. Numeric X, or a
    named kernel, passes through unchanged."""
    if training:
        estimator._raw_fit_samples = None
        if not (callable(getattr(estimator, "kernel", None)) and _not_numeric(X)):
            return X
        estimator._raw_fit_samples = X
        return np.asarray(estimator.kernel(X, X), dtype=np.float64)
    samples = getattr(estimator, "_raw_fit_samples", None)
    return X if samples is None else np.asarray(estimator.kernel(X, samples), dtype=np.float64)


def _checked_rows(estimator, X, training: bool, norms_checked=False):
    """Canonical CSR, finite squared norms (unless ``norms_checked``: the caller found them finite),
    and a precomputed kernel matrix as LIBSVM's rows [serial | K] (:mod:`leansvm.core.user_kernels`):
    at fit when the ``kernel`` parameter says 'precomputed' (or a kernel function took non-numeric
    samples: :func:`raw_samples_as_gram`), at prediction when the fitted model's kernel is precomputed."""
    X = canonical_sparse(X)
    if not norms_checked:
        _check_magnitude(X, estimator, training)
    if training and getattr(estimator, "sparse_input_needs_sparse_fit", False):
        estimator._fitted_on_sparse = sp.issparse(X)      # scikit-learn's rule at prediction
    if trains_on_gram(estimator) if training else is_precomputed(estimator):
        X = with_serials(estimator, X, training=training)
    return X


def _encode_labels(y, estimator):
    """(sorted classes, encoded y); ValueError for labels that cannot be ordered or one class."""
    try:
        check_classification_targets(y)
        classes, y_enc = np.unique(y, return_inverse=True)
    except TypeError as exc:   # object labels of mixed types, e.g. ["a", 1]
        kinds = sorted({type(v).__name__ for v in np.asarray(y, dtype=object).ravel().tolist()})
        raise ValueError(f"{type(estimator).__name__}: class labels must be of one orderable type; "
                         f"got a mix of {', '.join(kinds)} ({exc})") from None
    if classes.size < 2:
        raise ValueError(
            f"{type(estimator).__name__} needs samples of at least two classes; the training "
            f"labels hold only one class: {classes[0]!r} ({y_enc.size} sample(s))"
        )
    return classes, y_enc.ravel()


def check_sample_weight(sample_weight, X):
    """Float64 weights of the rows of X, as LIBSVM (scikit-learn's fork) takes them: a zero or
    negative weight leaves its sample out (its bound C_i becomes 0); all of them left out is a
    ValueError with scikit-learn's message."""
    try:
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64, allow_all_zero_weights=True)
    except TypeError:          # scikit-learn before allow_all_zero_weights: its own message for all zeros
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
    sample_weight = np.where(sample_weight > 0, sample_weight, 0.0)
    if sample_weight.size and not np.any(sample_weight > 0):
        raise ValueError("Invalid input - all samples have zero or negative weights.")
    return sample_weight


def validate_training_data(estimator, X, y, sample_weight=None):
    """Checked float64 X (dense C-order or canonical CSR), classes, encoded labels, weights.

    Sets ``n_features_in_`` (and ``feature_names_in_``) as scikit-learn's
    ``validate_data`` does; :func:`fit_transaction` removes them again if the
    fit fails. Raises ``ValueError`` naming the problem (see module docstring).
    """
    X = raw_samples_as_gram(estimator, X, training=True)
    ready = _ready_training_rows(estimator, X, y)
    if ready:
        classes, y_enc = np.unique(y, return_inverse=True)
        if classes.size < 2:
            _encode_labels(y, estimator)                 # its error names the one class
    else:
        X, y = validate_data(estimator, X, y, accept_sparse="csr", dtype=np.float64, order="C",
                             accept_large_sparse=True)
        classes, y_enc = _encode_labels(y, estimator)
    X = _checked_rows(estimator, X, training=True, norms_checked=ready)
    return X, classes, y_enc.ravel(), check_sample_weight(sample_weight, X)


def _ready_training_rows(estimator, X, y) -> bool:
    """Whether (X, y) need nothing of ``validate_data`` but its bookkeeping, which is then done here
    (``n_features_in_`` set, an earlier fit's ``feature_names_in_`` removed): X a non-empty 2-D
    float64 C-order ndarray with finite squared norms (so every entry is finite, as at prediction:
    :func:`_ready_rows`), y a 1-D ndarray of as many integer, boolean or finite integral float
    labels (scikit-learn's 'binary' or 'multiclass' targets). On iris, scikit-learn's checks took
    0.8 of a 1.8-ms fit. Anything else goes through ``validate_data`` and its messages."""
    if not (type(X) is np.ndarray and X.ndim == 2 and X.dtype == np.float64 and X.flags.c_contiguous
            and X.shape[0] >= 1 and X.shape[1] >= 1 and type(y) is np.ndarray and y.shape == (X.shape[0],)):
        return False
    if y.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            if not np.all(np.isfinite(y)) or np.any(y != np.floor(y)):
                return False
    elif y.dtype.kind not in "iub":
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        if not np.isfinite(squared_row_norms(X)).all():
            return False
    estimator.n_features_in_ = X.shape[1]
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    return True


def validate_regression_data(estimator, X, y, reset=True):
    """Checked float64 X (as :func:`validate_training_data`) and float64 targets: ValueError for
    non-numeric, NaN/inf or multi-output y. ``reset=False`` (a later ``partial_fit`` chunk): X
    must have the fitted number of features."""
    if reset:
        X = raw_samples_as_gram(estimator, X, training=True)
    X, y = validate_data(estimator, X, y, accept_sparse="csr", dtype=np.float64, order="C",
                         accept_large_sparse=True, y_numeric=True, reset=reset)
    y = np.asarray(y, dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{type(estimator).__name__}: the targets y hold NaN or inf")
    return _checked_rows(estimator, X, training=True), y


def validate_unlabelled_data(estimator, X):
    """Checked float64 X for a fit without targets (novelty detection), as :func:`validate_training_data`."""
    X = raw_samples_as_gram(estimator, X, training=True)
    X = validate_data(estimator, X, accept_sparse="csr", dtype=np.float64, order="C", accept_large_sparse=True)
    return _checked_rows(estimator, X, training=True)


def _ready_rows(estimator, X) -> bool:
    """Whether X needs no conversion and no check beyond finite squared norms: a 2-D float64 C-order
    ndarray of the fitted width, for a model fitted on numeric rows without feature names. A NaN or
    inf entry makes its row's norm non-finite, so the norms alone tell that every entry is finite;
    where they do not, the full path runs and names the problem. This is the one-row prediction of a
    served model, where scikit-learn's ``validate_data`` took 80 of 180 us (iris, one row)."""
    if not (type(X) is np.ndarray and X.ndim == 2 and X.dtype == np.float64 and X.flags.c_contiguous
            and X.shape[0] >= 1 and X.shape[1] == getattr(estimator, "n_features_in_", -1)):
        return False
    if hasattr(estimator, "feature_names_in_") or getattr(estimator, "_raw_fit_samples", None) is not None \
            or is_precomputed(estimator):
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(squared_row_norms(X)).all())


def validate_predict_data(estimator, X):
    """Checked float64 X for a fitted estimator: ``NotFittedError`` first, then shape and values."""
    check_is_fitted(estimator, "expansion_")
    if _ready_rows(estimator, X):
        return X
    X = raw_samples_as_gram(estimator, X, training=False)
    X = validate_data(estimator, X, accept_sparse="csr", dtype=np.float64, order="C", reset=False,
                      accept_large_sparse=True)
    if sp.issparse(X) and getattr(estimator, "_fitted_on_sparse", None) is False and not is_precomputed(estimator):
        raise ValueError(f"cannot use sparse input in {type(estimator).__name__!r} trained on dense data "
                         "(as scikit-learn's SVMs); pass X.toarray(), or fit on sparse data")
    return _checked_rows(estimator, X, training=False)


# -- hyper-parameters -------------------------------------------------------------------------
def widen(X, n_features: int):
    """X with zero columns appended up to ``n_features`` (as LIBSVM's sparse vectors read a feature
    they do not mention); CSR stays CSR without copying its entries."""
    if X.shape[1] >= n_features:
        return X
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    return np.hstack([X, np.zeros((X.shape[0], n_features - X.shape[1]))])


def generator(random_state) -> np.random.Generator:
    """A NumPy Generator for ``random_state`` with scikit-learn's meaning of None: the seed is drawn
    from NumPy's global RandomState, so ``np.random.seed`` makes unseeded fits repeatable (as it
    does for scikit-learn's estimators). An int, a SeedSequence or a Generator: as
    ``np.random.default_rng``; a RandomState: one draw from it."""
    if random_state is None:
        random_state = np.random.randint(2**32, dtype=np.uint64)
    elif isinstance(random_state, np.random.RandomState):
        random_state = random_state.randint(2**32, dtype=np.uint64)
    return np.random.default_rng(random_state)


def check_positive_number(name: str, value, *, allow_zero: bool = False) -> float:
    """``value`` as a float; ValueError unless it is a finite real number > 0 (>= 0 if allowed)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if ok:
        value = float(value)
        ok = np.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        what = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be a {what} finite number, got {value!r}")
    return value


#: the C that stands for C=inf (scikit-learn's hard margin): every multiplier of a hard-margin
#: solution below it stays free, so the model is the hard-margin one; above it IRWLS's weights
#: C_i / u_i lose float64 precision (make_classification's SVC stops converging at C=1e12)
HARD_MARGIN_C = 1e10


#: the largest allowed drop, increase or disagreement a bare number may give (10 points, 10 %): a larger one
#: reads as points or percent written without '%' (``--max-accuracy-drop 0.5`` meant half a point on the
#: command line and ``max_accuracy_drop=0.5`` 50 points in Python), so it is refused with the spellings
BARE_SHARE_MOST = 0.1


def allowed_share(name: str, value) -> float:
    """An allowed accuracy drop, RMSE increase or disagreement as a fraction, from a number (0.005) or
    a string in percent ('0.5%'), one unit for Python and the command line alike.

    A bare number above :data:`BARE_SHARE_MOST` is refused, naming both spellings; a percentage may be
    anything in [0, 100)."""
    text = str(value).strip()
    percent = text.endswith("%")
    try:
        number = float(text[:-1] if percent else text)
    except ValueError:
        raise ValueError(f"{name} is a fraction (0.005) or a percentage ('0.5%'), got {value!r}") from None
    share = number / 100 if percent else number
    if not percent and np.isfinite(share) and BARE_SHARE_MOST < share < 100:
        raise ValueError(f"{name}={text} would be {100 * share:g} %: give a fraction (0.005 is half a point, "
                         f"half a percent) or a percentage ('{text}%'); a bare number above "
                         f"{BARE_SHARE_MOST:g} is refused as a likely percentage")
    if not (np.isfinite(share) and 0 <= share < 1):
        raise ValueError(f"{name} is a fraction in [0, 1) or a percentage below 100 %, got {value!r}")
    return share


def check_C(C) -> float:
    """C as a float: a positive finite number, or inf (a hard margin, solved as ``HARD_MARGIN_C``)."""
    if isinstance(C, numbers.Real) and not isinstance(C, (bool, np.bool_)) and C == np.inf:
        return HARD_MARGIN_C
    return check_positive_number("C", C)


def check_nu(nu, what) -> float:
    """nu as a float in (0, 1]; ValueError naming it otherwise."""
    try:
        value = float(nu)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: nu must be a number in (0, 1], got {nu!r}") from None
    if not 0.0 < value <= 1.0:
        raise ValueError(f"{what}: nu must be in (0, 1], got {nu!r}")
    return value


def check_int(name: str, value, low: int) -> int:
    """``value`` as an int; ValueError unless it is an integer >= ``low``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def per_sample_C(C, class_weight, classes, y_enc, sample_weight):
    """C_i = C * class_weight[y_i] * sample_weight_i, as LIBSVM / scikit-learn."""
    C = check_positive_number("C", C)
    if class_weight is None:             # scikit-learn's weights are ones then; its check costs 0.5 ms
        return C * np.asarray(sample_weight, dtype=np.float64)
    cw = compute_class_weight(class_weight, classes=classes, y=classes[y_enc])
    return C * cw[y_enc] * sample_weight


# -- all-or-nothing fit -----------------------------------------------------------------------
def is_fitted_attribute(name: str) -> bool:
    """scikit-learn's convention: fitted attributes end with '_' (dunder names excluded)."""
    return name.endswith("_") and not name.startswith("__")


def fit_transaction(fit):
    """Decorate ``fit`` so that any exception leaves the estimator unfitted.

    On ``BaseException`` (``KeyboardInterrupt`` included) every fitted attribute
    (name ending in ``_``) set so far, or left from an earlier fit, is deleted
    and the exception re-raised; constructor parameters (even one named like
    ``lambda_``) are untouched. Nested
    calls (a fit calling ``super().fit``) roll back once, at the outermost level.
    """

    @functools.wraps(fit)
    def transactional_fit(self, *args, **kwargs):
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            params = self.get_params(deep=False) if hasattr(self, "get_params") else {}
            for name in [n for n in vars(self) if is_fitted_attribute(n) and n not in params]:
                delattr(self, name)
            raise

    transactional_fit.__leansvm_transaction__ = True
    return transactional_fit
