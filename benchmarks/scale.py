"""Corpus size: what a prepared corpus costs, and what a query costs against it, from a
thousand documents up.

Usage::

    python benchmarks/scale.py [--sizes 1000,10000,100000] [--long] [--queries 1000]
                               [--sentences 5] [--staged 40] [--seed 0] [--threads N]
                               [--force] [--timeout SECONDS] [--json OUT]

The documents are ``benchmarks/workload.py``'s (``make_documents``: report prose of about
7,700 characters per document), the answers ``make_answer``'s over them (``--sentences``
sentences each, copies, paraphrases, fusions and inventions). Each size runs in fresh
child processes of this interpreter, importing the citekit this process would import, so
that no size inherits another's memory:

1. *build*: generate the documents and the answers, load every kernel
   (``citekit.warmup()`` and a small aligned answer), then ``Pipeline().prepare(documents)``
   (default configuration) and ``Corpus.save`` into a temporary folder;
2. *load*: in a new process, ``Corpus.load`` of the saved corpus, then the queries;
3. *load, mapped*: the same with ``Corpus.load(path, mmap=True)``, when ``Corpus.load``
   takes ``mmap`` (found with ``inspect.signature``; the column says ``-`` otherwise).

Figures, per size:

- ``M chars``: the documents' characters, in millions (``sum(len(text))``);
- ``build s``: wall time of ``Pipeline().prepare(documents)``;
- ``peak GB``: the building process's peak resident set during the build (``VmHWM``
  reset just before it: ``/proc/self/clear_refs``; where that cannot be reset,
  ``ru_maxrss`` since the process started), documents and interpreter included;
  ``build_peak_growth_mb`` in the JSON is that peak minus the resident set just before
  the build;
- ``RSS growth MB``: resident set after the build minus just before it: what the corpus
  costs beyond the documents the caller holds (the texts are shared, not copied);
- ``B/char``: bytes of the corpus's arrays per source character, EXCLUDING the texts: the
  ``nbytes`` of every array of the corpus (``token_ids``, ``passage_*``, ...), of the index
  arrays (``corpus.index.to_arrays()``) and of the embeddings (none by default), divided by
  the characters. The JSON also splits it per array (``bytes_per_char_by_array``), and adds
  the arrays the index derives in memory (its posting lists, document frequencies and
  IDF) in ``derived_bytes_per_char`` and ``all_bytes_per_char``;
- ``saved MB``: the files ``Corpus.save`` writes (the texts, ids and metadata as UTF-8
  blobs, ``corpus.json`` and the ``.npy`` arrays; split in the JSON); ``save_peak_mb``
  in the JSON is the building process's peak resident set up to the end of the save;
- ``load s`` / ``mapped s``: wall time of ``Corpus.load`` and of the mapped load;
- ``RSS load MB``: the loading process's resident set right after the load minus just
  before it (kernels already loaded): the corpus, texts included, as a fresh process holds
  it; ``RSS q MB``: the same after the warm-up answer and ``--queries`` answer sentences;
- ``median ms`` / ``p90 ms``: time per answer sentence of ``Pipeline.align(answer,
  corpus)`` against the loaded corpus (the call's time divided by the sentences it
  returns), median and 90th percentile over the answers timed: a warm-up answer first (it
  fills the corpus's caches), then answers until ``--queries`` sentences (default 1,000)
  have been aligned;
- ``postings``: per answer sentence, the posting-list entries its retrieval has to walk:
  the sum, over the sentence's distinct ranking (content) tokens, of the number of
  passages holding the token (``IdfIndex.document_frequency`` of its column,
  ``IdfIndex.columns_of``); median over the sentences of ``--staged`` answers. The kernel
  reads all of them for a query of up to 16 ranking terms; longer ones may prune. The
  JSON adds the same over every distinct token (stop words too: what ranking by content
  tokens saves) and the mean;
- ``mean ms`` / ``retrieval`` / ``alignment`` / ``records``: the mean time per answer
  sentence of ``--staged`` answers aligned after the timed ones, and the part of it spent
  in those stages of the call, from ``benchmarks/prepared_stages.py``'s timers around the
  citation stages (``_StageTimers``; its docstring says what each stage holds); the JSON
  has every stage. Means, not medians: a few slow sentences weigh in them.

``--json OUT`` writes every figure with the machine, Python, numpy and numba versions, the
date and the machine's load averages before and after each size (the committed run:
``benchmarks/results/scale.json``). The table goes to stdout,
the children's progress to stderr. Timing is wall time on whatever else the machine runs:
compare sizes of one run.

Memory. A size runs only when the machine's available memory (``MemAvailable``) is at
least ``n * 7,700 * 21`` bytes (a build's peak per source character as measured at 50,000
documents before this script, about 16 GB at 100,000 documents; a conservative guard);
otherwise it is reported as skipped with the figures. ``--force`` runs it anyway.

Threads. The children run with numba's default thread count unless ``--threads N`` sets
``NUMBA_NUM_THREADS``; on a machine whose cores are busy with other work, the parallel
kernels of the default may wait for each other: the JSON records the threads and the load
averages.

Long mode. ``--long`` adds 1,000,000 documents (sizes above 100,000 are refused without
it). That build needs about 110 GB of memory (the save's peak at 100,000 documents,
14.5 bytes per character, scaled; the memory check asks for 160 GB) and the saved
corpus about 50 GB of disk in the temporary folder (``TMPDIR``); generating the
documents alone takes several minutes. Run it on a machine that has them::

    python benchmarks/scale.py --sizes 1000,1000000 --long --json scale-long.json
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import inspect
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

DEFAULT_SIZES = (1_000, 10_000, 100_000)
LONG_SIZE = 1_000_000
# the build's peak resident set per source character, as measured at 50,000 documents
# before this script (7.9 GB for 376 MB of text; its own runs peaked at about 14 bytes at
# 10,000 documents, interpreter and documents included): the memory check's estimate
PEAK_BYTES_PER_CHAR = 21
CHARS_PER_DOCUMENT = 7_700
_MB = 2**20
_CHILD = "_child"


# -- memory of this process ---------------------------------------------------------------


def _status_kb(field: str) -> int | None:
    """A ``/proc/self/status`` field in KB (None where there is no such file)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _peak_mb() -> float:
    """The peak resident set since the last :func:`_reset_peak` (or the start), MB."""
    peak = _status_kb("VmHWM")
    if peak is not None:
        return peak / 1024
    import resource

    # (ru_maxrss: KB on Linux, bytes on macOS)
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / _MB


