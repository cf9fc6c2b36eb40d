"""The sources of a saved corpus as files that can be memory-mapped (format version 2).

A corpus saved by :meth:`Corpus.save <citekit.corpus.Corpus.save>` keeps its sources out
of ``corpus.json``, so that :meth:`Corpus.load(path, mmap=True)
<citekit.corpus.Corpus.load>` reads nothing per source:

- ``sources_<blob>.bin``, for the blobs ``text``, ``id``, ``metadata`` and
  ``document_text``: every source's string, UTF-8 (a lone surrogate as its three-byte
  form, ``surrogatepass``), one after another; ``source_<blob>_bytes.npy`` (int64) the
  byte offset where each begins, and the end. A metadata entry is a JSON object (none for
  empty metadata); the document texts of chunks are stored once per distinct text.
- ``source_kinds.npy`` (uint8): :data:`CHUNK` for a :class:`SourceChunk`, with
  :data:`GIVEN_INDEX` when its ``source_index`` was given;
  ``source_document_text.npy`` (int64): the chunk's entry of ``document_text`` (-1: none).
- what the citation stages read per source (:class:`PerSource`), as int64 arrays:
  ``source_base_offsets`` (a chunk's ``doc_char_start``), ``source_indices`` and
  ``source_documents``.

:class:`MappedSources` is the read-only sequence of records over those files: a source is
decoded when it is read, so that a query touches the sources of its candidates only.
"""

from __future__ import annotations

import json
import mmap
import os
from collections import abc
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Sequence

import numpy as np

from citekit.results import SourceChunk, SourceDocument, _plain, _unchecked

__all__ = [
    "CHUNK",
    "GIVEN_INDEX",
    "MappedSources",
    "MappedStrings",
    "PerSource",
    "SOURCE_FILE_NAMES",
    "SourceFiles",
    "TEXT_ERRORS",
    "damaged",
    "per_source_arrays",
    "read_npy",
    "write_sources",
]

# UTF-8, except that a lone surrogate (a valid ``str`` character that UTF-8 cannot hold:
# broken JSON, Windows file names, cut UTF-16 bring them) is written as its three-byte
# form, which reading takes back
TEXT_ERRORS = "surrogatepass"

# bits of source_kinds.npy
CHUNK = 1
GIVEN_INDEX = 2

BLOBS = ("text", "id", "metadata", "document_text")
# the per-source arrays and their dtypes
SOURCE_ARRAYS = {
    "source_kinds": np.dtype(np.uint8),
    "source_document_text": np.dtype(np.int64),
    "source_base_offsets": np.dtype(np.int64),
    "source_indices": np.dtype(np.int64),
    "source_documents": np.dtype(np.int64),
}
SOURCE_FILE_NAMES = frozenset(
    [f"sources_{blob}.bin" for blob in BLOBS]
    + [f"source_{blob}_bytes.npy" for blob in BLOBS]
    + [f"{name}.npy" for name in SOURCE_ARRAYS]
)


def damaged(paths: Sequence[str], what: str) -> ValueError:
    """The error of a corpus file (or of one of two files that disagree) found damaged."""
    if len(paths) == 1:
        return ValueError(f"{paths[0]!r} is damaged: {what}")
    return ValueError(f"{' or '.join(map(repr, paths))} is damaged: {what}")


def array_path(directory: str, name: str) -> str:
    return os.path.join(directory, f"{name}.npy")


def read_npy(directory: str, name: str, mapped: bool = False) -> np.ndarray:
    """The array of ``name.npy`` (memory-mapped copy-on-write when ``mapped``: writable,
    so that numba types it as it types a built corpus's arrays); FileNotFoundError naming
    it when it is missing, ValueError naming it when it is not a ``.npy`` array."""
    path = array_path(directory, name)
    try:
        array = np.load(path, mmap_mode="c" if mapped else None, allow_pickle=False)
    except FileNotFoundError as error:
        said = " (corpus.json says the corpus has embeddings)" if name == "embeddings" else ""
        raise FileNotFoundError(
            error.errno,
            f"an array file of the saved corpus is missing ({name}.npy){said}",
            path,
        ) from None
    except (ValueError, EOFError, OSError) as error:
        raise damaged([path], str(error) or type(error).__name__) from error
    if not isinstance(array, np.ndarray):  # (an .npz archive under an .npy name)
        close = getattr(array, "close", None)
        if close is not None:
            close()
        raise damaged([path], "not a .npy array")
    if mapped:
        # a plain ndarray over the mapping (np.memmap's own methods would wrap every
        # result in a memmap): the kernels get the types a built corpus gives them
        array = np.asarray(array)
    return array


