"""The records of a batch's sentences: each sentence's evidence set and shown citations,
their evidence spans, the value conflicts, the coverage and status, built as
:class:`~citekit.results.SpanCitations`.

A claim often fuses facts stated in two or three source sentences, while the best
citations by score are often near-copies of one sentence: so the evidence a sentence is
judged on is a greedy set cover of its content among its evidence pool (the best by
score first, then each one adding the most content not yet covered, at most ``top_k``).
These are shown first (at most ``max_citations_per_source`` per source), then the best
remaining by score up to ``top_k``, each adding matched content; a candidate adding none
is shown when it carries a conflict that the shown ones do not (a contradiction is
content too), but the sentence is not judged on it. The status is decided on the share
of the sentence's content that this evidence covers; the rules are in the user guide
(:doc:`/guide/status`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from citekit._citations.conflicts import find_conflicts
from citekit._citations.coverage import cover_equal_values, coverage_with_conflicts
from citekit._citations.directions import directions_in, opposed, passage_directions
from citekit._citations.polarity import NEGATED_CLAIM_SHARE, negation_conflict, polarity_marks
from citekit._citations.queries import Queries, QueryBatch
from citekit._citations.ranking import Choice, batch_top_k
from citekit._citations.values import may_be_prefixed, may_be_scaled
from citekit.config import CitationConfig
from citekit.corpus import Corpus
from citekit.kernels import PairAlignments
from citekit.kernels._evidence import (
    EVIDENCE_REACH,
    FACT_BASE,
    FACT_BLOCK_HI,
    FACT_BLOCK_LO,
    FACT_CHAR_END,
    FACT_CHAR_START,
    FACT_PASSAGE,
    FACT_PASSAGE_CHAR_END,
    FACT_PASSAGE_CHAR_START,
    FACT_SOURCE,
    FACT_SOURCE_INDEX,
    FACT_TOKEN_HI,
    FACT_TOKEN_LO,
    RECORD_CANDIDATE,
    RECORD_CHECK_VALUES,
    RECORD_SHOWN,
    judged_int_facts,
    records_batch,
    widen_evidence,
)
from citekit.kernels._scoring import COMPONENT_NAMES
from citekit.results import AnswerSpan, Citation, EvidenceSpan, SpanCitations, _unchecked_builder

__all__ = ["AlignedBatch", "batch_records", "judged_facts"]

# the records are built without their checks (every value is in its final form already,
# tens of records per call)
_new_answer_span = _unchecked_builder(AnswerSpan)
_new_span_citations = _unchecked_builder(SpanCitations)
_new_citation = _unchecked_builder(Citation)
_new_evidence_span = _unchecked_builder(EvidenceSpan)


class AlignedBatch(NamedTuple):
    """A batch's candidate pairs as aligned, scored and placed: what the records read."""

    corpus: Corpus
    batch: QueryBatch
    rows: PairAlignments
    pair_query: np.ndarray
    pair_passage: np.ndarray
    char_start: np.ndarray
    char_end: np.ndarray
    final: np.ndarray
    components: dict[str, np.ndarray]
    component_matrix: np.ndarray  # (the components' rows, in COMPONENT_NAMES order)
    embedding_only: np.ndarray


class _JudgedFacts(NamedTuple):
    """What the records need of every judged pair of a batch, as Python values (entry
    ``i`` is the ``i``-th pair of the sentences' judged lists, concatenated): indexing
    numpy arrays one scalar at a time costs more than reading them all once. The score
    components are read by :func:`batch_records`, for the records' rows only."""

    ints: np.ndarray  # (judged_int_facts' table: rows FACT_*, a column per pair)
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


