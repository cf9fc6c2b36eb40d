"""Light up the passage of a source chunk that supports an answer.

:func:`find_answer_highlights` is a drop-in for the published citeglow 0.1.2 highlighter
(same parameters, defaults and spans; ``tests/test_highlight_parity.py`` checks it on
1,208 generated cases), built on compiled kernels: contiguous LCS matching blocks
(:func:`citekit.kernels.matching_blocks`)
are the anchors, answer words that sit within ``neighborhood_tokens`` of an anchor join
them, runs that carry too little content are dropped, and the survivors expand to a display
unit (one line by default). :func:`highlight_sources` does the same for many chunks and
ranks them by evidence. ``HighlightOptions(normalize=True)`` matches through
:func:`citekit.normalize.normalize_text`, so ``１５％`` in an answer lights up
``15 percent`` in a source.

Every span is a half-open ``(start, end)`` pair of Python ``str`` offsets into the chunk
as passed; spans are sorted and never overlap.

Differences from citeglow 0.1.2, all deliberate: arguments are validated before anything
else (citeglow returns ``[]`` for an empty answer even when an option is invalid), non-str
arguments and a plain ``str`` as ``stop_words`` raise ``TypeError``, ``max_highlight_ratio``
must be finite.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from re import Pattern
from typing import Any, Literal, Optional, Union

import numpy as np

from citekit._validation import check_bool, check_float, check_int, check_str

__all__ = [
    "DEFAULT_SPAN_EXPANSION_REGEX",
    "DEFAULT_STOP_WORDS",
    "HighlightOptions",
    "SourceHighlights",
    "TokenizerMode",
    "find_answer_highlights",
    "highlight_sources",
    "warmup",
]

TokenizerMode = Literal["unicode_word", "char"]
SpanExpansionRegex = Union[str, Pattern[str]]

#: English and Vietnamese function words ignored as evidence (the citeglow list).
DEFAULT_STOP_WORDS: frozenset[str] = frozenset(
    """
    a an and are as at be but by for from had has have he her his i if in is it its me my
    of on or our she so that the their them they this to was we were will with you your
    là và của trong một các có không để được với cho từ đã sẽ này đó thì nhưng hoặc khi
    nếu vì bởi đến tại cũng hay rằng mà ở nên
    """.split()
)

#: Expand highlights to the containing rendered line.
DEFAULT_SPAN_EXPANSION_REGEX = r"[^\r\n]+"

_TOKENIZER_MODES = ("unicode_word", "char")
# Larger integer options behave alike (no text has this many tokens or characters); the
# cap keeps them inside int64 arithmetic in the kernels.
_OPTION_CAP = 1 << 40
# The only characters whose str.lower() is not one character for one character in
# context: U+0130 lowers to two characters, U+03A3 depends on its neighbours.
_IRREGULAR_LOWER = "\u0130\u03a3"
_IRREGULAR_WORD_RE = re.compile(r"\w*[\u0130\u03a3]\w*")
_IRREGULAR_CHAR_RE = re.compile(r"[\u0130\u03a3]")


@dataclass(frozen=True)
class HighlightOptions:
    """Reusable settings for :func:`find_answer_highlights` (citeglow's fields and defaults).

    Parameters
    ----------
    neighborhood_tokens : int, default 6
        How far (in tokens) a bag-of-words match may sit from an LCS anchor and still join
        it; also the gap bridged when merging runs after that. ``>= 0``.
    min_span_words : int, default 2
        Minimum tokens in a final span before expansion. ``>= 1``.
    min_vocab_token_chars : int, default 2
        Minimum length of an answer word used for bag-of-words matching. ``>= 1``.
    stop_words : iterable of str, default :data:`DEFAULT_STOP_WORDS`
        Words ignored as evidence; stored lower-cased as a ``frozenset``.
    lcs_merge_gap_tokens : int, default 2
        Tokens the LCS stage may bridge between matching blocks. ``>= 0``.
    lcs_min_run_tokens : int, default 2
        Minimum non-stop tokens for an LCS run to become an anchor. ``>= 1``.
    lcs_min_single_token_chars : int, default 5
        ...unless it holds a non-stop token at least this long. ``>= 1``.
    max_highlight_ratio : float, default 0.5
        When highlighted characters exceed this fraction of the chunk, keep only the longest
        span. ``> 0``.
    tokenizer : {"unicode_word", "char"}, default "unicode_word"
        ``unicode_word``: runs of ``\\w`` characters; ``char``: every non-whitespace
        character (Chinese, Japanese, Thai).
    expand_spans : bool, default True
        Expand spans to the display units matched by ``span_expansion_regex``.
    span_expansion_regex : str or compiled pattern, default ``r"[^\\r\\n]+"``
        What a display unit is (default: one line).
    normalize : bool, default False
        citekit extension: match through :func:`citekit.normalize.normalize_text` (NFKC,
        case folding, number / percent / currency folding). Offsets still index the
        original chunk.

    Raises
    ------
    TypeError, ValueError
        For a wrong type or value; the message names the field.

    Examples
    --------
    >>> options = HighlightOptions(min_span_words=1, stop_words={"The", "of"})
    >>> sorted(options.stop_words)
    ['of', 'the']
    >>> HighlightOptions(neighborhood_tokens=-1)
    Traceback (most recent call last):
    ...
    ValueError: neighborhood_tokens must be >= 0, got -1
    """

    neighborhood_tokens: int = 6
    min_span_words: int = 2
    min_vocab_token_chars: int = 2
    stop_words: Iterable[str] = DEFAULT_STOP_WORDS
    lcs_merge_gap_tokens: int = 2
    lcs_min_run_tokens: int = 2
    lcs_min_single_token_chars: int = 5
    max_highlight_ratio: float = 0.5
    tokenizer: TokenizerMode = "unicode_word"
    expand_spans: bool = True
    span_expansion_regex: SpanExpansionRegex = DEFAULT_SPAN_EXPANSION_REGEX
    normalize: bool = False

    def __post_init__(self) -> None:
        # stored as plain int / float so equal options compare, hash and compile alike
        for name, minimum in (
            ("neighborhood_tokens", 0),
            ("min_span_words", 1),
            ("min_vocab_token_chars", 1),
            ("lcs_merge_gap_tokens", 0),
            ("lcs_min_run_tokens", 1),
            ("lcs_min_single_token_chars", 1),
        ):
            object.__setattr__(self, name, check_int(getattr(self, name), name, minimum=minimum))
        ratio = check_float(self.max_highlight_ratio, "max_highlight_ratio")
        if ratio <= 0:
            raise ValueError(f"max_highlight_ratio must be > 0, got {ratio}")
        object.__setattr__(self, "max_highlight_ratio", ratio)
        object.__setattr__(self, "stop_words", _lowercase_stop_words(self.stop_words))
        if self.tokenizer not in _TOKENIZER_MODES:
            raise ValueError(f"tokenizer must be 'unicode_word' or 'char', got {self.tokenizer!r}")
        check_bool(self.expand_spans, "expand_spans")
        _compile_expansion_regex(self.span_expansion_regex)
        check_bool(self.normalize, "normalize")


@dataclass(frozen=True)
class SourceHighlights:
    """The highlights of one source, as returned by :func:`highlight_sources`.

    Parameters
    ----------
    source_index : int
        Position of the source in the ``sources`` argument.
    source_id : str or None
        ``id`` of a :class:`~citekit.results.SourceDocument`, ``source_id`` of a
        :class:`~citekit.results.SourceChunk`, ``None`` for a plain string.
    spans : tuple of (int, int)
        Sorted, non-overlapping half-open offsets into the source text (into the parent
        document for a :class:`~citekit.results.SourceChunk`).
    texts : tuple of str
        The highlighted text of each span.
    evidence : int
        How many tokens inside the spans are content words of the answer (not stop words,
        at least ``min_vocab_token_chars`` long); sources are ranked by it.

    Examples
    --------
    >>> record = SourceHighlights(0, None, ((0, 5),), ("hello",), 1)
    >>> record.spans
    ((0, 5),)
    >>> record.to_dict()
    {'source_index': 0, 'source_id': None, 'spans': [[0, 5]], 'texts': ['hello'], 'evidence': 1}
    """

    source_index: int
    source_id: Optional[str]
    spans: tuple[tuple[int, int], ...]
    texts: tuple[str, ...]
    evidence: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (spans as ``[start, end]`` lists)."""
        return {
            "source_index": self.source_index,
            "source_id": self.source_id,
            "spans": [[start, end] for start, end in self.spans],
            "texts": list(self.texts),
            "evidence": self.evidence,
        }


def find_answer_highlights(
    answer: str,
    chunk_text: str,
    *,
    keep_longest_only: bool = True,
    options: Optional[HighlightOptions] = None,
    neighborhood_tokens: Optional[int] = None,
    min_span_words: Optional[int] = None,
    min_vocab_token_chars: Optional[int] = None,
    stop_words: Optional[Iterable[str]] = None,
    tokenizer: Optional[TokenizerMode] = None,
    expand_spans: Optional[bool] = None,
    span_expansion_regex: Optional[SpanExpansionRegex] = None,
) -> list[tuple[int, int]]:
    """Character spans of ``chunk_text`` that support ``answer``.

    1. Contiguous token matches (LCS matching blocks) are merged across at most
       ``lcs_merge_gap_tokens`` tokens, never across a sentence break (``.!?…`` or a blank
       line), and kept as anchors when they carry enough non-stop content.
    2. Answer content words found within ``neighborhood_tokens`` of an anchor join it.
    3. Spans shorter than ``min_span_words`` tokens are dropped; with
       ``keep_longest_only`` only the longest remains (chosen before expansion).
    4. Spans expand to the ``span_expansion_regex`` unit containing them; spans that then
       overlap or are separated only by line breaks merge.
    5. If more than ``max_highlight_ratio`` of the chunk would be lit, only the longest
       span is kept.

    Parameters
    ----------
    answer : str
        The generated answer.
    chunk_text : str
        The source text to highlight.
    keep_longest_only : bool, default True
        Return at most one span, the one carrying the most matched evidence.
    options : HighlightOptions, optional
        Reusable settings; the keyword arguments below override its fields for this call.
    neighborhood_tokens, min_span_words, min_vocab_token_chars, stop_words, tokenizer, \
expand_spans, span_expansion_regex
        Per-call overrides of the :class:`HighlightOptions` fields of the same name.

    Returns
    -------
    list of (int, int)
        Sorted, non-overlapping half-open offsets: ``chunk_text[start:end]`` is highlighted.
        Empty when nothing in the chunk is confidently supported, or either text is empty.

    Raises
    ------
    TypeError
        If ``answer`` or ``chunk_text`` is not a ``str`` or an option has the wrong type.
    ValueError
        If an option is out of range or ``span_expansion_regex`` does not compile.

    Examples
    --------
    >>> source = (
    ...     "Shipping is calculated at checkout.\\n"
    ...     "Unused items can be returned within 30 days of delivery for a refund.\\n"
    ...     "Opened software licenses are not refundable."
    ... )
    >>> spans = find_answer_highlights("The refund window is 30 days for unused items.", source)
    >>> [source[start:end] for start, end in spans]
    ['Unused items can be returned within 30 days of delivery for a refund.']
    >>> find_answer_highlights("alpha beta", "prefix <cite>alpha beta evidence</cite> suffix",
    ...                        span_expansion_regex=r"<cite>.*?</cite>")
    [(7, 39)]
    """
    check_str(answer, "answer")
    check_str(chunk_text, "chunk_text")
    check_bool(keep_longest_only, "keep_longest_only")
    resolved = _resolve_options(
        options,
        neighborhood_tokens=neighborhood_tokens,
        min_span_words=min_span_words,
        min_vocab_token_chars=min_vocab_token_chars,
        stop_words=stop_words,
        tokenizer=tokenizer,
        expand_spans=expand_spans,
        span_expansion_regex=span_expansion_regex,
    )
    if not answer or not chunk_text:
        return []
    prepared_answer = _PreparedAnswer(answer, resolved)
    spans, _ = _highlight_chunk(prepared_answer, chunk_text, resolved, keep_longest_only)
    return spans


def highlight_sources(
    answer: str,
    sources: Sequence[Any],
    *,
    keep_longest_only: bool = True,
    options: Optional[HighlightOptions] = None,
    neighborhood_tokens: Optional[int] = None,
    min_span_words: Optional[int] = None,
    min_vocab_token_chars: Optional[int] = None,
    stop_words: Optional[Iterable[str]] = None,
    tokenizer: Optional[TokenizerMode] = None,
    expand_spans: Optional[bool] = None,
    span_expansion_regex: Optional[SpanExpansionRegex] = None,
) -> list[SourceHighlights]:
    """Highlight ``answer`` in many sources at once, best-supported sources first.

    Each source gets exactly the spans :func:`find_answer_highlights` returns for it; the
    answer is tokenized once for all of them.

    Parameters
    ----------
    answer : str
        The generated answer.
    sources : sequence of str, SourceDocument or SourceChunk
        The retrieved texts. Spans of a :class:`~citekit.results.SourceChunk` are offsets
        into its parent document (``doc_char_start`` added), like every citekit offset.
    keep_longest_only, options, neighborhood_tokens, min_span_words, \
min_vocab_token_chars, stop_words, tokenizer, expand_spans, span_expansion_regex
        As in :func:`find_answer_highlights`.

    Returns
    -------
    list of SourceHighlights
        One record per source with at least one span, sorted by ``evidence`` (descending),
        ties by ``source_index``.

    Raises
    ------
    TypeError
        If ``answer`` is not a ``str``, ``sources`` is not a sequence or holds something
        other than ``str`` / ``SourceDocument`` / ``SourceChunk``.
    ValueError
        As in :func:`find_answer_highlights`.

    Examples
    --------
    >>> sources = [
    ...     "Opening hours are Monday to Friday.",
    ...     "Refunds: unused items can be returned within 30 days.",
    ... ]
    >>> ranked = highlight_sources("Unused items can be returned within 30 days.", sources)
    >>> [(record.source_index, record.texts) for record in ranked]
    [(1, ('Refunds: unused items can be returned within 30 days.',))]
    """
    from citekit.results import SourceChunk, SourceDocument

    check_str(answer, "answer")
    if isinstance(sources, (str, bytes)) or not isinstance(sources, Sequence):
        raise TypeError(f"sources must be a sequence of texts, got {type(sources).__name__}")
    check_bool(keep_longest_only, "keep_longest_only")
    resolved = _resolve_options(
        options,
        neighborhood_tokens=neighborhood_tokens,
        min_span_words=min_span_words,
        min_vocab_token_chars=min_vocab_token_chars,
        stop_words=stop_words,
        tokenizer=tokenizer,
        expand_spans=expand_spans,
        span_expansion_regex=span_expansion_regex,
    )
    texts: list[tuple[str, Optional[str], int]] = []
    for index, source in enumerate(sources):
        if isinstance(source, str):
            texts.append((source, None, 0))
        elif isinstance(source, SourceDocument):
            texts.append((source.text, source.id, 0))
        elif isinstance(source, SourceChunk):
            texts.append((source.text, source.source_id, source.doc_char_start))
        else:
            raise TypeError(
                f"sources[{index}] must be a str, SourceDocument or SourceChunk, "
                f"got {type(source).__name__}"
            )
    if not answer:
        return []
    prepared_answer = _PreparedAnswer(answer, resolved)
    records = []
    for index, (text, source_id, offset) in enumerate(texts):
        if not text:
            continue
        spans, evidence = _highlight_chunk(
            prepared_answer, text, resolved, keep_longest_only, with_evidence=True
        )
        if spans:
            records.append(
                SourceHighlights(
                    source_index=index,
                    source_id=source_id,
                    spans=tuple((start + offset, end + offset) for start, end in spans),
                    texts=tuple(text[start:end] for start, end in spans),
                    evidence=evidence,
                )
            )
    records.sort(key=lambda record: (-record.evidence, record.source_index))
    return records


def warmup() -> None:
    """Build the character tables and compile (or load) the highlighter's kernels now.

    The first highlight in a process otherwise pays this once (about 0.2 s with the JIT compiler's
    on-disk cache warm, a few seconds without).

    Examples
    --------
    >>> warmup()
    """
    for tokenizer in _TOKENIZER_MODES:
        highlight_sources("warm up the kernels", ["warm up the kernels\nnow"], tokenizer=tokenizer)


# ----------------------------------------------------------------------------------------
# options


def _lowercase_stop_words(stop_words: Any) -> frozenset[str]:
    if isinstance(stop_words, (str, bytes)) or not isinstance(stop_words, Iterable):
        raise TypeError(
            f"stop_words must be an iterable of str (e.g. a set), got {type(stop_words).__name__}"
        )
    words = []
    for word in stop_words:
        if not isinstance(word, str):
            raise TypeError(f"stop_words must hold str items, got {type(word).__name__}")
        words.append(word.lower())
    return frozenset(words)


def _compile_expansion_regex(span_expansion_regex: Any) -> Pattern[str]:
    if isinstance(span_expansion_regex, re.Pattern):
        if not isinstance(span_expansion_regex.pattern, str):
            raise TypeError("span_expansion_regex must be a str pattern, got a bytes pattern")
        return span_expansion_regex
    check_str(span_expansion_regex, "span_expansion_regex")
    if not span_expansion_regex:
        raise ValueError("span_expansion_regex must not be empty")
    try:
        return re.compile(span_expansion_regex)
    except re.error as exc:
        raise ValueError(f"span_expansion_regex is not a valid regex: {exc}") from exc


def _resolve_options(options: Optional[HighlightOptions], **overrides: Any) -> HighlightOptions:
    if options is None:
        options = _DEFAULT_OPTIONS
    elif not isinstance(options, HighlightOptions):
        raise TypeError(f"options must be a HighlightOptions, got {type(options).__name__}")
    changes = {name: value for name, value in overrides.items() if value is not None}
    return dataclasses.replace(options, **changes) if changes else options


_DEFAULT_OPTIONS = HighlightOptions()


# ----------------------------------------------------------------------------------------
# text preparation


@lru_cache(maxsize=1)
def _character_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per-code-point tables derived from the running Python, built once (~0.2 s).

    ``char_class``: ``WORD_BIT`` where ``re`` matches ``\\w``, ``SPACE_BIT`` where it matches
    ``\\s``, so token boundaries are exactly those of ``re.finditer(r"\\w+", text)``.
    ``lower``: the code point of ``chr(c).lower()``, exact wherever lower-casing is one
    character for one character without context (all but U+0130 and U+03A3, which
    :class:`_TokenizedText` lower-cases token by token).
    """
    from citekit.kernels._highlight import SPACE_BIT, WORD_BIT

    every_char = np.arange(0x110000, dtype=np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
    char_class = np.zeros(0x110000, np.uint8)
    for match in re.finditer(r"\w+", every_char):
        char_class[match.start():match.end()] |= WORD_BIT
    for match in re.finditer(r"\s+", every_char):
        char_class[match.start():match.end()] |= SPACE_BIT
    lower = _code_points(every_char.replace("\u0130", "i").lower()).copy()
    return char_class, lower


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


_NO_SPECIALS = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.uint32))


class _TokenizedText:
    """Tokens of one text (answer or chunk) with their lower-cased forms and breaks."""

    __slots__ = ("starts", "ends", "pool", "pool_starts", "pool_ends", "hashes",
                 "gap_breaks", "punctuation")

    def __init__(self, text: str, char_mode: bool) -> None:
        from citekit.kernels._highlight import scan_tokens

        specials = _NO_SPECIALS
        if "\u0130" in text or "\u03a3" in text:
            # tokens whose lower-casing is not one character per character, lower-cased
            # as whole tokens like str.lower() on each token does
            pattern = _IRREGULAR_CHAR_RE if char_mode else _IRREGULAR_WORD_RE
            matches = list(pattern.finditer(text))
            pieces = [match.group().lower() for match in matches]
            specials = (
                np.array([match.start() for match in matches], np.int64),
                np.array([len(piece) for piece in pieces], np.int64),
                _code_points("".join(pieces)),
            )
        char_class, lower = _character_tables()
        (self.starts, self.ends, self.pool, self.pool_starts, self.pool_ends, self.hashes,
         self.gap_breaks, self.punctuation) = scan_tokens(
            _code_points(text), char_class, lower, char_mode, *specials
        )


class _StopWordTable:
    """Stop words interned for :func:`~citekit.kernels._highlight.lookup_spans`."""

    def __init__(self, stop_words: frozenset[str]) -> None:
        from citekit.kernels._highlight import hash_spans, intern_spans

        words = sorted(stop_words)
        lengths = np.array([len(word) for word in words], np.int64)
        self.ends = np.cumsum(lengths)
        self.starts = self.ends - lengths
        # a writable copy, like the text pools, so the kernels compile one signature
        self.pool = _code_points("".join(words)).copy()
        self.hashes = hash_spans(self.pool, self.starts, self.ends)
        _, self.first_index, self.table = intern_spans(
            self.pool, self.starts, self.ends, self.hashes
        )


@lru_cache(maxsize=16)
def _stop_word_table(stop_words: frozenset[str]) -> _StopWordTable:
    return _StopWordTable(stop_words)


class _PreparedAnswer:
    """The answer tokenized and interned once, reused for every chunk."""

    def __init__(self, answer: str, options: HighlightOptions) -> None:
        from citekit.kernels._highlight import intern_spans

        text = _normalize(answer).text if options.normalize else answer
        self.tokens = _TokenizedText(text, options.tokenizer == "char")
        tokens = self.tokens
        self.ids, self.first_index, self.table = intern_spans(
            tokens.pool, tokens.pool_starts, tokens.pool_ends, tokens.hashes
        )
        self.n_ids = int(self.first_index.shape[0])


def _normalize(text: str) -> Any:
    from citekit.normalize import normalize_text

    return normalize_text(text)


# ----------------------------------------------------------------------------------------
# the algorithm


def _highlight_chunk(
    answer: _PreparedAnswer,
    chunk_text: str,
    options: HighlightOptions,
    keep_longest_only: bool,
    with_evidence: bool = False,
) -> tuple[list[tuple[int, int]], int]:
    """Spans of one chunk and (``with_evidence``) the answer content tokens inside them."""
    from citekit.kernels._highlight import match_tokens, select_runs
    from citekit.kernels import matching_blocks

    if answer.tokens.starts.shape[0] == 0:
        return [], 0
    normalized = _normalize(chunk_text) if options.normalize else None
    chunk = _TokenizedText(
        chunk_text if normalized is None else normalized.text, options.tokenizer == "char"
    )
    if chunk.starts.shape[0] == 0:
        return [], 0
    if normalized is None:
        token_starts, token_ends = chunk.starts, chunk.ends
    else:
        token_starts = normalized.orig_starts[chunk.starts]
        token_ends = normalized.orig_ends[chunk.ends - 1]
    stops = _stop_word_table(options.stop_words)
    tokens = answer.tokens
    answer_ids, is_stop, compressed, positions = match_tokens(
        chunk.pool, chunk.pool_starts, chunk.pool_ends, chunk.hashes,
        tokens.pool, tokens.pool_starts, tokens.pool_ends, tokens.hashes,
        answer.first_index, answer.table,
        stops.pool, stops.starts, stops.ends, stops.hashes, stops.first_index, stops.table,
    )
    blocks = np.array(matching_blocks(answer.ids, compressed), np.int64)
    n_chars = len(chunk_text)
    _, char_spans = select_runs(
        blocks, positions, answer_ids, answer.n_ids, is_stop, chunk.pool_starts,
        chunk.pool_ends, chunk.gap_breaks, chunk.punctuation, token_starts, token_ends, n_chars,
        _kernel_options(options), options.max_highlight_ratio, keep_longest_only,
    )
    if char_spans.shape[0] == 0:
        return [], 0
    spans = list(map(tuple, char_spans.tolist()))
    if options.expand_spans:
        spans = _expand_spans(spans, chunk_text, options.span_expansion_regex)
    if normalized is not None:
        # normalized tokens can share an original character: keep spans disjoint
        spans = _merge_overlapping(spans)
    spans = _limit_highlight_ratio(spans, n_chars, options.max_highlight_ratio)
    if not with_evidence:
        return spans, 0
    lowered_lengths = chunk.pool_ends - chunk.pool_starts
    content = (answer_ids < answer.n_ids) & ~is_stop & (
        lowered_lengths >= options.min_vocab_token_chars
    )
    evidence = 0
    for start, end in spans:
        first = int(np.searchsorted(token_starts, start, side="left"))
        last = int(np.searchsorted(token_ends, end, side="right"))
        evidence += int(content[first:last].sum()) if last > first else 0
    return spans, evidence


@lru_cache(maxsize=64)
def _kernel_options(options: HighlightOptions) -> np.ndarray:
    """The integer options as ``select_runs`` takes them, capped to stay in int64."""
    from citekit.kernels._highlight import SELECT_RUNS_OPTIONS

    return np.array(
        [min(getattr(options, name), _OPTION_CAP) for name in SELECT_RUNS_OPTIONS], np.int64
    )


def _expand_spans(
    spans: list[tuple[int, int]], chunk_text: str, span_expansion_regex: SpanExpansionRegex
) -> list[tuple[int, int]]:
    """Grow spans to the regex units holding their first and last characters, then merge.

    Spans that overlap, touch, or are separated only by ``\\r`` / ``\\n`` characters merge,
    so consecutive highlighted lines read as one block.
    """
    pattern = _compile_expansion_regex(span_expansion_regex)
    if pattern.pattern == DEFAULT_SPAN_EXPANSION_REGEX:
        unit_of = _line_unit_finder(chunk_text)
    else:
        unit_of = _regex_unit_finder(chunk_text, pattern)
        if unit_of is None:
            return spans
    expanded = []
    for start, end in spans:
        start_unit = unit_of(start)
        end_unit = unit_of(max(start, end - 1))
        expanded.append(
            (start if start_unit is None else start_unit[0],
             end if end_unit is None else end_unit[1])
        )
    expanded.sort()
    merged = [expanded[0]]
    for start, end in expanded[1:]:
        previous_start, previous_end = merged[-1]
        if start <= previous_end or not chunk_text[previous_end:start].strip("\r\n"):
            merged[-1] = (previous_start, max(previous_end, end))
        else:
            merged.append((start, end))
    return merged


def _line_unit_finder(chunk_text: str) -> Any:
    """Unit lookup for the default regex ``[^\\r\\n]+``: the line around a position.

    Searches outward from the position instead of scanning the whole chunk with the regex;
    there are at most a few spans per answer sentence, so this is the cheaper way.
    """
    breaks = "\n\r" if "\r" in chunk_text else "\n"

    def unit_of(position: int) -> Optional[tuple[int, int]]:
        if chunk_text[position] in "\r\n":
            return None  # a line break belongs to no unit
        start = max(chunk_text.rfind(char, 0, position) for char in breaks) + 1
        end = len(chunk_text)
        for char in breaks:
            found = chunk_text.find(char, position, end)
            if found >= 0:
                end = found
        return start, end

    return unit_of


def _regex_unit_finder(chunk_text: str, pattern: Pattern[str]) -> Any:
    """Unit lookup over the non-empty matches of ``pattern``; ``None`` when there are none."""
    unit_starts, unit_ends = [], []
    for match in pattern.finditer(chunk_text):
        if match.start() < match.end():
            unit_starts.append(match.start())
            unit_ends.append(match.end())
    if not unit_starts:
        return None

    def unit_of(position: int) -> Optional[tuple[int, int]]:
        # matches of finditer are sorted and disjoint: only the last one starting at or
        # before the position can contain it
        index = bisect.bisect_right(unit_starts, position) - 1
        if index >= 0 and position < unit_ends[index]:
            return unit_starts[index], unit_ends[index]
        return None

    return unit_of


def _merge_overlapping(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _limit_highlight_ratio(
    spans: list[tuple[int, int]], n_chars: int, max_highlight_ratio: float
) -> list[tuple[int, int]]:
    """Keep only the (first) longest span when the spans cover too much of the chunk."""
    if n_chars <= 0 or not spans:
        return spans
    if sum(end - start for start, end in spans) / n_chars <= max_highlight_ratio:
        return spans
    return [max(spans, key=lambda span: span[1] - span[0])]
