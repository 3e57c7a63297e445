"""svmlight / LIBSVM data files as users' tools write them: 0-based indices
(scikit-learn's ``dump_svmlight_file`` default), ``qid`` fields, comments and blank lines."""

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_classification

from leansvm import io
from leansvm.cli import main


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """The same data written 0-based (dump_svmlight_file's default) and 1-based (LIBSVM's)."""
    folder = tmp_path_factory.mktemp("twins")
    X, y = make_classification(300, n_features=6, n_informative=4, random_state=0)
    X[:, 2] = np.where(np.abs(X[:, 2]) < 0.5, 0.0, X[:, 2])          # some zeros: sparse rows
    zero, one = folder / "zero.svm", folder / "one.svm"
    dump_svmlight_file(X, y, str(zero))                                   # default: zero_based=True
    dump_svmlight_file(X, y, str(one), zero_based=False)
    assert " 0:" in zero.read_text() and " 0:" not in one.read_text()
    return X, y, zero, one


def test_auto_reads_a_zero_based_file_as_its_one_based_twin(twins):
    X, y, zero, one = twins
    notes = []
    X0, y0 = io.load_svmlight(zero, notes=notes)
    X1, y1 = io.load_svmlight(one)
    np.testing.assert_array_equal(X0.toarray(), X1.toarray())   # the same numbers, the same columns
    np.testing.assert_allclose(X1.toarray(), X, rtol=1e-15)     # (dump_svmlight_file writes %.16g)
    np.testing.assert_array_equal(y0, y1)
    assert any(io.svmlight.ZERO_BASED_NOTE in note for note in notes)


def test_explicit_base_overrides_the_detection(twins, tmp_path):
    X, _, zero, one = twins
    shifted, _ = io.load_svmlight(one, zero_based=True)       # 1-based read as 0-based: a leading empty column
    assert shifted.shape[1] == X.shape[1] + 1 and shifted[:, 0].nnz == 0
    np.testing.assert_allclose(shifted[:, 1:].toarray(), X, rtol=1e-15)
    with pytest.raises(ValueError, match="index 0 in a file read as 1-based"):
        io.load_svmlight(zero, zero_based=False)
    with pytest.raises(ValueError, match="zero_based must be"):
        io.load_svmlight(zero, zero_based="sometimes")


@pytest.mark.parametrize("command", ["train", "fit"])
def test_train_and_fit_give_the_same_model_on_a_zero_based_file_as_on_its_twin(command, twins, tmp_path, capsys):
    _, _, zero, one = twins
    models = []
    for name, data in (("zero", zero), ("one", one)):
        out = tmp_path / f"{name}.model"
        args = (["train", "-q", "-c", "10", "-g", "0.2", str(data), str(out)] if command == "train" else
                ["fit", str(data), "-o", str(out), "-q", "--C-grid", "1", "10", "--gamma-grid", "0.1", "0.3"])
        assert main(args) == 0
        models.append(out.read_text())
    err = capsys.readouterr().err
    assert "indices read as 0-based" in err                 # the reader says what it decided
    assert models[0] == models[1]                            # the same model file, byte for byte


def test_predict_reads_a_zero_based_test_file(twins, tmp_path, capsys):
    _, y, zero, one = twins
    model, out0, out1 = tmp_path / "m.model", tmp_path / "p0.txt", tmp_path / "p1.txt"
    assert main(["train", "-q", "-c", "10", "-g", "0.2", str(one), str(model)]) == 0
    assert main(["predict", "-q", str(zero), str(model), str(out0)]) == 0
    assert main(["predict", "-q", str(one), str(model), str(out1)]) == 0
    assert out0.read_text() == out1.read_text()


def test_a_test_file_is_read_with_the_base_of_its_training_file(tmp_path, capsys):
    """A 0-based test file whose first column has no entry would look 1-based on its own."""
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    train.write_text("1 0:1 1:0.5\n-1 0:-1 1:0.2\n1 0:0.8 1:0.1\n-1 0:-0.9 1:0.7\n")
    test.write_text("1 1:0.5\n-1 1:0.2\n")
    assert main(["path", str(train), "--test", str(test), "--n-c", "1", "--gamma", "1"]) == 0
    err = capsys.readouterr().err
    assert err.count("indices read as 0-based") == 1         # the training file; the test file follows it


def test_qid_comments_and_blank_lines_are_tolerated(tmp_path, capsys):
    data = tmp_path / "ranked.svm"
    data.write_text("# a header comment\n"
                    "1 qid:1 1:0.5 2:1.0 # a trailing comment\n"
                    "\n"
                    "-1 qid:1 1:-0.5 2:0.1\n"
                    "+1 qid:2 1:0.7 2:0.9\n"
                    "-1 qid:2 1:-0.4\n")
    notes = []
    X, y = io.load_svmlight(data, notes=notes)
    assert X.shape == (4, 2) and list(y) == [1, -1, 1, -1]
    assert notes == [f"{data}: qid (query id) fields ignored"]
    model = tmp_path / "ranked.model"
    assert main(["train", "-q", str(data), str(model)]) == 0
    assert "qid (query id) fields ignored" in capsys.readouterr().err


def test_a_corrupt_file_names_itself(tmp_path, capsys):
    data = tmp_path / "bad.svm"
    data.write_text("1 1:0.5 2:x\n")
    assert main(["train", "-q", str(data), str(tmp_path / "m.model")]) == 1
    err = capsys.readouterr().err
    assert f"{data}:1: not a valid svmlight/LIBSVM data file: the value in '2:x' is not a number" in err


@pytest.mark.parametrize("line, what", [
    ("hello", "the label 'hello' is not a number"),
    ("1 1:0.5 2", "'2' is not index:value"),
    ("1 a:0.5", "the index in 'a:0.5' is not an integer"),
    ("1 3:0.5 2:0.1", "the index in '2:0.1' is not above the one before it"),
    ("1 -2:0.5", "the index in '-2:0.5' is out of range"),
])
def test_a_garbage_line_is_named_by_file_and_line(tmp_path, capsys, line, what):
    data = tmp_path / "bad.svm"
    data.write_text("# a comment line\n1 1:0.5 2:0.25\n\n-1 1:0.1\n" + line + "\n1 1:0.3\n")
    assert main(["train", "-q", str(data), str(tmp_path / "m.model")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"leansvm: error: {data}:5: not a valid svmlight/LIBSVM data file: {what}"


@pytest.mark.parametrize("line, what", [("-1 1:0.1 2:nan", "the value of index 2 is nan"),
                                        ("-1 1:inf", "the value of index 1 is inf"),
                                        ("nan 1:0.1", "the label is nan")])
def test_a_nan_or_infinite_value_is_named_by_file_and_line(tmp_path, capsys, line, what):
    data = tmp_path / "nan.svm"
    data.write_text("1 1:0.5 2:0.25\n\n# comment\n-1 1:0.1\n" + line + "\n")
    assert main(["train", "-q", str(data), str(tmp_path / "m.model")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"leansvm: error: {data}:5: {what}; NaN and infinite values cannot be")
    assert "\n" not in err
    with pytest.raises(ValueError, match=f"{data.name}:5: {what}"):
        io.load_svmlight(data)
