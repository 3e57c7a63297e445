"""Fuzzing the model readers (hypothesis): LIBSVM text files and the native ``.npz`` format.

Whatever the bytes, a reader either returns a usable model or raises a
``ValueError`` naming the file; never another exception, never a hang, and
never an allocation out of proportion to the file (declared counts are checked
against the file size before anything is allocated; peak traced memory is
asserted).
"""

import io as pyio
import json
import os
import tracemalloc
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leansvm import SVC, io

_EXPLORE = int(os.environ.get("LEANSVM_EXPLORE", "0"))
FUZZ = settings(max_examples=_EXPLORE or 60, deadline=None, derandomize=not _EXPLORE,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

#: Peak memory a reader may use on the small files fuzzed here.
SMALL_FILE_PEAK = 32 * 2**20


def _models():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y2 = (X[:, 0] > 0).astype(int)
    y3 = np.digitize(X[:, 0], [-0.4, 0.4]) * 2 - 1        # labels -1, 1, 3
    Xs = np.where(np.abs(X) > 0.8, X, 0.0)
    binary = SVC(C=1.0, gamma=0.5).fit(X, y2)
    multi = SVC(C=3.0, kernel="poly", gamma=0.3, degree=2, coef0=1.0).fit(Xs, y3)
    return X, {"binary": binary, "multi": multi}


X_TEST, MODELS = _models()


@pytest.fixture(scope="module")
def libsvm_texts(tmp_path_factory):
    out = {}
    for name, model in MODELS.items():
        path = tmp_path_factory.mktemp("valid") / f"{name}.model"
        io.save_libsvm_model(model, path)
        out[name] = path.read_bytes()
    # one with LIBSVM's Platt sigmoids
    text = out["binary"].decode().replace("nr_sv", "probA -1.5\nprobB 0.25\nnr_sv", 1)
    out["probability"] = text.encode()
    return out


@pytest.fixture(scope="module")
def native_arrays():
    """(arrays, metadata) of valid native files, built by io's own writer."""
    out = {}
    for name, model in MODELS.items():
        buf = pyio.BytesIO()
        arrays, meta = io.native._native_arrays(model)
        np.savez(buf, metadata=np.array(json.dumps(meta)), **arrays)
        out[name] = (arrays, meta, buf.getvalue())
    return out


def _check_reader(read, path, data: bytes, peak_limit=SMALL_FILE_PEAK):
    """``read(path)`` returns a working model or raises ValueError naming the file; bounded memory."""
    path.write_bytes(data)
    tracemalloc.start()
    try:
        try:
            model = read(path)
        except ValueError as exc:
            assert os.fspath(path) in str(exc) or path.name in str(exc), str(exc)
            model = None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < peak_limit, f"peak traced memory {peak / 2**20:.1f} MB for a {len(data)}-byte file"
    if model is not None:                    # what loads must predict
        d = model.n_features_in_
        if 0 < d <= 10_000:
            X = np.resize(X_TEST, (5, d))
            with np.errstate(all="ignore"):
                pred = model.predict(X)
            assert set(pred.tolist()) <= set(model.classes_.tolist())
    return model


# -- LIBSVM text files --------------------------------------------------------------------------
TOKENS = ["0", "-1", "1", "2", "3", "99999999999", "2147483647", "-2147483648", "1e999", "nan", "inf",
          "-inf", "1e-320", "0x10", "1_000", "１", "é", "", " ", ":", "1:", ":1", "1:2:3", "\x00", "rbf",
          "poly", "sigmoid", "linear", "precomputed", "rbf2", "SV", "c_svc", "nr_class", "total_sv",
          "rho", "label", "nr_sv", "probA", "probB", "gamma", "degree", "coef0", "kernel_type",
          "4096", "4097", "65536"]


@st.composite
def libsvm_mutations(draw, texts):
    name = draw(st.sampled_from(sorted(texts)))
    lines = texts[name].decode().split("\n")
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["token", "token", "delete", "duplicate", "swap", "truncate",
                                     "insert", "bytes"]))
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        if kind == "token":
            words = lines[i].split(" ")
            j = draw(st.integers(0, len(words)))
            new = draw(st.sampled_from(TOKENS))
            if j == len(words):
                words.append(new)
            else:
                words[j] = new if draw(st.booleans()) else words[j] + new
            lines[i] = " ".join(words)
        elif kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "truncate":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
            lines = lines[: i + 1]
        elif kind == "insert":
            lines.insert(i, " ".join(draw(st.lists(st.sampled_from(TOKENS), max_size=5))))
    data = "\n".join(lines).encode("utf-8")
    if draw(st.booleans()):
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + draw(st.binary(max_size=8)) + data[pos:]
    return data


def test_valid_libsvm_files_load(libsvm_texts, tmp_path):
    for name, data in libsvm_texts.items():
        model = _check_reader(io.load_libsvm_model, tmp_path / f"{name}.model", data)
        assert model is not None, name


