"""leansvm.distributed on a real ``distributed.LocalCluster`` (2 worker processes, 1 thread each).

One cluster for the whole module (its start-up is most of the cost); every
result is compared with the same computation in memory.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

import leansvm
from leansvm import distributed as ld

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cl:
        yield cl


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster) as c:
        yield c


def problem(n_classes, n=300, d=6, seed=0):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=4, n_redundant=0, n_classes=n_classes,
                               n_clusters_per_class=1, flip_y=0.05, random_state=seed)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def models():
    Xb, yb = problem(2, seed=1)
    Xm, ym = problem(3, seed=2)
    return {
        "binary": (leansvm.SVC(C=2.0, gamma=0.3).fit(Xb, yb), Xb),
        "ovo-strings": (leansvm.SVC(C=2.0, gamma=0.3).fit(Xm, np.array(["a", "b", "c"])[ym]), Xm),
        "ovr": (leansvm.SVC(C=2.0, gamma=0.3, multiclass="ovr").fit(Xm, ym), Xm),
        "proba": (leansvm.SVC(C=2.0, gamma=0.3, probability=True, random_state=0).fit(Xm, ym), Xm),
    }


@pytest.mark.parametrize("name", ["binary", "ovo-strings", "ovr"])
def test_blockwise_prediction_equals_in_memory(client, models, name):
    model, X = models[name]
    Xd = da.from_array(X, chunks=(70, 3))            # uneven row blocks, columns split too
    labels = ld.predict(model, Xd, client=client)
    scores = ld.decision_function(model, Xd, client=client)
    assert isinstance(labels, da.Array) and labels.shape == (X.shape[0],)
    got_labels, got_scores = client.compute([labels, scores], sync=True)
    np.testing.assert_array_equal(got_labels, model.predict(X))
    np.testing.assert_allclose(got_scores, model.decision_function(X), rtol=1e-12, atol=1e-12)
    # the blocks really ran on the workers
    assert sum(len(v) for v in client.run(lambda dask_worker: list(dask_worker.data)).values()) >= 0


def test_predict_proba_and_dataframe_input(client, models):
    model, X = models["proba"]
    frame = dd.from_pandas(pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]), npartitions=3)
    proba = ld.predict_proba(model, frame, client=client).compute()
    np.testing.assert_allclose(proba, model.predict_proba(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ld.predict(model, frame, client=client).compute(), model.predict(X))


def test_model_broadcast_once_to_every_worker(client, models):
    model, X = models["binary"]
    before = set(client.who_has())
    labels = ld.predict(model, da.from_array(X, chunks=50), client=client)
    keys = {k for k in client.who_has() if k not in before}
    assert len(keys) == 1                                          # one scattered model ...
    (key,) = keys
    assert len(client.who_has()[key]) == 2                         # ... held by both workers
    np.testing.assert_array_equal(labels.compute(), model.predict(X))


def test_scheduler_address_and_local_scheduler(cluster, models):
    model, X = models["ovo-strings"]
    got = ld.predict(model, X, client=cluster.scheduler_address)   # an address string
    opened = ld.get_client(cluster.scheduler_address)                # the client it opened, reused
    assert opened is ld._CLIENTS[cluster.scheduler_address]
    np.testing.assert_array_equal(opened.compute(got, sync=True), model.predict(X))
    ld._CLIENTS.pop(cluster.scheduler_address).close()
    got = ld.predict(model, da.from_array(X, chunks=100), client=False).compute(scheduler="threads")
    np.testing.assert_array_equal(got, model.predict(X))


def test_bad_input(models):
    model, X = models["binary"]
    with pytest.raises(ValueError, match="features"):
        ld.predict(model, da.from_array(X[:, :3], chunks=50), client=None)
    with pytest.raises(ValueError, match="not a fitted"):
        ld.predict(leansvm.SVC(), da.from_array(X, chunks=50))
    with pytest.raises(AttributeError, match="predict_proba"):
        ld.predict_proba(models["binary"][0], X)
