"""Which words describe a value as a rise or a fall, in English, German, French, Spanish
and Russian, and when two descriptions oppose each other.

The word before a value (past links such as "by", "of", "um", "de", "на") says whether it
is a fall (``fell 3%``: -1), a rise (``rose 3%``: 1), or the level a fall or a rise ended
at (``fell to 3%``: -2, ``rose from 7% to 5%``: 2); else the word after it (``a 3%
increase``, past a percent sign and unit or scale words). A rise and a fall are opposed
only within one kind: a change against a change, a level against a level
(:func:`opposed`, on the bits :data:`FALL` and :data:`RISE`). :func:`directions_in` and
:func:`passage_directions` are the cheap test of which kinds of words a text holds. How a
conflict uses them: :mod:`citekit._citations.conflicts` and the user guide's status rules
(docs/guide/status.rst).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from citekit._citations.values import _NEIGHBOURHOOD, SCALES

if TYPE_CHECKING:
    from citekit.corpus import Corpus

__all__ = ["FALL", "RISE", "opposed", "directions_in", "passage_directions"]

# The bits of a text's direction words (directions_in), and of a value's direction: the
# text holds a fall word, a rise word; a value is described as a fall, a rise
FALL = 1
RISE = 2


def opposed(bits: int, other: int) -> bool:
    """Whether direction bits (:data:`FALL`, :data:`RISE`) say a rise in one and a fall in
    the other: the one rule for a rise against a fall, whether of two texts' words
    (:func:`directions_in`) or of two values of the same kind (:func:`_opposed_directions`).

    Examples
    --------
    >>> opposed(RISE, FALL), opposed(FALL | RISE, RISE), opposed(RISE, RISE), opposed(0, FALL)
    (True, True, False, False)
    """
    return bool(bits & FALL and other & RISE or bits & RISE and other & FALL)


# words saying that the value after them is a fall ("fell 3%", "a decline of 3%"; also in
# German, French, Spanish and Russian: "sank um 3%", "baisse de 3%", "cayó un 3%", "упал на
# 3%"): a value so described faces its negative without conflict ("fell 3%" states "-3%")
_FALL_WORDS = frozenset("""
    fell fall falls falling drop drops dropped dropping decline declines declined declining
    decrease decreases decreased decreasing down lower lowered lost lose loses losing loss
    losses minus negative shrank shrink shrinks shrinking shrunk contracted contraction
    slid slide slides slipped slip slips plunged plunge plummeted sank sink deficit cut
    cuts reduced reduction
    sanken gesunken sinkt fiel fielen gefallen fällt rückgang verringerte verringert
    verringerung abnahme verlust schrumpfte geschrumpft
    baissé baisse baissent diminué diminue diminution recul reculé chute chuté perte pertes
    repli déficit
    cayó cayeron caída bajó bajaron bajada descenso descendió disminuyó disminuyeron
    disminución pérdida pérdidas retroceso retrocedió
    упал упала упало упали снизился снизилась снизилось снизились сократился сократилась
    сократилось сократились падение снижение сокращение убыток
    """.split())
# words saying that the value after them is a rise ("rose 3%", "an increase of 3%"): a value
# so described is contradicted by the same value described as a fall ("rose 3%" against
# "fell 3%")
_RISE_WORDS = frozenset("""
    rose rise rises rising risen grew grow grows growing grown growth increase increases
    increased increasing up higher raised raise raises gained gain gains climbed climb
    climbs jumped jump jumps surged surge surges soared soar soars rallied rally added
    expanded expand expands expansion advanced boosted plus positive profit profits surplus
    stieg stiegen gestiegen steigt anstieg wuchs wuchsen gewachsen wächst wachstum zuwachs
    erhöhte erhöht erhöhung zunahme gewinn kletterte
    augmenté augmente augmentent augmentation hausse progressé progresse progression
    croissance grimpé bondi bénéfice
    aumentó aumentaron aumento creció crecieron crecimiento subió subieron subida alza
    incremento incrementó ganancia ganancias
    вырос выросла выросло выросли увеличился увеличилась увеличилось увеличились рост
    прирост повысился повысилась прибыль
    """.split())
# words that may stand between a rise or fall word and its value ("fell by 3%", "a decline
# of 3%", "stieg um 3%", "hausse de 3%", "aumentó un 3%", "вырос на 3%")
_DIRECTION_LINKS = frozenset("by of um von de du del un una el en на".split())
# words saying that the value after them is the level a rise or a fall ended at ("rose to
# 3%", "sank auf 3 %", "a chuté à 3 %", "bajó al 3 %", "выросла до 3%"): it is compared
# only with another level ("fell to 3%"), never with a change ("fell 3%")
_LEVEL_LINKS = frozenset("to auf à al до".split())
# rise and fall words that say no direction before a level link: "up to 3%" is at most 3%,
# "growth to 3%" may have slowed, "lost to 3 rivals" is no fall
_NOT_LEVEL_WORDS = frozenset("""
    up plus minus positive negative growth gain gains profit profits surplus loss losses
    deficit expansion contraction cuts lose loses losing lost
    gewinn verlust wachstum zuwachs bénéfice perte pertes déficit croissance
    ganancia ganancias pérdida pérdidas crecimiento прибыль убыток
    """.split())
# words that may stand between a rise or fall word and the level it started from, before a
# level link ("rose from 3% to 5%", "stieg von 3 auf 5 %", "вырос с 3% до 5%"): the rise
# word says the direction of the level 5% too
_FROM_LINKS = frozenset("from von с".split())
_FALL_WINDOW = 30
_WORD = re.compile(r"\w+")
_WORD_CHAR = re.compile(r"\w")
# what may stand between the words of "from 3% to", "from $1.2 billion to": no line break
# and no end of a sentence (a point only as a decimal point: "1.2")
_FROM_GAP = re.compile(r"[^\n\r.!?;]*|\.")


def _past_starting_level(segment: str, words: list[re.Match[str]], link_start: int) -> None:
    """Drop from ``words`` (the words before the level link at ``segment[link_start]``) a
    starting level ("from 3%", "from $1.2 billion", "von 3", "с 3"): its numbers and unit
    or scale words (:data:`_AFTER_UNITS`), then the word of :data:`_FROM_LINKS` before
    them, when no line break or end of a sentence stands between the words."""
    i = len(words)
    while i > 0 and (
        words[i - 1].group().isdecimal() or words[i - 1].group().casefold() in _AFTER_UNITS
    ):
        i -= 1
    if i == len(words) or i == 0 or words[i - 1].group().casefold() not in _FROM_LINKS:
        return
    ends = [word.end() for word in words[i - 1 :]]
    starts = [word.start() for word in words[i:]] + [link_start]
    if all(_FROM_GAP.fullmatch(segment, end, start) for end, start in zip(ends, starts)):
        del words[i - 1 :]


def _direction_in(segment: str, lead: int = 0, glued: bool = False) -> tuple[int, int]:
    """``(direction, position)`` of the last whole word of ``segment[lead:]`` (past the
    words of :data:`_DIRECTION_LINKS`): -1 when it is one of :data:`_FALL_WORDS`, 1 when one of
    :data:`_RISE_WORDS`, else 0 -- or -2 and 2 when a word of :data:`_LEVEL_LINKS` ends the
    segment and the word before it, or before the starting level it names
    (:func:`_past_starting_level`: "fell from 5% to"), is a fall or a rise word not in
    :data:`_NOT_LEVEL_WORDS` ("fell to"); and where that word starts in ``segment[lead:]``
    (-1 when it is neither). ``lead`` (0 or 1): ``segment[0]`` is the character before the
    window, read only to tell whether the window starts inside a word (whose tail is then
    not read: a word is read whole or not at all); ``glued``: the value starts inside the
    word that ends the segment ("increase0"), which is then not read either."""
    words = list(_WORD.finditer(segment, lead))
    if glued and words and words[-1].end() == len(segment):
        words.pop()
    if (
        lead
        and words
        and words[0].start() == lead
        and _WORD_CHAR.match(segment, 0) is not None
    ):
        words.pop(0)
    kind = 1  # a change; 2: a level
    if words and words[-1].group().casefold() in _LEVEL_LINKS:
        link = words.pop()
        kind = 2
        _past_starting_level(segment, words, link.start())
    else:
        while words and words[-1].group().casefold() in _DIRECTION_LINKS:
            words.pop()
    if words:
        word = words[-1].group().casefold()
        if kind == 2 and word in _NOT_LEVEL_WORDS:
            return 0, -1
        if word in _FALL_WORDS:
            return -kind, words[-1].start() - lead
        if word in _RISE_WORDS:
            return kind, words[-1].start() - lead
    return 0, -1


def _direction_before(text: str, first: int) -> tuple[int, int]:
    """``(direction, start)``: whether the value starting at ``text[first]`` is described
    as a fall (-1: "fell 3%", "a decline of 3%"), a rise (1: "rose 3%", "up 3%"), the level
    a fall or a rise ended at (-2: "fell to 3%", 2: "rose to 3%") or none of these (0), by
    the last whole word of the 30 characters before it (English, German, French, Spanish
    or Russian, past the words of :data:`_DIRECTION_LINKS`, or one of
    :data:`_LEVEL_LINKS` and the level it started from; :func:`_direction_in`); and where
    the word that says so starts in ``text`` (-1 when none does)."""
    window_start = max(0, first - _FALL_WINDOW)
    lead = 1 if window_start > 0 else 0
    glued = (
        0 < first < len(text)
        and _WORD_CHAR.match(text, first - 1) is not None
        and _WORD_CHAR.match(text, first) is not None
    )
    direction, position = _direction_in(
        text[window_start - lead : max(0, first)], lead, glued
    )
    return direction, (window_start + position if direction else -1)


# the word after a value that may say it is a rise or a fall ("a 3% increase", "3 percent
# lower", "a $2 million loss"): past white space (not a line break), hyphens, a percent
# sign, and up to three unit or scale words; it must end within _AFTER_WINDOW characters
_AFTER_WINDOW = 40
_AFTER_UNITS = ("percent", "per", "cent", "pct", "percentage", "points", "point", *SCALES)
_AFTER_SEPARATOR = r"(?:[^\S\n\r]|[%\uff05\u066a\u2010-\u2013-])*"
_AFTER_WORD = re.compile(
    _AFTER_SEPARATOR
    + r"(?:(?:" + "|".join(_AFTER_UNITS) + r")(?!\w)" + _AFTER_SEPARATOR + r"){0,3}"
    + r"(\w+)",
    re.IGNORECASE,
)


def _direction_after(text: str, end: int) -> tuple[int, int]:
    """``(direction, end)``: whether the word after the value ending at ``text[end]``
    (:data:`_AFTER_WORD`) says it is a fall (-1: "3% lower", "a 3% decrease") or a rise
    (1: "a 3% increase"), else 0; and where that word ends (-1 when it says neither). A
    word cut by the window's end is not read, nor one that goes on from the value
    ("3increase")."""
    limit = min(len(text), end + _AFTER_WINDOW)
    glued = end > 0 and _WORD_CHAR.match(text, end - 1) is not None
    match = _AFTER_WORD.match(text, end, limit) if 0 <= end < limit else None
    if (
        match is None
        or (match.end(1) == limit and _WORD_CHAR.match(text, limit) is not None)
        or (glued and match.start(1) == end)  # the value's own word ("3increase")
    ):
        return 0, -1
    word = match.group(1).casefold()
    if word in _FALL_WORDS:
        return -1, match.end(1)
    if word in _RISE_WORDS:
        return 1, match.end(1)
    return 0, -1


def _value_direction(text: str, start: int, end: int) -> tuple[int, int, int]:
    """``(direction, start, end)`` of the value ``text[start:end]``: -1 when it is
    described as a fall, 1 as a rise, -2 and 2 as the level one ended at, 0 none of these
    -- by the word before it (:func:`_direction_before`: "fell 3%", "rose to 3%"), else by
    the word after it (:func:`_direction_after`: "a 3% decrease"); and the span widened to
    that word.

    Both read at most 31 characters before the value and 41 after it: a value met again
    in the same neighbourhood (a sentence checked against many passages, a passage cited
    for many sentences) is looked up."""
    if not 0 <= start <= end <= len(text):
        return _read_direction(text, start, end)
    lo = max(0, start - _FALL_WINDOW - 1)
    hi = min(len(text), end + _AFTER_WINDOW + 1)
    direction, word_start, word_end = _local_direction(text[lo:hi], start - lo, end - lo)
    return direction, word_start + lo, word_end + lo


@lru_cache(maxsize=1 << 12)
def _local_direction(neighbourhood: str, start: int, end: int) -> tuple[int, int, int]:
    """:func:`_read_direction` of a value's neighbourhood (offsets in it)."""
    return _read_direction(neighbourhood, start, end)


