"""Aligning the feasible pairs of a batch: best-first rounds, and the dispatch to the
aligner (the built-in kernels, or a custom ``align_pairs`` / per-pair ``align`` object).

Large candidate sets are aligned in a few rounds, most promising pairs first, each round
one aligner call over every open sentence, until no unaligned pair can change any
sentence's citations or status: the result is exactly that of aligning every feasible
pair. The bookkeeping of the calls is done in kernels (:mod:`citekit.kernels._rounds`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from citekit._citations.candidates import Candidates
from citekit._citations.coverage import LETTER_RUN
from citekit._citations.queries import QueryBatch
from citekit._citations.ranking import (
    EVIDENCE_POOL_PER_CITATION,
    batch_top_k,
    evidence_char_ranges,
    rank,
    walk_keys,
)
from citekit._citations.scoring import PairScoring
from citekit.config import CitationConfig
from citekit.corpus import Corpus
from citekit.index import gather_ranges
from citekit.kernels import PairAlignments
from citekit.kernels._ranking import rank_within_queries
from citekit.kernels._rounds import assemble_blocks, close_queries, record_alignments

__all__ = ["AlignmentArena", "CallAlignments", "align_best_first", "run_aligner"]

# alignment batches smaller than this many DP cells run on one thread: waking the
# workers costs about 8 us, which a batch of 20,000 cells (30-odd sentence-passage pairs)
# repays (measured on 2 cores: a 5-sentence answer's 800 pairs aligned in 0.72 ms on two
# threads, 1.26 ms on one)
_PARALLEL_MIN_CELLS = 20_000
# candidate pairs per sentence aligned in the first best-first round
_FIRST_ROUND_PAIRS = 32
# with fewer feasible pairs than this in a batch, all are aligned in one call
_ALIGN_ALL_BELOW = 2048


class CallAlignments(NamedTuple):
    """One aligner call's results: ``rows`` of shape ``(6, n_pairs)`` (score, query_start,
    query_end, target_start, target_end, matches); pair ``k``'s blocks are
    ``blocks[block_starts[k]:block_starts[k] + block_counts[k]]``."""

    rows: np.ndarray
    block_counts: np.ndarray
    block_starts: np.ndarray
    blocks: np.ndarray


def run_aligner(
    query_ids: np.ndarray,
    query_offsets: np.ndarray,
    corpus: Corpus,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    config: CitationConfig,
    aligner: Any,
    n_threads: int | None,
) -> CallAlignments:
    """Align query ``pair_query[k]`` with passage ``pair_passage[k]`` for every ``k``.

    The built-in aligner (``aligner`` None) reads the passages in place from the corpus's
    token array (no copy, no input checks: the pipeline's arrays are valid by
    construction); a custom ``align_pairs`` object or per-pair ``align`` object gets the
    passages packed CSR-style as :func:`~citekit.kernels.align_pairs` takes them.
    """
    if aligner is None:
        from citekit.kernels import align_ranges_unchecked

        rows, block_counts, block_starts, blocks = align_ranges_unchecked(
            query_ids,
            query_offsets,
            corpus.token_ids,
            corpus.passage_token_start,
            corpus.passage_token_end,
            pair_query,
            pair_passage,
            config.match_score,
            config.mismatch_score,
            config.gap_score,
            config.band_width,
            n_threads,
            _PARALLEL_MIN_CELLS,
        )
        return CallAlignments(rows, block_counts, block_starts, blocks)
    unique_passages = np.unique(pair_passage)
    target_lo = corpus.passage_token_start[unique_passages]
    target_hi = corpus.passage_token_end[unique_passages]
    positions, _ = gather_ranges(target_lo, target_hi)
    target_ids = corpus.token_ids[positions]
    target_offsets = np.zeros(unique_passages.shape[0] + 1, dtype=np.int64)
    np.cumsum(target_hi - target_lo, out=target_offsets[1:])
    pair_target = np.searchsorted(unique_passages, pair_passage)
    if callable(getattr(aligner, "align_pairs", None)):
        options: dict[str, Any] = dict(
            match_score=config.match_score,
            mismatch_score=config.mismatch_score,
            gap_score=config.gap_score,
            band_width=config.band_width,
            return_blocks=True,
        )
        if n_threads is not None:
            options["n_threads"] = n_threads
        out = aligner.align_pairs(
            query_ids,
            query_offsets,
            target_ids,
            target_offsets,
            pair_query,
            pair_target,
            **options,
        )
        try:
            found = PairAlignments(
                *(np.asarray(getattr(out, name), dtype=np.int64)
                  for name in PairAlignments._fields)
            )
        except (AttributeError, TypeError, ValueError) as error:
            raise TypeError(
                f"aligner.align_pairs must return a PairAlignments-like record of integer "
                f"arrays ({', '.join(PairAlignments._fields)}); got {type(out).__name__} "
                f"({error})"
            ) from None
        return CallAlignments(
            np.ascontiguousarray(np.stack(found[:6])),
            np.diff(found.block_offsets),
            found.block_offsets[:-1],
            np.ascontiguousarray(found.blocks.reshape(-1, 3)),
        )
    # a per-pair aligner: align(query, target) -> LocalAlignment-like record
    rows = np.zeros((6, pair_query.shape[0]), dtype=np.int64)
    block_offsets = np.zeros(pair_query.shape[0] + 1, dtype=np.int64)
    found_blocks: list[tuple[int, int, int]] = []
    for p, (qi, ti) in enumerate(zip(pair_query.tolist(), pair_target.tolist())):
        query = query_ids[query_offsets[qi] : query_offsets[qi + 1]]
        target = target_ids[target_offsets[ti] : target_offsets[ti + 1]]
        result = aligner.align(query, target)
        try:
            rows[:, p] = [
                int(result.score),
                int(result.query_start),
                int(result.query_end),
                int(result.target_start),
                int(result.target_end),
                int(result.matches),
            ]
            pair_blocks = getattr(result, "blocks", None) or ()
            found_blocks.extend((int(b[0]), int(b[1]), int(b[2])) for b in pair_blocks)
        except (AttributeError, TypeError, ValueError, IndexError, OverflowError) as error:
            raise TypeError(
                "aligner.align must return a LocalAlignment-like record (integer score, "
                "query_start, query_end, target_start, target_end, matches, optional blocks "
                f"of (query, target, length)); got {type(result).__name__} ({error})"
            ) from None
        block_offsets[p + 1] = len(found_blocks)
    block_array = np.array(found_blocks, dtype=np.int64).reshape(-1, 3)
    return CallAlignments(rows, np.diff(block_offsets), block_offsets[:-1], block_array)


class AlignmentArena:
    """The alignments of a batch's candidate pairs, as aligner calls fill them in.

    Each call's results go straight into per-pair arrays (:attr:`aligned_rows`: score,
    query_start, query_end, target_start, target_end, matches; :attr:`content_matched`:
    the content tokens matched, see :func:`~citekit.kernels._rounds.record_alignments`),
    and its blocks are appended to one array (the arena), gathered per pair once, by
    :meth:`rows`.
    """

    def __init__(
        self,
        corpus: Corpus,
        batch: QueryBatch,
        pair_query: np.ndarray,
        pair_passage: np.ndarray,
        content_present: np.ndarray,
        config: CitationConfig,
        aligner: Any,
        n_threads: int | None,
    ) -> None:
        n_pairs = pair_query.shape[0]
        self.corpus = corpus
        self.batch = batch
        self.pair_query = pair_query
        self.pair_passage = pair_passage
        self.content_present = content_present
        self.config = config
        self.aligner = aligner
        self.n_threads = n_threads
        self.aligned_rows = np.zeros((6, n_pairs), np.int64)
        self.content_matched = np.zeros(n_pairs, np.float64)
        # every call's blocks, appended (rows in use: blocks_used); a pair's latest blocks
        # are blocks[block_start[p]:block_start[p] + block_count[p]]
        self.blocks = np.zeros((0, 3), np.int64)
        self.blocks_used = 0
        self.block_start = np.zeros(n_pairs, np.int64)
        self.block_count = np.zeros(n_pairs, np.int64)

    def rows(self) -> PairAlignments:
        """Every pair's latest alignment (zeros for a pair never aligned)."""
        block_offsets, blocks = assemble_blocks(self.block_start, self.block_count, self.blocks)
        return PairAlignments(*self.aligned_rows, block_offsets, blocks)

    def align(self, pairs: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Align ``pairs`` (sorted) with query tokens ``ids``; returns the pairs to
        align again on content words (see :meth:`align_with_retry`)."""
        batch = self.batch
        found = run_aligner(
            ids,
            batch.offsets,
            self.corpus,
            self.pair_query[pairs],
            self.pair_passage[pairs],
            self.config,
            self.aligner,
            self.n_threads,
        )
        needed = self.blocks_used + int(found.block_counts.sum())
        if needed > self.blocks.shape[0]:
            grown = np.empty((max(needed, 2 * self.blocks.shape[0]), 3), np.int64)
            grown[: self.blocks_used] = self.blocks[: self.blocks_used]
            self.blocks = grown
        retry = record_alignments(
            pairs,
            found.rows,
            found.block_counts,
            found.block_starts,
            found.blocks,
            batch.offsets,
            self.pair_query,
            batch.content_prefix,
            batch.word_prefix,
            LETTER_RUN,
            self.content_present,
            self.aligned_rows,
            self.block_start,
            self.block_count,
            self.content_matched,
            self.blocks,
            self.blocks_used,
        )
        self.blocks_used = needed
        return retry  # type: ignore[no-any-return]

    def align_with_retry(self, todo: np.ndarray) -> None:
        """Align ``todo`` (sorted), and again on content words those whose alignment
        matched none."""
        # the best local alignment can be a run of stop words ("in the") although
        # the passage holds content words of the sentence: align those on content
        batch = self.batch
        retry = self.align(todo, batch.ids)
        if retry.size:
            # the query with stop words replaced by ids that match nothing
            content_prefix = batch.content_prefix
            content_only_ids = np.where(
                content_prefix[1:] > content_prefix[:-1],
                batch.ids,
                -1 - np.arange(batch.ids.shape[0]),
            )
            self.align(retry, content_only_ids)


def align_best_first(
    corpus: Corpus,
    batch: QueryBatch,
    found: Candidates,
    content_present: np.ndarray,
    feasible: np.ndarray,
    score_bound: np.ndarray | None,
    scoring: PairScoring,
    config: CitationConfig,
    aligner: Any,
    n_threads: int | None,
) -> tuple[PairAlignments, np.ndarray]:
    """Align feasible pairs in rounds, most promising first, until no unaligned pair
    can change any sentence's citations or status; returns every pair's alignment and
    content tokens matched.

    Each round is ONE aligner call over the pairs of every sentence still open. A
    sentence is closed when walking its accepted pairs whose score beats the best
    score any unaligned pair could reach (``score_bound``) already fills ``top_k``
    citations and the evidence pool (see
    :func:`~citekit._citations.ranking.choose_citations`); the result is then exactly
    the result of aligning every candidate. Without a bound (``score_bound`` None: a
    custom scorer, embedding-only citations) every feasible pair is aligned in one call.
    The rounds rank, walk and close sentences in compiled kernels.
    """
    pair_query, pair_passage = found.pair_query, found.pair_passage
    n_pairs = pair_query.shape[0]
    n_queries = batch.offsets.shape[0] - 1
    top_k = batch_top_k(config.top_k, n_pairs)
    arena = AlignmentArena(
        corpus, batch, pair_query, pair_passage, content_present, config, aligner, n_threads
    )
    candidates = np.flatnonzero(feasible)
    # few pairs: aligning them all costs less than deciding which to skip
    if score_bound is None or candidates.shape[0] <= _ALIGN_ALL_BELOW:
        if candidates.size:
            arena.align_with_retry(candidates)
        return arena.rows(), arena.content_matched

    # feasible pairs of each sentence, most promising first
    order, query_first = rank_within_queries(
        candidates,
        pair_query,
        n_queries,
        np.stack((-score_bound, -found.lexical)),
        pair_passage.reshape(1, -1),
    )
    order_query = pair_query[order]
    rank_in_query = np.arange(order.shape[0]) - query_first[order_query]
    limit = np.full(n_queries, max(_FIRST_ROUND_PAIRS, 4 * top_k), dtype=np.int64)
    open_query = np.ones(n_queries, dtype=bool)
    aligned = np.zeros(n_pairs, dtype=bool)
    empty_offsets = np.zeros(0, np.int64)
    empty_blocks = np.zeros((0, 3), np.int64)
    while True:
        todo = order[
            open_query[order_query] & (rank_in_query < limit[order_query]) & ~aligned[order]
        ]
        if todo.size == 0:
            break
        todo = np.sort(todo)
        arena.align_with_retry(todo)
        aligned[todo] = True
        # close the sentences whose remaining pairs cannot change the outcome: only
        # the aligned pairs of open sentences matter (the others are not accepted),
        # and scoring them needs no blocks
        judged = np.flatnonzero(aligned & open_query[pair_query])
        judged_passage = pair_passage[judged]
        rows = PairAlignments(
            *(field[judged] for field in arena.aligned_rows), empty_offsets, empty_blocks
        )
        scored = scoring(rows, arena.content_matched[judged], judged)
        char_start, char_end = evidence_char_ranges(
            corpus, rows, judged_passage, np.zeros(judged.shape[0], dtype=bool)
        )
        judged_query = pair_query[judged]
        ranked, ranked_bounds = rank(
            scored.accepted,
            judged_query,
            judged_passage,
            char_start,
            char_end,
            scored.final,
            corpus,
            n_queries,
            config,
        )
        close_queries(
            open_query,
            limit,
            query_first,
            order,
            score_bound,
            ranked,
            ranked_bounds,
            scored.final,
            *walk_keys(corpus, judged_passage, char_start, char_end),
            top_k,
            config.max_citations_per_source,
            top_k * EVIDENCE_POOL_PER_CITATION,
        )
    return arena.rows(), arena.content_matched
