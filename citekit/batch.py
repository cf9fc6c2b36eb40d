"""Score whole datasets: many records, serially, in worker processes or on Dask.

:func:`score_records` aligns many answers (records ``{"id", "answer", "sources"}``, or
answers against one shared prepared corpus) serially or in worker processes with identical
results, with a tqdm progress bar when one can be seen; :func:`score_dask` does the same on
a Dask cluster. A record that fails reports its id and error in its
:class:`RecordResult` without stopping the others.

The conversion of results into rows, DataFrames and JSON Lines (:func:`to_records`,
:func:`to_dataframe`, :func:`utf16_offsets`, :func:`read_jsonl`, :func:`write_jsonl`) lives
in a module of its own and is importable from here.
"""

from __future__ import annotations

import itertools
import numbers
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Iterable, Iterator, Mapping, Sequence

from citekit._progress import progress_bar
from citekit._rows import read_jsonl, to_dataframe, to_records, utf16_offsets, write_jsonl
from citekit._validation import check_bool, check_int
from citekit.results import AlignmentResult, RecordResult

__all__ = [
    "RecordResult",
    "score_records",
    "iter_score_records",

    "score_dask",
    "to_records",
    "to_dataframe",
    "utf16_offsets",
    "read_jsonl",
    "write_jsonl",
]


# ----------------------------------------------------------------------------- records


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _record_parts(record: Any, position: int | None) -> tuple[Any, str, Any]:
    """``(id, answer, sources or None)``; raises with a message naming the field."""
    if not isinstance(record, Mapping):
        raise TypeError(f"a record must be a dict with 'answer', got {type(record).__name__}")
    answer = record.get("answer")
    if not isinstance(answer, str):
        raise TypeError(
            f"record 'answer' must be a str, got {type(answer).__name__}"
            if "answer" in record
            else "record has no 'answer'"
        )
    return record.get("id", position), answer, record.get("sources")


def _record_id(record: Any, position: int | None) -> Any:
    return record.get("id", position) if isinstance(record, Mapping) else position


# ----------------------------------------------------------------------------- scoring


def _resolve_pipeline(pipeline: Any) -> Any:
    if pipeline is None:
        from citekit.pipeline import Pipeline

        return Pipeline()
    if not callable(getattr(pipeline, "align", None)):
        raise TypeError(
            f"pipeline must have an align(answer, sources) method, got {type(pipeline).__name__}"
        )
    return pipeline


def _resolve_corpus(pipeline: Any, corpus: Any) -> Any:
    """Prepare ``corpus`` once (a list of sources becomes a prepared corpus)."""
    if corpus is None:
        return None
    if isinstance(corpus, (str, bytes, int, float, Mapping)):
        # (refused at once: aligning each record against it would fail record by record)
        raise TypeError(
            "corpus must be a list of sources or a prepared corpus (Pipeline.prepare), "
            f"got {type(corpus).__name__}"
        )
    prepare = getattr(pipeline, "prepare", None)
    if isinstance(corpus, (list, tuple)) and callable(prepare):
        return prepare(corpus)
    return corpus


def _score_batch(
    pipeline: Any, corpus: Any, batch: Sequence[tuple[int | None, Any]], strip_shared_sources: bool
) -> list[RecordResult]:
    """Score records in input order; records on the shared corpus go through one
    ``align_many`` call (falling back to one ``align`` each to isolate a failure)."""
    outcomes: list[RecordResult | None] = [None] * len(batch)
    shared: list[tuple[int, Any, str]] = []
    for slot, (position, record) in enumerate(batch):
        try:
            record_id, answer, sources = _record_parts(record, position)
        except (TypeError, ValueError) as exc:
            outcomes[slot] = RecordResult(_record_id(record, position), None, _error_text(exc))
            continue
        if sources is None:
            if corpus is None:
                outcomes[slot] = RecordResult(
                    record_id,
                    None,
                    "ValueError: record has no 'sources' and no shared corpus was given",
                )
            else:
                shared.append((slot, record_id, answer))
            continue
        try:
            outcomes[slot] = RecordResult(record_id, pipeline.align(answer, sources))
        except Exception as exc:  # noqa: BLE001 - reported per record by design
            outcomes[slot] = RecordResult(record_id, None, _error_text(exc))
    if shared:
        align_many = getattr(pipeline, "align_many", None)
        batched = None
        if callable(align_many) and len(shared) > 1:
            try:
                batched = list(align_many([answer for _, _, answer in shared], corpus))
            except Exception:  # noqa: BLE001 - retried one by one below to find the culprit
                batched = None
        for k, (slot, record_id, answer) in enumerate(shared):
            if batched is not None:
                result = batched[k]
            else:
                try:
                    result = pipeline.align(answer, corpus)
                except Exception as exc:  # noqa: BLE001
                    outcomes[slot] = RecordResult(record_id, None, _error_text(exc))
                    continue
            if strip_shared_sources and isinstance(result, AlignmentResult):
                # the parent re-attaches its own copy: do not ship the corpus texts back
                result.sources = _SHARED_SOURCES
            outcomes[slot] = RecordResult(record_id, result)
    return [outcome for outcome in outcomes if outcome is not None]


