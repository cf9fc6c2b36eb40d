"""Reading and writing a saved :class:`~citekit.corpus.Corpus`: a directory of ``.npy``
arrays, the sources' files and one small ``corpus.json`` (the settings), nothing pickled.

Format version 2 (what :func:`write_corpus` writes) keeps the sources in files that can be
memory-mapped (:mod:`citekit._mapped_sources`) and every array of the index, so that a
corpus can be mapped with nothing computed and nothing read per source. Version 1 (the
sources in ``corpus.json``, the index built again from the tokens) is still read.

A save is atomic (written and flushed in a directory beside the target, which then
replaces it: :func:`write_corpus`) and lossless (lone surrogates included). Everything
read is checked before a corpus is made from it, and every check names the damaged file
(both files when two disagree). :meth:`Corpus.save
<citekit.corpus.Corpus.save>` and :meth:`Corpus.load <citekit.corpus.Corpus.load>` are
the entry points; the checks of the arrays (:func:`array_damage`) are also the
constructor's.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import shutil
import stat
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import numpy as np

from citekit import _mapped_sources
from citekit._mapped_sources import (
    TEXT_ERRORS as _TEXT_ERRORS,
    PerSource,
    SourceFiles,
    array_path as _array_path,
    damaged,
    exact_array,
    per_source_arrays,
    read_npy as _read_npy,
)
from citekit._validation import check_int
from citekit.index import IdfIndex
from citekit.results import SourceChunk, SourceDocument

__all__ = [
    "ARRAY_NAMES",
    "PASSAGE_ARRAY_NAMES",
    "LoadedCorpus",
    "array_damage",
    "corpus_file_names",
    "damaged",
    "load_sources",
    "read_corpus",
    "read_meta",
    "read_saved",
    "replace_directory",
    "shape_damage",
    "write_corpus",
]

FORMAT = "citekit-corpus"
FORMAT_VERSION = 2
# the versions read (1: the sources in corpus.json; it cannot be memory-mapped)
READ_VERSIONS = (1, 2)
# the corpus's arrays, one file each (``<name>.npy``)
ARRAY_NAMES = (
    "token_ids",
    "token_starts",
    "token_ends",
    "source_token_offsets",
    "passage_source",
    "passage_token_start",
    "passage_token_end",
    "passage_char_start",
    "passage_char_end",
    "passage_sentence_start",
    "passage_sentence_end",
)
# the rows of the passage array built by citekit.kernels._index.corpus_arrays, in order
PASSAGE_ARRAY_NAMES = (
    "passage_source",
    "passage_token_start",
    "passage_token_end",
    "passage_char_start",
    "passage_char_end",
    "passage_sentence_start",
    "passage_sentence_end",
)
# the index's arrays (``index_<name>.npy``), as IdfIndex.to_arrays names them (version 1),
# and every array of the index (version 2: mapped, nothing computed)
INDEX_ARRAY_NAMES = ("vocabulary", "indptr", "indices")
SAVED_INDEX_NAMES = IdfIndex._SAVED_NAMES


# -- writing ----------------------------------------------------------------------------

# corpus.json (and every text file) is UTF-8, except that a lone surrogate is written as
# its three-byte form (_TEXT_ERRORS), which reading takes back. JSON's ``\\uXXXX`` escapes
# could not carry them: a decoder joins an escaped high and low surrogate into one
# character, so two code points would load as one.


def corpus_file_names(has_embeddings: bool) -> frozenset[str]:
    """The names of the files a saved corpus consists of (those of version 1 are among
    them)."""
    names = {"corpus.json"}
    names.update(f"{name}.npy" for name in ARRAY_NAMES)
    names.update(f"index_{name}.npy" for name in SAVED_INDEX_NAMES)
    names.update(_mapped_sources.SOURCE_FILE_NAMES)
    if has_embeddings:
        names.add("embeddings.npy")
    return frozenset(names)


def write_corpus(
    directory: str,
    sources: Sequence[SourceDocument | SourceChunk],
    settings: Mapping[str, Any],
    arrays: Mapping[str, np.ndarray],
    index_arrays: Mapping[str, np.ndarray],
    embeddings: np.ndarray | None,
) -> None:
    """Write a corpus to ``directory`` in format version 2: ``arrays`` (by name, every
    one of :data:`ARRAY_NAMES`), the index's arrays (``index_<name>.npy``, every one of
    :data:`SAVED_INDEX_NAMES`), the embeddings when given, the sources' files
    (:func:`citekit._mapped_sources.write_sources`, one source at a time) and
    ``corpus.json`` with the ``settings`` (window size and stride, the tokenizer's
    signature), the number of sources and a random ``save_id`` (which a corpus mapped from
    the directory and pickled checks when it is mapped again).

    Atomic: the files are written (and flushed to disk) in a new directory beside
    ``directory``, which then takes its place (:func:`replace_directory`); a save that
    fails leaves what was at ``directory`` as it was. ``TypeError`` when a source's
    metadata is not JSON-serializable, ``ValueError`` when ``directory`` is a file or
    holds files a saved corpus does not (both checked before anything is written).
    """
    # (a symbolic link keeps pointing at the saved corpus: the directory it names is
    # the one replaced)
    target = os.path.realpath(directory)
    _check_target(directory, target)
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    staging = _new_sibling(target, "saving")
    try:
        if os.path.isdir(target):  # (a replaced corpus keeps its permissions)
            os.chmod(staging, stat.S_IMODE(os.stat(target).st_mode))
        for name in ARRAY_NAMES:
            _write_file(os.path.join(staging, f"{name}.npy"), arrays[name])
        for name in SAVED_INDEX_NAMES:
            _write_file(os.path.join(staging, f"index_{name}.npy"), index_arrays[name])
        if embeddings is not None:
            _write_file(os.path.join(staging, "embeddings.npy"), embeddings)
        counts = _mapped_sources.write_sources(
            staging, sources, lambda path, array: _write_file(path, array)
        )
        meta = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            **settings,
            "has_embeddings": embeddings is not None,
            **counts,
            "save_id": secrets.token_hex(8),
        }
        meta_bytes = json.dumps(meta, ensure_ascii=False).encode("utf-8", _TEXT_ERRORS)
        _write_file(os.path.join(staging, "corpus.json"), meta_bytes)
        _sync_files(staging)
        replace_directory(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


# what file browsers leave in a folder that was looked at (removed with a replaced corpus)
_DISPOSABLE = frozenset({".DS_Store", "Thumbs.db"})


def _check_target(directory: str, target: str) -> None:
    """Refuse a ``directory`` that is a file or holds files a saved corpus does not (a
    save replaces the whole directory: it never deletes what it did not write)."""
    if not os.path.lexists(target):
        return
    if not os.path.isdir(target):
        raise ValueError(f"path {directory!r} is a file, not a directory to save a corpus to")
    foreign = sorted(set(os.listdir(target)) - corpus_file_names(True) - _DISPOSABLE)
    if foreign:
        shown = ", ".join(map(repr, foreign[:3])) + (", ..." if len(foreign) > 3 else "")
        raise ValueError(
            f"path {directory!r} holds files that are not a saved corpus's ({shown}); save "
            "to a new or empty directory, or over a saved corpus (which is replaced)"
        )


def _new_sibling(target: str, purpose: str) -> str:
    """A new, empty directory beside ``target`` (hidden, named after it and ``purpose``)
    with the permissions a new directory gets."""
    parent, name = os.path.split(target)
    while True:
        sibling = os.path.join(parent, f".{name}.{purpose}-{secrets.token_hex(4)}")
        try:
            os.mkdir(sibling)
        except FileExistsError:
            continue
        return sibling


def _unused_sibling(target: str, purpose: str) -> str:
    """A name beside ``target`` that nothing has (for a directory renamed to it)."""
    parent, name = os.path.split(target)
    while True:
        sibling = os.path.join(parent, f".{name}.{purpose}-{secrets.token_hex(4)}")
        if not os.path.lexists(sibling):
            return sibling


def _write_file(path: str, content: np.ndarray | bytes) -> None:
    """Write an array (``.npy``, never pickled) or bytes to ``path``; an ``OSError`` names
    the file (a full disk does not say which)."""
    try:
        with open(path, "wb") as handle:
            if isinstance(content, bytes):
                handle.write(content)
            else:
                np.save(handle, content, allow_pickle=False)
    except OSError as error:
        if error.filename is not None:
            raise
        raise OSError(error.errno, error.strerror or str(error), path) from error


def _sync_files(directory: str) -> None:
    """Flush every file of ``directory`` and the directory itself to disk, so that after a
    crash of the system the renamed directory holds whole files.

    The files are flushed from one thread each, at once: the file system then commits
    them together (one disk round trip, a few ms, where flushing them one after another
    took about 10 ms per file on an ext4 disk).
    """
    from concurrent.futures import ThreadPoolExecutor

    paths = [os.path.join(directory, name) for name in os.listdir(directory)]
    with ThreadPoolExecutor(max_workers=max(1, len(paths))) as pool:
        list(pool.map(_sync_file, paths))  # (list: a failure raises here)
    _sync_directory(directory)


def _sync_file(path: str) -> None:
    # (opened for writing: Windows flushes only such a file)
    descriptor = os.open(path, os.O_RDWR)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _sync_directory(path: str) -> None:
    """Flush a directory's entries to disk (where the system allows opening one)."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:  # (Windows cannot open a directory; its renames are durable)
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def replace_directory(staging: str, target: str) -> None:
    """Put the complete directory ``staging`` at ``target`` (same parent): a rename when
    ``target`` does not exist; otherwise ``target`` is renamed aside, ``staging`` renamed
    into its place and the old one removed. If the second rename fails the old directory
    is renamed back. (POSIX has no rename that swaps two directories, and replacing a
    non-empty one by rename fails; between the two renames ``target`` does not exist.)
    """
    parent = os.path.dirname(target)
    if not os.path.lexists(target):
        os.rename(staging, target)
        _sync_directory(parent)
        return
    aside = _unused_sibling(target, "replaced")
    os.rename(target, aside)
    try:
        os.rename(staging, target)
    except BaseException as error:
        try:
            os.rename(aside, target)
        except OSError:
            raise OSError(
                f"could not put the saved corpus at {target!r} nor the previous one back; "
                f"the previous one is at {aside!r}"
            ) from error
        raise
    _sync_directory(parent)
    shutil.rmtree(aside, ignore_errors=True)