def judged_facts(
    corpus: Corpus,
    context: AlignedBatch,
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
    # the evidence takes in the content words its passage states beside the aligned
    # tokens (not single letters of Thai, kana, nor Han ideographs: any passage in the
    # script holds them, see the coverage stage)
    batch = context.batch
    widen_evidence(
        facts, context.pair_query[pairs], batch.offsets, batch.ids,
        batch.words & ~batch.ideographs,
        rows.blocks, corpus.token_ids, corpus.token_starts, corpus.token_ends,
        context.embedding_only[pairs], EVIDENCE_REACH,
    )
    # (the answer token range, FACT_ANSWER_FIRST and FACT_ANSWER_LAST: records_batch
    # reads it)
    table = facts.tolist()
    # content tokens the alignment matched (content coverage x content tokens)
    aligned_content = np.round(
        components["content_coverage"][pairs]
        * np.maximum(content_total[context.pair_query[pairs]], 1)
    )
    return _JudgedFacts(
        ints=facts,
        source_list=table[FACT_SOURCE],
        source_index=table[FACT_SOURCE_INDEX],
        passage=table[FACT_PASSAGE],
        base=table[FACT_BASE],
        embedding_only=context.embedding_only[pairs].tolist(),
        embedding_flags=context.embedding_only[pairs],
        embedding_score=components["embedding_score"][pairs].tolist(),
        aligned_content=np.ascontiguousarray(aligned_content, dtype=np.float64),
        block_lo=table[FACT_BLOCK_LO],
        block_hi=table[FACT_BLOCK_HI],
        token_lo=table[FACT_TOKEN_LO],
        token_hi=table[FACT_TOKEN_HI],
        char_start=table[FACT_CHAR_START],
        char_end=table[FACT_CHAR_END],
        final=context.final[pairs].astype(np.float64).tolist(),
        passage_char_start=table[FACT_PASSAGE_CHAR_START],
        passage_char_end=table[FACT_PASSAGE_CHAR_END],
        component_names=names,
        pairs=pairs,
    )


class _BatchRecords(NamedTuple):
    """:func:`citekit.kernels._evidence.records_batch`'s outputs."""

    rec_offsets: np.ndarray
    rec_rows: np.ndarray
    rec_flags: np.ndarray  # (RECORD_SHOWN, RECORD_CHECK_VALUES)
    rec_answer: np.ndarray
    coverage: np.ndarray
    run_offsets: np.ndarray
    runs: np.ndarray
    span_offsets: np.ndarray
    spans: np.ndarray


class _RecordTable(NamedTuple):
    """What :func:`citekit.kernels._evidence.records_batch` found for a batch, as Python
    values (sentence ``q``'s rows are ``rec_offsets[q]:rec_offsets[q + 1]``: the judged
    rows of its evidence set and shown citations, ascending, with their flags
    (``RECORD_SHOWN``, ``RECORD_CHECK_VALUES``), the answer characters of the alignment
    and the score components; row ``i``'s evidence spans
    ``spans[span_offsets[i]:span_offsets[i + 1]]``; the sentence's conflict-free coverage
    and uncovered runs), with the covers and token facts that a sentence with
    contradicted values needs again."""

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
    rec_source: list[int]  # (what max_citations_per_source counts, per record)
    top_k: int
    max_per_source: int


def batch_records(
    config: CitationConfig,
    answers: list[str],
    queries: Queries,
    first: int,
    context: AlignedBatch,
    judged: _JudgedFacts,
    covers: np.ndarray,
    cover_offsets: np.ndarray,
    choice: Choice,
    weights: np.ndarray,
    values: np.ndarray,
) -> list[SpanCitations]:
    """The :class:`~citekit.results.SpanCitations` of the batch's sentences (global
    numbers ``first``, ``first + 1``, ... of ``queries``).

    Sentence ``q``'s judged pairs (``choice``: its evidence pool, its first
    ``choice.n_pool[q]``, then its citations by score outside it, whose rows are
    ``choice.chosen_rows[choice.chosen_offsets[q]:choice.chosen_offsets[q + 1]]``, best
    first) are entries ``choice.judged_offsets[q]:choice.judged_offsets[q + 1]`` of
    ``judged``; ``covers[cover_offsets[q]:]`` the sentence tokens each covers, a row per
    pair (:func:`~citekit._citations.coverage.judged_covers`); ``weights`` and
    ``values``: every token's coverage weight and whether it is a value.

    One kernel call (:func:`citekit.kernels._evidence.records_batch`) chooses every
    sentence's evidence set and shown citations, their evidence spans, the coverage
    and uncovered runs that hold when no evidence contradicts a value, and which
    alignments may contradict one (a value of the sentence beside or between their
    matched blocks); Python reads those few alignments' values
    (:func:`~citekit._citations.conflicts.find_conflicts`) and builds the records.
    """
    judged_offsets = choice.judged_offsets
    facts = judged.ints
    top_k = batch_top_k(config.top_k, int(judged_offsets[-1]))
    if context.corpus.chunks_share_documents:
        # max_citations_per_source counts documents: the source row holds each pair's
        # document instead
        facts = facts.copy()
        facts[FACT_SOURCE] = context.corpus.source_documents[facts[FACT_SOURCE]]
    batch = context.batch
    # values the passages hold in an equal form ("$1.5bn", "$1.5 billion") are covered
    cover_equal_values(
        covers, cover_offsets, judged_offsets, context.corpus, judged, batch, values,
        [
            (answers[queries.answer_of[first + q]], *queries.spans[first + q])
            for q in range(len(judged_offsets) - 1)
        ],
    )
    found = _BatchRecords(
        *records_batch(
            covers,
            cover_offsets,
            judged_offsets,
            choice.n_pool,
            choice.chosen_rows,
            choice.chosen_offsets,
            batch.offsets,
            batch.starts,
            batch.ends,
            weights,
            batch.content,
            values,
            facts,
            judged.embedding_flags,
            judged.aligned_content,
            context.rows.blocks,
            context.corpus.token_starts,
            context.corpus.token_ends,
            top_k,
            config.max_citations_per_source,
            config.multi_span_evidence,
            config.multi_span_merge_gap_chars,
            config.multi_span_max_spans,
        )
    )
    # the score components of every row (a row's list, read for the citations shown);
    # a scorer may have added components to the dict: then they are read by name
    rec_entries = np.repeat(judged_offsets[:-1], np.diff(found.rec_offsets)) + found.rec_rows
    rec_pairs = judged.pairs[rec_entries]
    if tuple(judged.component_names) == COMPONENT_NAMES:
        component_rows = context.component_matrix[:, rec_pairs].T.tolist()
    else:
        component_rows = np.column_stack(
            [context.components[name][rec_pairs] for name in judged.component_names]
        ).tolist()
    table = _RecordTable(
        found.rec_offsets.tolist(),
        found.rec_rows.tolist(),
        found.rec_flags.tolist(),
        found.rec_answer.tolist(),
        component_rows,
        found.coverage.tolist(),
        found.run_offsets.tolist(),
        list(map(tuple, found.runs.tolist())),
        found.span_offsets.tolist(),
        found.spans.tolist(),
        covers,
        cover_offsets.tolist(),
        weights,
        values.tolist(),
        facts[FACT_SOURCE, rec_entries].tolist(),
        top_k,
        config.max_citations_per_source,
    )
    judged_bounds = judged_offsets.tolist()
    out = []
    for q in range(len(judged_bounds) - 1):
        global_q = first + q
        answer = answers[queries.answer_of[global_q]]
        span_start, span_end = queries.spans[global_q]
        answer_span = _new_answer_span(
            text=answer[span_start:span_end],
            char_start=span_start,
            char_end=span_end,
            kind="sentence",
            paragraph_index=None,
            sentence_index=queries.sentence_index[global_q],
        )
        out.append(
            _span_citations(
                config, answer, answer_span, q, context, judged, judged_bounds[q],
                judged_bounds[q + 1] - judged_bounds[q], table,
            )
        )
    return out


def _span_citations(
    config: CitationConfig,
    answer: str,
    answer_span: AnswerSpan,
    q: int,
    context: AlignedBatch,
    judged: _JudgedFacts,
    judged_first: int,
    n_judged: int,
    table: _RecordTable,
) -> SpanCitations:
    """The citations and status of sentence ``q``, whose judged pairs are entries
    ``judged_first:judged_first + n_judged`` of ``judged``, from what
    :func:`batch_records` computed (``table``).

    The evidence set (a greedy cover of the sentence's content by the pool) and the
    shown citations are the table's rows of the sentence; a candidate that covers no
    content token of the sentence (an alignment of stop words, of "都です" in a
    Japanese sentence about a 都市) is no citation, unless it is embedding-only. A
    value that some evidence contradicts counts as covered only where conflict-free
    evidence states it too, and such an unresolved value rules out "supported".
    """
    corpus = context.corpus
    batch = context.batch
    lo, hi = int(batch.offsets[q]), int(batch.offsets[q + 1])
    n_tokens = hi - lo
    embedding_supported = False
    answer_cache: dict[int, Any] = {}  # what find_conflicts learns about them
    answer_values = table.values[lo:hi]
    answer_ids = batch.ids[lo:hi]
    answer_starts, answer_ends = batch.starts[lo:hi], batch.ends[lo:hi]
    citations: list[tuple[int, int, Citation]] = []  # (row, record, the citation), shown
    contradicted: list[tuple[int, list[Any]]] = []  # (row, its conflicts)
    # records not shown for content, with conflicts: they may be shown for them
    unshown: list[tuple[int, int, list[Any]]] = []  # (record, row, its conflicts)
    judged_rows = []  # (the rows the sentence is judged on: not the candidates)
    # a sign, a leading point or a scale word changes a value even where its tokens
    # match ("-40" against "40", "2.4 million" against "2.4 billion"): matched values
    # are compared when the sentence has values and it, or the evidence, has a sign,
    # a point or a scale word that may belong to one
    has_values = any(answer_values)
    # a sign, point or scale word in the sentence: its matched values are compared
    signed = has_values and (
        may_be_prefixed(answer, answer_span.char_start, answer_span.char_end)
        or may_be_scaled(answer, answer_span.char_start, answer_span.char_end)
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
            compare = bool(flags & RECORD_CHECK_VALUES) or (
                has_values
                and judged.aligned_content[entry] >= 2
                and (
                    signed
                    or may_be_prefixed(
                        source_text, judged.char_start[entry], judged.char_end[entry]
                    )
                )
            )
            if not compare and directed and judged.aligned_content[entry] >= 2:
                passage_bits = passage_directions(
                    corpus, judged.passage[entry], judged.token_lo[entry],
                    judged.token_hi[entry], source_text,
                )
                if passage_bits:
                    if directed < 0:
                        directed = directions_in(
                            answer, answer_span.char_start, answer_span.char_end
                        )
                    compare = opposed(directed, passage_bits)
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
        if not judged.embedding_only[entry]:
            polarity = _polarity_conflict(
                answer, answer_span, answer_starts, answer_ends, table.rec_answer[i],
                corpus, context, judged, entry, source_text,
                table.covers[table.cover_offsets[q] + row * n_tokens :][:n_tokens],
                batch.content[lo:hi],
            )
            if polarity is not None:
                conflicts = [*conflicts, polarity]
        if not flags & RECORD_CANDIDATE:
            judged_rows.append(row)
            if conflicts:
                contradicted.append((row, conflicts))
        if flags & RECORD_SHOWN:
            citations.append(
                (row, i, _record_citation(i, entry, conflicts, answer_span, corpus, judged, table))
            )
        elif conflicts:
            unshown.append((i, row, conflicts))
    if unshown:
        for i, row, conflicts in _shown_for_conflicts(
            unshown, [(i, citation.conflicts) for _, i, citation in citations], table
        ):
            entry = judged_first + row
            citations.append(
                (row, i, _record_citation(i, entry, conflicts, answer_span, corpus, judged, table))
            )
        citations.sort(key=lambda item: item[0])
    if contradicted:
        covers = table.covers[table.cover_offsets[q] :][: n_judged * n_tokens].reshape(
            n_judged, n_tokens
        )
        coverage, any_unresolved, unsupported = coverage_with_conflicts(
            covers,
            judged_rows,
            contradicted,
            answer_starts,
            answer_ends,
            batch.content[lo:hi],
            table.weights[lo:hi],
            embedding_supported,
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
    return _new_span_citations(  # type: ignore[no-any-return]
        answer_span=answer_span,
        citations=tuple(citation for _, _, citation in citations),
        status=status,
        unsupported_spans=tuple(unsupported),
        content_coverage=coverage if n_tokens else None,
    )


def conflict_key(conflict: Any) -> tuple[str, int, int]:
    """What a conflict contradicts: its kind and the answer characters it contradicts
    (a second source contradicting the same value of the sentence in the same way adds
    nothing new to show).

    Examples
    --------
    >>> from citekit.results import Conflict
    >>> conflict_key(Conflict("currency", "$2.4 billion", 20, 32, "$2.3 billion", 5, 17))
    ('currency', 20, 32)
    """
    return conflict.kind, conflict.answer_char_start, conflict.answer_char_end


def _shown_for_conflicts(
    unshown: list[tuple[int, int, list[Any]]],
    shown: list[tuple[int, Any]],
    table: _RecordTable,
) -> list[tuple[int, int, list[Any]]]:
    """The records of ``unshown`` (``(record, row, conflicts)``, ascending rows: records
    not shown for content, with conflicts) shown for their conflicts: in row order
    (score order), each carrying a conflict (:func:`conflict_key`) that the citations
    shown (``shown``: their records and conflicts) and those chosen before it do not,
    while the sentence has fewer than ``top_k`` citations and its source fewer than
    ``max_citations_per_source``."""
    carried = {conflict_key(c) for _, found in shown for c in found}
    per_source: dict[int, int] = {}
    for i, _ in shown:
        per_source[table.rec_source[i]] = per_source.get(table.rec_source[i], 0) + 1
    n_shown = len(shown)
    out = []
    for i, row, conflicts in unshown:
        if n_shown >= table.top_k:
            break
        keys = {conflict_key(c) for c in conflicts}
        if keys <= carried:
            continue
        source = table.rec_source[i]
        if per_source.get(source, 0) >= table.max_per_source:
            continue
        out.append((i, row, conflicts))
        carried |= keys
        per_source[source] = per_source.get(source, 0) + 1
        n_shown += 1
    return out


def _record_citation(
    i: int,
    entry: int,
    conflicts: list[Any],
    answer_span: AnswerSpan,
    corpus: Corpus,
    judged: _JudgedFacts,
    table: _RecordTable,
) -> Citation:
    """The citation of record ``i`` (judged entry ``entry``) with its ``conflicts``."""
    return _citation(
        entry,
        table.spans[table.span_offsets[i] : table.span_offsets[i + 1]],
        conflicts,
        table.components[i],
        table.rec_answer[i],
        answer_span,
        corpus,
        judged,
        corpus.source_text(judged.source_list[entry]),
    )


def _polarity_conflict(
    answer: str,
    answer_span: AnswerSpan,
    answer_starts: np.ndarray,
    answer_ends: np.ndarray,
    answer_range: list[int],
    corpus: Corpus,
    context: AlignedBatch,
    judged: _JudgedFacts,
    entry: int,
    source_text: str,
    covered: np.ndarray,
    content: np.ndarray,
) -> Any:
    """The negation conflict of judged entry ``entry`` (an aligned pair) with the
    sentence, or None (:func:`~citekit._citations.polarity.negation_conflict`: its
    matched blocks give the scopes' anchors on both sides). Only a pair covering at
    least ``NEGATED_CLAIM_SHARE`` of the sentence's content tokens (``covered``, its row
    of the covers) states the sentence's claim, negated or not: a negator beside a few
    shared words negates another claim."""
    base = judged.base[entry]
    passage_lo = judged.passage_char_start[entry] - base
    passage_hi = judged.passage_char_end[entry] - base
    if not (
        polarity_marks(answer[answer_span.char_start : answer_span.char_end])[1]
        or polarity_marks(source_text[passage_lo:passage_hi])[1]
    ):
        return None
    n_content = int(np.count_nonzero(content))
    if n_content and np.count_nonzero(covered & content) < NEGATED_CLAIM_SHARE * n_content:
        return None
    token_lo = judged.token_lo[entry]
    answer_ranges = []
    source_ranges = []
    for q_pos, t_pos, length in context.rows.blocks[
        judged.block_lo[entry] : judged.block_hi[entry]
    ].tolist():
        if length <= 0:
            continue
        answer_ranges.append(
            (int(answer_starts[q_pos]), int(answer_ends[q_pos + length - 1]))
        )
        source_ranges.append(
            (
                int(corpus.token_starts[token_lo + t_pos]),
                int(corpus.token_ends[token_lo + t_pos + length - 1]),
            )
        )
    if not answer_ranges:
        return None
    return negation_conflict(
        answer, answer_span.char_start, answer_span.char_end, answer_ranges,
        (answer_range[0], answer_range[1]), source_text, passage_lo, passage_hi,
        source_ranges, (judged.char_start[entry], judged.char_end[entry]),
        source_offset=base,
    )


def _citation(
    entry: int,
    spans: list[list[int]],
    conflicts: list[Any],
    component_values: list[float],
    answer_range: list[int],
    answer_span: AnswerSpan,
    corpus: Corpus,
    judged: _JudgedFacts,
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
        evidence_spans.append(
            _new_evidence_span(
                char_start=base + s, char_end=base + e, evidence=source_text[s:e]
            )
        )
        total += e - s
    components["num_evidence_spans"] = float(len(spans))
    components["evidence_chars_total"] = float(total)
    return _new_citation(  # type: ignore[no-any-return]
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


# -- the conflict prefilters (their single implementations move to the values and
# conflicts stages)
