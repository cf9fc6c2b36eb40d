"""How a sharded corpus is cut and kept: runs of whole documents in their given order, from
a sequence (:func:`shard_bounds`) or a stream (:func:`stream_shards`), each shard saved as
a normal corpus directory beside a manifest (``shards.json``). The search over the shards
is :mod:`citekit.sharded`'s.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from citekit._source_records import (
    check_iterable,
    checked_records,
    jsonl_sources,
    sources_path,
)
from citekit._validation import check_int
from citekit.results import SourceChunk, SourceDocument

__all__ = [
    "document_key", "read_manifest", "shard_bounds", "shard_path", "source_stream",
    "stream_shards", "write_manifest",
]

# what a saved sharded corpus's directory holds besides its shards' directories
_MANIFEST = "shards.json"
_FORMAT = "citekit-sharded-corpus"
_VERSION = 1


def document_key(record: Any) -> str:
    return record.id if isinstance(record, SourceDocument) else record.source_id


def shard_path(directory: str, number: int) -> str:
    return os.path.join(directory, f"shard-{number:05d}")


def source_stream(sources: Any) -> Iterator[Any]:
    """The checked records of ``sources`` (a JSON Lines path or any iterable), read as
    they are used."""
    path = sources_path(sources)
    if path is not None:
        return checked_records(jsonl_sources(path))
    check_iterable(sources)
    return checked_records(sources)


def stream_shards(records: Iterable[Any], per_shard: int) -> Iterator[list[Any]]:
    """Consecutive runs of ``per_shard`` documents of ``records`` (the chunks of one
    document, consecutive, stay together; at least one run, maybe empty).

    Examples
    --------
    >>> from citekit.corpus import as_source_records
    >>> docs = as_source_records(["a", "b", "c"])
    >>> [[d.id for d in shard] for shard in stream_shards(docs, 2)]
    [['0', '1'], ['2']]
    >>> [len(shard) for shard in stream_shards([], 2)]
    [0]
    """
    shard: list[Any] = []
    n_documents = 0
    current: str | None = None
    ended: set[str] = set()  # documents of chunks whose run is over
    for position, record in enumerate(records):
        key = document_key(record)
        if key != current:
            if key in ended:
                raise ValueError(
                    f"sources[{position}] is a chunk of document {key!r}, whose other "
                    "chunks came before another document: in a stream, give the chunks of "
                    "a document one after another"
                )
            if current is not None and isinstance(shard[-1], SourceChunk):
                ended.add(current)
            if n_documents == per_shard:
                yield shard
                shard, n_documents = [], 0
            current = key
            n_documents += 1
        shard.append(record)
    yield shard


def shard_bounds(sources: Sequence[Any], n_shards: int) -> list[tuple[int, int]]:
    """Split ``sources`` into at most ``n_shards`` runs of about equal length, never
    between two chunks of one document.

    Parameters
    ----------
    sources : sequence of SourceDocument or SourceChunk
        The sources (:func:`~citekit.corpus.as_source_records`).
    n_shards : int
        The number of runs wanted (``>= 1``). Fewer come back when there are fewer
        sources, or when chunks of a document interleave with others' so that no cut
        fits; none is empty (but the one run of no sources).

    Returns
    -------
    list of (start, end)
        Half-open ranges of positions, in order, covering every source.

    Examples
    --------
    >>> from citekit.corpus import as_source_records
    >>> docs = as_source_records(["a", "b", "c", "d", "e"])
    >>> shard_bounds(docs, 2)
    [(0, 3), (3, 5)]
    >>> chunks = [SourceChunk(source_id="x", text="a", doc_char_start=0, doc_char_end=1),
    ...           SourceChunk(source_id="x", text="b", doc_char_start=1, doc_char_end=2),
    ...           SourceDocument(id="y", text="c")]
    >>> shard_bounds(chunks, 3)
    [(0, 2), (2, 3)]
    """
    n_shards = int(check_int(n_shards, "n_shards", minimum=1))
    n = len(sources)
    if n == 0:
        return [(0, 0)]
    last: dict[str, int] = {}
    for position, record in enumerate(sources):
        last[document_key(record)] = position
    # a cut before position c splits no document when no document seen before c has a
    # chunk at c or later
    reach = np.maximum.accumulate(
        np.array([last[document_key(record)] for record in sources], dtype=np.int64)
    )
    allowed = np.flatnonzero(reach[:-1] < np.arange(1, n)) + 1
    cuts = [0]
    for shard in range(1, n_shards):
        ideal = -(-shard * n // n_shards)
        at = int(np.searchsorted(allowed, max(ideal, cuts[-1] + 1)))
        if at < allowed.shape[0]:
            cuts.append(int(allowed[at]))
    cuts.append(n)
    return [(lo, hi) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo]


def write_manifest(directory: str, names: list[str]) -> None:
    manifest = {"format": _FORMAT, "version": _VERSION, "shards": names}
    target = os.path.join(directory, _MANIFEST)
    temporary = target + f".{uuid.uuid4().hex}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, target)


def read_manifest(directory: str) -> list[str]:
    target = os.path.join(directory, _MANIFEST)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"path {directory!r}: no such directory")
    if not os.path.isfile(target):
        raise FileNotFoundError(f"{target}: missing (not a sharded corpus saved by citekit)")
    try:
        with open(target, encoding="utf-8") as handle:
            manifest = json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{target}: unreadable ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
        raise ValueError(f"{target}: 'format' must be {_FORMAT!r}")
    if manifest.get("version") != _VERSION:
        raise ValueError(f"{target}: 'version' must be {_VERSION}, got {manifest.get('version')!r}")
    names = manifest.get("shards")
    if (
        not isinstance(names, list)
        or not names
        or not all(isinstance(n, str) and n and os.path.basename(n) == n for n in names)
    ):
        raise ValueError(f"{target}: 'shards' must be a non-empty list of directory names")
    return names