def exact_array(
    directory: str, name: str, dtype: np.dtype, mapped: bool, length: int | None = None
) -> np.ndarray:
    """A 1-D array file of exactly ``dtype`` (what :meth:`Corpus.save` writes; another
    type would be copied, or give the kernels other types) and ``length`` entries when
    given: header checks only."""
    array = read_npy(directory, name, mapped)
    path = array_path(directory, name)
    if array.ndim != 1:
        raise damaged([path], f"a {array.ndim}-D array where a 1-D one belongs")
    if array.dtype != dtype:
        wanted = f"integers ({dtype})" if dtype.kind in "iu" and array.dtype.kind not in "iu" \
            else str(dtype)
        raise damaged([path], f"holds {array.dtype} values, not {wanted}")
    if length is not None and array.shape[0] != length:
        raise damaged([path], f"{array.shape[0]} entries where {length} belong")
    return array


class PerSource(NamedTuple):
    """What the citation stages read per source (:class:`~citekit.corpus.Corpus`'s
    attributes of these names)."""

    source_ids: Sequence[str]
    source_indices: np.ndarray
    base_offsets: np.ndarray
    source_documents: np.ndarray
    chunks_share_documents: bool


def per_source_arrays(records: Sequence[SourceDocument | SourceChunk]) -> PerSource:
    """The :class:`PerSource` values of ``records``: each source's id (a chunk's
    ``source_id``), number (a chunk's ``source_index`` when given), offset base (a
    chunk's ``doc_char_start``) and document (its own number for a document, the first
    chunk's of its ``source_id`` for a chunk), and whether two sources are chunks of one
    document.

    Examples
    --------
    >>> chunks = [SourceChunk("d", "ab", 0, 2), SourceChunk("d", "cd", 2, 4, source_index=7)]
    >>> per = per_source_arrays([SourceDocument("x", "t"), *chunks])
    >>> per.source_ids, per.source_indices.tolist(), per.source_documents.tolist()
    (('x', 'd', 'd'), [0, 1, 7], [0, 1, 1])
    >>> per.base_offsets.tolist(), per.chunks_share_documents
    ([0, 0, 2], True)
    """
    source_ids = []
    source_indices = []
    base_offsets = []
    # the document of each source: its own for a SourceDocument, one per source_id for
    # the chunks (chunks of one document share it)
    documents = []
    chunk_documents: dict[str, int] = {}
    n_chunks = 0
    for position, source in enumerate(records):
        if isinstance(source, SourceDocument):
            source_ids.append(source.id)
            source_indices.append(position)
            base_offsets.append(0)
            documents.append(position)
        else:
            n_chunks += 1
            source_ids.append(source.source_id)
            source_indices.append(position if source.source_index is None else source.source_index)
            base_offsets.append(source.doc_char_start)
            documents.append(chunk_documents.setdefault(source.source_id, position))
    return PerSource(
        tuple(source_ids),
        np.array(source_indices, dtype=np.int64),
        np.array(base_offsets, dtype=np.int64),
        np.array(documents, dtype=np.int64),
        # (evidence of chunks of one document is compared by absolute offsets, and
        # max_citations_per_source counts the document)
        len(chunk_documents) < n_chunks,
    )


# -- writing ----------------------------------------------------------------------------


class _BlobWriter:
    """Strings appended to ``sources_<blob>.bin``, and where each begins; an OSError
    names the file (a full disk does not say which)."""

    def __init__(self, directory: str, blob: str) -> None:
        self.path = os.path.join(directory, f"sources_{blob}.bin")
        self.offsets = [0]
        self.handle = self._call(open, self.path, "wb")

    def _call(self, function: Callable[..., Any], *args: Any) -> Any:
        try:
            return function(*args)
        except OSError as error:
            if error.filename is not None:
                raise
            raise OSError(error.errno, error.strerror or str(error), self.path) from error

    def add(self, data: bytes) -> None:
        if data:
            self._call(self.handle.write, data)
        self.offsets.append(self.offsets[-1] + len(data))

    def close(self) -> np.ndarray:
        self._call(self.handle.close)
        return np.array(self.offsets, dtype=np.int64)


