"""Independent problems in parallel threads (core.threads.run_parallel): results in order, and a
run given up (an error, a Ctrl-C in the caller) stops its running jobs instead of waiting."""

import os
import signal
import threading
import time

import pytest

from leansvm.core import threads


def _spin_until_cancelled(started, limit_s=60.0):
    """A long job (up to a minute, so that a failing test cannot hang), checking for cancellation
    as a solver does per iteration."""
    started.set()
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        threads.check_cancelled()
        time.sleep(0.001)
    return "ran to its end"


def _job_threads():
    return [t for t in threading.enumerate() if t.name.startswith("leansvm-job")]


def _wait_for_no_job_threads(limit_s=30.0):
    end = time.monotonic() + limit_s
    while _job_threads() and time.monotonic() < end:
        time.sleep(0.01)
    return _job_threads()


def test_results_come_back_in_job_order_from_several_threads():
    seen = set()

    def job(i):
        seen.add(threading.current_thread().name)
        time.sleep(0.01)
        return i * i

    assert threads.run_parallel([(job, (i,)) for i in range(8)], n_jobs=2) == [i * i for i in range(8)]
    assert len(seen) == 2 and all(name.startswith("leansvm-job") for name in seen)
    assert threads.run_parallel([(job, (3,))], n_jobs=-1) == [9]          # one job: no thread


def test_an_error_in_one_job_cancels_the_running_ones():
    started = threading.Event()

    def failing():
        started.wait(10)
        raise ValueError("bad pair")

    with pytest.raises(ValueError, match="bad pair"):
        threads.run_parallel([(_spin_until_cancelled, (started,)), (failing, ())], n_jobs=2)
    assert _wait_for_no_job_threads(limit_s=10.0) == []


def test_ctrl_c_in_the_caller_stops_the_jobs(interactive_sigint):
    """A real SIGINT, sent from another thread while both jobs spin (the OS may hand it to any
    thread): KeyboardInterrupt reaches the caller, and both jobs stop at their next check."""
    started = [threading.Event(), threading.Event()]

    def interrupt_when_started():
        for event in started:
            event.wait(10)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_when_started, daemon=True).start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        threads.run_parallel([(_spin_until_cancelled, (s,)) for s in started], n_jobs=2)
    assert time.monotonic() - start < 30.0       # at once, not after the jobs' minute
    assert _wait_for_no_job_threads(limit_s=10.0) == []       # they stop long before their minute


def test_check_cancelled_is_a_no_op_outside_a_parallel_run():
    threads.check_cancelled()


def test_the_irwls_solver_stops_when_its_run_is_given_up(multiclass_problem):
    """The exact solver checks once per chunk: a fit in a cancelled worker raises Cancelled."""
    import leansvm
    X, y = multiclass_problem
    cancel = threading.Event()
    cancel.set()
    threads._worker.cancel = cancel
    try:
        with pytest.raises(threads.Cancelled):
            leansvm.SVC(C=10, gamma=0.5, n_jobs=1).fit(X, y)
    finally:
        threads._worker.cancel = None
    assert leansvm.SVC(C=10, gamma=0.5, n_jobs=1).fit(X, y).score(X, y) > 0.5    # the thread is clean again


def test_one_job_means_one_thread_throughout():
    """n_jobs=1: the jobs run in the caller's thread with one BLAS thread and no pool splits of
    kernel blocks (a one-thread comparison); after it, both are back."""
    def inside():
        return threading.current_thread() is threading.main_thread(), threads.blas_is_single(), threads.may_split()

    assert threads.run_parallel([(inside, ()), (inside, ())], n_jobs=1) == [(True, True, False)] * 2
    assert threads.may_split() and not threads.blas_is_single()
    assert threads.run_parallel([(inside, ())], n_jobs=None) == [(True, False, True)]


def test_n_jobs_zero_is_a_clear_error(multiclass_problem):
    import leansvm
    X, y = multiclass_problem
    with pytest.raises(ValueError, match="n_jobs == 0"):
        leansvm.SVC(n_jobs=0).fit(X, y)



def test_overlapping_one_blas_thread_blocks_restore_blas_once_the_last_ends(monkeypatch):
    """Parallel jobs each hold one_blas_thread; the blocks overlap in time and end in any order. The
    limit is set once, by the first block, and restored once, when the last ends: restoring per block
    left BLAS at one thread for the rest of the process where the first block ended first (the second
    restored the one thread it had found). threadpoolctl is replaced by a recorder: OpenBLAS itself
    ignores a thread count set outside the main thread once its pool runs (threadpoolctl's README)."""
    calls = []

    class Limit:
        def restore_original_limits(self):
            calls.append("restore")

    class Controller:
        def limit(self, limits, user_api):
            calls.append(("limit", limits, user_api))
            return Limit()

    monkeypatch.setattr(threads, "_controller", Controller)
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = []

    def first():
        with threads.one_blas_thread():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second():
        first_in.wait(10)
        with threads.one_blas_thread():
            second_in.set()
            first_out.wait(10)
            seen.append((list(calls), threads.blas_is_single()))   # the first block has ended, this one is open

    workers = [threading.Thread(target=first), threading.Thread(target=second)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert seen == [([("limit", 1, "blas")], True)]
    assert calls == [("limit", 1, "blas"), "restore"] and not threads.blas_is_single()
