"""Compiling citekit's kernels: saying so when it happens, and doing it ahead of use, in one
process or several at once.

The JIT compiler compiles a kernel in the process that first calls it and, with the on-disk cache
(on unless ``CITEKIT_NUMBA_CACHE=0``), stores the machine code for later processes.

Whatever starts a compilation (a library call, a command, a notebook cell), the first one in a
process says so once, with an estimate, through :mod:`logging` (logger ``citekit.compile``,
level WARNING, so that it shows without any logging set up), and, while kernels compile, a
tqdm bar counts them where one can be seen (:func:`compile_started`, called by
:mod:`citekit._jit` on numba's compile events). A logging record rather than a warning: a
test suite that turns warnings into errors must not fail because the cache happened to be
cold, and nothing is wrong -- it is news, once.

Ahead of use, :func:`warm` compiles every kernel; compilation holds the GIL, so threads cannot
share it, but processes can: each compiles a share of the modules into the cache and the caller
then loads what the others compiled.
"""

from __future__ import annotations

import importlib
import logging
import os
import subprocess
import sys
import threading
import time
from typing import Any, Sequence


__all__ = [
    "FIRST_CALL_SECONDS", "FIRST_CALL_SECONDS_ONE_PROCESS", "LOGGER", "PROCESSES_VARIABLE",
    "SHARES", "WARM_SECONDS", "add_command", "await_helper", "cache_is_cold",
    "compile_finished", "compile_listed", "compile_notice", "compile_started",
    "helper_processes", "run_command", "start_helper", "start_share", "warm", "warm_modules",
]

#: Where the compile notice goes (level WARNING; silence it with
#: ``logging.getLogger("citekit.compile").setLevel(logging.ERROR)``).
LOGGER = logging.getLogger("citekit.compile")

# Measured on an idle 2-vCPU VM (AMD EPYC, 2026-12-06), a fresh clone with an empty cache:
#: seconds the first ``align_citations`` of a fresh install spends compiling, with its
#: helper (41 s measured)
FIRST_CALL_SECONDS = 40
#: the same in one process (``CITEKIT_COMPILE_PROCESSES=1``, or the disk cache off; 81 s)
FIRST_CALL_SECONDS_ONE_PROCESS = 80
#: seconds ``citekit warmup`` took on a fresh install with two processes (164 s on an idle
#: 2-vCPU VM, 2026-12-06)
WARM_SECONDS = 165
# kernel signatures (citekit's own) the first align_citations compiles: the bar's length
_FIRST_CALL_KERNELS = 150

# The kernel modules in two shares, measured cold on a 2-core machine one module after
# another (2026-12-01, an Intel Xeon VM): retrieval 32 s, tokenizer 10 s, corpus 4 s (46 s)
# | alignment 28 s, segmenter 21 s, highlighter 8 s (58 s; the highlighter also uses the
# alignment package's LCS kernels). The caller takes the first share and then compiles
# what the modules leave (the pipeline's own stages, 11 s), so the first share is the
# lighter. Since the corpus module also builds large corpora in groups of sources its
# kernels take about 8 s more (15.5 s instead of 7.6 s alone, with the compiler's start-up); the
# whole warm-up on two processes stayed within its spread (97 s against 90 and 100 s).
SHARES: tuple[tuple[str, ...], ...] = (
    (
        "citekit.kernels._retrieval",
        "citekit.kernels._overlap",
        "citekit.tokenizers.simple",
        "citekit.kernels._index",
    ),
    ("citekit.kernels", "citekit.kernels._segment", "citekit.highlight"),
)


def warm_modules(names: Sequence[str]) -> None:
    """Run the ``warmup()`` of each module named (compiling or loading its kernels).

    Examples
    --------
    >>> warm_modules(["citekit.kernels._index"])
    """
    for name in names:
        importlib.import_module(name).warmup()


