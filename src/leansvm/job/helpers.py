"""Small helpers the main job's stages share: timing, label comparison, stratified subsamples,
warnings collected instead of printed mid-progress."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split

from leansvm import interrupts
from leansvm.core.clock import work_time


def thread_limited(job):
    """``job`` with one more keyword, ``n_jobs`` (joblib's meaning, default -1: every core), the threads
    everything it runs may use (:func:`leansvm.core.threads.at_most`), as ``--n-jobs`` of ``leansvm fit``."""
    import functools
    import inspect

    from leansvm.core.threads import at_most

    @functools.wraps(job)
    def run(*args, n_jobs=-1, **kwargs):
        with at_most(n_jobs):
            return job(*args, **kwargs)

    signature = inspect.signature(job)
    run.__signature__ = signature.replace(parameters=[*signature.parameters.values(), inspect.Parameter(
        "n_jobs", inspect.Parameter.KEYWORD_ONLY, default=-1)])
    return run


def keep_on_failure(stage: str, held, log, run):
    """``run()``, or ``held`` when it raises: once the validation part has accepted a model, a later stage
    that fails (the confirming folds, the refit: out of memory, a solver's error) leaves the job with
    what it holds, and the log says which stage failed and why. Ctrl-C is no failure: it stops the job."""
    try:
        return run()
    except Exception as exc:
        kept = f"the job keeps {held.name}" if hasattr(held, "name") else "the chosen model is returned as validated"
        log.step(stage, f"failed ({type(exc).__name__})", f"{exc}; {kept}")
        return held


def hold_on_interrupt(exc, started, log, held):
    """A Ctrl-C during the job (``started``: its start on the log's clock): says where it
    stopped (on the command's one line where the command runs, else on stderr) and, where ``held`` (the
    cheapest model accepted so far) is not None, logs that it is returned as validated; the caller
    raises ``exc`` where ``held`` is None."""
    last = log.steps[-1].stage if log.steps else "none"
    seconds = log.clock() - started
    if interrupts.active():                # the command prints it on its one line
        interrupts.add_context(exc, f"leansvm fit after {seconds:.0f} s, last finished step: {last}")
    else:
        print(f"leansvm fit: interrupted (Ctrl-C) after {seconds:.0f} s; last finished step: {last}"
              + (f"; returning {held.name}, the cheapest model accepted so far" if held is not None else ""),
              file=sys.stderr, flush=True)
    if held is not None:
        log.step("interrupted", f"{held.name} returned as validated",
                 "Ctrl-C after a cheaper model than the exact one was accepted: the job returns the cheapest model "
                 "accepted so far; the stages after it did not run")


def majority_share(y) -> float:
    """The share of the most frequent label in ``y``: the accuracy of predicting it everywhere."""
    return float(np.max(np.unique(np.asarray(y), return_counts=True)[1]) / max(len(y), 1))


def _optional(name):
    """``leansvm.<name>`` when that part of the library has landed, else None."""
    import leansvm
    return getattr(leansvm, name, None)


def _accuracy(model, X, y) -> float:
    return float(np.mean(_same_labels(model.predict(X), y)))


def _validate(candidate, X_val, y_val):
    """Set the candidate's validation predictions and accuracy."""
    candidate.validation_predictions = np.asarray(candidate.model.predict(X_val))
    candidate.validation_accuracy = float(np.mean(_same_labels(candidate.validation_predictions, y_val)))
    return candidate


def _same_labels(pred, y):
    pred, y = np.asarray(pred), np.asarray(y)
    if (pred.dtype.kind in "US") != (y.dtype.kind in "US"):
        return pred.astype(str) == y.astype(str)
    return pred == y


def _subsample(X, y, size, random_state):
    """A stratified subsample of at most ``size`` rows (all rows when there are fewer; ``y`` may
    be None: rows without targets)."""
    n = X.shape[0]
    if n <= size:
        return X, y
    if y is None:
        return train_test_split(X, train_size=size, random_state=random_state)[0], None
    try:
        Xs, _, ys, _ = train_test_split(X, y, train_size=size, stratify=y, random_state=random_state)
    except ValueError:  # a class too small to stratify
        Xs, _, ys, _ = train_test_split(X, y, train_size=size, random_state=random_state)
    return Xs, ys


def _int32_indices(X):
    """CSR with int32 indices (scikit-learn's SVC rejects int64 ones); dense X unchanged."""
    if not sp.issparse(X):
        return X
    X = sp.csr_matrix(X, copy=True)
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    return X


class _QuietConvergence:
    """Collect ConvergenceWarnings (counted in the log line) instead of printing them mid-progress."""

    def __enter__(self):
        self._catch = warnings.catch_warnings(record=True)
        self.caught = self._catch.__enter__()
        warnings.simplefilter("always", ConvergenceWarning)
        return self

    def __exit__(self, *exc):
        caught = list(self.caught)
        result = self._catch.__exit__(*exc)
        self.count = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
        for w in caught:  # anything else is shown as usual, after the filter is restored
            if not issubclass(w.category, ConvergenceWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return result

    def note(self) -> str:
        return f"; {self.count} solve(s) stopped at their iteration bound" if self.count else ""


def _timed(fn, *args, **kwargs):
    """(fn(*args, **kwargs), its seconds of work): numba's one-time compilation left out
    (:mod:`leansvm.core.clock`), since the stages scale these seconds into estimates."""
    start = work_time()
    out = fn(*args, **kwargs)
    return out, work_time() - start