# -- reading: every check names the damaged file ------------------------------------------


def read_meta(directory: str) -> tuple[dict[str, Any], str]:
    """``corpus.json`` of a saved corpus (a JSON object of citekit's format and version)
    and its path. ``FileNotFoundError`` when ``directory`` does not exist, ``ValueError``
    when it is not a saved corpus or ``corpus.json`` is damaged (naming the line)."""
    if not os.path.isdir(directory):
        if not os.path.exists(directory):  # (a dangling symbolic link too)
            raise FileNotFoundError(
                errno.ENOENT, "no saved corpus there (the directory does not exist)", directory
            )
        raise ValueError(f"{directory!r} is a file, not the directory of a saved corpus")
    meta_path = os.path.join(directory, "corpus.json")
    if not os.path.exists(meta_path):
        raise ValueError(f"{directory!r} is not a saved corpus (no corpus.json)")
    with open(meta_path, "rb") as handle:
        data = handle.read()
    try:
        meta = json.loads(data.decode("utf-8", _TEXT_ERRORS))
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise damaged(
            [meta_path], f"not UTF-8 at line {line} (byte {error.start}): {error.reason}"
        ) from None
    except ValueError as error:  # (JSONDecodeError names the line and column)
        raise damaged([meta_path], str(error)) from None
    except RecursionError:
        raise damaged([meta_path], "JSON nested too deeply") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{meta_path!r} is damaged: not a JSON object")
    version = meta.get("version")
    if meta.get("format") != FORMAT or type(version) is not int or version not in READ_VERSIONS:
        raise ValueError(
            f"{directory!r} holds format {meta.get('format')!r} "
            f"version {meta.get('version')!r}; "
            f"expected {FORMAT!r} version {' or '.join(map(str, READ_VERSIONS))}"
        )
    return meta, meta_path