def _read_direction(text: str, start: int, end: int) -> tuple[int, int, int]:
    """:func:`_value_direction`, read."""
    direction, word_start = _direction_before(text, start)
    if direction:
        return direction, word_start, end
    direction, word_end = _direction_after(text, end)
    if direction:
        return direction, start, word_end
    return 0, start, end


def directions_in(text: str, start: int, end: int) -> int:
    """Which kinds of direction words ``text[start:end]`` holds, with the 42 characters
    before it and the 52 after it: :data:`FALL` (1) a fall word (:data:`_FALL_WORDS`),
    :data:`RISE` (2) a rise word (:data:`_RISE_WORDS`), whole words only. Every value of
    the range that :func:`~citekit._citations.conflicts.find_conflicts` reads as described
    as a fall or a rise, or as the level one ended at (:func:`_value_direction` at the token
    or at its span, which a sign or a currency sign widens by up to 12 characters on each
    side) sets its bit: a range whose bits and another's are not :func:`opposed` holds no
    value of one described as a rise and of the other as a fall.

    Examples
    --------
    >>> directions_in("Sales rose 3%.", 0, 14)
    2
    >>> directions_in("Sales rose 3% while costs fell 2%.", 0, 13)  # (and the words after)
    3
    """
    lo = max(0, start - _FALL_WINDOW - _NEIGHBOURHOOD)
    while lo > 0 and _WORD_CHAR.match(text, lo - 1) is not None:
        lo -= 1
    hi = min(len(text), max(lo, end) + _AFTER_WINDOW + _NEIGHBOURHOOD)
    while hi < len(text) and _WORD_CHAR.match(text, hi) is not None:
        hi += 1
    return _direction_bits(text[lo:hi])


