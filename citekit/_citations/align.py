"""One batch of answer sentences through the citation stages, in data-flow order: a
reader follows the arrays forward from the sentences' tokens to the records.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from citekit._citations.candidates import find_candidates
from citekit._citations.coverage import judged_covers
from citekit._citations.feasibility import (
    bag_statistics,
    content_variants,
    feasible_pairs,
    pair_limits,
    score_bound,
)
from citekit._citations.queries import Queries
from citekit._citations.ranking import choose_citations, evidence_char_ranges
from citekit._citations.records import AlignedBatch, batch_records, judged_facts
from citekit._citations.retrieval_support import add_retrieval_support
from citekit._citations.rounds import align_best_first
from citekit._citations.scoring import PairScoring
from citekit.config import CitationConfig
from citekit.corpus import Corpus
from citekit.results import SpanCitations

__all__ = ["Stages", "align_batch"]


class Stages(NamedTuple):
    """A pipeline's configuration and stages, as a batch is aligned with them."""

    config: CitationConfig
    scorer: Any  # (resolved: a WeightedScorer by default)
    aligner: Any  # (None: the built-in kernels)
    embedder: Any
    n_threads: int | None


def align_batch(
    stages: Stages, answers: list[str], queries: Queries, first: int, last: int, corpus: Corpus
) -> list[SpanCitations]:
    """The :class:`~citekit.results.SpanCitations` of sentences ``first:last`` of
    ``queries`` (read from ``answers``), cited in ``corpus``."""
    config = stages.config
    batch = queries.pack(first, last)
    found = find_candidates(
        corpus, batch, queries.texts(answers, first, last), config, stages.embedder,
        stages.n_threads,
    )
    # which pairs can become citations at all, and the best score each could reach: an
    # alignment matches at most the query tokens the passage contains
    bag = bag_statistics(
        corpus, batch.ids, batch.offsets, batch.content, found.columns, found.pair_query,
        found.pair_passage, found.held, batch.words if batch.has_letters else None,
    )
    limits = pair_limits(found.pair_query, batch, bag, config)
    variants = content_variants(
        corpus, answers, queries, first, found.pair_query, found.pair_passage, bag, limits
    )
    scoring = PairScoring(
        config, stages.scorer, stages.embedder is not None, limits, variants, found.lexical,
        found.embedding,
    )
    bound = (
        score_bound(config, bag, limits, found.lexical, found.embedding)
        if scoring.bounded
        else None
    )
    feasible = feasible_pairs(limits, variants, bound, config)

    rows, content_matched = align_best_first(
        corpus, batch, found, bag.content_occurrences, feasible, bound, scoring, config,
        stages.aligner, stages.n_threads,
    )
    scored = scoring(rows, content_matched)
    embedding_only, final = scoring.embedding_only(scored)

    char_start, char_end = evidence_char_ranges(corpus, rows, found.pair_passage, embedding_only)
    choice = choose_citations(
        scored.accepted | embedding_only, found.pair_query, found.pair_passage, char_start,
        char_end, final, corpus, last - first, config,
    )
    context = AlignedBatch(
        corpus=corpus,
        batch=batch,
        rows=rows,
        pair_query=found.pair_query,
        pair_passage=found.pair_passage,
        char_start=char_start,
        char_end=char_end,
        final=final,
        components=scored.components,
        component_matrix=scored.matrix,
        embedding_only=embedding_only,
    )
    # the tokens each candidate citation covers, for every sentence in one batch
    folded, weights, values = queries.facts(first, last)
    covers, cover_offsets = judged_covers(
        corpus, rows, choice.judged, choice.judged_offsets, found.pair_query,
        found.pair_passage, embedding_only, batch, found.columns, folded,
    )
    judged = judged_facts(corpus, context, choice.judged, batch.content_total)
    records = batch_records(
        config, answers, queries, first, context, judged, covers, cover_offsets, choice,
        weights, values,
    )
    # the candidates no citation rests on (cite-right's retrieval_support; off by default)
    return add_retrieval_support(records, found, corpus, config)
