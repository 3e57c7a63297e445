"""The lines svm-train prints after each dual problem, from a fitted exact model.

svm-train (LIBSVM's ``Solver::Solve`` and ``svm_train_one``) prints, per binary problem (one per
class pair, LIBSVM's pair order) or once for the one-output types::

    optimization finished, #iter = 257
    nu = 0.351161                 C-SVC, epsilon-SVR: sum_i |alpha_i| / (C l)
    C = 0.465959                  nu-SVC instead: 1 / r, the bound of the rescaled dual
    epsilon = 0.225870            nu-SVR instead: the tube's half-width found
    obj = -225.628984, rho = 0.636110
    nSV = 91, nBSV = 49           alpha_i > 0, and alpha_i at its bound
    Total nSV = 91                classifiers, once: the support vectors of the pooled model

Scripts around LIBSVM parse these lines, so ``leansvm train`` prints them with the same names and
meanings: ``obj`` is the dual objective LIBSVM minimises (``dual_objective_``), ``rho`` the model
file's rho of that pair, the counts over the pair's rows. One difference: ``#iter`` counts the
exact solver's iterations (IRWLS working-set steps: a few to a few hundred), not SMO's pair steps.
The pairs follow leansvm's class order (sorted labels), the model file's.
"""

from __future__ import annotations

import numpy as np

from leansvm.core.multiclass import ovo_pairs

#: |alpha| within this relative distance of its bound counts as at the bound (nBSV)
AT_BOUND = 1e-9


def _counts(alpha, bound) -> tuple[int, int]:
    """(nSV, nBSV) of the dual variables ``alpha`` (absolute values) and their bounds."""
    alpha = np.abs(np.asarray(alpha, dtype=np.float64))
    return int(np.count_nonzero(alpha > 0)), int(np.count_nonzero(alpha >= bound * (1.0 - AT_BOUND)))


def _problem_lines(n_iter, middle, obj, rho, n_sv, n_bsv) -> list[str]:
    return [f"optimization finished, #iter = {int(n_iter)}"] + ([middle] if middle else []) + \
           [f"obj = {obj:f}, rho = {rho:f}", f"nSV = {n_sv}, nBSV = {n_bsv}"]


def _classifier_lines(model, y, svm_type: str) -> list[str]:
    """One block per class pair, then ``Total nSV``."""
    from sklearn.utils.class_weight import compute_class_weight

    classes = model.classes_
    k = len(classes)
    intercept = np.asarray(model.expansion_.intercept, dtype=np.float64)
    rho = intercept if k == 2 else -intercept          # the model file's (leansvm.io.libsvm's layout)
    coef = model.expansion_.coef
    starts = np.concatenate(([0], np.cumsum(model.n_support_)))
    rows = np.array([np.count_nonzero(np.asarray(y) == c) for c in classes])
    C = float(model.get_params().get("C", 1.0))
    weights = np.ones(k) if svm_type == "nu-SVC" or model.class_weight is None else \
        compute_class_weight(model.class_weight, classes=classes, y=np.asarray(y))
    lines = []
    for p, (i, j) in enumerate(ovo_pairs(k)):
        members = np.r_[starts[i]:starts[i + 1], starts[j]:starts[j + 1]]
        alpha = np.abs(coef[members, p])
        if svm_type == "nu-SVC":
            bound = 1.0 / float(model.solver_stats_[p]["margin_level"])
            middle = f"C = {bound:f}"
        else:
            bound = C * np.repeat(weights[[i, j]], model.n_support_[[i, j]])
            middle = f"nu = {alpha.sum() / (C * weights[i] * (rows[i] + rows[j])):f}"
        lines += _problem_lines(model.n_iter_[p], middle, model.dual_objective_[p], rho[p], *_counts(alpha, bound))
    return lines + [f"Total nSV = {model.expansion_.n_support}"]


def _one_output_lines(model, n_rows: int, svm_type: str) -> list[str]:
    """The one block of an epsilon-SVR, nu-SVR or one-class model trained on ``n_rows`` rows."""
    coef = model.expansion_.coef[:, 0]
    rho = -float(model.expansion_.intercept[0])
    if svm_type == "one-class SVM":
        bound, middle = 1.0, None
    else:
        bound = float(model.get_params()["C"])
        if svm_type == "nu-SVR":
            middle = f"epsilon = {float(model.epsilon_):f}"
        else:
            middle = f"nu = {np.abs(coef).sum() / (bound * n_rows):f}"
    n_sv, n_bsv = _counts(coef, bound)
    return _problem_lines(model.n_iter_[0], middle, model.dual_objective_[0], rho, n_sv, n_bsv)


def svm_train_lines(model, y, svm_type: str) -> list[str]:
    """svm-train's summary lines (module docstring) of an exact ``model`` fitted on labels ``y``;
    ``svm_type`` is LIBSVM's name ('C-SVC', 'nu-SVC', 'one-class SVM', 'epsilon-SVR', 'nu-SVR')."""
    if svm_type in ("C-SVC", "nu-SVC"):
        return _classifier_lines(model, y, svm_type)
    return _one_output_lines(model, len(y), svm_type)
