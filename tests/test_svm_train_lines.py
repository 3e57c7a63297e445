"""``leansvm train`` prints svm-train's summary lines with LIBSVM's names and meanings."""

import re

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_classification

from leansvm.cli import main

svmutil = pytest.importorskip("libsvm.svmutil")

#: one dual problem's lines, as svm-train prints them (the '*' and '.' progress marks aside)
BLOCK = re.compile(r"optimization finished, #iter = (\d+)\n(?:(nu|C|epsilon) = ([-\d.]+)\n)?"
                   r"obj = ([-\d.]+), rho = ([-\d.]+)\nnSV = (\d+), nBSV = (\d+)")
TOTAL = re.compile(r"Total nSV = (\d+)")


def _blocks(text):
    """[(middle name, middle value, obj, rho, nSV, nBSV)] and the Total nSV (or None) of the output."""
    blocks = [(m[2], float(m[3]) if m[3] else None, float(m[4]), float(m[5]), int(m[6]), int(m[7]))
              for m in BLOCK.finditer(text)]
    total = TOTAL.search(text)
    return blocks, (int(total[1]) if total else None)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    """300 rows of 3 classes, 6 features, the first rows of the classes in label order (LIBSVM orders
    the classes by first appearance, leansvm by value: so the two agree on the pairs and rho's sign)."""
    X, y = make_classification(n_samples=300, n_features=6, n_informative=4, n_classes=3, n_clusters_per_class=1,
                               flip_y=0.05, random_state=3)
    X = (X - X.min(0)) / (X.max(0) - X.min(0))
    order = np.r_[[np.flatnonzero(y == c)[0] for c in range(3)]]
    rest = np.setdiff1d(np.arange(300), order)
    idx = np.r_[order, rest]
    path = tmp_path_factory.mktemp("lines") / "three.svm"
    dump_svmlight_file(X[idx], y[idx], str(path), zero_based=False)
    binary = path.with_name("two.svm")
    keep = idx[y[idx] < 2]
    dump_svmlight_file(X[keep], y[keep], str(binary), zero_based=False)
    return path, binary


CLASSIFIERS = [["-s", "0", "-c", "4", "-g", "0.5"], ["-s", "1", "-n", "0.3", "-g", "0.5"]]
ONE_OUTPUT = [["-s", "2", "-n", "0.2", "-g", "0.5"], ["-s", "3", "-c", "2", "-g", "0.5"],
              ["-s", "4", "-n", "0.4", "-g", "0.5"]]
CASES = [(o, "binary") for o in CLASSIFIERS + ONE_OUTPUT] + [(o, "three classes") for o in CLASSIFIERS]


@pytest.mark.parametrize("options, which", CASES, ids=lambda c: " ".join(c) if isinstance(c, list) else c)
def test_the_summary_lines_are_libsvms(data_file, tmp_path, capfd, options, which):
    path = str(data_file[1] if which == "binary" else data_file[0])
    assert main(["train", *options, "-e", "1e-5", path, str(tmp_path / "ours.model")]) == 0
    ours, our_total = _blocks(capfd.readouterr().out)
    y, x = svmutil.svm_read_problem(path)
    svmutil.svm_train(y, x, " ".join(options + ["-e", "1e-5"]))
    theirs, their_total = _blocks(capfd.readouterr().out)
    classifier = options[1] in ("0", "1")
    assert len(ours) == len(theirs) == (3 if which == "three classes" else 1)
    assert our_total == their_total if classifier else our_total is None and their_total is None
    for a, b in zip(ours, theirs):
        assert a[0] == b[0]                                         # the same middle line (nu, C or epsilon)
        if a[1] is not None:
            assert a[1] == pytest.approx(b[1], rel=1e-3, abs=1e-5)
        assert a[2] == pytest.approx(b[2], rel=1e-4)                # obj: LIBSVM's dual objective
        assert a[3] == pytest.approx(b[3], abs=2e-3 * max(1.0, abs(b[3])))   # rho
        assert abs(a[4] - b[4]) <= 1 + 0.02 * b[4]                  # nSV, nBSV: a variable at 0 or C to tol
        assert abs(a[5] - b[5]) <= 1 + 0.02 * b[5]


def test_the_printed_rho_is_the_model_files(data_file, tmp_path, capsys):
    model = tmp_path / "three.model"
    assert main(["train", "-c", "4", "-g", "0.5", str(data_file[0]), str(model)]) == 0
    blocks, total = _blocks(capsys.readouterr().out)
    header = dict(line.split(" ", 1) for line in model.read_text().split("\nSV\n")[0].splitlines())
    np.testing.assert_allclose([b[3] for b in blocks], [float(v) for v in header["rho"].split()], atol=1e-6)
    assert total == int(header["total_sv"])


def test_quiet_prints_none_of_them(data_file, tmp_path, capsys):
    assert main(["train", "-q", str(data_file[1]), str(tmp_path / "m.model")]) == 0
    assert "optimization finished" not in capsys.readouterr().out