def read_saved(
    directory: str,
    meta: Mapping[str, Any],
    meta_path: str,
    sources: Sequence[SourceDocument | SourceChunk],
) -> "LoadedCorpus":
    """The corpus of ``sources`` saved in format version 1: the settings of
    ``corpus.json`` and the arrays, checked (:func:`array_damage`, the index against the
    tokens, the embeddings)."""
    size, stride, signature, has_embeddings = _settings(meta, meta_path)
    arrays = {name: _load_array(directory, name) for name in ARRAY_NAMES}
    _check_arrays(directory, arrays, _text_lengths(sources), meta_path)
    n_passages = arrays["passage_source"].shape[0]
    index = _index_of_tokens(directory, arrays, _load_index(directory, n_passages))
    embeddings = _load_embeddings(directory, n_passages) if has_embeddings else None
    return LoadedCorpus(
        tuple(sources), arrays, index, size, stride, signature, embeddings, None, None
    )


def _settings(meta: Mapping[str, Any], meta_path: str) -> tuple[int, int, str, bool]:
    """The window size and stride, the tokenizer's signature and whether the corpus has
    embeddings, from ``corpus.json``."""
    size, stride = (
        _load_window(meta, name, meta_path)
        for name in ("window_size_sentences", "window_stride_sentences")
    )
    signature = _load_meta_value(meta, "tokenizer_signature", str, meta_path)
    has_embeddings = _load_meta_value(meta, "has_embeddings", bool, meta_path)
    return size, stride, signature, has_embeddings


def _text_lengths(sources: Sequence[SourceDocument | SourceChunk]) -> np.ndarray:
    return np.fromiter(
        (len(record.text) for record in sources), dtype=np.int64, count=len(sources)
    )


def _blame(
    directory: str, damage: tuple[tuple[str, ...], str], texts_path: str
) -> ValueError:
    """The error of :func:`array_damage`'s finding (``"sources"``: ``texts_path``)."""
    blamed, what = damage
    return damaged(
        [texts_path if name == "sources" else _array_path(directory, name) for name in blamed],
        what,
    )


def _check_arrays(
    directory: str, arrays: Mapping[str, np.ndarray], lengths: np.ndarray, texts_path: str
) -> None:
    damage = array_damage(lengths, arrays)
    if damage is not None:
        raise _blame(directory, damage, texts_path)


