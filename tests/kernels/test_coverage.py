"""The inflection lookup kernel (citekit.kernels._coverage) against its reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.kernels._coverage import candidate_coverage, cover_runs, near_passages, rows_hold
from naive import (
    naive_candidate_coverage,
    naive_cover_runs,
    naive_near_passages,
    naive_rows_hold,
)

i64 = lambda values: np.array(values, dtype=np.int64)  # noqa: E731


@st.composite
def lookups(draw):
    n_columns = draw(st.integers(1, 12))
    n_forms = draw(st.integers(1, 8))
    rows = draw(
        st.lists(
            st.lists(st.integers(0, n_columns - 1), unique=True, max_size=8).map(sorted),
            min_size=1,
            max_size=6,
        )
    )
    column_form = draw(
        st.lists(st.integers(0, n_forms - 1), min_size=n_columns, max_size=n_columns)
    )
    parts = draw(
        st.lists(
            st.lists(st.integers(0, n_forms - 1), max_size=3),
            min_size=n_columns,
            max_size=n_columns,
        )
    )
    cells = draw(
        st.lists(
            st.tuples(
                st.integers(0, len(rows) - 1),
                st.integers(-1, n_columns - 1),
                st.integers(-1, n_forms - 1),
            ),
            max_size=30,
        )
    )
    return rows, column_form, parts, cells


@settings(max_examples=200, deadline=None)
@given(lookups())
def test_rows_hold_matches_reference(case):
    rows, column_form, parts, cells = case
    pointers = i64([0] + list(np.cumsum([len(row) for row in rows])))
    columns = i64([c for row in rows for c in row])
    counts = i64([len(p) for p in parts])
    starts = np.cumsum(counts) - counts
    part_forms = i64([f for p in parts for f in p])
    passages, cell_columns, cell_forms = (i64([cell[i] for cell in cells]) for i in range(3))
    got = rows_hold(
        pointers, columns, i64(column_form), starts, counts, part_forms,
        passages, cell_columns, cell_forms,
    )
    word_forms = [{column_form[c], *parts[c]} for c in range(len(column_form))]
    assert got.tolist() == naive_rows_hold(rows, word_forms, cells)


def test_rows_hold_edge_cases():
    none = i64([])
    words = (i64([0, 0]), none, i64([3]), i64([0]), i64([0]), none)  # one empty row
    assert rows_hold(*words, none, none, none).shape == (0,)  # no cells
    # an empty row holds nothing, whatever is asked
    got = rows_hold(*words, i64([0, 0]), i64([0, -1]), i64([3, -1]))
    assert got.tolist() == [False, False]


def test_surface_forms_learn_only_the_passages_asked_about():
    from citekit._citations.forms import SurfaceForms
    from citekit.pipeline import Pipeline

    # (built as for sources given to align: Pipeline.prepare folds every word up front)
    corpus = Pipeline()._build(["Sales grows fast.", "Twelve-bar blues.", "Nothing here."])
    forms = SurfaceForms.of(corpus)
    grow = forms.form("grow")
    assert forms.held(i64([0, 2]), i64([grow, grow])).tolist() == [True, False]
    assert forms.known.tolist() == [True, False, True]
    # a hyphenated word holds its parts' forms ("twelve" folds to the number 12)
    assert forms.held(i64([1]), i64([forms.form("bar")])).tolist() == [True]
    assert forms.held(i64([1]), i64([forms.form("12")])).tolist() == [True]
    # the column itself counts even when asked with a form nobody has
    column = int(corpus.index.columns_of(corpus.token_ids[:1])[0])
    unknown = i64([forms.form("no-such-form")])
    assert forms.held(i64([0]), unknown, columns=i64([column])).tolist() == [True]
    with pytest.raises(IndexError):
        forms.held(i64([7]), i64([grow]))


@st.composite
def coverage_cases(draw):
    rows, column_form, parts, _ = draw(lookups())
    n_columns, n_forms = len(column_form), max(column_form + [f for p in parts for f in p]) + 1
    n_rows = len(rows)
    passage_source = sorted(
        draw(st.lists(st.integers(0, 2), min_size=n_rows, max_size=n_rows))
    )
    sentences = draw(
        st.lists(
            st.lists(
                st.tuples(st.integers(-1, n_columns - 1), st.integers(0, n_forms)), max_size=7
            ),
            min_size=1,
            max_size=3,
        )
    )
    block = st.tuples(st.integers(-2, 8), st.integers(0, 5), st.integers(0, 4))
    pairs = draw(
        st.lists(
            st.tuples(
                st.integers(0, len(rows) - 1),
                st.integers(0, len(sentences) - 1),
                st.booleans(),
                st.lists(block, max_size=3),
            ),
            max_size=8,
        )
    )
    # pairs of a sentence mostly together, as the pipeline passes them (not required)
    if draw(st.booleans()):
        pairs.sort(key=lambda pair: pair[1])
    neighbours = draw(st.integers(0, 2))
    return rows, column_form, parts, passage_source, sentences, pairs, neighbours


@settings(max_examples=300, deadline=None)
@given(coverage_cases())
def test_candidate_coverage_matches_reference(case):
    rows, column_form, parts, passage_source, sentences, pairs, neighbours = case
    pointers = i64([0] + list(np.cumsum([len(row) for row in rows])))
    columns = i64([c for row in rows for c in row])
    counts = i64([len(p) for p in parts])
    starts = np.cumsum(counts) - counts
    part_forms = i64([f for p in parts for f in p])
    query_offsets = i64([0] + list(np.cumsum([len(s) for s in sentences])))
    token_columns = i64([c for s in sentences for c, _ in s])
    token_forms = i64([f for s in sentences for _, f in s])
    block_counts = [len(pair[3]) for pair in pairs]
    block_ends = i64(np.cumsum(block_counts, dtype=np.int64))
    blocks = i64([b for pair in pairs for b in pair[3]]).reshape(-1, 3)
    covered, offsets = candidate_coverage(
        pointers, columns, i64(column_form), starts, counts, part_forms, i64(passage_source),
        i64([p[0] for p in pairs]), i64([p[1] for p in pairs]),
        np.array([p[2] for p in pairs], dtype=bool), query_offsets, token_columns, token_forms,
        neighbours, block_ends - i64(block_counts), block_ends, blocks,
    )
    word_forms = [{column_form[c], *parts[c]} for c in range(len(column_form))]
    expected = naive_candidate_coverage(
        rows, word_forms, passage_source, pairs, sentences, neighbours
    )
    got = [covered[lo:hi].tolist() for lo, hi in zip(offsets[:-1], offsets[1:])]
    assert got == expected


def test_candidate_coverage_edge_cases():
    none = i64([])
    words = (i64([0, 1]), i64([0]), i64([3]), i64([0]), i64([0]), none, i64([0]))
    blocks = np.zeros((0, 3), dtype=np.int64)
    # no pairs
    covered, offsets = candidate_coverage(
        *words, none, none, np.zeros(0, bool), i64([0, 2]), i64([0, -1]), i64([3, 4]), 1,
        none, none, blocks,
    )
    assert covered.shape == (0,) and offsets.tolist() == [0]
    # an empty sentence; an embedding-only pair covers nothing even with blocks
    covered, offsets = candidate_coverage(
        *words, i64([0, 0]), i64([0, 1]), np.array([True, False]), i64([0, 0, 2]),
        i64([0, -1]), i64([3, 4]), 1, i64([0, 0]), i64([0, 1]), i64([[0, 0, 2]]),
    )
    assert offsets.tolist() == [0, 0, 2] and covered.tolist() == [False, False]


@settings(max_examples=100, deadline=None)
@given(
    sources=st.lists(st.integers(0, 3), max_size=20),
    data=st.data(),
    neighbours=st.integers(0, 3),
)
def test_near_passages_equal_the_reference(sources, data, neighbours):
    passage_source = np.sort(np.array(sources, dtype=np.int64))  # a source's passages in a run
    passages = data.draw(st.lists(st.integers(0, max(len(sources) - 1, 0)), max_size=8))
    if not sources:
        passages = []
    found = near_passages(np.array(passages, dtype=np.int64), passage_source, neighbours)
    assert found.dtype == np.int64
    assert sorted(found.tolist()) == naive_near_passages(passages, passage_source.tolist(),
                                                         neighbours)


# -- runs of letters held in a row ----------------------------------------------------------


@st.composite
def _run_cases(draw):
    # few distinct ids, so that runs recur
    n_passages = draw(st.integers(1, 5))
    passages = [draw(st.lists(st.integers(0, 3), max_size=8)) for _ in range(n_passages)]
    passage_source = sorted(draw(st.lists(st.integers(0, 2), min_size=n_passages,
                                          max_size=n_passages)))
    sentences = [
        draw(st.lists(st.tuples(st.integers(0, 4), st.booleans()), max_size=7))
        for _ in range(draw(st.integers(1, 3)))
    ]
    pairs = sorted(
        draw(st.lists(st.tuples(st.integers(0, n_passages - 1),
                                st.integers(0, len(sentences) - 1), st.booleans()),
                      max_size=6)),
        key=lambda pair: pair[1],
    )
    covered = [[draw(st.booleans()) for _ in sentences[q]] for _, q, _ in pairs]
    return (passages, passage_source, pairs, sentences, draw(st.integers(0, 2)),
            draw(st.integers(1, 3)), covered)


def _run_arrays(passages, passage_source, pairs, sentences, covered):
    i64 = lambda v: np.array(v, dtype=np.int64)  # noqa: E731
    lengths = [len(p) for p in passages]
    token_start = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if passages else i64([])
    query_offsets = np.concatenate([[0], np.cumsum([len(t) for t in sentences])])
    row_offsets = np.concatenate([[0], np.cumsum([len(f) for f in covered])])
    return (
        i64([t for p in passages for t in p]),
        i64(token_start),
        i64(token_start) + i64(lengths),
        i64(passage_source),
        i64([p for p, _, _ in pairs]),
        i64([q for _, q, _ in pairs]),
        np.array([a for _, _, a in pairs], dtype=bool),
        i64(query_offsets),
        i64([t for s in sentences for t, _ in s]),
        np.array([f for s in sentences for _, f in s], dtype=bool),
    ), np.array([f for flags in covered for f in flags], dtype=bool), i64(row_offsets)


@given(_run_cases())
def test_cover_runs_matches_reference(case):
    passages, passage_source, pairs, sentences, neighbours, run, covered = case
    arrays, flags, row_offsets = _run_arrays(passages, passage_source, pairs, sentences,
                                             covered)
    cover_runs(*arrays, neighbours, run, flags, row_offsets)
    expected = naive_cover_runs(passages, passage_source, pairs, sentences, neighbours, run,
                                covered)
    assert flags.tolist() == [f for row in expected for f in row]


def test_cover_runs_edge_cases():
    # no pairs; a sentence shorter than the run; a passage shorter than the run; a run
    # found only in a neighbour of another source (not read)
    case = ([[1, 2], [1, 2, 3]], [0, 1], [(0, 0, True), (0, 1, True)],
            [[(1, True), (2, True), (3, True)], [(1, True)]], 1, 3,
            [[False] * 3, [False]])
    arrays, flags, row_offsets = _run_arrays(*case[:4], case[6])
    cover_runs(*arrays, 1, 3, flags, row_offsets)
    assert flags.tolist() == [False, False, False, False]
    empty = np.zeros(0, dtype=np.int64)
    flags = np.zeros(0, dtype=bool)
    cover_runs(empty, empty, empty, empty, empty, empty, np.zeros(0, dtype=bool),
               np.zeros(1, dtype=np.int64), empty, flags, 1, 3, flags,
               np.zeros(1, dtype=np.int64))
    assert flags.shape == (0,)
