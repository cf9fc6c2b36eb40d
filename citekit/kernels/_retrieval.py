"""Kernels of the retrieval stage: each sentence's best candidate passages.

:func:`top_candidates` finds each sentence's best passages for :meth:`IdfIndex.top_k
<citekit.index.IdfIndex.top_k>` by walking the posting lists of its terms. A query of up
to 16 terms adds, per posting, one integer to a 32-bit word per passage (a bit per term
and an integer bound of the score, :mod:`citekit.kernels._retrieval_masks`); a sampled
bound picks the few passages that can be among the best, whose exact scores come from
their term bits (tables of query-order sums). Longer queries sum float weights and
partition only the few largest sums (:mod:`citekit.kernels._retrieval_select`); on
request they prune (MaxScore-style: heaviest terms first, skipping what cannot reach the
k best, the passages kept scored again from their rows in query order). Every path gives,
bit for bit, the result of walking every list and adding in query order. The walk's
kernels (:mod:`citekit.kernels._retrieval_walk`) come in variants that hold only the paths
a call may take, so that a call compiles only what it needs.

Its queries' terms (:func:`idf_query_terms`: index columns, IDF weights, denominators) are
derived from the one grouping of query tokens into terms,
:func:`citekit.kernels._overlap.group_into_terms`.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import check_threads, jit, run_on_threads
from citekit.kernels._overlap import group_into_terms
from citekit.kernels._retrieval_masks import _SCAN_BLOCK, _SCAN_BLOCK_MIN_PASSAGES
from citekit.kernels._retrieval_maxscore import _maxscore_queries, maxscore_queries
from citekit.kernels._retrieval_select import _N_COPIES
from citekit.kernels._retrieval_walk import VARIANTS, kernel_variant, ranking_lists
from citekit.kernels._sort import stable_argsort

__all__ = [
    "idf_query_terms",
    "normalized_scores",
    "passage_dtype",
    "top_candidates",
    "walk_passages",
    "warmup",
]


def warmup() -> None:
    """Compile (or load from the on-disk cache) this module's kernels.

    Examples
    --------
    >>> warmup()
    """
    one = np.zeros(1, dtype=np.int64)
    two = np.array([0, 1], dtype=np.int64)
    import numba

    # Every variant of the walk (citekit.kernels._retrieval_walk), serial and threaded:
    # two passages holding column 0, two queries of it. k = 2 takes "few" (no selection:
    # no list holds more than k entries), k = 1 "summed"; masks, "masked"; prune,
    # "pruned". A call compiles only the variant it takes.
    corpus = (np.array([0, 2]), two, 2, np.zeros(2, dtype=np.int64), np.ones(2), np.arange(3))
    rows = (np.arange(3, dtype=np.int64), np.zeros(2, dtype=np.int64))
    threads = [1, 2] if numba.config.NUMBA_NUM_THREADS >= 2 else [1]
    for k, options in ((2, {}), (1, {}), (1, {"masks": True}), (1, {"prune": True})):
        for n_threads in threads:
            top_candidates(*corpus, k, rows=rows, n_threads=n_threads, **options)
    # (the MaxScore driver, which only corpora of 2,097,152 passages or more take unasked)
    top_candidates(
        np.array([0, 2, 3], dtype=np.int64), np.array([0, 1, 1], dtype=np.int64), 2,
        np.array([0, 1], dtype=np.int64), np.ones(2), two, 1,
        rows=(np.array([0, 1, 3], dtype=np.int64), np.array([0, 0, 1], dtype=np.int64)),
        maxscore=True,
    )
    # (the frequent columns' bits, which only corpora of 8,192 passages or more keep)
    _Scratch(frequent_min_passages=1).frequent(two, one, 1)
    idf_query_terms(one, two, np.ones(1, dtype=bool), one, np.ones(1), 1.0)
    normalized_scores(two, np.ones(1), np.ones(1))


# the columns whose membership is kept per passage in one int64 (bit 63 unused)
_N_FREQUENT = 63


# corpora from this many passages keep it (smaller ones' rows are cheap to read)
_FREQUENT_MIN_PASSAGES = 8192


@jit
def _mark_frequent(posting_pointers, posting_passages, columns, bits):
    """Set bit ``b`` of ``bits[p]`` for every passage ``p`` of column ``columns[b]``."""
    for bit in range(columns.shape[0]):
        column = columns[bit]
        flag = np.int64(1) << bit
        for entry in range(posting_pointers[column], posting_pointers[column + 1]):
            bits[posting_passages[entry]] |= flag


class _Scratch:
    """Per-index scratch arrays of :func:`top_candidates`, reused across calls (fresh
    arrays of the corpus size cost page faults on every call): per worker thread, float
    scores and 32-bit words per passage, passage lists, a slot per vocabulary column and
    histogram buckets (one row per worker); one user at a time. Also, for corpora of
    ``frequent_min_passages`` passages or more, which of the 63 most frequent columns
    each passage holds (built on first use)."""

    def __init__(self, frequent_min_passages: int = _FREQUENT_MIN_PASSAGES) -> None:
        import threading

        self.lock = threading.Lock()
        self.frequent_min_passages = frequent_min_passages
        self.scores = np.zeros((0, 0), dtype=np.float64)
        self.touched = np.zeros((0, 1), dtype=np.int64)
        self.hits = np.zeros((0, 0), dtype=np.int64)
        self.values = np.zeros((0, 0), dtype=np.float64)
        self.words = np.zeros((0, 0), dtype=np.uint32)
        self.slots = np.zeros((0, 0), dtype=np.int64)
        self.buckets = np.zeros((0, _N_COPIES * _N_BUCKETS), dtype=np.int64)
        self.frequent_source: np.ndarray | None = None
        self.frequent_bits = np.zeros(0, dtype=np.int64)
        self.bit_of_column = np.zeros(0, dtype=np.int64)

    def frequent(
        self, posting_pointers: np.ndarray, posting_passages: np.ndarray, n_passages: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(bits, bit_of_column)`` of the frequent columns (empty for small corpora),
        kept while the same postings array is given."""
        if n_passages < self.frequent_min_passages:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        if self.frequent_source is not posting_passages:
            pointers = np.ascontiguousarray(posting_pointers, dtype=np.int64)
            lengths = np.diff(pointers)
            order = np.argsort(-lengths, kind="stable")[:_N_FREQUENT]
            columns = order[lengths[order] > 0].astype(np.int64)
            self.bit_of_column = np.full(lengths.shape[0], -1, dtype=np.int64)
            self.bit_of_column[columns] = np.arange(columns.shape[0])
            self.frequent_bits = np.zeros(n_passages, dtype=np.int64)
            _mark_frequent(
                pointers, walk_passages(posting_passages, n_passages), columns,
                self.frequent_bits,
            )
            self.frequent_source = posting_passages
        return self.frequent_bits, self.bit_of_column

    def arrays(self, n_passages: int, n_columns: int, n_workers: int = 1) -> tuple[np.ndarray, ...]:
        """``(scores, touched, hits, values, words, slots, buckets)``, each with at least
        ``n_workers`` rows (row ``w``: worker ``w``'s)."""
        if self.scores.shape[1] != n_passages or self.scores.shape[0] < n_workers:
            # the kernel leaves ``scores`` and ``words`` all zero again when it returns
            rows = max(n_workers, self.scores.shape[0])
            self.scores = np.zeros((rows, n_passages), dtype=np.float64)
            self.touched = np.zeros((rows, n_passages + 1), dtype=np.int64)
            self.hits = np.zeros((rows, n_passages), dtype=np.int64)
            self.values = np.zeros((rows, n_passages), dtype=np.float64)
            self.words = np.zeros((rows, n_passages), dtype=np.uint32)
            self.buckets = np.zeros((rows, _N_COPIES * _N_BUCKETS), dtype=np.int64)
        if self.slots.shape[1] != n_columns or self.slots.shape[0] < n_workers:
            self.slots = np.zeros((max(n_workers, self.slots.shape[0]), n_columns), np.int64)
        return (
            self.scores, self.touched, self.hits, self.values, self.words, self.slots,
            self.buckets,
        )


