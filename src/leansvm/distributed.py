"""Dask: blockwise prediction, distributed budget training, parallel model selection.

Everything here runs on any Dask scheduler: a ``distributed.Client`` (pass it,
or its scheduler address ``"tcp://host:8786"`` as ``client=``), the default
client when one exists, else Dask's local threaded scheduler.

Prediction (:func:`predict`, :func:`decision_function`, :func:`predict_proba`)
takes any fitted leansvm classifier (anything with ``expansion_`` and the
:class:`~leansvm.estimators.KernelClassifierMixin` methods) and a
``dask.array`` (n x d, any row chunks), a ``dask.dataframe`` or a NumPy array.
The model is sent to the cluster once (``client.scatter(broadcast=True)``,
or one ``dask.delayed`` key without a client) and every row block is
predicted on a worker by the model's own method, so results equal in-memory
prediction row by row. Results are lazy ``dask.array`` objects: compute
them with the client that predicted (``client.compute(result)``, or
``result.compute()`` when it is the default client; the scattered model
belongs to that client), or store them with ``dask.array.to_zarr`` & co.

``pip install 'leansvm[dask]'``; Dask is imported only when these are used.
"""

from __future__ import annotations

import numpy as np

__all__ = ["predict", "decision_function", "predict_proba", "get_client", "as_dask_array"]


# -- plumbing -----------------------------------------------------------------------------
def _require_dask():
    try:
        import dask  # noqa: F401
        import dask.array  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("leansvm.distributed needs Dask: pip install 'leansvm[dask]'") from exc


#: clients this module opened for scheduler addresses (kept open: scattered models live with them)
_CLIENTS: dict = {}


def get_client(client=None):
    """A ``distributed.Client``: ``client`` itself; for an address string, a client connected to it
    (opened once and kept; compute results with it: ``get_client(address).compute(result)``); when ``client`` is None the default client if one exists, else None (Dask's
    local scheduler). ``client=False``: None, whatever clients exist (for ``compute(scheduler='threads')``)."""
    if client is False:
        return None
    if client is None:
        try:
            from distributed import default_client
            return default_client()
        except (ImportError, ValueError):
            return None
    if isinstance(client, str):
        found = _CLIENTS.get(client)
        if found is None or found.status in ("closing", "closed"):
            from distributed import Client
            found = _CLIENTS[client] = Client(client)
        return found
    return client


def as_dask_array(X, chunk_rows: int = 100_000):
    """X as a 2-D ``dask.array`` chunked by rows only (dask/pandas data frames, NumPy arrays)."""
    _require_dask()
    import dask.array as da

    if hasattr(X, "to_dask_array") and not isinstance(X, da.Array):      # dask DataFrame
        X = X.to_dask_array()
    elif not isinstance(X, da.Array):
        if hasattr(X, "to_numpy"):                                        # pandas
            X = X.to_numpy()
        X = np.asarray(X)
        X = da.from_array(X, chunks=(min(chunk_rows, max(X.shape[0], 1)), X.shape[1] if X.ndim == 2 else -1))
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (samples x features), got {X.ndim} dimension(s)")
    if len(X.chunks[1]) > 1:                                              # whole rows per block
        X = X.rechunk({1: -1})
    return X


def _check_model(model, method):
    if not hasattr(model, "expansion_") or not hasattr(model, "classes_"):
        raise ValueError(f"{type(model).__name__} is not a fitted leansvm classifier (no expansion_/classes_)")
    if not callable(getattr(model, method, None)):
        raise AttributeError(f"{type(model).__name__} has no {method}")


def _broadcast(model, client):
    """One handle on the model for all blocks: a scattered future, or one delayed key."""
    if client is not None:
        return client.scatter(model, broadcast=True, hash=False)
    import dask
    return dask.delayed(model, pure=True, traverse=False)


def _apply_block(block, model, method, empty):
    """``model.<method>(block)`` for one row block (runs on a worker); ``empty`` for 0 rows."""
    if block.shape[0] == 0:
        return empty
    return np.asarray(getattr(model, method)(block))


def _output_meta(model, method, n_features):
    """(dtype, number of columns or None for 1-D) of the method's output, from one zero row."""
    probe = np.asarray(getattr(model, method)(np.zeros((1, n_features))))
    return probe.dtype, (None if probe.ndim == 1 else probe.shape[1])


def _blockwise(model, X, method, client):
    _require_dask()
    _check_model(model, method)
    X = as_dask_array(X)
    n_features = getattr(model, "n_features_in_", model.expansion_.n_features)
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but {type(model).__name__} expects {n_features}")
    client = get_client(client)
    handle = _broadcast(model, client)
    dtype, n_out = _output_meta(model, method, n_features)
    if n_out is None:
        empty = np.empty((0,), dtype=dtype)
        return X.map_blocks(_apply_block, handle, method, empty, drop_axis=1, dtype=dtype, meta=empty)
    empty = np.empty((0, n_out), dtype=dtype)
    return X.map_blocks(_apply_block, handle, method, empty, chunks=(X.chunks[0], (n_out,)), dtype=dtype,
                        meta=empty)


# -- prediction ---------------------------------------------------------------------------
def predict(model, X, client=None):
    """Lazy ``dask.array`` of ``model.predict`` over the row blocks of X (labels as ``classes_``)."""
    return _blockwise(model, X, "predict", client)


def decision_function(model, X, client=None):
    """Lazy ``dask.array`` of ``model.decision_function`` (shape as in memory: (n,) or (n, outputs))."""
    return _blockwise(model, X, "decision_function", client)


def predict_proba(model, X, client=None):
    """Lazy ``dask.array`` of ``model.predict_proba`` (n x n_classes); the model must support it."""
    return _blockwise(model, X, "predict_proba", client)
