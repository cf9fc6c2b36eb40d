"""Which tokens of its sentence each judged pair covers: those its alignment matched, and
those its passage, or the passage next to it in the same source, holds elsewhere or as a
light inflection (``grows``/``growing``, ``countries``/``country``, ``twelve``/``12``).

A single letter of a script tokenized letter by letter (Thai, kana, ...) is covered only
where such a passage holds a run of ``LETTER_RUN`` tokens of the sentence around it in a
row (a Han ideograph: ``IDEOGRAPH_RUN``). A value that some evidence contradicts is not
covered by that evidence (:func:`coverage_with_conflicts`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from citekit._citations.forms import SurfaceForms
from citekit._citations.polarity import NEGATION
from citekit._citations.queries import QueryBatch
from citekit._citations.values import _is_value, _value_facts_at, may_be_scaled
from citekit.corpus import Corpus
from citekit.kernels import PairAlignments
from citekit.kernels._coverage import (
    candidate_coverage,
    contested_coverage,
    cover_runs,
    near_passages,
)

__all__ = [
    "COVERAGE_NEIGHBOURS",
    "IDEOGRAPH_RUN",
    "LETTER_RUN",
    "cover_equal_values",
    "coverage_with_conflicts",
    "judged_covers",
]

# passages on each side of a cited one (same source) whose words also count as covered
COVERAGE_NEIGHBOURS = 1
# a letter of Thai, kana, ... is covered by a passage holding a run of this many tokens of
# the sentence around it in a row (a syllable or two: a run of three letters of a small
# alphabet seldom recurs by chance in a passage, while single letters always do)
LETTER_RUN = 3
# a Han ideograph, by a passage holding it next to the ideograph (or other token) beside it
# in the sentence: most words are two ideographs, and single common ones recur anywhere
IDEOGRAPH_RUN = 2


def judged_covers(
    corpus: Corpus,
    rows: PairAlignments,
    pairs: np.ndarray,
    judged_offsets: np.ndarray,
    pair_query: np.ndarray,
    pair_passage: np.ndarray,
    embedding_only: np.ndarray,
    batch: QueryBatch,
    columns: np.ndarray,
    folded: Sequence[str],
) -> tuple[np.ndarray, np.ndarray]:
    """Which sentence tokens each judged pair covers, for every sentence at once.

    A pair covers the tokens its alignment matched, and those its passage, or a
    neighbouring one of the same source (``COVERAGE_NEIGHBOURS``: a claim often
    continues across adjacent sentences), holds elsewhere (reordering) or as a light
    inflection (folded text ``folded[t]``, see :func:`~citekit._citations.content.fold_surface`),
    but not single letters of Thai, kana, ... (content tokens of ``batch`` that are not
    words, see :func:`~citekit._citations.content.letter_token_mask`: any passage in the script
    holds most of them, and an alignment matches two in a row by chance): those it
    covers inside a run of ``LETTER_RUN`` consecutive tokens of the sentence that such a
    passage holds in a row, and only there; likewise Han ideographs
    (``batch.ideographs``) in a run of ``IDEOGRAPH_RUN``. An embedding-only pair covers
    none.
    Sentence ``q``'s flags are ``covered[offsets[q]:offsets[q + 1]]``, one row of its tokens
    (``batch.offsets[q]:batch.offsets[q + 1]`` of ``columns`` and ``folded``) per pair
    of its judged pairs ``pairs[judged_offsets[q]:judged_offsets[q + 1]]``.
    """
    letters = batch.content & ~batch.words
    ideographs = batch.ideographs
    aligned = ~embedding_only[pairs]
    forms = SurfaceForms.of(corpus)
    passages = pair_passage[pairs[aligned]]
    if passages.size:
        # every word of the passages looked at needs its form (repeats are harmless
        # there; a mask over the corpus to drop them cost more)
        forms.learn(near_passages(passages, corpus.passage_source, COVERAGE_NEIGHBOURS))
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
        batch.offsets,
        columns,
        token_forms,
        COVERAGE_NEIGHBOURS,
        rows.block_offsets[pairs],
        rows.block_offsets[pairs + 1],
        rows.blocks,
    )
    for flags, run in ((letters, LETTER_RUN), (ideographs, IDEOGRAPH_RUN)):
        if flags.any():
            cover_runs(
                corpus.token_ids,
                corpus.passage_token_start,
                corpus.passage_token_end,
                corpus.passage_source,
                pair_passage[pairs],
                pair_query[pairs],
                aligned,
                batch.offsets,
                batch.ids,
                flags,
                COVERAGE_NEIGHBOURS,
                run,
                covered,
                row_offsets,
            )
    return covered, row_offsets[judged_offsets]


def _contested(
    covers: np.ndarray,
    rows: list[int],
    contradicted: list[tuple[int, list[Any]]],
    starts: np.ndarray,
    ends: np.ndarray,
    content: np.ndarray,
    weights: np.ndarray,
    embedding_supported: bool,
) -> tuple[float, bool, np.ndarray]:
    """:func:`~citekit.kernels._coverage.contested_coverage` of the conflicts
    ``contradicted`` (row, its conflicts) of the evidence ``rows``."""
    conflicts_of = dict(contradicted)
    offsets = [0]
    ranges = []
    for row in rows:
        for conflict in conflicts_of.get(row, ()):
            ranges.append((conflict.answer_char_start, conflict.answer_char_end))
        offsets.append(len(ranges))
    return contested_coverage(  # type: ignore[no-any-return]
        covers,
        np.array(rows, dtype=np.int64),
        np.array(offsets, dtype=np.int64),
        np.array(ranges, dtype=np.int64).reshape(-1, 2),
        starts,
        ends,
        content,
        weights,
        embedding_supported,
    )


def coverage_with_conflicts(
    covers: np.ndarray,
    rows: list[int],
    contradicted: list[tuple[int, list[Any]]],
    starts: np.ndarray,
    ends: np.ndarray,
    content: np.ndarray,
    weights: np.ndarray,
    embedding_supported: bool,
) -> tuple[float, bool, list[tuple[int, int]]]:
    """(coverage, whether a contradiction stays unresolved, uncovered runs) of a
    sentence (its tokens' ``starts``, ``ends``, ``content`` flags and coverage
    ``weights``) some of whose evidence contradicts it: ``covers`` has a row of the
    tokens each of its judged pairs covers, ``rows`` the rows of its evidence set and
    shown citations, and ``contradicted`` each such row that contradicts values or
    polarity, with its conflicts. The contradicted values are not covered by that
    evidence, and count as covered only where conflict-free evidence states them too.
    A negation conflict (kind ``"negation"``) leaves the coverage as it is (what is
    covered is still stated in the evidence) but stays unresolved unless evidence
    without a negation conflict covers the content of its answer text."""
    values = [(row, [c for c in found if c.kind != NEGATION]) for row, found in contradicted]
    coverage, unresolved, runs = _contested(
        covers, rows, values, starts, ends, content, weights, embedding_supported
    )
    negations = [(row, [c for c in found if c.kind == NEGATION]) for row, found in contradicted]
    if any(found for _, found in negations):
        unresolved = unresolved or _contested(
            covers, rows, negations, starts, ends, content, weights, embedding_supported
        )[1]
    return coverage, unresolved, list(map(tuple, runs.tolist()))


def _value_facts_of(text: str, start: int, end: int) -> tuple[str, str, int] | None:
    """``(key, class, end)`` of the value ``text[start:end]`` as conflicts compare it
    (:func:`~citekit._citations.values._value_facts_at`: its key with its scale), with
    the end of its scale word when one follows ("1.5 billion"); None for a range."""
    key, value_class, _, _, _, word_end, _ = _value_facts_at(text, start, end)
    if key is None:
        return None
    return key, value_class, end + word_end if word_end >= 0 else end


def _passage_values(
    corpus: Corpus, passage: int, token_lo: int, token_hi: int, source_text: str
) -> frozenset[tuple[str, str]]:
    """The ``(key, class)`` of every value of a passage (its tokens ``token_lo:token_hi``
    in ``source_text``), kept per passage in ``corpus.caches["passage_values"]``."""
    cache = corpus.caches.setdefault("passage_values", {})
    found = cache.get(passage)
    if found is None:
        starts = corpus.token_starts[token_lo:token_hi].tolist()
        ends = corpus.token_ends[token_lo:token_hi].tolist()
        facts = (
            _value_facts_of(source_text, start, end)
            for start, end in zip(starts, ends)
            if _is_value(source_text[start:end])
        )
        found = frozenset(fact[:2] for fact in facts if fact is not None)
        cache[passage] = found
    return found  # type: ignore[no-any-return]


def cover_equal_values(
    covers: np.ndarray,
    cover_offsets: np.ndarray,
    judged_offsets: np.ndarray,
    corpus: Corpus,
    judged: Any,
    batch: QueryBatch,
    values: np.ndarray,
    sentences: Sequence[tuple[str, int, int]],
) -> None:
    """Mark covered, in ``covers`` (in place; laid out as :func:`judged_covers` returns
    it), each value of a sentence that a judged pair's passage holds in an equal form,
    with its scale word: the values that :func:`~citekit._citations.conflicts.find_conflicts`
    finds equal (the same key with its scale and the same class: ``$1.5bn`` against
    ``$1.5 billion`` or ``$1,500 million``) are covered by the same rule.

    Sentence ``q`` of the batch is ``sentences[q]`` (the answer, the sentence's start
    and end in it); its judged pairs are entries ``judged_offsets[q]:judged_offsets[q +
    1]`` of ``judged`` (:class:`~citekit._citations.records._JudgedFacts`); ``values``
    flags the batch's value tokens. Only sentences that may state a scale
    (:func:`~citekit._citations.values.may_be_scaled`) hold values whose tokens differ
    from an equal value's: the others are not looked at.
    """
    offsets = batch.offsets.tolist()
    bounds = judged_offsets.tolist()
    for q, (answer, sentence_start, sentence_end) in enumerate(sentences):
        lo, hi = offsets[q], offsets[q + 1]
        n_tokens = hi - lo
        if not values[lo:hi].any() or not may_be_scaled(answer, sentence_start, sentence_end):
            continue
        starts = batch.starts[lo:hi].tolist()
        ends = batch.ends[lo:hi].tolist()
        sentence_values = {
            k: _value_facts_of(answer, starts[k], ends[k])
            for k in np.flatnonzero(values[lo:hi]).tolist()
        }
        rows = covers[cover_offsets[q] :][: (bounds[q + 1] - bounds[q]) * n_tokens].reshape(
            -1, n_tokens
        )
        for r in range(rows.shape[0]):
            entry = bounds[q] + r
            if judged.embedding_only[entry]:
                continue
            row = rows[r]
            missing = [k for k, fact in sentence_values.items() if fact and not row[k]]
            if not missing:
                continue
            held = _passage_values(
                corpus, judged.passage[entry], judged.token_lo[entry], judged.token_hi[entry],
                corpus.source_text(judged.source_list[entry]),
            )
            for k in missing:
                key, value_class, value_end = sentence_values[k]  # type: ignore[misc]
                if (key, value_class) in held:
                    row[k] = True
                    for j in range(k + 1, n_tokens):  # its scale word ("1.5 billion")
                        if starts[j] >= value_end:
                            break
                        row[j] = True
