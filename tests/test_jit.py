"""citekit._jit's thread helpers."""

import threading

import pytest

from citekit._jit import share_work


def test_share_work_runs_every_item_once_on_the_caller_and_started_threads():
    before = threading.active_count()
    threads = {}
    three = threading.Barrier(3)

    def task(item):
        threads[item] = threading.get_ident()
        if item < 3:
            three.wait(timeout=30)  # items 0-2 run at once, so on three threads

    share_work(3, 10, task)
    assert sorted(threads) == list(range(10))
    assert len(set(threads.values())) == 3 and threading.get_ident() in threads.values()
    assert threading.active_count() == before  # the call's threads are gone


@pytest.mark.parametrize("n_workers, n_items", [(1, 4), (0, 2), (4, 1), (3, 0)])
def test_share_work_on_one_worker_or_item_runs_on_the_caller(n_workers, n_items):
    before = threading.active_count()
    seen = []
    share_work(n_workers, n_items, lambda item: seen.append((item, threading.get_ident())))
    assert seen == [(item, threading.get_ident()) for item in range(n_items)]
    assert threading.active_count() == before


@pytest.mark.parametrize("failing", ["caller", "other"])
def test_share_work_raises_an_error_of_any_thread_once_all_returned(failing):
    caller = threading.get_ident()
    finished = []
    both = threading.Barrier(2)

    def task(item):
        both.wait(timeout=30)  # one item on each thread
        on_caller = threading.get_ident() == caller
        if on_caller == (failing == "caller"):
            raise ValueError(failing)
        finished.append(on_caller)

    with pytest.raises(ValueError, match=failing):
        share_work(2, 2, task)
    assert finished == [failing == "other"]
