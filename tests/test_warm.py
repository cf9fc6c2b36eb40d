"""Compiling ahead of use: citekit.warmup(processes=...) and citekit._warm."""

import json
import logging
import os
import subprocess
import sys
import threading
import time

import pytest

import citekit
from citekit import _compiling, _jit, _warm


class FakeChild:
    def __init__(self, running=False):
        self.running = running
        self.killed = False

    def wait(self, timeout=None):
        self.running = False
        return 0

    def poll(self):
        return None if self.running else 0

    def kill(self):
        self.killed = True
        self.running = False


@pytest.fixture
def recorded(monkeypatch):
    """Record the shares started in other processes and warmed here (no compiling)."""
    calls = {"started": [], "warmed": [], "children": []}

    def start_share(names, env=None):
        calls["started"].append(tuple(names))
        child = FakeChild()
        calls["children"].append(child)
        return child

    monkeypatch.setattr(_warm, "start_share", start_share)
    monkeypatch.setattr(_warm, "warm_modules", lambda names: calls["warmed"].append(tuple(names)))
    monkeypatch.setattr(_jit, "CACHE", True)
    return calls


def test_shares_name_every_kernel_module_once():
    names = [name for share in _warm.SHARES for name in share]
    assert len(names) == len(set(names))
    kernel_modules = {"citekit.kernels", "citekit.kernels._retrieval", "citekit.kernels._segment"}
    assert kernel_modules <= set(names)
    for name in names:
        __import__(name)
        assert callable(getattr(sys.modules[name], "warmup"))


@pytest.mark.parametrize("processes", [2, 3, 8])
def test_warm_delegates_the_other_shares_then_loads_them(recorded, processes):
    _warm.warm(processes)
    assert recorded["started"] == list(_warm.SHARES[1:])
    # this process: its own share while the others compile, then theirs (from the cache)
    assert recorded["warmed"] == [_warm.SHARES[0], *_warm.SHARES[1:]]


def test_warm_in_one_process_starts_none(recorded):
    _warm.warm(1)
    assert recorded["started"] == []
    assert recorded["warmed"] == list(_warm.SHARES)


def test_warm_without_the_disk_cache_compiles_here(recorded, monkeypatch):
    monkeypatch.setattr(_jit, "CACHE", False)
    _warm.warm(2)
    assert recorded["started"] == []
    assert recorded["warmed"] == list(_warm.SHARES)


def test_an_interrupted_warm_stops_its_children(monkeypatch):
    child = FakeChild(running=True)
    monkeypatch.setattr(_jit, "CACHE", True)
    monkeypatch.setattr(_warm, "start_share", lambda names, env=None: child)

    def interrupted(names):
        raise KeyboardInterrupt

    monkeypatch.setattr(_warm, "warm_modules", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _warm.warm(2)
    assert child.killed


@pytest.mark.parametrize(
    "processes, error",
    [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError)],
)
def test_warmup_rejects_bad_processes(processes, error):
    with pytest.raises(error, match="processes"):
        citekit.warmup(processes=processes)


def test_warmup_in_two_processes_leaves_every_kernel_ready():
    citekit.warmup(processes=2)
    from citekit.pipeline import align_citations

    result = align_citations("Revenue grew 15%.", ["Revenue grew 15% in 2024."])
    assert result[0].status == "supported"


