"""Compiling citekit's kernels ahead of use, in one process or several at once.

The JIT compiler compiles a kernel in the process that first calls it and, with the on-disk cache
(on unless ``CITEKIT_NUMBA_CACHE=0``), stores the machine code for later processes. Cold,
compiling everything takes about two minutes of one core (133 s on a 2-vCPU Xeon VM:
the kernel modules 122 s, then the pipeline's own stages 11 s); compilation holds the
GIL, so threads cannot share it, but processes can: each compiles a share of the modules
into the cache and the caller then loads what the others compiled.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from typing import Sequence


__all__ = ["SHARES", "cache_is_cold", "start_share", "warm", "warm_modules"]

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
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env=_child_environment() if env is None else env,
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
