"""cite-right's prepared corpus, :class:`PreparedCitationCorpus`: sources prepared once with
the stages that align answers against them.

citekit's own form is a :class:`~citekit.pipeline.Pipeline` and the
:class:`~citekit.corpus.Corpus` it prepared; this class holds the two under cite-right's
names (``from_sources``, ``align``), so code written for cite-right keeps working.
"""

from __future__ import annotations

from typing import Any, Callable

from citekit._validation import check_str
from citekit.config import CitationConfig
from citekit.corpus import Corpus
from citekit.pipeline import AlignmentMetrics, Pipeline, align_measured, check_backend
from citekit.results import AlignmentResult

__all__ = ["PreparedCitationCorpus"]


class PreparedCitationCorpus:
    """Sources segmented, tokenized and indexed once, ready for any number of answers.

    Build it with :meth:`from_sources`, or from a pipeline and the corpus it prepared.

    Parameters
    ----------
    pipeline : Pipeline
        The configuration and stages answers are aligned with.
    corpus : Corpus
        The prepared sources (tokenized by the pipeline's tokenizer).

    Attributes
    ----------
    config, tokenizer, source_segmenter, embedder
        The pipeline's configuration and stages.

    Examples
    --------
    >>> prepared = PreparedCitationCorpus.from_sources(
    ...     ["Revenue grew 15% in 2024.", "Costs fell 3%."])
    >>> result = prepared.align("Costs fell 3%.")
    >>> result[0].status, result[0].citations[0].source_id
    ('supported', '1')
    """

    def __init__(self, pipeline: Pipeline, corpus: Corpus) -> None:
        if not isinstance(pipeline, Pipeline):
            raise TypeError(f"pipeline must be a Pipeline, got {type(pipeline).__name__}")
        if not isinstance(corpus, Corpus):
            raise TypeError(f"corpus must be a Corpus, got {type(corpus).__name__}")
        self.pipeline = pipeline
        self.corpus = corpus

    @classmethod
    def from_sources(
        cls,
        sources: Any,
        *,
        config: CitationConfig | None = None,
        source_segmenter: Any = None,
        tokenizer: Any = None,
        embedder: Any = None,
        use_rust: bool = True,
    ) -> "PreparedCitationCorpus":
        """Prepare ``sources`` once (:meth:`Pipeline.prepare <citekit.pipeline.Pipeline.prepare>`).

        Parameters
        ----------
        sources : sequence of str, SourceDocument, SourceChunk or mapping
            The documents to cite.
        config : CitationConfig, optional
            Thresholds, weights, limits and passage windows.
        source_segmenter, tokenizer, embedder : optional
            Stages (see :class:`~citekit.pipeline.Pipeline`).
        use_rust : bool, default True
            Accepted for cite-right compatibility; citekit always uses its kernels.

        Returns
        -------
        PreparedCitationCorpus

        Examples
        --------
        >>> PreparedCitationCorpus.from_sources(["One. Two.", "Three."]).corpus.n_passages
        3
        """
        if not isinstance(use_rust, bool):
            raise TypeError(f"use_rust must be a bool, got {type(use_rust).__name__}")
        pipeline = Pipeline(
            config, tokenizer=tokenizer, source_segmenter=source_segmenter, embedder=embedder
        )
        return cls(pipeline, pipeline.prepare(sources))

    @property
    def config(self) -> CitationConfig:
        """The pipeline's :class:`~citekit.config.CitationConfig`."""
        return self.pipeline.config

    @property
    def tokenizer(self) -> Any:
        """The tokenizer answers and sources are read with."""
        return self.pipeline._tokenizer_for(self.corpus)

    @property
    def source_segmenter(self) -> Any:
        """The pipeline's source segmenter (``None``: citekit's default)."""
        return self.pipeline.source_segmenter

    @property
    def embedder(self) -> Any:
        """The pipeline's embedder, or ``None``."""
        return self.pipeline.embedder

    def align(
        self,
        answer: str,
        *,
        backend: str = "auto",
        answer_segmenter: Any = None,
        aligner: Any = None,
        on_metrics: Callable[[AlignmentMetrics], Any] | None = None,
    ) -> AlignmentResult:
        """Citations for every span of ``answer`` in the prepared sources.

        Parameters
        ----------
        answer : str
            The generated answer.
        backend : {"auto", "python", "rust", "numba"}, default "auto"
            Accepted for cite-right compatibility; every value runs citekit's kernels.
        answer_segmenter, aligner : optional
            Stages for this call instead of the pipeline's.
        on_metrics : callable, optional
            Called with this call's :class:`~citekit.pipeline.AlignmentMetrics`.

        Returns
        -------
        AlignmentResult
            One :class:`~citekit.results.SpanCitations` per answer span.

        Examples
        --------
        >>> prepared = PreparedCitationCorpus.from_sources(["Ice melts at 0 degrees."])
        >>> seen = []
        >>> prepared.align("Ice melts at 0 degrees.", on_metrics=seen.append)[0].status
        'supported'
        >>> seen[0].num_answer_spans
        1
        """
        check_str(answer, "answer")
        check_backend(backend)
        if on_metrics is not None and not callable(on_metrics):
            raise TypeError(f"on_metrics must be callable, got {type(on_metrics).__name__}")
        pipeline = self.pipeline
        if answer_segmenter is not None or aligner is not None:
            base = pipeline
            pipeline = Pipeline(
                base.config,
                tokenizer=base.tokenizer,
                answer_segmenter=base.answer_segmenter if answer_segmenter is None
                else answer_segmenter,
                source_segmenter=base.source_segmenter,
                aligner=base.aligner if aligner is None else aligner,
                scorer=base.scorer,
                embedder=base.embedder,
                n_threads=base.n_threads,
            )
        if on_metrics is None:
            return pipeline.align(answer, self.corpus)
        return align_measured(pipeline, answer, self.corpus, on_metrics)

    def __repr__(self) -> str:
        return f"PreparedCitationCorpus({self.pipeline!r}, {self.corpus.n_passages} passages)"
