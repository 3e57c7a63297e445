"""Tables as users have them: CSV/TSV files and DataFrames with numeric
columns of very different scales, categorical columns and missing values."""

import subprocess
import sys

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from leansvm import SVC, fit_lean, io  # noqa: E402
from leansvm.cli import main  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402

from leansvm.preprocessing.tabular import TablePreprocessor, read_table, split_target  # noqa: E402


def mixed_table(n=400, missing=0.03, seed=0):
    """Raw numeric columns on scales 1e-3 .. 1e5, two categorical columns that move the class,
    a few missing values; label 'yes' / 'no'."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 3))
    colour = rng.choice(["red", "green", "blue"], size=n)
    size = rng.choice(["S", "M", "L", "XL"], size=n)
    score = z[:, 0] + z[:, 1] ** 2 - 1 + 1.5 * (colour == "red") - (size == "S") + 0.3 * rng.normal(size=n)
    frame = pd.DataFrame({"tiny": 1e-3 * z[:, 0], "mid": z[:, 1], "huge": 1e5 * z[:, 2] + 3e5,
                          "colour": colour, "size": size, "label": np.where(score > 0, "yes", "no")})
    for column in ("tiny", "huge", "colour"):
        frame.loc[rng.random(n) < missing, column] = np.nan
    return frame


@pytest.fixture(scope="module")
def table():
    return mixed_table()


@pytest.mark.parametrize("scaling", ["range", "standard", "none"])
def test_transform_equals_scikit_learns_column_transformer(table, scaling):
    """The default: every encoded column mapped to [-1, 1] (MinMaxScaler's map, svm-scale's);
    "standard": the numeric columns z-scored and the one-hot ones 0/1, as before it was the default."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, StandardScaler

    X, _ = split_target(table, "label")
    prep = TablePreprocessor(impute="median", scaling=scaling).fit(X)
    numeric = [SimpleImputer(strategy="median")] + ([StandardScaler()] if scaling == "standard" else [])
    reference = ColumnTransformer([
        ("n", make_pipeline(*numeric), ["tiny", "mid", "huge"]),
        ("c", make_pipeline(SimpleImputer(strategy="most_frequent"),
                            OneHotEncoder(handle_unknown="ignore", sparse_output=False)), ["colour", "size"])])
    if scaling == "range":
        reference = make_pipeline(reference, MinMaxScaler(feature_range=(-1, 1)))
    expected = reference.fit_transform(X.astype({"colour": object}).where(X.notna(), np.nan))
    np.testing.assert_allclose(prep.transform(X), expected, rtol=1e-12, atol=1e-12)
    assert prep.feature_names_out_[:3] == ["tiny", "mid", "huge"] and "colour=red" in prep.feature_names_out_
    again = TablePreprocessor.from_json(prep.to_json())
    np.testing.assert_array_equal(again.transform(X), prep.transform(X))


def test_a_stored_table_preprocessing_of_before_the_ranges_loads_as_z_scores(table):
    """A file written when z-scores were the table's only scaling has no "scaling" entry."""
    X, _ = split_target(table, "label")
    prep = TablePreprocessor(impute="median", scaling="standard").fit(X)
    state = prep.to_json()
    del state["scaling"], state["scaler"]
    np.testing.assert_array_equal(TablePreprocessor.from_json(state).transform(X), prep.transform(X))


def test_missing_values_are_refused_unless_imputed(table):
    X, _ = split_target(table, "label")
    with pytest.raises(ValueError, match=r"missing values in column\(s\) 'tiny', 'huge', 'colour' \(rows "):
        TablePreprocessor().fit(X)
    assert np.isfinite(TablePreprocessor(impute="most_frequent").fit(X).transform(X)).all()
    with pytest.raises(ValueError, match="impute must be"):
        TablePreprocessor(impute="mean").fit(X)


def test_constant_and_empty_columns_and_unseen_categories(table):
    X, _ = split_target(table, "label")
    X = X.assign(always=7.0)
    with pytest.warns(UserWarning, match=r"1 constant column\(s\) dropped, they carry no information: 'always'"):
        prep = TablePreprocessor(impute="median").fit(X)
    assert "always" not in prep.feature_names_out_ and prep.dropped_columns_ == ["always"]
    with pytest.raises(ValueError, match="column 'nothing' has no value at all"):
        TablePreprocessor(impute="median").fit(X.assign(nothing=np.nan))
    new = X.head(3).assign(colour=["purple", "red", "red"])
    with pytest.warns(UserWarning, match=r"column 'colour': 1 value\(s\) not seen in training \(e.g. 'purple'\)"):
        encoded = prep.transform(new)
    colour = [i for i, name in enumerate(prep.feature_names_out_) if name.startswith("colour=")]
    # one-hot 0/1 mapped to -1/1 as svm-scale maps them: no category is -1 in every column of it
    assert (encoded[0, colour] == -1).all() and (encoded[1, colour] == 1).sum() == 1
    with pytest.raises(ValueError, match="column\\(s\\) 'size' missing from the data"):
        prep.transform(X.drop(columns=["size"]))