# Run in a fresh process: warmup(), then the pipeline's paths on inputs that reach the
# kernels a tiny input does not (a corpus of 8,192 passages or more keeps the frequent
# columns' bits and shares its queries among threads; a contradicted value; inflected
# words; sources given directly); print how many kernel overloads each step added.
_NOTHING_LEFT_SCRIPT = r"""
import json, sys
from numba.core.registry import CPUDispatcher
import citekit
from citekit.pipeline import Pipeline, align_citations

def overloads():
    total = 0
    for name, module in list(sys.modules.items()):
        if name.startswith("citekit") and module is not None:
            for value in vars(module).values():
                if isinstance(value, CPUDispatcher):
                    total += len(value.overloads)
                    if getattr(value, "_entry", None) is not None:  # (its Python twin)
                        total += len(value._entry.overloads)
    return total

citekit.warmup()
added = {}
before = overloads()
docs = [
    f"Report {i} says revenue grew {i % 90}% to ${i},000. The team in city {i % 37} hired "
    f"{i % 13} engineers. Prices of the product rose by {i % 7} percent."
    for i in range(3000)
]
pipe = Pipeline()
corpus = pipe.prepare(docs)
assert corpus.n_passages >= 8192, corpus.n_passages
pipe.align_many(
    [
        "Report 12 says revenue grew 12% to $12,000. The team hired 12 engineers.",
        "Prices of the product rose by 3 percent, and the team in city 5 hired engineers.",
    ],
    corpus,
)
added["large corpus"] = overloads() - before
before = overloads()
align_citations("Revenue grew 15% to $1,200.", ["Sales rose.", "Revenue grew 12% to $1,200."])
align_citations("Engineers tested bridges.", ["An engineer tests a bridge, testing bridges."])
added["contradicted value, inflections"] = overloads() - before
print(json.dumps(added))
"""


