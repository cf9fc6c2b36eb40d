"""Small argument checks shared by every public function.

Errors name the offending argument so that a user reading a traceback knows which
value to fix.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = [
    "check_str", "check_int", "check_float", "check_bool", "check_spans", "check_text_spans",
]


def check_str(value: Any, name: str) -> str:
    """Return ``value`` if it is a ``str``; raise ``TypeError`` naming ``name`` otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def check_bool(value: Any, name: str) -> bool:
    """Return ``value`` if it is a ``bool``; raise ``TypeError`` naming ``name`` otherwise."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return value


def check_int(
    value: Any,
    name: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    allow_none: bool = False,
) -> int | None:
    """Validate an integer argument (``bool`` is rejected) and its range."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_float(
    value: Any,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    allow_none: bool = False,
) -> float | None:
    """Validate a real-number argument (``bool`` is rejected), finite, within a range."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be finite, got {value}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_spans(
    starts: np.ndarray,
    ends: np.ndarray,
    name: str,
    *,
    n_chars: int | None = None,
    empty: str = "keep",
    item: str = "span",
    returned: bool = False,
) -> None:
    """Check half-open spans ``[starts[i], ends[i])``: not reversed, within
    ``[0, n_chars]``, ordered and non-overlapping (each starts at or after the end of
    the one before it).

    The one check of the ordered, non-overlapping spans that the stages exchange (a
    tokenizer's tokens, a segmenter's sentences, the spans passed to the passage windows).
    Vectorized; the message names ``name`` and the first bad span (its index and offsets).

    Parameters
    ----------
    starts, ends : numpy.ndarray
        Integer arrays of one length.
    name : str
        The argument (or the stage) the spans come from.
    n_chars : int, optional
        The length of the text: spans must end at or before it (default: no upper bound).
    empty : {"keep", "reject", "skip"}, default "keep"
        An empty span (``start == end``) is a span like any other ("keep"), an error
        ("reject"), or left out of the bounds and order checks ("skip": the caller drops
        it).
    item : str, default "span"
        What one span is, in the message ("token", "sentence").
    returned : bool, default False
        Word the message as ``"{name} returned ..."`` (spans a stage returned) instead
        of ``"{name} has ..."`` (an argument).

    Raises
    ------
    ValueError
        At the first bad span: reversed, out of bounds, empty (with ``empty="reject"``)
        or starting before the end of the span before it (checked in that order).

    Examples
    --------
    >>> check_spans(np.array([0, 4, 4]), np.array([3, 4, 9]), "sentence_spans")
    >>> check_spans(np.array([0, 2]), np.array([3, 5]), "tokenizer", item="token",
    ...             returned=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: tokenizer returned unordered or overlapping spans for tokens 0 and 1: (0, 3) ...
    >>> check_spans(np.array([0, 4]), np.array([3, 2]), "sentence_spans", item="sentence")
    Traceback (most recent call last):
    ...
    ValueError: sentence_spans has a reversed span (4, 2) for sentence 1
    >>> check_spans(np.array([0, 9]), np.array([5, 9]), "segmenter", n_chars=6, empty="skip")
    """
    if empty not in ("keep", "reject", "skip"):
        raise ValueError(f"empty must be 'keep', 'reject' or 'skip', got {empty!r}")
    if starts.shape[0] == 0:
        return
    positions = None  # where the checked spans are among all (None: all of them)
    if empty == "skip":
        nonempty = ends != starts
        if not nonempty.all():
            positions = np.flatnonzero(nonempty)
            starts, ends = starts[positions], ends[positions]
            if starts.shape[0] == 0:
                return
    bad = starts < 0
    if n_chars is not None:
        bad |= ends > n_chars
    bad |= (ends <= starts) if empty == "reject" else (ends < starts)
    bad[1:] |= starts[1:] < ends[:-1]
    if not bad.any():
        return
    first = int(np.argmax(bad))
    index = first if positions is None else int(positions[first])
    start, end = int(starts[first]), int(ends[first])
    where = f"for {item} {index}"
    subject = f"{name} returned" if returned else f"{name} has"
    if end < start:
        message = f"a reversed span ({start}, {end}) {where}"
    elif start < 0 or (n_chars is not None and end > n_chars):
        bounds = f"outside [0, {n_chars}]" if n_chars is not None else "starting before 0"
        message = f"a span {bounds}: ({start}, {end}) {where}"
    elif start == end and empty == "reject":
        message = f"an empty span ({start}, {end}) {where}"
    else:
        previous = first - 1 if positions is None else int(positions[first - 1])
        message = (
            f"unordered or overlapping spans for {item}s {previous} and {index}: "
            f"({int(starts[first - 1])}, {int(ends[first - 1])}) then ({start}, {end})"
        )
    raise ValueError(f"{subject} {message}")


def check_text_spans(
    starts: np.ndarray,
    ends: np.ndarray,
    offsets: np.ndarray,
    texts: Any,
    where: str,
    *,
    empty: str,
    item: str,
) -> None:
    """Check the spans a stage returned for many texts at once: text ``t`` owns spans
    ``offsets[t]:offsets[t + 1]`` (offsets: ``len(texts) + 1`` non-decreasing numbers from
    0 to the number of spans), each text's spans checked by :func:`check_spans` against
    its length (``empty`` and ``item`` as there), errors naming ``where`` and the text.

    Examples
    --------
    >>> import numpy as np
    >>> i64 = lambda *v: np.array(v, dtype=np.int64)
    >>> check_text_spans(i64(0, 0), i64(2, 3), i64(0, 1, 2), ["ab", "cde"], "t.f",
    ...                  empty="reject", item="token")
    >>> check_text_spans(i64(0), i64(2), i64(0, 2), ["ab"], "t.f", empty="reject", item="token")
    Traceback (most recent call last):
    ...
    ValueError: t.f returned offsets that are not 2 non-decreasing numbers from 0 to 1
    """
    n_items = starts.shape[0]
    if (
        offsets.shape != (len(texts) + 1,)
        or offsets[0] != 0
        or offsets[-1] != n_items
        or np.any(offsets[1:] < offsets[:-1])
    ):
        raise ValueError(
            f"{where} returned offsets that are not {len(texts) + 1} non-decreasing "
            f"numbers from 0 to {n_items}"
        )
    bounds = offsets.tolist()
    for number, text in enumerate(texts):
        lo, hi = bounds[number], bounds[number + 1]
        check_spans(
            starts[lo:hi], ends[lo:hi], f"{where}(texts[{number}])", n_chars=len(text),
            empty=empty, item=item, returned=True,
        )
