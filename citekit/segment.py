"""Sentence segmentation with character offsets, and sliding passage windows.

Rules of :class:`SentenceSegmenter` (and :func:`segment_sentences`, which uses the default
one):

- a line break ends a sentence (single newlines, blank lines, ``\\r\\n``, and the Unicode
  line and paragraph separators), so lists and headings never run into the next line;
- a list marker at the start of a line (``-``, ``*``, ``•``, ``1.``, ``2)``, ``a.``,
  ``B)``, ``(iv)``, ``XII.``...) followed by a space is not part of the sentence (one
  capital letter with a period is not a marker, even a roman numeral: it is an initial,
  ``A. B. Smith``, ``V. Putin``);
- ``.``, ``?``, ``!`` and ``…`` end a sentence when followed by whitespace or the end of the
  text, as do the other Latin forms (``‼``, ``⁉``, ``‽``, small and full-width full stops);
  the other characters of Unicode's Sentence_Terminal property (``。！？``, Devanagari
  ``।`` / ``॥``, Arabic ``؟``, Urdu ``۔``, Armenian ``։``, Ethiopic ``።``, Khmer ``។``,
  Myanmar ``။`` and every other script's) end one anywhere (those scripts do not put
  spaces after them). Runs (``?!``, ``...``) stay together and closing quotes and brackets
  that follow (``."``, ``.)``, ``。」``) belong to the sentence, as do reference markers
  written right after it (``grew.[1]``, ``.[2, 3]``, ``.[^4]``);
- none of those is a boundary when the next word starts in lower case (``approx. five``,
  ``"Really?" she asked``; Georgian letters do not count: Georgian does not capitalize);
  a ``.`` is not one after a known abbreviation (``Dr.``,
  ``e.g.``), a dotted acronym (``U.S.``) or a single capital initial (``J. K.``), and
  ``etc.`` / ``Inc.`` / ``Ltd.`` end a sentence only before a capitalized word. Decimals
  (``5.2``) never end a sentence because the ``.`` is not followed by a space.

Spans are half-open offsets into the text as passed, trimmed of surrounding whitespace,
non-empty and in order.

``SentenceSegmenter(rules="cite-right")`` (and :class:`SimpleSegmenter`, cite-right's
class, which returns :class:`Segment` records) changes two rules to cite-right's: ``;``
ends a sentence (it stays with the sentence before it), and a terminator followed by a
lower-case word ends one (``approx.`` and the other abbreviations still do not).

The rules run in a compiled kernel (``citekit.kernels._segment``, compiled or loaded from the
cache on first use), one pass over the text's code points; character classes (``\\s``,
upper and lower case, letters, digits, ``str.lower``) are Python's own for every
character. :meth:`SentenceSegmenter.segment_array` returns the spans as one array, without
a Python tuple per sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, NamedTuple, Sequence

import numpy as np

from citekit._joined_texts import JoinedTexts
from citekit._validation import check_int, check_spans, check_str

__all__ = [
    "DEFAULT_ABBREVIATIONS",
    "RULES",
    "PassageWindow",
    "Segment",
    "SentenceSegmenter",
    "SimpleSegmenter",
    "passage_window_array",
    "passage_windows",
    "segment_sentences",
]

#: Abbreviations (lower case, without the final period) after which ``.`` never ends a
#: sentence: titles and words that are followed by a name or a number.
DEFAULT_ABBREVIATIONS: frozenset[str] = frozenset("""
    dr mr mrs ms mx prof sr jr st rev hon gen col capt lt sgt maj cmdr adm gov sen rep pres
    fr sr mt ft vs cf e.g i.e viz al fig figs eq eqs no nos vol vols ch sec p pp ed eds
    approx ca est dept univ assn bros jan feb mar apr jun jul aug sep sept oct nov dec
    """.split())

# Abbreviations that often end a sentence: a boundary only if the next word is capitalized.
_SENTENCE_FINAL_ABBREVIATIONS = frozenset("etc inc ltd co corp llc plc".split())

#: The rule sets of :class:`SentenceSegmenter`: citekit's (the default) and cite-right's.
RULES = ("citekit", "cite-right")


class PassageWindow(NamedTuple):
    """A run of consecutive sentences: indices ``[sentence_start, sentence_end)`` and the
    half-open character span ``[char_start, char_end)`` they cover in the source.

    Examples
    --------
    >>> text = "One. Two. Three."
    >>> window = passage_windows(segment_sentences(text), 2)[0]
    >>> window
    PassageWindow(sentence_start=0, sentence_end=2, char_start=0, char_end=9)
    >>> text[window.char_start : window.char_end]
    'One. Two.'
    """

    sentence_start: int
    sentence_end: int
    char_start: int
    char_end: int


class SentenceSegmenter:
    """Rule-based sentence segmenter (the replaceable segmentation stage).

    Parameters
    ----------
    abbreviations : iterable of str, optional
        Abbreviations (case-insensitive, with or without the final period) after which a
        period never ends a sentence; defaults to :data:`DEFAULT_ABBREVIATIONS`.
    extra_abbreviations : iterable of str, optional
        Added to ``abbreviations``.
    split_on_newlines : bool, default True
        End a sentence at every line break; if False only blank lines (two or more
        line breaks) do, and list markers are recognized only after them.
    rules : {"citekit", "cite-right"}, default "citekit"
        ``"cite-right"``: ``;`` also ends a sentence, and so does a terminator before a
        lower-case word (cite-right's ``SimpleSegmenter``); every other rule stays.

    Examples
    --------
    >>> segmenter = SentenceSegmenter(extra_abbreviations=["Approx"])
    >>> text = "Dr. Smith paid $5.2 million, i.e. a lot. Was it? Yes!"
    >>> [text[a:b] for a, b in segmenter.segment(text)]
    ['Dr. Smith paid $5.2 million, i.e. a lot.', 'Was it?', 'Yes!']
    >>> text = "Sales rose; costs fell. then profits grew."
    >>> [text[a:b] for a, b in SentenceSegmenter().segment(text)]
    ['Sales rose; costs fell. then profits grew.']
    >>> [text[a:b] for a, b in SentenceSegmenter(rules="cite-right").segment(text)]
    ['Sales rose;', 'costs fell.', 'then profits grew.']
    """

    def __init__(
        self,
        abbreviations: Iterable[str] | None = None,
        *,
        extra_abbreviations: Iterable[str] = (),
        split_on_newlines: bool = True,
        rules: str = "citekit",
    ) -> None:
        if rules not in RULES:
            if not isinstance(rules, str):
                raise TypeError(f"rules must be a str, got {type(rules).__name__}")
            raise ValueError(f"rules must be one of {RULES}, got {rules!r}")
        self.rules = rules
        base = DEFAULT_ABBREVIATIONS if abbreviations is None else abbreviations
        self.abbreviations = _abbreviation_keys(base, "abbreviations") | _abbreviation_keys(
            extra_abbreviations, "extra_abbreviations"
        )
        if not isinstance(split_on_newlines, bool):
            raise TypeError(
                f"split_on_newlines must be a bool, got {type(split_on_newlines).__name__}"
            )
        self.split_on_newlines = split_on_newlines
        self._key_table_cache: tuple[frozenset[str], Any] | None = None

    def __repr__(self) -> str:
        rules = "" if self._rules() == "citekit" else f", rules={self.rules!r}"
        return (
            f"{type(self).__name__}({len(self.abbreviations)} abbreviations, "
            f"split_on_newlines={self.split_on_newlines}{rules})"
        )

    def _rules(self) -> str:
        return getattr(self, "rules", "citekit")  # (absent if pickled before it)

    def _kernel_rules(self) -> int:
        from citekit.kernels._segment import CITE_RIGHT_RULES, CITEKIT_RULES

        return CITE_RIGHT_RULES if self._rules() == "cite-right" else CITEKIT_RULES

    def segment(self, text: str) -> list[tuple[int, int]]:
        """Sentence spans of ``text``.

        Parameters
        ----------
        text : str
            Any string.

        Returns
        -------
        list of tuple of int
            Half-open ``(start, end)`` offsets into ``text``: trimmed, non-empty, ordered,
            non-overlapping. Empty for empty or whitespace-only text.

        Raises
        ------
        TypeError
            If ``text`` is not a ``str``.

        Examples
        --------
        >>> text = "Intro:\\n- first item\\n2. second one\\n\\nHe said “Stop.” Then left."
        >>> [text[a:b] for a, b in SentenceSegmenter().segment(text)]
        ['Intro:', 'first item', 'second one', 'He said “Stop.”', 'Then left.']
        """
        spans = self.segment_array(text)
        return list(zip(spans[:, 0].tolist(), spans[:, 1].tolist()))

    def segment_array(self, text: str) -> np.ndarray:
        """The spans of :meth:`segment` as one array (no Python object per sentence).

        Parameters
        ----------
        text : str
            Any string.

        Returns
        -------
        numpy.ndarray
            Shape ``(n_sentences, 2)``, ``int64``: ``start, end`` per row, the spans of
            :meth:`segment` in the same order. Shape ``(0, 2)`` for empty or
            whitespace-only text.

        Raises
        ------
        TypeError
            If ``text`` is not a ``str``.

        Examples
        --------
        >>> text = "Costs fell 5.2% (approx. €3 million). Was it enough? 利益は増えた。"
        >>> spans = SentenceSegmenter().segment_array(text)
        >>> spans.dtype, spans.shape
        (dtype('int64'), (3, 2))
        >>> [text[start:end] for start, end in spans.tolist()]
        ['Costs fell 5.2% (approx. €3 million).', 'Was it enough?', '利益は増えた。']
        """
        check_str(text, "text")
        if not text:
            return np.zeros((0, 2), dtype=np.int64)
        from citekit.kernels._segment import code_points, segment_code_points

        return segment_code_points(
            code_points(text), *self._key_tables(), self.split_on_newlines, self._kernel_rules()
        )

    def segment_many(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The spans :meth:`segment_array` gives each of ``texts``, from one kernel call.

        What a segmenter may offer besides ``segment`` to be read many texts at once:
        :meth:`~citekit.corpus.Corpus.build` reads its sources with it (when the tokenizer
        has ``tokenize_many`` too, see :class:`~citekit.tokenizers.base.Tokenizer`),
        possibly from several threads at once, which costs less than a call per text.
        Another segmenter's ``segment_many`` returns the same two arrays; its spans are
        checked as ``segment``'s are (empty ones dropped). A ``segment_many`` inherited
        from a class above the one that defines ``segment`` or ``segment_array`` is not
        used (it would not know them).

        Parameters
        ----------
        texts : sequence of str
            The texts.

        Returns
        -------
        spans : numpy.ndarray
            ``(n, 2)`` int64: every text's spans, concatenated, offsets relative to their
            own text.
        offsets : numpy.ndarray
            ``int64``, ``len(texts) + 1`` entries: text ``t`` has the spans
            ``spans[offsets[t]:offsets[t + 1]]``.

        Raises
        ------
        TypeError
            If ``texts`` is not a sequence of ``str``.

        Examples
        --------
        >>> spans, offsets = SentenceSegmenter().segment_many(["One. Two.", "", "Three."])
        >>> spans.tolist(), offsets.tolist()
        ([[0, 4], [5, 9], [0, 6]], [0, 2, 2, 3])
        """
        from citekit.kernels._segment import code_points, segment_code_points_many

        batch = JoinedTexts.of(texts)
        return segment_code_points_many(
            code_points(batch.joined), batch.starts, *self._key_tables(), self.split_on_newlines,
            self._kernel_rules(),
        )

    def __call__(self, text: str) -> list[tuple[int, int]]:
        return self.segment(text)

    def _key_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The kernel's abbreviation tables, rebuilt if ``abbreviations`` was replaced."""
        cached = getattr(self, "_key_table_cache", None)  # (absent if pickled before it)
        if cached is None or cached[0] is not self.abbreviations:
            from citekit.kernels._segment import abbreviation_tables

            tables = abbreviation_tables(self.abbreviations, _SENTENCE_FINAL_ABBREVIATIONS)
            cached = self._key_table_cache = (self.abbreviations, tables)
        return cached[1]


@dataclass(frozen=True)
class Segment:
    """A segment of a text (typically a sentence), cite-right's record:
    ``text == document[doc_char_start:doc_char_end]``; ``start`` and ``end`` name the same
    offsets.

    Examples
    --------
    >>> segment = Segment(text="Hi.", doc_char_start=4, doc_char_end=7)
    >>> segment.start, segment.end
    (4, 7)
    """

    text: str
    doc_char_start: int
    doc_char_end: int

    def __post_init__(self) -> None:
        check_str(self.text, "Segment.text")
        start = check_int(self.doc_char_start, "Segment.doc_char_start", minimum=0)
        end = check_int(self.doc_char_end, "Segment.doc_char_end", minimum=start)
        if end - start != len(self.text):
            raise ValueError(
                f"Segment: text must hold doc_char_end - doc_char_start = {end - start} "
                f"characters, got {len(self.text)}"
            )
        object.__setattr__(self, "doc_char_start", start)
        object.__setattr__(self, "doc_char_end", end)

    @property
    def start(self) -> int:
        """``doc_char_start``."""
        return self.doc_char_start

    @property
    def end(self) -> int:
        """``doc_char_end``."""
        return self.doc_char_end


class SimpleSegmenter(SentenceSegmenter):
    """cite-right's ``SimpleSegmenter``: a :class:`SentenceSegmenter` with cite-right's
    rules (``rules="cite-right"``) whose :meth:`segment` returns :class:`Segment` records.

    Parameters
    ----------
    split_on_newlines : bool, default True
        As for :class:`SentenceSegmenter`.
    abbreviations, extra_abbreviations : iterable of str, optional
        As for :class:`SentenceSegmenter` (citekit's abbreviations by default).

    Examples
    --------
    >>> text = "Revenue grew 9%; costs fell. margins rose."
    >>> [(s.text, s.start, s.end) for s in SimpleSegmenter().segment(text)]
    [('Revenue grew 9%;', 0, 16), ('costs fell.', 17, 28), ('margins rose.', 29, 42)]
    """

    def __init__(
        self,
        split_on_newlines: bool = True,
        *,
        abbreviations: Iterable[str] | None = None,
        extra_abbreviations: Iterable[str] = (),
    ) -> None:
        super().__init__(
            abbreviations, extra_abbreviations=extra_abbreviations,
            split_on_newlines=split_on_newlines, rules="cite-right",
        )

    def segment(self, text: str) -> list[Segment]:  # type: ignore[override]
        """The sentences of ``text`` as :class:`Segment` records, in order.

        Raises
        ------
        TypeError
            If ``text`` is not a ``str``.

        Examples
        --------
        >>> SimpleSegmenter().segment("Yes; no.")[1]
        Segment(text='no.', doc_char_start=5, doc_char_end=8)
        """
        spans = self.segment_array(text).tolist()
        return [Segment(text[start:end], start, end) for start, end in spans]

    def segment_many(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`SentenceSegmenter.segment_many` with cite-right's rules.

        Examples
        --------
        >>> spans, offsets = SimpleSegmenter().segment_many(["a; b", "c"])
        >>> spans.tolist(), offsets.tolist()
        ([[0, 2], [3, 4], [0, 1]], [0, 2, 3])
        """
        return super().segment_many(texts)


def _abbreviation_keys(words: object, name: str) -> frozenset[str]:
    # (a str is iterable too, but its letters are not abbreviations)
    if isinstance(words, (str, bytes)) or not isinstance(words, Iterable):
        raise TypeError(f"{name} must be an iterable of str, got {type(words).__name__}")
    return frozenset(_abbreviation_key(word, name) for word in words)


def _abbreviation_key(word: object, name: str) -> str:
    if not isinstance(word, str):
        raise TypeError(f"{name} must contain str, got {type(word).__name__}")
    key = word.strip().rstrip(".").lower()
    if not key:
        raise ValueError(f"{name} must not contain empty strings")
    return key


_DEFAULT_SEGMENTER: SentenceSegmenter | None = None


def segment_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans of ``text`` with the default :class:`SentenceSegmenter`.

    Parameters
    ----------
    text : str
        Any string.

    Returns
    -------
    list of tuple of int
        Half-open ``(start, end)`` offsets into ``text``: trimmed, non-empty, ordered.

    Examples
    --------
    >>> text = "Revenue grew 5.2% in the U.S. last year. 利益は増えた。本当？ Yes."
    >>> [text[a:b] for a, b in segment_sentences(text)]
    ['Revenue grew 5.2% in the U.S. last year.', '利益は増えた。', '本当？', 'Yes.']
    >>> segment_sentences("   ")
    []
    """
    global _DEFAULT_SEGMENTER
    if _DEFAULT_SEGMENTER is None:
        _DEFAULT_SEGMENTER = SentenceSegmenter()
    return _DEFAULT_SEGMENTER.segment(text)


def passage_windows(
    sentence_spans: Sequence[tuple[int, int]],
    window_size_sentences: int = 1,
    window_stride_sentences: int = 1,
) -> list[PassageWindow]:
    """Sliding windows of consecutive sentences.

    Windows start at sentence ``0, stride, 2 * stride, ...`` and hold
    ``window_size_sentences`` sentences (fewer if there are not that many). When the
    stride does not land on the end, one last window ending at the last sentence is added,
    so the tail of the text is always covered.

    Parameters
    ----------
    sentence_spans : sequence of (int, int)
        Ordered sentence spans, e.g. from :func:`segment_sentences`.
    window_size_sentences : int, default 1
        Sentences per window (>= 1).
    window_stride_sentences : int, default 1
        Sentences between the starts of consecutive windows (>= 1).

    Returns
    -------
    list of PassageWindow
        ``(sentence_start, sentence_end, char_start, char_end)``, ``sentence_end``
        exclusive, the char span running from the first sentence's start to the last one's
        end.

    Raises
    ------
    TypeError, ValueError
        On a malformed span list or window sizes below 1 (the message names the argument).

    Examples
    --------
    >>> spans = [(0, 5), (6, 12), (13, 20), (21, 30), (31, 33), (34, 40)]
    >>> [tuple(w) for w in passage_windows(spans, 2, 2)]
    [(0, 2, 0, 12), (2, 4, 13, 30), (4, 6, 31, 40)]
    >>> [tuple(w) for w in passage_windows(spans, 2, 3)]  # stride misses the tail
    [(0, 2, 0, 12), (3, 5, 21, 33), (4, 6, 31, 40)]
    """
    windows = passage_window_array(sentence_spans, window_size_sentences, window_stride_sentences)
    return list(map(PassageWindow._make, windows.tolist()))


def passage_window_array(
    sentence_spans: Any,
    window_size_sentences: int = 1,
    window_stride_sentences: int = 1,
) -> np.ndarray:
    """The windows of :func:`passage_windows` as one ``int64`` array (no Python objects).

    Parameters
    ----------
    sentence_spans : sequence of (int, int) or array of shape (n, 2)
        Ordered, non-overlapping sentence spans, e.g. from :func:`segment_sentences`.
    window_size_sentences : int, default 1
        Sentences per window (>= 1).
    window_stride_sentences : int, default 1
        Sentences between the starts of consecutive windows (>= 1).

    Returns
    -------
    numpy.ndarray
        Shape ``(n_windows, 4)``: ``sentence_start, sentence_end, char_start, char_end``
        per row, the rows of :func:`passage_windows` in the same order.

    Raises
    ------
    TypeError, ValueError
        On a malformed span list or window sizes below 1 (the message names the argument).

    Examples
    --------
    >>> spans = np.array([[0, 5], [6, 12], [13, 20], [21, 30], [31, 33], [34, 40]])
    >>> passage_window_array(spans, 2, 3).tolist()  # stride misses the tail
    [[0, 2, 0, 12], [3, 5, 21, 33], [4, 6, 31, 40]]
    >>> passage_window_array([], 2).shape
    (0, 4)
    """
    size = check_int(window_size_sentences, "window_size_sentences", minimum=1)
    stride = check_int(window_stride_sentences, "window_stride_sentences", minimum=1)
    spans = _checked_span_array(sentence_spans)
    n_sentences = spans.shape[0]
    if n_sentences == 0:
        return np.zeros((0, 4), dtype=np.int64)
    # the rule is the corpus builder's kernel (imported here: importing citekit.segment
    # does not import the JIT compiler); a size or stride of n_sentences or more gives the windows
    # of n_sentences, and keeps Python ints beyond int64 out of the kernel
    from citekit.kernels._index import sentence_windows

    return sentence_windows(spans, min(size, n_sentences), min(stride, n_sentences))


_INT64_MIN, _INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)


def _checked_span_array(sentence_spans: object) -> np.ndarray:
    """``sentence_spans`` as a validated ``(n, 2)`` int64 array (errors name the argument):
    spans ordered and non-overlapping, starting at 0 or after
    (:func:`~citekit._validation.check_spans`; empty spans allowed)."""
    if isinstance(sentence_spans, (str, bytes)) or not hasattr(sentence_spans, "__iter__"):
        raise TypeError(
            "sentence_spans must be a sequence of (start, end) pairs, "
            f"got {type(sentence_spans).__name__}"
        )
    if not isinstance(sentence_spans, (list, tuple, np.ndarray)):
        sentence_spans = list(sentence_spans)  # type: ignore[call-overload]
    spans = _span_array(sentence_spans)  # type: ignore[arg-type]
    if spans is None:
        spans = _span_pairs(sentence_spans)  # type: ignore[arg-type]
    check_spans(spans[:, 0], spans[:, 1], "sentence_spans", item="sentence")
    return spans


def _span_array(sentence_spans: Any) -> np.ndarray | None:
    """The spans as an ``(n, 2)`` int64 array, converted in one go, or None if they are
    not an array or list of pairs of integers that int64 holds."""
    if len(sentence_spans) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if isinstance(sentence_spans, np.ndarray):
        array = sentence_spans
    else:
        try:
            array = np.array(sentence_spans)
        except (TypeError, ValueError):
            return None
    if array.dtype.kind not in "iu" or array.ndim != 2 or array.shape[1] != 2:
        return None
    if array.dtype.kind == "u" and array.size and array.max() > _INT64_MAX:
        return None
    return array.astype(np.int64, copy=False)


def _span_pairs(sentence_spans: Any) -> np.ndarray:
    """The spans as an ``(n, 2)`` int64 array, pair by pair: the error names the first item
    that is no pair of integers that int64 holds."""
    pairs: list[tuple[int, int]] = []
    for index, pair in enumerate(sentence_spans):
        try:
            start, end = pair
        except (TypeError, ValueError):
            raise TypeError(
                f"sentence_spans[{index}] must be a (start, end) pair, got {pair!r}"
            ) from None
        start, end = (
            check_int(value, f"sentence_spans[{index}] {part}", minimum=_INT64_MIN,
                      maximum=_INT64_MAX)
            for part, value in (("start", start), ("end", end))
        )
        pairs.append((start, end))
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)