def _memory() -> dict[str, float | None]:
    """Resident set (all, anonymous, file-backed) and the peak, in MB."""
    figures: dict[str, float | None] = {"peak_mb": _peak_mb()}
    for key, field in (("rss_mb", "VmRSS"), ("anon_mb", "RssAnon"), ("file_mb", "RssFile")):
        value = _status_kb(field)
        figures[key] = None if value is None else value / 1024
    if figures["rss_mb"] is None:
        figures["rss_mb"] = figures["peak_mb"]
    return figures


def _reset_peak() -> bool:
    """Reset the peak resident set to the current one (Linux); whether it could."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
    except OSError:
        return False
    return True


def _available_bytes() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (None where unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _grow(after: dict[str, float | None], before: dict[str, float | None], key: str) -> float:
    return float(after[key] or 0.0) - float(before[key] or 0.0)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- the children --------------------------------------------------------------------------


def _warm_citekit() -> Any:
    """Every kernel compiled or loaded before anything is measured (a kernel first loaded
    inside a measured build or query adds its load time and memory), and a pipeline."""
    import citekit
    from citekit.pipeline import Pipeline

    citekit.warmup()
    pipe = Pipeline()
    pipe.align("Warm up sentence. Another one.", pipe.prepare(["Warm up sentence."]))
    return pipe


def _files_bytes(directory: str) -> dict[str, int]:
    """Size of every file of ``directory`` (not recursive), by name."""
    return {
        entry.name: entry.stat().st_size for entry in os.scandir(directory) if entry.is_file()
    }


def corpus_array_bytes(corpus: Any) -> tuple[dict[str, int], dict[str, int]]:
    """The ``nbytes`` of a corpus's arrays: ``(counted, derived)``.

    ``counted``: every ndarray attribute of the corpus (its token and passage arrays, the
    per-source arrays and the embeddings when it has them) and the index's arrays as
    ``corpus.index.to_arrays()`` gives them (named ``index_<name>``). ``derived``: the
    other arrays the index holds in memory, made from those (posting lists, document
    frequencies, IDF; named ``index_<attribute>`` or ``index_<attribute>[i]`` for a tuple),
    each array counted once.
    """
    import numpy as np

    counted: dict[str, int] = {}
    seen: set[int] = set()

    def add(table: dict[str, int], name: str, value: Any) -> None:
        if isinstance(value, np.ndarray) and id(value) not in seen:
            seen.add(id(value))
            table[name] = int(value.nbytes)

    for name, value in sorted(vars(corpus).items()):
        add(counted, name, value)
    for name, value in corpus.index.to_arrays().items():
        add(counted, f"index_{name}", value)
    derived: dict[str, int] = {}
    for name, value in sorted(vars(corpus.index).items()):
        name = "index_" + name.lstrip("_")
        if isinstance(value, tuple):
            for position, part in enumerate(value):
                add(derived, f"{name}[{position}]", part)
        else:
            add(derived, name, value)
    return counted, derived


def _child_build(arguments: list[str]) -> dict[str, Any]:
    """Generate, build, measure and save one size; write the answers for the queries."""
    n_documents, folder, n_answers, n_sentences, seed = (
        int(arguments[0]), arguments[1], int(arguments[2]), int(arguments[3]),
        int(arguments[4]),
    )
    from workload import make_answer, make_documents

    start = time.perf_counter()
    documents = make_documents(n_documents, seed=seed)
    answers = [
        make_answer(documents, n_sentences=n_sentences, seed=seed * 1_000_000 + number)["answer"]
        for number in range(n_answers)
    ]
    with open(os.path.join(folder, "answers.json"), "w", encoding="utf-8") as handle:
        json.dump(answers, handle)
    generate_s = time.perf_counter() - start
    text_chars = sum(len(document["text"]) for document in documents)

    pipe = _warm_citekit()
    peak_reset = _reset_peak()
    before = _memory()
    start = time.perf_counter()
    corpus = pipe.prepare(documents)
    build_s = time.perf_counter() - start
    after = _memory()

    counted, derived = corpus_array_bytes(corpus)
    path = os.path.join(folder, "corpus")
    start = time.perf_counter()
    corpus.save(path)
    save_s = time.perf_counter() - start
    after_save = _memory()
    files = _files_bytes(path)
    return {
        "documents": n_documents,
        "text_chars": text_chars,
        "sources": corpus.n_sources,
        "passages": corpus.n_passages,
        "tokens": corpus.n_tokens,
        "terms": int(corpus.index.n_terms),
        "generate_s": generate_s,
        "build_s": build_s,
        "build_peak_mb": after["peak_mb"],
        "build_peak_growth_mb": _grow(after, before, "peak_mb" if peak_reset else "rss_mb"),
        "build_rss_before_mb": before["rss_mb"],
        "build_rss_growth_mb": _grow(after, before, "rss_mb"),
        "peak_since_build": peak_reset,
        "array_bytes": counted,
        "derived_array_bytes": derived,
        "save_s": save_s,
        "save_peak_mb": after_save["peak_mb"],
        "saved_bytes": sum(files.values()),
        # the texts: the UTF-8 text blob of a version-2 save (corpus.json before it)
        "saved_text_bytes": files.get("sources_text.bin", files.get("corpus.json", 0)),
        "saved_files": files,
    }


def mmap_supported() -> bool:
    """Whether ``Corpus.load`` takes ``mmap`` (memory-mapped load)."""
    from citekit.corpus import Corpus

    return "mmap" in inspect.signature(Corpus.load).parameters


def _percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile of ``values``, interpolated between neighbours."""
    ordered = sorted(values)
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


