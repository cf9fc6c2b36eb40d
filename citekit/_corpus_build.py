"""Reading a corpus's sources batch by batch: what :meth:`citekit.corpus.Corpus.build`
does before it windows and indexes them.

Sources may come as a stream (a generator, the lines of a JSON Lines file): they are read
once, a batch of consecutive sources at a time (at most ``batch_size`` characters
together, or one longer source alone). Each batch is tokenized and segmented with
:func:`~citekit._reading.tokenize_and_segment`, which treats every text on its own, so the
arrays of the batches, joined, are those of all the sources read at once: the corpus does
not depend on the batch size.

Memory: the texts of a batch are read (joined, encoded) and their tokens made in
temporary arrays whose size follows the batch, not the corpus; what is kept of each batch
is its tokens and sentences, in arrays of their exact size. They are joined at the end
array by array, each batch's part freed once copied, so that joining needs room for one
more of the arrays (the largest: the token ids, starts or ends), not a second copy of all.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from citekit._reading import _joined_offsets, tokenize_and_segment
from citekit.results import SourceChunk, SourceDocument

__all__ = ["DEFAULT_BATCH_CHARS", "read_sources", "source_count"]

# Characters of source text read per batch (a longer source alone). A batch's temporary
# memory is about 30 bytes per character (its tokens before they are kept, the joined and
# encoded text the kernels read), about 120 MB at this size; the kernels share a batch's
# work among their threads in pieces of 131,072 characters (32 here), so that larger
# batches would not read faster.
DEFAULT_BATCH_CHARS = 1 << 22

Record = SourceDocument | SourceChunk


def _batches(records: Iterable[Record], batch_size: int) -> Iterator[list[Record]]:
    """Consecutive records of at most ``batch_size`` characters together (or one)."""
    batch: list[Record] = []
    size = 0
    for record in records:
        length = len(record.text)
        if batch and size + length > batch_size:
            yield batch
            batch, size = [], 0
        batch.append(record)
        size += length
    if batch:
        yield batch


def _own(array: np.ndarray) -> np.ndarray:
    """``array`` in memory of its own. A view would keep the memory it views alive: a
    larger buffer, or the one buffer a tokenizer returns the ids, starts and ends of a
    batch in (citekit's does), which would then be freed only with the last of the three,
    so that joining the batches could not free each part as soon as it is copied."""
    if array.flags.owndata:
        return array
    return array.copy()


def _join(parts: list[np.ndarray]) -> np.ndarray:
    """The concatenation of ``parts``, emptying the list: each part is freed once it is
    copied, so that the parts and the result are not all alive together."""
    if len(parts) == 1:
        return parts.pop()
    total = sum(part.shape[0] for part in parts)
    joined = np.empty((total, *parts[0].shape[1:]), dtype=np.int64)
    parts.reverse()
    position = 0
    while parts:
        part = parts.pop()
        joined[position : position + part.shape[0]] = part
        position += part.shape[0]
        del part
    return joined


def read_sources(
    records: Iterable[Record],
    tokenizer: Any,
    segmenter: Any,
    *,
    batch_size: int,
    n_threads: int | None,
    show_progress: bool,
    total: int | None,
) -> tuple[tuple[Record, ...], tuple[np.ndarray, ...]]:
    """Read ``records`` batch by batch; return them and their tokens and sentences.

    Parameters
    ----------
    records : iterable of SourceDocument or SourceChunk
        Checked records (read once).
    tokenizer, segmenter
        The stages, as :func:`~citekit._reading.tokenize_and_segment` takes them.
    batch_size : int
        Characters per batch (checked by the caller).
    n_threads : int or None
        Threads each batch is read on.
    show_progress : bool
        Show a progress bar counting the sources (when tqdm is installed and the bar can be
        seen) once there is a second batch: a build of one batch is over before a bar
        would tell anything.
    total : int or None
        The number of records, when known (the bar's total).

    Returns
    -------
    records : tuple
        The records, in order.
    arrays : tuple of ndarray
        What :func:`~citekit._reading.tokenize_and_segment` returns for all their texts.

    Examples
    --------
    >>> from citekit._reading import default_segmenter, default_tokenizer
    >>> docs = [SourceDocument("a", "Hi there. Bye."), SourceDocument("b", "Ok.")]
    >>> records, arrays = read_sources(docs, default_tokenizer(), default_segmenter(),
    ...     batch_size=1, n_threads=None, show_progress=False, total=2)
    >>> [array.tolist() for array in arrays[3:]]
    [[0, 3, 4], [[0, 9], [10, 14], [0, 3]], [0, 2, 3]]
    """
    kept: list[Record] = []
    parts: list[list[np.ndarray]] = [[] for _ in range(6)]
    bar = None
    try:
        for number, batch in enumerate(_batches(records, batch_size)):
            if number == 1 and show_progress:
                bar = _progress_bar(total)
                if bar is not None:
                    bar.update(len(kept))
            arrays = tokenize_and_segment(
                tokenizer,
                segmenter,
                [record.text for record in batch],
                segmenter_name="source_segmenter",
                n_threads=n_threads,
            )
            for part, array in zip(parts, arrays):
                part.append(_own(array))
            kept.extend(batch)
            if bar is not None:
                bar.update(len(batch))
    finally:
        if bar is not None:
            bar.close()
    if not kept:
        return (), tokenize_and_segment(tokenizer, segmenter, [])
    ids, starts, ends, token_offsets, sentences, sentence_offsets = parts
    return tuple(kept), (
        _join(ids),
        _join(starts),
        _join(ends),
        _joined_offsets(token_offsets),
        _join(sentences),
        _joined_offsets(sentence_offsets),
    )


def _progress_bar(total: int | None) -> Any:
    """citekit's progress bar (:func:`citekit._progress.progress_bar`), counting documents."""
    from citekit._progress import progress_bar

    return progress_bar(
        total, True, unit="document", what="Corpus.build", description="citekit: preparing"
    )


def source_count(sources: Any) -> int | None:
    """The number of ``sources`` when it is a sequence (None for a stream)."""
    return len(sources) if isinstance(sources, Sequence) else None
