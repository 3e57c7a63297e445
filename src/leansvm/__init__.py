"""leansvm: kernel SVMs that are cheap to train, cheap to keep and cheap to evaluate.

Every model is a :class:`~leansvm.core.expansion.KernelExpansion`; see README.md.

The names below are loaded on first use (PEP 562), so that ``import leansvm``
and the ``leansvm`` command start without NumPy, SciPy and numba: the command
installs its Ctrl-C handler before those imports (:mod:`leansvm.interrupts`).
Submodules (``leansvm.io``, ``leansvm.datasets``, ...) load the same way.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:     # for type checkers and the API documentation (griffe reads these statically)
    from .budget.bsgd_classifier import BSGDClassifier
    from .budget.bsgd_regressor import BSGDRegressor
    from .budget.bsgd_one_class import BSGDOneClassSVM
    from .budget.budget_svc import BudgetSVC
    from .compression.compressed_svc import CompressedSVC, compress
    from .reduced.reduced_svm import ReducedSVC, ReducedSVR
    from .core.classifier import KernelClassifierMixin
    from .exact.svc import SVC
    from .exact.nu_svc import NuSVC
    from .exact.svr import SVR, NuSVR
    from .exact.one_class import OneClassSVM
    from .core.expansion import KernelExpansion
    from .core.kernels import Kernel
    from .job.tasks import fit_lean
    from .paths.model_selection import SVCCV, svm_path
    from .paths.linear_screening import linear_path
    from .paths.svr_path import SVRCV, svr_path
    from .paths.one_class_path import one_class_path
    from .patch import patch_sklearn, unpatch_sklearn

#: public name -> the submodule that defines it
_EXPORTS = {
    "BSGDClassifier": "budget.bsgd_classifier",
    "BSGDRegressor": "budget.bsgd_regressor",
    "BSGDOneClassSVM": "budget.bsgd_one_class",
    "BudgetSVC": "budget.budget_svc",
    "CompressedSVC": "compression.compressed_svc",
    "compress": "compression.compressed_svc",
    "ReducedSVC": "reduced.reduced_svm",
    "ReducedSVR": "reduced.reduced_svm",
    "SVC": "exact.svc",
    "SVR": "exact.svr",
    "NuSVR": "exact.svr",
    "NuSVC": "exact.nu_svc",
    "OneClassSVM": "exact.one_class",
    "KernelClassifierMixin": "core.classifier",
    "KernelExpansion": "core.expansion",
    "Kernel": "core.kernels",
    "fit_lean": "job.tasks",
    "SVCCV": "paths.model_selection",
    "svm_path": "paths.model_selection",
    "linear_path": "paths.linear_screening",
    "svr_path": "paths.svr_path",
    "SVRCV": "paths.svr_path",
    "one_class_path": "paths.one_class_path",
    "patch_sklearn": "patch",
    "unpatch_sklearn": "patch",
}

__all__ = list(_EXPORTS)
__version__ = "0.1.0"


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    else:
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise                                  # the submodule exists; something it needs does not
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
