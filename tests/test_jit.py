"""citekit._jit: the kernels' on-disk cache stamp and the thread helpers."""

import json
import os
import subprocess
import sys
import threading

import pytest

from citekit import _jit
from citekit import _compiling
from citekit._jit import kernel_sources, package_stamp, share_work


def _stamp(root):
    return package_stamp.__wrapped__(str(root))  # (not the per-process memo)


def _tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# a package "pkg": a kernel module, what it imports at module level (directly, through a
# subpackage, in a parenthesized list), and modules no kernel depends on
_PACKAGE = {
    "__init__.py": "",
    "_jit.py": "import numba\n",
    "kern.py": (
        "from pkg._jit import jit\n"
        "from pkg.consts import (\n    A,  # a constant\n    B,\n)\n"
        "from pkg.sub import deep\n\n\n"
        "def wrapper():\n    from pkg import lazy  # (a Python wrapper's import)\n"
    ),
    "consts.py": "A = 1\nB = 2\n",
    "sub/__init__.py": "",
    "sub/deep.py": "import pkg.consts\n",
    "lazy.py": "X = 1\n",
    "user.py": "import pkg.kern\n",  # imports a kernel module: not a dependency of it
}


def test_kernel_sources_are_the_kernel_modules_and_their_module_level_imports(tmp_path):
    root = tmp_path / "pkg"
    _tree(root, _PACKAGE)
    assert kernel_sources(str(root)) == [
        "__init__.py", "_jit.py", "consts.py", "kern.py", "sub/__init__.py", "sub/deep.py"
    ]
    _tree(root, {"numbers.py": "from numba import njit\n", "notes.txt": "import numba\n"})
    assert "numbers.py" in kernel_sources(str(root))
    assert "notes.txt" not in kernel_sources(str(root))


def test_citekits_kernel_sources_hold_every_kernel_module_and_not_the_pipeline():
    files = kernel_sources()
    for name in ("_jit.py", "kernels/_lanes.py", "kernels/_sw.py", "kernels/_retrieval.py",
                 "kernels/_tokenize.py", "kernels/_segment.py"):
        assert name in files
    # editing the pipeline's, a tokenizer's or the segmenter's Python keeps the kernels
    for name in ("pipeline.py", "results.py", "config.py", "tokenizers/simple.py",
                 "tokenizers/_kernel_chars.py", "tokenizers/_hybrid.py", "tokenizers/_general.py",
                 "tokenizers/_keys.py", "segment.py", "_reading.py", "_joined_texts.py",
                 "_warm.py", "_compiling.py", "corpus.py", "index.py"):
        assert name not in files
    # only kernels/, the JIT options and the leaf helpers kernels use
    leaves = {"__init__.py", "_jit.py", "_code_units.py", "_validation.py", "_version.py"}
    assert all(name.startswith("kernels/") or name in leaves for name in files), files


