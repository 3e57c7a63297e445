"""scikit-learn's own SVM tests (``sklearn/svm/tests/test_svm.py`` and ``test_sparse.py`` of the
installed scikit-learn) run against leansvm's estimators: the names are rebound by
``leansvm.patch_sklearn`` in a child pytest (no copy of their code here).

Every test must pass except those listed in ``tests/sklearn_suite_exclusions.txt`` (tests of
scikit-learn's private internals, each with its reason) and in ``tests/sklearn_suite_failing.txt``
(public behaviour leansvm does not match yet: the work left, each line to be removed when it passes).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
LISTS = HERE.parent
FILES = ["sklearn.svm.tests.test_svm", "sklearn.svm.tests.test_sparse"]


def _listed(name):
    out = {}
    for line in (LISTS / name).read_text().splitlines():
        test_id, _, reason = line.partition("#")
        if test_id.strip():
            out[test_id.strip()] = reason.strip()
    return out


@pytest.fixture(scope="module")
def outcomes():
    pytest.importorskip("sklearn.svm.tests.test_svm")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "leansvm_patch_plugin",
                          "-p", "no:cacheprovider", "-W", "ignore", "--pyargs", *FILES],
                         capture_output=True, text=True, env=env, timeout=1200)
    found = {}
    for status, test_id in re.findall(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)\S* (\S+)", run.stdout, flags=re.M):
        found[re.sub(r"^.*?(sklearn/svm/tests/)", r"\1", test_id)] = status
    assert found, run.stdout[-3000:] + run.stderr[-3000:]
    return found


def test_every_exclusion_names_a_private_internal_and_a_reason():
    for test_id, reason in _listed("sklearn_suite_exclusions.txt").items():
        assert test_id.startswith("sklearn/svm/tests/") and reason, test_id


def test_scikit_learns_svm_tests_pass_on_leansvm_but_the_listed(outcomes):
    allowed = set(_listed("sklearn_suite_exclusions.txt")) | set(_listed("sklearn_suite_failing.txt"))
    unexpected = sorted(t for t, s in outcomes.items() if s in ("FAILED", "ERROR") and t not in allowed)
    assert not unexpected, f"{len(unexpected)} of scikit-learn's SVM tests fail on leansvm: {unexpected[:20]}"
    passed = sum(s == "PASSED" for s in outcomes.values())
    assert passed >= 265, f"only {passed} of scikit-learn's SVM tests passed"