def _metadata_bytes(position: int, metadata: Mapping[str, Any]) -> bytes:
    if not metadata:
        return b""
    try:
        text = json.dumps(_plain(metadata), ensure_ascii=False)
    except TypeError as exc:
        raise TypeError(
            f"source metadata must be JSON-serializable to save a corpus "
            f"(sources[{position}]): {exc}"
        ) from None
    except (ValueError, RecursionError) as exc:  # (circular, or nested too deeply)
        raise ValueError(
            f"source metadata cannot be saved as JSON (sources[{position}]): "
            f"{exc or 'nested too deeply'}"
        ) from None
    return text.encode("utf-8", TEXT_ERRORS)


def write_sources(
    directory: str,
    records: Sequence[SourceDocument | SourceChunk],
    write_array: Callable[[str, np.ndarray], None],
) -> dict[str, Any]:
    """Write the source files of ``records`` into ``directory`` (arrays through
    ``write_array(path, array)``), one source at a time: memory holds one text, not the
    blobs. Returns what ``corpus.json`` keeps of them: ``n_sources``,
    ``n_document_texts`` and ``chunks_share_documents``. TypeError / ValueError when a
    source's metadata cannot be saved as JSON (naming the source)."""
    per = per_source_arrays(records)
    n_sources = len(records)
    kinds = np.zeros(n_sources, dtype=np.uint8)
    document_text = np.full(n_sources, -1, dtype=np.int64)
    writers = {}
    try:
        for blob in BLOBS:
            writers[blob] = _BlobWriter(directory, blob)
        document_entries: dict[str, int] = {}
        for position, record in enumerate(records):
            writers["text"].add(record.text.encode("utf-8", TEXT_ERRORS))
            writers["id"].add(per.source_ids[position].encode("utf-8", TEXT_ERRORS))
            writers["metadata"].add(_metadata_bytes(position, record.metadata))
            if isinstance(record, SourceChunk):
                kinds[position] = CHUNK | (GIVEN_INDEX if record.source_index is not None else 0)
                if record.document_text is not None:
                    entry = document_entries.get(record.document_text)
                    if entry is None:
                        entry = document_entries[record.document_text] = len(document_entries)
                        writers["document_text"].add(
                            record.document_text.encode("utf-8", TEXT_ERRORS)
                        )
                    document_text[position] = entry
        offsets = {blob: writer.close() for blob, writer in writers.items()}
    finally:
        for writer in writers.values():
            writer.handle.close()
    for blob in BLOBS:
        write_array(array_path(directory, f"source_{blob}_bytes"), offsets[blob])
    arrays = {
        "source_kinds": kinds,
        "source_document_text": document_text,
        "source_base_offsets": per.base_offsets,
        "source_indices": per.source_indices,
        "source_documents": per.source_documents,
    }
    for name, array in arrays.items():
        write_array(array_path(directory, name), array)
    return {
        "n_sources": n_sources,
        "n_document_texts": len(document_entries),
        "chunks_share_documents": per.chunks_share_documents,
    }


# -- reading ----------------------------------------------------------------------------


def _read_blob(path: str, mapped: bool) -> Any:
    """The bytes of a blob file: mapped (read-only) or read."""
    try:
        with open(path, "rb") as handle:
            if not mapped:
                return handle.read()
            if os.fstat(handle.fileno()).st_size == 0:
                return b""  # (an empty file cannot be mapped)
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError as error:
        raise FileNotFoundError(
            error.errno,
            f"a source file of the saved corpus is missing ({os.path.basename(path)})",
            path,
        ) from None


