"""The inflection lookup kernel (citekit._forms_kernel) against its reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit._forms_kernel import rows_hold
from naive import naive_rows_hold

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

    corpus = Pipeline().prepare(["Sales grows fast.", "Twelve-bar blues.", "Nothing here."])
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
