"""What a candidate passage's bag of tokens allows, before anything is aligned.

An alignment matches at most the sentence tokens its passage contains, so counting them
(:func:`bag_statistics`) bounds what it could reach: a pair becomes a citation only when
its passage holds a content token of the sentence, at least ``_MIN_CONTENT_TOKENS``
distinct content words of it, also as light inflections (half of them, rounded up, for
a sentence of fewer than four: one word in common is a coincidence, not evidence), and
enough of its content to reach ``min_answer_coverage``; with the default scorer, its
score cannot exceed :func:`score_bound`. Pairs failing these are never aligned.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from citekit._citations.forms import SurfaceForms
from citekit._citations.queries import Queries, QueryBatch
from citekit._citations.content import fold_surface
from citekit.config import CitationConfig
from citekit.corpus import Corpus
from citekit.kernels._overlap import bag_counts_from_held, pair_bag_counts, query_terms
from citekit.kernels._scoring import pair_feasibility

__all__ = [
    "BagStatistics",
    "Feasibility",
    "bag_statistics",
    "content_variants",
    "feasible_pairs",
    "pair_limits",
    "score_bound",
]

# a citation must match or contain at least this many distinct content words of the
# sentence (half of them if it has fewer than four): one shared word among many is a
# coincidence, not evidence
_MIN_CONTENT_TOKENS = 2


class BagStatistics(NamedTuple):
    """The sentence tokens each pair's passage holds (per pair unless said per query)."""

    all_occurrences: np.ndarray
    content_occurrences: np.ndarray
    content_distinct: np.ndarray
    distinct_content_per_query: np.ndarray
    # the same two counts for the content tokens that are words (not single letters of a
    # script tokenized letter by letter, see citekit._citations.content.letter_token_mask)
    word_distinct: np.ndarray
    distinct_words_per_query: np.ndarray


class _QueryTerms(NamedTuple):
    """The distinct tokens (terms) of every query
    (:func:`~citekit.kernels._overlap.query_terms`); query ``q`` owns terms
    ``offsets[q]:offsets[q + 1]``."""

    columns: np.ndarray
    offsets: np.ndarray
    counts: np.ndarray  # (occurrences in the query)
    flagged: np.ndarray  # (any occurrence flagged: content, or word)
    distinct_flagged: np.ndarray  # (per query)


class Feasibility(NamedTuple):
    """Per pair, what :func:`~citekit.kernels._scoring.pair_feasibility` decides before
    aligning."""

    safe_len: np.ndarray  # (the query's tokens, at least 1)
    safe_content: np.ndarray  # (its content tokens, at least 1)
    # the share of the query's distinct content words that the passage holds
    passage_content_coverage: np.ndarray
    min_content: np.ndarray  # (the distinct content tokens a citation needs)
    feasible: np.ndarray  # (passes the coverage test)
    short: np.ndarray  # (passes it with fewer distinct content tokens than needed)


def bag_statistics(
    corpus: Corpus,
    query_ids: np.ndarray,
    query_offsets: np.ndarray,
    query_content: np.ndarray,
    columns: np.ndarray,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    held: np.ndarray | None = None,
    query_words: np.ndarray | None = None,
) -> BagStatistics:
    """For every pair: how many query tokens (all / content, with multiplicity) and how
    many distinct content tokens of the query its passage contains, and how many distinct
    content tokens that are words (``query_words``; None: every content token); from
    ``held`` (which of its query's distinct tokens each passage holds, see
    :meth:`IdfIndex.top_k_with_terms`) when given and known, else from the passages' rows."""
    n_queries = query_offsets.shape[0] - 1
    n_pairs = pair_query.shape[0]
    if query_ids.size == 0:
        zeros = np.zeros(n_pairs)
        return BagStatistics(zeros, zeros, zeros, np.zeros(n_queries), zeros,
                             np.zeros(n_queries))
    terms = _QueryTerms(*query_terms(query_ids, query_offsets, query_content, columns))
    all_occurrences, content_occurrences, content_distinct = _counts(
        corpus, pair_query, pair_passage, held, terms, terms.flagged
    )
    if query_words is None:
        word_distinct, distinct_words = content_distinct, terms.distinct_flagged
    else:
        # (the same terms, flagged where a word occurs)
        words = _QueryTerms(*query_terms(query_ids, query_offsets, query_words, columns))
        word_distinct = _counts(corpus, pair_query, pair_passage, held, terms, words.flagged)[2]
        distinct_words = words.distinct_flagged
    return BagStatistics(
        all_occurrences=all_occurrences.astype(np.float64),
        content_occurrences=content_occurrences.astype(np.float64),
        content_distinct=content_distinct.astype(np.float64),
        distinct_content_per_query=terms.distinct_flagged,
        word_distinct=word_distinct.astype(np.float64),
        distinct_words_per_query=distinct_words,
    )