class _QueryRecorder:
    """Records the token batches the retrieval stage receives (ids, offsets, content
    flags), while installed in place of ``find_candidates``."""

    def __init__(self) -> None:
        import citekit._citations.align as align_module

        self.module = align_module
        self.original = align_module.find_candidates
        self.batches: list[tuple[Any, Any, Any]] = []

    def __enter__(self) -> "_QueryRecorder":
        original = self.original

        def recording(corpus: Any, batch: Any, *args: Any, **kwargs: Any) -> Any:
            self.batches.append((batch.ids, batch.offsets, batch.content))
            return original(corpus, batch, *args, **kwargs)

        self.module.find_candidates = recording
        return self

    def __exit__(self, *exc: Any) -> None:
        self.module.find_candidates = self.original


def postings_walked(index: Any, ids: Any, offsets: Any, content: Any) -> tuple[list[int], ...]:
    """Per query of a packed batch: the posting entries of its distinct ranking tokens,
    and of all its distinct tokens (the sums of their columns' document frequencies; a
    token in no passage has none).

    Examples
    --------
    >>> import numpy as np
    >>> from citekit.index import IdfIndex
    >>> index = IdfIndex.from_token_lists([[1, 2], [2, 3], [2]])
    >>> postings_walked(index, np.array([2, 2, 3, 9, 1]), np.array([0, 4, 5]),
    ...                 np.array([False, False, True, True, True]))
    ([1, 1], [4, 1])
    """
    import numpy as np

    columns = index.columns_of(ids)
    frequency = index.document_frequency
    ranking: list[int] = []
    every: list[int] = []
    for query in range(len(offsets) - 1):
        lo, hi = int(offsets[query]), int(offsets[query + 1])
        found = columns[lo:hi] >= 0
        ranked = np.unique(columns[lo:hi][found & content[lo:hi]])
        ranking.append(int(frequency[ranked].sum()))
        every.append(int(frequency[np.unique(columns[lo:hi][found])].sum()))
    return ranking, every