@lru_cache(maxsize=1 << 12)
def _direction_bits(segment: str) -> int:
    """:func:`directions_in` of the whole words of ``segment`` (passages checked for
    several sentences are looked up)."""
    words = set(map(str.casefold, _WORD.findall(segment)))
    return (0 if _FALL_WORDS.isdisjoint(words) else FALL) | (
        0 if _RISE_WORDS.isdisjoint(words) else RISE
    )


def _falls(text: str, start: int, end: int) -> bool:
    """Whether the value ``text[start:end]`` is described as a fall (:func:`_value_direction`;
    "fell 3%" states "-3%", "fell to 3%" does not)."""
    return _value_direction(text, start, end)[0] == -1


def _opposite_directions(text: str, start: int, end: int, other_text: str, other_start: int,
                         other_end: int) -> bool:
    """Whether one of two values is described as a rise and the other as a fall ("rose 3%"
    and "fell 3%", "a 3% increase" and "a 3% decrease"), or one as the level a rise ended
    at and the other as the level a fall ended at ("rose to 3%" and "fell to 3%";
    :func:`_value_direction`)."""
    return _opposed_directions(
        _value_direction(text, start, end)[0],
        _value_direction(other_text, other_start, other_end)[0],
    )


# a value's direction (_value_direction) as its bit: fall (-1 a change, -2 a level), rise
_DIRECTION_BIT = {-2: FALL, -1: FALL, 0: 0, 1: RISE, 2: RISE}