def _counts(
    corpus: Corpus,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    held: np.ndarray | None,
    terms: _QueryTerms,
    term_flags: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """(all, flagged, distinct flagged) query tokens each pair's passage holds, of the
    query ``terms`` flagged by ``term_flags``."""
    if held is None:
        return _counts_from_rows(  # type: ignore[no-any-return]
            corpus, pair_query, pair_passage, np.arange(pair_query.shape[0]), terms, term_flags
        )
    found = bag_counts_from_held(held, pair_query, terms.offsets, terms.counts, term_flags)
    unknown = np.flatnonzero(held < 0)
    if unknown.size:  # (sentences of more than 63 distinct tokens)
        counted = _counts_from_rows(corpus, pair_query, pair_passage, unknown, terms, term_flags)
        for known, values in zip(found, counted):
            known[unknown] = values
    return found  # type: ignore[no-any-return]


def _counts_from_rows(
    corpus: Corpus,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    pairs: np.ndarray,
    terms: _QueryTerms,
    term_flags: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """:func:`_counts` of ``pairs``, read from their passages' rows of the index."""
    row_pointers, row_columns = corpus.index.rows
    return pair_bag_counts(  # type: ignore[no-any-return]
        row_pointers,
        row_columns,
        terms.columns,
        terms.offsets,
        terms.counts,
        term_flags,
        pair_query[pairs],
        pair_passage[pairs],
        corpus.index.n_terms,
    )


def pair_limits(
    pair_query: np.ndarray, batch: QueryBatch, bag: BagStatistics, config: CitationConfig
) -> Feasibility:
    """Which pairs can become citations at all (by what their passages hold), and the
    distinct content tokens each needs: one kernel call."""
    return Feasibility(
        *pair_feasibility(
            pair_query,
            np.diff(batch.offsets),
            batch.content_total,
            bag.distinct_content_per_query,
            bag.content_occurrences,
            bag.content_distinct,
            bag.distinct_words_per_query,
            bag.word_distinct,
            float(config.min_answer_coverage),
            _MIN_CONTENT_TOKENS,
        )
    )


def content_variants(
    corpus: Corpus,
    answers: list[str],
    queries: Queries,
    first: int,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    bag: BagStatistics,
    limits: Feasibility,
) -> np.ndarray:
    """For each pair: how many distinct content words of its sentence its passage holds,
    counted in any inflection for the pairs short of them as they stand
    (``limits.short``), and as they stand for the others (sentence ``q`` of the batch is
    sentence ``first + q`` of ``queries``)."""
    variants = bag.content_distinct.copy()
    short = np.flatnonzero(limits.short)
    if short.size:
        # the passage may hold the other content words as inflections ("expects")
        variants[short] = _content_variant_counts(
            corpus, answers, queries, first, pair_query[short], pair_passage[short]
        )
    return variants


def _content_variant_counts(
    corpus: Corpus,
    answers: list[str],
    queries: Queries,
    first: int,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
) -> np.ndarray:
    """For each pair: how many distinct content words of the sentence (folded, see
    :func:`~citekit._citations.content.fold_surface`) its passage holds in some inflection."""
    forms = SurfaceForms.of(corpus)
    sentence_forms: dict[int, np.ndarray] = {}
    for q in np.unique(pair_query).tolist():
        answer = answers[queries.answer_of[first + q]]
        starts, ends, content = queries.tokens_of(first + q)
        sentence_forms[q] = np.array(
            sorted(
                {
                    forms.form(fold_surface(answer[s:e]))
                    for s, e, is_content in zip(
                        starts.tolist(), ends.tolist(), content.tolist()
                    )
                    if is_content
                }
            ),
            dtype=np.int64,
        )
    counts = np.array([sentence_forms[q].shape[0] for q in pair_query.tolist()], dtype=np.int64)
    pair_of = np.repeat(np.arange(pair_query.shape[0], dtype=np.int64), counts)
    wanted = (
        np.concatenate([sentence_forms[q] for q in pair_query.tolist()])
        if pair_query.shape[0]
        else np.zeros(0, dtype=np.int64)
    )
    held = forms.held(pair_passage[pair_of], wanted)
    return np.bincount(pair_of, weights=held, minlength=pair_query.shape[0])


def score_bound(
    config: CitationConfig,
    bag: BagStatistics,
    limits: Feasibility,
    lexical: np.ndarray,
    embedding: np.ndarray,
) -> np.ndarray:
    """The best score of :class:`~citekit._citations.scoring.WeightedScorer` that each
    pair could reach: its alignment matches at most the query tokens its passage holds,
    and evidence coverage is at most 1."""
    match_bound = bag.all_occurrences / limits.safe_len
    weights = config.weights
    return (  # type: ignore[no-any-return]
        (weights.alignment + weights.answer_coverage) * match_bound
        + weights.evidence_coverage
        + weights.lexical * lexical
        + weights.embedding * np.maximum(embedding, 0.0)
    )


def feasible_pairs(
    limits: Feasibility,
    variants: np.ndarray,
    bound: np.ndarray | None,
    config: CitationConfig,
) -> np.ndarray:
    """The pairs worth aligning: ``limits.feasible`` (narrowed in place) with enough
    distinct content words (``variants``, :func:`content_variants`) and, with a score
    ``bound`` (:func:`score_bound`; None: none), able to reach ``min_final_score``."""
    feasible = limits.feasible
    feasible &= variants >= limits.min_content
    if bound is not None:
        feasible &= bound >= config.min_final_score
    return feasible