_N_BUCKETS = 1024


# how the posting lists of the admitted terms are walked: chosen by list lengths, first
# touch listed (only the touched passages are visited afterwards), or added blind and the
# touched passages found by one scan of the corpus
_WALKS = {"auto": -1, "listed": 0, "scan": 1}


# queries whose ranking lists hold this many entries in all are shared among threads
# (when numba has more than one): fewer cost less than waking the workers (measured)
_PARALLEL_MIN_ENTRIES = 16384


# (np.iinfo costs about a microsecond a call, and every retrieval call asks)
_UINT32_MAX = 2**32 - 1


def passage_dtype(n_passages: int) -> type:
    """The dtype postings keep passage numbers in for a corpus of ``n_passages``: uint32
    (:func:`walk_passages`), int64 from 2**32 passages.

    Examples
    --------
    >>> passage_dtype(68_000).__name__, passage_dtype(2**32).__name__
    ('uint32', 'int64')
    """
    return np.uint32 if n_passages <= _UINT32_MAX else np.int64


def walk_passages(posting_passages: np.ndarray, n_passages: int) -> np.ndarray:
    """The postings' passage numbers as the retrieval kernels read them: uint32 (int64
    for a corpus of 2**32 passages or more), contiguous; the array itself when it is so.

    The walk streams every entry of a query's lists (tens of thousands per query on the
    benchmark's 1,000 documents, far more than the caches hold): 4-byte entries halve
    what it reads, and made the retrieval kernel about 15% faster there (a bare walk of
    those lists: 87 us per query with int64 entries, 77 with int32, 65 with uint32).

    Examples
    --------
    >>> import numpy as np
    >>> walk_passages(np.array([0, 2, 1]), 3).dtype
    dtype('uint32')
    """
    return np.ascontiguousarray(posting_passages, dtype=passage_dtype(n_passages))


