"""Reading texts with the replaceable stages: segmenting and tokenizing them, checked.

The first step of the data flow, for the sources of a corpus and for an answer: the
default stages, :func:`segment_spans` (any segmenter's sentences as a validated array),
:func:`tokenize_and_segment` (the tokens and sentences of many texts, through the stages'
``tokenize_many`` / ``segment_many`` when both offer them) and the tokenizer signature a
prepared corpus records. Segmenters may return ``(start, end)`` tuples, or objects with
``char_start``/``char_end`` or ``doc_char_start``/``doc_char_end`` attributes (the
specification's segment records).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from citekit._joined_texts import JoinedTexts
from citekit._validation import check_spans, check_text_spans

__all__ = [
    "segment_spans",
    "tokenize_and_segment",
    "tokenizer_signature",
    "default_tokenizer",
    "default_segmenter",
]


_DEFAULTS: dict[str, Any] = {}


def default_tokenizer() -> Any:
    """citekit's :class:`~citekit.tokenizers.SimpleTokenizer` with the default configuration.

    One shared instance: its lookup tables and id cache are built once, not in every
    ``align_citations`` call (the tokenizer is immutable apart from those caches).
    """
    tokenizer = _DEFAULTS.get("tokenizer")
    if tokenizer is None:
        from citekit.tokenizers import SimpleTokenizer

        tokenizer = _DEFAULTS["tokenizer"] = SimpleTokenizer()
    return tokenizer


def default_segmenter() -> Any:
    """citekit's :class:`~citekit.segment.SentenceSegmenter` with the default options (one
    shared instance, its abbreviation tables built once)."""
    segmenter = _DEFAULTS.get("segmenter")
    if segmenter is None:
        from citekit.segment import SentenceSegmenter

        segmenter = _DEFAULTS["segmenter"] = SentenceSegmenter()
    return segmenter


def _offset(value: Any) -> int:
    if not isinstance(value, numbers.Integral):
        raise TypeError(
            f"a segmenter's span offsets must be integers, got {type(value).__name__}"
        )
    value = int(value)
    if not -(2**63) <= value < 2**63:  # (beyond any text; int64 could not hold it)
        raise ValueError(f"a segmenter's span offset {value} is beyond the text")
    return value


def _span_of(item: Any) -> tuple[int, int]:
    if isinstance(item, tuple) and len(item) == 2:
        return _offset(item[0]), _offset(item[1])
    for start_name, end_name in (("char_start", "char_end"), ("doc_char_start", "doc_char_end")):
        if hasattr(item, start_name) and hasattr(item, end_name):
            return _offset(getattr(item, start_name)), _offset(getattr(item, end_name))
    if isinstance(item, (list, np.ndarray)) and len(item) == 2:
        return _offset(item[0]), _offset(item[1])
    raise TypeError(
        "a segmenter must return (start, end) pairs or records with char_start/char_end; "
        f"got {type(item).__name__}"
    )


def segment_spans(segmenter: Any, text: str, *, name: str = "segmenter") -> np.ndarray:
    """Call ``segmenter.segment(text)`` and return its spans as an ``(n, 2)`` int64 array.

    Empty spans are dropped; spans must be in bounds, ordered and non-overlapping. A
    :class:`~citekit.segment.SentenceSegmenter` (or a subclass that keeps its ``segment``)
    is asked for :meth:`~citekit.segment.SentenceSegmenter.segment_array` instead, which
    gives the same spans without a tuple per sentence.

    Raises
    ------
    TypeError
        If ``segmenter`` has no ``segment`` method or returns something else.
    ValueError
        If a span is out of bounds, reversed, unordered or overlapping.

    Examples
    --------
    >>> class Halves:
    ...     def segment(self, text):
    ...         return [(0, 2), (3, 5)]
    >>> segment_spans(Halves(), "ab cd").tolist()
    [[0, 2], [3, 5]]
    """
    from citekit.segment import SentenceSegmenter

    kind = type(segmenter)
    if isinstance(segmenter, SentenceSegmenter) and kind.segment is SentenceSegmenter.segment:
        spans = segmenter.segment_array(text)
        if kind.segment_array is SentenceSegmenter.segment_array:
            return spans  # trimmed, non-empty, in bounds and ordered by construction
        try:
            array = np.asarray(spans)
            if array.size and array.dtype.kind not in "iu":
                raise TypeError
            spans = array.astype(np.int64, copy=False).reshape(-1, 2)
        except (TypeError, ValueError):
            raise TypeError(f"{name}.segment_array must return an (n, 2) integer array") from None
        return _checked_spans(spans, text, name)
    method = getattr(segmenter, "segment", None)
    if not callable(method):
        raise TypeError(
            f"{name} must have a segment(text) method returning (start, end) spans; "
            f"got {type(segmenter).__name__}"
        )
    items = method(text)
    spans = None
    if isinstance(items, list) and items and type(items[0]) is tuple:
        # the common case, (start, end) tuples of ints: convert in one go (anything else,
        # floats among them, goes through the checks of _span_of)
        try:
            array = np.array(items)
        except (TypeError, ValueError):
            array = None
        if (
            array is not None
            and array.ndim == 2
            and array.shape[1] == 2
            and array.dtype.kind in "iu"
        ):
            spans = array.astype(np.int64, copy=False)
    if spans is None:
        try:
            pairs = [_span_of(item) for item in items]
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{name}: {exc}") from None
        spans = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return _checked_spans(spans, text, name)


def _offers(stage: Any, many: str, singles: tuple[str, ...]) -> bool:
    """Whether ``stage`` offers the many-texts method ``many`` that agrees with its
    one-text methods ``singles``: it has it, and no class below the one that defines it
    overrides one of ``singles`` (an inherited ``tokenize_many`` would not know a
    subclass's own ``tokenize``)."""
    if not callable(getattr(stage, many, None)):
        return False
    classes = type(stage).__mro__

    def defined_by(name: str) -> type | None:
        return next((kind for kind in classes if name in vars(kind)), None)

    many_class = defined_by(many)
    if many_class is None:  # (set on the instance: it knows the instance's methods)
        return True
    single_classes = [defined_by(name) for name in singles]
    return all(kind is None or issubclass(many_class, kind) for kind in single_classes)


def _reads_many(tokenizer: Any, segmenter: Any) -> bool:
    """Whether both stages read many texts in one call (``tokenize_many`` and
    ``segment_many``, see :class:`~citekit.tokenizers.base.Tokenizer`)."""
    return _offers(tokenizer, "tokenize_many", ("tokenize",)) and _offers(
        segmenter, "segment_many", ("segment", "segment_array")
    )


# Texts read in one kernel call hold at most this many characters together (a longer text
# alone): the joined copy and each batch's arrays stay in a core's cache (at 1,000
# documents, 128k-character batches were 12% faster than 1M ones on one thread), and the
# joined text stays within code_units' limit, so that it is encoded once for both kernels.
_BATCH_CHARS = 1 << 17
# Texts of this many characters or more in all are read on several threads, batch by batch
# (both kernels release the GIL).
_PARALLEL_MIN_CHARS = 1 << 18


def _batches(texts: list[str]) -> list[tuple[int, int]]:
    """Consecutive ranges ``(first, last)`` of ``texts`` of at most :data:`_BATCH_CHARS`
    characters each (or one text)."""
    ranges = []
    first = 0
    size = 0
    for position, text in enumerate(texts):
        if position > first and size + len(text) > _BATCH_CHARS:
            ranges.append((first, position))
            first, size = position, 0
        size += len(text)
    ranges.append((first, len(texts)))
    return ranges


def tokenize_and_segment(
    tokenizer: Any,
    segmenter: Any,
    texts: list[str],
    *,
    segmenter_name: str = "segmenter",
    n_threads: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Tokens and sentence spans of every text, concatenated.

    The tokens are those of :func:`~citekit.tokenizers.base.tokenize_checked`, the spans
    those of :func:`segment_spans`, text after text; offsets stay relative to each text.
    When the tokenizer offers ``tokenize_many`` and the segmenter ``segment_many`` (as
    citekit's :class:`~citekit.tokenizers.SimpleTokenizer` and
    :class:`~citekit.segment.SentenceSegmenter` do: one kernel call each), they read the
    texts batch by batch (the per-text calls cost more than the work on a few documents),
    the batches of texts of 262,144 characters or more in all shared among ``n_threads``
    threads (default: the kernels' current thread count; the result does not depend on it),
    and what they return is checked as the one-text methods' output is (citekit's own is
    valid by construction); other stages are called text by text and their output
    checked.

    Returns
    -------
    tuple of ndarray
        ``token_ids, token_starts, token_ends`` (int64); the token offsets (text ``t`` has
        tokens ``token_offsets[t]:token_offsets[t + 1]``); the spans (``(n, 2)`` int64) and
        the span offsets.

    Raises
    ------
    TypeError, ValueError
        As :func:`~citekit.tokenizers.base.tokenize_checked` and :func:`segment_spans` (or
        :func:`~citekit.tokenizers.base.tokenize_many_checked` and the same checks of
        ``segment_many``).

    Examples
    --------
    >>> ids, starts, ends, token_offsets, spans, span_offsets = tokenize_and_segment(
    ...     default_tokenizer(), default_segmenter(), ["Hi there. Bye.", "", "Ok."])
    >>> starts.tolist(), token_offsets.tolist()
    ([0, 3, 10, 0], [0, 3, 3, 4])
    >>> spans.tolist(), span_offsets.tolist()
    ([[0, 9], [10, 14], [0, 3]], [0, 2, 2, 3])
    """
    if texts and _reads_many(tokenizer, segmenter):
        batches = _batches(texts)
        if len(batches) == 1:
            return _read_batch(tokenizer, segmenter, texts, None, segmenter_name)
        workers = _reading_threads(n_threads, texts)
        # Each batch's tokens go to a buffer allocated here, on the calling thread (room
        # for a token per four characters, as the kernel's own; it grows past that): the
        # batches are joined below and freed, and that memory is then reused by what the
        # caller allocates next (the corpus's index). Arrays allocated by reading threads
        # would stay in those threads' arenas of the C allocator: 20 MB more peak memory
        # at 1,000 documents.
        parts = [texts[first:last] for first, last in batches]
        buffers = [
            np.empty(3 * (sum(map(len, part)) // 4 + 16), dtype=np.int64) for part in parts
        ]

        results: list[Any] = [None] * len(parts)

        def read(number: int) -> None:
            results[number] = _read_batch(
                tokenizer, segmenter, parts[number], buffers[number], segmenter_name
            )

        from citekit._jit import share_work

        share_work(workers, len(parts), read)
        ids, starts, ends, spans = (
            np.concatenate([result[k] for result in results]) for k in (0, 1, 2, 4)
        )
        return (
            ids,
            starts,
            ends,
            _joined_offsets([result[3] for result in results]),
            spans,
            _joined_offsets([result[5] for result in results]),
        )
    from citekit.tokenizers.base import tokenize_checked

    token_parts = []
    span_parts = []
    for text in texts:
        token_parts.append(tokenize_checked(tokenizer, text))
        span_parts.append(segment_spans(segmenter, text, name=segmenter_name))

    def concat(parts: list[np.ndarray], empty_shape: tuple[int, ...]) -> np.ndarray:
        if not parts:
            return np.zeros(empty_shape, dtype=np.int64)
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.int64)

    token_offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(part) for part in token_parts], out=token_offsets[1:])
    span_offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(part) for part in span_parts], out=span_offsets[1:])
    return (
        concat([t.token_ids for t in token_parts], (0,)),
        concat([t.starts for t in token_parts], (0,)),
        concat([t.ends for t in token_parts], (0,)),
        token_offsets,
        concat(span_parts, (0, 2)),
        span_offsets,
    )


def _read_batch(
    tokenizer: Any,
    segmenter: Any,
    texts: list[str],
    buffer: np.ndarray | None,
    segmenter_name: str,
) -> tuple[np.ndarray, ...]:
    """Tokens and spans of ``texts`` from the stages' many-texts methods (joined once for
    both): the tokens in ``buffer`` if the tokenizer is citekit's (None: arrays of their
    own)."""
    from citekit.tokenizers.base import tokenize_many_checked

    batch = JoinedTexts(texts)  # (encoded once too: code_units keeps it for the segmenter)
    return (
        *tokenize_many_checked(tokenizer, batch, out=buffer),
        *_segment_many_checked(segmenter, batch, segmenter_name),
    )


def _segment_many_checked(
    segmenter: Any, texts: JoinedTexts, name: str
) -> tuple[np.ndarray, np.ndarray]:
    """``segmenter.segment_many(texts)``: citekit's as it is (valid by construction),
    another's checked as :func:`segment_spans` checks ``segment`` (empty spans dropped)."""
    from citekit.segment import SentenceSegmenter

    method = segmenter.segment_many
    if getattr(method, "__func__", None) is SentenceSegmenter.segment_many:
        return method(texts)  # type: ignore[no-any-return]
    where = f"{name}.segment_many"
    result = method(texts)
    try:
        spans, offsets = result
        spans = np.asarray(spans)
        offsets = np.asarray(offsets)
    except (TypeError, ValueError):
        raise TypeError(
            f"{where} must return (spans, offsets); got {type(result).__name__}"
        ) from None
    if spans.size == 0:
        spans = np.zeros((0, 2), dtype=np.int64)
    if (spans.size and spans.dtype.kind not in "iu") or (
        offsets.size and offsets.dtype.kind not in "iu"
    ):
        raise TypeError(f"{where} must return integer arrays")
    if spans.ndim != 2 or spans.shape[1] != 2:
        raise ValueError(f"{where} returned spans of shape {spans.shape}, not (n, 2)")
    spans = np.ascontiguousarray(spans, dtype=np.int64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n_spans = spans.shape[0]
    check_text_spans(
        spans[:, 0], spans[:, 1], offsets, texts, where, empty="skip", item="sentence"
    )
    nonempty = spans[:, 1] > spans[:, 0]
    if not nonempty.all():
        kept_before = np.zeros(n_spans + 1, dtype=np.int64)  # spans kept before each one
        np.cumsum(nonempty, out=kept_before[1:])
        spans, offsets = spans[nonempty], kept_before[offsets]
    return spans, offsets


def _reading_threads(n_threads: int | None, texts: list[str]) -> int:
    """Threads :func:`tokenize_and_segment` reads ``texts`` on: one below
    :data:`_PARALLEL_MIN_CHARS` characters, else ``n_threads`` (default: the kernels' current
    thread count, which a caller running on one thread has set to 1)."""
    if sum(map(len, texts)) < _PARALLEL_MIN_CHARS:
        return 1
    if n_threads is not None:
        return n_threads
    from citekit._jit import current_threads

    return current_threads()


def _joined_offsets(parts: list[np.ndarray]) -> np.ndarray:
    """The offsets of consecutive batches' items as one array (each batch's offsets start
    at 0)."""
    shifted = [parts[0]]
    for part in parts[1:]:
        shifted.append(part[1:] + shifted[-1][-1])
    return np.concatenate(shifted)


def _checked_spans(spans: np.ndarray, text: str, name: str) -> np.ndarray:
    """``spans`` without empty ones, after checking bounds and order
    (:func:`~citekit._validation.check_spans`: empty spans are not checked but dropped)."""
    if spans.shape[0] == 0:
        return spans
    check_spans(
        spans[:, 0], spans[:, 1], name, n_chars=len(text), empty="skip", item="sentence",
        returned=True,
    )
    return spans[spans[:, 1] > spans[:, 0]]


def tokenizer_signature(tokenizer: Any) -> str:
    """A string that identifies a tokenizer's kind and configuration.

    A prepared corpus records it so that answers are never tokenized differently from the
    sources they are aligned with.

    Examples
    --------
    >>> class Words:
    ...     def tokenize(self, text):
    ...         return [], []
    >>> tokenizer_signature(Words()).endswith("Words")
    True
    """
    kind = type(tokenizer)
    config = getattr(tokenizer, "config", None)
    scheme = getattr(tokenizer, "id_scheme", None)
    # the repr of a configuration costs microseconds, and a corpus is built for every RAG
    # call: kept per (kind, configuration object, scheme) when the configuration cannot
    # change (a frozen dataclass of plain values); the entry holds the object so that its
    # id is not reused while the entry lives
    params = getattr(type(config), "__dataclass_params__", None)
    cacheable = (scheme is None or type(scheme) is str) and (
        config is None or (params is not None and params.frozen)
    )
    key = (kind, id(config), scheme)
    if cacheable:
        known = _SIGNATURES.get(key)
        if known is not None and known[0] is config:
            return known[1]
    signature = f"{kind.__module__}.{kind.__qualname__}"
    if config is not None:
        signature += f"({config!r})"
    if scheme is not None:  # how ids are made (a saved corpus must match it)
        signature += f"[ids: {scheme}]"
    if cacheable:
        if len(_SIGNATURES) >= 256:
            _SIGNATURES.clear()
        _SIGNATURES[key] = (config, signature)
    return signature


_SIGNATURES: dict[tuple[type, int, Any], tuple[Any, str]] = {}