class LoadedCorpus(NamedTuple):
    """What :func:`read_corpus` reads: the attributes of a :class:`Corpus`."""

    sources: Sequence[SourceDocument | SourceChunk]  # a tuple, or MappedSources
    arrays: dict[str, np.ndarray]
    index: IdfIndex
    window_size_sentences: int
    window_stride_sentences: int
    tokenizer_signature: str
    embeddings: np.ndarray | None
    # the per-source values read (mapped), or None: computed from the sources
    per_source: PerSource | None
    # the save's random id (format version 2), which a mapped corpus pickles with its path
    save_id: str | None


def read_corpus(
    directory: str,
    *,
    mapped: bool,
    verify: bool,
    check_records: Callable[[Sequence[SourceDocument | SourceChunk]], None],
) -> LoadedCorpus:
    """Read the corpus saved at ``directory``: memory-mapped (``mapped``: arrays mapped
    copy-on-write, sources decoded when read) or read into memory; with ``verify``, every
    check of :func:`array_damage`, the index built again and compared, every source
    decoded and checked (``check_records`` too: the sources' ids), the embeddings finite.
    Without it, the checks that read no more than headers and single entries: the files
    present, their types and lengths, ``corpus.json``. A corpus saved in format version
    1 is always read and checked whole, and cannot be mapped (ValueError). Every error
    names the damaged file."""
    meta, meta_path = read_meta(directory)
    if meta["version"] == 1:
        if mapped:
            raise ValueError(
                f"{directory!r} holds a corpus saved in format version 1 (its sources in "
                "corpus.json), which cannot be memory-mapped: load it with mmap=False and "
                "save it again"
            )
        records = load_sources(meta, meta_path)
        try:  # (a corpus saved before sources sharing an id were refused)
            check_records(records)
        except ValueError as error:
            raise damaged([meta_path], str(error)) from None
        return read_saved(directory, meta, meta_path, records)
    return _read_version_2(directory, meta, meta_path, mapped, verify, check_records)


def _load_count(meta: Mapping[str, Any], key: str, meta_path: str) -> int:
    """A count of ``corpus.json`` (an int >= 0)."""
    if key not in meta:
        raise damaged([meta_path], f"no {key!r} value")
    try:
        return int(check_int(meta[key], key, minimum=0))
    except (TypeError, ValueError) as error:
        raise damaged([meta_path], str(error)) from None


_INT64 = np.dtype(np.int64)


def _read_version_2(
    directory: str,
    meta: Mapping[str, Any],
    meta_path: str,
    mapped: bool,
    verify: bool,
    check_records: Callable[[Sequence[SourceDocument | SourceChunk]], None],
) -> LoadedCorpus:
    size, stride, signature, has_embeddings = _settings(meta, meta_path)
    n_sources = _load_count(meta, "n_sources", meta_path)
    n_documents = _load_count(meta, "n_document_texts", meta_path)
    share = _load_meta_value(meta, "chunks_share_documents", bool, meta_path)
    save_id = _load_meta_value(meta, "save_id", str, meta_path)
    arrays = {name: exact_array(directory, name, _INT64, mapped) for name in ARRAY_NAMES}
    files = SourceFiles(directory, n_sources, n_documents, save_id, mapped)
    texts_path = files.blob_path("text")
    damage = shape_damage(n_sources, arrays)
    if damage is not None:
        raise _blame(directory, damage, texts_path)
    n_passages = arrays["passage_source"].shape[0]
    index_arrays = _saved_index(directory, n_passages, mapped)
    embeddings = None
    if has_embeddings:
        embeddings = _mapped_embeddings(directory, n_passages) if mapped else _load_embeddings(
            directory, n_passages
        )
    records = None
    if verify:
        records = files.records(checked=True)
        try:
            check_records(records)
        except ValueError as error:
            raise damaged([files.blob_path("id")], str(error)) from None
        _check_per_source(files, per_source_arrays(records), share, meta_path)
        _check_arrays(directory, arrays, _text_lengths(records), texts_path)
        rebuilt = _index_of_tokens(directory, arrays, _load_index(directory, n_passages))
        _check_saved_index(directory, rebuilt, index_arrays)
        if embeddings is not None and mapped:
            _check_finite(directory, embeddings)
    index = IdfIndex._from_saved(index_arrays)
    if not mapped:
        if records is None:
            records = files.records(checked=False)
        return LoadedCorpus(
            tuple(records), arrays, index, size, stride, signature, embeddings, None, save_id
        )
    per_source = PerSource(
        _mapped_sources.MappedStrings(files),
        files.source_indices,
        files.base_offsets,
        files.arrays["source_documents"],
        share,
    )
    return LoadedCorpus(
        _mapped_sources.MappedSources(files), arrays, index, size, stride, signature,
        embeddings, per_source, save_id,
    )


