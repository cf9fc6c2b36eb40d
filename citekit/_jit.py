"""The one place where numba JIT options are decided.

Every kernel is decorated with :func:`jit` (serial) or :func:`jit_parallel` (batch drivers
with ``prange``). Compilation is lazy: decorating compiles nothing, and ``import citekit``
does not even import numba (only the kernel modules do, when first used: ``citekit.kernels``,
``citekit.kernels._retrieval``, ``citekit.kernels._evidence``, ``citekit.kernels._coverage``,
``citekit.kernels._highlight``, ``citekit.kernels._segment``,
``citekit.kernels._tokenize``).

On-disk caching is on by default so a fresh process reuses machine code compiled by an
earlier one; set ``CITEKIT_NUMBA_CACHE=0`` to turn it off (for example on a read-only
install). numba stamps each cached kernel with its own source file only, so a kernel
whose callee (in another file) changed would load its old machine code; citekit's
kernels are stamped with a digest of every source file they can depend on instead
(:func:`package_stamp`, :func:`kernel_sources`): a change to any of them -- an upgrade in
place, an edit -- recompiles them, and an unchanged install keeps its cache.

``fastmath`` is never used: dynamic-programming kernels depend on exact integer and
sentinel arithmetic.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
from itertools import count
from typing import Any, Callable

import numba
import numba.core.event
from numba import prange
from numba.core import caching
from numba.core.registry import CPUDispatcher

__all__ = [
    "CACHE", "check_threads", "current_threads", "entry", "is_cached", "jit", "jit_parallel",
    "kernel_name", "kernel_sources", "package_stamp", "parse_type_spec", "prange",
    "run_on_threads", "set_threads", "share_work", "type_spec",
]

CACHE: bool = os.environ.get("CITEKIT_NUMBA_CACHE", "1").strip().lower() not in {
    "0",
    "false",
    "no",
    "off",
}


_PACKAGE_ROOT = os.path.dirname(os.path.abspath(__file__))

# imports at the start of a line (module level): of a module and the names taken from it
_IMPORT = re.compile(
    r"(?:from[ \t]+([\w.]+)[ \t]+import[ \t]*(\([^)]*\)|[^\n#]*)|import[ \t]+([\w., \t]+))?"
)


def _module_imports(text: str) -> list[str]:
    """Dotted names a module imports at module level, and ``module.name`` for each name
    taken by ``from module import name`` (it may be a submodule)."""
    names = []
    text = "\n" + text
    starts = []
    for keyword in ("\nfrom ", "\nimport "):  # (str.find is much faster than the regex)
        at = text.find(keyword)
        while at >= 0:
            starts.append(at + 1)
            at = text.find(keyword, at + 1)
    for start in sorted(starts):
        source, taken, plain = _IMPORT.match(text, start).groups(default="")
        if not (source or plain):  # ("from" or "import" alone on its line)
            continue
        if plain:
            names.extend(part.split()[0] for part in plain.split(",") if part.strip())
        else:
            names.append(source)
            for part in re.sub("#[^\n]*", "", taken).strip("()").split(","):
                if part.split():
                    names.append(source + "." + part.split()[0])
    return names


def _kernel_files(root: str) -> dict[str, bytes]:
    """The contents of :func:`kernel_sources`'s files, by relative path (each file read
    once, for both the import scan and the digest)."""
    package = os.path.basename(root)
    contents = {}
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                with open(path, "rb") as source:
                    contents[os.path.relpath(path, root).replace(os.sep, "/")] = source.read()
    imports = {
        path: _module_imports(content.decode("utf-8", errors="replace"))
        for path, content in contents.items()
    }

    def files_of(dotted: str) -> list[str]:
        parts = dotted.split(".")
        if parts[0] != package:
            return []
        found = ["__init__.py"]  # importing any submodule runs the package's __init__
        for depth in range(2, len(parts) + 1):
            base = "/".join(parts[1:depth])
            found += [base + "/__init__.py", base + ".py"]
        return [path for path in found if path in contents]

    kernels = [
        path for path, names in imports.items()
        if any(name.split(".")[0] == "numba" or name == package + "._jit" for name in names)
    ]
    chosen = set(kernels)
    pending = list(kernels)
    while pending:
        for name in imports[pending.pop()]:
            for path in files_of(name):
                if path not in chosen:
                    chosen.add(path)
                    pending.append(path)
    return {path: contents[path] for path in sorted(chosen)}


def kernel_sources(root: str = _PACKAGE_ROOT) -> list[str]:
    """The ``.py`` files under the package directory ``root`` that its compiled kernels
    can depend on, as paths relative to ``root`` (sorted, ``/``-separated).

    They are the modules that import numba or the package's ``_jit`` at module level
    (the kernel modules), and, again and again, every module of the package that one of
    them imports at module level, with the packages' ``__init__.py`` files: a kernel
    compiles in the globals of its module (other kernels, constants, tables), which only
    its module-level code sets. Imports inside functions run in Python wrappers, whose
    values reach a kernel as arguments, not compiled in.

    Examples
    --------
    >>> files = kernel_sources()
    >>> "_jit.py" in files and "kernels/_sw.py" in files, "pipeline.py" in files
    (True, False)
    """
    return list(_kernel_files(root))


@functools.lru_cache(maxsize=None)
def package_stamp(root: str = _PACKAGE_ROOT) -> str:
    """Hex sha256 digest of the files :func:`kernel_sources` finds under ``root``
    (default: the citekit package): their relative paths and contents, in sorted order.

    Computed once per process and root (a kernel compiled in this process is of the
    source it started with). citekit's kernels are cached on disk under this stamp, not
    under their own file's (numba's default), so that a change to any file a kernel may
    call or read a constant from invalidates it, while editing the pipeline's Python
    (``pipeline.py``, ``results.py``, ...) keeps the compiled kernels.

    Examples
    --------
    >>> len(package_stamp())
    64
    """
    digest = hashlib.sha256()
    for path, content in _kernel_files(root).items():
        digest.update(path.encode() + b"\0" + hashlib.sha256(content).digest())
    return digest.hexdigest()


class _PackageStamped:
    """Mixin of a numba cache locator: the stamp is :func:`package_stamp`, not the
    function's own file's."""

    def get_source_stamp(self) -> str:
        return package_stamp()


class _UserProvidedLocator(_PackageStamped, caching.UserProvidedCacheLocator):
    """``NUMBA_CACHE_DIR``, when set."""


class _InTreeLocator(_PackageStamped, caching.InTreeCacheLocator):
    """The package's ``__pycache__`` directories, when writable."""


