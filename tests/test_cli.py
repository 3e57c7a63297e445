"""The ``leansvm`` command, run in-process through ``main`` (and once as ``python -m leansvm``)."""

import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import leansvm
from leansvm.cli import _expand_weight_options, build_parser, main
from leansvm.io import load_libsvm_model, load_model

svmutil = pytest.importorskip("libsvm.svmutil")

HEART = Path(__file__).resolve().parents[2] / "shared" / "data" / "heart_scale"


@pytest.fixture(scope="module")
def heart():
    if not HEART.exists():
        pytest.skip(f"{HEART} not found")
    return str(HEART)


@pytest.fixture(scope="module")
def trained(heart, tmp_path_factory):
    """A model trained by ``leansvm train -c 1 -g 0.1`` on heart_scale."""
    path = tmp_path_factory.mktemp("cli") / "heart.model"
    assert main(["train", "-q", "-c", "1", "-g", "0.1", heart, str(path)]) == 0
    return path


def _run(capsys, argv):
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def _libsvm_accuracy_line(capsys, model_path, data_path):
    """What LIBSVM's svm_predict prints and predicts for the same model file and data."""
    y, X = svmutil.svm_read_problem(data_path)
    model = svmutil.svm_load_model(str(model_path))
    with threadpool_limits(1, user_api="openmp"):  # LIBSVM's OpenMP crawls on a busy machine
        labels, _, _ = svmutil.svm_predict(y, X, model)
    line = [l for l in capsys.readouterr().out.splitlines() if l.startswith("Accuracy")][0]
    return line, labels


def test_train_writes_a_model_libsvm_reads(trained, heart, capsys):
    est = load_libsvm_model(trained)
    assert est.expansion_.kernel.name == "rbf" and est.expansion_.kernel.gamma == 0.1
    reference = leansvm.SVC(C=1, gamma=0.1, random_state=0).fit(*leansvm.io.load_svmlight(heart))
    assert est.n_support_.tolist() == reference.n_support_.tolist()
    svmutil.svm_load_model(str(trained))  # loads without complaint


def test_train_prints_a_summary(heart, tmp_path, capsys):
    status, out, err = _run(capsys, ["train", "-t", "0", heart, str(tmp_path / "m")])
    assert status == 0 and err == ""
    assert "classes: -1 1" in out and "support vectors:" in out and "time:" in out
    assert "kernel linear" in out


def test_predict_prints_libsvm_accuracy(trained, heart, tmp_path, capsys):
    output = tmp_path / "pred.txt"
    status, out, err = _run(capsys, ["predict", heart, str(trained), str(output)])
    assert status == 0, err
    expected_line, labels = _libsvm_accuracy_line(capsys, trained, heart)
    assert out.strip() == expected_line
    assert output.read_text().split() == ["%g" % v for v in labels]


def test_default_gamma_is_one_over_num_features(heart, tmp_path, capsys):
    path = tmp_path / "m"
    assert main(["train", "-q", heart, str(path)]) == 0
    assert load_libsvm_model(path).expansion_.kernel.gamma == pytest.approx(1 / 13)


def test_long_options(heart, tmp_path):
    path = tmp_path / "m"
    argv = ["train", "-q", "--kernel", "poly", "--C", "2", "--gamma", "0.2", "--degree", "2",
            "--coef0", "1", "--cache-size", "50", "--tol", "0.01", heart, str(path)]
    assert main(argv) == 0
    kernel = load_libsvm_model(path).expansion_.kernel
    assert (kernel.name, kernel.gamma, kernel.degree, kernel.coef0) == ("poly", 0.2, 2, 1.0)


def test_weight_options():
    assert _expand_weight_options(["-w1", "5", "-w-1", "2", "-c", "1", "--", "-w3"]) == \
        ["--weight", "1", "5", "--weight", "-1", "2", "-c", "1", "--", "-w3"]
    args = build_parser().parse_args(_expand_weight_options(["train", "-w1", "5", "-w-1", "0.5",
                                                             "-w", "3", "1", "d", "m"]))
    assert args.weights == [["1", "5"], ["-1", "0.5"], ["3", "1"]]