def _index_dtypes(n_passages: int) -> dict[str, np.dtype]:
    from citekit.kernels._retrieval import passage_dtype

    dtypes = {name: _INT64 for name in SAVED_INDEX_NAMES}
    dtypes["idf"] = np.dtype(np.float64)
    dtypes["postings_passages"] = np.dtype(passage_dtype(n_passages))
    return dtypes


def _saved_index(directory: str, n_passages: int, mapped: bool) -> dict[str, np.ndarray]:
    """Every array of the saved index (format version 2), with the checks of their
    headers and end entries: the types, a row per passage, a column per term."""
    dtypes = _index_dtypes(n_passages)
    arrays = {
        name: exact_array(directory, f"index_{name}", dtypes[name], mapped)
        for name in SAVED_INDEX_NAMES
    }
    n_terms = arrays["vocabulary"].shape[0]

    def path(name: str) -> str:
        return _array_path(directory, f"index_{name}")

    for name in ("document_frequency", "idf", "first_positions"):
        if arrays[name].shape[0] != n_terms:
            raise damaged(
                [path(name), path("vocabulary")],
                f"{arrays[name].shape[0]} entries for {n_terms} terms (the vocabulary)",
            )
    for pointers, entries, rows in (
        ("indptr", "indices", n_passages), ("postings_indptr", "postings_passages", n_terms)
    ):
        if arrays[pointers].shape[0] != rows + 1:
            raise damaged(
                [path(pointers)],
                f"{arrays[pointers].shape[0]} row offsets for {rows} rows (expected {rows + 1})",
            )
        if arrays[pointers][0] != 0 or arrays[pointers][-1] != arrays[entries].shape[0]:
            raise damaged(
                [path(pointers), path(entries)],
                "row offsets must start at 0 and end at the number of entries "
                f"({arrays[entries].shape[0]}); got {arrays[pointers][0]} ... "
                f"{arrays[pointers][-1]}",
            )
    if arrays["indices"].shape[0] != arrays["postings_passages"].shape[0]:
        raise damaged(
            [path("indices"), path("postings_passages")],
            f"{arrays['indices'].shape[0]} entries of the rows for "
            f"{arrays['postings_passages'].shape[0]} of their transpose",
        )
    return arrays


def _check_saved_index(
    directory: str, rebuilt: IdfIndex, saved: Mapping[str, np.ndarray]
) -> None:
    """The saved index is the one built again from the tokens (the arrays
    :func:`_index_of_tokens` does not compare)."""
    expected = rebuilt._saved_arrays()
    for name in ("postings_indptr", "postings_passages", "document_frequency", "idf",
                 "first_positions"):
        if not np.array_equal(expected[name], saved[name]):
            raise damaged(
                [_array_path(directory, f"index_{name}")],
                "not the index of the passages' tokens (built again and compared)",
            )


def _check_per_source(
    files: SourceFiles, per: PerSource, share: bool, meta_path: str
) -> None:
    """The per-source arrays saved are those of the sources."""
    for name, expected in (
        ("source_indices", per.source_indices),
        ("source_base_offsets", per.base_offsets),
        ("source_documents", per.source_documents),
    ):
        if not np.array_equal(files.arrays[name], expected):
            source = _first(files.arrays[name] != expected)
            raise damaged(
                [_array_path(files.directory, name)],
                f"source {source} has {files.arrays[name][source]}, not {expected[source]}",
            )
    if share != per.chunks_share_documents:
        raise damaged(
            [meta_path],
            f"'chunks_share_documents' is {share}, not what the sources say",
        )


def _mapped_embeddings(directory: str, n_passages: int) -> np.ndarray:
    """The saved embeddings, mapped: float32, a row per passage (header checks only)."""
    array = _read_npy(directory, "embeddings", True)
    if array.ndim != 2 or array.shape[0] != n_passages:
        raise damaged(
            [_array_path(directory, "embeddings")],
            f"shape {array.shape}; expected a row per passage ({n_passages} rows)",
        )
    if array.dtype != np.float32:
        raise damaged([_array_path(directory, "embeddings")], f"holds {array.dtype} values, "
                      "not float32")
    return array


def _check_finite(directory: str, embeddings: np.ndarray) -> None:
    # (min and max carry a NaN through: two passes without a temporary array)
    if embeddings.size and not (np.isfinite(embeddings.min()) and np.isfinite(embeddings.max())):
        raise damaged([_array_path(directory, "embeddings")], "holds non-finite values")


def _load_meta_value(meta: Mapping[str, Any], key: str, kind: type, meta_path: str) -> Any:
    """``meta[key]``, which must be of type ``kind``."""
    if key not in meta:
        raise damaged([meta_path], f"no {key!r} value")
    value = meta[key]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise damaged(
            [meta_path], f"{key!r} must be a {kind.__name__}, got {type(value).__name__}"
        )
    return value