@jit
def _deal_queries(loads, n_workers):
    """Deal the queries to ``n_workers`` workers, largest load first to the least loaded
    (a query's load: the entries of its ranking lists, plus one). Returns ``(offsets,
    queries)``: worker ``w`` takes ``queries[offsets[w]:offsets[w + 1]]``."""
    n_queries = loads.shape[0]
    order = stable_argsort(-loads)
    worker_load = np.zeros(n_workers, dtype=np.int64)
    worker_of = np.empty(n_queries, dtype=np.int64)
    for i in range(n_queries):
        query = order[i]
        best = 0
        for worker in range(1, n_workers):
            if worker_load[worker] < worker_load[best]:
                best = worker
        worker_of[query] = best
        worker_load[best] += loads[query]
    offsets = np.zeros(n_workers + 1, dtype=np.int64)
    for query in range(n_queries):
        offsets[worker_of[query] + 1] += 1
    for worker in range(n_workers):
        offsets[worker + 1] += offsets[worker]
    filled = offsets[:-1].copy()
    queries = np.empty(n_queries, dtype=np.int64)
    for query in range(n_queries):
        queries[filled[worker_of[query]]] = query
        filled[worker_of[query]] += 1
    return offsets, queries


@jit
def _pack_slots(counts, slot, want_held, passages, rank_scores, scores, held, out_offsets):
    """Move query ``q``'s ``counts[q]`` entries from ``q * slot`` to follow query
    ``q - 1``'s (in place: an entry only moves down) and fill the CSR ``out_offsets``."""
    n = 0
    for query in range(counts.shape[0]):
        start = query * slot
        for i in range(counts[query]):
            passages[n + i] = passages[start + i]
            rank_scores[n + i] = rank_scores[start + i]
            scores[n + i] = scores[start + i]
            if want_held:
                held[n + i] = held[start + i]
        n += counts[query]
        out_offsets[query + 1] = n