class _SharedSourcesMarker(tuple):
    """Stands for "the shared corpus's sources" in results sent between processes."""

    def __reduce__(self) -> Any:
        return (_shared_sources_marker, ())


def _shared_sources_marker() -> "_SharedSourcesMarker":
    return _SHARED_SOURCES


_SHARED_SOURCES = _SharedSourcesMarker()


def _attach_shared_sources(outcomes: Iterable[RecordResult], sources: tuple) -> list[RecordResult]:
    attached = []
    for outcome in outcomes:
        if outcome.result is not None and outcome.result.sources is _SHARED_SOURCES:
            outcome.result.sources = sources
        attached.append(outcome)
    return attached


def _shared_sources_of(pipeline: Any, corpus: Any) -> tuple | None:
    """The ``sources`` the pipeline records for answers aligned against ``corpus``
    (``None`` when that cannot be found out: results then travel with their sources)."""
    if corpus is None:
        return None
    try:
        result = pipeline.align("", corpus)
    except Exception:  # noqa: BLE001 - a custom pipeline may refuse an empty answer
        return None
    sources = getattr(result, "sources", None)
    if sources is None or getattr(type(sources), "_read_only_sequence", False):
        return sources  # (a mapped corpus's: kept as they are, not decoded)
    return tuple(sources)


# state of a worker process: the pipeline and the corpus, unpickled once per worker
_WORKER_STATE: dict[str, Any] = {}


def _init_worker(pipeline: Any, corpus: Any, strip_shared_sources: bool) -> None:
    # the worker processes already use the cores: each runs the kernels on one thread
    # (a pipeline given an explicit ``n_threads`` still uses it)
    from citekit._jit import set_threads

    set_threads(1)
    _WORKER_STATE["pipeline"] = pipeline
    _WORKER_STATE["corpus"] = corpus
    _WORKER_STATE["strip"] = strip_shared_sources


def _worker_score(batch: list[tuple[int | None, Any]]) -> list[RecordResult]:
    return _score_batch(
        _WORKER_STATE["pipeline"], _WORKER_STATE["corpus"], batch, _WORKER_STATE["strip"]
    )


def _batches(records: Iterable[Any], batch_size: int) -> Iterator[list[tuple[int, Any]]]:
    iterator = enumerate(records)
    while True:
        batch = list(itertools.islice(iterator, batch_size))
        if not batch:
            return
        yield batch


# n_jobs="auto": worker processes only for a run whose serial work is estimated at this
# many seconds or more. Starting them costs about 5 s on a 2-vCPU machine (spawning and
# importing: about 1 s; each worker loading the compiled kernels: 2-4 s; shutting the pool
# down: about 1 s; pickling a 100-document corpus to the workers: 0.02 s), and two
# processes on two vCPUs scored 1.0-1.5 times as fast as one (1.03x on a quiet machine), so
# only long runs repay the start (docs/guide/data.rst gives the measurements).
_AUTO_MIN_SECONDS = 60.0
# n_jobs="auto" decides once the records scored in this process took this long (the time
# per record is then measured well enough); it keeps deciding after every batch
_AUTO_MEASURE_SECONDS = 0.5