def _load_window(meta: Mapping[str, Any], key: str, meta_path: str) -> int:
    """A window field of ``corpus.json``, under the rules of :meth:`Corpus.build` and
    :class:`~citekit.config.CitationConfig` (an int >= 1)."""
    if key not in meta:
        raise damaged([meta_path], f"no {key!r} value")
    try:
        return int(check_int(meta[key], key, minimum=1))
    except (TypeError, ValueError) as error:
        raise damaged([meta_path], str(error)) from None


def load_sources(
    meta: Mapping[str, Any], meta_path: str
) -> list[SourceDocument | SourceChunk]:
    """The source records of ``corpus.json`` (each entry a record's ``to_dict`` plus its
    ``"kind"``), checked as the records check their fields."""
    if "sources" not in meta:
        raise damaged([meta_path], "no 'sources' list")
    entries = meta["sources"]
    if not isinstance(entries, list):
        raise damaged(
            [meta_path], f"'sources' must be a list, got {type(entries).__name__}"
        )
    kinds = {"document": SourceDocument, "chunk": SourceChunk}
    records: list[SourceDocument | SourceChunk] = []
    for position, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise damaged(
                [meta_path],
                f"sources[{position}] must be a JSON object, got {type(entry).__name__}",
            )
        entry = dict(entry)
        if "kind" not in entry:
            raise damaged([meta_path], f"sources[{position}] has no 'kind'")
        kind = entry.pop("kind")
        record_class = kinds.get(kind) if isinstance(kind, str) else None
        if record_class is None:
            raise damaged(
                [meta_path],
                f"sources[{position}] has kind {kind!r}; expected 'document' or 'chunk'",
            )
        try:
            record = record_class.from_dict(entry)
        except (TypeError, ValueError, OverflowError) as error:
            raise damaged([meta_path], f"sources[{position}]: {error}") from None
        records.append(record)
    return records


def _load_array(directory: str, name: str) -> np.ndarray:
    """A 1-D integer array file as contiguous int64 (other dtypes are refused: a float,
    bool or string array is not what :meth:`Corpus.save` writes, and casting it would
    hide the damage)."""
    array = _read_npy(directory, name)
    if array.ndim != 1:
        raise damaged(
            [_array_path(directory, name)], f"a {array.ndim}-D array where a 1-D one belongs"
        )
    if not np.issubdtype(array.dtype, np.integer):
        raise damaged(
            [_array_path(directory, name)], f"holds {array.dtype} values, not integers"
        )
    if array.dtype == np.uint64 and array.size and array.max() > np.iinfo(np.int64).max:
        raise damaged([_array_path(directory, name)], "holds values beyond int64")
    return np.ascontiguousarray(array, dtype=np.int64)


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def shape_damage(
    n_sources: int, arrays: Mapping[str, np.ndarray]
) -> tuple[tuple[str, ...], str] | None:
    """The first way the lengths of the corpus ``arrays`` (by name) fail to fit each
    other and ``n_sources`` sources, as :func:`array_damage` says it; None when they fit.

    Checked: each array 1-D; the lengths (a token, source or passage each);
    ``source_token_offsets`` starting at 0 and ending at the number of tokens. Reads
    the arrays' headers and two entries: what a memory-mapped load checks.
    """
    for name in ARRAY_NAMES:
        if arrays[name].ndim != 1:
            return (name,), f"a {arrays[name].ndim}-D array where a 1-D one belongs"
    ids, starts, ends = arrays["token_ids"], arrays["token_starts"], arrays["token_ends"]
    n_tokens = ids.shape[0]
    if starts.shape != ends.shape:
        culprit = "token_ends" if starts.shape == ids.shape else "token_starts"
        return (culprit,), (
            f"{arrays[culprit].shape[0]} token offsets for {n_tokens} tokens (token_ids)"
        )
    if starts.shape != ids.shape:
        return ("token_ids",), (
            f"{n_tokens} token ids for {starts.shape[0]} token offsets (token_starts, "
            "token_ends)"
        )
    offsets = arrays["source_token_offsets"]
    if offsets.shape != (n_sources + 1,):
        return ("source_token_offsets", "sources"), (
            f"{offsets.shape[0]} source token offsets for {n_sources} sources "
            f"(expected {n_sources + 1})"
        )
    if offsets[0] != 0 or offsets[-1] != n_tokens:
        return ("source_token_offsets",), (
            f"source token offsets must start at 0, never decrease and end at the number "
            f"of tokens ({n_tokens}); got {offsets[0]} ... {offsets[-1]}"
        )
    # the number of passages is what most passage arrays say: the damaged one is the odd
    # one out (passage_source too)
    sizes = [arrays[name].shape[0] for name in PASSAGE_ARRAY_NAMES]
    n_passages = max(sizes, key=sizes.count)
    for name, size in zip(PASSAGE_ARRAY_NAMES, sizes):
        if size != n_passages:
            return (name,), (
                f"{size} entries for {n_passages} passages (the other passage arrays)"
            )
    return None