def _scan_block(scan_block: int | None, n_passages: int) -> int:
    """The passages per block of a scanning walk (see :func:`top_candidates`)."""
    if scan_block is None:
        return _SCAN_BLOCK if n_passages >= _SCAN_BLOCK_MIN_PASSAGES else 0
    if int(scan_block) < 0:
        raise ValueError(f"scan_block must be >= 0, got {scan_block}")
    return int(scan_block)


def _n_workers(n_threads: int | None, n_queries: int) -> int:
    """Workers for ``n_queries`` queries on ``n_threads`` threads (None: numba's current
    count); checks ``n_threads``."""
    import numba

    threads = numba.get_num_threads() if n_threads is None else check_threads(n_threads)
    return max(1, min(threads, n_queries))


def top_candidates(
    posting_pointers: np.ndarray,
    posting_passages: np.ndarray,
    n_passages: int,
    term_columns: np.ndarray,
    term_weights: np.ndarray,
    term_offsets: np.ndarray,
    k: int,
    *,
    term_ranks: np.ndarray | None = None,
    rows: tuple[np.ndarray, np.ndarray] | None = None,
    scratch: _Scratch | None = None,
    prune: bool = False,
    walk: str = "auto",
    masks: bool | None = None,
    check_cost: float = 2.0,
    search_cost: float = 16.0,
    maxscore: bool | None = None,
    scan_block: int | None = None,
    return_held: bool = False,
    n_threads: int | None = None,
) -> tuple[np.ndarray, ...]:
    """The ``k`` passages with the largest summed term weight for every query.

    A passage's rank score is the sum of the weights of the query's ranking terms it
    holds, added in query order; the best ``k`` are kept (equal scores: lower passage
    first; weights must be positive). Terms whose ``term_ranks`` flag is False do not
    find or rank passages; their weights are added to the full score of the passages
    kept (found in each kept passage's CSR row, ``rows``).

    A query of at most 16 ranking terms (positive weights) whose lists are long (see
    ``masks``) is walked as a 32-bit word per passage: each posting adds its term's bit
    and an integer weight (the weight scaled and rounded up) in one integer addition,
    so the word holds which terms the passage has and an upper bound of its score. A
    regular sample of the words guesses a bound that about ``1.5 k`` passages reach;
    one pass over the words keeps those within the rounding of it, estimates from the
    term bits (two table look-ups) keep the few that may reach the k-th best, and these
    are scored exactly: the first 8 terms' weights by a table of their sums in query
    order, the held ones after them added in order -- the additions of walking the
    lists, in the same order, hence the same floats. If fewer than ``k`` passages reach
    the guess, every touched passage is examined instead. Only about ``k`` entries are
    then sorted however many tie.

    Other queries sum the weights into a dense float array
    (reset after each query); the best are then found from a sample's guess of the
    k-th best score (one pass over the touched passages, a histogram when the guess
    fails).

    The walk is compiled in variants (:mod:`citekit.kernels._retrieval_walk`): each call
    runs the smallest one that holds every path its inputs may take (``masks``,
    ``prune``, and the most entries the lists of one of its queries hold), so a call on
    a few documents compiles neither the bitmask walk, nor pruning, nor the selection of
    the k best; a variant compiles on the first call that needs it. The result does not
    depend on the variant.

    The full score adds, in query order, the weights of the terms that do not rank
    that each kept passage holds: read from one word per passage when they are all
    among the corpus's 63 most frequent columns (corpora of 8,192 passages or more;
    the word is built once per scratch), else from the passage's row (their columns
    marked in a per-column slot array: one look-up per word of the row).

    With ``prune`` (and ``rows``), a query of three or more ranking terms is
    walked heaviest term first (MaxScore order): once ``k`` passages score more than
    the summed weight of the lists left, no passage outside them can reach the k-th
    best, so the rest of the lists only update the passages still in the running (by a
    binary search in their rows, or a walk of the list, whichever costs less), and the
    passages that can no longer reach the k-th best are dropped as it rises. The kept
    passages are then scored again in query order, so that ``offsets``, ``passages``
    and both score arrays are bit for bit those of walking every list in query order;
    every comparison on the walk's differently rounded sums carries a margin that can
    only keep more passages.

    Parameters
    ----------
    posting_pointers, posting_passages : ndarray of int
        The index's postings (CSR, passages ascending within each column); the passages
        are walked as uint32 (:func:`walk_passages`: pass them so to avoid a copy).
    n_passages : int
        Number of passages.
    term_columns, term_weights : ndarray
        Column (``-1``: in no passage) and positive weight of every query term.
    term_offsets : ndarray of int64
        Query ``q`` owns terms ``term_offsets[q]:term_offsets[q + 1]``.
    k : int
        Passages per query.
    term_ranks : ndarray of bool, optional
        Whether each term ranks (default: all).
    rows : tuple of two int64 arrays, optional
        The index's CSR rows (columns sorted); needed when some terms do not rank and
        for pruning.
    scratch : _Scratch, optional
        Scratch arrays to reuse across calls.
    prune : bool
        Whether to prune; never changes the result. Off by default: on the benchmark
        workload (1,000 documents, 68,000 passages, k = 200) walking a posting entry
        costs about a nanosecond, while pruning pays per passage (passes to find the
        k-th best, a binary search per candidate and list, scoring again), and its
        queries, whose content words weigh alike, only stop admitting passages after
        most lists; pruning was 20-30% slower there.
    walk : {"auto", "listed", "scan"}
        How the lists that admit passages are walked: each passage listed when first
        touched, or weights added blind and the touched passages found by one scan of
        the corpus (cheaper when the lists cover much of it); ``"auto"`` scans when the
        lists' entries exceed half the corpus and nothing is pruned. Never changes the
        result.
    masks : bool, optional
        Whether queries of at most 16 ranking terms (positive weights) are walked as
        per-passage words of term bits and score bounds rather than float sums; default:
        when their lists hold 2,048 entries or more. Never changes the result: on the
        benchmark workload (1,000 documents) it makes the call 1.25 (an AMD EPYC machine)
        to 1.5 (an Intel Xeon) times faster than float sums on one thread (``python
        benchmarks/kernels.py --retrieval 1000``); on a few
        documents, float sums cost as much or less.
    maxscore : bool, optional
        Whether a query is searched MaxScore-style with its per-passage state in a
        bitmap of the corpus (:mod:`citekit.kernels._retrieval_maxscore`): the passages
        of its rarest terms' lists, scored from their rows, bound the k-th best score;
        only the lists of the terms not lighter than that bound find candidates, and
        the other lists only test a bit per posting (or are searched for each candidate,
        when those are few). Default: in corpora of 2,097,152 passages or more, for
        queries of at most 5 ranking terms whose lists hold 262,144 entries or more
        (with more terms the bound stays below most lists' weight and this costs more
        than the walk). Needs ``rows``; 2 to 63 ranking terms. These queries are
        searched on one thread, by their own kernel (compiled on first use). Never
        changes the result.
    scan_block : int, optional
        A walk that scans (``walk``) adds the lists into the per-passage words block by
        block of this many passages, every list within a block before the next block,
        so that the words being added to stay in the cache (0: list after list).
        Default: 32,768 in corpora of 2,097,152 passages or more (their words no longer
        fit in a core's cache; 10-15% faster at 6.8 million passages), else 0. Never
        changes the result.
    check_cost, search_cost : float
        The cost model of pruning, in posting entries walked: a stop check (one pass
        over the touched passages) is tried when the lists left are ``check_cost``
        times longer than that pass; a list is searched in the candidates' rows instead
        of walked when it is ``search_cost`` times longer than the candidates. Never
        change the result (tests force every path with them).
    return_held : bool
        Also return ``held``: for each candidate, bit ``t`` set when its passage holds
        the query's term ``term_offsets[q] + t`` (found in the corpus), for queries of at
        most 63 terms (-1 for longer ones). The ranking terms' bits of a query walked as
        words come from its words (no row is read), the others from the passages' rows
        (or the frequent columns' word). Requires ``rows``.
    n_threads : int, optional
        Threads the queries are shared among (each query is walked by one thread, with
        its own scratch; never changes the result). Default: numba's current thread
        count when the queries' ranking lists hold 16,384 entries or more in all (fewer
        cost less than waking the threads), else one. At most numba's thread pool
        (``NUMBA_NUM_THREADS``).

    Returns
    -------
    offsets, passages, rank_scores, scores : ndarray
        Packed CSR: query ``q``'s candidates are ``passages[offsets[q]:offsets[q + 1]]``;
        ``rank_scores`` sums the ranking terms' weights, ``scores`` every term's.
        With ``return_held``, ``held`` (int64) follows.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> # term 0 is in passages 0 and 2, term 1 in passage 2
    >>> offsets, passages, _, scores = top_candidates(
    ...     i64(0, 2, 3), i64(0, 2, 2), 3, i64(0, 1), np.array([1.0, 2.0]), i64(0, 2), 5)
    >>> offsets.tolist(), passages.tolist(), scores.tolist()
    ([0, 2], [2, 0], [3.0, 1.0])
    """
    if walk not in _WALKS:
        raise ValueError(f"walk must be one of {sorted(_WALKS)}, got {walk!r}")
    term_weights = np.ascontiguousarray(term_weights, dtype=np.float64)
    if term_weights.size and not term_weights.min() > 0.0:  # (NaN fails too)
        # a zero weight would list a passage twice in the walk that lists each passage
        # when its score first rises above zero
        raise ValueError("term_weights must be positive")
    n_queries = term_offsets.shape[0] - 1
    out_offsets = np.zeros(n_queries + 1, dtype=np.int64)
    capacity = n_queries * max(0, min(k, n_passages))
    out_passages = np.zeros(capacity, dtype=np.int64)
    out_rank_scores = np.zeros(capacity, dtype=np.float64)
    out_scores = np.zeros(capacity, dtype=np.float64)
    ranks = (
        np.ones(term_columns.shape[0], dtype=np.bool_)
        if term_ranks is None
        else np.ascontiguousarray(term_ranks, dtype=np.bool_)
    )
    if rows is None:
        if not ranks.all():
            raise ValueError("rows are needed when some terms do not rank")
        if return_held:
            raise ValueError("rows are needed for return_held")
        rows = (np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64))
    out_held = np.zeros(capacity if return_held else 0, dtype=np.int64)
    if n_queries and capacity:
        pointers = np.ascontiguousarray(posting_pointers, dtype=np.int64)
        columns = np.ascontiguousarray(term_columns, dtype=np.int64)
        term_offsets = np.ascontiguousarray(term_offsets, dtype=np.int64)
        _, entries = ranking_lists(pointers, columns, ranks, term_offsets)
        n_workers = _n_workers(n_threads, n_queries)
        if n_threads is None and int(entries.sum()) < _PARALLEL_MIN_ENTRIES:
            n_workers = 1
        if n_workers == 1:
            worker_offsets = np.array([0, n_queries], dtype=np.int64)
            worker_queries = np.arange(n_queries, dtype=np.int64)
        else:
            worker_offsets, worker_queries = _deal_queries(entries + 1, n_workers)
        have_rows = rows[0].shape[0] == n_passages + 1
        chosen = maxscore_queries(
            pointers, n_passages, columns, ranks, term_offsets, k, maxscore, have_rows
        )
        if chosen.any():
            # the MaxScore queries go to their own driver: the workers take the others
            keep = ~chosen[worker_queries]
            kept = np.concatenate(([0], np.cumsum(keep)))
            worker_offsets = kept[worker_offsets]
            worker_queries = worker_queries[keep]
        scratch = _Scratch() if scratch is None else scratch
        owned = scratch.lock.acquire(blocking=False)
        try:
            n_columns = posting_pointers.shape[0] - 1
            own = scratch if owned else _Scratch(scratch.frequent_min_passages)
            scores, touched, hits, values, words, slots, buckets = own.arrays(
                n_passages, n_columns, n_workers
            )
            frequent_bits, bit_of_column = own.frequent(
                posting_pointers, posting_passages, n_passages
            )
            arguments = (
                pointers,
                walk_passages(posting_passages, n_passages),
                np.ascontiguousarray(rows[0], dtype=np.int64),
                np.ascontiguousarray(rows[1], dtype=np.int64),
                columns,
                np.ascontiguousarray(term_weights, dtype=np.float64),
                ranks,
                term_offsets,
                int(k),
                bool(prune),
                _WALKS[walk],
                -1 if masks is None else int(bool(masks)),
                float(check_cost),
                float(search_cost),
                _scan_block(scan_block, n_passages),
            )
            slot = capacity // n_queries
            counts = np.zeros(n_queries, dtype=np.int64)
            outputs = (counts, out_passages, out_rank_scores, out_scores, bool(return_held),
                       out_held)
            if chosen.any():
                _maxscore_queries(
                    arguments[0], arguments[1], arguments[2], arguments[3], columns,
                    arguments[5], ranks, term_offsets, int(k), words[0], touched[0],
                    hits[0], values[0], slots[0], frequent_bits, bit_of_column,
                    np.flatnonzero(chosen).astype(np.int64), slot, *outputs,
                )
            # the kernel variant holding only the paths these queries may take (a first
            # call on a few documents compiles neither the bitmask walk, nor pruning, nor
            # the selection of the k best)
            largest = int(entries[worker_queries].max()) if worker_queries.size else 0
            serial, threaded = VARIANTS[
                kernel_variant(masks, prune, have_rows, k, n_passages, largest)
            ]
            if not worker_queries.size:
                pass  # (every query went to the MaxScore driver)
            elif n_workers == 1:
                serial(
                    *arguments, scores[0], touched[0], hits[0], values[0], words[0],
                    slots[0], frequent_bits, bit_of_column, buckets[0], worker_queries, slot,
                    *outputs,
                )
            else:
                run_on_threads(
                    n_workers, threaded, n_workers, worker_offsets,
                    worker_queries, *arguments, scores, touched, hits, values, words, slots,
                    frequent_bits, bit_of_column, buckets, slot, *outputs,
                )
        finally:
            if owned:
                scratch.lock.release()
        _pack_slots(
            counts, slot, bool(return_held), out_passages, out_rank_scores, out_scores,
            out_held, out_offsets,
        )
    n_out = int(out_offsets[-1])
    found = out_offsets, out_passages[:n_out], out_rank_scores[:n_out], out_scores[:n_out]
    return (*found, out_held[:n_out]) if return_held else found