def _usable_cpus() -> int:
    """The number of CPUs this process may run on (its affinity mask where the system
    has one, else ``os.cpu_count()``).

    Examples
    --------
    >>> _usable_cpus() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _check_n_jobs(n_jobs: Any) -> int | str:
    if n_jobs == "auto" and isinstance(n_jobs, str):
        return "auto"
    if isinstance(n_jobs, str):
        raise ValueError(f"n_jobs must be 'auto', an int >= 1 or -1, got {n_jobs!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"n_jobs must be 'auto' or an int, got {type(n_jobs).__name__}")
    if n_jobs == 0 or n_jobs < -1:
        raise ValueError(
            f"n_jobs must be 'auto', an int >= 1, or -1 for one process per CPU, got {n_jobs}"
        )
    return int(n_jobs)


def iter_score_records(
    records: Iterable[Mapping[str, Any]],
    *,
    pipeline: Any = None,
    corpus: Any = None,
    n_jobs: int | str = "auto",
    show_progress: bool = True,
    batch_size: int = 16,
    mp_context: str = "spawn",
) -> Iterator[RecordResult]:
    """Like :func:`score_records`, but yield each :class:`RecordResult` in input order
    as soon as it is ready (for streaming very large inputs to a file).

    Examples
    --------
    >>> class Echo:  # any object with align(answer, sources) works as a pipeline
    ...     def align(self, answer, sources):
    ...         return AlignmentResult([], answer=answer, sources=sources)
    >>> [r.id for r in iter_score_records([{"id": "a", "answer": "x", "sources": []}],
    ...                                   pipeline=Echo(), show_progress=False)]
    ['a']
    """
    n_jobs = _check_n_jobs(n_jobs)
    check_bool(show_progress, "show_progress")
    check_int(batch_size, "batch_size", minimum=1)
    if mp_context not in ("spawn", "forkserver", "fork"):
        raise ValueError(f"mp_context must be 'spawn', 'forkserver' or 'fork', got {mp_context!r}")
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise TypeError(f"records must be an iterable of dicts, got {type(records).__name__}")
    pipeline = _resolve_pipeline(pipeline)
    corpus = _resolve_corpus(pipeline, corpus)
    if n_jobs == -1:
        n_jobs = _usable_cpus()
    total = len(records) if hasattr(records, "__len__") else None  # type: ignore[arg-type]
    bar = progress_bar(total, show_progress)
    batches = _batches(records, batch_size)
    try:
        if n_jobs == "auto":
            yield from _score_auto(batches, total, pipeline, corpus, mp_context, bar)
        elif n_jobs == 1:
            yield from _score_here(batches, pipeline, corpus, bar)
        else:
            yield from _score_in_processes(batches, pipeline, corpus, int(n_jobs), mp_context, bar)
    finally:
        if bar is not None:
            bar.close()


def _score_here(
    batches: Iterable[list[tuple[int, Any]]], pipeline: Any, corpus: Any, bar: Any
) -> Iterator[RecordResult]:
    for batch in batches:
        yield from _score_batch(pipeline, corpus, batch, False)
        if bar is not None:
            bar.update(len(batch))


def _worth_processes(seconds: float, scored: int, total: int | None, cpus: int) -> bool:
    """Whether the records left are worth worker processes (``n_jobs="auto"``), from
    ``seconds`` spent scoring the first ``scored`` records in this process: the serial
    time left, estimated from the time per record so far, must reach
    ``_AUTO_MIN_SECONDS``. Of an iterable of unknown length, a run is taken to last
    at least as long again as it has.

    Examples
    --------
    >>> _worth_processes(1.0, 100, 10_000, cpus=2)   # about 99 s left
    True
    >>> _worth_processes(1.0, 100, 2_000, cpus=2)    # about 19 s left
    False
    >>> _worth_processes(1.0, 100, 10_000, cpus=1)
    False
    """
    if cpus < 2 or scored == 0 or seconds < _AUTO_MEASURE_SECONDS:
        return False
    left = seconds if total is None else seconds / scored * (total - scored)
    return left >= _AUTO_MIN_SECONDS


def _score_auto(
    batches: Iterator[list[tuple[int, Any]]],
    total: int | None,
    pipeline: Any,
    corpus: Any,
    mp_context: str,
    bar: Any,
) -> Iterator[RecordResult]:
    """Score in this process, timing it; switch the rest to worker processes once the
    time left is worth their start (:func:`_worth_processes`). The results are the same
    either way."""
    cpus = _usable_cpus()
    seconds, scored = 0.0, 0
    batch = next(batches, None)
    while batch is not None:
        started = time.perf_counter()
        outcomes = _score_batch(pipeline, corpus, batch, False)
        # (only the scoring is timed, not what the caller does between batches)
        seconds += time.perf_counter() - started
        scored += len(batch)
        yield from outcomes
        if bar is not None:
            bar.update(len(batch))
        batch = next(batches, None)  # (known before deciding: no pool for an ended run)
        if batch is None or not _worth_processes(seconds, scored, total, cpus):
            continue
        if not _main_module_is_guarded():
            cpus = 1  # the workers would re-run the script: stay in this process
            continue
        try:
            pool, shared_sources = _start_pool(pipeline, corpus, cpus, mp_context)
        except RuntimeError:
            cpus = 1  # the workers cannot start here: stay in this process
            continue
        yield from _score_with_pool(
            itertools.chain([batch], batches), pool, shared_sources, cpus, bar
        )
        return


def _start_pool(
    pipeline: Any, corpus: Any, n_jobs: int, mp_context: str
) -> tuple[ProcessPoolExecutor, tuple | None]:
    """A started pool of ``n_jobs`` workers holding the pipeline and corpus, and the
    shared sources the parent re-attaches to their results; ``RuntimeError`` when the
    workers cannot start."""
    import multiprocessing

    from citekit._warm import cache_is_cold, warm

    if cache_is_cold():
        # a fresh install: every worker would compile every kernel; compile them once
        # (on up to two cores) into the disk cache, which the workers then load
        warm(min(2, n_jobs))
    shared_sources = _shared_sources_of(pipeline, corpus)
    context = multiprocessing.get_context(mp_context)
    pool = ProcessPoolExecutor(
        max_workers=n_jobs,
        mp_context=context,
        initializer=_init_worker,
        initargs=(pipeline, corpus, shared_sources is not None),
    )
    try:
        _check_pool_starts(pool, mp_context)
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    return pool, shared_sources


def _score_in_processes(
    batches: Iterator[list[tuple[int, Any]]],
    pipeline: Any,
    corpus: Any,
    n_jobs: int,
    mp_context: str,
    bar: Any,
) -> Iterator[RecordResult]:
    pool, shared_sources = _start_pool(pipeline, corpus, n_jobs, mp_context)
    yield from _score_with_pool(batches, pool, shared_sources, n_jobs, bar)


def _score_with_pool(
    batches: Iterator[list[tuple[int, Any]]],
    pool: ProcessPoolExecutor,
    shared_sources: tuple | None,
    n_jobs: int,
    bar: Any,
) -> Iterator[RecordResult]:
    pending: list[tuple[list[tuple[int, Any]], Any]] = []
    try:
        # keep a bounded number of batches in flight so huge inputs stream
        for batch in itertools.islice(batches, 2 * n_jobs):
            pending.append((batch, pool.submit(_worker_score, batch)))
        while pending:
            batch, future = pending.pop(0)
            try:
                outcomes = future.result()
            except Exception as exc:  # noqa: BLE001 - e.g. a worker died; keep the rest
                outcomes = [
                    RecordResult(_record_id(record, position), None, _error_text(exc))
                    for position, record in batch
                ]
            if shared_sources is not None:
                outcomes = _attach_shared_sources(outcomes, shared_sources)
            yield from outcomes
            if bar is not None:
                bar.update(len(batch))
            for next_batch in itertools.islice(batches, 1):
                try:
                    pending.append((next_batch, pool.submit(_worker_score, next_batch)))
                except Exception as exc:  # noqa: BLE001 - the pool is broken
                    pending.append((next_batch, _FailedFuture(exc)))
    finally:
        # also when the caller stops iterating early: drop batches not started yet
        pool.shutdown(wait=True, cancel_futures=True)


def _main_module_is_guarded() -> bool:
    """Whether worker processes may be started without running the user's script again:
    not inside a worker process, and the main module is interactive (a notebook, the
    REPL) or guards its entry point with ``if __name__ == "__main__":``. A spawned
    worker imports the main script; without the guard it would re-run the script's
    own scoring, a minute or more of work, before failing."""
    import ast
    import multiprocessing

    if multiprocessing.parent_process() is not None:
        return False
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None:
        return True
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return False

    def names_main(test: ast.expr) -> bool:
        return any(isinstance(leaf, ast.Name) and leaf.id == "__name__" for leaf in ast.walk(test))

    return any(isinstance(node, ast.If) and names_main(node.test) for node in tree.body)


def _ready() -> bool:
    return True


def _check_pool_starts(pool: ProcessPoolExecutor, mp_context: str) -> None:
    """Raise ``RuntimeError`` unless a worker process starts and runs a task: a pool that
    cannot start (most often a script without an ``if __name__ == "__main__":`` guard,
    whose workers re-run it) would otherwise fail every record one by one."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        pool.submit(_ready).result()
    except BrokenProcessPool as exc:
        reason = str(exc).rstrip(". ")  # (the pool's message ends with a full stop)
        raise RuntimeError(
            f"score_records could not start its worker processes (mp_context="
            f"{mp_context!r}): {reason}. A script that scores in processes must guard its "
            "entry point with 'if __name__ == \"__main__\":' (the workers import it), "
            "and the pipeline and corpus must be picklable"
        ) from exc


