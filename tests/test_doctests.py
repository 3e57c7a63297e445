"""The Examples sections of the public API's numpydoc docstrings run and give what they show."""

import doctest
import importlib

import pytest

MODULES = ["leansvm.exact.svc", "leansvm.exact.nu_svc", "leansvm.exact.svr", "leansvm.exact.one_class",
           "leansvm.budget.bsgd_classifier", "leansvm.budget.bsgd_regressor", "leansvm.budget.bsgd_one_class",
           "leansvm.budget.budget_svc",
           "leansvm.paths.model_selection", "leansvm.paths.svr_path", "leansvm.paths.one_class_path",
           "leansvm.paths.linear_screening",
           "leansvm.compression.compressed_svc", "leansvm.reduced.reduced_svm", "leansvm.job.tasks",
           "leansvm.core.expansion", "leansvm.core.kernels", "leansvm.core.classifier", "leansvm.patch"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def _sections(obj) -> set:
    import inspect

    doc = inspect.getdoc(obj) or ""
    return {line.strip() for line, rule in zip(doc.splitlines(), doc.splitlines()[1:]) if set(rule.strip()) == {"-"}}


def test_every_public_name_has_numpydoc_sections():
    """Every class and function ``leansvm`` exports: Parameters (when it takes any), Attributes for
    classes, Returns for functions, and Examples."""
    import inspect

    import leansvm

    missing = {}
    for name in leansvm.__all__:
        obj = getattr(leansvm, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        takes = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj).parameters
        needed = {"Examples", "Attributes" if inspect.isclass(obj) else "Returns"}
        if any(p not in ("self", "args", "kwargs") for p in takes):
            needed.add("Parameters")
        if needed - _sections(obj):
            missing[name] = sorted(needed - _sections(obj))
    assert missing == {}
