"""Retrieval-only support: the candidate passages of each sentence that gave no citation
(cite-right's ``SpanCitations.retrieval_support``), read from the candidates the
retrieval stage found; off unless ``CitationConfig.max_retrieval_support`` > 0.
"""

from __future__ import annotations

import numpy as np

from citekit._citations.candidates import Candidates
from citekit.config import CitationConfig
from citekit.corpus import Corpus
from citekit.results import FrozenList, RetrievalSupport, SpanCitations, _unchecked_builder

__all__ = ["add_retrieval_support"]


def add_retrieval_support(
    records: list[SpanCitations],
    found: Candidates,
    corpus: Corpus,
    config: CitationConfig,
) -> list[SpanCitations]:
    """Set the ``retrieval_support`` of ``records`` (one per sentence of the batch whose
    candidates ``found`` holds, in order) in place, and return them.

    A sentence's retrieval support is its candidate passages that none of its citations
    rests on and that the search found lexically (a positive lexical score) or by an
    embedding similarity of at least ``min_embedding_similarity``; ranked by
    ``retrieval_score`` (best first), then source index, passage start and passage
    number; at most ``config.max_retrieval_support`` of them. Nothing is computed when
    that is 0. The work is a few array operations per batch and one Python step per
    reported entry (and per cited passage skipped).
    """
    limit = config.max_retrieval_support
    if limit == 0 or not records or found.pair_query.shape[0] == 0:
        return records
    lexical = found.lexical.astype(np.float64)
    embedding = found.embedding.astype(np.float64)
    weights = config.weights
    score = weights.lexical * lexical + weights.embedding * np.maximum(embedding, 0.0)
    # (without an embedder every similarity is 0.0: no embedding signal at all)
    found_by_embedding = (embedding != 0.0) & (embedding >= config.min_embedding_similarity)
    keep = np.flatnonzero((lexical > 0.0) | found_by_embedding)
    passage = found.pair_passage[keep]
    source = corpus.passage_source[passage]
    source_index = corpus.source_indices[source]
    start = corpus.base_offsets[source] + corpus.passage_char_start[passage]
    query = found.pair_query[keep]
    order = np.lexsort((passage, start, source_index, -score[keep], query))
    keep, query = keep[order], query[order]
    bounds = np.searchsorted(query, np.arange(len(records) + 1))
    new_support = _unchecked_builder(RetrievalSupport)
    for number, record in enumerate(records):
        cited = {citation.candidate_index for citation in record.citations}
        entries = []
        for pair in keep[bounds[number] : bounds[number + 1]].tolist():
            candidate = int(found.pair_passage[pair])
            if candidate in cited:
                continue
            source_number = int(corpus.passage_source[candidate])
            base = int(corpus.base_offsets[source_number])
            entries.append(
                new_support(
                    retrieval_score=float(score[pair]),
                    source_id=corpus.source_ids[source_number],
                    source_index=int(corpus.source_indices[source_number]),
                    candidate_index=candidate,
                    passage_char_start=base + int(corpus.passage_char_start[candidate]),
                    passage_char_end=base + int(corpus.passage_char_end[candidate]),
                    passage_text=corpus.passage_text(candidate),
                    embedding_score=float(embedding[pair]),
                    lexical_score=float(lexical[pair]),
                )
            )
            if len(entries) == limit:
                break
        # (the batch's own fresh records, not yet returned: set like their builder does)
        object.__setattr__(record, "retrieval_support", FrozenList(entries))
    return records