class _FailedFuture:
    def __init__(self, exc: BaseException) -> None:
        self._exc = exc

    def result(self) -> Any:
        raise self._exc


def score_records(
    records: Iterable[Mapping[str, Any]],
    *,
    pipeline: Any = None,
    corpus: Any = None,
    n_jobs: int | str = "auto",
    show_progress: bool = True,
    batch_size: int = 16,
    mp_context: str = "spawn",
) -> list[RecordResult]:
    """Align the answer of every record and return one :class:`RecordResult` per record.

    Parameters
    ----------
    records : iterable of dict
        Each ``{"id", "answer", "sources"}``; a record without ``"sources"`` is aligned
        against the shared ``corpus``. A record without ``"id"`` gets its position.
    pipeline : Pipeline, optional
        The pipeline to use (default: ``Pipeline()``); any object with
        ``align(answer, sources)`` (and optionally ``align_many`` and ``prepare``) works.
        It must be picklable when worker processes are used.
    corpus : Corpus or sequence of sources, optional
        Sources shared by every record without its own; a list of sources is prepared
        once with ``pipeline.prepare``.
    n_jobs : "auto" or int, optional
        Worker processes. ``"auto"`` (the default) scores in this process and moves the
        rest of the records to one worker process per CPU only when they are estimated
        to take a minute or more in this process (timed on the first records; for an
        iterable of unknown length, once the run has lasted a minute): starting the
        workers costs seconds, which short runs never win back (see "Scoring a dataset"
        in the user guide). ``1``: this process only; ``-1``: one worker per CPU; ``n``:
        ``n`` workers. Results are identical whatever the choice.
        Each worker runs the kernels on one thread (unless the pipeline's
        ``n_threads`` says otherwise): the processes already share the cores.
        When the kernels' disk cache is cold (a fresh install), the kernels are compiled once
        first (:func:`citekit.warmup` with up to two processes) rather than by every
        worker.
    show_progress : bool, optional
        Show a tqdm progress bar when tqdm is installed and stderr is a terminal or the
        code runs in a notebook; silent otherwise (without tqdm, the logger ``citekit``
        says once, at level INFO, why there is no bar).
    batch_size : int, optional
        Records scored together (one ``align_many`` call for shared-corpus records).
    mp_context : {"spawn", "forkserver", "fork"}, optional
        How worker processes start. ``"spawn"`` (the default) is safe with the kernels'
        threads; like any multiprocessing code, a script that may use worker processes
        (``n_jobs="auto"`` on a long run, or ``n_jobs > 1``) needs an
        ``if __name__ == "__main__":`` guard.

    Returns
    -------
    list of RecordResult
        In input order; a record that failed has ``error`` set and ``result`` ``None``.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (naming the argument). Errors of single records are
        reported in their results instead.
    RuntimeError
        When worker processes are used and cannot start (say, a script without
        the ``if __name__ == "__main__":`` guard).

    Examples
    --------
    >>> from citekit.results import AlignmentResult
    >>> class Echo:  # any object with align(answer, sources) works as a pipeline
    ...     def align(self, answer, sources):
    ...         if not answer:
    ...             raise ValueError("empty answer")
    ...         return AlignmentResult([], answer=answer, sources=sources)
    >>> out = score_records([{"id": "a", "answer": "Hi.", "sources": ["Hi."]},
    ...                      {"id": "b", "answer": "", "sources": []}],
    ...                     pipeline=Echo(), show_progress=False)
    >>> [(r.id, r.ok, r.error) for r in out]
    [('a', True, None), ('b', False, 'ValueError: empty answer')]
    """
    return list(
        iter_score_records(
            records,
            pipeline=pipeline,
            corpus=corpus,
            n_jobs=n_jobs,
            show_progress=show_progress,
            batch_size=batch_size,
            mp_context=mp_context,
        )
    )


