"""Scoring aligned pairs: the score components, the final score and acceptance.

Per (sentence, passage) pair, as in the specification:

- ``normalized_alignment = alignment_score / (match_score * answer_tokens)``
- ``answer_coverage = matches / answer_tokens``; ``evidence_coverage = matches / evidence_tokens``
- ``lexical_score``: the IDF-weighted share of the sentence's distinct tokens in the passage
- ``embedding_score``: cosine similarity of sentence and passage embeddings (0 without embedder)
- ``score``: the weighted sum of :class:`~citekit.config.CitationWeights` (:class:`WeightedScorer`)
  or any :class:`Scorer`.

A pair is accepted when its alignment reaches ``min_alignment_score`` and matches a
content token, it matches or contains enough distinct content words of the sentence (see
:mod:`citekit._citations.feasibility`), the share of the sentence's content it matches in
order (or of its distinct content words that the passage holds) reaches
``min_answer_coverage``, and ``score >= min_final_score``. With an embedder and
``allow_embedding_only``, a pair that is not accepted may still be an embedding-only
citation, scored without the alignment's components.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Protocol, runtime_checkable

import numpy as np

from citekit._citations.feasibility import Feasibility
from citekit.config import CitationConfig
from citekit.kernels import PairAlignments
from citekit.kernels._scoring import COMPONENT_NAMES, accept_pairs, score_components

__all__ = ["PairScoring", "Scored", "Scorer", "WeightedScorer"]

# accept_pairs' and score_components' "every pair" (no selection)
_ALL_PAIRS = np.zeros(0, dtype=np.int64)
# the components an embedding-only citation is scored without
_ALIGNMENT_COMPONENTS = ("normalized_alignment", "answer_coverage", "evidence_coverage")


@runtime_checkable
class Scorer(Protocol):
    """Turns the score components of every pair into final scores.

    ``components`` maps ``normalized_alignment``, ``answer_coverage``,
    ``evidence_coverage``, ``lexical_score``, ``embedding_score``, ``content_coverage``
    and ``alignment_score`` to float arrays of one value per pair.
    """

    def score(self, components: Mapping[str, np.ndarray], config: CitationConfig) -> np.ndarray: ...


class WeightedScorer:
    """The specification's score: the weighted sum of the components.

    Examples
    --------
    >>> comps = {k: np.array([1.0]) for k in ("normalized_alignment", "answer_coverage",
    ...          "evidence_coverage", "lexical_score", "embedding_score")}
    >>> WeightedScorer().score(comps, CitationConfig()).tolist()
    [3.0]
    """

    def score(self, components: Mapping[str, np.ndarray], config: CitationConfig) -> np.ndarray:
        """Return ``sum(weight * component)`` (embedding similarity clipped at 0)."""
        weights = config.weights
        return (
            weights.alignment * components["normalized_alignment"]
            + weights.answer_coverage * components["answer_coverage"]
            + weights.evidence_coverage * components["evidence_coverage"]
            + weights.lexical * components["lexical_score"]
            + weights.embedding * np.maximum(components["embedding_score"], 0.0)
        )

    def __repr__(self) -> str:
        return "WeightedScorer()"


class Scored(NamedTuple):
    """The scores of aligned pairs (:meth:`PairScoring.__call__`)."""

    components: dict[str, np.ndarray]  # (by name)
    final: np.ndarray
    accepted: np.ndarray
    matrix: np.ndarray  # (the components as rows, in the order of COMPONENT_NAMES)


class PairScoring:
    """Scores the aligned pairs of a batch, all of them or some (the alignment rounds
    score the pairs aligned so far).

    Parameters
    ----------
    config : CitationConfig
        Weights and thresholds.
    scorer : Scorer
        The final score (a :class:`WeightedScorer` is summed with the components, in one
        kernel call).
    has_embedder : bool
        Whether the pipeline has an embedder (then ``allow_embedding_only`` applies).
    limits : Feasibility
        The batch's per-pair quantities decided before aligning.
    content_variants : ndarray
        Distinct content words of its sentence each pair's passage holds
        (:func:`~citekit._citations.feasibility.content_variants`).
    lexical, embedding : ndarray
        Each pair's lexical score and embedding similarity.
    """

    def __init__(
        self,
        config: CitationConfig,
        scorer: Any,
        has_embedder: bool,
        limits: Feasibility,
        content_variants: np.ndarray,
        lexical: np.ndarray,
        embedding: np.ndarray,
    ) -> None:
        self.config = config
        self.scorer = scorer
        self.limits = limits
        self.content_variants = content_variants
        self.lexical = lexical
        self.embedding = embedding
        self.weighted = type(scorer) is WeightedScorer
        self.embedding_only_possible = config.allow_embedding_only and has_embedder
        #: whether :func:`~citekit._citations.feasibility.score_bound` bounds the scores
        self.bounded = self.weighted and not self.embedding_only_possible
        self.component_weights = np.array(
            [
                config.weights.alignment,
                config.weights.answer_coverage,
                config.weights.evidence_coverage,
                config.weights.lexical,
                config.weights.embedding,
            ],
            dtype=np.float64,
        )

    def __call__(
        self, rows: PairAlignments, content_matched: np.ndarray, pairs: np.ndarray | None = None
    ) -> Scored:
        """Score components, final score and acceptance of ``pairs`` (default: all),
        given their ``rows`` and ``content_matched`` (in that order)."""
        config = self.config
        limits = self.limits
        selection = _ALL_PAIRS if pairs is None else pairs
        # (the default scorer's sum is computed with the components, in its order)
        matrix, weighted_final = score_components(
            rows.score,
            rows.matches,
            rows.target_start,
            rows.target_end,
            np.ascontiguousarray(content_matched, dtype=np.float64),
            limits.safe_len,
            limits.safe_content,
            limits.passage_content_coverage,
            self.lexical,
            self.embedding,
            selection,
            config.match_score,
            self.component_weights,
            self.weighted,
        )
        components = dict(zip(COMPONENT_NAMES, matrix))
        if self.weighted:
            final = weighted_final
        else:
            final = np.asarray(self.scorer.score(components, config), dtype=np.float64)
            if final.shape != (matrix.shape[1],):
                raise ValueError(
                    f"scorer.score must return one score per pair, got shape {final.shape}"
                )
        accepted = accept_pairs(
            rows.score,
            rows.target_start,
            rows.target_end,
            np.ascontiguousarray(content_matched, dtype=np.float64),
            self.content_variants,
            limits.min_content,
            components["content_coverage"],
            limits.passage_content_coverage,
            final,
            selection,
            float(config.min_alignment_score),
            float(config.min_answer_coverage),
            float(config.min_final_score),
        )
        return Scored(components, final, accepted, matrix)

    def embedding_only(self, scored: Scored) -> tuple[np.ndarray, np.ndarray]:
        """``(embedding_only, final)`` of every pair (``scored``: all of them): which pairs
        that were not accepted are embedding-only citations (similar enough, and scoring
        ``min_final_score`` without the alignment's components), and the final scores
        with theirs."""
        config = self.config
        n_pairs = self.lexical.shape[0]
        embedding_only = np.zeros(n_pairs, dtype=bool)
        final = scored.final
        if self.embedding_only_possible and n_pairs:
            zero = np.zeros(n_pairs)
            embed_components = dict(scored.components)
            for name in _ALIGNMENT_COMPONENTS:
                embed_components[name] = zero
            embed_final = np.asarray(
                self.scorer.score(embed_components, config), dtype=np.float64
            )
            embedding_only = (
                ~scored.accepted
                & (self.embedding >= config.min_embedding_similarity)
                & (embed_final >= config.min_final_score)
            )
            final = np.where(embedding_only, embed_final, final)
        return embedding_only, final