@FUZZ
@given(data=st.data())
def test_fuzzed_libsvm_files_load_or_raise_value_error(libsvm_texts, tmp_path, data):
    _check_reader(io.load_libsvm_model, tmp_path / "fuzzed.model", data.draw(libsvm_mutations(libsvm_texts)))


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes_are_not_a_libsvm_model(tmp_path, data):
    _check_reader(io.load_libsvm_model, tmp_path / "random.model", data)


def _header(k, total_sv, nr_sv, gamma="0.5", kernel="rbf"):
    pairs = k * (k - 1) // 2
    return "\n".join([
        "svm_type c_svc", f"kernel_type {kernel}", f"gamma {gamma}", f"nr_class {k}", f"total_sv {total_sv}",
        "rho " + " ".join(["0"] * pairs), "label " + " ".join(map(str, range(k))),
        "nr_sv " + " ".join(map(str, nr_sv)), "SV", ""])


def test_many_classes_refused_before_the_dense_coefficients_are_built(tmp_path):
    """k = 600 classes, 300 SV lines (a 1 MB file) would need a 300 x 179700 coefficient
    matrix (431 MB): refused from the counts, before it is built, with little memory."""
    k, m = 600, 300
    nr_sv = [1] * m + [0] * (k - m)
    coefs = " ".join(["0.5"] * (k - 1))
    text = _header(k, m, nr_sv) + "".join(f"{coefs} 1:1\n" for _ in range(m))
    path = tmp_path / "wide.model"
    with pytest.raises(ValueError, match=r"wide\.model: the dense coefficient matrix .* MB"):
        _check_reader_strict(io.load_libsvm_model, path, text.encode(), peak_limit=128 * 2**20)


def test_max_bytes_sets_the_budget(libsvm_texts, native_arrays, tmp_path):
    text_path = _write(tmp_path / "multi.model", libsvm_texts["multi"])
    npz_path = _write(tmp_path / "multi.npz", native_arrays["multi"][2])
    m = MODELS["multi"].expansion_.n_support
    with pytest.raises(ValueError, match=r"multi\.model: the dense coefficient matrix"):
        io.load_libsvm_model(text_path, max_bytes=8 * 3 * m - 1)
    assert io.load_libsvm_model(text_path, max_bytes=8 * 3 * m).expansion_.n_support == m
    with pytest.raises(ValueError, match=r"multi\.npz: the archive's entries would need"):
        io.load_model(npz_path, max_bytes=1000)
    assert io.load_model(npz_path, max_bytes=10**6).expansion_.n_support == m


def test_enormous_feature_index_stays_sparse(tmp_path):
    """Feature index 2^31 - 1: the model is CSR with 2^31 - 1 columns (no dense 16 GB row).

    (Predicting with it is not tested here: kernels.inner_products multiplies CSR by
    CSR.T, which scipy converts through an O(n_features) index array; reported.)
    """
    import scipy.sparse as sp

    text = _header(2, 2, [1, 1]) + "1 1:1 2147483647:2\n-1 5:1\n"
    model = _check_reader(io.load_libsvm_model, tmp_path / "far.model", text.encode())
    assert model is not None and model.n_features_in_ == 2**31 - 1
    assert sp.issparse(model.expansion_.support_vectors)
    assert model.expansion_.support_vectors.nnz == 3


@pytest.mark.parametrize("line, fragment", [
    ("total_sv 2147483647", "total_sv"),
    ("nr_class 4097", "nr_class"),
    ("nr_class 99999999999999999999", "nr_class"),
])
def test_enormous_declared_counts_fail_fast(libsvm_texts, tmp_path, line, fragment):
    key = line.split()[0]
    text = "\n".join(line if l.startswith(key + " ") else l for l in libsvm_texts["multi"].decode().split("\n"))
    path = tmp_path / "huge.model"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"huge\.model: line \d+: .*{fragment}"):
        io.load_libsvm_model(path)


# -- native .npz format -----------------------------------------------------------------------------
def _npz_bytes(arrays, meta=None, raw_meta=None, compress=False):
    buf = pyio.BytesIO()
    entries = dict(arrays)
    if raw_meta is not None or meta is not None:
        entries["metadata"] = np.array(raw_meta if raw_meta is not None else json.dumps(meta))
    (np.savez_compressed if compress else np.savez)(buf, **entries)
    return buf.getvalue()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.sampled_from([1e308, -0.0, 0.5, 1e-300])
    | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=6)