def test_warmup_leaves_nothing_to_compile_for_the_pipeline():
    env = _compiling.child_environment()
    env.pop("NUMBA_NUM_THREADS", None)
    done = subprocess.run(
        [sys.executable, "-c", _NOTHING_LEFT_SCRIPT], env=env, capture_output=True, text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    added = json.loads(done.stdout.strip().splitlines()[-1])
    assert added == {"large corpus": 0, "contradicted value, inflections": 0}


def _environment(cache_dir):
    env = _compiling.child_environment()
    env["NUMBA_CACHE_DIR"] = str(cache_dir)
    return env


@pytest.mark.skipif(not _jit.CACHE, reason="numba's on-disk cache is off")
def test_a_started_share_compiles_into_the_disk_cache(tmp_path):
    child = _warm.start_share(["citekit.kernels._index"], _environment(tmp_path))
    assert child.wait(timeout=600) == 0
    assert list(tmp_path.rglob("*_corpus_kernel*.nbi"))


@pytest.mark.skipif(not _jit.CACHE, reason="numba's on-disk cache is off")
def test_cache_is_cold_on_an_empty_cache(tmp_path):
    code = "from citekit._warm import cache_is_cold; print(cache_is_cold())"
    cold = subprocess.run(
        [sys.executable, "-c", code], env=_environment(tmp_path), capture_output=True,
        text=True, check=True,
    )
    assert cold.stdout.strip() == "True"


def test_cache_is_not_cold_without_the_disk_cache(monkeypatch):
    monkeypatch.setattr(_jit, "CACHE", False)
    assert _warm.cache_is_cold() is False


def test_child_environment_puts_this_citekit_first():
    env = _compiling.child_environment()
    root = os.path.dirname(os.path.dirname(os.path.abspath(citekit.__file__)))
    assert env["PYTHONPATH"].split(os.pathsep)[0] == root


def test_warm_compiles_here_when_no_process_starts(recorded, monkeypatch):
    def cannot_start(names, env=None):
        raise OSError("no interpreter")

    monkeypatch.setattr(_warm, "start_share", cannot_start)
    _warm.warm(2)
    assert recorded["warmed"] == list(_warm.SHARES)


def test_batch_workers_find_a_cold_cache_compiled_once(monkeypatch):
    from citekit import batch

    warmed = []
    monkeypatch.setattr(_warm, "cache_is_cold", lambda: True)
    monkeypatch.setattr(_warm, "warm", lambda processes: warmed.append(processes))
    records = [{"id": "a", "answer": "Revenue grew 15%.", "sources": ["Revenue grew 15%."]}]
    results = batch.score_records(records, n_jobs=2, show_progress=False)
    assert warmed == [2]
    assert results[0].ok and results[0].result[0].status == "supported"


# ------------------------------------------------------------------ the compile notice


class FakeBar:
    def __init__(self, total):
        self.total = total
        self.n = 0
        self.closed = False

    def update(self, n):
        self.n += n

    def close(self):
        self.closed = True


@pytest.fixture
def compiling(monkeypatch):
    """A fresh notice state whose bar is a FakeBar (closed at once when idle)."""
    state = _compiling._Compiling()
    state.IDLE_SECONDS = 0.0
    bars = []

    def kernel_bar(total):
        bars.append(FakeBar(total))
        return bars[-1]

    monkeypatch.setattr(_compiling, "_COMPILING", state)
    monkeypatch.setattr(_compiling, "_kernel_bar", kernel_bar)
    return state, bars


def _wait_closed(state):
    if state.closer is not None:
        state.closer.join(timeout=10)


def test_the_first_compilation_logs_the_notice_once(compiling, caplog):
    state, bars = compiling
    with caplog.at_level(logging.WARNING, logger="citekit.compile"):
        _compiling.compile_started()  # a kernel
        _compiling.compile_started()  # its callee
        _compiling.compile_finished()
        _compiling.compile_finished()
        _wait_closed(state)
        _compiling.compile_started()  # a later call's kernel
        _compiling.compile_finished()
    notices = [r for r in caplog.records if r.name == "citekit.compile"]
    assert len(notices) == 1 and notices[0].levelno == logging.WARNING
    assert notices[0].getMessage() == _compiling.compile_notice()
    # a bar per burst of compiling, counting kernels, closed when it ends
    assert [bar.n for bar in bars] == [2, 1]
    _wait_closed(state)
    assert all(bar.closed for bar in bars)


def test_the_bar_grows_when_a_call_compiles_more_than_expected(compiling, monkeypatch):
    state, bars = compiling
    monkeypatch.setattr(_compiling, "_FIRST_CALL_KERNELS", 3)
    _compiling.compile_started()
    for _ in range(5):
        _compiling.compile_started()
        _compiling.compile_finished()
        assert bars[0].n < bars[0].total
    _compiling.compile_finished()
    _wait_closed(state)
    assert bars[0].n == 6 and bars[0].closed


def test_no_bar_where_none_can_be_seen(monkeypatch):
    state = _compiling._Compiling()
    monkeypatch.setattr(_compiling, "_COMPILING", state)
    monkeypatch.setattr(_compiling.LOGGER, "disabled", True)
    _compiling.compile_started()  # (tests run without a terminal: _kernel_bar gives None)
    _compiling.compile_finished()
    assert state.announced and state.bar is None and state.count == 1


def test_the_notice_says_what_happens_for_how_long_and_what_to_do(monkeypatch):
    monkeypatch.setattr(_compiling, "helper_processes", lambda: 2)
    notice = _compiling.compile_notice(cache=True)
    assert f"about {_compiling.FIRST_CALL_SECONDS} s" in notice
    assert "empty cache" in notice and "citekit warmup" in notice
    monkeypatch.setattr(_compiling, "helper_processes", lambda: 1)  # (no helper: longer)
    assert f"about {_compiling.FIRST_CALL_SECONDS_ONE_PROCESS} s" in _compiling.compile_notice()
    monkeypatch.setattr(_compiling, "helper_processes", lambda: 2)
    notice = _compiling.compile_notice(cache=False)
    assert "CITEKIT_NUMBA_CACHE=0" in notice
    assert f"about {_compiling.FIRST_CALL_SECONDS_ONE_PROCESS} s" in notice


def test_warm_announces_itself_not_the_advice_to_warm_up(compiling, monkeypatch, caplog):
    # warm() is what the first call's notice advises: its own notice says what it does
    state, _ = compiling
    seen = []
    monkeypatch.setattr(_warm, "_warm_all", lambda processes: (
        seen.append(state.warming), _compiling.compile_started(), _compiling.compile_finished()))
    with caplog.at_level(logging.WARNING, logger="citekit.compile"):
        _warm.warm(1)
    (notice,) = [r.getMessage() for r in caplog.records if r.name == "citekit.compile"]
    assert seen == [True] and not state.warming
    assert notice == _compiling.compile_notice(warming=True)
    assert "every kernel" in notice and "citekit warmup" not in notice
    assert f"about {_compiling.WARM_SECONDS} s" in notice


# ------------------------------------------------------------------ citekit warmup


def test_the_warmup_command_compiles_in_the_processes_asked(monkeypatch, capsys):
    from citekit import cli

    asked = []
    monkeypatch.setattr(_warm, "warm", asked.append)
    assert cli.main(["warmup", "--processes", "1"]) == 0
    assert cli.main(["warmup"]) == 0
    assert asked == [1, min(2, os.cpu_count() or 1)]
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and all(line.startswith("citekit warmup: every kernel") for line in out)


@pytest.mark.parametrize("processes", ["0", "-2"])
def test_the_warmup_command_rejects_fewer_than_one_process(monkeypatch, capsys, processes):
    from citekit import cli

    monkeypatch.setattr(_warm, "warm", lambda processes: pytest.fail("warmed"))
    assert cli.main(["warmup", "--processes", processes]) == 2
    assert "--processes must be at least 1" in capsys.readouterr().err


def test_the_warmup_command_rejects_a_non_integer(capsys):
    from citekit import cli

    # (the command line's errors are one line and exit status 2, without SystemExit)
    assert cli.main(["warmup", "--processes", "two"]) == 2
    assert "--processes" in capsys.readouterr().err


# ------------------------------------------------------------------ the helper process


def test_the_first_call_manifest_matches_the_pipeline():
    """Every kernel the manifest lists is one the first align_citations calls from Python,
    with the listed argument types (a stale list would only cost time)."""
    from citekit._first_call import KERNELS
    from citekit._jit import entry, parse_type_spec
    from citekit.pipeline import align_citations

    align_citations("Revenue grew 15% in 2024.", ["Revenue grew 15% in 2024."])
    assert {share for share, _, _ in KERNELS} == {0, 1}
    for _, name, specs in KERNELS:
        module_name, kernel_name = name.split(":")
        kernel = getattr(__import__(module_name, fromlist=[kernel_name]), kernel_name)
        assert tuple(parse_type_spec(spec) for spec in specs) in entry(kernel).signatures, name


class FakeHelper:
    def __init__(self):
        self.killed = False

    def poll(self):
        return None

    def kill(self):
        self.killed = True

    def wait(self, timeout=None):
        return 0


@pytest.fixture
def helper(monkeypatch):
    """A fresh helper state; Popen records its command and returns a FakeHelper."""
    from citekit import _first_call

    state = _compiling._Helper()
    state.allowed = True
    started = []
    kernels = (
        (0, "m:first", ("int64",)),
        (1, "m:second", ("int64",)),
        (1, "m:late", ("int64",)),
        (1, "m:late", ("float64",)),
    )

    def popen(command, **options):
        started.append((command, options["env"]))
        return FakeHelper()

    monkeypatch.setattr(_compiling, "_HELPER", state)
    monkeypatch.setattr(_first_call, "KERNELS", kernels)
    monkeypatch.setattr(_compiling.subprocess, "Popen", popen)
    monkeypatch.setattr(_jit, "CACHE", True)
    monkeypatch.setattr(_compiling, "helper_processes", lambda: 2)
    monkeypatch.setattr("atexit.register", lambda function: None)
    yield state, started
    state.stop()


def _held_elsewhere(directory, kernel):
    """Whether another open file description holds ``kernel``'s lock (as the helper's
    would)."""
    handle = _compiling.lock(directory, kernel, wait=False)
    if handle is None:
        return True
    handle.close()
    return False


@pytest.mark.parametrize("first", ["m:first", "m:second"])
def test_a_first_call_kernel_starts_the_helper_and_claims_itself(helper, first):
    state, started = helper
    assert _compiling.start_helper(first)
    assert len(started) == 1 and started[0][1][_compiling.HELPER_VARIABLE] == state.lock_directory
    assert "compile_listed(1)" in started[0][0][-1]
    assert state.pending == {"m:second", "m:late"} - {first}
    if first == "m:second":  # (claimed: the helper will skip it)
        assert _held_elsewhere(state.lock_directory, "m:second")
    assert not _compiling.start_helper(first)  # (once per process)


@pytest.mark.parametrize("case", ["other kernel", "not allowed", "no cache", "one process"])
def test_no_helper_when_it_cannot_help(helper, monkeypatch, case):
    state, started = helper
    kernel = "m:first"
    if case == "other kernel":
        kernel = "m:unlisted"  # (a call that is not an align_citations)
    elif case == "not allowed":
        state.allowed = False
    elif case == "one process":
        monkeypatch.setattr(_compiling, "helper_processes", lambda: 1)
    assert not _compiling.start_helper(kernel, cache=case != "no cache")
    assert started == [] and state.pending == set()


def test_a_kernel_the_helper_has_not_reached_is_claimed_here(helper):
    state, _ = helper
    _compiling.start_helper("m:first")
    _compiling.await_helper("m:late")
    assert "m:late" not in state.pending
    assert _held_elsewhere(state.lock_directory, "m:late")  # (the helper skips it)
    _compiling.await_helper("m:first")  # (not the helper's: nothing to claim)
    assert not _held_elsewhere(state.lock_directory, "m:first")


def test_a_kernel_the_helper_is_compiling_is_waited_for(helper):
    state, _ = helper
    _compiling.start_helper("m:first")
    compiling = _compiling.lock(state.lock_directory, "m:late", wait=False)  # (the helper's)
    released = threading.Timer(0.3, compiling.close)
    released.start()
    started = time.perf_counter()
    _compiling.await_helper("m:late")
    assert time.perf_counter() - started >= 0.25  # (returned once the helper let go)
    released.join()


def test_stopping_the_helper_kills_it_and_cleans_up(helper):
    state, _ = helper
    _compiling.start_helper("m:first")
    directory = state.lock_directory
    _compiling.await_helper("m:late")
    state.stop()
    assert state.process.killed and state.pending == set() and state.held == []
    assert not os.path.exists(directory)


def test_compile_listed_compiles_its_share_last_first_and_skips_claimed(
    monkeypatch, tmp_path
):
    from citekit import _first_call
    from citekit.kernels import _copy

    compiled = []

    class Recording:
        def __init__(self, name):
            self.name = name

        def compile(self, signature):
            compiled.append((self.name, tuple(str(t) for t in signature)))

    for name in ("copy_range", "copy_rows", "gather_ranges_kernel"):
        monkeypatch.setattr(_copy, name, Recording(name))
    monkeypatch.setattr(_first_call, "KERNELS", (
        (0, "citekit.kernels._copy:gather_ranges_kernel", ("int64[1C]",)),  # another share
        (1, "citekit.kernels._copy:copy_range", ("float64[1C]", "int64")),
        (1, "citekit.kernels._copy:copy_rows", ("int64[2C]",)),
        (1, "citekit.kernels._copy:no_such_kernel", ("int64",)),  # skipped
    ))
    monkeypatch.setenv(_compiling.HELPER_VARIABLE, str(tmp_path))
    _warm.compile_listed(1)
    assert compiled == [
        ("copy_rows", ("array(int64, 2d, C)",)),
        ("copy_range", ("array(float64, 1d, C)", "int64")),
    ]
    compiled.clear()
    claimed = _compiling.lock(str(tmp_path), "citekit.kernels._copy:copy_rows", wait=False)
    _warm.compile_listed(1)
    claimed.close()
    assert compiled == [("copy_range", ("array(float64, 1d, C)", "int64"))]


@pytest.mark.parametrize("value, expected", [("1", 1), ("2", 2), ("0", 1), ("many", 1)])
def test_helper_processes_reads_the_environment(monkeypatch, value, expected):
    monkeypatch.setenv(_compiling.PROCESSES_VARIABLE, value)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert _compiling.helper_processes() == expected


def test_warm_starts_no_helper(recorded, monkeypatch):
    state = _compiling._Helper()
    state.allowed = True
    monkeypatch.setattr(_compiling, "_HELPER", state)
    during = []
    monkeypatch.setattr(
        _warm, "_warm_all",
        lambda processes: during.append((state.allowed, _compiling._COMPILING.warming)),
    )
    _warm.warm(1)
    # no helper while warming (the warm-up shares its work out itself); as before after
    assert during == [(False, True)]
    assert state.allowed and not _compiling._COMPILING.warming
