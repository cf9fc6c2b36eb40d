"""Reading and writing a saved :class:`~citekit.corpus.Corpus`: a directory of ``.npy``
arrays and one ``corpus.json`` (the sources and settings), nothing pickled.

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
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from citekit._validation import check_int
from citekit.index import IdfIndex
from citekit.results import SourceChunk, SourceDocument

__all__ = [
    "ARRAY_NAMES",
    "PASSAGE_ARRAY_NAMES",
    "SavedCorpus",
    "array_damage",
    "corpus_file_names",
    "damaged",
    "load_sources",
    "read_meta",
    "read_saved",
    "replace_directory",
    "write_corpus",
]

FORMAT = "citekit-corpus"
FORMAT_VERSION = 1
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
# the index's arrays (``index_<name>.npy``), as IdfIndex.to_arrays names them
INDEX_ARRAY_NAMES = ("vocabulary", "indptr", "indices")


# -- writing ----------------------------------------------------------------------------

# corpus.json is UTF-8, except that a lone surrogate (a valid ``str`` character that UTF-8
# cannot hold: broken JSON, Windows file names, cut UTF-16 bring them) is written as its
# three-byte form, which reading takes back. JSON's ``\\uXXXX`` escapes could not carry
# them: a decoder joins an escaped high and low surrogate into one character, so two
# code points would load as one.
_TEXT_ERRORS = "surrogatepass"


def corpus_file_names(has_embeddings: bool) -> frozenset[str]:
    """The names of the files a saved corpus consists of."""
    names = {"corpus.json"}
    names.update(f"{name}.npy" for name in ARRAY_NAMES)
    names.update(f"index_{name}.npy" for name in INDEX_ARRAY_NAMES)
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
    """Write a corpus to ``directory``: ``arrays`` (by name, every one of
    :data:`ARRAY_NAMES`), the index's arrays (``index_<name>.npy``), the embeddings when
    given, and ``corpus.json`` with the ``settings`` (window size and stride, the
    tokenizer's signature) and the sources.

    Atomic: the files are written (and flushed to disk) in a new directory beside
    ``directory``, which then takes its place (:func:`replace_directory`); a save that
    fails leaves what was at ``directory`` as it was. ``TypeError`` when a source's
    metadata is not JSON-serializable, ``ValueError`` when ``directory`` is a file or
    holds files a saved corpus does not (both checked before anything is written).
    """
    try:
        text = json.dumps(_meta(sources, settings, embeddings), ensure_ascii=False)
    except TypeError as exc:
        raise TypeError(
            f"source metadata must be JSON-serializable to save a corpus: {exc}"
        ) from None
    except (ValueError, RecursionError) as exc:  # (circular, or nested too deeply)
        raise ValueError(
            f"source metadata cannot be saved as JSON: {exc or 'nested too deeply'}"
        ) from None
    meta_bytes = text.encode("utf-8", _TEXT_ERRORS)
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
        for name, array in index_arrays.items():
            _write_file(os.path.join(staging, f"index_{name}.npy"), array)
        if embeddings is not None:
            _write_file(os.path.join(staging, "embeddings.npy"), embeddings)
        _write_file(os.path.join(staging, "corpus.json"), meta_bytes)
        _sync_files(staging)
        replace_directory(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _meta(
    sources: Sequence[SourceDocument | SourceChunk],
    settings: Mapping[str, Any],
    embeddings: np.ndarray | None,
) -> dict[str, Any]:
    """What ``corpus.json`` holds."""
    source_entries = []
    for record in sources:
        entry = record.to_dict()
        entry["kind"] = "chunk" if isinstance(record, SourceChunk) else "document"
        source_entries.append(entry)
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        **settings,
        "has_embeddings": embeddings is not None,
        "sources": source_entries,
    }


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
    if meta.get("format") != FORMAT or meta.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"{directory!r} holds format {meta.get('format')!r} "
            f"version {meta.get('version')!r}; "
            f"expected {FORMAT!r} version {FORMAT_VERSION}"
        )
    return meta, meta_path


class SavedCorpus(NamedTuple):
    """What :func:`read_saved` reads and checks besides the sources."""

    arrays: dict[str, np.ndarray]
    index: IdfIndex
    window_size_sentences: int
    window_stride_sentences: int
    tokenizer_signature: str
    embeddings: np.ndarray | None


def read_saved(
    directory: str,
    meta: Mapping[str, Any],
    meta_path: str,
    sources: Sequence[SourceDocument | SourceChunk],
) -> SavedCorpus:
    """The settings of ``corpus.json`` and the arrays of a saved corpus of ``sources``,
    checked (:func:`array_damage`, the index against the tokens, the embeddings)."""
    size, stride = (
        _load_window(meta, name, meta_path)
        for name in ("window_size_sentences", "window_stride_sentences")
    )
    signature = _load_meta_value(meta, "tokenizer_signature", str, meta_path)
    has_embeddings = _load_meta_value(meta, "has_embeddings", bool, meta_path)

    arrays = {name: _load_array(directory, name) for name in ARRAY_NAMES}
    lengths = np.fromiter(
        (len(record.text) for record in sources), dtype=np.int64, count=len(sources)
    )
    damage = array_damage(lengths, arrays)
    if damage is not None:
        blamed, what = damage
        raise damaged(
            [meta_path if name == "sources" else _array_path(directory, name)
             for name in blamed],
            what,
        )
    n_passages = arrays["passage_source"].shape[0]
    index = _index_of_tokens(directory, arrays, _load_index(directory, n_passages))
    embeddings = _load_embeddings(directory, n_passages) if has_embeddings else None
    return SavedCorpus(arrays, index, size, stride, signature, embeddings)


def _array_path(directory: str, name: str) -> str:
    return os.path.join(directory, f"{name}.npy")


def damaged(paths: Sequence[str], what: str) -> ValueError:
    """The error of a corpus file (or of one of two files that disagree) found damaged."""
    if len(paths) == 1:
        return ValueError(f"{paths[0]!r} is damaged: {what}")
    return ValueError(f"{' or '.join(map(repr, paths))} is damaged: {what}")


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


def _read_npy(directory: str, name: str) -> np.ndarray:
    """The array of ``name.npy``; FileNotFoundError naming it when it is missing."""
    array_path = _array_path(directory, name)
    try:
        array = np.load(array_path, allow_pickle=False)
    except FileNotFoundError as error:
        said = " (corpus.json says the corpus has embeddings)" if name == "embeddings" else ""
        raise FileNotFoundError(
            error.errno,
            f"an array file of the saved corpus is missing ({name}.npy){said}",
            array_path,
        ) from None
    except (ValueError, EOFError, OSError) as error:
        raise damaged([array_path], str(error)) from error
    if not isinstance(array, np.ndarray):  # (an .npz archive under an .npy name)
        close = getattr(array, "close", None)
        if close is not None:
            close()
        raise damaged([array_path], "not a .npy array")
    return array


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


def array_damage(
    text_lengths: np.ndarray, arrays: Mapping[str, np.ndarray]
) -> tuple[tuple[str, ...], str] | None:
    """The first way the corpus ``arrays`` (1-D int64, by name) fail to fit each other
    and sources of ``text_lengths`` characters: the names of the arrays that may be at
    fault (``"sources"``: the sources' texts) and what is wrong; None when they fit.

    Checked: the lengths (a token, source or passage each); ``source_token_offsets``
    from 0 to the number of tokens, never decreasing; each source's tokens within its
    text (``0 <= start <= end <= len(text)``), their starts never decreasing; passages
    source after source (``passage_source`` in range, never decreasing), their token
    ranges within their source's tokens, their character ranges within its text and
    ``0 <= sentence start <= sentence end``. All of this holds for a built corpus (its
    tokens are also non-empty and do not overlap, which is not needed here). Vectorized:
    a few ms for a million tokens.
    """
    for name in ARRAY_NAMES:
        if arrays[name].ndim != 1:
            return (name,), f"a {arrays[name].ndim}-D array where a 1-D one belongs"
    n_sources = text_lengths.shape[0]
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
    counts = np.diff(offsets)
    if offsets[0] != 0 or offsets[-1] != n_tokens or np.any(counts < 0):
        return ("source_token_offsets",), (
            f"source token offsets must start at 0, never decrease and end at the number "
            f"of tokens ({n_tokens}); got {offsets[0]} ... {offsets[-1]}"
            + (f", reversed for source {_first(counts < 0)}" if np.any(counts < 0) else "")
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
    # the number of passages is what most passage arrays say: the damaged one is the odd
    # one out (passage_source too)
    sizes = [arrays[name].shape[0] for name in PASSAGE_ARRAY_NAMES]
    n_passages = max(sizes, key=sizes.count)
    for name, size in zip(PASSAGE_ARRAY_NAMES, sizes):
        if size != n_passages:
            return (name,), (
                f"{size} entries for {n_passages} passages (the other passage arrays)"
            )
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
    # (min and max carry a NaN through: two passes without a temporary array)
    if array.size and not (np.isfinite(array.min()) and np.isfinite(array.max())):
        raise damaged([array_path], "holds non-finite values")
    return np.ascontiguousarray(array, dtype=np.float32)