class SourceFiles:
    """The source files of a saved corpus of ``n_sources`` sources, mapped or read, with
    the checks that cost no more than a file header each: every file present, the
    arrays of their types and lengths, each blob's offsets starting at 0 and ending at
    its size. (:meth:`records` with ``checked`` makes the others.)"""

    def __init__(
        self, directory: str, n_sources: int, n_documents: int, save_id: str, mapped: bool
    ) -> None:
        self.directory = directory
        self.n_sources = n_sources
        self.n_documents = n_documents
        self.save_id = save_id
        self.mapped = mapped
        self.arrays = {
            name: exact_array(directory, name, dtype, mapped, n_sources)
            for name, dtype in SOURCE_ARRAYS.items()
        }
        self.blobs: dict[str, Any] = {}
        self.offsets: dict[str, np.ndarray] = {}
        for blob in BLOBS:
            name = f"source_{blob}_bytes"
            length = (n_documents if blob == "document_text" else n_sources) + 1
            offsets = exact_array(directory, name, np.dtype(np.int64), mapped, length)
            data = _read_blob(self.blob_path(blob), mapped)
            if offsets.shape[0] == 0 or offsets[0] != 0 or offsets[-1] != len(data):
                raise damaged(
                    [array_path(directory, name), self.blob_path(blob)],
                    f"the byte offsets must start at 0 and end at the file's size "
                    f"({len(data)} bytes)",
                )
            self.blobs[blob] = data
            self.offsets[blob] = offsets
        self.kinds = self.arrays["source_kinds"]
        self.document_text = self.arrays["source_document_text"]
        self.base_offsets = self.arrays["source_base_offsets"]
        self.source_indices = self.arrays["source_indices"]

    def blob_path(self, blob: str) -> str:
        return os.path.join(self.directory, f"sources_{blob}.bin")

    def __reduce__(self) -> tuple[Any, ...]:
        # mapped again where unpickled (a worker process), not copied
        return (_reopen, (self.directory, self.save_id))

    def string(self, blob: str, entry: int) -> str:
        """Entry ``entry`` of ``blob``, decoded."""
        offsets = self.offsets[blob]
        data = self.blobs[blob][int(offsets[entry]) : int(offsets[entry + 1])]
        try:
            return data.decode("utf-8", TEXT_ERRORS)  # type: ignore[no-any-return]
        except UnicodeDecodeError as error:
            raise damaged(
                [self.blob_path(blob)],
                f"entry {entry} is not UTF-8 (byte {int(offsets[entry]) + error.start}): "
                f"{error.reason}",
            ) from None

    def metadata(self, source: int) -> dict[str, Any]:
        offsets = self.offsets["metadata"]
        if offsets[source] == offsets[source + 1]:
            return {}
        text = self.string("metadata", source)
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise damaged(
                [self.blob_path("metadata")], f"entry {source} is not JSON: {error}"
            ) from None
        if not isinstance(value, dict):
            raise damaged(
                [self.blob_path("metadata")], f"entry {source} is not a JSON object"
            )
        return value

    def record(self, source: int, checked: bool = False) -> SourceDocument | SourceChunk:
        """Source ``source`` (``0 <= source < n_sources``), decoded; with ``checked``,
        built through the record's checks (a failed one names the source files)."""
        kind = int(self.kinds[source])
        values: dict[str, Any] = {
            "text": self.string("text", source),
            "metadata": self.metadata(source),
        }
        identifier = self.string("id", source)
        if kind == 0:
            if checked and self.document_text[source] != -1:
                raise damaged(
                    [array_path(self.directory, "source_document_text")],
                    f"source {source}, a document, has a document text",
                )
            values["id"] = identifier
            record_class: type = SourceDocument
        else:
            start = int(self.base_offsets[source])
            entry = int(self.document_text[source])
            if checked and (
                kind not in (CHUNK, CHUNK | GIVEN_INDEX) or not -1 <= entry < self.n_documents
            ):
                raise damaged(
                    [array_path(self.directory, "source_kinds"),
                     array_path(self.directory, "source_document_text")],
                    f"source {source} has kind {kind} and document text {entry}",
                )
            values.update(
                source_id=identifier,
                doc_char_start=start,
                doc_char_end=start + len(values["text"]),
                document_text=None if entry < 0 else self.string("document_text", entry),
                source_index=int(self.source_indices[source]) if kind & GIVEN_INDEX else None,
            )
            record_class = SourceChunk
        if not checked:
            return _unchecked(record_class, **values)  # type: ignore[no-any-return]
        try:
            return record_class(**values)  # type: ignore[no-any-return]
        except (TypeError, ValueError, OverflowError) as error:
            raise damaged(
                [array_path(self.directory, "source_base_offsets"), self.blob_path("text")],
                f"source {source}: {error}",
            ) from None

    def records(self, checked: bool = True) -> list[SourceDocument | SourceChunk]:
        """Every source (with ``checked``: each blob's offsets never decreasing too)."""
        if checked:
            for blob in BLOBS:
                offsets = self.offsets[blob]
                if np.any(offsets[1:] < offsets[:-1]):
                    raise damaged(
                        [array_path(self.directory, f"source_{blob}_bytes")],
                        "the byte offsets decrease",
                    )
        return [self.record(source, checked) for source in range(self.n_sources)]