def _opposed_directions(direction: int, other: int) -> bool:
    """Whether two directions of :func:`_value_direction` are a rise and a fall
    (:func:`opposed`) of the same kind: two changes (1 and -1) or two levels (2 and -2), a
    level never against a change."""
    return abs(direction) == abs(other) and opposed(
        _DIRECTION_BIT[direction], _DIRECTION_BIT[other]
    )


def passage_directions(
    corpus: Corpus, passage: int, token_lo: int, token_hi: int, source_text: str
) -> int:
    """:func:`directions_in` of a whole passage: the text of its tokens
    ``token_lo:token_hi`` of the corpus in ``source_text`` (the text their offsets index),
    kept per passage in ``corpus.caches["passage_directions"]``; it holds every value of
    the passage that an alignment can match.

    Examples
    --------
    >>> from citekit.corpus import Corpus
    >>> class Words:
    ...     def tokenize(self, text):
    ...         spans = [m.span() for m in re.finditer(r"\\w+", text)]
    ...         return [hash(text[s:e].lower()) % 1000 for s, e in spans], spans
    >>> class Lines:
    ...     def segment(self, text):
    ...         return [(0, len(text))]
    >>> corpus = Corpus.build(["Costs fell 2%."], tokenizer=Words(), segmenter=Lines())
    >>> lo, hi = corpus.passage_token_start[0], corpus.passage_token_end[0]
    >>> passage_directions(corpus, 0, lo, hi, corpus.source_text(0)) == FALL
    True
    >>> corpus.caches["passage_directions"]
    {0: 1}
    """
    cache = corpus.caches.setdefault("passage_directions", {})
    bits = cache.get(passage)
    if bits is None:
        bits = 0
        if token_hi > token_lo:
            bits = directions_in(
                source_text,
                int(corpus.token_starts[token_lo]),
                int(corpus.token_ends[token_hi - 1]),
            )
        cache[passage] = bits
    return bits