def test_the_main_job_warns_once_of_constant_columns(table):
    """scale='auto' encodes the table under each scaling to compare them: its warnings come once."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_lean(table.iloc[:320].assign(always=7.0), target="label", impute="median", Cs=[1, 10],
                 gammas=[0.1, 0.3], size_fractions=(), libsvm_reference_model=False)
    constant = [w for w in caught if "constant column" in str(w.message)]
    assert len(constant) == 1, [str(w.message) for w in constant]


def test_target_column_errors(table):
    with pytest.raises(ValueError, match="target column 'y' not found; columns: tiny, mid, huge, colour, size, label"):
        split_target(table, "y")
    with pytest.raises(ValueError, match="target column 'tiny' has no value in rows"):
        split_target(table, "tiny")
    one_class = table.assign(label="yes")
    with pytest.raises(ValueError, match="at least two classes"):
        fit_lean(one_class, target="label", impute="median")


def test_fit_lean_takes_a_dataframe_and_the_model_predicts_raw_frames(table, tmp_path):
    train, test = table.iloc[:320], table.iloc[320:]
    result = fit_lean(train, target="label", X_test=test, impute="median", Cs=[1, 10], gammas=[0.1, 0.3],
                      libsvm_reference_model=False)
    model = result.model
    assert isinstance(model, Pipeline) and isinstance(model[0], TablePreprocessor)
    assert set(model.classes_) == {"no", "yes"}
    assert "one-hot encoded" in result.preprocessing and [s.stage for s in result.steps][:2] == ["scale", "preprocess"]
    X_test, y_test = split_target(test, "label")
    assert np.mean(model.predict(X_test) == y_test) > 0.7
    path = tmp_path / "table.npz"
    io.save_model(model, path)
    loaded = io.load_model(path)
    assert isinstance(loaded, Pipeline) and isinstance(loaded[0], TablePreprocessor)
    np.testing.assert_array_equal(loaded.decision_function(X_test), model.decision_function(X_test))
    # the same with the labels given separately
    X_train, y_train = split_target(train, "label")
    other = fit_lean(X_train, y_train, impute="median", Cs=[1, 10], gammas=[0.1, 0.3], libsvm_reference_model=False)
    np.testing.assert_array_equal(other.model.predict(X_test), model.predict(X_test))


def test_the_preprocessor_goes_in_a_scikit_learn_pipeline(table):
    X, y = split_target(table, "label")
    model = make_pipeline(TablePreprocessor(impute="median"), SVC(C=10, gamma=0.2)).fit(X, y)
    assert model.score(X, y) > 0.8
    assert model[-1].expansion_.n_features == len(model[0].feature_names_out_)


@pytest.fixture(scope="module")
def csv_files(table, tmp_path_factory):
    folder = tmp_path_factory.mktemp("tables")
    train, test = folder / "train.csv", folder / "test.csv"
    table.iloc[:320].to_csv(train, index=False)
    table.iloc[320:].to_csv(test, index=False)
    return train, test


def test_command_line_fit_then_predict_a_csv(csv_files, tmp_path, capsys):
    train, test = csv_files
    model = tmp_path / "model.npz"
    assert main(["fit", str(train), "--test", str(test), "--target", "label", "--impute", "median",
                 "-o", str(model), "-q", "--C-grid", "1", "10", "--gamma-grid", "0.1", "0.3"]) == 0
    capsys.readouterr()
    out = tmp_path / "predictions.csv"
    assert main(["predict", str(test), str(model), str(out)]) == 0
    printed = capsys.readouterr().out
    predictions = pd.read_csv(out)
    assert list(predictions.columns) == ["prediction"] and len(predictions) == 80
    assert set(predictions["prediction"]) <= {"yes", "no"}
    accuracy = np.mean(predictions["prediction"].to_numpy() == pd.read_csv(test)["label"].to_numpy())
    assert f"Accuracy = {100 * accuracy:g}%" in printed                 # the label column found by itself
    assert main(["predict", str(test), str(model)]) == 0                 # no OUTPUT: CSV on stdout
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == "prediction" and len(captured.out.splitlines()) == 81
    assert "Accuracy" in captured.err


def test_command_line_train_csv_with_probabilities_and_a_libsvm_file(csv_files, tmp_path, capsys):
    train, test = csv_files
    model = tmp_path / "model.npz"
    assert main(["train", "-q", "-b", "1", "-c", "10", "-g", "0.2", "--impute", "median", str(train),
                 str(model)]) == 0                                        # target: the last column
    out = tmp_path / "p.csv"
    assert main(["predict", "-q", "--probability", str(test), str(model), str(out)]) == 0
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["prediction", "probability_no", "probability_yes"]
    np.testing.assert_allclose(frame[["probability_no", "probability_yes"]].sum(axis=1), 1.0)
    capsys.readouterr()
    numeric = tmp_path / "numeric.csv"            # LIBSVM files store integer labels only
    table = pd.read_csv(train)
    table.assign(label=np.where(table["label"] == "yes", 1, -1)).to_csv(numeric, index=False)
    libsvm_file = tmp_path / "model.txt"
    assert main(["train", "-q", "--impute", "median", str(numeric), str(libsvm_file)]) == 0
    assert "kept only in leansvm's native .npz format" in capsys.readouterr().err
    assert main(["predict", "-q", str(test), str(libsvm_file), str(out)]) == 1
    assert "was trained on svmlight data" in capsys.readouterr().err


def test_command_line_bad_tables(csv_files, tmp_path, capsys):
    train, _ = csv_files
    latin = tmp_path / "latin1.csv"
    latin.write_bytes("a,b,label\n1,caf\xe9,yes\n2,th\xe9,no\n".encode("latin-1"))
    cases = [
        (["fit", str(train), "--target", "nope", "-o", str(tmp_path / "m.npz")], "target column 'nope' not found"),
        (["fit", str(train), "--target", "label", "-o", str(tmp_path / "m.npz")], "missing values in column(s)"),
        (["train", str(latin), str(tmp_path / "m.npz")], "not UTF-8 text (byte 0xe9"),
        (["path", str(train)], "tables (CSV/TSV/Parquet) are read by leansvm fit, train and predict"),
    ]
    for argv, message in cases:
        assert main(argv) == 1, argv
        assert message in capsys.readouterr().err, argv


def test_a_fresh_process_loads_the_model_of_a_table(csv_files, tmp_path):
    """``import leansvm`` loads nothing: load_model must find every estimator class by itself
    (the chosen model here is a BSGDClassifier or a CompressedSVC)."""
    train, test = csv_files
    model = tmp_path / "model.npz"
    assert main(["fit", str(train), "--target", "label", "--impute", "median", "-o", str(model), "-q",
                 "--C-grid", "1", "10", "--gamma-grid", "0.1", "0.3"]) == 0
    done = subprocess.run([sys.executable, "-m", "leansvm", "info", str(model)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "with preprocessing)" in done.stdout
    assert "preprocessing: 3 numeric column(s)" in done.stdout and "one-hot encoded" in done.stdout


def test_tsv_is_read_with_tabs(table, tmp_path):
    path = tmp_path / "t.tsv"
    table.to_csv(path, sep="\t", index=False)
    frame = read_table(path)
    assert list(frame.columns) == list(table.columns) and len(frame) == len(table)


def test_parquet_is_read_when_pyarrow_is_installed(table, tmp_path):
    """Parquet is optional (pyarrow, 170 MB, is not in the test extras): skipped without it."""
    pytest.importorskip("pyarrow")
    path = tmp_path / "t.parquet"
    table.to_parquet(path, index=False)
    frame = read_table(path)
    pd.testing.assert_frame_equal(frame.isna(), table.isna())          # Parquet writes NaN in text as None
    pd.testing.assert_frame_equal(frame.fillna(0), table.fillna(0))
    model = tmp_path / "m.npz"
    assert main(["train", "-q", "--impute", "median", "--target", "label", str(path), str(model)]) == 0
    assert main(["predict", "-q", str(path), str(model), str(tmp_path / "p.csv")]) == 0


def test_integer_column_names_and_mixed_type_categories_survive_the_file(table, tmp_path):
    """KEEL frames name their columns 0, 1, ...; a categorical column may mix numbers and text.
    Both are compared as text, so the model predicts the same before and after its file."""
    X, y = split_target(table, "label")
    X = X.assign(size=X["size"].where(X["size"] != "XL", 42)).set_axis(range(X.shape[1]), axis=1)
    model = make_pipeline(TablePreprocessor(impute="median"), SVC(C=10, gamma=0.2)).fit(X, y)
    assert "4=42" in model[0].feature_names_out_
    io.save_model(model, tmp_path / "m.npz")
    loaded = io.load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
