"""The citation pipeline: :class:`Pipeline` (replaceable stages) and :func:`align_citations`.

For every sentence of an answer, the pipeline finds the characters of the sources that
support it::

    answer ─► segment ─► tokenize ─► per sentence: IdfIndex top-K (+ embedding) candidates
           ─► batched Smith-Waterman over (sentence, candidate) pairs of ALL sentences
           ─► score components ─► weights ─► thresholds, tie-break
           ─► evidence set (greedy set cover), per-source cap, top_k
           ─► Citation (token span ─► original character offsets) ─► status

Sources are prepared once in a :class:`~citekit.corpus.Corpus` and reused. Before
aligning, the pipeline counts which sentence tokens each candidate passage contains; that
bounds what an alignment could reach, so pairs that can never become citations are not
aligned, and large candidate sets are aligned best-first in a few rounds (each one kernel
call over every open sentence) until no unaligned pair can change the result: the output
is exactly that of aligning every candidate. Scoring is vectorized over all pairs; Python
objects are built only for the citations returned.

Scoring (per (sentence, passage) pair, as in the specification)
-----------------------------------------------------------------
- ``normalized_alignment = alignment_score / (match_score * answer_tokens)``
- ``answer_coverage = matches / answer_tokens``; ``evidence_coverage = matches / evidence_tokens``
- ``lexical_score``: the IDF-weighted share of the sentence's distinct tokens in the passage
- ``embedding_score``: cosine similarity of sentence and passage embeddings (0 without embedder)
- ``score`` = the weighted sum of :class:`~citekit.config.CitationWeights`.

A pair becomes a citation when its alignment score reaches ``min_alignment_score``, it
matches at least one CONTENT token, it matches or contains (also as a light inflection)
at least two distinct content words of the sentence (half of them, rounded up, if the
sentence has fewer than four: one word in common is a coincidence, not evidence), the
share of the sentence's content tokens it matches in order (or of its distinct content
words that the passage contains, so reordered paraphrases are kept; single letters of
scripts tokenized letter by letter, Thai or kana, are not words there) reaches
``min_answer_coverage``, and
``score >= min_final_score``. Citations are ranked by score (ties: see
``prefer_source_order``) and duplicates dropped.

Evidence set and citations shown
--------------------------------
A claim often fuses facts stated in two or three source sentences, while the best
citations by score are often near-copies of one sentence. So the evidence a sentence is
judged on is chosen as a greedy set cover among its ``3 * top_k`` best citations: the
best by score, then, at most ``top_k`` in all, each one that adds the most content not
yet covered, until none adds any. These are shown first (at most
``max_citations_per_source`` per source), then the best remaining by score up to
``top_k``, all in score order (so ``top_k=1`` still returns the best citation by score).

Status (decided on content tokens)
----------------------------------
A token of the sentence is *covered* by a citation when the alignment matched it or its
passage, or the passage next to it in the same source, contains it (also as a light
inflection: ``grows``/``growing``, ``countries``/``country``, ``twelve``/``12``), unless it
is the answer side of a value conflict of that citation. A single letter of a script
tokenized letter by letter (Thai, kana, ...) is covered only when those passages hold a run
of three tokens of the sentence around it in a row (a Han ideograph: a run of two), and
the content tokens an alignment matched count a letter only in a block of three tokens or
more. A value that some evidence contradicts stays uncovered unless conflict-free evidence
states it. The judged citations are the evidence set and the citations shown, whatever the
per-source cap hides. ``content_coverage`` is the weighted share of the sentence covered
(:func:`~citekit._content.coverage_weights`): a value (number, date, amount) weighs 2, as
it cannot be paraphrased and missing it is the surest sign of an unsupported fact, another
content word 1, and a function word 1/4 (one the evidence lacks, such as "all", "only" or
"I", says a little about the claim, but function words alone never support it). The
sentence is ``supported`` when ``content_coverage >= supported_answer_coverage`` and no
value is contradicted without being confirmed elsewhere, ``partial`` when it has
citations but less coverage (or a contradicted value), and ``unsupported`` when it has
none. ``content_coverage`` is also the span's confidence
(:func:`citekit.metrics.span_confidence`), so ranking by confidence and the status agree.
``unsupported_spans`` are the character ranges of uncovered content tokens. A sentence
with no content token at all (only stop words) is judged on all its tokens; reference
markers such as ``[1]`` are ignored.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, NamedTuple, Protocol, Sequence, runtime_checkable

import numpy as np

from citekit.kernels._overlap import pair_bag_counts
from citekit.kernels._scoring import (
    COMPONENT_NAMES,
    accept_pairs,
    pair_feasibility,
    score_components,
)
from citekit.kernels._rounds import assemble_blocks, close_queries, record_alignments
from citekit.kernels._overlap import bag_counts_from_held, query_terms
from citekit.kernels._evidence import evidence_chars, judged_int_facts
from citekit.kernels._ranking import rank_and_choose, rank_eligible, rank_within_queries
from citekit._citations.conflicts import find_conflicts
from citekit._citations.content import (
    citation_marker_mask,
    fold_surface,
    ideograph_token_mask,
    letter_token_mask,
    surface_facts,
)
from citekit._citations.directions import directions_in
from citekit._citations.values import PREFIXED_VALUE
from citekit.kernels._coverage import contested_coverage
from citekit.kernels._evidence import records_batch
from citekit.kernels._coverage import candidate_coverage, cover_runs, near_passages, rows_hold
from citekit._reading import default_segmenter, default_tokenizer, segment_spans
from citekit._validation import check_int, check_str
from citekit.config import CitationConfig
from citekit.corpus import Corpus, embed_texts
from citekit.index import gather_ranges
from citekit.kernels import PairAlignments
from citekit.results import (
    AlignmentResult,
    AnswerSpan,
    Citation,
    EvidenceSpan,
    SpanCitations,
)
from citekit.tokenizers.base import tokenize_checked

__all__ = ["Pipeline", "Embedder", "Scorer", "WeightedScorer", "align_citations"]

# answer sentences aligned per batch: bounds memory for very long answers
_QUERY_CHUNK = 1024
# alignment batches smaller than this many DP cells run on one thread: waking the
# workers costs about 8 us, which a batch of 20,000 cells (30-odd sentence-passage pairs)
# repays (measured on 2 cores: a 5-sentence answer's 800 pairs aligned in 0.72 ms on two
# threads, 1.26 ms on one)
_PARALLEL_MIN_CELLS = 20_000
# candidate pairs per sentence aligned in the first best-first round
_FIRST_ROUND_PAIRS = 32
# with fewer feasible pairs than this in a batch, all are aligned in one call
_ALIGN_ALL_BELOW = 2048
# a record without its __init__: the result records are built as
# results._unchecked builds them, every field given in field order (tens per call)
_new_record = object.__new__
# passages on each side of a cited one (same source) whose words also count as covered
_COVERAGE_NEIGHBOURS = 1
# a citation must match or contain at least this many distinct content words of the
# sentence (half of them if it has fewer than four): one shared word among many is a
# coincidence, not evidence
_MIN_CONTENT_TOKENS = 2
# the evidence set of a sentence is chosen among this many best citations per top_k slot
_EVIDENCE_POOL_PER_CITATION = 3
# the pairs of a sentence ranked before its walk for citations and pool (they need 12 at
# the default top_k: 9 in the pool and 3 citations, with duplicates more); only a walk that
# reads past them ranks the sentence's other pairs
_RANKED_FRONT = 32
# accept_pairs' "every pair" (no selection)
_ALL_PAIRS = np.zeros(0, dtype=np.int64)


@runtime_checkable
class Embedder(Protocol):
    """Anything with ``encode(texts) -> array of shape (len(texts), dim)``.

    Rows need not be normalized; citekit normalizes them and uses cosine similarity.
    """

    def encode(self, texts: Sequence[str]) -> Any: ...


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


class _Queries:
    """Answer sentences of a batch of answers, tokens packed CSR (sentence ``q`` owns
    tokens ``offsets[q]:offsets[q + 1]`` of the packed arrays)."""

    # dtypes of the packed columns: ids, starts, ends, content, words, ideographs, weights,
    # values
    _DTYPES = (np.int64, np.int64, np.int64, bool, bool, bool, np.float64, bool)

    def __init__(self) -> None:
        self.answer_of: list[int] = []
        self.spans: list[tuple[int, int]] = []
        self.sentence_index: list[int] = []
        self.lengths: list[int] = []
        self._parts: list[tuple[np.ndarray, ...]] = []
        self._folded: list[str] = []
        self._packed: tuple[np.ndarray, ...] | None = None

    def add_answer(self, answer_number: int, answer: str, tokens: Any, spans: np.ndarray) -> None:
        if spans.shape[0] == 0:
            return
        token_ids, starts, ends = tokens.token_ids, tokens.starts, tokens.ends
        # reference markers ([1], [2, 3]) point at sources: they are not part of the claim
        markers = citation_marker_mask(answer, starts, ends)
        if markers.any():
            keep = ~markers
            token_ids, starts, ends = token_ids[keep], starts[keep], ends[keep]
        # what each token's text says (content token, folded text, weights, value), one
        # cached look-up per token
        surfaces = map(answer.__getitem__, map(slice, starts.tolist(), ends.tolist()))
        facts = list(map(surface_facts, surfaces))
        is_content, folded, weight_content, weight_other, values = (
            zip(*facts) if facts else ((), (), (), (), ())
        )
        mask = np.array(is_content, dtype=bool)
        token_first = np.searchsorted(starts, spans[:, 0], side="left")
        token_last = np.maximum(np.searchsorted(ends, spans[:, 1], side="right"), token_first)
        positions, owner = gather_ranges(token_first, token_last)
        content = mask[positions]
        # a sentence of stop words only is judged on all its tokens
        n_sentences = spans.shape[0]
        has_content = np.bincount(owner[content], minlength=n_sentences) > 0
        content |= ~has_content[owner]
        # content tokens that are words: not single letters of Thai, kana, ...
        words = content & ~letter_token_mask(answer, starts, ends)[positions]
        # and content Han ideographs
        ideographs = content & ideograph_token_mask(answer, starts, ends)[positions]
        # each sentence token's coverage weight, as the content token it is judged (or not)
        weights = np.where(
            content,
            np.array(weight_content, dtype=np.float64)[positions],
            np.array(weight_other, dtype=np.float64)[positions],
        )
        self._parts.append(
            (
                np.asarray(token_ids, dtype=np.int64)[positions],
                np.asarray(starts, dtype=np.int64)[positions],
                np.asarray(ends, dtype=np.int64)[positions],
                content,
                words,
                ideographs,
                weights,
                np.array(values, dtype=bool)[positions],
            )
        )
        self._folded.extend(map(folded.__getitem__, positions.tolist()))
        self._packed = None
        self.answer_of.extend([answer_number] * n_sentences)
        self.spans.extend(map(tuple, spans.tolist()))
        self.sentence_index.extend(range(n_sentences))
        self.lengths.extend((token_last - token_first).tolist())

    def __len__(self) -> int:
        return len(self.spans)

    def _all(self) -> tuple[np.ndarray, ...]:
        """(offsets, ids, starts, ends, content, words, ideographs, weights, values) of
        every sentence."""
        if self._packed is None:
            offsets = np.zeros(len(self.lengths) + 1, dtype=np.int64)
            np.cumsum(self.lengths, out=offsets[1:])
            if len(self._parts) == 1:  # (one answer: its arrays, no copy)
                columns = list(self._parts[0])
            else:
                columns = [
                    np.concatenate([part[i] for part in self._parts])
                    if self._parts
                    else np.zeros(0, dtype=dtype)
                    for i, dtype in enumerate(self._DTYPES)
                ]
            self._packed = (offsets, *columns)
        return self._packed

    def tokens_of(self, query: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(starts, ends, content) of sentence ``query``'s tokens."""
        offsets, _, starts, ends, content, *_ = self._all()
        lo, hi = int(offsets[query]), int(offsets[query + 1])
        return starts[lo:hi], ends[lo:hi], content[lo:hi]

    def pack(self, first: int, last: int) -> tuple[np.ndarray, ...]:
        """(offsets, ids, starts, ends, content, words, ideographs) of sentences
        ``first:last``."""
        offsets, ids, starts, ends, content, words, ideographs, _, _ = self._all()
        lo, hi = int(offsets[first]), int(offsets[last])
        return (
            offsets[first : last + 1] - lo,
            ids[lo:hi],
            starts[lo:hi],
            ends[lo:hi],
            content[lo:hi],
            words[lo:hi],
            ideographs[lo:hi],
        )

    def facts(self, first: int, last: int) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(folded texts, coverage weights, which are values) of the tokens of sentences
        ``first:last`` (:func:`~citekit._content.surface_facts`)."""
        offsets, *_, weights, values = self._all()
        lo, hi = int(offsets[first]), int(offsets[last])
        return self._folded[lo:hi], weights[lo:hi], values[lo:hi]


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
        candidate search and the alignment kernels (default: numba's setting, with work
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

    # -- public API -----------------------------------------------------------------

    def prepare(self, sources: Any) -> Corpus:
        """Segment, window, tokenize, index (and embed) ``sources`` once.

        Parameters
        ----------
        sources : sequence of str, SourceDocument, SourceChunk or mapping with ``text``
            The documents to cite.

        Returns
        -------
        Corpus
            Reusable for any number of :meth:`align` calls (and savable).

        Notes
        -----
        Every word of the corpus is also folded (:func:`~citekit._content.fold_surface`,
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
        corpus = self._build(sources)
        _SurfaceForms.of(corpus).learn_all()
        return corpus

    def _build(self, sources: Any) -> Corpus:
        """The corpus of ``sources``, its words not folded yet."""
        return Corpus.build(
            sources,
            tokenizer=self._tokenizer_for(None),
            segmenter=self.source_segmenter,
            window_size_sentences=self.config.window_size_sentences,
            window_stride_sentences=self.config.window_stride_sentences,
            embedder=self.embedder,
            n_threads=self.n_threads,
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
            self._ensure_embeddings(corpus)
        segmenter = self._answer_segmenter()
        queries = _Queries()
        for number, answer in enumerate(answers):
            if not answer:
                continue
            spans = segment_spans(segmenter, answer, name="answer_segmenter")
            if spans.shape[0] == 0:
                continue
            tokens = tokenize_checked(tokenizer, answer)
            queries.add_answer(number, answer, tokens, spans)

        per_query: list[SpanCitations] = []
        for first in range(0, len(queries), _QUERY_CHUNK):
            last = min(len(queries), first + _QUERY_CHUNK)
            per_query.extend(self._align_chunk(answers, queries, first, last, corpus))

        results = [AlignmentResult([], answer=answer, sources=corpus.sources) for answer in answers]
        for answer_number, span_citations in zip(queries.answer_of, per_query):
            results[answer_number].append(span_citations)
        return results

    def _ensure_embeddings(self, corpus: Corpus) -> None:
        """Embed the passages of a corpus that has no vectors yet (kept on the corpus,
        with the embedder that made them), or make sure that its vectors are this
        pipeline's embedder's."""
        if corpus.embeddings is None:
            corpus.embeddings = embed_texts(
                self.embedder, [corpus.passage_text(p) for p in range(corpus.n_passages)]
            )
            corpus.embedder = self.embedder
        elif corpus.embedder is not None and not (
            corpus.embedder is self.embedder or corpus.embedder == self.embedder
        ):
            raise ValueError(
                "embedder does not match the corpus: its passages were embedded by "
                f"{type(corpus.embedder).__name__} object {corpus.embedder!r}, not by this "
                "pipeline's embedder; prepare the corpus with this pipeline (or align "
                "with the embedder that prepared it)"
            )

    # -- the batched core -----------------------------------------------------------

    def _candidates(
        self,
        corpus: Corpus,
        query_ids: np.ndarray,
        query_offsets: np.ndarray,
        query_content: np.ndarray,
        query_texts: list[str],
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        """(pair_query, pair_passage, lexical, embedding, held, columns) of every
        candidate pair, grouped by query, strongest first; ``held``: which of its query's
        distinct tokens each pair's passage holds, as :meth:`IdfIndex._top_k` gives them
        (None when embedding candidates joined); ``columns``: the index column of every
        query token (:meth:`IdfIndex.columns_of`; the retrieval looks them up anyway).

        Lexical candidates are found and ranked through the sentence's CONTENT tokens: a
        passage sharing only stop words with it can never become a citation, and the
        posting lists of "the" or "of" (most of the corpus) are never walked. Their
        ``lexical`` value is the full lexical score of the specification.
        """
        config = self.config
        n_queries = query_offsets.shape[0] - 1
        if corpus.n_passages == 0 or n_queries == 0:
            empty = np.zeros(0, np.int64)
            return empty, empty, np.zeros(0), np.zeros(0), None, corpus.index.columns_of(query_ids)
        # (the queries' arrays are the pipeline's own: contiguous int64, valid offsets)
        columns = np.empty(query_ids.shape[0], dtype=np.int64)
        lexical_top, held = corpus.index._top_k(
            query_ids, query_offsets, config.max_candidates_lexical, query_content,
            return_held=True, n_threads=self.n_threads, token_columns=columns,
        )
        pair_query = np.repeat(np.arange(n_queries, dtype=np.int64), np.diff(lexical_top.offsets))
        pair_passage = lexical_top.passages
        use_embeddings = (
            corpus.embeddings is not None
            and self.embedder is not None
            and config.max_candidates_embedding > 0
        )
        if not use_embeddings:
            if config.max_candidates_total >= config.max_candidates_lexical:
                # no query has more candidates than may be kept
                return (
                    pair_query,
                    pair_passage,
                    lexical_top.scores,
                    np.zeros(pair_query.shape[0]),
                    held,
                    columns,
                )
            rank = np.arange(pair_query.shape[0]) - lexical_top.offsets[pair_query]
            keep = rank < config.max_candidates_total
            return (
                pair_query[keep],
                pair_passage[keep],
                lexical_top.scores[keep],
                np.zeros(int(keep.sum())),
                held[keep],
                columns,
            )

        query_vectors = embed_texts(self.embedder, query_texts)
        if query_vectors.shape[1] != corpus.embeddings.shape[1]:
            raise ValueError(
                f"embedder gives vectors of {query_vectors.shape[1]} dimensions, the "
                f"corpus's passage embeddings have {corpus.embeddings.shape[1]}: they "
                "come from another embedder"
            )
        similarity = _similarities(query_vectors, corpus.embeddings)
        k = min(config.max_candidates_embedding, corpus.n_passages)
        embed_query = np.repeat(np.arange(n_queries, dtype=np.int64), k)
        embed_passage = np.concatenate([_most_similar(row, k) for row in similarity])
        pair_query = np.concatenate([pair_query, embed_query])
        pair_passage = np.concatenate([pair_passage, embed_passage])
        keys = np.unique(pair_query * corpus.n_passages + pair_passage)
        pair_query, pair_passage = keys // corpus.n_passages, keys % corpus.n_passages
        lexical = corpus.index.pair_scores(query_ids, query_offsets, pair_query, pair_passage)
        embedding = similarity[pair_query, pair_passage].astype(np.float64)
        strength = np.maximum(lexical, embedding)
        source_index = corpus.source_indices[corpus.passage_source[pair_passage]]
        order = np.lexsort((pair_passage, source_index, -strength, pair_query))
        pair_query, pair_passage = pair_query[order], pair_passage[order]
        lexical, embedding = lexical[order], embedding[order]
        starts = np.searchsorted(pair_query, np.arange(n_queries))
        rank = np.arange(pair_query.shape[0]) - starts[pair_query]
        keep = rank < config.max_candidates_total
        return (
            pair_query[keep], pair_passage[keep], lexical[keep], embedding[keep], None, columns
        )

    def _run_aligner(
        self,
        query_ids: np.ndarray,
        query_offsets: np.ndarray,
        corpus: Corpus,
        pair_query: np.ndarray,
        pair_passage: np.ndarray,
    ) -> _CallAlignments:
        """Align query ``pair_query[k]`` with passage ``pair_passage[k]`` for every ``k``.

        The built-in aligner reads the passages in place from the corpus's token array
        (no copy, no input checks: the pipeline's arrays are valid by construction); a
        custom ``align_pairs`` object or per-pair ``align`` object gets the passages
        packed CSR-style as :func:`~citekit.kernels.align_pairs` takes them.
        """
        config = self.config
        if self.aligner is None:
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
                self.n_threads,
                _PARALLEL_MIN_CELLS,
            )
            return _CallAlignments(rows, block_counts, block_starts, blocks)
        unique_passages = np.unique(pair_passage)
        target_lo = corpus.passage_token_start[unique_passages]
        target_hi = corpus.passage_token_end[unique_passages]
        positions, _ = gather_ranges(target_lo, target_hi)
        target_ids = corpus.token_ids[positions]
        target_offsets = np.zeros(unique_passages.shape[0] + 1, dtype=np.int64)
        np.cumsum(target_hi - target_lo, out=target_offsets[1:])
        pair_target = np.searchsorted(unique_passages, pair_passage)
        if callable(getattr(self.aligner, "align_pairs", None)):
            options: dict[str, Any] = dict(
                match_score=config.match_score,
                mismatch_score=config.mismatch_score,
                gap_score=config.gap_score,
                band_width=config.band_width,
                return_blocks=True,
            )
            if self.n_threads is not None:
                options["n_threads"] = self.n_threads
            out = self.aligner.align_pairs(
                query_ids,
                query_offsets,
                target_ids,
                target_offsets,
                pair_query,
                pair_target,
                **options,
            )
            found = PairAlignments(
                *(np.asarray(getattr(out, name), dtype=np.int64) for name in PairAlignments._fields)
            )
            return _CallAlignments(
                np.ascontiguousarray(np.stack(found[:6])),
                np.diff(found.block_offsets),
                found.block_offsets[:-1],
                np.ascontiguousarray(found.blocks.reshape(-1, 3)),
            )
        # a per-pair aligner: align(query, target) -> LocalAlignment-like record
        rows = np.zeros((6, pair_query.shape[0]), dtype=np.int64)
        block_offsets = np.zeros(pair_query.shape[0] + 1, dtype=np.int64)
        blocks: list[tuple[int, int, int]] = []
        for p, (qi, ti) in enumerate(zip(pair_query.tolist(), pair_target.tolist())):
            query = query_ids[query_offsets[qi] : query_offsets[qi + 1]]
            target = target_ids[target_offsets[ti] : target_offsets[ti + 1]]
            result = self.aligner.align(query, target)
            rows[:, p] = [
                int(result.score),
                int(result.query_start),
                int(result.query_end),
                int(result.target_start),
                int(result.target_end),
                int(result.matches),
            ]
            found_blocks = getattr(result, "blocks", None) or ()
            blocks.extend((int(b[0]), int(b[1]), int(b[2])) for b in found_blocks)
            block_offsets[p + 1] = len(blocks)
        block_array = np.array(blocks, dtype=np.int64).reshape(-1, 3)
        return _CallAlignments(rows, np.diff(block_offsets), block_offsets[:-1], block_array)

    def _align_chunk(
        self, answers: list[str], queries: _Queries, first: int, last: int, corpus: Corpus
    ) -> list[SpanCitations]:
        config = self.config
        (
            query_offsets,
            query_ids,
            query_starts,
            query_ends,
            query_content,
            query_words,
            query_ideographs,
        ) = queries.pack(first, last)
        n_queries = last - first
        query_texts = [
            answers[queries.answer_of[q]][slice(*queries.spans[q])] for q in range(first, last)
        ]
        held = None
        if config.top_k == 0:
            pair_query = np.zeros(0, np.int64)
            pair_passage = np.zeros(0, np.int64)
            lexical = embedding = np.zeros(0)
            columns = corpus.index.columns_of(query_ids)
        else:
            pair_query, pair_passage, lexical, embedding, held, columns = self._candidates(
                corpus, query_ids, query_offsets, query_content, query_texts
            )
        n_pairs = pair_query.shape[0]
        content_prefix = np.zeros(query_ids.shape[0] + 1, dtype=np.int64)
        np.cumsum(query_content, out=content_prefix[1:])
        # the same for content words (no single letters of Thai, kana, ...)
        word_prefix = content_prefix
        has_letters = not np.array_equal(query_words, query_content)
        if has_letters:
            word_prefix = np.zeros(query_ids.shape[0] + 1, dtype=np.int64)
            np.cumsum(query_words, out=word_prefix[1:])
        content_total = np.diff(content_prefix[query_offsets])
        bag = _bag_statistics(
            corpus, query_ids, query_offsets, query_content, columns, pair_query, pair_passage,
            held, query_words if has_letters else None,
        )
        # Which pairs can become citations at all, and the best score each could reach:
        # an alignment matches at most the query tokens the passage contains. A citation
        # needs _MIN_CONTENT_TOKENS distinct content tokens of the sentence (half of them,
        # rounded up, for a sentence of fewer than four content words).
        (
            safe_len,
            safe_content,
            passage_content_coverage,
            min_content,
            feasible,
            short_mask,
        ) = pair_feasibility(
            pair_query,
            np.diff(query_offsets),
            content_total,
            bag.distinct_content_per_query,
            bag.content_occurrences,
            bag.content_distinct,
            bag.distinct_words_per_query,
            bag.word_distinct,
            float(config.min_answer_coverage),
            _MIN_CONTENT_TOKENS,
        )
        content_variants = bag.content_distinct.copy()
        short = np.flatnonzero(short_mask)
        if short.size:
            # the passage may hold the other content words as inflections ("expects")
            content_variants[short] = _content_variant_counts(
                corpus, answers, queries, first, pair_query[short], pair_passage[short]
            )
        feasible &= content_variants >= min_content
        scorer = self._scorer()
        embedding_only_possible = config.allow_embedding_only and self.embedder is not None
        bounded = type(scorer) is WeightedScorer and not embedding_only_possible
        if bounded:
            match_bound = bag.all_occurrences / safe_len
            weights = config.weights
            score_bound = (
                (weights.alignment + weights.answer_coverage) * match_bound
                + weights.evidence_coverage
                + weights.lexical * lexical
                + weights.embedding * np.maximum(embedding, 0.0)
            )
            feasible &= score_bound >= config.min_final_score
        else:
            score_bound = np.full(n_pairs, np.inf)

        weighted_scorer = type(scorer) is WeightedScorer
        component_weights = np.array(
            [
                config.weights.alignment,
                config.weights.answer_coverage,
                config.weights.evidence_coverage,
                config.weights.lexical,
                config.weights.embedding,
            ],
            dtype=np.float64,
        )

        def evaluate(
            rows: PairAlignments, content_matched: np.ndarray, pairs: np.ndarray | None = None
        ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
            """Score components (by name, and as one matrix: a row per name of
            ``COMPONENT_NAMES``), final score and acceptance of ``pairs`` (default: all),
            given their ``rows`` and ``content_matched`` (in that order)."""

            selection = _ALL_PAIRS if pairs is None else pairs
            # (the default scorer's sum is computed with the components, in its order)
            matrix, weighted_final = score_components(
                rows.score,
                rows.matches,
                rows.target_start,
                rows.target_end,
                np.ascontiguousarray(content_matched, dtype=np.float64),
                safe_len,
                safe_content,
                passage_content_coverage,
                lexical,
                embedding,
                selection,
                config.match_score,
                component_weights,
                weighted_scorer,
            )
            components = dict(zip(COMPONENT_NAMES, matrix))
            if weighted_scorer:
                final = weighted_final
            else:
                final = np.asarray(scorer.score(components, config), dtype=np.float64)
                if final.shape != (matrix.shape[1],):
                    raise ValueError(
                        f"scorer.score must return one score per pair, got shape {final.shape}"
                    )
            accepted = accept_pairs(
                rows.score,
                rows.target_start,
                rows.target_end,
                np.ascontiguousarray(content_matched, dtype=np.float64),
                content_variants,
                min_content,
                components["content_coverage"],
                passage_content_coverage,
                final,
                selection,
                float(config.min_alignment_score),
                float(config.min_answer_coverage),
                float(config.min_final_score),
            )
            return components, final, accepted, matrix

        rows, content_matched = self._align_best_first(
            corpus,
            query_ids,
            query_offsets,
            content_prefix,
            word_prefix,
            pair_query,
            pair_passage,
            lexical,
            bag.content_occurrences,
            feasible,
            score_bound,
            bounded,
            evaluate,
        )
        components, final, aligned_ok, component_matrix = evaluate(rows, content_matched)
        embedding_only = np.zeros(n_pairs, dtype=bool)
        if embedding_only_possible and n_pairs:
            zero = np.zeros(n_pairs)
            embed_components = dict(components)
            for name in ("normalized_alignment", "answer_coverage", "evidence_coverage"):
                embed_components[name] = zero
            embed_final = np.asarray(scorer.score(embed_components, config), dtype=np.float64)
            embedding_only = (
                ~aligned_ok
                & (embedding >= config.min_embedding_similarity)
                & (embed_final >= config.min_final_score)
            )
            final = np.where(embedding_only, embed_final, final)

        char_start, char_end = _evidence_chars(corpus, rows, pair_passage, embedding_only)
        judged_pairs, judged_offsets, n_pool, chosen_rows, chosen_offsets = (
            self._rank_and_choose(
                aligned_ok | embedding_only,
                pair_query,
                pair_passage,
                char_start,
                char_end,
                final,
                corpus,
                n_queries,
            )
        )

        context = _ChunkContext(
            corpus=corpus,
            rows=rows,
            pair_query=pair_query,
            pair_passage=pair_passage,
            char_start=char_start,
            char_end=char_end,
            final=final,
            components=components,
            component_matrix=component_matrix,
            embedding_only=embedding_only,
            query_offsets=query_offsets,
            query_ids=query_ids,
            query_starts=query_starts,
            query_ends=query_ends,
            query_content=query_content,
            columns=columns,
        )
        # the tokens each candidate citation covers, for every sentence in one batch
        query_folded, query_weights, query_values = queries.facts(first, last)
        covers, cover_offsets = _candidate_coverage(
            corpus, rows, judged_pairs, judged_offsets, pair_query, pair_passage,
            embedding_only, query_offsets, query_ids, columns, query_folded,
            query_content & ~query_words, query_ideographs,
        )
        judged = _judged_facts(
            corpus, context, judged_pairs, np.diff(content_prefix[query_offsets])
        )
        return self._records(
            answers, queries, first, context, judged, covers, cover_offsets, judged_offsets,
            n_pool, chosen_rows, chosen_offsets, query_weights, query_values,
        )

    def _rank(
        self,
        eligible_mask: np.ndarray,
        pair_query: np.ndarray,
        pair_passage: np.ndarray,
        char_start: np.ndarray,
        char_end: np.ndarray,
        final: np.ndarray,
        corpus: Corpus,
        n_queries: int,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Eligible pairs grouped by query, best first, with the specification's tie-breaks,
        and the bounds of each query's pairs (``pair_query`` below ``n_queries``).

        Within a query: by ``final`` descending, then (``prefer_source_order``) source
        order, evidence start in the source and longer evidence first, or (without it)
        evidence start, longer evidence and source order; then passage, then pair index.
        """
        return rank_eligible(  # type: ignore[no-any-return]
            *self._ranking_arguments(
                eligible_mask, pair_query, pair_passage, char_start, char_end, final, corpus,
                n_queries,
            )
        )

    def _ranking_arguments(
        self,
        eligible_mask: np.ndarray,
        pair_query: np.ndarray,
        pair_passage: np.ndarray,
        char_start: np.ndarray,
        char_end: np.ndarray,
        final: np.ndarray,
        corpus: Corpus,
        n_queries: int,
        *,
        absolute: bool = False,
    ) -> tuple[Any, ...]:
        """The arguments of the ranking kernels (:func:`citekit.kernels._ranking.rank_eligible`,
        the first of :func:`~citekit.kernels._ranking.rank_and_choose`); ``absolute``: the
        offsets are absolute in the documents already (:func:`_walk_keys`), so no base is
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
            self.config.prefer_source_order,
            n_queries,
        )

    def _align_best_first(
        self,
        corpus: Corpus,
        query_ids: np.ndarray,
        query_offsets: np.ndarray,
        content_prefix: np.ndarray,
        word_prefix: np.ndarray,
        pair_query: np.ndarray,
        pair_passage: np.ndarray,
        lexical: np.ndarray,
        content_present: np.ndarray,
        feasible: np.ndarray,
        score_bound: np.ndarray,
        bounded: bool,
        evaluate: Any,
    ) -> tuple[PairAlignments, np.ndarray]:
        """Align feasible pairs in rounds, most promising first, until no unaligned pair
        can change any sentence's citations or status.

        Each round is ONE aligner call over the pairs of every sentence still open. A
        sentence is closed when walking its accepted pairs whose score beats the best
        score any unaligned pair could reach (``score_bound``) already fills ``top_k``
        citations and the evidence pool (see :meth:`_rank_and_choose`); the result is then
        exactly the result of aligning every candidate. Without a bound (custom scorer,
        embedding-only citations) every feasible pair is aligned in one call.

        Each call's results go straight into per-pair arrays and its blocks are appended
        to one array, gathered per pair once at the end (:mod:`citekit.kernels._ranking`); the
        rounds rank, walk and close sentences in numba kernels too.
        """
        n_pairs = pair_query.shape[0]
        n_queries = query_offsets.shape[0] - 1
        top_k = _batch_top_k(self.config.top_k, n_pairs)
        # score, query_start, query_end, target_start, target_end, matches
        aligned_rows = np.zeros((6, n_pairs), np.int64)
        content_matched = np.zeros(n_pairs, np.float64)
        # every call's blocks, appended (rows in use: arena_used); a pair's latest blocks
        # are arena[pair_block_start[p]:pair_block_start[p] + pair_block_count[p]]
        arena = np.zeros((0, 3), np.int64)
        arena_used = 0
        pair_block_start = np.zeros(n_pairs, np.int64)
        pair_block_count = np.zeros(n_pairs, np.int64)

        def rows_now() -> PairAlignments:
            block_offsets, blocks = assemble_blocks(pair_block_start, pair_block_count, arena)
            return PairAlignments(*aligned_rows, block_offsets, blocks)

        def align(pairs: np.ndarray, ids: np.ndarray) -> np.ndarray:
            """Align ``pairs`` (sorted) with query tokens ``ids``; returns the pairs to
            align again on content words (see the retry below)."""
            nonlocal arena, arena_used
            found = self._run_aligner(
                ids, query_offsets, corpus, pair_query[pairs], pair_passage[pairs]
            )
            needed = arena_used + int(found.block_counts.sum())
            if needed > arena.shape[0]:
                grown = np.empty((max(needed, 2 * arena.shape[0]), 3), np.int64)
                grown[:arena_used] = arena[:arena_used]
                arena = grown
            retry = record_alignments(
                pairs,
                found.rows,
                found.block_counts,
                found.block_starts,
                found.blocks,
                query_offsets,
                pair_query,
                content_prefix,
                word_prefix,
                _LETTER_RUN,
                content_present,
                aligned_rows,
                pair_block_start,
                pair_block_count,
                content_matched,
                arena,
                arena_used,
            )
            arena_used = needed
            return retry

        def align_with_retry(todo: np.ndarray) -> None:
            # the best local alignment can be a run of stop words ("in the") although
            # the passage holds content words of the sentence: align those on content
            retry = align(todo, query_ids)
            if retry.size:
                # the query with stop words replaced by ids that match nothing
                content_only_ids = np.where(
                    content_prefix[1:] > content_prefix[:-1],
                    query_ids,
                    -1 - np.arange(query_ids.shape[0]),
                )
                align(retry, content_only_ids)

        candidates = np.flatnonzero(feasible)
        # few pairs: aligning them all costs less than deciding which to skip
        rounds = bounded and candidates.shape[0] > _ALIGN_ALL_BELOW
        if not rounds:
            if candidates.size:
                align_with_retry(candidates)
            return rows_now(), content_matched

        # feasible pairs of each sentence, most promising first
        order, query_first = rank_within_queries(
            candidates,
            pair_query,
            n_queries,
            np.stack((-score_bound, -lexical)),
            pair_passage.reshape(1, -1),
        )
        order_query = pair_query[order]
        rank = np.arange(order.shape[0]) - query_first[order_query]
        limit = np.full(n_queries, max(_FIRST_ROUND_PAIRS, 4 * top_k), dtype=np.int64)
        open_query = np.ones(n_queries, dtype=bool)
        aligned = np.zeros(n_pairs, dtype=bool)
        empty_offsets = np.zeros(0, np.int64)
        empty_blocks = np.zeros((0, 3), np.int64)
        while True:
            todo = order[open_query[order_query] & (rank < limit[order_query]) & ~aligned[order]]
            if todo.size == 0:
                break
            todo = np.sort(todo)
            align_with_retry(todo)
            aligned[todo] = True
            # close the sentences whose remaining pairs cannot change the outcome: only
            # the aligned pairs of open sentences matter (the others are not accepted),
            # and scoring them needs no blocks
            judged = np.flatnonzero(aligned & open_query[pair_query])
            judged_passage = pair_passage[judged]
            rows = PairAlignments(
                *(field[judged] for field in aligned_rows), empty_offsets, empty_blocks
            )
            _, final, accepted, _ = evaluate(rows, content_matched[judged], judged)
            char_start, char_end = _evidence_chars(
                corpus, rows, judged_passage, np.zeros(judged.shape[0], dtype=bool)
            )
            judged_query = pair_query[judged]
            ranked, ranked_bounds = self._rank(
                accepted,
                judged_query,
                judged_passage,
                char_start,
                char_end,
                final,
                corpus,
                n_queries,
            )
            close_queries(
                open_query,
                limit,
                query_first,
                order,
                score_bound,
                ranked,
                ranked_bounds,
                final,
                *_walk_keys(corpus, judged_passage, char_start, char_end),
                top_k,
                self.config.max_citations_per_source,
                top_k * _EVIDENCE_POOL_PER_CITATION,
            )
        return rows_now(), content_matched

    def _rank_and_choose(
        self,
        eligible_mask: np.ndarray,
        pair_query: np.ndarray,
        pair_passage: np.ndarray,
        char_start: np.ndarray,
        char_end: np.ndarray,
        final: np.ndarray,
        corpus: Corpus,
        n_queries: int,
    ) -> tuple[np.ndarray, ...]:
        """Walk every sentence's eligible pairs in :meth:`_rank`'s order, dropping
        duplicate evidence (the same source and characters).

        A sentence's citations by score are its best pairs, at most
        ``max_citations_per_source`` per source and ``top_k`` in all; its evidence pool the
        ``_EVIDENCE_POOL_PER_CITATION * top_k`` best whatever their source, among which
        :meth:`_records` chooses the complementary evidence set of the sentence. Returns
        ``(judged, judged_offsets, n_pool, chosen_rows, chosen_offsets)`` as
        :func:`citekit.kernels._ranking.choose_all` (the pairs each sentence judges: its pool,
        then the citations outside it; and the rows of its citations), from one kernel
        call for the batch (:func:`citekit.kernels._ranking.rank_and_choose`) that ranks only
        as many of a sentence's pairs as the walk reads (``_RANKED_FRONT`` unless it
        needs more).
        """
        top_k = _batch_top_k(self.config.top_k, pair_query.shape[0])
        owner, start, end = _walk_keys(corpus, pair_passage, char_start, char_end)
        return rank_and_choose(  # type: ignore[no-any-return]
            *self._ranking_arguments(
                eligible_mask, pair_query, pair_passage, start, end, final, corpus, n_queries,
                absolute=corpus.chunks_share_documents,
            ),
            owner,
            top_k,
            self.config.max_citations_per_source,
            top_k * _EVIDENCE_POOL_PER_CITATION,
            max(_RANKED_FRONT, 2 * top_k * (_EVIDENCE_POOL_PER_CITATION + 1)),
        )

    def _records(
        self,
        answers: list[str],
        queries: _Queries,
        first: int,
        context: "_ChunkContext",
        judged: "_JudgedFacts",
        covers: np.ndarray,
        cover_offsets: np.ndarray,
        judged_offsets: np.ndarray,
        n_pool: np.ndarray,
        chosen_rows: np.ndarray,
        chosen_offsets: np.ndarray,
        weights: np.ndarray,
        values: np.ndarray,
    ) -> list[SpanCitations]:
        """The :class:`~citekit.results.SpanCitations` of the batch's sentences (global
        numbers ``first``, ``first + 1``, ...).

        Sentence ``q``'s judged pairs (its evidence pool, its first ``n_pool[q]``, then its
        citations by score outside it, whose rows are ``chosen_rows[chosen_offsets[q]:
        chosen_offsets[q + 1]]``, best first) are entries ``judged_offsets[q]:
        judged_offsets[q + 1]`` of ``judged``; ``covers[cover_offsets[q]:]`` the sentence
        tokens each covers, a row per pair (:func:`_candidate_coverage`); ``weights`` and
        ``values``: every token's coverage weight and whether it is a value.

        One kernel call (:func:`citekit.kernels._evidence.records_batch`) chooses every
        sentence's evidence set and shown citations, their evidence spans, the coverage
        and uncovered runs that hold when no evidence contradicts a value, and which
        alignments may contradict one (a value of the sentence beside or between their
        matched blocks); Python reads those few alignments' values
        (:func:`~citekit._content.find_conflicts`) and builds the records.
        """
        config = self.config
        facts = judged.ints
        if context.corpus.chunks_share_documents:
            # max_citations_per_source counts documents: row 0 (the source) holds each
            # pair's document instead
            facts = facts.copy()
            facts[0] = context.corpus.source_documents[facts[0]]
        (
            rec_offsets, rec_rows, rec_flags, rec_answer, coverage, run_offsets, runs,
            span_offsets, spans,
        ) = records_batch(
            covers,
            cover_offsets,
            judged_offsets,
            n_pool,
            chosen_rows,
            chosen_offsets,
            context.query_offsets,
            context.query_starts,
            context.query_ends,
            weights,
            context.query_content,
            values,
            facts,
            judged.embedding_flags,
            judged.aligned_content,
            context.rows.blocks,
            context.corpus.token_starts,
            context.corpus.token_ends,
            _batch_top_k(config.top_k, int(judged_offsets[-1])),
            config.max_citations_per_source,
            config.multi_span_evidence,
            config.multi_span_merge_gap_chars,
            config.multi_span_max_spans,
        )
        # the score components of every row (a row's list, read for the citations shown);
        # a scorer may have added components to the dict: then they are read by name
        rec_pairs = judged.pairs[np.repeat(judged_offsets[:-1], np.diff(rec_offsets)) + rec_rows]
        if tuple(judged.component_names) == COMPONENT_NAMES:
            component_rows = context.component_matrix[:, rec_pairs].T.tolist()
        else:
            component_rows = np.column_stack(
                [context.components[name][rec_pairs] for name in judged.component_names]
            ).tolist()
        table = _RecordTable(
            rec_offsets.tolist(),
            rec_rows.tolist(),
            rec_flags.tolist(),
            rec_answer.tolist(),
            component_rows,
            coverage.tolist(),
            run_offsets.tolist(),
            list(map(tuple, runs.tolist())),
            span_offsets.tolist(),
            spans.tolist(),
            covers,
            cover_offsets.tolist(),
            weights,
            values.tolist(),
        )
        judged_bounds = judged_offsets.tolist()
        out = []
        for q in range(len(judged_bounds) - 1):
            global_q = first + q
            answer = answers[queries.answer_of[global_q]]
            span_start, span_end = queries.spans[global_q]
            answer_span = _new_record(AnswerSpan)
            answer_span.__dict__.update(
                text=answer[span_start:span_end],
                char_start=span_start,
                char_end=span_end,
                kind="sentence",
                paragraph_index=None,
                sentence_index=queries.sentence_index[global_q],
            )
            out.append(
                self._span_citations(
                    answer, answer_span, q, context, judged, judged_bounds[q],
                    judged_bounds[q + 1] - judged_bounds[q], table,
                )
            )
        return out

    def _span_citations(
        self,
        answer: str,
        answer_span: AnswerSpan,
        q: int,
        context: "_ChunkContext",
        judged: "_JudgedFacts",
        judged_first: int,
        n_judged: int,
        table: "_RecordTable",
    ) -> SpanCitations:
        """The citations and status of sentence ``q``, whose judged pairs are entries
        ``judged_first:judged_first + n_judged`` of ``judged``, from what
        :meth:`_records` computed (``table``).

        The evidence set (a greedy cover of the sentence's content by the pool) and the
        shown citations are the table's rows of the sentence; a candidate that covers no
        content token of the sentence (an alignment of stop words, of "都です" in a
        Japanese sentence about a 都市) is no citation, unless it is embedding-only. A
        value that some evidence contradicts counts as covered only where conflict-free
        evidence states it too, and such an unresolved value rules out "supported".
        """
        config = self.config
        corpus = context.corpus
        lo, hi = int(context.query_offsets[q]), int(context.query_offsets[q + 1])
        n_tokens = hi - lo
        embedding_supported = False
        answer_cache: dict[int, Any] = {}  # what find_conflicts learns about them
        answer_values = table.values[lo:hi]
        answer_ids = context.query_ids[lo:hi]
        answer_starts, answer_ends = context.query_starts[lo:hi], context.query_ends[lo:hi]
        citations = []
        contradicted: list[tuple[int, list[Any]]] = []  # (row, its conflicts)
        # a sign, a leading point or a scale word changes a value even where its tokens
        # match ("-40" against "40", "2.4 million" against "2.4 billion"): matched values
        # are compared when the sentence has values and it, or the evidence, has a sign,
        # a point or a scale word that may belong to one
        has_values = any(answer_values)
        # a sign, point or scale word in the sentence: its matched values are compared
        signed = has_values and (
            _may_be_prefixed(answer, answer_span.char_start, answer_span.char_end)
            or _may_be_scaled(answer, answer_span.char_start, answer_span.char_end)
        )
        # rise and fall words ("rose 3%" against "fell 3%"): the sentence's matched values
        # are compared with a passage holding words of the other direction; ``directed``
        # is the sentence's bits (directions_in), -1 until a passage with some needs them
        directed = -1 if has_values and not signed else 0
        for i in range(table.rec_offsets[q], table.rec_offsets[q + 1]):
            row, flags = table.rec_rows[i], table.rec_flags[i]
            entry = judged_first + row
            source_text = corpus.source_text(judged.source_list[entry])
            conflicts: list[Any] = []
            compare = False
            if judged.embedding_only[entry]:
                if judged.embedding_score[entry] >= config.supported_embedding_similarity:
                    embedding_supported = True
            else:
                compare = bool(flags & 2) or (
                    has_values
                    and judged.aligned_content[entry] >= 2
                    and (
                        signed
                        or _may_be_prefixed(
                            source_text, judged.char_start[entry], judged.char_end[entry]
                        )
                    )
                )
                if not compare and directed and judged.aligned_content[entry] >= 2:
                    passage_bits = _passage_directions(corpus, judged, entry, source_text)
                    if passage_bits:
                        if directed < 0:
                            directed = directions_in(
                                answer, answer_span.char_start, answer_span.char_end
                            )
                        compare = _opposed(directed, passage_bits)
            if compare:
                # a value of the sentence beside or between the matched blocks of a real
                # alignment (at least two content tokens matched), or a matched one that a
                # sign, a leading point, a scale word or a rise against a fall may change:
                # does it face another?
                token_lo, token_hi = judged.token_lo[entry], judged.token_hi[entry]
                conflicts = find_conflicts(
                    answer,
                    answer_ids,
                    answer_starts,
                    answer_ends,
                    source_text,
                    corpus.token_ids[token_lo:token_hi],
                    corpus.token_starts[token_lo:token_hi],
                    corpus.token_ends[token_lo:token_hi],
                    context.rows.blocks[judged.block_lo[entry] : judged.block_hi[entry]],
                    source_offset=judged.base[entry],
                    answer_values=answer_values,
                    answer_cache=answer_cache,
                )
                if conflicts:
                    contradicted.append((row, conflicts))
            if flags & 1:
                citations.append(
                    self._citation(
                        entry,
                        table.spans[table.span_offsets[i] : table.span_offsets[i + 1]],
                        conflicts,
                        table.components[i],
                        table.rec_answer[i],
                        answer_span,
                        corpus,
                        judged,
                        source_text,
                    )
                )
        if contradicted:
            coverage, any_unresolved, unsupported = _contested_coverage(
                table, q, lo, hi, n_judged, contradicted, context, embedding_supported
            )
        else:
            coverage, any_unresolved = table.coverage[q], False
            unsupported = (
                []
                if embedding_supported
                else table.runs[table.run_offsets[q] : table.run_offsets[q + 1]]
            )
        if not citations:
            status = "unsupported"
        elif embedding_supported or (
            coverage >= config.supported_answer_coverage and not any_unresolved
        ):
            status = "supported"
        else:
            status = "partial"
        record = _new_record(SpanCitations)
        record.__dict__.update(
            answer_span=answer_span,
            citations=tuple(citations),
            status=status,
            unsupported_spans=tuple(unsupported),
            content_coverage=coverage if n_tokens else None,
        )
        return record

    def _citation(
        self,
        entry: int,
        spans: list[list[int]],
        conflicts: list[Any],
        component_values: list[float],
        answer_range: list[int],
        answer_span: AnswerSpan,
        corpus: Corpus,
        judged: "_JudgedFacts",
        source_text: str,
    ) -> Citation:
        """The citation of judged entry ``entry``: ``spans`` its evidence spans' (start,
        end) in ``source_text``, ``component_values`` its score components (in the order
        of ``judged.component_names``), ``answer_range`` the answer characters its
        alignment covers (-1 for an embedding-only candidate: the whole sentence)."""
        source, base = judged.source_list[entry], judged.base[entry]
        start, end = judged.char_start[entry], judged.char_end[entry]
        components = dict(zip(judged.component_names, component_values))
        components["passage_char_start"] = float(judged.passage_char_start[entry])
        components["passage_char_end"] = float(judged.passage_char_end[entry])
        answer_start, answer_end = answer_range
        if judged.embedding_only[entry]:
            answer_start, answer_end = answer_span.char_start, answer_span.char_end
            components["embedding_only"] = 1.0
        evidence_spans = []
        total = 0
        for s, e in spans:
            span = _new_record(EvidenceSpan)
            span.__dict__.update(char_start=base + s, char_end=base + e, evidence=source_text[s:e])
            evidence_spans.append(span)
            total += e - s
        components["num_evidence_spans"] = float(len(spans))
        components["evidence_chars_total"] = float(total)
        record = _new_record(Citation)
        record.__dict__.update(
            score=judged.final[entry],
            source_id=corpus.source_ids[source],
            source_index=judged.source_index[entry],
            candidate_index=judged.passage[entry],
            char_start=base + start,
            char_end=base + end,
            evidence=source_text[start:end],
            evidence_spans=tuple(evidence_spans),
            components=components,
            answer_char_start=answer_start,
            answer_char_end=answer_end,
            conflicts=tuple(conflicts),
        )
        return record


class _RecordTable(NamedTuple):
    """What :func:`citekit.kernels._evidence.records_batch` found for a batch, as Python
    values (sentence ``q``'s rows are ``rec_offsets[q]:rec_offsets[q + 1]``: the judged
    rows of its evidence set and shown citations, ascending, with flags 1 = shown, 2 = to
    check for conflicts, the answer characters of the alignment and the score components;
    row ``i``'s evidence spans ``spans[span_offsets[i]:span_offsets[i + 1]]``; the
    sentence's conflict-free coverage and uncovered runs), with the covers and token facts
    that a sentence with contradicted values needs again."""

    rec_offsets: list[int]
    rec_rows: list[int]
    rec_flags: list[int]
    rec_answer: list[list[int]]
    components: list[list[float]]
    coverage: list[float]
    run_offsets: list[int]
    runs: list[tuple[int, int]]
    span_offsets: list[int]
    spans: list[list[int]]
    covers: np.ndarray
    cover_offsets: list[int]
    weights: np.ndarray
    values: list[bool]


def _contested_coverage(
    table: _RecordTable,
    q: int,
    lo: int,
    hi: int,
    n_judged: int,
    contradicted: list[tuple[int, list[Any]]],
    context: "_ChunkContext",
    embedding_supported: bool,
) -> tuple[float, bool, list[tuple[int, int]]]:
    """(coverage, whether a contradicted value stays unresolved, uncovered runs) of
    sentence ``q`` (tokens ``lo:hi``) when some of its evidence rows contradict values
    (``contradicted``: each such row and its conflicts): the contradicted values are not
    covered by that evidence, and count as covered only where conflict-free evidence
    states them too."""
    n_tokens = hi - lo
    covers = table.covers[table.cover_offsets[q] :][: n_judged * n_tokens].reshape(
        n_judged, n_tokens
    )
    conflicts_of = dict(contradicted)
    rows = table.rec_rows[table.rec_offsets[q] : table.rec_offsets[q + 1]]
    offsets = [0]
    ranges = []
    for row in rows:
        for conflict in conflicts_of.get(row, ()):
            ranges.append((conflict.answer_char_start, conflict.answer_char_end))
        offsets.append(len(ranges))
    coverage, unresolved, runs = contested_coverage(
        covers,
        np.array(rows, dtype=np.int64),
        np.array(offsets, dtype=np.int64),
        np.array(ranges, dtype=np.int64).reshape(-1, 2),
        context.query_starts[lo:hi],
        context.query_ends[lo:hi],
        context.query_content[lo:hi],
        table.weights[lo:hi],
        embedding_supported,
    )
    return coverage, unresolved, list(map(tuple, runs.tolist()))


class _ChunkContext(NamedTuple):
    corpus: Corpus
    rows: PairAlignments
    pair_query: np.ndarray
    pair_passage: np.ndarray
    char_start: np.ndarray
    char_end: np.ndarray
    final: np.ndarray
    components: dict[str, np.ndarray]
    component_matrix: np.ndarray  # (the components' rows, in COMPONENT_NAMES order)
    embedding_only: np.ndarray
    query_offsets: np.ndarray
    query_ids: np.ndarray
    query_starts: np.ndarray
    query_ends: np.ndarray
    query_content: np.ndarray
    columns: np.ndarray


class _JudgedFacts(NamedTuple):
    """What the records need of every judged pair of a batch, as Python values (entry
    ``i`` is the ``i``-th pair of the sentences' judged lists, concatenated): indexing
    numpy arrays one scalar at a time costs more than reading them all once. The score
    components are read by :meth:`Pipeline._records`, for the records' rows only."""

    ints: np.ndarray  # (the integer facts as judged_int_facts gives them, 14 x pairs)
    source_list: list[int]
    source_index: list[int]
    passage: list[int]
    base: list[int]
    embedding_only: list[bool]
    embedding_flags: np.ndarray  # (embedding_only as an array, for the records kernel)
    embedding_score: list[float]
    aligned_content: np.ndarray  # (content tokens the alignment matched)
    block_lo: list[int]
    block_hi: list[int]
    token_lo: list[int]
    token_hi: list[int]
    char_start: list[int]
    char_end: list[int]
    final: list[float]
    passage_char_start: list[int]
    passage_char_end: list[int]
    component_names: list[str]
    pairs: np.ndarray  # (the judged pairs)


def _judged_facts(
    corpus: Corpus,
    context: "_ChunkContext",
    pairs: np.ndarray,
    content_total: np.ndarray,
) -> _JudgedFacts:
    """:class:`_JudgedFacts` of the judged ``pairs`` of every sentence, concatenated
    (``content_total``: each sentence's number of content tokens)."""
    rows = context.rows
    components = context.components
    names = list(components)
    facts = judged_int_facts(
        pairs,
        context.pair_passage,
        corpus.passage_source,
        corpus.base_offsets,
        corpus.source_indices,
        rows.block_offsets,
        corpus.passage_token_start,
        corpus.passage_token_end,
        context.char_start,
        context.char_end,
        rows.query_start,
        rows.query_end,
        corpus.passage_char_start,
        corpus.passage_char_end,
    )
    (
        source_list,
        source_index,
        passage,
        base,
        block_lo,
        block_hi,
        token_lo,
        token_hi,
        char_start,
        char_end,
        _,  # (the answer token range: records_batch reads it)
        _,
        passage_char_start,
        passage_char_end,
    ) = facts.tolist()
    # content tokens the alignment matched (content coverage x content tokens)
    aligned_content = np.round(
        components["content_coverage"][pairs]
        * np.maximum(content_total[context.pair_query[pairs]], 1)
    )
    return _JudgedFacts(
        ints=facts,
        source_list=source_list,
        source_index=source_index,
        passage=passage,
        base=base,
        embedding_only=context.embedding_only[pairs].tolist(),
        embedding_flags=context.embedding_only[pairs],
        embedding_score=components["embedding_score"][pairs].tolist(),
        aligned_content=np.ascontiguousarray(aligned_content, dtype=np.float64),
        block_lo=block_lo,
        block_hi=block_hi,
        token_lo=token_lo,
        token_hi=token_hi,
        char_start=char_start,
        char_end=char_end,
        final=context.final[pairs].astype(np.float64).tolist(),
        passage_char_start=passage_char_start,
        passage_char_end=passage_char_end,
        component_names=names,
        pairs=pairs,
    )


class _CallAlignments(NamedTuple):
    """One aligner call's results: ``rows`` of shape ``(6, n_pairs)`` (score, query_start,
    query_end, target_start, target_end, matches); pair ``k``'s blocks are
    ``blocks[block_starts[k]:block_starts[k] + block_counts[k]]``."""

    rows: np.ndarray
    block_counts: np.ndarray
    block_starts: np.ndarray
    blocks: np.ndarray


class _BagStatistics(NamedTuple):
    all_occurrences: np.ndarray
    content_occurrences: np.ndarray
    content_distinct: np.ndarray
    distinct_content_per_query: np.ndarray
    # the same two counts for the content tokens that are words (not single letters of a
    # script tokenized letter by letter, see citekit._content.letter_token_mask)
    word_distinct: np.ndarray
    distinct_words_per_query: np.ndarray


def _similarities(query_vectors: np.ndarray, embeddings: np.ndarray) -> np.ndarray:
    """Cosine similarity of every query vector with every passage embedding (rows
    L2-normalized), one matrix-vector product per query: a sentence's similarities do
    not depend on the other sentences aligned with it (a matrix product's rounding
    depends on the batch's shape)."""
    similarity = np.empty((query_vectors.shape[0], embeddings.shape[0]), dtype=np.float32)
    for row, vector in enumerate(query_vectors):
        np.matmul(embeddings, vector, out=similarity[row])
    return similarity


def _most_similar(similarity: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` passages (``0 < k <= similarity.size``) of largest similarity; of those
    tied with the k-th largest, the lowest passages."""
    n = similarity.shape[0]
    kth = np.partition(similarity, n - k)[n - k]
    above = np.flatnonzero(similarity > kth)
    tied = np.flatnonzero(similarity == kth)[: k - above.shape[0]]
    return np.concatenate([above, tied]).astype(np.int64)


def _bag_statistics(
    corpus: Corpus,
    query_ids: np.ndarray,
    query_offsets: np.ndarray,
    query_content: np.ndarray,
    columns: np.ndarray,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    held: np.ndarray | None = None,
    query_words: np.ndarray | None = None,
) -> _BagStatistics:
    """For every pair: how many query tokens (all / content, with multiplicity) and how
    many distinct content tokens of the query its passage contains, and how many distinct
    content tokens that are words (``query_words``; None: every content token); from
    ``held`` (which of its query's distinct tokens each passage holds, see
    :meth:`IdfIndex._top_k`) when given and known, else from the passages' rows."""
    n_queries = query_offsets.shape[0] - 1
    n_pairs = pair_query.shape[0]
    if query_ids.size == 0:
        zeros = np.zeros(n_pairs)
        return _BagStatistics(zeros, zeros, zeros, np.zeros(n_queries), zeros,
                              np.zeros(n_queries))
    term_columns, term_offsets, term_counts, term_is_content, distinct_content = query_terms(
        query_ids, query_offsets, query_content, columns
    )
    row_pointers, row_columns = corpus.index.rows

    def counts(term_flags: np.ndarray) -> tuple[np.ndarray, ...]:
        """(all, flagged, distinct flagged) query tokens each pair's passage holds."""

        def from_rows(pairs: np.ndarray) -> tuple[np.ndarray, ...]:
            return pair_bag_counts(  # type: ignore[no-any-return]
                row_pointers,
                row_columns,
                term_columns,
                term_offsets,
                term_counts,
                term_flags,
                pair_query[pairs],
                pair_passage[pairs],
                corpus.index.n_terms,
            )

        if held is None:
            return from_rows(np.arange(n_pairs))  # type: ignore[no-any-return]
        found = bag_counts_from_held(held, pair_query, term_offsets, term_counts, term_flags)
        unknown = np.flatnonzero(held < 0)
        if unknown.size:  # (sentences of more than 63 distinct tokens)
            for known, counted in zip(found, from_rows(unknown)):
                known[unknown] = counted
        return found  # type: ignore[no-any-return]

    all_occurrences, content_occurrences, content_distinct = counts(term_is_content)
    if query_words is None:
        word_distinct, distinct_words = content_distinct, distinct_content
    else:
        _, _, _, term_is_word, distinct_words = query_terms(
            query_ids, query_offsets, query_words, columns
        )
        word_distinct = counts(term_is_word)[2]
    return _BagStatistics(
        all_occurrences=all_occurrences.astype(np.float64),
        content_occurrences=content_occurrences.astype(np.float64),
        content_distinct=content_distinct.astype(np.float64),
        distinct_content_per_query=distinct_content,
        word_distinct=word_distinct.astype(np.float64),
        distinct_words_per_query=distinct_words,
    )


class _FormTable:
    """Folded forms (:func:`~citekit._content.fold_surface`) of token texts, numbered; a
    hyphenated word also stands for each of its parts ("twelve-bar" holds "12" and "bar").
    Shared by every corpus of the process: folding is a pure function of the text and
    words repeat across corpora (a new table replaces a full one; calls under way keep
    theirs)."""

    limit = 1 << 18  # texts; ~40 MB at most

    def __init__(self) -> None:
        import threading

        self.number: dict[str, int] = {}
        # text -> its form's number, or -1 - number when the text has parts
        self.of_surface: dict[str, int] = {}
        self.parts: dict[str, tuple[int, ...]] = {}
        self._lock = threading.Lock()  # numbering a new form (calls may run in threads)

    def form(self, form: str) -> int:
        """The number of a folded form."""
        number = self.number.get(form)
        if number is None:
            with self._lock:
                number = self.number.setdefault(form, len(self.number))
        return number

    def surface(self, surface: str) -> int:
        """The code of a token's text (:attr:`of_surface`), learning it if new."""
        found = self.of_surface.get(surface)
        if found is None:
            folded = fold_surface(surface)
            found = self.form(folded)
            if "-" in folded:
                parts = {self.form(fold_surface(part)) for part in folded.split("-") if part}
                parts.discard(found)
                if parts:
                    self.parts[surface] = tuple(sorted(parts))
                    found = -1 - found
            self.of_surface[surface] = found
        return found


_FORM_TABLE = [_FormTable()]


class _SurfaceForms:
    """The form numbers (:class:`_FormTable`) of the words of a corpus, found when first
    needed and kept on the corpus: a call folds only the words of the passages it looks
    at, never the whole vocabulary. A word (index column) is folded once per corpus, from
    the text of its first occurrence."""

    _UNKNOWN = np.iinfo(np.int64).min

    def __init__(self, corpus: Corpus, table: _FormTable) -> None:
        self.corpus = corpus
        self.table = table
        self.form = table.form
        n_terms = corpus.index.n_terms
        # each column's code in the table (negative: has parts), or _UNKNOWN
        self.column_code = np.full(n_terms, self._UNKNOWN, dtype=np.int64)
        # each column's form, and its part forms: part_forms[part_start:+part_count]
        self.column_form = np.full(n_terms, -1, dtype=np.int64)
        self.part_start = np.zeros(n_terms, dtype=np.int64)
        self.part_count = np.zeros(n_terms, dtype=np.int64)
        self.part_forms = np.zeros(0, dtype=np.int64)
        # passages whose every word has its form
        self.known = np.zeros(corpus.n_passages, dtype=bool)
        self._first_positions: np.ndarray | None = None
        # learning appends to part_forms: one thread at a time (words once learnt never
        # change, so readers need no lock)
        import threading

        self._lock = threading.Lock()

    @classmethod
    def of(cls, corpus: Corpus) -> "_SurfaceForms":
        table = _FORM_TABLE[0]
        if len(table.of_surface) > _FormTable.limit:
            table = _FORM_TABLE[0] = _FormTable()
        cached = corpus.caches.get("surface_forms")
        if cached is None or cached.table is not table:
            cached = corpus.caches["surface_forms"] = cls(corpus, table)
        return cached

    def first_positions(self) -> np.ndarray:
        """Where each index column's token first occurs in the corpus."""
        if self._first_positions is None:
            index = self.corpus.index
            first = index.first_positions
            if first is None or first.shape[0] != index.n_terms:  # e.g. a loaded corpus
                from citekit.kernels._index import factorize

                vocabulary, _, first = factorize(self.corpus.token_ids, return_first=True)
                if not np.array_equal(vocabulary, index.vocabulary):
                    raise ValueError("the corpus index does not match its tokens")
            self._first_positions = first
        return self._first_positions

    def _learn_columns(self, columns: np.ndarray) -> None:
        """Fold the words of ``columns`` (distinct, not known yet)."""
        corpus = self.corpus
        first = self.first_positions()[columns]
        # in corpus order, so that each source's words are sliced out of its text in one
        # C-level map (a Python loop per word is most of the cost)
        order = np.argsort(first, kind="stable")
        columns, first = columns[order], first[order]
        bounds = np.searchsorted(first, corpus.source_token_offsets)
        starts, ends = corpus.token_starts[first].tolist(), corpus.token_ends[first].tolist()
        surfaces: list[str] = []
        # only the sources holding such a word (a loop over every source of a large
        # corpus cost more than the words)
        holding = np.flatnonzero(bounds[1:] > bounds[:-1])
        for source, lo, hi in zip(
            holding.tolist(), bounds[holding].tolist(), bounds[holding + 1].tolist()
        ):
            text = corpus.source_text(source)
            surfaces.extend(map(text.__getitem__, map(slice, starts[lo:hi], ends[lo:hi])))
        found = list(map(self.table.of_surface.get, surfaces))
        if None in found:
            for position, code in enumerate(found):
                if code is None:
                    found[position] = self.table.surface(surfaces[position])
        codes = np.array(found, dtype=np.int64)
        self.column_code[columns] = codes
        self.column_form[columns] = np.where(codes < 0, -1 - codes, codes)
        with_parts = np.flatnonzero(codes < 0)
        if with_parts.size:
            parts = [self.table.parts[surfaces[i]] for i in with_parts.tolist()]
            counts = np.array([len(numbers) for numbers in parts], dtype=np.int64)
            self.part_count[columns[with_parts]] = counts
            self.part_start[columns[with_parts]] = (
                self.part_forms.shape[0] + np.cumsum(counts) - counts
            )
            self.part_forms = np.concatenate(
                [self.part_forms, np.array([n for numbers in parts for n in numbers], np.int64)]
            )

    def learn_all(self) -> None:
        """Fold every word of the corpus (:meth:`Pipeline.prepare`)."""
        with self._lock:
            unknown = np.flatnonzero(self.column_code == self._UNKNOWN)
            if unknown.size:
                self._learn_columns(unknown)
            self.known[:] = True

    def _learn(self, passages: np.ndarray) -> None:
        """Make sure every word of ``passages`` (repeats allowed) has its form."""
        if self.known[passages].all():
            return
        with self._lock:
            self._learn_locked(passages)

    def _learn_locked(self, passages: np.ndarray) -> None:
        fresh = passages[~self.known[passages]]
        if fresh.size == 0:
            return
        indptr, indices = self.corpus.index.rows
        positions, _ = gather_ranges(indptr[fresh], indptr[fresh + 1])
        columns = indices[positions]
        unknown = columns[self.column_code[columns] == self._UNKNOWN]
        if unknown.size:
            # distinct and ascending, by a mask over the columns (cheaper than np.unique)
            mark = np.zeros(self.column_code.shape[0], dtype=bool)
            mark[unknown] = True
            self._learn_columns(np.flatnonzero(mark))
        self.known[fresh] = True

    def held(
        self,
        passages: np.ndarray,
        forms: np.ndarray,
        columns: np.ndarray | None = None,
    ) -> np.ndarray:
        """``held[i]``: whether passage ``passages[i]`` holds a token of form ``forms[i]``,
        or (``columns``, when given) the index column ``columns[i]`` itself."""
        if passages.shape[0] == 0:
            return np.zeros(0, dtype=bool)
        self._learn(np.unique(passages))
        indptr, indices = self.corpus.index.rows
        return rows_hold(
            indptr,
            indices,
            self.column_form,
            self.part_start,
            self.part_count,
            self.part_forms,  # (read after learning: holds the parts of every word asked)
            passages,
            np.full(passages.shape[0], -1, dtype=np.int64) if columns is None else columns,
            forms,
        )


def _candidate_coverage(
    corpus: Corpus,
    rows: PairAlignments,
    pairs: np.ndarray,
    judged_offsets: np.ndarray,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    embedding_only: np.ndarray,
    query_offsets: np.ndarray,
    query_ids: np.ndarray,
    columns: np.ndarray,
    folded: Sequence[str],
    letters: np.ndarray,
    ideographs: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Which sentence tokens each judged pair covers, for every sentence at once.

    A pair covers the tokens its alignment matched, and those its passage, or a
    neighbouring one of the same source (``_COVERAGE_NEIGHBOURS``: a claim often
    continues across adjacent sentences), holds elsewhere (reordering) or as a light
    inflection (folded text ``folded[t]``, see :func:`~citekit._content.fold_surface`),
    but not ``letters`` (single letters of Thai, kana, ..., see
    :func:`~citekit._content.letter_token_mask`: any passage in the script holds most of
    them, and an alignment matches two in a row by chance): those it covers inside a run
    of ``_LETTER_RUN`` consecutive tokens of the sentence that such a passage holds in a
    row (ids ``query_ids``), and only there; likewise ``ideographs`` (Han, see
    :func:`~citekit._content.ideograph_token_mask`) in a run of ``_IDEOGRAPH_RUN``. An
    embedding-only pair covers none.
    Sentence ``q``'s flags are ``covered[offsets[q]:offsets[q + 1]]``, one row of its tokens
    (``query_offsets[q]:query_offsets[q + 1]`` of ``columns`` and ``folded``) per pair
    of its judged pairs ``pairs[judged_offsets[q]:judged_offsets[q + 1]]``.
    """
    aligned = ~embedding_only[pairs]
    forms = _SurfaceForms.of(corpus)
    passages = pair_passage[pairs[aligned]]
    if passages.size:
        # every word of the passages looked at needs its form (repeats are harmless
        # there; a mask over the corpus to drop them cost more)
        forms._learn(near_passages(passages, corpus.passage_source, _COVERAGE_NEIGHBOURS))
    numbers = list(map(forms.table.number.get, folded))
    if None in numbers:  # words new to the table: numbered one by one
        numbers = list(map(forms.form, folded))
    token_forms = np.array(numbers, dtype=np.int64)
    by_runs = letters | ideographs
    if by_runs.any():
        # (a negative column or form is looked up in no passage)
        token_forms[by_runs] = -1
        columns = np.where(by_runs, -1, columns)
    indptr, indices = corpus.index.rows
    covered, row_offsets = candidate_coverage(
        indptr,
        indices,
        forms.column_form,
        forms.part_start,
        forms.part_count,
        forms.part_forms,
        corpus.passage_source,
        pair_passage[pairs],
        pair_query[pairs],
        aligned,
        query_offsets,
        columns,
        token_forms,
        _COVERAGE_NEIGHBOURS,
        rows.block_offsets[pairs],
        rows.block_offsets[pairs + 1],
        rows.blocks,
    )
    for flags, run in ((letters, _LETTER_RUN), (ideographs, _IDEOGRAPH_RUN)):
        if flags.any():
            cover_runs(
                corpus.token_ids,
                corpus.passage_token_start,
                corpus.passage_token_end,
                corpus.passage_source,
                pair_passage[pairs],
                pair_query[pairs],
                aligned,
                query_offsets,
                query_ids,
                flags,
                _COVERAGE_NEIGHBOURS,
                run,
                covered,
                row_offsets,
            )
    return covered, row_offsets[judged_offsets]


# a letter of Thai, kana, ... is covered by a passage holding a run of this many tokens of
# the sentence around it in a row (a syllable or two: a run of three letters of a small
# alphabet seldom recurs by chance in a passage, while single letters always do)
_LETTER_RUN = 3
# a Han ideograph, by a passage holding it next to the ideograph (or other token) beside it
# in the sentence: most words are two ideographs, and single common ones recur anywhere
_IDEOGRAPH_RUN = 2


def _content_variant_counts(
    corpus: Corpus,
    answers: list[str],
    queries: "_Queries",
    first: int,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
) -> np.ndarray:
    """For each pair: how many distinct content words of the sentence (folded, see
    :func:`~citekit._content.fold_surface`) its passage holds in some inflection."""
    forms = _SurfaceForms.of(corpus)
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


def _evidence_chars(
    corpus: Corpus, rows: PairAlignments, pair_passage: np.ndarray, embedding_only: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Character range (in the tokenized text) of each pair's evidence: from the first
    to the last aligned token, or the whole passage window for embedding-only citations."""
    return evidence_chars(
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


def _may_be_prefixed(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` may hold a value that a sign or a leading point before
    it changes where its tokens match (:data:`PREFIXED_VALUE`, read from three characters
    before ``start``)."""
    return PREFIXED_VALUE.search(text, max(0, start - 3), end) is not None


def _passage_directions(
    corpus: Corpus, judged: "_JudgedFacts", entry: int, source_text: str
) -> int:
    """:func:`~citekit._content.directions_in` of judged ``entry``'s whole passage (its
    tokens in ``source_text``), kept on the corpus per passage: it holds every value of
    the passage that an alignment can match."""
    cache = corpus.caches.setdefault("passage_directions", {})
    passage = judged.passage[entry]
    bits = cache.get(passage)
    if bits is None:
        token_lo, token_hi = judged.token_lo[entry], judged.token_hi[entry]
        bits = 0
        if token_hi > token_lo:
            bits = directions_in(
                source_text,
                int(corpus.token_starts[token_lo]),
                int(corpus.token_ends[token_hi - 1]),
            )
        cache[passage] = bits
    return bits


def _opposed(directions: int, other: int) -> bool:
    """Whether the direction words of two texts (the bits of
    :func:`~citekit._content.directions_in`) may describe a value as a rise in one and as
    a fall in the other."""
    return bool(directions & 1 and other & 2 or directions & 2 and other & 1)


def _may_be_scaled(text: str, start: int, end: int) -> bool:
    """Whether the sentence ``text[start:end]`` may hold a scale word ("million",
    "BILLION", "thousand", "bn" apart from its number or not; false alarms only cost a
    comparison).

    Only the sentence is searched: a scale word changes a matched value only where both
    values have one (a number without a scale is not contradicted by the same number with
    one), so a sentence without one has no scale conflict, whatever the source says.
    """
    lowered = text[start:end].lower()
    return (
        lowered.find("illion") >= 0
        or lowered.find("housand") >= 0
        or lowered.find("bn") >= 0
        or lowered.find("mn") >= 0
        or lowered.find("tn") >= 0
    )


def _walk_keys(
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


def _batch_top_k(top_k: int, n_pairs: int) -> int:
    """``top_k`` for the kernels of a batch of ``n_pairs`` candidate pairs: no sentence has
    more citations than the batch has pairs, so a larger ``top_k`` changes nothing, but
    the kernels size their arrays by it (``top_k=2**31 - 1`` would ask for gigabytes)."""
    return min(top_k, max(n_pairs, 1))


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
    return pipeline.align(answer, sources)


_DEFAULT_PIPELINE: list[Pipeline | None] = [None]