def array_damage(
    text_lengths: np.ndarray, arrays: Mapping[str, np.ndarray]
) -> tuple[tuple[str, ...], str] | None:
    """The first way the corpus ``arrays`` (1-D int64, by name) fail to fit each other
    and sources of ``text_lengths`` characters: the names of the arrays that may be at
    fault (``"sources"``: the sources' texts) and what is wrong; None when they fit.

    Checked: the lengths (:func:`shape_damage`); ``source_token_offsets`` never
    decreasing; each source's tokens within its text (``0 <= start <= end <=
    len(text)``), their starts never decreasing; passages source after source
    (``passage_source`` in range, never decreasing), their token ranges within their
    source's tokens, their character ranges within its text and ``0 <= sentence start
    <= sentence end``. All of this holds for a built corpus (its tokens are also
    non-empty and do not overlap, which is not needed here). Vectorized: a few ms for a
    million tokens.
    """
    n_sources = text_lengths.shape[0]
    damage = shape_damage(n_sources, arrays)
    if damage is not None:
        return damage
    starts, ends = arrays["token_starts"], arrays["token_ends"]
    n_tokens = starts.shape[0]
    offsets = arrays["source_token_offsets"]
    counts = np.diff(offsets)
    if np.any(counts < 0):
        return ("source_token_offsets",), (
            f"source token offsets must start at 0, never decrease and end at the number "
            f"of tokens ({n_tokens}); got {offsets[0]} ... {offsets[-1]}, reversed for "
            f"source {_first(counts < 0)}"
        )

    def source_of(token: int) -> int:
        return int(np.searchsorted(offsets, token, side="right")) - 1

    if n_tokens:
        # (one pass for each comparison of whole arrays; the bounds then need only each
        # source's first start and largest end)
        bad = starts[1:] < starts[:-1]
        if bad.any():
            # (each source's starts begin again from its text's first characters)
            boundaries = offsets[1:-1]
            bad[boundaries[(boundaries > 0) & (boundaries < n_tokens)] - 1] = False
            if bad.any():
                k = _first(bad) + 1
                return ("token_starts",), (
                    f"token {k} (of source {source_of(k)}) starts at {starts[k]}, before "
                    f"the token ahead of it ({starts[k - 1]})"
                )
        bad = starts > ends
        if bad.any():
            k = _first(bad)
            return ("token_starts", "token_ends"), (
                f"token {k} starts at {starts[k]}, after its end {ends[k]}"
            )
        holding = np.flatnonzero(counts)  # the sources with tokens
        firsts = offsets[holding]
        bad = starts[firsts] < 0
        if bad.any():
            k = int(firsts[_first(bad)])
            return ("token_starts",), f"token {k} starts at {starts[k]} (< 0)"
        bad = np.maximum.reduceat(ends, firsts) > text_lengths[holding]
        if bad.any():
            s = int(holding[_first(bad)])
            lo, hi = int(offsets[s]), int(offsets[s + 1])
            k = lo + _first(ends[lo:hi] > text_lengths[s])
            return ("token_ends", "sources"), (
                f"token {k} (of source {s}) ends at {ends[k]}, beyond its source's text of "
                f"{text_lengths[s]} characters"
            )

    source = arrays["passage_source"]
    n_passages = source.shape[0]
    if not n_passages:
        return None
    bad = (source < 0) | (source >= n_sources)
    if bad.any():
        p = _first(bad)
        return ("passage_source",), (
            f"passage {p} has source {source[p]}, not one of the {n_sources} sources"
        )
    bad = source[1:] < source[:-1]
    if bad.any():
        p = _first(bad) + 1
        return ("passage_source",), (
            f"passage {p} has source {source[p]}, after a passage of source {source[p - 1]} "
            "(the passages go source after source)"
        )

    def check_range(
        names: tuple[str, str], low: np.ndarray | int, high: np.ndarray | None, unit: str,
        high_name: str,
    ) -> tuple[tuple[str, ...], str] | None:
        first, last = arrays[names[0]], arrays[names[1]]
        bad = first < low
        if bad.any():
            p = _first(bad)
            floor = low if isinstance(low, int) else low[p]
            return (names[0],), (
                f"passage {p} (of source {source[p]}) starts at {unit} {first[p]}, before "
                f"{floor}"
            )
        bad = first > last
        if bad.any():
            p = _first(bad)
            return names, (
                f"passage {p} (of source {source[p]}) starts at {unit} {first[p]}, after "
                f"its end {last[p]}"
            )
        if high is not None:
            bad = last > high
            if bad.any():
                p = _first(bad)
                blamed = (names[1], "sources") if high_name == "text" else (names[1],)
                return blamed, (
                    f"passage {p} (of source {source[p]}) ends at {unit} {last[p]}, beyond "
                    f"its source's {high_name} ({high[p]})"
                )
        return None

    damage = check_range(
        ("passage_token_start", "passage_token_end"), offsets[source], offsets[source + 1],
        "token", "end of tokens",
    )
    if damage is None:
        damage = check_range(
            ("passage_char_start", "passage_char_end"), 0, text_lengths[source], "character",
            "text",
        )
    if damage is None:
        damage = check_range(
            ("passage_sentence_start", "passage_sentence_end"), 0, None, "sentence", ""
        )
    return damage


