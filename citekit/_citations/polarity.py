"""Whether an answer sentence and its evidence agree on negation: the polarity conflicts.

"Revenue grew in 2024." against "Revenue did not grow in 2024." aligns ``in 2024`` and
covers most of the sentence, yet the source says the opposite. A *negator* (``not``,
``n't``, ``no``, ``never``, ``without``, ``failed to``, and English words that say "not"
in one word: ``unable``, ``unlikely``, ``lack``, ``absence``, ``refused``, ``denied``,
``banned``, ...; German ``nicht``, ``kein``, ``nie``,
``ohne``; French ``ne``/``n'``, ``pas``, ``jamais``, ``aucun``, ``sans``; Spanish ``no``,
``nunca``, ``ningún``, ``sin``; Russian ``не``, ``ни``, ``никогда``, ``нет``, ``без``;
Chinese ``不``, ``没``, ``没有``, ``未``, ``无``, ``非``; Hindi ``नहीं``, ``न``, ``मत``) in the
scope of the aligned content on one side and none on the other is a
:class:`~citekit.results.Conflict` of kind ``"negation"``.

The scope rule (the user guide's status rules, docs/guide/status.rst, state it for users):

- A text is cut into *clauses* at punctuation (``,`` ``;`` ``:`` ``.`` ``!`` ``?``,
  brackets, quotes, dashes and a hyphen between spaces, line breaks, their CJK forms and
  the danda; not a point or comma between digits) and at clause-joining words
  (``but``, ``and``, ``or``, ``while``, ``although``, ``because``, ``however``;
  ``that``, ``which``, ``who``, ``where``, which open a relative or complement clause;
  and their German, French, Spanish, Russian, Chinese and Hindi counterparts); "no
  evidence that" is one negator (its "that" ends no clause); a side reads only the
  sentence (the passage) its alignment lies in, so no sentence boundary is crossed.
- A negator is *in scope* when its clause holds a matched token of the alignment at most
  ``NEGATOR_REACH`` (12) characters away from it.
- A side is *negated* when a negator is in scope; two negators on one side still make
  it negated (they are not read as cancelling: "not without risk" is not "with risk"
  for a lexical reader).
- Phrases that hold a negator but do not negate are skipped whole: "not only", "not
  just", "not least", "no longer than", "no more than", "no less than", "no later
  than", "nothing but", "no doubt", "whether or not", "if not", "No. 5"; ``nicht nur``,
  ``nicht zuletzt``, ``non seulement``, ``sans doute``, ``no solo``, ``sin duda``, ``не
  только``, ``не менее``, ``не более``, ``न केवल``; Chinese words holding a negator
  character that negate nothing (``不仅``, ``不过``, ``不同``, ``未来``, ``无论``, ``非常``,
  ``非洲``, ...).
- Exactly one side negated is a conflict; both or neither agree. Only an alignment
  whose passage covers at least ``NEGATED_CLAIM_SHARE`` (half) of the sentence's content
  tokens is read: a negator beside a few shared words negates another claim.

All, every and always against none, no and never, and with against without, are
conflicts by the same rule: none, no, never and without are negators.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Sequence

from citekit._citations.conflicts import conflict_between
from citekit.results import Conflict

__all__ = [
    "CLAUSE_WORDS",
    "NEGATED_CLAIM_SHARE",
    "NEGATION",
    "NEGATOR_REACH",
    "NEGATOR_IDEOGRAPHS",
    "NEGATOR_PHRASES",
    "NEGATOR_WORDS",
    "NOT_NEGATING_IDEOGRAPHS",
    "NOT_NEGATING_PHRASES",
    "negation_conflict",
    "polarity_marks",
]

NEGATION = "negation"
# how near (in characters) to a matched token of its clause a negator must stand: a
# negator further away in a long clause mostly negates something else ("Stewart would not
# start the race" for a sentence on who replaced him in it)
NEGATOR_REACH = 12
# the share of the sentence's content tokens that an alignment must cover to state its
# claim (negated or not): a negator beside a few shared words ("paper wasps are usually
# not aggressive" for "Examples include paper wasps, hornets and yellow jackets") negates
# another claim
NEGATED_CLAIM_SHARE = 0.5

# single words that negate what their clause says (case-insensitive, whole words)
NEGATOR_WORDS = frozenset("""
    not no never none nobody nothing neither nor nowhere without cannot
    unable unlikely impossible lack lacks lacked lacking absence absent
    refuse refuses refused deny denies denied prohibit prohibits prohibited ban bans banned
    forbid forbids forbidden
    nicht nie niemals kein keine keinen keinem keiner keines ohne nichts niemand weder
    ne pas jamais aucun aucune sans rien ni non guère
    nunca jamás ningún ninguna ninguno nada nadie sin tampoco
    не ни никогда нет без ничего никто нельзя
    नहीं न मत ना
    """.split())
# word sequences that negate ("failed to"); besides them, "n't" after a letter ("isn't")
# and French "n'" before one ("n'a") are negators
NEGATOR_PHRASES = (
    ("fail", "to"), ("fails", "to"), ("failed", "to"), ("failing", "to"),
    ("no", "evidence", "that"),
)
# word sequences holding a negator that negate nothing of their clause: skipped whole
NOT_NEGATING_PHRASES = tuple(tuple(phrase.split()) for phrase in """
    not only|not just|not merely|not least|not to mention|no longer than|no more than
    |no less than|no fewer than|not less than|not more than|not fewer than|no later than
    |not later than|no sooner|nothing but|no doubt|without doubt|whether or not|if not
    |nicht nur|nicht zuletzt|nicht weniger als|nicht mehr als
    |non seulement|sans doute
    |no solo|no sólo|no solamente|sin duda|no menos de|no más de
    |не только|не менее|не более|не позднее|без сомнения
    |न केवल|ना केवल|न सिर्फ|न सिर्फ़
    """.replace("\n", " ").split("|"))
# Chinese negators, found inside runs of ideographs (no spaces between words)
NEGATOR_IDEOGRAPHS = ("没有", "不", "没", "未", "无", "非")
# Chinese words holding a negator character that negate nothing: skipped whole
NOT_NEGATING_IDEOGRAPHS = (
    "不得不", "差不多", "不仅", "不但", "不只", "不光", "不过", "不断", "不久", "不同",
    "不少", "不错", "不管", "不论", "未来", "无论", "无疑", "无数", "无比", "非常", "非洲",
    "除非", "莫非", "非但",
)
# words that start a new clause (whole words, case-insensitive): conjunctions, and the
# words opening a relative or complement clause ("those who did not", "that it did not")
CLAUSE_WORDS = frozenset("""
    but and or while whereas although though because unless however yet
    that which who whom whose where
    aber und oder während obwohl weil sondern doch dass
    mais et ou tandis car qui que
    pero y o mientras aunque porque sino
    но и или а хотя однако что который которая которое которые
    लेकिन और या परंतु किंतु
    """.split())
# Chinese clause-joining words (inside runs of ideographs)
CLAUSE_IDEOGRAPHS = ("但是", "但", "而", "却")
# punctuation ending a clause: a point or a comma only when no digit follows ("2.4", "1,200")
_CLAUSE_MARKS = (
    ";:!?()[]{}\"\u201c\u201d\u00ab\u00bb\u2014\u2013\n\r"
    "\uff0c\uff1b\uff1a\u3002\uff01\uff1f\u3001\uff08\uff09\u0964\u0965"
)

# a word character: \w, and the Devanagari vowel signs and other marks that \w leaves out
_WORD_CHAR = r"[\w\u0900-\u097f]"
_START = rf"(?<!{_WORD_CHAR})"
_END = rf"(?!{_WORD_CHAR})"


def _longest_first(items: Any) -> list[str]:
    """``items`` as regular expressions, longest first (an alternation takes the first
    alternative that matches: the longest must be tried first)."""
    return [re.escape(item) for item in sorted(items, key=lambda item: (-len(item), item))]


def _phrases(phrases: Any) -> list[str]:
    """Word sequences as regular expressions (white space between their words)."""
    return sorted(
        (r"\s+".join(map(re.escape, words)) for words in phrases),
        key=lambda pattern: (-len(pattern), pattern),
    )


# one scan reads, left to right, what is skipped, what ends a clause and what negates; at
# one position the first of these that matches wins (skipped phrases before boundaries:
# "whether or not" holds the clause word "or")
_POLARITY = re.compile(
    "(?P<skip>"
    + _START + "(?:" + "|".join(_phrases(NOT_NEGATING_PHRASES)) + ")" + _END
    + "|" + _START + r"no\.(?=\s*\d)"
    + "|" + "|".join(_longest_first(NOT_NEGATING_IDEOGRAPHS))
    + ")|(?P<bound>"
    + "[" + re.escape(_CLAUSE_MARKS) + r"]|[.,](?!\d)|(?<=\s)-(?=\s)"
    + "|" + _START + "(?:" + "|".join(_longest_first(CLAUSE_WORDS)) + ")" + _END
    + "|" + "|".join(_longest_first(CLAUSE_IDEOGRAPHS))
    + ")|(?P<neg>"
    + _START + "(?:" + "|".join(_phrases(NEGATOR_PHRASES)) + ")" + _END
    + "|" + _START + "(?:" + "|".join(_longest_first(NEGATOR_WORDS)) + ")" + _END
    + r"|(?<=[^\W\d_])n['\u2019]t" + _END
    + "|" + _START + r"n['\u2019](?=[^\W\d_])"
    + "|" + "|".join(_longest_first(NEGATOR_IDEOGRAPHS))
    + ")",
    re.IGNORECASE,
)
# a cheap first look: no match of this, no negator (every negator holds one of these)
_MAY_NEGATE = re.compile(
    r"n['\u2019]|" + _START + "(?:" + "|".join(_longest_first(NEGATOR_WORDS)) + ")" + _END
    + "|" + _START + r"fail" + "|" + "|".join(_longest_first(NEGATOR_IDEOGRAPHS)),
    re.IGNORECASE,
)


@lru_cache(maxsize=1 << 12)
def polarity_marks(text: str) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
    """``(bounds, negators)`` of ``text``: the ends of its clauses (ascending positions:
    a clause runs from one bound to the next, the text's start and end included
    implicitly) and the ``(start, end)`` of each negator in it, by the scope rules of
    this module. Texts met again (a passage cited for many sentences) are looked up.

    Examples
    --------
    >>> polarity_marks("Revenue did not grow, but costs fell.")
    ((20, 22, 36), ((12, 15),))
    >>> polarity_marks("Not only sales but also profits grew.")[1]
    ()
    """
    if _MAY_NEGATE.search(text) is None:
        return (), ()
    bounds: list[int] = []
    negators: list[tuple[int, int]] = []
    for match in _POLARITY.finditer(text):
        kind = match.lastgroup
        if kind == "bound":
            bounds.append(match.start())
        elif kind == "neg":
            negators.append(match.span())
    if not negators:
        return (), ()
    return tuple(bounds), tuple(negators)


def _negator_in_scope(
    marks: tuple[tuple[int, ...], tuple[tuple[int, int], ...]],
    lo: int,
    len_text: int,
    ranges: Sequence[tuple[int, int]],
) -> tuple[int, int] | None:
    """The first negator of ``marks`` (of a text of ``len_text`` characters starting at
    ``lo`` of the whole text) whose clause holds a character of one of ``ranges`` (the
    matched tokens, offsets in the whole text) at most ``NEGATOR_REACH`` characters away
    from it, in whole-text offsets; None when none does."""
    bounds, negators = marks
    if not negators:
        return None
    for start, end in negators:
        # the clause around the negator: from the bound before it to the bound after it
        clause_start, clause_end = 0, None
        for bound in bounds:
            if bound < start:
                clause_start = bound + 1
            elif bound >= end:
                clause_end = bound
                break
        clause_lo = lo + clause_start
        clause_hi = lo + clause_end if clause_end is not None else lo + len_text
        for range_start, range_end in ranges:
            # the matched characters inside the clause, near the negator
            inside_start, inside_end = max(range_start, clause_lo), min(range_end, clause_hi)
            if inside_start < inside_end and max(
                inside_start - (lo + end), (lo + start) - inside_end
            ) <= NEGATOR_REACH:
                return lo + start, lo + end
    return None


def negation_conflict(
    answer_text: str,
    answer_lo: int,
    answer_hi: int,
    answer_ranges: Sequence[tuple[int, int]],
    answer_range: tuple[int, int],
    source_text: str,
    source_lo: int,
    source_hi: int,
    source_ranges: Sequence[tuple[int, int]],
    evidence_range: tuple[int, int],
    source_offset: int = 0,
) -> Conflict | None:
    """The polarity conflict of one alignment, or None when both sides agree.

    Parameters
    ----------
    answer_text : str
        The whole answer.
    answer_lo, answer_hi : int
        The aligned sentence's characters in ``answer_text`` (scopes stay inside it).
    answer_ranges : sequence of (int, int)
        The characters of the answer tokens the alignment matched (a range per matched
        block).
    answer_range : (int, int)
        The answer characters the alignment covers (from its first to its last token).
    source_text : str
        The text the source offsets index.
    source_lo, source_hi : int
        The aligned passage's characters in ``source_text``.
    source_ranges : sequence of (int, int)
        The characters of the passage tokens the alignment matched.
    evidence_range : (int, int)
        The evidence characters (first to last aligned token).
    source_offset : int
        Added to evidence offsets (a chunk's ``doc_char_start``).

    Returns
    -------
    Conflict or None
        Of kind ``"negation"`` when exactly one side has a negator in the scope of the
        matched tokens (see the module's rules). Each side's text is its aligned range
        (``answer_range``, ``evidence_range``) widened to its first negator in scope,
        if it has one; the answer's offsets index ``answer_text``, the evidence's the
        source (``source_offset`` added).

    Examples
    --------
    >>> answer, source = "Revenue grew in 2024.", "Revenue did not grow in 2024."
    >>> c = negation_conflict(answer, 0, 21, [(13, 20)], (13, 20),
    ...                       source, 0, 29, [(21, 28)], (21, 28))
    >>> c.kind, c.answer_text, c.evidence_text
    ('negation', 'in 2024', 'not grow in 2024')
    >>> negation_conflict(answer, 0, 21, [(13, 20)], (13, 20),
    ...                   answer, 0, 21, [(13, 20)], (13, 20)) is None
    True
    """
    answer_marks = polarity_marks(answer_text[answer_lo:answer_hi])
    source_marks = polarity_marks(source_text[source_lo:source_hi])
    if not answer_marks[1] and not source_marks[1]:
        return None
    answer_negator = _negator_in_scope(
        answer_marks, answer_lo, answer_hi - answer_lo, answer_ranges
    )
    source_negator = _negator_in_scope(
        source_marks, source_lo, source_hi - source_lo, source_ranges
    )
    if (answer_negator is None) == (source_negator is None):
        return None
    a_start, a_end = answer_range
    s_start, s_end = evidence_range
    if answer_negator is not None:
        a_start, a_end = min(a_start, answer_negator[0]), max(a_end, answer_negator[1])
    if source_negator is not None:
        s_start, s_end = min(s_start, source_negator[0]), max(s_end, source_negator[1])
    return conflict_between(
        NEGATION, answer_text, a_start, a_end, source_text, s_start, s_end, source_offset
    )