@jit
def normalized_scores(offsets, sums, denominators):
    """``sums`` of query ``q``'s entries (``offsets[q]:offsets[q + 1]``) divided by its
    ``denominators[q]`` (1 when it is not positive): the lexical scores of the candidates
    (see :meth:`citekit.index.IdfIndex.top_k`)."""
    out = np.empty(sums.shape[0], dtype=np.float64)
    for q in range(offsets.shape[0] - 1):
        denominator = denominators[q] if denominators[q] > 0 else 1.0
        for i in range(offsets[q], offsets[q + 1]):
            out[i] = sums[i] / denominator
    return out


@jit
def _idf_query_terms_kernel(
    ids, offsets, flags, vocabulary, idf, unseen_idf, rows, columns, weights, term_flags,
    term_offsets, denominators, token_columns,
):
    """:func:`idf_query_terms` into its output arrays; returns the number of terms."""
    # each term's id lands in ``columns`` and each token's term in ``token_columns``;
    # their columns replace them
    n_terms = group_into_terms(
        ids, offsets, flags, ids, columns, columns[:0], term_flags, term_offsets,
        denominators[:0], token_columns,
    )
    n_vocabulary = vocabulary.shape[0]
    for query in range(offsets.shape[0] - 1):
        total = 0.0
        for term in range(term_offsets[query], term_offsets[query + 1]):
            token = columns[term]
            column = np.searchsorted(vocabulary, token) if n_vocabulary else 0
            if column < n_vocabulary and vocabulary[column] == token:
                weight = idf[column]
            else:
                column = -1
                weight = unseen_idf
            rows[term] = query
            columns[term] = column
            weights[term] = weight
            total += weight
        denominators[query] = total
    for i in range(ids.shape[0]):
        token_columns[i] = columns[token_columns[i]]
    return n_terms