class _UserWideLocator(_PackageStamped, caching.UserWideCacheLocator):
    """The user's cache directory otherwise."""


class _KernelCacheImpl(caching.CompileResultCacheImpl):
    # numba's own order of the locators that apply to functions of regular files
    _locator_classes = [_UserProvidedLocator, _InTreeLocator, _UserWideLocator]


class _KernelCache(caching.FunctionCache):
    """numba's on-disk cache of a kernel, stamped by :func:`package_stamp`.

    Before looking a kernel up, it lets :mod:`citekit._compiling` wait for a helper process that
    is compiling that kernel into the cache (:func:`citekit._compiling.await_helper`), so that
    this process loads it instead of compiling it too.
    """

    _impl_class = _KernelCacheImpl

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        from citekit._compiling import await_helper

        await_helper(kernel_name(self._py_func))
        return super().load_overload(sig, target_context)


class _EntryCacheImpl(_KernelCacheImpl):
    """The cache files of a kernel's entry (:class:`_Kernel`): the kernel's own names with
    ``-entry`` added, so that the two compilations of one function never share a file."""

    @property
    def filename_base(self) -> str:
        return str(super().filename_base) + "-entry"


class _EntryCache(_KernelCache):
    _impl_class = _EntryCacheImpl


class _Kernel(CPUDispatcher):
    """A kernel as other kernels call it: compiled without numba's CPython wrapper.

    numba compiles, with every signature, the code that unboxes Python arguments and boxes
    the result, though a kernel that only other kernels call never runs it: most of the
    several hundred signatures of a first call. Leaving it out saved about a tenth of the
    first ``align_citations``' compile time. A call from Python goes to the kernel's
    *entry* (:func:`entry`), a second dispatcher of the same function compiled with the
    wrapper (its own cache files), made on the first such call. A kernel called both ways
    would compile twice: such kernels are declared ``jit(entry=True)`` instead.
    """

    _entry: CPUDispatcher | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # (a dispatcher compiled without the wrapper cannot be called from Python at all:
        # numba would call into a missing wrapper)
        twin = self._entry
        if twin is None:
            twin = entry(self)
        return twin(*args, **kwargs)


_ENTRY_LOCK = threading.Lock()


def entry(kernel: Any) -> Any:
    """The dispatcher a Python call of ``kernel`` runs: its entry twin for a :func:`jit`
    kernel (made on first use), ``kernel`` itself for anything else. Compile through it
    what Python will call (``entry(kernel).compile(signature)``).

    Examples
    --------
    >>> from citekit.kernels._copy import copy_range
    >>> entry(copy_range) is entry(copy_range) and entry(copy_range) is not copy_range
    True
    """
    if not isinstance(kernel, _Kernel):
        return kernel
    with _ENTRY_LOCK:
        if kernel._entry is None:
            options = dict(kernel.targetoptions)
            options.pop("no_cpython_wrapper", None)
            twin = CPUDispatcher(py_func=kernel.py_func, locals=kernel.locals,
                                 targetoptions=options)
            if isinstance(kernel._cache, _KernelCache):  # (cached as the kernel is)
                twin._cache = _EntryCache(kernel.py_func)
            kernel._entry = twin
    return kernel._entry