def _child_query(arguments: list[str]) -> dict[str, Any]:
    """Load a saved corpus (mapped or not), then time and stage the queries."""
    folder, mapped, n_queries, n_staged = (
        arguments[0], arguments[1] == "mmap", int(arguments[2]), int(arguments[3]),
    )
    from prepared_stages import STAGES, _StageTimers

    from citekit.corpus import Corpus

    with open(os.path.join(folder, "answers.json"), encoding="utf-8") as handle:
        answers = json.load(handle)
    pipe = _warm_citekit()
    path = os.path.join(folder, "corpus")
    _reset_peak()
    before = _memory()
    start = time.perf_counter()
    corpus = Corpus.load(path, mmap=True) if mapped else Corpus.load(path)  # type: ignore
    load_s = time.perf_counter() - start
    after_load = _memory()

    start = time.perf_counter()
    warm = pipe.align(answers[0], corpus)
    first_ms = (time.perf_counter() - start) * 1000 / max(1, len(warm))
    per_sentence: list[float] = []
    n_sentences = 0
    used = 1
    while n_sentences < n_queries and used < len(answers):
        start = time.perf_counter()
        result = pipe.align(answers[used], corpus)
        elapsed = time.perf_counter() - start
        used += 1
        if len(result):
            per_sentence.append(elapsed * 1000 / len(result))
            n_sentences += len(result)
    after_queries = _memory()

    # the staged answers follow the timed ones (the same kind, not yet aligned)
    staged = answers[used : used + n_staged] or answers[1 : 1 + n_staged]
    calls = staged_sentences = 0
    with _QueryRecorder() as recorder:
        timers = _StageTimers()  # (made inside: its timers wrap the recorder)
        with timers as times:
            for answer in staged:
                start = time.perf_counter()
                staged_sentences += len(pipe.align(answer, corpus))
                times["call"] += time.perf_counter() - start
                calls += 1
    seconds = {stage: timers.times[stage] for stage in STAGES if stage not in ("answer", "rest")}
    seconds["answer"] = timers.times["call"] - timers.times["chunk"]
    seconds["rest"] = timers.times["chunk"] - sum(
        value for stage, value in seconds.items() if stage != "answer"
    )
    stage_ms = {
        stage: seconds[stage] * 1000 / max(1, staged_sentences) for stage in STAGES
    }
    staged_ms = timers.times["call"] * 1000 / max(1, staged_sentences)
    ranking: list[int] = []
    every: list[int] = []
    for ids, offsets, content in recorder.batches:
        walked, all_terms = postings_walked(corpus.index, ids, offsets, content)
        ranking.extend(walked)
        every.extend(all_terms)
    import numba

    return {
        "mapped": mapped,
        "numba_threads": numba.get_num_threads(),
        "load_s": load_s,
        "load_rss_mb": _grow(after_load, before, "rss_mb"),
        "load_anon_mb": _grow(after_load, before, "anon_mb"),
        "load_peak_growth_mb": _grow(after_load, before, "peak_mb"),
        "queries_rss_mb": _grow(after_queries, before, "rss_mb"),
        "queries_anon_mb": _grow(after_queries, before, "anon_mb"),
        "process_rss_mb": after_queries["rss_mb"],
        "warmup_answer_ms_per_sentence": first_ms,
        "sentences_timed": n_sentences,
        "answers_timed": len(per_sentence),
        "median_ms": statistics.median(per_sentence) if per_sentence else None,
        "p90_ms": _percentile(per_sentence, 0.9) if per_sentence else None,
        "staged_answers": calls,
        "staged_sentences": staged_sentences,
        "stage_ms_per_sentence": stage_ms,
        "staged_mean_ms": staged_ms,
        "postings_median": statistics.median(ranking) if ranking else None,
        "postings_mean": statistics.fmean(ranking) if ranking else None,
        "postings_p90": _percentile(ranking, 0.9) if ranking else None,
        "postings_all_terms_median": statistics.median(every) if every else None,
    }