def idf_query_terms(
    ids: np.ndarray,
    offsets: np.ndarray,
    flags: np.ndarray,
    vocabulary: np.ndarray,
    idf: np.ndarray,
    unseen_idf: float,
    token_columns: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """The distinct tokens (terms) of every query, ascending by id, with their index
    column (-1: not in ``vocabulary``), IDF weight (``unseen_idf`` when not in it) and
    rank flag (set when any occurrence's ``flags`` is); ``offsets`` out per query, and
    each query's denominator: its terms' weights summed in term order. ``token_columns``
    (optional, contiguous int64, one per id) receives the column of every id.

    The terms are those of :func:`citekit.kernels._overlap.group_into_terms`, looked
    up in the vocabulary (one binary search per term), in one compiled pass per batch (it
    was a lexsort, boundary flags and a dozen numpy calls).

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> rows, columns, weights, flags, offsets, totals = idf_query_terms(
    ...     i64(30, 10, 30, 5), i64(0, 3, 4), np.array([False, True, True, False]),
    ...     i64(10, 30), np.array([1.5, 2.0]), 3.0)
    >>> rows.tolist(), columns.tolist(), weights.tolist(), flags.tolist()
    ([0, 0, 1], [0, 1, -1], [1.5, 2.0, 3.0], [True, True, False])
    >>> offsets.tolist(), totals.tolist()
    ([0, 2, 3], [3.5, 3.0])
    """
    n = ids.shape[0]
    if token_columns is None:
        token_columns = np.empty(n, dtype=np.int64)
    elif token_columns.shape != (n,) or token_columns.dtype != np.int64:
        raise ValueError(f"token_columns must be int64 of shape ({n},)")
    rows = np.empty(n, dtype=np.int64)
    columns = np.empty(n, dtype=np.int64)
    weights = np.empty(n, dtype=np.float64)
    term_flags = np.empty(n, dtype=np.bool_)
    term_offsets = np.zeros(offsets.shape[0], dtype=np.int64)
    denominators = np.zeros(offsets.shape[0] - 1, dtype=np.float64)
    n_terms = _idf_query_terms_kernel(
        np.ascontiguousarray(ids, dtype=np.int64),
        np.ascontiguousarray(offsets, dtype=np.int64),
        np.ascontiguousarray(flags, dtype=np.bool_),
        np.ascontiguousarray(vocabulary, dtype=np.int64),
        np.ascontiguousarray(idf, dtype=np.float64),
        float(unseen_idf),
        rows,
        columns,
        weights,
        term_flags,
        term_offsets,
        denominators,
        token_columns,
    )
    return (
        rows[:n_terms],
        columns[:n_terms],
        weights[:n_terms],
        term_flags[:n_terms],
        term_offsets,
        denominators,
    )