def _score_partition(
    partition: Iterable[tuple[int, Any]],
    pipeline: Any,
    corpus: Any,
    batch_size: int,
    strip_shared_sources: bool,
) -> list[RecordResult]:
    from citekit._jit import run_on_threads

    items = list(partition)

    def score_all() -> list[RecordResult]:
        outcomes: list[RecordResult] = []
        for start in range(0, len(items), batch_size):
            batch = items[start : start + batch_size]
            outcomes.extend(_score_batch(pipeline, corpus, batch, strip_shared_sources))
        return outcomes

    # partitions run side by side: each runs the kernels on one thread (the kernels' setting is
    # per thread; restored afterwards)
    return run_on_threads(1, score_all)  # type: ignore[no-any-return]


def _active_dask_client() -> Any:
    """The current ``distributed.Client``, if distributed is installed and one is active."""
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:  # no client
        return None


def score_dask(
    records: Iterable[Mapping[str, Any]],
    *,
    pipeline: Any = None,
    corpus: Any = None,
    npartitions: int | None = None,
    batch_size: int = 16,
    scheduler: Any = None,
) -> list[RecordResult]:
    """Score records on a Dask cluster (``dask.bag`` partitions); same results as serial.

    The records are split into ``npartitions`` partitions and every partition is scored in
    batches exactly as :func:`score_records` does. With a ``distributed.Client`` active,
    the computation runs on its cluster: the pipeline and the prepared corpus are scattered
    to every worker once and the records partition by partition. Otherwise Dask's local
    scheduler runs it (or the one named by ``scheduler``). Partitions run side by side, so each runs
    the kernels on one thread (unless the pipeline's ``n_threads`` says otherwise).

    Parameters
    ----------
    records : iterable of dict
        As in :func:`score_records`.
    pipeline, corpus, batch_size
        As in :func:`score_records`.
    npartitions : int, optional
        Number of partitions (default: about 100 records per partition).
    scheduler : optional
        Passed to ``compute`` (``None`` uses the active client or Dask's default).

    Returns
    -------
    list of RecordResult
        In input order.

    Examples
    --------
    >>> from citekit.results import AlignmentResult
    >>> class Echo:
    ...     def align(self, answer, sources):
    ...         return AlignmentResult([], answer=answer, sources=sources)
    >>> out = score_dask([{"id": i, "answer": "x", "sources": []} for i in range(5)],
    ...                  pipeline=Echo(), npartitions=2, scheduler="sync")
    >>> [r.id for r in out]
    [0, 1, 2, 3, 4]
    """
    from citekit._optional import import_optional

    dask_bag = import_optional("dask.bag", "dask", purpose="score_dask")
    import dask

    check_int(npartitions, "npartitions", minimum=1, allow_none=True)
    check_int(batch_size, "batch_size", minimum=1)
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise TypeError(f"records must be an iterable of dicts, got {type(records).__name__}")
    pipeline = _resolve_pipeline(pipeline)
    corpus = _resolve_corpus(pipeline, corpus)
    items = list(enumerate(records))
    if not items:
        return []
    if npartitions is None:
        npartitions = max(1, -(-len(items) // 100))
    shared_sources = _shared_sources_of(pipeline, corpus)
    npartitions = min(npartitions, len(items))
    client = _active_dask_client() if scheduler is None else None
    if client is not None:
        # ship the pipeline and corpus to every worker once, and the records partition by
        # partition, instead of embedding them all in the task graph
        size = -(-len(items) // npartitions)
        parts = [items[start : start + size] for start in range(0, len(items), size)]
        # (the futures are kept in local variables: the scattered data lives as long as they)
        part_futures = client.scatter(parts, hash=False)
        bag = dask_bag.from_delayed(part_futures)
        pipeline_arg = client.scatter([pipeline], broadcast=True, hash=False)[0]
        corpus_arg = client.scatter([corpus], broadcast=True, hash=False)[0]
    else:
        bag = dask_bag.from_sequence(items, npartitions=npartitions)
        pipeline_arg, corpus_arg = dask.delayed(pipeline), dask.delayed(corpus)
    scored = bag.map_partitions(
        _score_partition, pipeline_arg, corpus_arg, batch_size, shared_sources is not None
    )
    outcomes = scored.compute(scheduler=scheduler) if scheduler is not None else scored.compute()
    if shared_sources is None:
        return outcomes
    return _attach_shared_sources(outcomes, shared_sources)