@st.composite
def native_mutations(draw, natives):
    name = draw(st.sampled_from(sorted(natives)))
    arrays, meta, raw = natives[name]
    arrays, meta = dict(arrays), json.loads(json.dumps(meta))
    kind = draw(st.sampled_from(["meta", "meta", "meta-kernel", "drop", "array", "array", "bytes", "truncate"]))
    if kind == "meta":
        key = draw(st.sampled_from(sorted(meta) + ["extra"]))
        meta[key] = draw(JSON_VALUES)
    elif kind == "meta-kernel":
        meta["kernel"][draw(st.sampled_from(["name", "gamma", "degree", "coef0"]))] = draw(
            st.sampled_from(["rbf2", "precomputed", -1, 1e308, "nan", None, [1], 2**65]))
    elif kind == "drop":
        arrays.pop(draw(st.sampled_from(sorted(arrays))))
    elif kind == "array":
        key = draw(st.sampled_from(sorted(arrays)))
        arrays[key] = draw(st.sampled_from([
            np.zeros(0), np.zeros((2, 2, 2)), np.array(["x", "y"]), np.array([np.nan, 1.0]),
            np.array([1 + 2j, 3j]), np.array([True, False]), np.full(3, np.inf), np.array(7),
            np.arange(5, dtype=np.int8), np.array([2**62, -1], dtype=np.int64), arrays[key][:1],
            np.asarray(arrays[key]).T.copy()]))
    out = _npz_bytes(arrays, meta)
    if kind == "bytes":
        pos = draw(st.integers(0, len(raw) - 1))
        out = raw[:pos] + draw(st.binary(min_size=1, max_size=8)) + raw[pos + 1:]
    elif kind == "truncate":
        out = raw[: draw(st.integers(0, len(raw) - 1))]
    return out


def test_valid_native_files_load(native_arrays, tmp_path):
    for name, (_, _, raw) in native_arrays.items():
        assert _check_reader(io.load_model, tmp_path / f"{name}.npz", raw) is not None


@FUZZ
@given(data=st.data())
def test_fuzzed_native_files_load_or_raise_value_error(native_arrays, tmp_path, data):
    _check_reader(io.load_model, tmp_path / "fuzzed.npz", data.draw(native_mutations(native_arrays)))


def _member_with_header(name, shape, descr="<f8", payload=b"\0" * 64):
    """A .npy member whose header declares ``shape`` but which holds only ``payload``."""
    buf = pyio.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return name, buf.getvalue() + payload


@pytest.mark.parametrize("shape", [(10**6, 10**6), (2**40,), (50_000, 50_000), (10**5, 3)])
def test_npy_header_with_enormous_shape_is_refused_without_allocating(native_arrays, tmp_path, shape):
    arrays, meta, _ = native_arrays["binary"]
    buf = pyio.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for key, value in arrays.items():
            if key != "coef":
                member = pyio.BytesIO()
                np.save(member, value)
                zf.writestr(key + ".npy", member.getvalue())
        zf.writestr(*_member_with_header("coef.npy", shape))
        zf.writestr("metadata.npy", _npy(np.array(json.dumps(meta))))
    with pytest.raises(ValueError, match=r"bomb\.npz"):
        _check_reader_strict(io.load_model, tmp_path / "bomb.npz", buf.getvalue())


def _npy(array):
    member = pyio.BytesIO()
    np.save(member, array)
    return member.getvalue()


def _check_reader_strict(read, path, data, peak_limit=SMALL_FILE_PEAK):
    """As _check_reader, but the ValueError propagates (the file must be refused)."""
    path.write_bytes(data)
    tracemalloc.start()
    try:
        try:
            read(path)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            assert peak < peak_limit, f"peak traced memory {peak / 2**20:.1f} MB"
    finally:
        tracemalloc.stop()


def test_zip_bomb_is_refused(native_arrays, tmp_path):
    """A deflated member of 400 MB of zeros (a ~400 kB file) is refused before it is inflated."""
    arrays, meta, _ = native_arrays["binary"]
    buf = pyio.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key, value in arrays.items():
            if key != "coef":
                zf.writestr(key + ".npy", _npy(value))
        zf.writestr("metadata.npy", _npy(np.array(json.dumps(meta))))
        header = _member_with_header("coef.npy", (50_000_000, 1), payload=b"")[1]
        with zf.open("coef.npy", "w", force_zip64=True) as member:
            member.write(header)
            chunk = b"\0" * 2**22
            for _ in range(100):
                member.write(chunk)
    assert len(buf.getvalue()) < 2 * 2**20
    with pytest.raises(ValueError, match=r"bomb\.npz.*(too large|memory|MB|GB)"):
        _check_reader_strict(io.load_model, tmp_path / "bomb.npz", buf.getvalue())


@pytest.mark.parametrize("raw_meta", ["[" * 100_000 + "]" * 100_000, '{"format": 1e999}', "{", ""])
def test_hostile_metadata_is_a_value_error(native_arrays, tmp_path, raw_meta):
    arrays, _, _ = native_arrays["binary"]
    with pytest.raises(ValueError, match=r"meta\.npz"):
        _check_reader_strict(io.load_model, tmp_path / "meta.npz", _npz_bytes(arrays, raw_meta=raw_meta))


def test_native_non_finite_support_vectors_are_refused(native_arrays, tmp_path):
    arrays, meta, _ = native_arrays["binary"]
    arrays = dict(arrays)
    sv = arrays["support_vectors"].copy()
    sv[0, 0] = np.nan
    arrays["support_vectors"] = sv
    with pytest.raises(ValueError, match=r"nan\.npz.*finite"):
        io.load_model(_write(tmp_path / "nan.npz", _npz_bytes(arrays, meta)))


def _write(path, data):
    path.write_bytes(data)
    return path
