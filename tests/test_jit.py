"""citekit._jit's thread helpers."""

import threading

import pytest

from citekit._jit import share_work


def test_share_work_runs_on_the_caller_and_started_threads():
    before = threading.active_count()
    seen = set()
    both = threading.Barrier(3)

    def work():
        seen.add(threading.get_ident())
        both.wait(timeout=30)  # the three run at once

    share_work(3, work)
    assert threading.get_ident() in seen and len(seen) == 3
    assert threading.active_count() == before  # the call's threads are gone


def test_share_work_on_one_thread_runs_inline():
    seen = []
    share_work(1, lambda: seen.append(threading.get_ident()))
    share_work(0, lambda: seen.append(threading.get_ident()))
    assert seen == [threading.get_ident()] * 2


@pytest.mark.parametrize("failing", ["caller", "other"])
def test_share_work_raises_an_error_of_any_thread_after_all_returned(failing):
    caller = threading.get_ident()
    finished = []

    def work():
        on_caller = threading.get_ident() == caller
        if on_caller == (failing == "caller"):
            raise ValueError(failing)
        finished.append(on_caller)

    with pytest.raises(ValueError, match=failing):
        share_work(2, work)
    assert finished == [failing == "other"]
