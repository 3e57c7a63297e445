"""The Examples sections of the public API's numpydoc docstrings run and give what they show."""

import doctest
import importlib

import pytest

MODULES = ["leansvm.exact.svc", "leansvm.exact.nu_svc", "leansvm.exact.svr", "leansvm.exact.one_class",
           "leansvm.budget.bsgd_classifier", "leansvm.budget.bsgd_regressor", "leansvm.budget.bsgd_one_class",
           "leansvm.budget.budget_svc",
           "leansvm.paths.model_selection", "leansvm.paths.svr_path", "leansvm.paths.one_class_path",
           "leansvm.paths.linear_screening",
           "leansvm.compression.compressed_svc", "leansvm.job.tasks",
           "leansvm.core.expansion", "leansvm.core.kernels", "leansvm.core.classifier"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
