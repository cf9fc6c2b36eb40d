"""Ranking the accepted pairs of every sentence and choosing its citations and evidence
pool, with the specification's tie-breaks and duplicate evidence dropped.

A sentence's citations by score are its best pairs, at most ``max_citations_per_source``
per source and ``top_k`` in all; its evidence pool the ``EVIDENCE_POOL_PER_CITATION *
top_k`` best whatever their source, among which the records stage chooses the evidence
set (a greedy cover of the sentence's content).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from citekit.config import CitationConfig
from citekit.corpus import Corpus
from citekit.kernels import PairAlignments
from citekit.kernels._evidence import evidence_chars
from citekit.kernels._ranking import rank_and_choose, rank_eligible

__all__ = [
    "EVIDENCE_POOL_PER_CITATION",
    "Choice",
    "batch_top_k",
    "choose_citations",
    "evidence_char_ranges",
    "rank",
    "walk_keys",
]

# the evidence set of a sentence is chosen among this many best citations per top_k slot
EVIDENCE_POOL_PER_CITATION = 3
# the pairs of a sentence ranked before its walk for citations and pool (they need 12 at
# the default top_k: 9 in the pool and 3 citations, with duplicates more); only a walk that
# reads past them ranks the sentence's other pairs
_RANKED_FRONT = 32


class Choice(NamedTuple):
    """What :func:`choose_citations` chose for every sentence of a batch (as
    :func:`citekit.kernels._ranking.choose_all`)."""

    # the pairs each sentence judges: its pool, then its citations outside it; sentence
    # q's are judged[judged_offsets[q]:judged_offsets[q + 1]], the first n_pool[q] its pool
    judged: np.ndarray
    judged_offsets: np.ndarray
    n_pool: np.ndarray
    # the rows (in its judged pairs) of its citations by score, best first
    chosen_rows: np.ndarray
    chosen_offsets: np.ndarray


def evidence_char_ranges(
    corpus: Corpus, rows: PairAlignments, pair_passage: np.ndarray, embedding_only: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Character range (in the tokenized text) of each pair's evidence: from the first
    to the last aligned token, or the whole passage window for embedding-only citations."""
    return evidence_chars(  # type: ignore[no-any-return]
        pair_passage,
        rows.target_start,
        rows.target_end,
        embedding_only,
        corpus.passage_token_start,
        corpus.passage_char_start,
        corpus.passage_char_end,
        corpus.token_starts,
        corpus.token_ends,
    )


def rank(
    eligible_mask: np.ndarray,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    char_start: np.ndarray,
    char_end: np.ndarray,
    final: np.ndarray,
    corpus: Corpus,
    n_queries: int,
    config: CitationConfig,
) -> tuple[np.ndarray, np.ndarray]:
    """Eligible pairs grouped by query, best first, with the specification's tie-breaks,
    and the bounds of each query's pairs (``pair_query`` below ``n_queries``).

    Within a query: by ``final`` descending, then (``prefer_source_order``) source
    order, evidence start in the source and longer evidence first, or (without it)
    evidence start, longer evidence and source order; then passage, then pair index.
    """
    return rank_eligible(  # type: ignore[no-any-return]
        *_ranking_arguments(
            eligible_mask, pair_query, pair_passage, char_start, char_end, final, corpus,
            n_queries, config.prefer_source_order,
        )
    )


def _ranking_arguments(
    eligible_mask: np.ndarray,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    char_start: np.ndarray,
    char_end: np.ndarray,
    final: np.ndarray,
    corpus: Corpus,
    n_queries: int,
    prefer_source_order: bool,
    *,
    absolute: bool = False,
) -> tuple[Any, ...]:
    """The arguments of the ranking kernels (:func:`citekit.kernels._ranking.rank_eligible`,
    the first of :func:`~citekit.kernels._ranking.rank_and_choose`); ``absolute``: the
    offsets are absolute in the documents already (:func:`walk_keys`), so no base is
    added to them (the ranking keys are the same)."""
    return (
        np.ascontiguousarray(eligible_mask, dtype=np.bool_),
        pair_query,
        pair_passage,
        char_start,
        char_end,
        np.ascontiguousarray(final, dtype=np.float64),
        corpus.passage_source,
        np.zeros_like(corpus.base_offsets) if absolute else corpus.base_offsets,
        corpus.source_indices,
        prefer_source_order,
        n_queries,
    )


def choose_citations(
    eligible_mask: np.ndarray,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    char_start: np.ndarray,
    char_end: np.ndarray,
    final: np.ndarray,
    corpus: Corpus,
    n_queries: int,
    config: CitationConfig,
) -> Choice:
    """Walk every sentence's eligible pairs in :func:`rank`'s order, dropping duplicate
    evidence (the same source and characters), for its citations by score and its
    evidence pool.

    One kernel call for the batch (:func:`citekit.kernels._ranking.rank_and_choose`)
    ranks only as many of a sentence's pairs as the walk reads (``_RANKED_FRONT`` unless
    it needs more).
    """
    top_k = batch_top_k(config.top_k, pair_query.shape[0])
    owner, start, end = walk_keys(corpus, pair_passage, char_start, char_end)
    return Choice(
        *rank_and_choose(
            *_ranking_arguments(
                eligible_mask, pair_query, pair_passage, start, end, final, corpus, n_queries,
                config.prefer_source_order, absolute=corpus.chunks_share_documents,
            ),
            owner,
            top_k,
            config.max_citations_per_source,
            top_k * EVIDENCE_POOL_PER_CITATION,
            max(_RANKED_FRONT, 2 * top_k * (EVIDENCE_POOL_PER_CITATION + 1)),
        )
    )


def walk_keys(
    corpus: Corpus, pair_passage: np.ndarray, char_start: np.ndarray, char_end: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(owner, start, end)`` of each pair's evidence as the citation walks compare them:
    evidence is a duplicate of an earlier pair's when all three agree, and citations per
    owner are capped. The owner is the pair's source and the offsets those of its text,
    unless chunks of one document are among the sources: then the owner is the document
    (:attr:`Corpus.source_documents`) and the offsets are absolute in it."""
    source = corpus.passage_source[pair_passage]
    if not corpus.chunks_share_documents:
        return source, char_start, char_end
    base = corpus.base_offsets[source]
    return corpus.source_documents[source], char_start + base, char_end + base


def batch_top_k(top_k: int, n_pairs: int) -> int:
    """``top_k`` for the kernels of a batch of ``n_pairs`` candidate pairs: no sentence has
    more citations than the batch has pairs, so a larger ``top_k`` changes nothing, but
    the kernels size their arrays by it (``top_k=2**31 - 1`` would ask for gigabytes).

    Examples
    --------
    >>> batch_top_k(3, 100), batch_top_k(2**31 - 1, 40), batch_top_k(5, 0)
    (3, 40, 1)
    """
    return min(top_k, max(n_pairs, 1))
