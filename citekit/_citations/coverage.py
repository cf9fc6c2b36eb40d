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
from citekit._citations.queries import QueryBatch
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
    """(coverage, whether a contradicted value stays unresolved, uncovered runs) of a
    sentence (its tokens' ``starts``, ``ends``, ``content`` flags and coverage
    ``weights``) some of whose evidence contradicts values: ``covers`` has a row of the
    tokens each of its judged pairs covers, ``rows`` the rows of its evidence set and
    shown citations, and ``contradicted`` each such row that contradicts values, with its
    conflicts. The contradicted values are not covered by that evidence, and count as
    covered only where conflict-free evidence states them too."""
    conflicts_of = dict(contradicted)
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
        starts,
        ends,
        content,
        weights,
        embedding_supported,
    )
    return coverage, unresolved, list(map(tuple, runs.tolist()))
