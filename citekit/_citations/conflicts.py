"""Which values of an answer sentence conflict with the evidence its alignment found.

Where the alignment leaves a value of the answer facing a DIFFERENT one in the evidence
(``grew 9%`` against ``grew 15%``), the pair is a :class:`~citekit.results.Conflict`; so is
a value matched token for token whose sign, leading point or scale differs (``-40`` /
``40``, ``$2.4 million`` / ``$2.4 billion``), or which one text describes as a rise and
the other as a fall (``rose 3%`` / ``fell 3%``). What a value reads as:
:mod:`citekit._citations.values`; rise and fall words: :mod:`citekit._citations.directions`;
the rules in full: :func:`find_conflicts` and the user guide's status rules
(docs/guide/status.rst).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from citekit._citations.directions import (
    _falls,
    _opposed_directions,
    _opposite_directions,
    _value_direction,
)
from citekit._citations.values import (
    _is_value,
    _value_facts_at,
    _value_prefix,
    _value_scale,
    value_key,
    value_mask,
)
from citekit.results import Conflict, _unchecked_builder

__all__ = ["find_conflicts"]

# a Conflict built past its checks (its fields are valid by construction)
_new_conflict = _unchecked_builder(Conflict)


def _contexts_agree(text: str, start: int, end: int, other_text: str, other_start: int,
                    other_end: int) -> bool:
    """Whether the text around two values of the same token adds the same to both: the
    same sign and leading point (:func:`_value_prefix`), the same scale unless one
    has none (:func:`_value_scale`: "$33.2" is not contradicted by "$33.2 million",
    whose scale it may leave to its context; "2.4 million" is by "2.4 billion"), and not
    a rise for one and a fall for the other (:func:`_opposite_directions`: "rose 3%"
    against "fell 3%")."""
    if _value_prefix(text, start, end)[0] != _value_prefix(other_text, other_start, other_end)[0]:
        return False
    scale = _value_scale(text, start, end)
    other_scale = _value_scale(other_text, other_start, other_end)
    if scale != other_scale and scale and other_scale:
        return False
    return not _opposite_directions(text, start, end, other_text, other_start, other_end)


def find_conflicts(
    answer_text: str,
    answer_ids: np.ndarray,
    answer_starts: np.ndarray,
    answer_ends: np.ndarray,
    source_text: str,
    source_ids: np.ndarray,
    source_starts: np.ndarray,
    source_ends: np.ndarray,
    blocks: Any,
    source_offset: int = 0,
    answer_values: Sequence[bool] | None = None,
    answer_cache: dict[int, Any] | None = None,
) -> list[Conflict]:
    """Values of the answer that face a different value at the aligned evidence position.

    Parameters
    ----------
    answer_text : str
        The whole answer (offsets in ``answer_starts``/``answer_ends`` index it).
    answer_ids, answer_starts, answer_ends : ndarray
        Tokens of the answer sentence that was aligned (the query).
    source_text : str
        The text the source tokens index (a chunk's own text).
    source_ids, source_starts, source_ends : ndarray
        Tokens of the passage that was aligned (the target).
    blocks : sequence of (query_pos, target_pos, length)
        Matched blocks of the alignment, positions relative to the two token arrays.
    source_offset : int
        Added to evidence offsets (a chunk's ``doc_char_start``).
    answer_values : sequence of bool, optional
        Which answer tokens are values (:func:`value_mask`), when the caller already knows
        (one sentence is checked against many passages).
    answer_cache : dict, optional
        Filled with what is learnt about the answer's values; pass the same dict for every
        passage a sentence is checked against (keys are positions in ``answer_ids``).

    Returns
    -------
    list of Conflict
        Between consecutive blocks, and one token beyond the first and last block, the
        i-th value token of the answer side is paired with the i-th value token of the
        evidence side; a pair is a conflict when both values are of the same class
        (:func:`value_class`), neither is a range, and they differ by :func:`value_key`
        with their signs, leading points and scales (:func:`_value_prefix`,
        :func:`_scaled_key`: ``-40`` is not ``40``, ``.5`` is ``0.5``, ``2.4 million``
        is ``2400000``), unless they differ only by the sign and either is described
        as a fall (``fell 3%``, ``fell by 3%``, ``a decline of 3%``: it states
        ``-3%``), and equal keys are not the same value when one is described as a rise
        and the other as a fall (``rose 3%``, ``up 3%``, ``an increase of 3%`` against
        ``fell 3%``: the last word before the value, past "by", "of" and their German,
        French, Spanish and Russian counterparts, in those languages too; ``rose to 3%``
        and ``fell to 3%``, the levels a rise and a fall ended at, are not the same
        value either (nor ``rose from 7% to 5%`` and ``fell from 7% to 5%``), but neither
        is compared with a change; else the first word after it, past a percent sign and
        up to three unit or scale words: ``a 3% increase``, ``3 percent lower``). Then,
        inside the blocks, a value token matched with one of equal :func:`value_key` is a
        conflict when their signs or leading points differ, both have scale words that
        differ (``2.4 million``, ``2.4 billion``), or one is a rise and the other a fall,
        on the same terms. A conflict's texts hold the sign, the point, a currency sign
        and a percent sign of its values, their scale words when both values state a
        scale (by a word or in the number: ``2.4bn``), and the words before or after them
        when those say a rise and a fall (``rose 3%`` against ``fell 3%``, ``3% higher``
        against ``3% lower``).

    Examples
    --------
    >>> import numpy as np
    >>> ans, src = "Sales grew 9% in 2020.", "Sales grew 15% in 2020."
    >>> a = [np.array(v) for v in ([1, 2, 9, 5, 6, 7], [0, 6, 11, 12, 14, 17],
    ...                             [5, 10, 12, 13, 16, 21])]
    >>> s = [np.array(v) for v in ([1, 2, 15, 5, 6, 7], [0, 6, 11, 13, 15, 18],
    ...                             [5, 10, 13, 14, 17, 22])]
    >>> found = find_conflicts(ans, *a, src, *s, [(0, 0, 2), (3, 3, 3)])
    >>> [(c.kind, c.answer_text, c.evidence_text) for c in found]
    [('percent', '9%', '15%')]

    A sign is part of the value even where the tokens match:

    >>> ids, spans = np.array([1, 40]), (np.array([0, 8]), np.array([7, 10]))
    >>> found = find_conflicts("fell to 40", ids, *spans, "fell to -40", ids,
    ...                        np.array([0, 9]), np.array([7, 11]), [(0, 0, 2)])
    >>> [(c.answer_text, c.evidence_text) for c in found]
    [('40', '-40')]

    So is a rise against a fall:

    >>> ids, spans = np.array([1, 3, 4]), (np.array([0, 5, 6]), np.array([4, 6, 7]))
    >>> found = find_conflicts("rose 3%", ids, *spans, "fell 3%", ids, *spans, [(1, 1, 2)])
    >>> [(c.answer_text, c.evidence_text) for c in found]
    [('rose 3%', 'fell 3%')]
    """
    rows = np.asarray(blocks, dtype=np.int64).tolist()
    if answer_values is None:
        if not any(length > 0 for _, _, length in rows):
            return []
        answer_values = value_mask(answer_text, answer_starts, answer_ends).tolist()
    # the gaps between blocks (of positive length), and one token before the first block
    # and after the last, as (query_lo, query_hi, target_lo, target_hi); only those holding
    # a value of the answer: most alignments have none, and there is nothing else to look at
    regions: list[tuple[int, int, int, int]] = []
    q_lo = t_lo = -1
    first = True
    for q_hi, t_hi, length in rows:
        if length <= 0:
            continue
        if first:
            q_lo, t_lo, first = max(0, q_hi - 1), max(0, t_hi - 1), False
        if q_lo < q_hi and t_lo < t_hi and any(answer_values[q_lo:q_hi]):
            regions.append((q_lo, q_hi, t_lo, t_hi))
        q_lo, t_lo = q_hi + length, t_hi + length
    if first:
        return []
    if q_lo < answer_ids.shape[0] and t_lo < source_ids.shape[0]:
        if any(answer_values[q_lo : q_lo + 1]):
            regions.append((q_lo, q_lo + 1, t_lo, t_lo + 1))
    conflicts: list[Conflict] = []
    seen: set[tuple[int, int]] = set()
    for q_lo, q_hi, t_lo, t_hi in regions:
        region_values = [i for i in range(q_lo, q_hi) if answer_values[i]]
        # Python ints once (indexing numpy arrays per token is slow)
        starts = np.asarray(source_starts[t_lo:t_hi]).tolist()
        ends = np.asarray(source_ends[t_lo:t_hi]).tolist()
        # the i-th value of the answer faces the i-th value of the evidence: the evidence's
        # tokens are read up to its last value that faces one
        k, n_tokens = 0, min(len(starts), len(ends))
        for i in region_values:
            while k < n_tokens and not _is_value(source_text[starts[k] : ends[k]]):
                k += 1
            if k == n_tokens:
                break
            j, k = t_lo + k, k + 1
            if (i, j) in seen:
                continue
            if answer_ids[i] == source_ids[j] and _contexts_agree(
                answer_text, int(answer_starts[i]), int(answer_ends[i]),
                source_text, int(starts[k - 1]), int(ends[k - 1]),
            ):
                continue
            conflict = _facing_conflict(
                answer_text, answer_starts, answer_ends, i, answer_cache,
                source_text, int(starts[k - 1]), int(ends[k - 1]), source_offset,
            )
            if conflict is not None:
                seen.add((i, j))
                conflicts.append(conflict)
    # matched values (the same token) whose signs, leading points or scales differ: "-40"
    # and "40", "2.4 million" and "2.4 billion"
    for q_hi, t_hi, length in rows:
        if length <= 0 or not any(answer_values[q_hi : q_hi + length]):
            continue
        for i in range(q_hi, q_hi + length):
            j = t_hi + i - q_hi
            if not answer_values[i] or (i, j) in seen:
                continue
            a_start, a_end = int(answer_starts[i]), int(answer_ends[i])
            source_start, source_end = int(source_starts[j]), int(source_ends[j])
            if (
                _contexts_agree(
                    answer_text, a_start, a_end, source_text, source_start, source_end
                )
                or value_key(answer_text[a_start:a_end])
                != value_key(source_text[source_start:source_end])
            ):
                continue
            conflict = _facing_conflict(
                answer_text, answer_starts, answer_ends, i, answer_cache,
                source_text, source_start, source_end, source_offset,
            )
            if conflict is not None:
                seen.add((i, j))
                conflicts.append(conflict)
    return conflicts


def _facing_conflict(
    answer_text: str,
    answer_starts: np.ndarray,
    answer_ends: np.ndarray,
    i: int,
    answer_cache: dict[int, Any] | None,
    source_text: str,
    source_start: int,
    source_end: int,
    source_offset: int,
) -> Conflict | None:
    """The conflict of answer token ``i``'s value with the source's value
    ``source_text[source_start:source_end]``, or None: when either is part of a range
    ("2018-2019", "80 to 85" are not one value to contradict), they are of other classes,
    or they state the same value (see :func:`find_conflicts`)."""
    key, answer_class, a_start, a_end, kind, a_word_end, a_attached = _answer_value(
        answer_text, answer_starts, answer_ends, i, answer_cache
    )
    if key is None:
        return None
    source_key, source_class, widen_left, widen_right, _, s_word, s_attached = _value_facts_at(
        source_text, source_start, source_end
    )
    if source_key is None or answer_class != source_class:
        return None
    s_start, s_end = source_start - widen_left, source_end + widen_right
    # the same value: equal keys, unless one is said to rise and the other to fall
    # ("rose 3%", "fell 3%"; or to have risen and fallen to it: "rose to 3%", "fell to
    # 3%"), or keys differing only by a sign where either is said to fall ("fell 3%", "-3%")
    a_direction, a_said_start, a_said_end = _value_direction(answer_text, a_start, a_end)
    s_direction, s_said_start, s_said_end = (
        _value_direction(source_text, s_start, s_end) if a_direction else (0, s_start, s_end)
    )
    opposed = _opposed_directions(a_direction, s_direction)
    if key == source_key:
        if not opposed:
            return None
    elif key.removeprefix("-") == source_key.removeprefix("-"):
        source_falls = (
            s_direction == -1 if a_direction else _falls(source_text, s_start, s_end)
        )
        if a_direction == -1 or source_falls:
            return None
    if opposed:
        # one value said to rise, the other to fall: the spans take the words that say so
        # ("rose 3%" against "fell 3%", "3% higher" against "3% lower", "rose to 3%"
        # against "fell to 3%")
        a_start, a_end, s_start, s_end = a_said_start, a_said_end, s_said_start, s_said_end
    # both values state a scale, by a word or in the number ("2.4 million" against "2.4
    # billion" or "2.4bn"): the spans take their scale words
    if (a_word_end >= 0 or a_attached) and (s_word >= 0 or s_attached):
        a_end = max(a_end, a_word_end)
        if s_word >= 0:
            s_end = max(s_end, source_end + s_word)
    return conflict_between(
        kind, answer_text, a_start, a_end, source_text, s_start, s_end, source_offset
    )


def _answer_value(
    answer_text: str,
    answer_starts: np.ndarray,
    answer_ends: np.ndarray,
    i: int,
    answer_cache: dict[int, Any] | None,
) -> tuple[str | None, str, int, int, str, int, bool]:
    """``(key, class, start, end, kind, scale_word_end, attached_scale)`` of answer token
    ``i`` as :func:`find_conflicts` compares it (:func:`_value_facts_at`, its span
    widened; the end of the scale word after it in ``answer_text``, -1 when none), from
    ``answer_cache`` when it holds it (and kept there)."""
    answer = None if answer_cache is None else answer_cache.get(i)
    if answer is None:
        a_start, a_end = int(answer_starts[i]), int(answer_ends[i])
        key, answer_class, widen_left, widen_right, kind, word, attached = _value_facts_at(
            answer_text, a_start, a_end
        )
        answer = (
            key, answer_class, a_start - widen_left, a_end + widen_right, kind,
            -1 if word < 0 else a_end + word, attached,
        )
        if answer_cache is not None:
            answer_cache[i] = answer
    return answer


def conflict_between(
    kind: str,
    answer_text: str,
    a_start: int,
    a_end: int,
    source_text: str,
    s_start: int,
    s_end: int,
    source_offset: int,
) -> Conflict:
    """The :class:`~citekit.results.Conflict` of two spans (Python ints, ordered): the
    answer's ``[a_start, a_end)``, the source text's ``[s_start, s_end)`` (reported with
    ``source_offset`` added); the one builder of conflicts of every kind."""
    # every field is a str or a Python int, the range is ordered: built without the checks
    return _new_conflict(
        kind=kind,
        answer_text=answer_text[a_start:a_end],
        answer_char_start=a_start,
        answer_char_end=a_end,
        evidence_text=source_text[s_start:s_end],
        evidence_char_start=s_start + source_offset,
        evidence_char_end=s_end + source_offset,
    )
