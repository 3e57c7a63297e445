"""A model with preprocessing: a scikit-learn ``Pipeline`` of a fitted leansvm preprocessor and a
fitted kernel model.

The preprocessors are :class:`~leansvm.preprocessing.tabular.TablePreprocessor` (a table's columns: imputed,
one-hot encoded, scaled) and :class:`~leansvm.preprocessing.scaling.FeatureScaler` (a matrix's features,
scaled as svm-scale does). Each stores itself without pickle (``to_json``), so
:func:`leansvm.io.save_model` keeps it in the native ``.npz``; a ``FeatureScaler`` also writes
svm-scale's range file beside a LIBSVM model file, and ONNX export prepends it. Everything that
takes a model (files, ONNX, ``leansvm compress``) unwraps it with :func:`split_preprocessing`.
"""

from __future__ import annotations

__all__ = ["with_preprocessing", "split_preprocessing"]


def with_preprocessing(preprocessor, model):
    """The fitted ``Pipeline([("preprocess", preprocessor), ("svm", model)])``: it predicts raw
    inputs (DataFrames of the table's columns, or unscaled matrices)."""
    from sklearn.pipeline import Pipeline

    return Pipeline([("preprocess", preprocessor), ("svm", model)])


def split_preprocessing(model):
    """(preprocessor or None, kernel model) of a model made by :func:`with_preprocessing`;
    any other model comes back as (None, model)."""
    steps = getattr(model, "steps", None)
    if steps is not None and len(steps) == 2 and hasattr(steps[0][1], "to_json"):
        return steps[0][1], steps[1][1]
    return None, model
