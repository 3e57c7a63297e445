"""The estimator classes that :func:`leansvm.io.load_model` can restore, by class name.

Each estimator module registers its classes when it is imported; ``import
leansvm`` imports nothing, so :func:`registered_estimators` imports the modules
that define them (by name: the registry sits below every estimator).
"""

from __future__ import annotations

import importlib

#: Estimator classes the native format can restore, by class name.
ESTIMATORS: dict[str, type] = {}

#: the modules whose estimators the native format restores
ESTIMATOR_MODULES = ("leansvm.exact.svc", "leansvm.exact.nu_svc", "leansvm.exact.svr", "leansvm.exact.one_class",
                     "leansvm.budget.budget_svc", "leansvm.compression.compressed_svc",
                     "leansvm.budget.bsgd_classifier", "leansvm.budget.bsgd_regressor",
                     "leansvm.budget.bsgd_one_class", "leansvm.budget.landmarks", "leansvm.reduced.reduced_svm")


def register_estimator(cls, name: str | None = None):
    """Let :func:`leansvm.io.load_model` restore ``cls`` (usable as a class decorator)."""
    ESTIMATORS[name or cls.__name__] = cls
    return cls


def registered_estimators() -> dict[str, type]:
    """Every registered class, after importing the modules of :data:`ESTIMATOR_MODULES` (each
    import is a lookup once done; one module already imported says nothing of the others)."""
    for module in ESTIMATOR_MODULES:
        importlib.import_module(module)
    return ESTIMATORS