def kernel_name(function: Callable) -> str:
    """``module:qualified name`` of a kernel (or its Python function).

    Examples
    --------
    >>> from citekit.kernels._copy import copy_range
    >>> kernel_name(copy_range)
    'citekit.kernels._copy:copy_range'
    """
    function = getattr(function, "py_func", function)
    return f"{function.__module__}:{function.__qualname__}"


def type_spec(numba_type: Any) -> str:
    """A short text for an argument type of a kernel called from Python: the scalar's
    name (``int64``, ``bool``, ``float64``) or an array's ``dtype[ndim layout]``, after
    ``ro`` when read-only (``ro uint8[1C]``); :func:`parse_type_spec` reads it back.

    Examples
    --------
    >>> import numpy as np
    >>> type_spec(numba.typeof(np.zeros((2, 3), dtype=np.int64)))
    'int64[2C]'
    """
    from numba.core import types

    if isinstance(numba_type, types.Array):
        prefix = "" if numba_type.mutable else "ro "
        return f"{prefix}{numba_type.dtype}[{numba_type.ndim}{numba_type.layout}]"
    return str(types.unliteral(numba_type))


def parse_type_spec(spec: str) -> Any:
    """The numba type :func:`type_spec` wrote as ``spec``.

    Raises ``ValueError`` naming ``spec`` if it is not one.

    Examples
    --------
    >>> print(parse_type_spec("ro uint8[1C]"))
    readonly array(uint8, 1d, C)
    """
    import numpy as np
    from numba.core import types

    match = re.fullmatch(r"(ro )?(\w+)(?:\[(\d)([CFA])\])?", spec)
    try:
        dtype = numba.from_dtype(np.dtype(match.group(2)))
    except (AttributeError, TypeError, NotImplementedError):  # (no match, or not a dtype)
        raise ValueError(f"not a kernel argument type: {spec!r}") from None
    if match.group(3) is None:
        if match.group(1):
            raise ValueError(f"not a kernel argument type: {spec!r} (a read-only scalar)")
        return dtype
    return types.Array(
        dtype, int(match.group(3)), match.group(4), readonly=bool(match.group(1))
    )


class _CompileWatch(numba.core.event.Listener):
    """Tells :mod:`citekit._compiling` when the compiler starts and ends compiling one of
    citekit's kernels (numba's ``numba:compile`` events fire only for real compilations,
    not for machine code loaded from the disk cache), so that whatever entry point
    triggered it -- a library call, a command, a notebook cell -- says so once."""

    def on_start(self, event: Any) -> None:
        if _is_citekit_kernel(event.data["dispatcher"]):
            from citekit._compiling import compile_started

            compile_started(kernel_name(event.data["dispatcher"]), CACHE)

    def on_end(self, event: Any) -> None:
        if _is_citekit_kernel(event.data["dispatcher"]):
            from citekit._compiling import compile_finished

            compile_finished()


def _is_citekit_kernel(dispatcher: Any) -> bool:
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    return module.split(".")[0] == __name__.split(".")[0]


numba.core.event.register("numba:compile", _CompileWatch())


def jit(func: Callable | None = None, **options: Any) -> Callable:
    """``numba.njit`` with citekit's options (lazy, cached under :func:`package_stamp`,
    ``nogil``, no fastmath).

    A kernel compiles without numba's Python wrapper; a call from Python runs its entry
    twin (:class:`_Kernel`, :func:`entry`). ``entry=True`` makes one dispatcher with the
    wrapper instead, for a kernel that Python and other kernels both call (the twin would
    compile it twice in a process that takes both paths).

    A constant argument of a kernel-to-kernel call keeps numba's literal specialization:
    compiling the plain type instead saved about a sixth of the first compile but made the
    retrieval and alignment kernels several times slower (the constants no longer fold)."""
    cache = options.pop("cache", CACHE)
    both_ways = options.pop("entry", False)
    options.setdefault("nogil", True)
    # no C-callable twin of every compiled signature (numba's default, for passing a
    # kernel as a first-class function value, which citekit never does): about 10 ms less
    # of compiling per signature, and several hundred signatures compile on a first call
    options.setdefault("no_cfunc_wrapper", True)
    targetoptions = {"nopython": True, "boundscheck": None, **options,
                     "no_cpython_wrapper": True}

    def decorate(function: Callable) -> Any:
        if numba.config.DISABLE_JIT:  # (NUMBA_DISABLE_JIT=1: plain Python functions)
            return numba.njit(**options)(function)
        if both_ways:
            dispatcher = CPUDispatcher(
                py_func=function, locals={},
                targetoptions={**targetoptions, "no_cpython_wrapper": False},
            )
        else:
            dispatcher = _Kernel(py_func=function, locals={}, targetoptions=targetoptions)
        if cache:
            # what ``cache=True`` does (Dispatcher.enable_caching), with citekit's stamp
            dispatcher._cache = _KernelCache(dispatcher.py_func)
        return dispatcher

    return decorate(func) if func is not None else decorate