def test_kernels_import_nothing_from_above_them():
    import ast
    import pathlib

    allowed = {"citekit._jit", "citekit._code_units", "citekit._validation"}
    kernels = pathlib.Path(_jit.__file__).parent / "kernels"
    for path in sorted(kernels.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("citekit"):
                    assert name in allowed or name.startswith("citekit.kernels"), (path, name)


def test_package_stamp_follows_the_contents_and_paths_of_the_kernel_sources(tmp_path):
    root = tmp_path / "pkg"
    _tree(root, _PACKAGE)
    first = _stamp(root)
    assert len(first) == 64 and int(first, 16) >= 0
    assert _stamp(root) == first
    os.utime(root / "consts.py", (1, 1))  # the time alone does not count
    assert _stamp(root) == first
    # nor do modules no kernel imports at module level, other files, compiled caches
    _tree(root, {"lazy.py": "X = 2\n", "user.py": "", "notes.txt": "x",
                 "__pycache__/c.py": "C = 3\n", "sub/k.nbi": "y"})
    assert _stamp(root) == first
    seen = {first}
    for name in ("consts.py", "sub/deep.py", "kern.py", "__init__.py"):
        path = root / name
        path.write_text(path.read_text() + "Z = 0\n")  # a file a kernel depends on
        assert _stamp(root) not in seen
        seen.add(_stamp(root))
    (root / "consts.py").rename(root / "consts2.py")  # gone (kern's import now fails)
    assert _stamp(root) not in seen


def test_package_stamp_of_a_tree_without_kernels_is_the_empty_digest(tmp_path):
    _tree(tmp_path, {"a.py": "import os\n"})
    assert _stamp(tmp_path) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_package_stamp_is_citekits_by_default_and_computed_once():
    assert package_stamp() == _stamp(os.path.dirname(_jit.__file__))
    assert package_stamp() is package_stamp()


@pytest.mark.skipif(not _jit.CACHE, reason="numba's on-disk cache is off")
def test_kernels_are_cached_under_the_package_stamp():
    from citekit.kernels._copy import copy_range
    from citekit.kernels._batch import align_worker

    twin = _jit.entry(copy_range)
    assert _jit.entry(align_worker) is align_worker  # (declared entry=True: one dispatcher)
    for cache in (copy_range._cache, twin._cache, align_worker._cache):
        assert isinstance(cache, _jit._KernelCache)
        assert cache._cache_file._source_stamp == package_stamp()
    # a kernel and its Python entry never share a cache file
    assert twin._cache._cache_file._index_name != copy_range._cache._cache_file._index_name
    assert twin._cache._cache_file._index_name.endswith("-entry.nbi")


def _has_python_wrapper(dispatcher):
    compiled = dispatcher.overloads[dispatcher.signatures[0]]
    return compiled.fndesc.llvm_cpython_wrapper_name in compiled.library.get_llvm_str()


def test_a_kernel_called_only_by_kernels_compiles_without_numbas_python_wrapper():
    @_jit.jit(cache=False)
    def inner(x):
        return x + 1

    @_jit.jit(cache=False)
    def outer(x):
        return inner(x) * 2

    assert outer(3) == 8
    assert inner._entry is None and len(inner.signatures) == 1
    assert not _has_python_wrapper(inner)
    assert _has_python_wrapper(_jit.entry(outer))
    # a call from Python runs the entry twin, made and compiled (with the wrapper) then
    assert inner(3) == 4 and inner(2.5) == 3.5
    twin = _jit.entry(inner)
    assert twin is inner._entry and twin is _jit.entry(inner)
    assert len(twin.signatures) == 2 and _has_python_wrapper(twin)
    assert len(inner.signatures) == 1  # (the kernel itself compiled nothing more)


def test_entry_of_anything_but_a_kernel_is_itself():
    def plain(x):
        return x

    assert _jit.entry(plain) is plain
    assert _jit.entry(None) is None


_CACHED_SCRIPT = r"""
import json, sys
import numpy as np
import citekit._jit as jit_module
if sys.argv[1] == "other":  # as if another file of the package had changed
    jit_module.package_stamp = lambda: "0" * 64
from citekit.kernels._copy import copy_range
loaded = bool(jit_module.entry(copy_range)._cache._cache_file._load_index())
out = np.zeros(3)
copy_range(out, 0, np.arange(3.0), 0, 3)
print(json.dumps({"loaded": loaded, "out": out.tolist()}))
"""


@pytest.mark.skipif(not _jit.CACHE, reason="numba's on-disk cache is off")
def test_a_cached_kernel_is_reused_only_under_the_same_package_stamp(tmp_path):
    env = _compiling.child_environment()
    env["NUMBA_CACHE_DIR"] = str(tmp_path)

    def run(stamp):
        done = subprocess.run(
            [sys.executable, "-c", _CACHED_SCRIPT, stamp], env=env, capture_output=True,
            text=True, timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    assert run("same") == {"loaded": False, "out": [0.0, 1.0, 2.0]}  # compiled, saved
    assert run("same") == {"loaded": True, "out": [0.0, 1.0, 2.0]}
    # another stamp finds the index stale (numba's stamp, the file's, is the same)
    assert run("other") == {"loaded": False, "out": [0.0, 1.0, 2.0]}


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


def test_a_constant_flag_still_computes_what_its_branch_says():
    import numpy as np

    @_jit.jit(cache=False)
    def pick(values, first):
        if first:
            return values[0]
        return values[-1]

    @_jit.jit(cache=False)
    def picks(values):
        return pick(values, True) * 10 + pick(values, False)

    assert picks(np.array([1, 2, 3])) == 13


_NOTICE_SCRIPT = r"""
import numpy as np
from citekit.kernels._copy import copy_range
out = np.zeros(3)
copy_range(out, 0, np.arange(3.0), 0, 3)
copy_range(out, 0, np.arange(3), 0, 3)  # (a second signature: no second notice)
print(out.tolist())
"""


@pytest.mark.skipif(not _jit.CACHE, reason="numba's on-disk cache is off")
def test_a_compilation_says_so_once_and_a_cached_kernel_says_nothing(tmp_path):
    env = _compiling.child_environment()
    env["NUMBA_CACHE_DIR"] = str(tmp_path)

    def run():
        done = subprocess.run(
            [sys.executable, "-c", _NOTICE_SCRIPT], env=env, capture_output=True, text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.strip() == "[0.0, 1.0, 2.0]"
        return done.stderr

    cold = run()
    assert cold.count("citekit: compiling the numba kernels") == 1, cold
    assert "citekit warmup" in cold
    assert "compiling" not in run()  # loaded from the disk cache: silent


@pytest.mark.parametrize("spec", ["int64", "bool", "float64", "int64[1C]", "ro uint8[1C]",
                                  "float32[2C]", "bool[1A]"])
def test_type_specs_read_back_to_the_type(spec):
    assert _jit.type_spec(_jit.parse_type_spec(spec)) == spec


@pytest.mark.parametrize("spec", ["", "int64[", "nosuchtype", "int64[1X]", "ro int64", "int64[]"])
def test_a_bad_type_spec_is_a_value_error_naming_it(spec):
    with pytest.raises(ValueError, match="not a kernel argument type"):
        _jit.parse_type_spec(spec)


def test_kernel_names_are_module_and_qualified_name():
    from citekit.kernels._batch import align_worker

    assert _jit.kernel_name(align_worker) == "citekit.kernels._batch:align_worker"
    assert _jit.kernel_name(align_worker.py_func) == "citekit.kernels._batch:align_worker"


def test_citekit_runs_with_numbas_jit_disabled():
    # NUMBA_DISABLE_JIT=1 (numba's debugging switch) turns every kernel into its plain
    # Python function, which has no dispatcher cache to redirect
    code = (
        "import citekit\n"
        "result = citekit.align_citations('Revenue grew 15% in 2024.',"
        " ['Revenue grew 15% in 2024.'])\n"
        "print([sentence.status for sentence in result])\n"
    )
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    finished = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.split() == ["['supported']"]


# Runs every path citekit.warmup() takes with numba's JIT off (plain Python functions, so
# a profiler sees each kernel call and its caller); prints the kernels called both from
# Python and from another kernel.
_BOTH_WAYS_SCRIPT = r"""
import json, sys
import numba

kernels = set()
njit = numba.njit

def recording_njit(*args, **options):
    if args and callable(args[0]):
        kernels.add(args[0].__code__)
        return njit(*args, **options)
    decorator = njit(*args, **options)

    def decorate(function):
        kernels.add(function.__code__)
        return decorator(function)
    return decorate

numba.njit = recording_njit
from citekit._warm import warm

from_python, from_kernels = set(), set()

def profile(frame, event, arg):
    if event == "call" and frame.f_code in kernels:
        name = frame.f_globals["__name__"] + ":" + frame.f_code.co_qualname
        (from_kernels if frame.f_back.f_code in kernels else from_python).add(name)

sys.setprofile(profile)
warm()
sys.setprofile(None)
print(json.dumps(sorted(from_python & from_kernels)))
"""


def test_a_kernel_called_from_python_and_from_kernels_is_one_dispatcher():
    """A kernel that both Python and another kernel call is declared ``entry=True``: else
    a process taking both paths compiles it twice (as itself and as its entry twin)."""
    import importlib

    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _BOTH_WAYS_SCRIPT], env=env,
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    both_ways = json.loads(done.stdout.strip().splitlines()[-1])
    assert "citekit.kernels._batch:plan_pairs" in both_ways  # (it sees)
    for name in both_ways:
        module_name, function_name = name.split(":")
        # every dispatcher of the module made from that code (a factory makes several)
        values = list(vars(importlib.import_module(module_name)).values())
        values += [item for value in values if isinstance(value, tuple) for item in value]
        kernels = [
            value for value in values
            if getattr(getattr(value, "py_func", None), "__code__", None) is not None
            and value.py_func.__code__.co_qualname == function_name
        ]
        assert kernels, name
        for kernel in kernels:
            assert not isinstance(kernel, _jit._Kernel), name
