"""Saying that kernels compile, and sharing a first call's compiling with a helper process.

The JIT compiler compiles a kernel in the process that first calls it and, with the
on-disk cache (on unless ``CITEKIT_NUMBA_CACHE=0``), stores the machine code for later
processes. Whatever starts a compilation (a library call, a command, a notebook cell), the
first one in a process says so once, with an estimate, through :mod:`logging` (logger
``citekit.compile``, level WARNING, so that it shows without any logging set up), and,
while kernels compile, a tqdm bar counts them where one can be seen
(:func:`compile_started`, called by :mod:`citekit._jit` on numba's compile events). A
logging record rather than a warning: a test suite that turns warnings into errors must
not fail because the cache happened to be cold, and nothing is wrong -- it is news, once.

This module sits below the kernels (:mod:`citekit._jit` calls it) and imports nothing of
citekit at its top; compiling everything ahead of use is :mod:`citekit._warm`'s.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = [
    "FIRST_CALL_SECONDS", "FIRST_CALL_SECONDS_ONE_PROCESS", "LOGGER", "PROCESSES_VARIABLE",
    "WARM_SECONDS", "await_helper", "child_environment", "compile_finished",
    "compile_notice", "compile_started", "helper_processes",
    "HELPER_VARIABLE", "lock", "start_helper", "warming",
]

#: Where the compile notice goes (level WARNING; silence it with
#: ``logging.getLogger("citekit.compile").setLevel(logging.ERROR)``).
LOGGER = logging.getLogger("citekit.compile")

# Measured on an idle 2-vCPU VM (AMD EPYC, 2026-12-07) with an empty cache
# (``python benchmarks/compile_cost.py --scenario align``):
#: seconds the first ``align_citations`` of a fresh install spends compiling, with its
#: helper (22-26 s measured)
FIRST_CALL_SECONDS = 25
#: the same in one process (``CITEKIT_COMPILE_PROCESSES=1``, or the disk cache off; 39-40 s)
FIRST_CALL_SECONDS_ONE_PROCESS = 40
#: seconds ``citekit warmup`` takes on a fresh install with two processes (84 s on an idle
#: 2-vCPU VM, 2026-12-07, ``--scenario warmup``; 164 s measured for the command before)
WARM_SECONDS = 90
# kernel signatures (citekit's own) the first align_citations compiles: the bar's length
_FIRST_CALL_KERNELS = 120  # (116 measured in one process, 2026-12-07)


def child_environment() -> dict[str, str]:
    """The environment of a compiling child: this one, with the directory this citekit
    was imported from first on ``PYTHONPATH`` (so the child compiles the same code)."""
    # (this file is citekit/_compiling.py: the directory above the package)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    paths = [root, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def compile_notice(warming: bool = False, cache: bool = True) -> str:
    """The line the first compilation of a process logs: what happens, for how long, what
    to do about it (``warming``: the line of :func:`citekit._warm.warm`, which is what to
    do about it; ``cache``: whether the disk cache is on, :data:`citekit._jit.CACHE`).

    Examples
    --------
    >>> compile_notice().startswith("citekit: compiling")
    True
    >>> "citekit warmup" in compile_notice(warming=True)
    False
    """
    if warming:
        return (
            "citekit: compiling every kernel into the disk cache, once after installing; "
            f"about {WARM_SECONDS} s on a 2-core machine with two processes"
        )

    seconds = FIRST_CALL_SECONDS
    if not (cache and helper_processes() >= 2):
        seconds = FIRST_CALL_SECONDS_ONE_PROCESS
    if cache:
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

    def started(self, kernel: str | None, cache: bool) -> None:
        with self.lock:
            if self.closer is not None:
                self.closer.cancel()
                self.closer = None
            if not self.announced:
                self.announced = True
                LOGGER.warning(compile_notice(self.warming, cache))
                if kernel is not None:
                    start_helper(kernel, cache)
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


def compile_started(kernel: str | None = None, cache: bool = True) -> None:
    """Called when the compiler starts on one of citekit's kernels (named as
    :func:`citekit._jit.kernel_name` does; ``cache``: whether the disk cache is on,
    :data:`citekit._jit.CACHE`): the first time in the process, log
    :func:`compile_notice` and, when the kernel is one the first ``align_citations``
    compiles first, start a helper process (:func:`start_helper`); show a bar of compiled
    kernels.

    Examples
    --------
    >>> compile_started(); compile_finished()  # (logs the notice if not yet said)
    """
    _COMPILING.started(kernel, cache)


def compile_finished() -> None:
    """Called when the compiler has finished one of citekit's kernels (see
    :func:`compile_started`).

    Examples
    --------
    >>> compile_started(); compile_finished()
    """
    _COMPILING.finished()


# ------------------------------------------------------------------ a helper process
#
# The first align_citations of a fresh install compiles its kernels one after another, in
# the order the stages run. With the disk cache, a second process can share that work: the
# helper compiles the listed kernels (citekit._first_call, with their argument types) from
# the last stage backwards while this process compiles them forwards as the call reaches
# them. Each kernel has a lock file: whoever takes it compiles the kernel; this process,
# finding it taken, waits for the helper to release it and then loads the kernel from the
# cache; the helper, finding it taken, skips it. They meet in the middle.

HELPER_VARIABLE = "CITEKIT_COMPILE_HELPER"
#: environment variable: how many processes a first call compiles in (``1``: no helper)
PROCESSES_VARIABLE = "CITEKIT_COMPILE_PROCESSES"


class _Helper:
    """This process's helper: the process, the directory of the kernels' lock files, the
    listed kernels not yet claimed here, and the locks this process holds."""

    def __init__(self) -> None:
        self.allowed = os.environ.get(HELPER_VARIABLE, "") == ""
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


def lock(directory: str, kernel: str, wait: bool) -> Any:
    """The open lock file of ``kernel`` in ``directory``, locked (waiting for it when
    ``wait``), or None when another process (or another open file here) holds it.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     held = lock(directory, "m:kernel", wait=False)
    ...     print(lock(directory, "m:kernel", wait=False))
    ...     held.close()
    None
    """
    import fcntl

    handle = open(os.path.join(directory, kernel.replace(":", "-") + ".lock"), "a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def start_helper(kernel: str, cache: bool = True) -> bool:
    """Start the helper process when the first kernel this process compiles is ``kernel``,
    one of those the first ``align_citations`` compiles
    (:data:`citekit._first_call.KERNELS`); return whether it started. The helper compiles
    those of share 1, from the last backwards, but not ``kernel`` (this process claims it).

    Not with the disk cache off (``cache``), in a helper or warm-up process, during
    :func:`citekit._warm.warm`, with ``CITEKIT_COMPILE_PROCESSES=1``, on one CPU, without
    POSIX file locks, nor a second time.

    Examples
    --------
    >>> start_helper("citekit.kernels._copy:copy_range")  # (not a first-call kernel)
    False
    """
    from citekit._first_call import KERNELS

    if not (cache and _HELPER.allowed and helper_processes() >= 2):
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
    env = child_environment()
    env[HELPER_VARIABLE] = _HELPER.lock_directory
    try:
        _HELPER.process = subprocess.Popen(
            [
                sys.executable, "-c",
                "from citekit._warm import compile_listed; compile_listed(1)",
            ],
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
    handle = lock(_HELPER.lock_directory, kernel, wait=False)
    if handle is None:  # the helper is at it: wait for it, then load what it compiled
        handle = lock(_HELPER.lock_directory, kernel, wait=True)
    if handle is not None:
        _HELPER.held.append(handle)  # (kept: the helper need not compile it again)


@contextmanager
def warming() -> Iterator[None]:
    """While compiling everything ahead of use (:func:`citekit._warm.warm`): the notice
    says so, and no helper process starts (the warm-up shares its work out itself); both
    as before afterwards.

    Examples
    --------
    >>> with warming():
    ...     "citekit warmup" in compile_notice(warming=True)
    False
    """
    allowed = _HELPER.allowed
    _HELPER.allowed = False
    _COMPILING.warming = True
    try:
        yield
    finally:
        _COMPILING.warming = False
        _HELPER.allowed = allowed
