"""Numba kernel behind the inflection lookup of the citation pipeline.

Whether a passage holds a sentence token is asked for thousands of (passage, token)
cells per call: the token itself (its index column) or any word of the passage that folds
to the same form (:func:`~citekit._content.fold_surface`: "grows" and "growing" both hold
"grow"), where a hyphenated word also holds the forms of its parts. One scan of the
passage's CSR row answers a cell; rows are a few dozen words.
"""

from __future__ import annotations

import numpy as np

from citekit._jit import jit

__all__ = ["rows_hold"]


@jit
def _rows_hold_kernel(
    row_pointers,
    row_columns,
    column_form,
    part_start,
    part_count,
    part_forms,
    passages,
    columns,
    forms,
    out,
):
    for cell in range(passages.shape[0]):
        passage = passages[cell]
        column = columns[cell]
        form = forms[cell]
        found = False
        for entry in range(row_pointers[passage], row_pointers[passage + 1]):
            word = row_columns[entry]
            if word == column or column_form[word] == form:
                found = True
                break
            first = part_start[word]
            for part in range(first, first + part_count[word]):
                if part_forms[part] == form:
                    found = True
                    break
            if found:
                break
        out[cell] = found


def rows_hold(
    row_pointers: np.ndarray,
    row_columns: np.ndarray,
    column_form: np.ndarray,
    part_start: np.ndarray,
    part_count: np.ndarray,
    part_forms: np.ndarray,
    passages: np.ndarray,
    columns: np.ndarray,
    forms: np.ndarray,
) -> np.ndarray:
    """``out[i]``: whether row ``passages[i]`` holds column ``columns[i]`` or a word of form
    ``forms[i]``.

    A word (column ``c``) has the form ``column_form[c]`` and, if it has parts, the forms
    ``part_forms[part_start[c]:part_start[c] + part_count[c]]``. Every column in the rows
    asked about must have its form set (no sentinel check is made). A negative
    ``columns[i]`` or ``forms[i]`` matches nothing of its kind.

    Parameters
    ----------
    row_pointers, row_columns : ndarray of int64
        The rows, CSR (passages x index columns).
    column_form, part_start, part_count : ndarray of int64
        Per column: its form number, and where its part forms are in ``part_forms``.
    part_forms : ndarray of int64
        Part form numbers of every column with parts.
    passages, columns, forms : ndarray of int64
        The cells, one entry each.

    Returns
    -------
    ndarray of bool

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> # passage 0 holds columns 0 ("grows": form 7) and 1 ("twelve-bar": form 8, parts 9, 10)
    >>> rows_hold(i64(0, 2), i64(0, 1), i64(7, 8), i64(0, 0), i64(0, 2), i64(9, 10),
    ...           i64(0, 0, 0, 0), i64(5, 0, 5, 5), i64(1, 1, 10, 3)).tolist()
    [False, True, True, False]
    """
    out = np.zeros(passages.shape[0], dtype=np.bool_)
    if passages.shape[0]:
        _rows_hold_kernel(
            row_pointers,
            row_columns,
            column_form,
            part_start,
            part_count,
            part_forms,
            np.ascontiguousarray(passages, dtype=np.int64),
            np.ascontiguousarray(columns, dtype=np.int64),
            np.ascontiguousarray(forms, dtype=np.int64),
            out,
        )
    return out
