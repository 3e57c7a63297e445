"""leansvm.patch_sklearn / python -m leansvm.patch: scikit-learn code runs unchanged on leansvm."""

import pickle
import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

import leansvm

SCRIPT = """
import sys
import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC, SVR, OneClassSVM
X, y = make_classification(300, 5, random_state=0)
search = GridSearchCV(SVC(), {"C": [1, 10]}, cv=3).fit(X, y)
Xr, yr = make_regression(200, 4, noise=1.0, random_state=0)
svr = SVR(C=10).fit(Xr, yr / yr.std())
print(type(search.best_estimator_).__module__, type(svr).__module__, type(OneClassSVM()).__module__)
np.savez(sys.argv[1], labels=search.predict(X), values=svr.predict(Xr))
"""


def test_a_scikit_learn_script_runs_unchanged_on_leansvm(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    patched = subprocess.run([sys.executable, "-m", "leansvm.patch", str(script), str(tmp_path / "lean.npz")],
                             capture_output=True, text=True, timeout=300)
    assert patched.returncode == 0, patched.stderr[-2000:]
    assert patched.stdout.split() == ["leansvm.patch"] * 3
    plain = subprocess.run([sys.executable, str(script), str(tmp_path / "sk.npz")], capture_output=True, text=True,
                           timeout=300)
    assert plain.returncode == 0 and plain.stdout.split() == ["sklearn.svm._classes"] * 3
    lean, sk = np.load(tmp_path / "lean.npz"), np.load(tmp_path / "sk.npz")
    assert np.mean(lean["labels"] == sk["labels"]) >= 0.99               # LIBSVM's tolerance: a few boundary rows
    np.testing.assert_allclose(lean["values"], sk["values"], atol=0.05)


def test_patch_and_unpatch_in_process(capsys):
    import sklearn.svm

    original = sklearn.svm.SVC
    leansvm.patch_sklearn()
    try:
        from sklearn.svm import SVC
        assert SVC is not original and issubclass(SVC, leansvm.SVC)
        model = SVC(C=2.0, break_ties=False)
        assert model.get_params()["break_ties"] is False and model.get_params()["C"] == 2.0
        X, y = make_classification(120, 4, random_state=1)
        fitted = clone(model).fit(X, y)
        again = pickle.loads(pickle.dumps(fitted))
        np.testing.assert_array_equal(again.predict(X), fitted.predict(X))
        ties = SVC(break_ties=True, decision_function_shape="ovr")       # covered: leansvm's own
        assert isinstance(ties, leansvm.SVC) and capsys.readouterr().err == ""
    finally:
        leansvm.unpatch_sklearn()
    assert sklearn.svm.SVC is original


def test_a_parameter_leansvm_lacks_keeps_scikit_learns_estimator(monkeypatch, capsys):
    """A scikit-learn parameter leansvm does not have (here one a later scikit-learn might add): at its
    default the object is leansvm's; at another value scikit-learn's own, with a note."""
    import sklearn.svm

    from leansvm import patch

    class LaterSVC(sklearn.svm.SVC):
        def __init__(self, *, C=1.0, later_option=None):
            super().__init__(C=C)
            self.later_option = later_option

    monkeypatch.setitem(patch._ORIGINAL, "SVC", LaterSVC)
    replacement = patch._replacement("SVC")
    assert isinstance(replacement(C=2.0), leansvm.SVC) and replacement(C=2.0).get_params()["later_option"] is None
    fallback = replacement(later_option=3)
    assert type(fallback) is LaterSVC and fallback.later_option == 3
    assert "stays scikit-learn's: leansvm does not cover later_option=3" in capsys.readouterr().err
    with pytest.raises(ValueError, match="leansvm replaces"):
        leansvm.patch_sklearn(["LinearSVC"])