def _child(arguments: list[str]) -> int:
    kind, rest = arguments[0], arguments[1:]
    figures = _child_build(rest) if kind == "build" else _child_query(rest)
    print(json.dumps(figures))
    return 0


# -- the parent ----------------------------------------------------------------------------


def _citekit_path() -> str:
    """The folder holding the ``citekit`` package this interpreter would import."""
    spec = importlib.util.find_spec("citekit")
    if spec is None or spec.origin is None:
        raise SystemExit("scale.py: citekit is not importable")
    return os.path.dirname(os.path.dirname(spec.origin))


def _run_child(
    arguments: list[str], timeout: float | None, threads: int | None = None
) -> dict[str, Any]:
    """Run one child of this script; its figures, or ``{"error": ...}``."""
    environment = dict(os.environ, HF_HUB_OFFLINE="1")
    if threads is not None:
        environment["NUMBA_NUM_THREADS"] = str(threads)
    # the children import the citekit this process would (a checkout on sys.path first)
    environment["PYTHONPATH"] = os.pathsep.join(
        [_citekit_path()] + [p for p in [os.environ.get("PYTHONPATH")] if p]
    )
    command = [sys.executable, os.path.abspath(__file__), _CHILD] + arguments
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=environment
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timeout ({timeout:g} s)"}
    lines = completed.stdout.strip().splitlines()
    if completed.returncode != 0 or not lines:
        last = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {completed.returncode}: {last[:200]}"}
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def needed_bytes(n_documents: int) -> int:
    """The memory a build of ``n_documents`` is estimated to peak at (see the docstring).

    Examples
    --------
    >>> round(needed_bytes(100_000) / 1e9, 1)
    16.2
    """
    return n_documents * CHARS_PER_DOCUMENT * PEAK_BYTES_PER_CHAR