def _load_index(directory: str, n_passages: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The saved index's ``(vocabulary, indptr, indices)``, with a row per passage and
    columns of its vocabulary (what :func:`_index_of_tokens` compares; the index itself
    is built from the tokens)."""
    arrays = {name: _load_array(directory, f"index_{name}") for name in INDEX_ARRAY_NAMES}
    vocabulary, indptr, indices = (arrays[name] for name in INDEX_ARRAY_NAMES)
    paths = {name: _array_path(directory, f"index_{name}") for name in INDEX_ARRAY_NAMES}
    if vocabulary.size > 1 and np.any(vocabulary[1:] <= vocabulary[:-1]):
        raise damaged([paths["vocabulary"]], "the token ids are not sorted and distinct")
    if indptr.shape[0] != n_passages + 1:
        raise damaged(
            [paths["indptr"]],
            f"{indptr.shape[0]} row offsets for {n_passages} passages "
            f"(expected {n_passages + 1})",
        )
    if indptr[0] != 0 or indptr[-1] != indices.shape[0] or np.any(indptr[1:] < indptr[:-1]):
        raise damaged(
            [paths["indptr"], paths["indices"]],
            "row offsets must start at 0, never decrease and end at the number of "
            f"entries ({indices.shape[0]}); got {indptr[0]} ... {indptr[-1]}",
        )
    n_terms = vocabulary.shape[0]
    if indices.size and (indices.min() < 0 or indices.max() >= n_terms):
        raise damaged(
            [paths["indices"], paths["vocabulary"]],
            f"column numbers must lie in [0, {n_terms}) (the vocabulary's size); got "
            f"{indices.min()} ... {indices.max()}",
        )
    return vocabulary, indptr, indices


def _index_of_tokens(
    directory: str,
    arrays: Mapping[str, np.ndarray],
    saved: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> IdfIndex:
    """The index of the passages' tokens (built again: a few tens of ms for a million
    tokens), which must be the saved one (``(vocabulary, indptr, indices)``): the same
    vocabulary and rows."""
    from citekit.kernels._index import index_arrays

    parts = index_arrays(
        arrays["token_ids"], arrays["passage_token_start"], arrays["passage_token_end"]
    )
    vocabulary, _, (indptr, indices), *_ = parts
    saved_vocabulary, saved_indptr, saved_indices = saved
    paths = [_array_path(directory, f"index_{name}") for name in INDEX_ARRAY_NAMES]
    # (the tokens the index is built from: the ids, and the passages' token ranges)
    tokens_paths = [
        _array_path(directory, name)
        for name in ("token_ids", "passage_token_start", "passage_token_end")
    ]
    if not np.array_equal(vocabulary, saved_vocabulary):
        raise damaged(
            [paths[0], *tokens_paths],
            f"the index's vocabulary ({saved_vocabulary.shape[0]} ids) is not the distinct "
            f"token ids of the passages ({vocabulary.shape[0]})",
        )
    if not (np.array_equal(indptr, saved_indptr) and np.array_equal(indices, saved_indices)):
        lengths, saved_lengths = np.diff(indptr), np.diff(saved_indptr)
        differs = lengths != saved_lengths
        if not differs.any():  # same lengths: the first row holding another column
            entry = _first(indices != saved_indices)
            differs = np.zeros(lengths.shape[0], dtype=bool)
            differs[int(np.searchsorted(indptr, entry, side="right")) - 1] = True
        p = _first(differs)
        raise damaged(
            paths[1:] + tokens_paths,
            f"the index's row of passage {p} is not the distinct tokens of the passage "
            f"(tokens {arrays['passage_token_start'][p]} to "
            f"{arrays['passage_token_end'][p]})",
        )
    return IdfIndex._from_parts(*parts)


def _load_embeddings(directory: str, n_passages: int) -> np.ndarray:
    """The saved passage embeddings: finite floats, a row per passage (float32)."""
    array = _read_npy(directory, "embeddings")
    array_path = _array_path(directory, "embeddings")
    if array.ndim != 2 or array.shape[0] != n_passages:
        raise damaged(
            [array_path],
            f"shape {array.shape}; expected a row per passage ({n_passages} rows)",
        )
    if not np.issubdtype(array.dtype, np.floating):
        raise damaged([array_path], f"holds {array.dtype} values, not floats")
    _check_finite(directory, array)
    return np.ascontiguousarray(array, dtype=np.float32)