def jit_parallel(func: Callable | None = None, **options: Any) -> Callable:
    """Like :func:`jit` with ``parallel=True``, for batch drivers that use :data:`prange`."""
    options.setdefault("parallel", True)
    return jit(func, **options)


def is_cached(kernel: Any) -> bool:
    """Whether the on-disk cache holds machine code of ``kernel`` (a :func:`jit` kernel)
    for the current sources: True also when caching is off or when numba's cache is not
    laid out as expected (numba 0.5x to 0.6x: a per-function index file, stamped by
    :func:`package_stamp`, so that a changed kernel source is not cached), so that a
    caller assumes nothing to compile.

    Examples
    --------
    >>> from citekit.kernels._copy import copy_range
    >>> isinstance(is_cached(copy_range), bool)
    True
    """
    if not CACHE:
        return True
    try:
        return bool(entry(kernel)._cache._cache_file._load_index())
    except Exception:  # a numba whose cache internals differ: assume cached
        return True


def check_threads(n_threads: Any) -> int:
    """``n_threads`` as an int from 1 to numba's thread pool (``NUMBA_NUM_THREADS``).

    Raises ``TypeError`` or ``ValueError`` naming ``n_threads``.

    Examples
    --------
    >>> check_threads(1)
    1
    """
    from citekit._validation import check_int

    threads = int(check_int(n_threads, "n_threads", minimum=1))
    if threads > numba.config.NUMBA_NUM_THREADS:
        raise ValueError(
            f"n_threads must be <= {numba.config.NUMBA_NUM_THREADS} (numba's thread pool), "
            f"got {threads}"
        )
    return threads


def current_threads() -> int:
    """The number of threads the parallel kernels use now (numba's current setting: the
    pool size unless a caller lowered it, as a worker process does).

    Examples
    --------
    >>> current_threads() >= 1
    True
    """
    return int(numba.get_num_threads())


def set_threads(threads: int) -> None:
    """Make the parallel kernels of this process use ``threads`` threads from now on
    (:func:`run_on_threads` sets them for one call only).

    Examples
    --------
    >>> before = current_threads()
    >>> set_threads(1); current_threads()
    1
    >>> set_threads(before)
    """
    numba.set_num_threads(threads)


def run_on_threads(threads: int, kernel: Callable, *arguments: Any) -> Any:
    """``kernel(*arguments)`` (a ``prange`` driver) with numba's thread count set to
    ``threads`` for the call and restored afterwards (untouched when already so).

    Examples
    --------
    >>> run_on_threads(1, lambda: numba.get_num_threads())
    1
    """
    previous = numba.get_num_threads()
    if threads == previous:
        return kernel(*arguments)
    numba.set_num_threads(threads)
    try:
        return kernel(*arguments)
    finally:
        numba.set_num_threads(previous)


def share_work(n_workers: int, n_items: int, task: Callable[[int], Any]) -> None:
    """``task(i)`` for every ``i`` in ``range(n_items)``, on the calling thread and on up to
    ``n_workers - 1`` threads started for the call, each taking the next item from one
    counter (kernels that release the GIL run side by side); return when every item is
    done, raising the first error.

    The threads are the call's own: none is left running, none is inherited by a forked
    worker process. With one worker (or item) the items run on the calling thread alone.

    Examples
    --------
    >>> done = []
    >>> share_work(2, 5, done.append)
    >>> sorted(done)
    [0, 1, 2, 3, 4]
    """
    claim = count()  # the next item (atomic under the GIL)

    def work() -> None:
        while True:
            item = next(claim)
            if item >= n_items:
                return
            task(item)

    n_workers = min(n_workers, n_items)
    if n_workers <= 1:
        work()
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(n_workers - 1) as pool:
        others = [pool.submit(work) for _ in range(n_workers - 1)]
        # (an error here leaves the block once the others have returned)
        work()
        for other in others:
            other.result()