def test_weights_change_the_model(heart, tmp_path, capsys):
    plain, weighted = tmp_path / "plain", tmp_path / "weighted"
    assert main(["train", "-q", "-g", "0.1", heart, str(plain)]) == 0
    status, _, err = _run(capsys, ["train", "-q", "-g", "0.1", "-w1", "5", "-w-1", "0.5", "-w7", "2",
                                   heart, str(weighted)])
    assert status == 0 and "label 7 specified in weight is not found" in err
    X, y = leansvm.io.load_svmlight(heart)
    reference = leansvm.SVC(gamma=0.1, class_weight={1: 5.0, -1: 0.5}, random_state=0).fit(X, y)
    model = load_libsvm_model(weighted)
    assert model.n_support_.tolist() == reference.n_support_.tolist()
    assert model.n_support_.tolist() != load_libsvm_model(plain).n_support_.tolist()
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(X), atol=1e-12)


def test_probability_option_writes_libsvm_sigmoid(heart, tmp_path):
    path = tmp_path / "m"
    assert main(["train", "-q", "-b", "1", "-g", "0.1", heart, str(path)]) == 0
    assert load_libsvm_model(path).probA_.shape == (1,)
    assert svmutil.svm_load_model(str(path)).is_probability_model()


def test_info(trained, capsys):
    status, out, err = _run(capsys, ["info", str(trained)])
    assert status == 0 and err == ""
    est = load_libsvm_model(trained)
    assert "LIBSVM format" in out and "kernel: rbf (gamma = 0.10000000000000001)" in out
    assert "classes: 2 (-1 1)" in out and "n_features: 13" in out
    assert f"support vectors: {est.expansion_.n_support} (-1: {est.n_support_[0]}, 1: {est.n_support_[1]})" in out


def test_native_model_through_the_cli(heart, tmp_path, capsys):
    path = tmp_path / "m.npz"
    assert main(["train", "-q", "-g", "0.1", heart, str(path)]) == 0
    assert type(load_model(path)) is leansvm.SVC
    status, out, _ = _run(capsys, ["info", str(path)])
    assert status == 0 and "leansvm native format" in out
    status, out, _ = _run(capsys, ["predict", heart, str(path), str(tmp_path / "out")])
    assert status == 0 and out.startswith("Accuracy = ")


def test_features_beyond_the_model_count_like_libsvm(trained, tmp_path, capsys):
    data = tmp_path / "wide.txt"
    data.write_text("1 1:0.5 13:1 20:2\n-1 2:-1\n")
    output = tmp_path / "out"
    status, out, _ = _run(capsys, ["predict", str(data), str(trained), str(output)])
    assert status == 0
    _, labels = _libsvm_accuracy_line(capsys, trained, str(data))
    assert output.read_text().split() == ["%g" % v for v in labels]


