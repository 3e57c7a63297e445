"""Tables as users have them: CSV / TSV / Parquet files and pandas DataFrames with a target
column, numeric and categorical columns and missing values.

:class:`TablePreprocessor` turns a DataFrame into the numeric matrix a kernel model needs:

* numeric columns: missing values imputed (median or most frequent);
* categorical columns (object, string, category, bool dtypes): values compared as text,
  missing values imputed (most frequent), then one-hot encoded over the categories seen in
  training; a category not seen in training encodes as all zeros, with a warning;
* then, by ``scaling``, the encoded matrix scaled as a matrix of the same numbers would be
  (:class:`leansvm.preprocessing.scaling.FeatureScaler`: by default svm-scale's ranges, one-hot
  columns included, as LIBSVM's guide scales its one-hot features); ``"standard"`` z-scores the
  numeric columns alone and leaves the one-hot ones 0/1 (the preprocessing of files written
  before the ranges were the default); ``"none"`` leaves every column as encoded;
* without ``impute``, a missing value is an error naming the columns and rows;
* a constant column is dropped, with a warning; a column with no value at all is an error.

The statistics are learned by scikit-learn's ``SimpleImputer``, ``StandardScaler`` and
``OneHotEncoder`` in a ``ColumnTransformer``, then kept as plain numbers and category lists, so
that they are stored in the native ``.npz`` without pickle (``to_json`` / ``from_json``);
``transform`` applies them with NumPy (tested equal to the ``ColumnTransformer``'s output).
A model of a table is a scikit-learn ``Pipeline`` of the preprocessor and a leansvm classifier
(:func:`leansvm.preprocessing.attached.with_preprocessing`): it predicts on raw DataFrames. Needs pandas (``pip install 'leansvm[datasets]'``); Parquet needs pyarrow.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

__all__ = ["TABLE_SUFFIXES", "is_table_file", "read_table", "split_target", "TablePreprocessor"]

#: file name endings read as tables (anything else is an svmlight / LIBSVM data file)
TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".parquet", ".pq")
IMPUTE_STRATEGIES = ("median", "most_frequent")


def _pandas():
    try:
        import pandas
    except ImportError:                                            # pragma: no cover
        raise ImportError("tabular data needs pandas: pip install 'leansvm[datasets]'") from None
    return pandas


def is_table_file(path) -> bool:
    return os.fspath(path).lower().endswith(TABLE_SUFFIXES)


def read_table(path):
    """A DataFrame of a CSV (``,``), TSV (``.tsv``/``.tab``: tab) or Parquet file, with a clear
    ``ValueError`` naming the file for text that is not UTF-8 or a file that is not a table."""
    pd = _pandas()
    name = os.fspath(path)
    lower = name.lower()
    try:
        if lower.endswith((".parquet", ".pq")):
            return pd.read_parquet(name)
        return pd.read_csv(name, sep="\t" if lower.endswith((".tsv", ".tab")) else ",", encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset "
                         f"{exc.start}); save it as UTF-8") from None
    except ImportError as exc:
        raise ImportError(f"{name}: reading Parquet needs pyarrow ({exc})") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise ValueError(f"{name}: not a readable table ({' '.join(str(exc).split())})") from None


def split_target(frame, target=None):
    """(features, labels) of a DataFrame: ``target`` names the label column (default: the last)."""
    columns = [str(c) for c in frame.columns]
    if frame.shape[1] < 2:
        raise ValueError(f"the table needs a target column and at least one feature column; "
                         f"it has {frame.shape[1]} column(s)")
    if target is None:
        target = frame.columns[-1]
    elif target not in frame.columns:
        raise ValueError(f"target column {target!r} not found; columns: {', '.join(columns)}")
    y = frame[target]
    missing = np.flatnonzero(y.isna().to_numpy())
    if missing.size:
        raise ValueError(f"target column {target!r} has no value in {_rows(missing)}")
    return frame.drop(columns=[target]), y.to_numpy()


def _rows(positions, shown=5) -> str:
    """``row 3`` / ``rows 3, 17, 20 and 4 more`` (1-based data rows, header not counted)."""
    numbers = [str(int(p) + 1) for p in positions[:shown]]
    more = f" and {len(positions) - shown} more" if len(positions) > shown else ""
    return ("row " if len(positions) == 1 else "rows ") + ", ".join(numbers) + more


def _names(columns, shown=5) -> str:
    """``'a', 'b'`` / ``'a', 'b', 'c', 'd', 'e' and 12 more``."""
    more = f" and {len(columns) - shown} more" if len(columns) > shown else ""
    return ", ".join(repr(str(c)) for c in columns[:shown]) + more


def _as_text(column):
    """A categorical column as strings (missing values kept missing): categories of any type,
    mixed ones included, compare, sort and store in JSON alike."""
    return column.astype(object).where(column.notna(), None).map(lambda v: None if v is None else str(v))


def _string_columns(frame):
    """The frame with its column names as strings (KEEL files and NumPy-made frames use ints)."""
    return frame.rename(columns=str) if any(not isinstance(c, str) for c in frame.columns) else frame


class TablePreprocessor(TransformerMixin, BaseEstimator):
    """Impute, one-hot encode and scale a DataFrame (see the module docstring).

    ``impute``: None (missing values are an error), ``"median"`` or ``"most_frequent"`` (for
    numeric columns; categorical ones always take the most frequent category).
    ``scaling``: "range" (svm-scale's ranges, the default), "max-abs", "standard" or "none".
    Fitted attributes: ``numeric_columns_``, ``fill_`` (imputed value per numeric column),
    ``mean_``, ``scale_`` (z-scores; 0 and 1 otherwise), ``scaler_`` (the FeatureScaler of the
    encoded matrix, or None), ``categorical_columns_``, ``category_fill_``, ``categories_``,
    ``dropped_columns_`` (constant ones), ``feature_names_out_``.
    """

    def __init__(self, impute=None, scaling="range"):
        self.impute = impute
        self.scaling = scaling

    def fit(self, frame, y=None):
        from sklearn.compose import ColumnTransformer
        from sklearn.impute import SimpleImputer
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OneHotEncoder, StandardScaler

        from leansvm.preprocessing.scaling import SCALINGS, FeatureScaler

        pd = _pandas()
        if self.scaling not in SCALINGS + ("none",):
            raise ValueError(f"scaling must be one of {', '.join(map(repr, SCALINGS + ('none',)))}, "
                             f"got {self.scaling!r}")
        if self.impute not in (None,) + IMPUTE_STRATEGIES:
            raise ValueError(f"impute must be None, 'median' or 'most_frequent', got {self.impute!r}")
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"TablePreprocessor takes a pandas DataFrame, got {type(frame).__name__}")
        frame = _string_columns(frame)
        self._check_missing(frame)
        usable = []
        self.dropped_columns_ = []
        for column in frame.columns:
            values = frame[column].dropna()
            if values.empty:
                raise ValueError(f"column {column!r} has no value at all; drop it")
            (self.dropped_columns_ if values.nunique() == 1 else usable).append(column)
        if self.dropped_columns_:                        # one warning for all: a pixel table has dozens
            warnings.warn(f"{len(self.dropped_columns_)} constant column(s) dropped, they carry no information: "
                          f"{_names(self.dropped_columns_)}", UserWarning, stacklevel=2)
        if not usable:
            raise ValueError("no column left: every feature column is constant")
        numeric = [c for c in usable if pd.api.types.is_numeric_dtype(frame[c])
                   and not pd.api.types.is_bool_dtype(frame[c])]
        categorical = [c for c in usable if c not in numeric]
        numeric_fill = self.impute or "median"
        transformer = ColumnTransformer([
            ("numeric", make_pipeline(SimpleImputer(strategy=numeric_fill), StandardScaler()), numeric),
            ("categorical", make_pipeline(SimpleImputer(strategy="most_frequent"),
                                          OneHotEncoder(handle_unknown="ignore", sparse_output=False)),
             categorical)])
        table = frame[usable].assign(**{c: _as_text(frame[c]) for c in categorical})
        transformer.fit(table.where(table.notna(), np.nan))       # pd.NA too: what SimpleImputer sees
        self.numeric_columns_, self.categorical_columns_ = numeric, categorical
        if numeric:
            imputer, scaler = transformer.named_transformers_["numeric"].steps
            self.fill_ = imputer[1].statistics_.astype(float)
            self.mean_, self.scale_ = scaler[1].mean_.astype(float), scaler[1].scale_.astype(float)
            if self.scaling != "standard":
                self.mean_, self.scale_ = np.zeros_like(self.mean_), np.ones_like(self.scale_)
        else:
            self.fill_ = self.mean_ = self.scale_ = np.empty(0)
        if categorical:
            imputer, encoder = transformer.named_transformers_["categorical"].steps
            self.category_fill_ = [str(v) for v in imputer[1].statistics_]
            self.categories_ = [[str(v) for v in cats] for cats in encoder[1].categories_]
        else:
            self.category_fill_, self.categories_ = [], []
        self.feature_names_out_ = list(numeric) + [f"{c}={v}" for c, cats in zip(categorical, self.categories_)
                                                   for v in cats]
        self.n_features_in_ = frame.shape[1]
        self.feature_names_in_ = np.asarray([str(c) for c in frame.columns], dtype=object)
        self.scaler_ = None
        if self.scaling in SCALINGS and self.scaling != "standard":
            self.scaler_ = FeatureScaler(self.scaling).fit(self._encode(frame))
        return self

    def _check_missing(self, frame):
        if self.impute is not None:
            return
        missing = frame.isna()
        columns = [c for c in frame.columns if missing[c].any()]
        if columns:
            rows = np.flatnonzero(missing.any(axis=1).to_numpy())
            raise ValueError(f"missing values in column(s) {', '.join(repr(c) for c in columns)} "
                             f"({_rows(rows)}); impute them (impute='median' or 'most_frequent', "
                             "--impute on the command line) or remove them")

    def transform(self, frame):
        """The numeric matrix: the numeric columns, then the one-hot columns, scaled by ``scaling``."""
        encoded = self._encode(frame)
        return encoded if self.scaler_ is None else self.scaler_.transform(encoded)

    def _encode(self, frame):
        """The numeric columns imputed (z-scored by ``scaling="standard"``), then the one-hot columns."""
        check_is_fitted(self, "feature_names_out_")
        pd = _pandas()
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"TablePreprocessor takes a pandas DataFrame, got {type(frame).__name__}")
        frame = _string_columns(frame)
        absent = [c for c in self.numeric_columns_ + self.categorical_columns_ if c not in frame.columns]
        if absent:
            raise ValueError(f"column(s) {', '.join(repr(c) for c in absent)} missing from the data")
        self._check_missing(frame[self.numeric_columns_ + self.categorical_columns_])
        parts = []
        if self.numeric_columns_:
            try:
                values = frame[self.numeric_columns_].to_numpy(dtype=float)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"numeric column(s) {self.numeric_columns_} hold non-numbers ({exc})") from None
            values = np.where(np.isnan(values), self.fill_, values)
            parts.append((values - self.mean_) / self.scale_)
        for column, fill, categories in zip(self.categorical_columns_, self.category_fill_, self.categories_):
            values = _as_text(frame[column]).fillna(fill).to_numpy()
            onehot = values[:, None] == np.asarray(categories, dtype=object)[None, :]
            unseen = ~onehot.any(axis=1)
            if unseen.any():
                warnings.warn(f"column {column!r}: {int(unseen.sum())} value(s) not seen in training "
                              f"(e.g. {values[unseen][0]!r}) encoded as no category", UserWarning, stacklevel=2)
            parts.append(onehot.astype(float))
        return np.hstack(parts) if parts else np.empty((len(frame), 0))

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "feature_names_out_")
        return np.asarray(self.feature_names_out_, dtype=object)

    def describe(self) -> str:
        """One line for logs and the report: what was scaled, encoded, imputed and dropped."""
        check_is_fitted(self, "feature_names_out_")
        parts = [f"{len(self.numeric_columns_)} numeric column(s)"
                 + (" standardised" if self.scaling == "standard" else ""),
                 f"{len(self.categorical_columns_)} categorical column(s) one-hot encoded "
                 f"({sum(len(c) for c in self.categories_)} columns)"]
        if self.scaler_ is not None:
            parts.append(f"every column {self.scaler_.what()}")
        parts.append(f"missing values imputed ({self.impute or 'median'} / most frequent)" if self.impute
                     else "no missing values allowed")
        if self.dropped_columns_:
            parts.append(f"{len(self.dropped_columns_)} constant column(s) dropped: {_names(self.dropped_columns_)}")
        return "; ".join(parts)

    # -- storage without pickle ------------------------------------------------------------------
    def to_json(self) -> dict:
        check_is_fitted(self, "feature_names_out_")
        return {"kind": "table", "impute": self.impute, "columns": [str(c) for c in self.feature_names_in_],
                "numeric": [str(c) for c in self.numeric_columns_], "fill": self.fill_.tolist(),
                "mean": self.mean_.tolist(), "scale": self.scale_.tolist(),
                "categorical": [str(c) for c in self.categorical_columns_],
                "category_fill": self.category_fill_, "categories": self.categories_,
                "dropped": [str(c) for c in self.dropped_columns_], "scaling": self.scaling,
                "scaler": None if self.scaler_ is None else self.scaler_.to_json()}

    @classmethod
    def from_json(cls, state: dict) -> "TablePreprocessor":
        from leansvm.preprocessing.scaling import FeatureScaler

        # files written before the scaling was a choice z-scored the numeric columns
        prep = cls(impute=state["impute"], scaling=state.get("scaling", "standard"))
        prep.scaler_ = None if state.get("scaler") is None else FeatureScaler.from_json(state["scaler"])
        prep.numeric_columns_, prep.categorical_columns_ = list(state["numeric"]), list(state["categorical"])
        prep.fill_, prep.mean_, prep.scale_ = (np.asarray(state[k], dtype=float) for k in ("fill", "mean", "scale"))
        prep.category_fill_, prep.categories_ = list(state["category_fill"]), [list(c) for c in state["categories"]]
        prep.dropped_columns_ = list(state["dropped"])
        n_numeric = len(prep.numeric_columns_)
        if not (len(prep.fill_) == len(prep.mean_) == len(prep.scale_) == n_numeric) or \
                not (len(prep.categories_) == len(prep.categorical_columns_) == len(prep.category_fill_)):
            raise ValueError("inconsistent preprocessing (column and statistic counts differ)")
        prep.feature_names_out_ = prep.numeric_columns_ + [
            f"{c}={v}" for c, cats in zip(prep.categorical_columns_, prep.categories_) for v in cats]
        prep.feature_names_in_ = np.asarray(state["columns"], dtype=object)
        prep.n_features_in_ = len(prep.feature_names_in_)
        return prep
