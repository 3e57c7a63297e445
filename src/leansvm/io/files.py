"""Atomic writes, and how much memory a reader may allocate for a file.

Every writer of :mod:`leansvm.io` is atomic: it writes a temporary file in the
target's folder and renames it over the target, so a failed write leaves an
existing file intact. Every reader checks its declared counts against a
budget proportional to the file's size before allocating.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading

from leansvm import interrupts

#: Readers refuse a file whose arrays would need more than
#: ``max(MIN_MODEL_BYTES, MODEL_BYTES_PER_FILE_BYTE * file size)`` bytes (or the
#: ``max_bytes`` passed to the reader): declared counts can never make a small
#: file allocate gigabytes (deflate alone compresses zeros ~1000:1).
MIN_MODEL_BYTES = 256 * 2**20
MODEL_BYTES_PER_FILE_BYTE = 64


# -- atomic writes ---------------------------------------------------------------------
_umask_lock = threading.Lock()
_umask_cache: list[int] = []


def _new_file_mode(path: str) -> int:
    """Mode of an existing ``path``, else 0o666 minus the process umask (as ``open`` would)."""
    with contextlib.suppress(OSError):
        return os.stat(path).st_mode & 0o7777
    with _umask_lock:
        if not _umask_cache:
            mask = os.umask(0o022)
            os.umask(mask)
            _umask_cache.append(mask)
    return 0o666 & ~_umask_cache[0]


@contextlib.contextmanager
def atomic_write(path, mode: str = "w", encoding: str | None = "ascii"):
    """Open a temporary file next to ``path``; on success rename it onto ``path``.

    On any exception the temporary file is removed and ``path`` is untouched.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _new_file_mode(path))
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, KeyboardInterrupt):
            interrupts.add_context(exc, f"{path} not written")
        raise



# -- memory budget of the readers -------------------------------------------------------------
def _memory_budget(path, max_bytes=None) -> int:
    """Bytes a reader may allocate for ``path``: ``max_bytes``, else proportional to the file size."""
    if max_bytes is not None:
        return int(max_bytes)
    return max(MIN_MODEL_BYTES, MODEL_BYTES_PER_FILE_BYTE * os.path.getsize(path))


def _check_budget(path, what: str, n_bytes: int, budget: int):
    if n_bytes > budget:
        raise ValueError(f"{os.fspath(path)}: {what} would need {n_bytes / 2**20:.1f} MB, more than the "
                         f"{budget / 2**20:.0f} MB this {os.path.getsize(path)}-byte file may use "
                         "(corrupt or hostile counts? pass max_bytes= to allow it)")
