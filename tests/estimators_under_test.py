"""Every leansvm estimator the hardening, conformance and property tests run over.

A new estimator joins every check by adding ONE line to ``CASES``::

    Case("leansvm.budget.bsgd_classifier:BSGDClassifier", dict(budget=20, max_iter=3, random_state=0)),

``params`` are the constructor arguments used by the tests: keep them small
(small budgets, few epochs) so that scikit-learn's ~60 checks stay fast.
``expected_failed_checks`` lists scikit-learn checks the estimator is known to
fail, each with the reason (scikit-learn >= 1.6's ``expected_failed_checks``
mechanism; they run as strict xfail, so a check that starts passing must be
removed from the list). Estimators with a ``random_state`` parameter are fitted
twice by the determinism tests.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from leansvm import SVC

#: scikit-learn's sample-weight equivalence checks compare decision values at
#: rtol=1e-7; a solver stopping at tol=1e-3 (LIBSVM's eps) matches a weighted
#: fit to the repeated-sample fit only to about tol. scikit-learn's own SVC lists
#: the same checks as expected failures for the same reason.
SOLVER_TOLERANCE = {
    "check_sample_weight_equivalence_on_dense_data":
        "decision values agree to the solver tolerance tol, not to rtol=1e-7 (as sklearn.svm.SVC)",
    "check_sample_weight_equivalence_on_sparse_data":
        "decision values agree to the solver tolerance tol, not to rtol=1e-7 (as sklearn.svm.SVC)",
}

#: The paper's pruning rule, not a bug (tests/test_budget_svc.py::
#: test_pruning_to_B_keeps_the_margin_errors): with the budget active,
#: budget-L1 is nu-SVC with nu = B/n; its alpha_i = C exactly on the margin
#: errors (y_i (f_i + b) <= 1 - rho, at most B of them) and it has >= B SVs,
#: so "keep the B largest alpha_i" keeps the margin errors (budget-L2: mu_i +
#: eta alpha_i = 1 - rho on the SVs, the largest alpha_i are the smallest
#: margins). Their expansion is
#: anti-correlated with y on these blobs (about 0.28 training accuracy on 3
#: classes; 0.95 with prune=False) and no bias does better than a constant.
_PRUNE_REASON = ("expected (method): prune=True keeps the B largest alpha_i, which at the optimum are the "
                 "smallest margins (L1: the margin errors, alpha_i = C); with budget=10 on 3 blobs that "
                 "expansion is below chance")
BUDGET_PRUNING = {name: _PRUNE_REASON for name in (
    "check_classifiers_train", "check_classifiers_train(readonly_memmap=True)",
    "check_classifiers_train(readonly_memmap=True,X_dtype=float32)")}

@dataclass(frozen=True)
class Case:
    """One estimator under test: "module:Class", small constructor arguments, known failures."""

    target: str
    params: dict = field(default_factory=dict)
    expected_failed_checks: dict = field(default_factory=dict)
    id: str = ""
    #: fewest samples per class the estimator can fit (cross-validation needs one per fold)
    min_class_size: int = 1

    @property
    def cls(self):
        module, name = self.target.split(":")
        return getattr(importlib.import_module(module), name)

    def make(self, **overrides):
        return self.cls(**{**self.params, **overrides})

    @property
    def name(self) -> str:
        return self.id or self.target.split(":")[1]


CASES = [
    Case("leansvm.exact.svc:SVC", dict(), dict(SOLVER_TOLERANCE)),
    Case("leansvm.exact.svc:SVC", dict(multiclass="ovr"), dict(SOLVER_TOLERANCE), id="SVC-ovr"),
    Case("leansvm.exact.nu_svc:NuSVC", dict(nu=0.3, random_state=0),
         {**SOLVER_TOLERANCE, "check_class_weight_classifiers":
          "class_weight has no effect on nu-SVC (LIBSVM's and scikit-learn's rule; a warning says so)"}),
    Case("leansvm.compression.compressed_svc:CompressedSVC",
         dict(estimator=SVC(random_state=0), ratio=0.5, max_iter=10, random_state=0)),
    Case("leansvm.budget.budget_svc:BudgetSVC", dict(budget=10), {**SOLVER_TOLERANCE, **BUDGET_PRUNING}),
    Case("leansvm.budget.budget_svc:BudgetSVC", dict(budget=10, norm="l2"), {**SOLVER_TOLERANCE, **BUDGET_PRUNING},
         id="BudgetSVC-l2"),
    Case("leansvm.budget.bsgd_classifier:BSGDClassifier", dict(budget=10, epochs=2, random_state=0)),
    Case("leansvm.budget.bsgd_classifier:BSGDClassifier",
         dict(budget=10, epochs=2, maintenance="removal", multiclass="ovo", random_state=0),
         id="BSGDClassifier-removal-ovo"),
    Case("leansvm.paths.model_selection:SVCCV", dict(Cs=(0.1, 1.0, 10.0), cv=2), dict(SOLVER_TOLERANCE),
         min_class_size=2),
    Case("leansvm.reduced.reduced_svm:ReducedSVC", dict(n_vectors=10, max_iter=30, random_state=0)),
]


def estimators():
    """Fresh instances of every case (for ``parametrize_with_checks``)."""
    return [case.make() for case in CASES]


def case_of(estimator) -> Case:
    """The case an instance came from (same class, same parameters)."""
    for case in CASES:
        if type(estimator) is case.cls and case.make().get_params(deep=False) == estimator.get_params(deep=False):
            return case
    raise LookupError(f"{estimator!r} is not in CASES")


#: Checks that call ``predict_proba`` whenever ``hasattr(estimator, "predict_proba")``.
_PROBA_CHECKS = (
    "check_n_features_in_after_fitting", "check_estimators_dtypes", "check_estimator_sparse_array",
    "check_estimator_sparse_matrix", "check_estimators_pickle", "check_classifiers_train",
    "check_decision_proba_consistency", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_dict_unchanged", "check_fit_idempotent",
    "check_fit2d_predict1d", "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
)


def expected_failed_checks(estimator) -> dict:
    """The case's known failures, plus a detected bug: ``predict_proba`` that exists but raises.

    scikit-learn hides probability methods with ``available_if`` when
    ``probability=False``; a plain method that raises ``AttributeError`` makes
    every check above fail. The entries disappear by themselves once the
    estimator is fixed, so the checks then run for real.
    """
    failures = dict(case_of(estimator).expected_failed_checks)
    if getattr(estimator, "probability", True) is False and hasattr(estimator, "predict_proba"):
        reason = (f"BUG in {type(estimator).__name__}: predict_proba exists with probability=False "
                  "and raises AttributeError (needs sklearn.utils.available_if)")
        failures.update({name: reason for name in _PROBA_CHECKS if name not in failures})
    return failures
