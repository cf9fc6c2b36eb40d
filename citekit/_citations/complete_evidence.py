"""``require_all_answer_tokens_in_evidence``: only citations whose evidence holds the whole
answer span.

Applied to finished span records (it only removes citations), so the default path pays
nothing for it. The answer span's tokens are its word tokens in the answer, those with a
letter or a digit (punctuation is not a claim, and cite-right's tokens are words only;
reference markers such as ``[1]`` aside, as everywhere in the pipeline); the evidence's
tokens are those of
its evidence text, of each piece for multi-span evidence. The evidence must hold every
answer token as many times as the span has it, in any order. A span left without
citations becomes ``unsupported``, its whole range unsupported.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from citekit._citations.content import citation_marker_mask
from citekit.results import Citation, SpanCitations
from citekit.tokenizers.base import tokenize_checked

__all__ = ["complete_evidence_only"]


def complete_evidence_only(
    spans: list[SpanCitations], answer: str, tokenizer: Any
) -> list[SpanCitations]:
    """``spans`` (one answer's records) keeping only the citations whose evidence holds
    every token of their answer span.

    Examples
    --------
    >>> from citekit import align_citations, SimpleTokenizer
    >>> answer = "Revenue grew 15% in 2024."
    >>> spans = align_citations(answer, ["Revenue grew 15% in Q4.", "Sales in 2024 were flat."])
    >>> [c.evidence for c in spans[0].citations], spans[0].status
    (['Revenue grew 15% in'], 'supported')
    >>> kept = complete_evidence_only(list(spans), answer, SimpleTokenizer())
    >>> kept[0].citations == [], kept[0].status
    (True, 'unsupported')
    """
    if not any(span.citations for span in spans):
        return spans
    tokens = tokenize_checked(tokenizer, answer)
    words = [any(ch.isalnum() for ch in token) for token in tokens.tokens]
    keep = np.array(words, dtype=bool) & ~citation_marker_mask(answer, tokens.starts, tokens.ends)
    ids, starts, ends = tokens.token_ids[keep], tokens.starts[keep], tokens.ends[keep]
    evidence_counts: dict[tuple[Any, ...], Counter] = {}
    kept_spans = []
    for span in spans:
        if not span.citations:
            kept_spans.append(span)
            continue
        inside = (starts >= span.answer_span.char_start) & (ends <= span.answer_span.char_end)
        needed = Counter(ids[inside].tolist())
        citations = tuple(
            citation
            for citation in span.citations
            if _holds(needed, _counts(citation, tokenizer, evidence_counts))
        )
        if len(citations) == len(span.citations):
            kept_spans.append(span)
        elif citations:
            kept_spans.append(
                SpanCitations(
                    span.answer_span, citations, span.status, span.unsupported_spans,
                    span.content_coverage, retrieval_support=span.retrieval_support,
                )
            )
        else:
            whole = ((span.answer_span.char_start, span.answer_span.char_end),)
            kept_spans.append(
                SpanCitations(
                    span.answer_span, (), "unsupported", whole, 0.0,
                    retrieval_support=span.retrieval_support,
                )
            )
    return kept_spans


def _counts(citation: Citation, tokenizer: Any, cache: dict) -> Counter:
    pieces = tuple(piece.evidence for piece in citation.evidence_spans)
    found = cache.get(pieces)
    if found is None:
        ids = [tokenize_checked(tokenizer, piece).token_ids for piece in pieces]
        found = cache[pieces] = Counter(np.concatenate(ids).tolist() if ids else [])
    return found


def _holds(needed: Counter, available: Counter) -> bool:
    return all(available[token] >= count for token, count in needed.items())