def _child_environment() -> dict[str, str]:
    """The environment of a compiling child: this one, with the directory this citekit
    was imported from first on ``PYTHONPATH`` (so the child compiles the same code)."""
    import citekit

    root = os.path.dirname(os.path.dirname(os.path.abspath(citekit.__file__)))
    env = dict(os.environ)
    paths = [root, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def start_share(names: Sequence[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start a Python process that runs :func:`warm_modules` on ``names`` (its output is
    discarded), in ``env`` (default: this environment, with this citekit first on the
    path).

    Examples
    --------
    >>> start_share(["citekit.kernels._index"]).wait()
    0
    """
    code = f"from citekit._warm import warm_modules; warm_modules({list(names)!r})"
    env = dict(_child_environment() if env is None else env)
    env[_HELPER_VARIABLE] = "1"  # (a child starts no helper of its own)
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def warm(processes: int = 1) -> None:
    """Compile (or load) every kernel, the shares of :data:`SHARES` in up to
    ``processes`` processes at once, then run the pipeline once on a tiny input.

    The other processes only fill the on-disk cache: if one fails, this process
    compiles what it left, so the result is the same either way. Without the on-disk
    cache, everything is compiled here.

    Examples
    --------
    >>> warm(1)
    """
    _HELPER.allowed = False  # (this warm-up shares its work out itself)
    _COMPILING.warming = True
    try:
        _warm_all(processes)
    finally:
        _COMPILING.warming = False


def _warm_all(processes: int) -> None:
    from citekit._jit import CACHE
    from citekit.pipeline import align_citations

    delegated = list(SHARES[1:processes]) if CACHE else []
    children = []
    for share in list(delegated):
        try:
            children.append(start_share(share))
        except OSError:  # no interpreter to start (an embedded Python): compile here
            delegated.remove(share)
    try:
        for share in SHARES:
            if share not in delegated:
                warm_modules(share)
        for child in children:
            child.wait()
    finally:
        for child in children:
            if child.poll() is None:  # interrupted: stop compiling for nobody
                child.kill()
                child.wait()
    # what the other processes compiled (loaded from the cache now; compiled here if one
    # failed), then the pipeline's own kernels
    for share in delegated:
        warm_modules(share)
    align_citations("Revenue grew 15% to $1,200.", ["Revenue grew 15% to $1,200 in 2024."])
    # (a value that the evidence contradicts takes one kernel more, and so do inflected
    # words that a passage may hold, "bridges" of "bridge")
    align_citations("Revenue grew 15% to $1,200.", ["Revenue grew 12% to $1,200 in 2024."])
    align_citations("Engineers tested bridges.", ["An engineer tests a bridge, testing bridges."])
    # (a script tokenized letter by letter takes one kernel more: runs of letters)
    align_citations("ราคาขึ้น 15%", ["ราคาขึ้น 15% ในปีนี้"])


def cache_is_cold() -> bool:
    """Whether the on-disk cache holds no machine code of the current source for the main
    alignment kernel (a fresh install, or an upgraded one; see
    :func:`citekit._jit.is_cached`).

    Examples
    --------
    >>> isinstance(cache_is_cold(), bool)
    True
    """
    from citekit._jit import is_cached
    from citekit.kernels._batch import align_worker

    return not is_cached(align_worker)


def compile_notice(warming: bool = False) -> str:
    """The line the first compilation of a process logs: what happens, for how long, what
    to do about it (``warming``: the line of :func:`warm`, which is what to do about it).

    Examples
    --------
    >>> compile_notice().startswith("citekit: compiling")
    True
    >>> "citekit warmup" in compile_notice(warming=True)
    False
    """
    from citekit._jit import CACHE

    if warming:
        return (
            "citekit: compiling every kernel into the disk cache, once after installing; "
            f"about {WARM_SECONDS} s on a 2-core machine with two processes"
        )

    seconds = FIRST_CALL_SECONDS
    if not (CACHE and helper_processes() >= 2):
        seconds = FIRST_CALL_SECONDS_ONE_PROCESS
    if CACHE:
        when = (
            "first use with an empty cache; later processes load the compiled code from the "
            "disk cache in about a second"
        )
    else:
        when = "the disk cache is off (CITEKIT_NUMBA_CACHE=0), so every process compiles"
    return (
        f"citekit: compiling the numba kernels this call needs ({when}); about "
        f"{seconds} s on a 2-core machine. Run `citekit warmup` (or "
        "citekit.warmup()) once after installing to do it ahead of time."
    )


class _Compiling:
    """This process's compile notice: said once; a bar while kernels compile, closed when
    no kernel has compiled for a moment."""

    IDLE_SECONDS = 1.0

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.announced = False
        self.warming = False  # (set by warm(): its notice says what it does)
        self.depth = 0
        self.count = 0
        self.bar: Any = None
        self.closer: threading.Timer | None = None

    def started(self, kernel: str | None) -> None:
        with self.lock:
            if self.closer is not None:
                self.closer.cancel()
                self.closer = None
            if not self.announced:
                self.announced = True
                LOGGER.warning(compile_notice(self.warming))
                if kernel is not None:
                    start_helper(kernel)
            if self.bar is None and self.depth == 0:
                self.bar = _kernel_bar(max(_FIRST_CALL_KERNELS, self.count + 1))
            self.depth += 1

    def finished(self) -> None:
        with self.lock:
            self.depth = max(0, self.depth - 1)
            self.count += 1
            if self.bar is not None:
                if self.bar.n + 1 >= self.bar.total:  # (an entry point that needs more)
                    self.bar.total = self.bar.n + max(10, self.bar.total // 10)
                self.bar.update(1)
                if self.depth == 0:
                    self.closer = threading.Timer(self.IDLE_SECONDS, self.close)
                    self.closer.daemon = True
                    self.closer.start()

    def close(self) -> None:
        with self.lock:
            if self.bar is not None and self.depth == 0:
                self.bar.close()
                self.bar = None


_COMPILING = _Compiling()


def _kernel_bar(total: int) -> Any:
    """A tqdm bar counting compiled kernels, where one can be seen (else None)."""
    from citekit._progress import progress_bar

    return progress_bar(
        total, True, unit="kernel", what="citekit", description="citekit: compiling"
    )


def compile_started(kernel: str | None = None) -> None:
    """Called when the compiler starts on one of citekit's kernels (named as
    :func:`citekit._jit.kernel_name` does): the first time in the process, log
    :func:`compile_notice` and, when the kernel is one the first ``align_citations``
    compiles first, start a helper process (:func:`start_helper`); show a bar of compiled
    kernels.

    Examples
    --------
    >>> compile_started(); compile_finished()  # (logs the notice if not yet said)
    """
    _COMPILING.started(kernel)


def compile_finished() -> None:
    """Called when the compiler has finished one of citekit's kernels (see
    :func:`compile_started`).

    Examples
    --------
    >>> compile_started(); compile_finished()
    """
    _COMPILING.finished()


def add_command(commands: Any) -> Any:
    """Add the ``warmup`` subcommand to the command line's subparsers ``commands``; return
    its parser.

    Examples
    --------
    >>> import argparse
    >>> commands = argparse.ArgumentParser(prog="citekit").add_subparsers()
    >>> add_command(commands).prog
    'citekit warmup'
    """
    parser = commands.add_parser(
        "warmup",
        help="compile every kernel now (once after installing; later runs load them)",
        description="Compile every kernel into the disk cache now, so that later commands "
        f"and programs start at once (a fresh install: about {WARM_SECONDS} s on two cores; "
        "with a warm cache, a few seconds of loading).",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=min(2, os.cpu_count() or 1),
        metavar="N",
        help="compile in up to N processes at once (at most 2 are used; default: "
        "2, or 1 on a one-core machine)",
    )
    parser.set_defaults(run=run_command)
    return parser


def run_command(args: Any) -> int:
    """Run ``citekit warmup``: compile every kernel (in ``args.processes`` processes), then
    say how long it took on stdout. Returns the exit status (2 for a bad ``--processes``).

    Examples
    --------
    >>> import argparse
    >>> run_command(argparse.Namespace(processes=0))
    2
    """
    if not isinstance(args.processes, int) or args.processes < 1:
        sys.stderr.write(
            f"citekit warmup: error: --processes must be at least 1, got {args.processes}\n"
        )
        return 2
    from citekit._jit import CACHE

    started = time.perf_counter()
    warm(args.processes)
    seconds = time.perf_counter() - started
    if CACHE:
        sys.stdout.write(
            f"citekit warmup: every kernel is compiled and in the disk cache ({seconds:.1f} s)\n"
        )
    else:
        sys.stdout.write(
            f"citekit warmup: every kernel is compiled in this process ({seconds:.1f} s); the "
            "disk cache is off (CITEKIT_NUMBA_CACHE=0), so other processes compile again\n"
        )
    return 0


# ------------------------------------------------------------------ a helper process
#
# The first align_citations of a fresh install compiles its kernels one after another, in
# the order the stages run. With the disk cache, a second process can share that work: the
# helper compiles the listed kernels (citekit._first_call, with their argument types) from
# the last stage backwards while this process compiles them forwards as the call reaches
# them. Each kernel has a lock file: whoever takes it compiles the kernel; this process,
# finding it taken, waits for the helper to release it and then loads the kernel from the
# cache; the helper, finding it taken, skips it. They meet in the middle.

_HELPER_VARIABLE = "CITEKIT_COMPILE_HELPER"
#: environment variable: how many processes a first call compiles in (``1``: no helper)
PROCESSES_VARIABLE = "CITEKIT_COMPILE_PROCESSES"


class _Helper:
    """This process's helper: the process, the directory of the kernels' lock files, the
    listed kernels not yet claimed here, and the locks this process holds."""

    def __init__(self) -> None:
        self.allowed = os.environ.get(_HELPER_VARIABLE, "") == ""
        self.process: subprocess.Popen | None = None
        self.lock_directory = ""
        self.pending: set[str] = set()
        self.held: list[Any] = []

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # (the cache's files are written whole or not at all)
            self.process.wait()
        self.pending.clear()
        for handle in self.held:
            handle.close()
        self.held.clear()
        if self.lock_directory:
            import shutil

            shutil.rmtree(self.lock_directory, ignore_errors=True)
            self.lock_directory = ""


_HELPER = _Helper()


def helper_processes() -> int:
    """How many processes a first call compiles in: ``CITEKIT_COMPILE_PROCESSES`` (default
    2; anything but an integer of at least 1 counts as 1), at most the CPU count.

    Examples
    --------
    >>> 1 <= helper_processes() <= max(2, os.cpu_count() or 1)
    True
    """
    try:
        wanted = int(os.environ.get(PROCESSES_VARIABLE, "2"))
    except ValueError:
        wanted = 1
    return max(1, min(wanted, os.cpu_count() or 1))


def _lock(directory: str, kernel: str, wait: bool) -> Any:
    """The open lock file of ``kernel`` in ``directory``, locked (waiting for it when
    ``wait``), or None when another process holds it."""
    import fcntl

    handle = open(os.path.join(directory, kernel.replace(":", "-") + ".lock"), "a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def start_helper(kernel: str) -> bool:
    """Start the helper process when the first kernel this process compiles is ``kernel``,
    one of those the first ``align_citations`` compiles
    (:data:`citekit._first_call.KERNELS`); return whether it started. The helper compiles
    those of share 1, from the last backwards, but not ``kernel`` (this process claims it).

    Not with the disk cache off, in a helper or warm-up process, during :func:`warm`, with
    ``CITEKIT_COMPILE_PROCESSES=1``, on one CPU, without POSIX file locks, nor a second
    time.

    Examples
    --------
    >>> start_helper("citekit.kernels._copy:copy_range")  # (not a first-call kernel)
    False
    """
    from citekit._first_call import KERNELS
    from citekit._jit import CACHE

    if not (CACHE and _HELPER.allowed and helper_processes() >= 2):
        return False
    if not any(name == kernel for _, name, _ in KERNELS):
        return False
    try:
        import fcntl  # noqa: F401 (POSIX only)
    except ImportError:
        return False
    import tempfile

    _HELPER.allowed = False
    _HELPER.lock_directory = tempfile.mkdtemp(prefix="citekit-compile-")
    env = _child_environment()
    env[_HELPER_VARIABLE] = _HELPER.lock_directory
    try:
        _HELPER.process = subprocess.Popen(
            [sys.executable, "-c", "from citekit._warm import compile_listed; compile_listed(1)"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    except OSError:  # no interpreter to start (an embedded Python): compile here
        _HELPER.stop()
        return False
    _HELPER.pending = {name for share, name, _ in KERNELS if share == 1}
    await_helper(kernel)  # (claimed: the helper must not compile it as well)
    import atexit

    atexit.register(_HELPER.stop)  # (a process that ends early leaves no compiler behind)
    return True


def await_helper(kernel: str) -> None:
    """Before this process looks ``kernel`` (a :func:`citekit._jit.kernel_name`) up in the
    cache: if the helper may compile it, claim it (the helper then skips it), or, when the
    helper is compiling it, wait until it is done.

    Examples
    --------
    >>> await_helper("citekit.kernels._copy:copy_range")  # (no helper: returns at once)
    """
    if kernel not in _HELPER.pending:
        return
    _HELPER.pending.discard(kernel)
    handle = _lock(_HELPER.lock_directory, kernel, wait=False)
    if handle is None:  # the helper is at it: wait for it, then load what it compiled
        handle = _lock(_HELPER.lock_directory, kernel, wait=True)
    if handle is not None:
        _HELPER.held.append(handle)  # (kept: the helper need not compile it again)


def compile_listed(share: int) -> None:
    """Compile the kernels of ``share`` in :data:`citekit._first_call.KERNELS` into the
    disk cache, the last first (what the helper process runs). With a lock directory in
    ``CITEKIT_COMPILE_HELPER``, a kernel whose lock another process holds is skipped. A
    kernel that fails to compile for its listed types is skipped too: the process that
    needs it compiles it for the types it has.

    Examples
    --------
    >>> compile_listed(2)  # (no kernel is listed in share 2)
    """
    from citekit._first_call import KERNELS
    from citekit._jit import parse_type_spec

    directory = os.environ.get(_HELPER_VARIABLE, "")
    for listed_share, name, specs in reversed(KERNELS):
        if listed_share != share:
            continue
        handle = _lock(directory, name, wait=False) if os.path.isdir(directory) else None
        if handle is None and os.path.isdir(directory):
            continue  # (the caller has it)
        module_name, kernel_name = name.split(":")
        try:
            kernel = getattr(importlib.import_module(module_name), kernel_name)
            kernel.compile(tuple(parse_type_spec(spec) for spec in specs))
        except Exception:  # noqa: BLE001 (the caller compiles it, for the types it has)
            pass
        finally:
            if handle is not None:
                handle.close()