def check_same_save(directory: str, mapped: str, found: Any) -> None:
    """ValueError unless the corpus at ``directory`` is the save ``mapped`` (its
    ``save_id``), which a pickled mapped corpus (or its sources) is mapped again from."""
    if found != mapped:
        raise ValueError(
            f"the corpus saved at {directory!r} was replaced since it was memory-mapped "
            f"(save {mapped!r}, now {found!r}): a mapped corpus pickles as its path"
        )


def _reopen(directory: str, save_id: str) -> SourceFiles:
    """The source files of the corpus saved at ``directory``, mapped again (unpickling);
    ValueError when it is no longer the save that was mapped."""
    meta_path = os.path.join(directory, "corpus.json")
    try:
        with open(meta_path, "rb") as handle:
            meta = json.loads(handle.read().decode("utf-8", TEXT_ERRORS))
        found = meta.get("save_id")
    except FileNotFoundError:
        raise FileNotFoundError(
            2, "the memory-mapped corpus is no longer there", directory
        ) from None
    except (ValueError, AttributeError):
        found = None
    check_same_save(directory, save_id, found)
    return SourceFiles(
        directory, meta["n_sources"], meta["n_document_texts"], save_id, mapped=True
    )


class _LazySequence(abc.Sequence):  # type: ignore[type-arg]
    """A read-only sequence whose items are decoded from :class:`SourceFiles` when read;
    slices are tuples, and it equals a tuple (or such a sequence) of equal items."""

    __slots__ = ("files",)
    # (citekit.results.AlignmentResult keeps such a sequence rather than copy it)
    _read_only_sequence = True

    def __init__(self, files: SourceFiles) -> None:
        self.files = files

    def _item(self, position: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        return self.files.n_sources

    def _position(self, key: Any) -> int:
        """The position ``key`` (an int, negative from the end) names."""
        try:
            position = int(key.__index__())
        except AttributeError:
            raise TypeError(
                f"{type(self).__name__} indices must be integers or slices, "
                f"not {type(key).__name__}"
            ) from None
        n = self.files.n_sources
        if position < 0:
            position += n
        if not 0 <= position < n:
            raise IndexError(f"{type(self).__name__} index out of range")
        return position

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return tuple(self._item(i) for i in range(*key.indices(self.files.n_sources)))
        return self._item(self._position(key))

    def __iter__(self) -> Iterator[Any]:
        return (self._item(i) for i in range(self.files.n_sources))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _LazySequence) and other.files is self.files:
            return True
        if not isinstance(other, (tuple, _LazySequence)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.files,))  # (the files pickle as their path)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.files.n_sources} sources, mapped from "
            f"{self.files.directory!r})"
        )


class MappedSources(_LazySequence):
    """The sources of a memory-mapped corpus: a read-only sequence of
    :class:`~citekit.results.SourceDocument` / :class:`~citekit.results.SourceChunk`,
    each decoded from the mapped files when read (not kept: read it again, decode it
    again). ``len``, indexing, slicing (a tuple), iteration and equality with a tuple of
    the same records work as on the tuple of a corpus in memory. Pickled, it is mapped
    again from its path.

    Examples
    --------
    >>> import tempfile, os
    >>> from citekit.corpus import Corpus
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     Corpus.build(["Revenue grew.", "Costs fell."]).save(folder)
    ...     sources = Corpus.load(folder, mmap=True).sources
    ...     print(len(sources), sources[1].text, sources == Corpus.load(folder).sources)
    2 Costs fell. True
    """

    __slots__ = ()

    def _item(self, position: int) -> SourceDocument | SourceChunk:
        return self.files.record(position)

    def text(self, source: int) -> str:
        """The text of source ``source`` (decoded without the rest of its record)."""
        return self.files.string("text", self._position(source))


class MappedStrings(_LazySequence):
    """The ids of a memory-mapped corpus's sources (a chunk's ``source_id``): a read-only
    sequence of ``str`` decoded when read."""

    __slots__ = ()

    def _item(self, position: int) -> str:
        return self.files.string("id", position)
