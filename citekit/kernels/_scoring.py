"""Kernels of the scoring stage: which pairs can become citations at all (feasibility
bounds from the bag counts), the score components of aligned pairs, their weighted sum,
and the acceptance thresholds."""

from __future__ import annotations

import numpy as np

from citekit._jit import jit

__all__ = [
    "COMPONENT_NAMES",
    "accept_pairs",
    "pair_feasibility",
    "score_components",
]


@jit
def pair_feasibility(pair_query, query_lengths, content_total, distinct_per_query,
                     content_occurrences, content_distinct, words_per_query, word_distinct,
                     min_answer_coverage, min_content_tokens):
    """The per-pair quantities the pipeline decides on before aligning (see
    :func:`citekit._citations.feasibility.pair_limits`), in one pass instead of about twenty
    numpy calls, with the same float operations in the same order.

    Returns ``(safe_len, safe_content, passage_content_coverage, min_content, feasible,
    short)``: the query's tokens and content tokens (at least 1), the share of its distinct
    content words (``words_per_query``; ``word_distinct`` of them in the passage) the
    passage holds, the distinct content tokens a citation needs
    (``min(min_content_tokens, (distinct + 1) // 2)``), whether the pair passes the
    coverage test (a content token held, and held content tokens or distinct words
    reaching ``min_answer_coverage``), and whether it passes it with fewer distinct
    content tokens than needed (then inflections are counted).
    """
    n_pairs = pair_query.shape[0]
    safe_len = np.empty(n_pairs, dtype=np.int64)
    safe_content = np.empty(n_pairs, dtype=np.int64)
    coverage = np.empty(n_pairs, dtype=np.float64)
    min_content = np.empty(n_pairs, dtype=np.float64)
    feasible = np.empty(n_pairs, dtype=np.bool_)
    short = np.empty(n_pairs, dtype=np.bool_)
    for p in range(n_pairs):
        q = pair_query[p]
        safe_len[p] = max(query_lengths[q], 1)
        safe_content[p] = max(content_total[q], 1)
        distinct = distinct_per_query[q]
        coverage[p] = word_distinct[p] / max(words_per_query[q], 1.0)
        min_content[p] = min(float(min_content_tokens), (distinct + 1.0) // 2.0)
        occurrences = content_occurrences[p]
        feasible[p] = occurrences >= 1.0 and (
            occurrences / safe_content[p] >= min_answer_coverage
            or coverage[p] >= min_answer_coverage
        )
        short[p] = feasible[p] and content_distinct[p] < min_content[p]
    return safe_len, safe_content, coverage, min_content, feasible, short


@jit
def accept_pairs(score, target_start, target_end, content_matched, content_variants,
                 min_content, content_coverage, passage_coverage, final, pairs,
                 min_alignment_score, min_answer_coverage, min_final_score):
    """Which aligned pairs may become citations (see
    :class:`citekit._citations.scoring.PairScoring`): a real alignment scoring at least
    ``min_alignment_score`` that matched a content token, enough distinct content tokens
    (matched or held as inflections), content coverage by the alignment or the passage
    reaching ``min_answer_coverage``, and a final score of at least ``min_final_score``.
    Entry ``i`` is entry ``i`` of the arrays of the pairs judged (``score`` to ``final``)
    and describes pair ``pairs[i]`` of the per-pair arrays (``content_variants``,
    ``min_content``, ``passage_coverage``); an empty ``pairs`` stands for every pair, in
    order."""
    n = score.shape[0]
    every = pairs.shape[0] == 0
    accepted = np.empty(n, dtype=np.bool_)
    for i in range(n):
        p = i if every else pairs[i]
        matched = content_matched[i]
        accepted[i] = (
            score[i] >= min_alignment_score
            and target_end[i] > target_start[i]
            and matched >= 1.0
            and max(matched, content_variants[p]) >= min_content[p]
            and (
                content_coverage[i] >= min_answer_coverage
                or passage_coverage[p] >= min_answer_coverage
            )
            and final[i] >= min_final_score
        )
    return accepted


#: the rows of :func:`score_components`' matrix, in the order of the components dict
COMPONENT_NAMES = (
    "alignment_score",
    "normalized_alignment",
    "matches",
    "answer_coverage",
    "evidence_coverage",
    "lexical_score",
    "embedding_score",
    "content_coverage",
    "passage_content_coverage",
)


@jit
def score_components(score, matches, target_start, target_end, content_matched, safe_len,
                     safe_content, passage_coverage, lexical, embedding, pairs, match_score,
                     weights, weighted):
    """The score components of the aligned pairs (rows of the returned matrix, in the
    order of :data:`COMPONENT_NAMES`) and, when ``weighted``, their final score: the
    specification's weighted sum (``weights``: alignment, answer coverage, evidence
    coverage, lexical, embedding; embedding similarity clipped at 0 as ``np.maximum``
    clips it), each value computed with the float operations, in the order, of
    :meth:`citekit.pipeline.WeightedScorer.score` and the numpy expressions they replace.
    Entry ``i`` is entry ``i`` of the arrays of the pairs judged (``score`` to
    ``content_matched``) and describes pair ``pairs[i]`` of the per-pair arrays (the
    rest); an empty ``pairs`` stands for every pair, in order."""
    n = score.shape[0]
    every = pairs.shape[0] == 0
    out = np.empty((9, n), dtype=np.float64)
    final = np.zeros(n if weighted else 0, dtype=np.float64)
    for i in range(n):
        p = i if every else pairs[i]
        length = safe_len[p]
        out[0, i] = score[i]
        out[1, i] = score[i] / max(match_score * length, 1)
        out[2, i] = matches[i]
        out[3, i] = matches[i] / length
        out[4, i] = matches[i] / max(target_end[i] - target_start[i], 1)
        out[5, i] = lexical[p]
        out[6, i] = embedding[p]
        out[7, i] = content_matched[i] / safe_content[p]
        out[8, i] = passage_coverage[p]
        if weighted:
            similarity = embedding[p]
            clipped = similarity if (similarity > 0.0 or similarity != similarity) else 0.0
            final[i] = (
                weights[0] * out[1, i]
                + weights[1] * out[3, i]
                + weights[2] * out[4, i]
                + weights[3] * out[5, i]
                + weights[4] * clipped
            )
    return out, final
