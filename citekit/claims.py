"""Claims: the units of an answer that fact verification checks one by one.

A :class:`Claim` is a piece of one answer span with its offsets in the answer
(``answer[claim.char_start:claim.char_end] == claim.text``). A *claim decomposer* is any
object with ``decompose(span) -> list[Claim]`` (:class:`ClaimDecomposer`);
:class:`SimpleClaimDecomposer` is the built-in one, which needs no parser:

- by default every answer span is one claim (the span unchanged), as in cite-right;
- with ``split_clauses=True`` a span is also split between coordinated clauses, at a
  semicolon (``;`` or ``；``) and at a comma (``,`` or ``，``) followed by a coordinating
  conjunction (``and``, ``but``, ``or``, ``nor``, ``yet``, ``so``, ``while``, ``whereas``,
  any case). The separator and the conjunction belong to neither claim, and each claim is
  trimmed of white space. A split is made only when the pieces on both sides have at least
  ``min_claim_tokens`` words (white-space separated), so "salt, and pepper" stays whole.

Claims of one span are in answer order and never overlap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from citekit._validation import check_bool, check_int
from citekit.results import AnswerSpan, _check_length, _check_range, _check_type, _Record

__all__ = ["Claim", "ClaimDecomposer", "SimpleClaimDecomposer", "claim_of_span"]

# a clause boundary: a semicolon, or a comma before a coordinating conjunction (the
# conjunction is part of the boundary: it joins the claims, it is said by neither)
_CLAUSE_BOUNDARY = re.compile(
    r"\s*[;；]\s*|\s*[,，]\s*(?:and|but|or|nor|yet|so|while|whereas)\s+",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Claim(_Record):
    """An atomic claim of an answer: ``answer[char_start:char_end] == text``.

    Attributes
    ----------
    text : str
        The claim's text, exactly as in the answer.
    char_start, char_end : int
        Half-open offsets of the claim in the original answer string.
    source_span : AnswerSpan
        The answer span (sentence) the claim was taken from; the claim lies inside it.
    claim_index : int, default 0
        Position of the claim among its span's claims.

    Examples
    --------
    >>> span = AnswerSpan(text="Revenue grew.", char_start=4, char_end=17)
    >>> claim = Claim("Revenue grew", 4, 16, span)
    >>> claim.text, claim.claim_index
    ('Revenue grew', 0)
    >>> Claim("Revenue", 0, 7, span)
    Traceback (most recent call last):
    ...
    ValueError: Claim (0, 7) lies outside its source_span (4, 17)
    """

    text: str
    char_start: int
    char_end: int
    source_span: AnswerSpan
    claim_index: int = 0

    def __post_init__(self) -> None:
        _check_type(self, "text", str)
        _check_range(self, "char_start", "char_end")
        _check_length(self, "char_start", "char_end", "text")
        if isinstance(self.source_span, dict):
            object.__setattr__(self, "source_span", AnswerSpan.from_dict(self.source_span))
        _check_type(self, "source_span", AnswerSpan)
        check_int(self.claim_index, "Claim.claim_index", minimum=0)
        span = self.source_span
        if self.char_start < span.char_start or self.char_end > span.char_end:
            raise ValueError(
                f"Claim ({self.char_start}, {self.char_end}) lies outside its source_span "
                f"({span.char_start}, {span.char_end})"
            )
        inner = self.char_start - span.char_start
        if span.text[inner:inner + len(self.text)] != self.text:
            raise ValueError("Claim.text differs from its source_span's text at its offsets")

    def model_dump(self) -> dict[str, Any]:
        """The claim as plain data (the same as :meth:`to_dict`; cite-right's name).

        Examples
        --------
        >>> span = AnswerSpan(text="Hi.", char_start=0, char_end=3)
        >>> Claim("Hi.", 0, 3, span).model_dump()["char_end"]
        3
        """
        return self.to_dict()


@runtime_checkable
class ClaimDecomposer(Protocol):
    """Anything with ``decompose(span) -> list[Claim]``.

    The claims of a span must lie inside it, be non-empty, in answer order and not
    overlap; a decomposer that finds nothing to split returns the span as one claim.
    """

    def decompose(self, span: AnswerSpan) -> list[Claim]: ...


def claim_of_span(span: AnswerSpan) -> Claim:
    """The whole ``span`` as one claim.

    Examples
    --------
    >>> claim_of_span(AnswerSpan(text="Hi.", char_start=5, char_end=8)).char_start
    5
    """
    return Claim(span.text, span.char_start, span.char_end, span, 0)


class SimpleClaimDecomposer:
    """Claims from answer spans by the rules of :mod:`citekit.claims`, without a parser.

    Parameters
    ----------
    split_clauses : bool, default False
        Also split a span between coordinated clauses (at ``;`` and at ``, and``,
        ``, but``, ...). By default every span is one claim, as in cite-right.
    min_claim_tokens : int, default 2
        A split is made only when both pieces have at least this many words.

    Examples
    --------
    >>> span = AnswerSpan(text="Revenue grew 15%, and profits doubled.", char_start=0,
    ...                   char_end=38)
    >>> [c.text for c in SimpleClaimDecomposer().decompose(span)]
    ['Revenue grew 15%, and profits doubled.']
    >>> claims = SimpleClaimDecomposer(split_clauses=True).decompose(span)
    >>> [(c.text, c.char_start, c.char_end) for c in claims]
    [('Revenue grew 15%', 0, 16), ('profits doubled.', 22, 38)]
    """

    def __init__(self, *, split_clauses: bool = False, min_claim_tokens: int = 2) -> None:
        self.split_clauses = check_bool(split_clauses, "split_clauses")
        self.min_claim_tokens = check_int(min_claim_tokens, "min_claim_tokens", minimum=1)

    def __repr__(self) -> str:
        return (
            f"SimpleClaimDecomposer(split_clauses={self.split_clauses}, "
            f"min_claim_tokens={self.min_claim_tokens})"
        )

    def decompose(self, span: AnswerSpan) -> list[Claim]:
        """The claims of ``span``, in order, with offsets in the answer.

        Parameters
        ----------
        span : AnswerSpan
            One span (sentence) of the answer.

        Returns
        -------
        list of Claim
            At least one claim when the span has any non-space character, else none.

        Raises
        ------
        TypeError
            If ``span`` is not an :class:`~citekit.results.AnswerSpan`.

        Examples
        --------
        >>> span = AnswerSpan(text="Sales rose; costs fell", char_start=10, char_end=32)
        >>> [c.char_start for c in SimpleClaimDecomposer(split_clauses=True).decompose(span)]
        [10, 22]
        """
        if not isinstance(span, AnswerSpan):
            raise TypeError(f"span must be an AnswerSpan, got {type(span).__name__}")
        pieces = _trimmed(span.text, 0, len(span.text))
        if not pieces:
            return []
        if not self.split_clauses:
            start, end = pieces[0]
            if (start, end) == (0, len(span.text)):
                return [claim_of_span(span)]
            return [self._claim(span, start, end, 0)]
        bounds = self._clause_bounds(span.text)
        return [self._claim(span, start, end, n) for n, (start, end) in enumerate(bounds)]

    def _clause_bounds(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of every clause in ``text``, each trimmed of white space."""
        bounds: list[tuple[int, int]] = []
        piece_start = 0
        for boundary in _CLAUSE_BOUNDARY.finditer(text):
            left = _trimmed(text, piece_start, boundary.start())
            right = _trimmed(text, boundary.end(), len(text))
            # both sides must be claims of their own, else the boundary joins words
            if (
                left
                and right
                and _words(text, *left[0]) >= self.min_claim_tokens
                and _words(text, right[0][0], len(text)) >= self.min_claim_tokens
            ):
                bounds.append(left[0])
                piece_start = boundary.end()
        bounds.extend(_trimmed(text, piece_start, len(text)))
        return bounds

    @staticmethod
    def _claim(span: AnswerSpan, start: int, end: int, index: int) -> Claim:
        return Claim(
            span.text[start:end], span.char_start + start, span.char_start + end, span, index
        )


def _trimmed(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``[(start, end)]`` of ``text[start:end]`` without its surrounding white space, or
    ``[]`` when nothing else is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return [(start, end)] if start < end else []


def _words(text: str, start: int, end: int) -> int:
    return len(text[start:end].split())
