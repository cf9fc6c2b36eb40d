"""The inflection lookup kernel (citekit._forms_kernel) against its reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit._forms_kernel import candidate_coverage, near_passages, rows_hold
from naive import naive_candidate_coverage, naive_near_passages, naive_rows_hold

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
    from citekit.pipeline import Pipeline, _SurfaceForms

    # (built as for sources given to align: Pipeline.prepare folds every word up front)
    corpus = Pipeline()._build(["Sales grows fast.", "Twelve-bar blues.", "Nothing here."])
    forms = _SurfaceForms.of(corpus)
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
