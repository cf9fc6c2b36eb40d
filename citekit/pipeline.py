"""The citation pipeline: :class:`Pipeline` (replaceable stages) and :func:`align_citations`.

The pipeline owns the stages' configuration, prepares sources once as a
:class:`~citekit.corpus.Corpus`, reads the answers and runs their sentences, in batches,
through the citation stages (``citekit._citations``)::

    answers ─► segment ─► tokenize ─► queries (sentence tokens, content, weights)
      ─► candidates (IdfIndex top-K, + embedding) ─► feasibility (bag counts, bounds)
      ─► rounds (batched Smith-Waterman, best first) ─► scoring (components, acceptance)
      ─► ranking (tie-breaks, top_k, evidence pool) ─► coverage (tokens each covers)
      ─► records (evidence set, conflicts, status) ─► SpanCitations

(``forms``, the corpus's folded words, serves feasibility and coverage; ``align`` runs
one batch through the stages.) How a status is decided: see the user guide
(:doc:`/guide/status`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Protocol, Sequence, runtime_checkable

from citekit._citations.align import Stages, align_batch
from citekit._citations.candidates import ensure_embeddings
from citekit._citations.complete_evidence import complete_evidence_only
from citekit._citations.forms import SurfaceForms
from citekit._citations.queries import Queries
from citekit._citations.scoring import Scorer, WeightedScorer
from citekit._corpus_build import DEFAULT_BATCH_CHARS
from citekit._reading import default_segmenter, default_tokenizer, segment_spans
from citekit._validation import check_int, check_str
from citekit.config import CitationConfig
from citekit.corpus import Corpus
from citekit.results import AlignmentResult, SpanCitations
from citekit.tokenizers.base import tokenize_checked

__all__ = [
    "BACKENDS", "AlignmentMetrics", "Pipeline", "Embedder", "Scorer", "WeightedScorer",
    "align_citations", "align_measured", "check_backend",
]

# answer sentences aligned per batch: bounds memory for very long answers
_QUERY_CHUNK = 1024

# the backends cite-right's functions accept, and citekit's own name; all run the kernels
BACKENDS = ("auto", "python", "rust", "numba")


def check_backend(backend: Any) -> str:
    """Return ``backend`` if it is one of :data:`BACKENDS`, else raise.

    citekit has one implementation, its kernels: every backend runs them, so code that
    passes cite-right's ``backend="rust"`` or ``"python"`` keeps working.

    Raises
    ------
    TypeError, ValueError
        If ``backend`` is not a str, or not one of :data:`BACKENDS`.

    Examples
    --------
    >>> check_backend("rust")
    'rust'
    >>> check_backend("gpu")
    Traceback (most recent call last):
    ...
    ValueError: backend must be one of ('auto', 'python', 'rust', 'numba'), got 'gpu'
    """
    check_str(backend, "backend")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    return backend


@dataclass(frozen=True)
class AlignmentMetrics:
    """How much work one :func:`align_citations` call did (given to ``on_metrics``).

    Attributes
    ----------
    total_time_ms : float
        Wall time of the call, preparing the sources included.
    num_answer_spans : int
        Answer spans aligned.
    num_candidates : int
        Passage windows of the sources that could be cited.
    num_alignments : int
        Citations the alignments gave (citekit aligns the candidate pairs of all spans
        in batched kernel calls and does not count the pairs one by one).
    embedding_time_ms : float, default 0.0
        Time spent embedding the passages of a prepared corpus that had no vectors yet
        (0 without an embedder; for sources prepared in the call embedding is part of
        preparing them, in ``total_time_ms``).
    alignment_time_ms : float, default 0.0
        Time spent aligning the answer against the prepared sources.

    Examples
    --------
    >>> seen = []
    >>> _ = align_citations("Paris is in France.", ["Paris is in France."],
    ...                     on_metrics=seen.append)
    >>> seen[0].num_answer_spans, seen[0].num_candidates, seen[0].num_alignments
    (1, 1, 1)
    """

    total_time_ms: float
    num_answer_spans: int
    num_candidates: int
    num_alignments: int
    embedding_time_ms: float = 0.0
    alignment_time_ms: float = 0.0

    def model_dump(self) -> dict[str, Any]:
        """The fields as a dict (cite-right's name).

        Examples
        --------
        >>> AlignmentMetrics(1.5, 2, 3, 4).model_dump()["num_candidates"]
        3
        """
        return asdict(self)


@runtime_checkable
class Embedder(Protocol):
    """Anything with ``encode(texts) -> array of shape (len(texts), dim)``.

    Rows need not be normalized; citekit normalizes them and uses cosine similarity.
    """

    def encode(self, texts: Sequence[str]) -> Any: ...


class Pipeline:
    """The citation pipeline with replaceable stages.

    Constructing a pipeline does no work; defaults are created on first use.

    Parameters
    ----------
    config : CitationConfig, optional
        All thresholds, weights and limits (default ``CitationConfig()``).
    tokenizer : Tokenizer, optional
        Used for answers AND sources (default :class:`~citekit.tokenizers.SimpleTokenizer`).
    answer_segmenter, source_segmenter : object with ``segment(text)``, optional
        Split answers into spans and sources into sentences (default
        :class:`~citekit.segment.SentenceSegmenter`); ``segment`` returns ``(start, end)``
        pairs or records with ``char_start``/``char_end``.
    aligner : optional
        Default :func:`citekit.kernels.align_pairs`. Any object with an ``align_pairs``
        method of the same signature, or with ``align(query_ids, target_ids)`` returning a
        :class:`~citekit.kernels.LocalAlignment`-like record (called once per pair).
    scorer : Scorer, optional
        Combines the components into the final score (default :class:`WeightedScorer`).
    embedder : Embedder, optional
        Adds embedding candidates and the ``embedding_score`` component.
    n_threads : int, optional
        Threads for reading (tokenizing and segmenting) and indexing large sources, the
        candidate search and the alignment kernels (default: the kernels' setting, with work
        too small to gain from more run on one). Results do not depend on it.

    Examples
    --------
    >>> pipe = Pipeline(CitationConfig(top_k=1))
    >>> corpus = pipe.prepare(["Revenue grew 15% in 2024. Costs fell.", "The sky is blue."])
    >>> result = pipe.align("Revenue grew 15% in 2024.", corpus)
    >>> span = result[0]
    >>> span.status, span.citations[0].source_id, span.citations[0].evidence
    ('supported', '0', 'Revenue grew 15% in 2024')
    """

    def __init__(
        self,
        config: CitationConfig | None = None,
        *,
        tokenizer: Any = None,
        answer_segmenter: Any = None,
        source_segmenter: Any = None,
        aligner: Any = None,
        scorer: Any = None,
        embedder: Any = None,
        n_threads: int | None = None,
    ) -> None:
        if config is None:
            config = CitationConfig()
        if not isinstance(config, CitationConfig):
            raise TypeError(f"config must be a CitationConfig, got {type(config).__name__}")
        _check_stage(tokenizer, "tokenize", "tokenizer")
        _check_stage(answer_segmenter, "segment", "answer_segmenter")
        _check_stage(source_segmenter, "segment", "source_segmenter")
        _check_stage(scorer, "score", "scorer")
        _check_stage(embedder, "encode", "embedder")
        if aligner is not None and not (
            callable(getattr(aligner, "align_pairs", None))
            or callable(getattr(aligner, "align", None))
        ):
            raise TypeError(
                f"aligner must have an align_pairs(...) or align(query, target) method, "
                f"got {type(aligner).__name__}"
            )
        self.config = config
        self.tokenizer = tokenizer
        self.answer_segmenter = answer_segmenter
        self.source_segmenter = source_segmenter
        self.aligner = aligner
        self.scorer = scorer
        self.embedder = embedder
        self.n_threads = check_int(n_threads, "n_threads", minimum=1, allow_none=True)

    def __repr__(self) -> str:
        stages = {
            "tokenizer": self.tokenizer,
            "answer_segmenter": self.answer_segmenter,
            "source_segmenter": self.source_segmenter,
            "aligner": self.aligner,
            "scorer": self.scorer,
            "embedder": self.embedder,
        }
        custom = ", ".join(f"{k}={type(v).__name__}" for k, v in stages.items() if v is not None)
        return f"Pipeline({self.config!r}{', ' + custom if custom else ''})"

    # -- stages ---------------------------------------------------------------------

    def _tokenizer_for(self, corpus: Corpus | None) -> Any:
        if self.tokenizer is not None:
            return self.tokenizer
        if corpus is not None and corpus.tokenizer is not None:
            return corpus.tokenizer
        # (not stored: a later corpus may carry its own tokenizer)
        return default_tokenizer()

    def _answer_segmenter(self) -> Any:
        if self.answer_segmenter is None:
            self.answer_segmenter = default_segmenter()
        return self.answer_segmenter

    def _scorer(self) -> Any:
        if self.scorer is None:
            self.scorer = WeightedScorer()
        return self.scorer

    def _stages(self) -> Stages:
        """The configuration and stages a batch of sentences is aligned with."""
        return Stages(self.config, self._scorer(), self.aligner, self.embedder, self.n_threads)

    # -- public API -----------------------------------------------------------------

    def prepare(
        self,
        sources: Any,
        *,
        batch_size: int = DEFAULT_BATCH_CHARS,
        show_progress: bool = True,
    ) -> Corpus:
        """Segment, window, tokenize, index (and embed) ``sources`` once.

        Parameters
        ----------
        sources : iterable of str, SourceDocument, SourceChunk or mapping with ``text``, or a path
            The documents to cite: a sequence, an iterable read once (a generator), or the
            path of a JSON Lines file of ``{"id", "text", ...}`` lines (see
            :meth:`Corpus.build <citekit.corpus.Corpus.build>`).
        batch_size : int, default 4,194,304
            Characters of source text read per batch (the corpus does not depend on it).
        show_progress : bool, default True
            A progress bar counting the sources, when the build takes more than one batch
            and the bar can be seen (as :meth:`Corpus.build <citekit.corpus.Corpus.build>`).

        Returns
        -------
        Corpus
            Reusable for any number of :meth:`align` calls (and savable).

        Notes
        -----
        Every word of the corpus is also folded (:func:`~citekit._citations.content.fold_surface`,
        the forms answer coverage compares) here, once, so that no later call folds any:
        for the 1,000 documents of the benchmark workload about 45 ms in a fresh process,
        8 ms once their words were folded before (folds are shared process-wide). Sources
        passed to :meth:`align` directly are built without it (a call folds only the words
        of the passages it looks at), as is a corpus read by :meth:`Corpus.load`, whose
        words are folded as calls need them.

        Examples
        --------
        >>> Pipeline().prepare(["One. Two.", "Three."]).n_passages
        3
        """
        corpus = self._build(sources, batch_size=batch_size, show_progress=show_progress)
        SurfaceForms.of(corpus).learn_all()
        return corpus

    def _build(self, sources: Any, **reading: Any) -> Corpus:
        """The corpus of ``sources``, its words not folded yet (``reading``: the batch
        options of :meth:`Corpus.build`)."""
        return Corpus.build(
            sources,
            tokenizer=self._tokenizer_for(None),
            segmenter=self.source_segmenter,
            window_size_sentences=self.config.window_size_sentences,
            window_stride_sentences=self.config.window_stride_sentences,
            embedder=self.embedder,
            n_threads=self.n_threads,
            **reading,
        )

    def align(self, answer: str, corpus_or_sources: Any) -> AlignmentResult:
        """Citations for every sentence of ``answer``.

        Parameters
        ----------
        answer : str
            The generated answer.
        corpus_or_sources : Corpus or sequence of sources
            A prepared corpus (its passage windows are those it was built with, whatever
            this pipeline's ``window_size_sentences`` and ``window_stride_sentences``),
            or sources (prepared inside the call, with this pipeline's windows).

        Returns
        -------
        AlignmentResult
            One :class:`~citekit.results.SpanCitations` per answer sentence.

        Raises
        ------
        TypeError
            If ``answer`` is not a str or the sources are malformed.
        ValueError
            If the corpus was tokenized by another tokenizer, or its passages were
            embedded by another embedder (see :meth:`align_many`).

        Examples
        --------
        >>> result = Pipeline().align("Paris is in France.", ["Paris is in France."])
        >>> result[0].status
        'supported'
        """
        check_str(answer, "answer")
        return self.align_many([answer], corpus_or_sources)[0]

    def align_many(self, answers: Iterable[str], corpus_or_sources: Any) -> list[AlignmentResult]:
        """Align several answers against one corpus; all their sentences share one batch.

        Parameters
        ----------
        answers : iterable of str
            The answers.
        corpus_or_sources : Corpus or sequence of sources
            What to cite (prepared once, with this pipeline's windows, if not already a
            corpus; a corpus keeps the windows it was built with).

        Returns
        -------
        list of AlignmentResult
            One per answer, in order; identical to calling :meth:`align` on each.

        Raises
        ------
        TypeError
            If ``answers`` is not an iterable of str or the sources are malformed.
        ValueError
            If the corpus was tokenized by another tokenizer than this pipeline's, or
            its passages were embedded by another embedder (``Corpus.embedder``, compared
            by identity, then ``==``), or its loaded vectors have another number of
            dimensions than this pipeline's embedder gives.

        Notes
        -----
        With an embedder, a corpus that has no passage vectors yet gets them here, once:
        they are kept on the corpus (``Corpus.embeddings``, with ``Corpus.embedder``) for
        later calls.

        Examples
        --------
        >>> pipe = Pipeline()
        >>> corpus = pipe.prepare(["Water boils at 100 degrees.", "Ice melts at 0 degrees."])
        >>> [r[0].citations[0].source_id for r in pipe.align_many(
        ...     ["Ice melts at 0 degrees.", "Water boils at 100 degrees."], corpus)]
        ['1', '0']
        """
        if isinstance(answers, str) or not isinstance(answers, Iterable):
            raise TypeError(f"answers must be an iterable of str, got {type(answers).__name__}")
        answers = list(answers)
        for position, answer in enumerate(answers):
            check_str(answer, f"answers[{position}]")
        corpus = (
            corpus_or_sources
            if isinstance(corpus_or_sources, Corpus)
            else self._build(corpus_or_sources)
        )
        tokenizer = self._tokenizer_for(corpus)
        corpus.check_tokenizer(tokenizer)
        if self.embedder is not None and corpus.n_passages:
            ensure_embeddings(corpus, self.embedder)
        queries = self._read_answers(answers, tokenizer)
        per_query: list[SpanCitations] = []
        for first, last in _query_ranges(len(queries)):
            per_query.extend(align_batch(self._stages(), answers, queries, first, last, corpus))

        results = [AlignmentResult([], answer=answer, sources=corpus.sources) for answer in answers]
        for answer_number, span_citations in zip(queries.answer_of, per_query):
            results[answer_number].append(span_citations)
        if self.config.require_all_answer_tokens_in_evidence:
            for result in results:
                result[:] = complete_evidence_only(list(result), result.answer, tokenizer)
        return results

    def _read_answers(self, answers: list[str], tokenizer: Any) -> Queries:
        """The sentences of ``answers`` (checked str) as queries: every answer segmented
        by the answer segmenter and tokenized by ``tokenizer`` (empty ones skipped)."""
        segmenter = self._answer_segmenter()
        queries = Queries()
        for number, answer in enumerate(answers):
            if not answer:
                continue
            spans = segment_spans(segmenter, answer, name="answer_segmenter")
            if spans.shape[0] == 0:
                continue
            queries.add_answer(number, answer, tokenize_checked(tokenizer, answer), spans)
        return queries


def _query_ranges(n_queries: int) -> list[tuple[int, int]]:
    """The ``(first, last)`` ranges of queries aligned together (:data:`_QUERY_CHUNK` at a
    time).

    Examples
    --------
    >>> _query_ranges(2500)
    [(0, 1024), (1024, 2048), (2048, 2500)]
    """
    return [
        (first, min(n_queries, first + _QUERY_CHUNK)) for first in range(0, n_queries, _QUERY_CHUNK)
    ]


def _check_stage(stage: Any, method: str, name: str) -> None:
    # (a str has an encode method, and a type its methods unbound: neither is a stage)
    if stage is not None and (
        isinstance(stage, (str, bytes, type)) or not callable(getattr(stage, method, None))
    ):
        raise TypeError(
            f"{name} must be an object with a method {method}(...), got {type(stage).__name__}"
        )


def align_citations(
    answer: str,
    sources: Any,
    *,
    config: CitationConfig | None = None,
    tokenizer: Any = None,
    answer_segmenter: Any = None,
    source_segmenter: Any = None,
    aligner: Any = None,
    embedder: Any = None,
    backend: str = "auto",
    on_metrics: Callable[[AlignmentMetrics], Any] | None = None,
) -> AlignmentResult:
    """Citations for every sentence of ``answer`` in ``sources`` (the one-call API).

    Builds a :class:`Pipeline` from the keywords and runs :meth:`Pipeline.align`. To align
    many answers against the same sources, prepare a :class:`~citekit.corpus.Corpus` once
    with :meth:`Pipeline.prepare` instead.

    Parameters
    ----------
    answer : str
        The generated answer.
    sources : Corpus or sequence of str, SourceDocument, SourceChunk or mapping
        The documents to cite.
    config : CitationConfig, optional
        Thresholds, weights and limits.
    tokenizer, answer_segmenter, source_segmenter, aligner, embedder : optional
        Replacement stages (see :class:`Pipeline`).
    backend : {"auto", "python", "rust", "numba"}, default "auto"
        Accepted for cite-right compatibility (:func:`check_backend`); every value runs
        citekit's kernels, with the same results.
    on_metrics : callable, optional
        Called once, after the alignment, with the call's :class:`AlignmentMetrics`.

    Returns
    -------
    AlignmentResult
        A list of :class:`~citekit.results.SpanCitations`, one per answer sentence, each
        with ranked citations whose offsets index the original source strings.

    Examples
    --------
    >>> answer = "Revenue grew 15% in Q4."
    >>> sources = ["Annual report: Revenue grew 15% in Q4 2024."]
    >>> result = align_citations(answer, sources)
    >>> result[0].status
    'supported'
    >>> c = result[0].citations[0]
    >>> c.evidence, sources[0][c.char_start:c.char_end] == c.evidence
    ('Revenue grew 15% in Q4', True)
    """
    check_backend(backend)
    if on_metrics is not None and not callable(on_metrics):
        raise TypeError(f"on_metrics must be callable, got {type(on_metrics).__name__}")
    stages = (config, tokenizer, answer_segmenter, source_segmenter, aligner, embedder)
    if all(stage is None for stage in stages):
        # the default pipeline holds no per-call state: build it once
        pipeline = _DEFAULT_PIPELINE[0]
        if pipeline is None:
            pipeline = _DEFAULT_PIPELINE[0] = Pipeline()
    else:
        pipeline = Pipeline(
            config,
            tokenizer=tokenizer,
            answer_segmenter=answer_segmenter,
            source_segmenter=source_segmenter,
            aligner=aligner,
            embedder=embedder,
        )
    if on_metrics is None:
        return pipeline.align(answer, sources)
    return align_measured(pipeline, answer, sources, on_metrics)


def align_measured(
    pipeline: Pipeline, answer: str, sources: Any, on_metrics: Callable[[AlignmentMetrics], Any]
) -> AlignmentResult:
    """``pipeline.align(answer, sources)``, reporting its :class:`AlignmentMetrics` to
    ``on_metrics`` (sources that are not a :class:`~citekit.corpus.Corpus` are prepared
    first, inside the measured time).

    Examples
    --------
    >>> seen = []
    >>> result = align_measured(Pipeline(), "Ice melts.", ["Ice melts. Water boils."],
    ...                         seen.append)
    >>> seen[0].num_candidates, seen[0].total_time_ms >= seen[0].alignment_time_ms
    (2, True)
    """
    check_str(answer, "answer")
    started = time.perf_counter()
    corpus = sources if isinstance(sources, Corpus) else pipeline._build(sources)
    had_vectors = corpus.embeddings is not None
    prepared = time.perf_counter()
    embedding_ms = 0.0
    if pipeline.embedder is not None and corpus.n_passages and not had_vectors:
        ensure_embeddings(corpus, pipeline.embedder)
        embedding_ms = (time.perf_counter() - prepared) * 1000.0
    aligning = time.perf_counter()
    result = pipeline.align(answer, corpus)
    finished = time.perf_counter()
    on_metrics(
        AlignmentMetrics(
            total_time_ms=(finished - started) * 1000.0,
            num_answer_spans=len(result),
            num_candidates=corpus.n_passages,
            num_alignments=sum(len(span.citations) for span in result),
            embedding_time_ms=embedding_ms,
            alignment_time_ms=(finished - aligning) * 1000.0,
        )
    )
    return result


_DEFAULT_PIPELINE: list[Pipeline | None] = [None]
