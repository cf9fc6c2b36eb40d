"""Compiling every kernel ahead of use, in one process or several at once: :func:`warm`,
``citekit warmup``.

Compilation holds the GIL, so threads cannot share it, but processes can: each compiles a
share of the modules into the disk cache and the caller then loads what the others
compiled, then runs the pipeline once on tiny inputs. Saying that kernels compile, and the
helper process of a first call, are :mod:`citekit._compiling`'s.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
from typing import Any, Sequence

from citekit._compiling import HELPER_VARIABLE, WARM_SECONDS, child_environment, lock, warming

__all__ = [
    "SHARES", "add_command", "cache_is_cold", "compile_listed", "run_command", "start_share",
    "warm", "warm_modules",
]

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
    env = dict(child_environment() if env is None else env)
    env[HELPER_VARIABLE] = "1"  # (a child starts no helper of its own)
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
    with warming():  # (this warm-up shares its work out itself: no helper)
        _warm_all(processes)


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
    from citekit._jit import entry, parse_type_spec

    directory = os.environ.get(HELPER_VARIABLE, "")
    for listed_share, name, specs in reversed(KERNELS):
        if listed_share != share:
            continue
        handle = lock(directory, name, wait=False) if os.path.isdir(directory) else None
        if handle is None and os.path.isdir(directory):
            continue  # (the caller has it)
        module_name, kernel_name = name.split(":")
        try:
            kernel = getattr(importlib.import_module(module_name), kernel_name)
            # (as the caller calls it: from Python)
            entry(kernel).compile(tuple(parse_type_spec(spec) for spec in specs))
        except Exception:  # noqa: BLE001 (the caller compiles it, for the types it has)
            pass
        finally:
            if handle is not None:
                handle.close()
