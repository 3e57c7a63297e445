"""leansvm: kernel SVMs that are cheap to train, cheap to keep and cheap to evaluate.

Every model is a :class:`~leansvm.expansion.KernelExpansion`; see ``DESIGN.md``.
"""

from .bsgd_classifier import BSGDClassifier
from .budget_svc import BudgetSVC
from .compression import CompressedSVC, compress
from .estimators import SVC, KernelClassifierMixin
from .expansion import KernelExpansion
from .kernels import Kernel
from .lean import fit_lean
from .model_selection import SVCCV, svm_path
from .solvers.linear_screening import linear_path

__all__ = ["BSGDClassifier", "BudgetSVC", "CompressedSVC", "compress", "SVC", "Kernel", "KernelExpansion", "KernelClassifierMixin", "fit_lean",
           "SVCCV", "svm_path", "linear_path"]
__version__ = "0.1.0"