@pytest.fixture
def fake_datasets(monkeypatch):
    """A stand-in for ``leansvm.datasets`` with one string-labelled dataset named 'toy'."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))
    y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    ds = types.SimpleNamespace(name="toy", X_train=X[:60], y_train=y[:60], X_test=X[60:], y_test=y[60:],
                               C=2.0, gamma=0.25)

    def load(name, data_dir=None):
        if name != "toy":
            raise ValueError(f"unknown dataset {name!r}")
        return ds

    module = types.ModuleType("leansvm.datasets")
    module.NAMES, module.load = ("toy",), load
    monkeypatch.setitem(sys.modules, "leansvm.datasets", module)
    monkeypatch.setattr(leansvm, "datasets", module, raising=False)
    return ds


def test_named_dataset(fake_datasets, tmp_path, capsys):
    ds = fake_datasets
    path, output = tmp_path / "toy.npz", tmp_path / "out"
    status, out, err = _run(capsys, ["train", "toy", str(path)])
    assert status == 0, err
    assert "dataset toy (training part): 60 samples x 3 features" in out
    model = load_model(path)
    assert (model.C, model.expansion_.kernel.gamma) == (2.0, 0.25)   # the dataset's parameters
    status, out, _ = _run(capsys, ["predict", "toy", str(path), str(output)])
    predicted = model.predict(ds.X_test)
    assert output.read_text().split() == predicted.tolist()
    correct = int(np.sum(predicted == ds.y_test))
    assert out.strip() == "Accuracy = %g%% (%d/20) (classification)" % (100 * correct / 20, correct)
    status, _, err = _run(capsys, ["train", "toy", str(tmp_path / "toy.model")])
    assert status == 1 and "integer labels" in err and "Traceback" not in err
    status, _, err = _run(capsys, ["train", "nosuch", str(tmp_path / "x.model")])
    assert status == 1 and "not a dataset name" in err


@pytest.mark.parametrize("argv_builder, status, fragment", [
    (lambda d, m, t: ["train", str(t / "missing.txt"), str(t / "m")], 1, "no such data file"),
    (lambda d, m, t: ["predict", d, str(t / "missing.model"), str(t / "o")], 1, "No such file"),
    (lambda d, m, t: ["info", d], 1, "line 1: unknown header key"),
    (lambda d, m, t: ["predict", d, m, str(t / "no-dir" / "o")], 1, "No such file"),
    (lambda d, m, t: ["train", "-t", "9", d, str(t / "m")], 2, "invalid choice"),
    (lambda d, m, t: ["train", "-c", "abc", d, str(t / "m")], 2, "invalid float value"),
    (lambda d, m, t: ["train", "-c", "-1", d, str(t / "m")], 2, "C must be positive"),
    (lambda d, m, t: ["train", "-w1", "x", d, str(t / "m")], 2, "not a number"),
    (lambda d, m, t: ["train", "-s", "5", d, str(t / "m")], 2, "invalid choice"),
    (lambda d, m, t: ["train", "-s", "2", "-n", "0", d, str(t / "m")], 2, "nu must be in (0, 1]"),
    (lambda d, m, t: ["train", "-s", "3", "-p", "-1", d, str(t / "m")], 2, "epsilon (-p) must be non-negative"),
    (lambda d, m, t: ["train", "-s", "2", "-b", "1", d, str(t / "m")], 2, "not implemented for the one-class"),
    (lambda d, m, t: ["train", "-s", "3", "--algorithm", "bsgd", "--budget", "5", d, str(t / "m")], 2,
     "trains a C-SVC"),
    (lambda d, m, t: ["train", "-t", "4", d, str(t / "m")], 1, "rows must be numbered 0:1"),
    (lambda d, m, t: ["train", "-t", "0", "--kernel", "rbf", d, str(t / "m")], 2, "contradicts"),
    (lambda d, m, t: ["frobnicate"], 2, "invalid choice"),
    (lambda d, m, t: [], 2, "required"),
])
def test_errors_are_one_line_messages(heart, trained, tmp_path, capsys, argv_builder, status, fragment):
    code, out, err = _run(capsys, argv_builder(heart, str(trained), tmp_path))
    assert code == status
    assert fragment in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_corrupt_model_is_reported_with_its_line(trained, heart, tmp_path, capsys):
    bad = tmp_path / "bad.model"
    bad.write_text(trained.read_text().replace("kernel_type rbf", "kernel_type nonsense"))
    code, _, err = _run(capsys, ["predict", heart, str(bad), str(tmp_path / "out")])
    assert code == 1 and "bad.model: line 2: unknown or unsupported kernel_type 'nonsense'" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_python_dash_m_entry_point(trained):
    result = subprocess.run([sys.executable, "-m", "leansvm", "info", str(trained)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "kernel: rbf" in result.stdout
    result = subprocess.run([sys.executable, "-m", "leansvm", "info", str(trained) + ".missing"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr


@pytest.mark.parametrize("svm_type", [0, 1, 2, 3, 4])
def test_every_svm_type_trains_and_predicts_as_svm_train(heart, tmp_path, capsys, svm_type):
    """``leansvm train -s N`` writes a file of LIBSVM's svm_type whose predictions equal those of
    LIBSVM's own model (same options); ``predict`` prints svm-predict's lines."""
    ours = tmp_path / "ours.model"
    status, out, err = _run(capsys, ["train", "-s", str(svm_type), "-g", "0.1", "-n", "0.4", "-p", "0.2",
                                     heart, str(ours)])
    assert status == 0, err
    y, X = svmutil.svm_read_problem(heart)
    with threadpool_limits(1, user_api="openmp"):
        reference = svmutil.svm_train(y, X, f"-s {svm_type} -g 0.1 -n 0.4 -p 0.2 -q")
        theirs, (_, mse, r2), their_values = svmutil.svm_predict(y, X, reference, "-q")
    svm_type_line = open(ours).readline().split()[1]
    assert svm_type_line == ["c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr"][svm_type]
    status, out, err = _run(capsys, ["predict", heart, str(ours), str(tmp_path / "out")])
    assert status == 0, err
    predicted = np.loadtxt(tmp_path / "out")
    if svm_type in (3, 4):
        assert np.max(np.abs(predicted - theirs)) <= 1e-2 * np.std(y)
        ours_mse = float(re.search(r"Mean squared error = (\S+) \(regression\)", out).group(1))
        ours_r2 = float(re.search(r"Squared correlation coefficient = (\S+) \(regression\)", out).group(1))
        assert ours_mse == pytest.approx(mse, rel=1e-2) and ours_r2 == pytest.approx(r2, rel=1e-2)
        assert ours_mse == pytest.approx(np.mean((predicted - np.array(y)) ** 2), rel=1e-5)
    else:
        same = predicted == np.array(theirs)
        if svm_type == 2:
            # one-class at nu 0.4: the free support vectors lie on the boundary, LIBSVM's score 0 to
            # within tol (15 of the 270 rows), where either label is the optimum's: every row
            # farther out gets LIBSVM's label
            clear = np.abs(np.ravel(their_values)) > 1e-3
            assert clear.sum() >= 0.9 * clear.size and np.all(same[clear])
        else:
            assert np.mean(same) >= 0.995
        assert "(classification)" in out


def test_precomputed_kernel_files_train_and_predict_as_libsvm(heart, tmp_path, capsys):
    """-t 4: rows ``0:serial 1:k(x,x_1) ...``, written and read as LIBSVM does."""
    y, X = svmutil.svm_read_problem(heart, return_scipy=True)
    X = X.toarray()
    K = np.exp(-0.1 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))

    def write(path, rows, serial):
        with open(path, "w") as f:
            for i, row in enumerate(rows):
                f.write("%g 0:%d " % (y[i], serial(i)) + " ".join("%d:%.17g" % (j + 1, v)
                                                               for j, v in enumerate(row)) + "\n")

    write(tmp_path / "train", K, lambda i: i + 1)
    write(tmp_path / "test", K[:80], lambda i: 0)
    for svm_type in (0, 3):
        model = tmp_path / f"m{svm_type}"
        assert main(["train", "-q", "-s", str(svm_type), "-t", "4", str(tmp_path / "train"), str(model)]) == 0
        assert main(["predict", "-q", str(tmp_path / "test"), str(model), str(tmp_path / "out")]) == 0
        ours = np.loadtxt(tmp_path / "out")
        yt, Xt = svmutil.svm_read_problem(str(tmp_path / "test"))
        with threadpool_limits(1, user_api="openmp"):
            theirs, _, _ = svmutil.svm_predict(yt, Xt, svmutil.svm_load_model(str(model)), "-q")
        np.testing.assert_allclose(ours, theirs, atol=1e-9)      # LIBSVM reads our file alike
        named = leansvm.SVC(gamma=0.1) if svm_type == 0 else leansvm.SVR(gamma=0.1)
        named.fit(X, y)
        agree = np.abs(ours - named.predict(X[:80]))
        assert (np.mean(agree == 0) >= 0.99) if svm_type == 0 else (agree.max() <= 1e-2)


def test_svr_probability_writes_laplace_sigma_libsvm_reads(heart, tmp_path, capsys):
    path = tmp_path / "svr.model"
    assert main(["train", "-q", "-s", "3", "-b", "1", "-g", "0.1", heart, str(path)]) == 0
    ours = load_libsvm_model(path).probA_[0]
    sigma = svmutil.svm_load_model(str(path)).get_svr_probability()
    assert sigma == pytest.approx(ours, rel=1e-12)
    y, X = svmutil.svm_read_problem(heart)
    with threadpool_limits(1, user_api="openmp"):
        reference = svmutil.svm_train(y, X, "-s 3 -b 1 -g 0.1 -q").get_svr_probability()
    assert ours == pytest.approx(reference, rel=0.15)           # random folds on both sides
    status, out, _ = _run(capsys, ["predict", "-b", "1", heart, str(path), str(tmp_path / "out")])
    assert status == 0 and f"sigma={ours:g}" in out


def test_compress_a_regression_model_by_error_increase(heart, tmp_path, capsys):
    full = tmp_path / "svr.model"
    assert main(["train", "-q", "-s", "3", "-g", "0.1", heart, str(full)]) == 0
    small = tmp_path / "small.model"
    status, out, err = _run(capsys, ["compress", "--max-error-increase", "3%", "--max-iter", "50", "--data", heart,
                                     str(full), str(small)])
    assert status == 0, err
    rmse_full, rmse_small = map(float, re.search(r"RMSE on .*: full (\S+), compressed (\S+)", out).groups())
    assert rmse_small <= 1.03 * rmse_full + 1e-3          # printed to 4 digits
    assert load_libsvm_model(small).expansion_.n_support < load_libsvm_model(full).expansion_.n_support
    y, X = svmutil.svm_read_problem(heart)
    with threadpool_limits(1, user_api="openmp"):
        _, (_, mse, _), _ = svmutil.svm_predict(y, X, svmutil.svm_load_model(str(small)), "-q")
    assert np.sqrt(mse) == pytest.approx(rmse_small, rel=1e-3)   # LIBSVM predicts the compressed file alike


def test_compress_a_one_class_model(heart, tmp_path, capsys):
    full = tmp_path / "oc.model"
    assert main(["train", "-q", "-s", "2", "-n", "0.3", "-g", "0.1", heart, str(full)]) == 0
    status, out, err = _run(capsys, ["compress", "--ratio", "0.3", "--max-iter", "30", "--data", heart, str(full),
                                     str(tmp_path / "small.model")])
    assert status == 0, err
    assert re.search(r"accuracy on .*: full 0\.\d+, compressed 0\.\d+", out)
    assert open(tmp_path / "small.model").readline().split() == ["svm_type", "one_class"]


# -- leansvm train -v: svm-train's cross-validation ---------------------------------------------
def test_libsvm_folds_use_glibc_rand_as_svm_train_does():
    from leansvm.cli.libsvm_folds import GlibcRand, libsvm_folds

    rand = GlibcRand(1)                                   # glibc's first values after srand(1)
    assert [rand() for _ in range(3)] == [1804289383, 846930886, 1681692777]
    y = np.array([1, -1, 1, 1, -1, 2, 2, 1, -1, 2] * 3)
    folds = libsvm_folds(y, 4, stratified=True)
    assert sorted(np.concatenate(folds).tolist()) == list(range(30))  # every row held out once
    for label in (1, -1, 2):                                          # each class dealt evenly
        counts = [int(np.sum(y[f] == label)) for f in folds]
        assert max(counts) - min(counts) <= 1
    plain = libsvm_folds(y, 4, stratified=False)
    assert [f.size for f in plain] == [7, 8, 7, 8] and sorted(np.concatenate(plain).tolist()) == list(range(30))


def test_train_v_prints_the_cross_validation_accuracy_and_writes_no_model(tmp_path, capsys, monkeypatch):
    from sklearn.datasets import dump_svmlight_file, make_classification

    X, y = make_classification(120, 5, random_state=0)
    data = tmp_path / "d.txt"
    dump_svmlight_file(X, 2 * y - 1, str(data), zero_based=False)
    monkeypatch.chdir(tmp_path)
    assert main(["train", "-v", "5", str(data)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("Cross Validation Accuracy = ") and line.endswith("%")
    assert 50 < float(line.split("=")[1].rstrip("%")) <= 100
    assert not (tmp_path / "d.txt.model").exists()
    assert main(["train", "-s", "3", "-v", "3", str(data)]) == 0
    assert "Cross Validation Mean squared error = " in capsys.readouterr().out
    assert main(["train", "-v", "1", str(data)]) == 2
    assert main(["train", "-q", str(data)]) == 0                      # MODEL defaults to DATA's name + .model
    assert (tmp_path / "d.txt.model").exists()


@pytest.mark.skipif(shutil.which("svm-train") is None, reason="LIBSVM's svm-train is not installed")
@pytest.mark.parametrize("options", [[], ["-c", "10", "-g", "0.1"], ["-s", "1", "-n", "0.3"], ["-s", "3"]])
def test_train_v_matches_svm_train(options, heart, capsys):
    """The same folds (svm-train's glibc rand) and the same dual: the same score, to a row."""
    data = heart
    theirs = subprocess.run(["svm-train", "-q", "-v", "5", *options, data], capture_output=True, text=True,
                            check=True).stdout.split()
    assert main(["train", "-v", "5", *options, data]) == 0
    ours = capsys.readouterr().out.split()
    if "-s" in options and options[options.index("-s") + 1] == "3":
        assert float(ours[6]) == pytest.approx(float(theirs[6]), rel=1e-3)          # mean squared error
    else:
        assert abs(float(ours[-1].rstrip("%")) - float(theirs[-1].rstrip("%"))) <= 100 / 270 + 1e-9


def test_every_command_shows_every_default_and_an_example(capsys):
    """--help of each command: each option's default, written one way, and an examples section."""
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    assert set(commands) >= {"train", "predict", "info", "fit", "compress", "export", "path", "scale"}
    for name, sub in commands.items():
        assert main([name, "--help"]) == 0
        text = capsys.readouterr().out
        assert "examples:" in text and f"leansvm {name} " in text.split("examples:")[1], name
        for action in sub._actions:
            if action.option_strings and action.dest not in ("help",):
                formatted = sub._get_formatter()._get_help_string(action)
                assert "(default: " in formatted, f"{name} {action.option_strings}"


@pytest.mark.parametrize("command", ["train", "predict", "fit", "scale", "info"])
def test_an_unknown_option_points_to_its_commands_help(command, capsys):
    positional = {"train": ["data"], "predict": ["data", "model", "out"], "fit": ["data"], "scale": ["data"],
                  "info": ["model"]}[command]
    assert main([command, *positional, "--no-such-option"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"leansvm {command}: error: unrecognized arguments: --no-such-option "
                   f"(see 'leansvm {command} --help')")


def test_an_unknown_option_before_any_command_points_to_the_main_help(capsys):
    assert main(["--no-such-option"]) == 2
    assert "(see 'leansvm --help')" in capsys.readouterr().err