def run_size(
    n_documents: int, args: argparse.Namespace, mapped: bool
) -> dict[str, Any]:
    """Every figure of one size (its build, load and mapped-load children)."""
    n_answers = 1 + -(-args.queries // args.sentences) + args.staged
    load_before = _load_average()
    with tempfile.TemporaryDirectory(prefix="citekit-scale-") as folder:
        _log(f"{n_documents:,} documents: building")
        build = _run_child(
            ["build", str(n_documents), folder, str(n_answers), str(args.sentences),
             str(args.seed)],
            args.timeout,
            args.threads,
        )
        row: dict[str, Any] = {
            "documents": n_documents, "build": build, "load_average_before": load_before
        }
        if "error" in build:
            return row
        for kind in ("plain", "mmap") if mapped else ("plain",):
            _log(f"{n_documents:,} documents: loading ({kind}) and querying")
            row[kind] = _run_child(
                ["query", folder, kind, str(args.queries), str(args.staged)],
                args.timeout,
                args.threads,
            )
    row["load_average_after"] = _load_average()
    return row


def _load_average() -> list[float] | None:
    """The machine's load averages over 1, 5 and 15 minutes (None where unknown): the
    timings of a size share the cores with whatever else ran."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def _parse_sizes(text: str) -> list[int]:
    sizes = []
    for part in text.split(","):
        try:
            size = int(part.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of documents: {part!r}") from None
        if size < 1:
            raise argparse.ArgumentTypeError(f"a size must be at least 1, got {size}")
        sizes.append(size)
    return sizes


def _machine() -> dict[str, Any]:
    import numba
    import numpy

    cpu = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    total = None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        pass
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory_gb": None if total is None else round(total / 2**30, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "numba": numba.__version__,
    }


def _number(value: Any, digits: int) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def _cell(row: dict[str, Any], part: str, key: str, digits: int, scale: float = 1.0) -> str:
    figures = row.get(part) or {}
    value = figures.get(key)
    return _number(None if value is None else value * scale, digits)


def summarize(row: dict[str, Any]) -> dict[str, Any]:
    """The derived figures of one size: bytes per character, in all and per array."""
    build = row["build"]
    chars = build["text_chars"]
    counted = sum(build["array_bytes"].values())
    derived = sum(build["derived_array_bytes"].values())
    return {
        "bytes_per_char": counted / chars,
        "derived_bytes_per_char": derived / chars,
        "all_bytes_per_char": (counted + derived) / chars,
        "bytes_per_char_by_array": {
            name: nbytes / chars
            for name, nbytes in sorted(
                {**build["array_bytes"], **build["derived_array_bytes"]}.items(),
                key=lambda item: -item[1],
            )
        },
    }


def print_tables(rows: list[dict[str, Any]], out: Callable[[str], None] = print) -> None:
    """The readable tables of ``rows`` (sizes run, skipped or failed)."""
    done = [row for row in rows if "skipped" not in row and "error" not in row["build"]]
    for row in rows:
        if "skipped" in row:
            out(f"{row['documents']:,} documents: skipped ({row['skipped']})")
        elif "error" in row["build"]:
            out(f"{row['documents']:,} documents: build failed ({row['build']['error']})")
    if not done:
        return
    out("")
    header = (
        f"{'documents':>10} {'M chars':>8} {'build s':>8} {'peak GB':>8} {'RSS growth MB':>14} "
        f"{'B/char':>7} {'saved MB':>9}"
    )
    out(header)
    for row in done:
        build = row["build"]
        out(
            f"{row['documents']:>10,} {build['text_chars'] / 1e6:>8.1f} {build['build_s']:>8.2f} "
            f"{build['build_peak_mb'] / 1024:>8.2f} {build['build_rss_growth_mb']:>14,.0f} "
            f"{row['summary']['bytes_per_char']:>7.2f} {build['saved_bytes'] / 1e6:>9,.0f}"
        )
    out("")
    out(
        f"{'documents':>10} {'load s':>7} {'mapped s':>9} {'RSS load MB':>12} "
        f"{'RSS q MB':>9} {'median ms':>10} {'p90 ms':>7} {'postings':>9} "
        f"{'mean ms':>8} {'retrieval':>10} {'alignment':>10} {'records':>8}"
    )
    for row in done:
        stages = (row.get("plain") or {}).get("stage_ms_per_sentence", {})
        out(
            f"{row['documents']:>10,} {_cell(row, 'plain', 'load_s', 2):>7} "
            f"{_cell(row, 'mmap', 'load_s', 2):>9} {_cell(row, 'plain', 'load_rss_mb', 0):>12} "
            f"{_cell(row, 'plain', 'queries_rss_mb', 0):>9} "
            f"{_cell(row, 'plain', 'median_ms', 3):>10} {_cell(row, 'plain', 'p90_ms', 3):>7} "
            f"{_cell(row, 'plain', 'postings_median', 0):>9} "
            f"{_cell(row, 'plain', 'staged_mean_ms', 3):>8} "
            + " ".join(
                f"{_number(stages.get(stage), 3):>{width}}"
                for stage, width in (("retrieval", 10), ("alignment", 10), ("records", 8))
            )
        )
    for row in done:
        for kind in ("plain", "mmap"):
            if "error" in (row.get(kind) or {}):
                out(f"{row['documents']:,} documents, {kind} load: {row[kind]['error']}")
    mapped = [row for row in done if "load_s" in (row.get("mmap") or {})]
    if mapped:
        out("")
        out(f"{'documents':>10} {'mapped: RSS load MB':>20} {'RSS q MB':>9} {'median ms':>10}")
        for row in mapped:
            out(
                f"{row['documents']:>10,} {_cell(row, 'mmap', 'load_rss_mb', 0):>20} "
                f"{_cell(row, 'mmap', 'queries_rss_mb', 0):>9} "
                f"{_cell(row, 'mmap', 'median_ms', 3):>10}"
            )
    out("")
    out("bytes per source character, by array (largest first; * derived in memory, not saved)")
    names = list(done[-1]["summary"]["bytes_per_char_by_array"])
    derived = set(done[-1]["build"]["derived_array_bytes"])
    out(f"{'array':<30}" + "".join(f"{row['documents']:>12,}" for row in done))
    for name in names:
        label = name + (" *" if name in derived else "")
        out(
            f"{label:<30}"
            + "".join(
                f"{row['summary']['bytes_per_char_by_array'].get(name, 0.0):>12.3f}"
                for row in done
            )
        )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == [_CHILD]:
        return _child(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=_parse_sizes, default=list(DEFAULT_SIZES),
        help="numbers of documents, comma-separated (default 1000,10000,100000)",
    )
    parser.add_argument(
        "--long", action="store_true",
        help=f"add {LONG_SIZE:,} documents and allow sizes above 100,000 (see the docstring)",
    )
    parser.add_argument(
        "--queries", type=int, default=1000, help="answer sentences timed per load (1000)"
    )
    parser.add_argument("--sentences", type=int, default=5, help="sentences per answer (5)")
    parser.add_argument(
        "--staged", type=int, default=40,
        help="answers aligned again with stage timers and counted postings (40)",
    )
    parser.add_argument("--seed", type=int, default=0, help="workload seed (0)")
    parser.add_argument(
        "--threads", type=int, default=None,
        help="NUMBA_NUM_THREADS of the children (default: as this environment sets it)",
    )
    parser.add_argument(
        "--force", action="store_true", help="run sizes the available memory seems too small for"
    )
    parser.add_argument(
        "--timeout", type=float, default=None, help="seconds one child may take (no limit)"
    )
    parser.add_argument("--json", metavar="OUT", help="also write every figure to this file")
    args = parser.parse_args(argv)
    if args.queries < 1:
        parser.error("--queries must be at least 1")
    if args.sentences < 1:
        parser.error("--sentences must be at least 1")
    if args.staged < 1:
        parser.error("--staged must be at least 1")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be at least 1")
    if args.timeout is not None and not args.timeout > 0:
        parser.error("--timeout must be positive")
    sizes = sorted(set(args.sizes) | ({LONG_SIZE} if args.long else set()))
    too_large = [size for size in sizes if size > DEFAULT_SIZES[-1]]
    if too_large and not args.long:
        parser.error(
            f"--sizes above {DEFAULT_SIZES[-1]:,} need --long (about 160 GB of memory at "
            f"{LONG_SIZE:,}): {', '.join(f'{size:,}' for size in too_large)}"
        )

    mapped = mmap_supported()
    report: dict[str, Any] = {
        "command": "python benchmarks/scale.py " + " ".join(argv),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": _machine(),
        "mmap_load": mapped,
        "queries": args.queries,
        "sentences_per_answer": args.sentences,
        "staged_answers": args.staged,
        "seed": args.seed,
        "threads": args.threads,
        "sizes": [],
    }
    for size in sizes:
        available = _available_bytes()
        if not args.force and available is not None and available < needed_bytes(size):
            row: dict[str, Any] = {
                "documents": size,
                "skipped": f"about {needed_bytes(size) / 1e9:.1f} GB needed, "
                f"{available / 1e9:.1f} GB available; --force runs it",
            }
            _log(f"{size:,} documents: skipped, {row['skipped']}")
        else:
            row = run_size(size, args, mapped)
            if "error" not in row["build"]:
                row["summary"] = summarize(row)
        report["sizes"].append(row)
    print_tables(report["sizes"])
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
            handle.write("\n")
    failed = any(
        "error" in row.get("build", {}) or "error" in (row.get("plain") or {})
        for row in report["sizes"]
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
