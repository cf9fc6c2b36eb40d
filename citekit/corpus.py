"""A prepared corpus: sources segmented, windowed, tokenized and indexed once.

:class:`Corpus` does all the source-side work of citation alignment (sentence
segmentation, passage windows, tokenization, the IDF index and, optionally, passage
embeddings) once, so that any number of answers can be aligned against it. All token
data is kept in flat int64 arrays (one tokenization per source, passages as token
ranges into it), which is what the alignment kernels consume, and the corpus can be
saved to and loaded from a directory of ``.npy`` files, the sources' files and one JSON
file (no pickle; reading and checking those files: :mod:`citekit._corpus_files`), read
into memory or memory-mapped (the sources then decoded when read:
:mod:`citekit._mapped_sources`).

Offsets: token and passage character offsets are stored relative to the text that was
tokenized (a :class:`~citekit.results.SourceChunk`'s own text); :meth:`Corpus.absolute`
adds the chunk's ``doc_char_start`` so that every offset citekit returns indexes the
parent document.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

import numpy as np

from citekit._reading import (
    default_segmenter,
    default_tokenizer,
    tokenizer_signature,
)
from citekit import _corpus_files
from citekit._corpus_files import ARRAY_NAMES, PASSAGE_ARRAY_NAMES, array_damage
from citekit._corpus_build import DEFAULT_BATCH_CHARS
from citekit._mapped_sources import (
    MappedSources,
    PerSource,
    check_same_save,
    per_source_arrays,
)
from citekit._validation import check_bool, check_int
from citekit.index import IdfIndex
from citekit._source_records import check_distinct_ids as _check_distinct_ids
from citekit._source_records import (
    check_iterable,
    checked_records,
    jsonl_sources,
    sources_path,
)
from citekit.results import SourceChunk, SourceDocument

__all__ = ["Corpus", "as_source_records"]


def as_source_records(sources: Any) -> tuple[SourceDocument | SourceChunk, ...]:
    """Turn the accepted source forms into :class:`SourceDocument` / :class:`SourceChunk`.

    A plain ``str`` becomes ``SourceDocument(id=str(position), text=...)``; a mapping needs
    ``"text"`` and takes ``"id"`` (a str, or an int written in decimal; missing or None:
    its position) and ``"metadata"`` (a mapping, or None).

    Raises
    ------
    TypeError
        If ``sources`` is not a sequence (or iterable) or holds anything else, or a
        mapping's ``"id"`` or ``"metadata"`` is of another type.
    ValueError
        If a mapping lacks ``"text"``, or two documents have the same id (or a document
        has the ``source_id`` of chunks).

    Examples
    --------
    >>> [s.id for s in as_source_records(["a b", {"id": "x", "text": "c"}])]
    ['0', 'x']
    """
    check_iterable(sources)
    return tuple(checked_records(sources))


class Corpus:
    """Sources prepared once for citation alignment.

    Build with :meth:`build` (or :meth:`citekit.pipeline.Pipeline.prepare`, which uses the
    pipeline's stages and configuration); load a saved one with :meth:`load`.

    Attributes
    ----------
    sources : tuple of SourceDocument or SourceChunk
        The sources, in the order given (for a corpus memory-mapped by :meth:`load`, a
        read-only sequence of them that decodes a source when it is read).
    token_ids, token_starts, token_ends : ndarray of int64
        Every source's tokens, concatenated; offsets relative to that source's text.
    source_token_offsets : ndarray of int64
        Source ``s`` owns tokens ``source_token_offsets[s]:source_token_offsets[s + 1]``.
    passage_source, passage_token_start, passage_token_end : ndarray of int64
        For each passage window: its source and its token range in ``token_ids``.
    passage_char_start, passage_char_end : ndarray of int64
        Character range of each passage in its source's text.
    passage_sentence_start, passage_sentence_end : ndarray of int64
        The source sentences each passage spans (end exclusive).
    index : IdfIndex
        Lexical index over the passages.
    embeddings : ndarray of float32 or None
        L2-normalized passage embeddings when an embedder was given.
    source_documents : ndarray of int64
        The document of each source: the source's own number for a
        :class:`~citekit.results.SourceDocument`, the number of the first chunk of its
        ``source_id`` for a :class:`~citekit.results.SourceChunk`. Duplicate evidence (the
        same characters of one document, from overlapping chunks) is shown once, and
        ``max_citations_per_source`` counts citations per document.
    embedder : Embedder or None
        The embedder that made ``embeddings`` (None when not known: a loaded corpus, or
        vectors given to the constructor); a pipeline with another embedder refuses the
        corpus rather than compare its vectors with those of another model.
    caches : dict
        What the citation stages learn about this corpus while aligning (the folded forms
        of its words, the rise and fall words of its passages), by name, so that later
        calls reuse it. Derived data only: never saved, and left behind by pickling.

    Examples
    --------
    >>> class Words:  # any tokenizer following the protocol works
    ...     def tokenize(self, text):
    ...         import re
    ...         spans = [m.span() for m in re.finditer(r"\\w+", text)]
    ...         return [hash(text[s:e].lower()) % 1000 for s, e in spans], spans
    >>> class Lines:
    ...     def segment(self, text):
    ...         return [(0, len(text))]
    >>> texts = ["Revenue grew.", "Costs fell."]
    >>> corpus = Corpus.build(texts, tokenizer=Words(), segmenter=Lines())
    >>> corpus.n_sources, corpus.n_passages, corpus.passage_text(1)
    (2, 2, 'Costs fell.')
    """

    def __init__(
        self,
        sources: Sequence[SourceDocument | SourceChunk],
        arrays: Mapping[str, np.ndarray],
        index: IdfIndex,
        *,
        window_size_sentences: int,
        window_stride_sentences: int,
        tokenizer_signature: str,
        embeddings: np.ndarray | None = None,
        tokenizer: Any = None,
        segmenter: Any = None,
    ) -> None:
        arrays = {
            name: np.ascontiguousarray(arrays[name], dtype=np.int64) for name in ARRAY_NAMES
        }
        self._install(
            sources,
            arrays,
            index,
            window_size_sentences=window_size_sentences,
            window_stride_sentences=window_stride_sentences,
            tokenizer_signature=tokenizer_signature,
            embeddings=embeddings,
            tokenizer=tokenizer,
            segmenter=segmenter,
        )
        self._check_consistency()

    def _install(
        self,
        sources: Sequence[SourceDocument | SourceChunk],
        arrays: Mapping[str, np.ndarray],
        index: IdfIndex,
        *,
        window_size_sentences: int,
        window_stride_sentences: int,
        tokenizer_signature: str,
        embeddings: np.ndarray | None = None,
        tokenizer: Any = None,
        segmenter: Any = None,
        per_source: PerSource | None = None,
    ) -> None:
        """Set the attributes from contiguous int64 ``arrays`` known to be consistent
        (:meth:`build` makes them so; the constructor checks what it is given).
        ``per_source``: the values read per source (a mapped corpus's, with its
        :class:`~citekit._mapped_sources.MappedSources`); None: computed from the
        sources."""
        self.sources = sources if isinstance(sources, MappedSources) else tuple(sources)
        for name in ARRAY_NAMES:
            setattr(self, name, arrays[name])
        self.index = index
        self.window_size_sentences = window_size_sentences
        self.window_stride_sentences = window_stride_sentences
        self.tokenizer_signature = tokenizer_signature
        self.embeddings = embeddings
        # the embedder whose vectors ``embeddings`` holds (None: not known, e.g. loaded)
        self.embedder: Any = None
        self.tokenizer = tokenizer
        self.segmenter = segmenter
        self.caches: dict[str, Any] = {}
        if per_source is None:
            per_source = per_source_arrays(self.sources)
        self.source_ids = per_source.source_ids
        self.source_indices = per_source.source_indices
        self.base_offsets = per_source.base_offsets
        self.source_documents = per_source.source_documents
        # whether two sources are chunks of one document (their evidence is compared by
        # absolute offsets, and max_citations_per_source counts the document)
        self.chunks_share_documents = per_source.chunks_share_documents
        # the saved corpus this one is memory-mapped from (None: in memory)
        self._mapping: _Mapping | None = None

    def _check_consistency(self) -> None:
        """The checks :meth:`load` makes of the arrays
        (:func:`citekit._corpus_files.array_damage`), naming the arrays rather than files,
        and that the sources' ids are distinct."""
        _check_distinct_ids(self.sources)
        lengths = np.fromiter(
            (len(source.text) for source in self.sources),
            dtype=np.int64,
            count=len(self.sources),
        )
        damage = array_damage(lengths, {name: getattr(self, name) for name in ARRAY_NAMES})
        if damage is not None:
            blamed, what = damage
            names = ", ".join("the sources' texts" if n == "sources" else n for n in blamed)
            raise ValueError(f"corpus arrays do not fit together ({names}): {what}")
        n_passages = self.passage_source.shape[0]
        if self.index.n_passages != n_passages:
            raise ValueError("the index does not have one row per passage")
        if self.embeddings is not None and self.embeddings.shape[0] != n_passages:
            raise ValueError("embeddings must have one row per passage")

    # -- building -------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        sources: Any,
        *,
        tokenizer: Any = None,
        segmenter: Any = None,
        window_size_sentences: int = 1,
        window_stride_sentences: int = 1,
        embedder: Any = None,
        n_threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_CHARS,
        show_progress: bool = True,
    ) -> "Corpus":
        """Segment, window, tokenize and index ``sources``.

        Sources are read batch by batch (``batch_size`` characters at a time), so that a
        stream of them (a generator, a JSON Lines file) is read once and the memory for
        reading grows with a batch, not with the corpus; the corpus is the same whatever
        the batch size, and the same from a stream as from a list.

        Parameters
        ----------
        sources : iterable of str, SourceDocument, SourceChunk or mapping, or a path
            The documents (see :func:`as_source_records`): a sequence, or any iterable
            (a generator is read once). Or the path of a JSON Lines file, one source
            ``{"id", "text", ...}`` per line (other keys become its metadata; as
            ``citekit align --sources`` reads it), gzip when its name ends with ``.gz``:
            an :class:`os.PathLike`, or a ``str`` ending with ``.jsonl`` or
            ``.jsonl.gz`` (another ``str`` is refused: a single text goes in a list).
        tokenizer : Tokenizer, optional
            Defaults to :class:`~citekit.tokenizers.SimpleTokenizer`. Answers aligned
            against this corpus must use a tokenizer with the same signature.
        segmenter : object with ``segment(text)``, optional
            Source sentence segmenter; defaults to :class:`~citekit.segment.SentenceSegmenter`.
        window_size_sentences, window_stride_sentences : int, default 1
            Passage windows over the sentences.
        embedder : Embedder, optional
            When given, every passage is embedded (``embedder.encode(list_of_texts)``,
            one call with every passage's text, after the sources are read).
        n_threads : int, optional
            Threads that tokenize and segment sources of 262,144 characters or more in
            all, with stages that read many texts at once (``tokenize_many`` /
            ``segment_many``, as citekit's own do; each thread reads batches of
            whole sources), and that index 131,072 tokens or more (each thread a group of
            whole sources). Default: the kernels' current thread count. The corpus does not
            depend on it.
        batch_size : int, default 4,194,304
            Characters of source text read per batch (a longer source is a batch alone).
            The corpus does not depend on it.
        show_progress : bool, default True
            Show a tqdm bar counting the sources read when the build takes more than one
            batch, tqdm is installed and the bar can be seen (stderr is a terminal, or a
            notebook), as :func:`citekit.batch.score_records` does; silent otherwise.

        Returns
        -------
        Corpus

        Raises
        ------
        TypeError, ValueError
            For malformed sources, stages, window sizes or batch size (the message names
            the argument); for a sources file, a ``ValueError`` naming the file and the
            line. Nothing is kept of a build that fails (a stream that raises, say).
        FileNotFoundError
            If the sources file does not exist.

        Notes
        -----
        Memory: reading takes one batch's working memory (about 5 bytes per character of
        the batch: 22 MB at the default size) beyond what the corpus keeps; the peak comes
        at the end, while the index kernel works: about 20 bytes per token with the default
        windows, beyond the finished corpus. Measured with tracemalloc on 5,000 documents
        of the benchmark workload (38 million characters, 6.2 million tokens, a corpus of
        322 MB with its texts), built from a generator: a peak of 435 MB, 1.35 times the
        corpus (471 MB, 1.46 times, in one batch). Passage embeddings, with an
        ``embedder``, are computed after reading, from one list of all the passages' texts.

        Examples
        --------
        >>> def documents():  # read once, batch by batch
        ...     for number in range(3):
        ...         yield {"id": f"doc{number}", "text": f"Revenue grew {number}%. Costs fell."}
        >>> corpus = Corpus.build(documents(), batch_size=30)
        >>> corpus.n_sources, corpus.n_passages, corpus.passage_text(5)
        (3, 6, 'Costs fell.')
        >>> same = Corpus.build(list(documents()))  # from a list, in one batch
        >>> same.sources == corpus.sources, bool((same.token_ids == corpus.token_ids).all())
        (True, True)
        """
        size = int(check_int(window_size_sentences, "window_size_sentences", minimum=1))
        stride = int(check_int(window_stride_sentences, "window_stride_sentences", minimum=1))
        batch_size = int(check_int(batch_size, "batch_size", minimum=1))
        check_bool(show_progress, "show_progress")
        if n_threads is not None:
            from citekit._jit import check_threads

            n_threads = check_threads(n_threads)
        path = sources_path(sources)
        if path is None:
            check_iterable(sources)
        tokenizer = default_tokenizer() if tokenizer is None else tokenizer
        segmenter = default_segmenter() if segmenter is None else segmenter

        from citekit._corpus_build import read_sources, source_count
        from citekit.kernels._index import corpus_arrays

        records, read = read_sources(
            jsonl_sources(path) if path is not None else checked_records(sources),
            tokenizer,
            segmenter,
            batch_size=batch_size,
            n_threads=n_threads,
            show_progress=show_progress,
            total=None if path is not None else source_count(sources),
        )
        token_ids, token_starts, token_ends, token_offsets, sentences, sentence_offsets = read
        del read  # (freed once windowed and indexed below)
        # tokens ordered and non-empty, sentences ordered, non-empty and in bounds (checked
        # or so by construction): what the kernel relies on
        passages, index_parts = corpus_arrays(
            token_ids,
            token_starts,
            token_ends,
            token_offsets,
            sentences,
            sentence_offsets,
            size,
            stride,
            n_threads=n_threads,
        )
        del sentences, sentence_offsets
        arrays = dict(zip(PASSAGE_ARRAY_NAMES, passages))
        arrays["token_ids"] = token_ids
        arrays["token_starts"] = token_starts
        arrays["token_ends"] = token_ends
        arrays["source_token_offsets"] = token_offsets
        corpus = cls.__new__(cls)
        corpus._install(
            records,
            arrays,
            IdfIndex._from_parts(*index_parts),
            window_size_sentences=size,
            window_stride_sentences=stride,
            tokenizer_signature=tokenizer_signature(tokenizer),
            tokenizer=tokenizer,
            segmenter=segmenter,
        )
        if embedder is not None:
            corpus.embeddings = embed_texts(
                embedder, [corpus.passage_text(p) for p in range(corpus.n_passages)]
            )
            corpus.embedder = embedder
        return corpus

    # -- access ---------------------------------------------------------------------

    @property
    def n_sources(self) -> int:
        """Number of sources."""
        return len(self.sources)

    @property
    def n_passages(self) -> int:
        """Number of passage windows."""
        return int(self.passage_source.shape[0])

    @property
    def n_tokens(self) -> int:
        """Number of source tokens."""
        return int(self.token_ids.shape[0])

    def __len__(self) -> int:
        return self.n_sources

    def __getstate__(self) -> dict[str, Any]:
        # the caches filled while aligning are rebuilt where needed
        state = {**self.__dict__, "caches": {}}
        mapping = state.get("_mapping")
        if mapping is not None:
            # what was read from the mapped files is mapped again where unpickled
            # (_Mapping pickles as the path): the pickle holds no array or text of them
            for name, value in mapping.attributes.items():
                if state.get(name) is value:
                    del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        mapping = state.get("_mapping")
        if mapping is not None:
            for name, value in mapping.attributes.items():
                self.__dict__.setdefault(name, value)
        # (also for a corpus pickled before it had caches, or mappings)
        self.caches = {}
        self.__dict__.setdefault("_mapping", None)

    def __repr__(self) -> str:
        return (
            f"Corpus({self.n_sources} sources, {self.n_passages} passages, "
            f"{self.n_tokens} tokens, window {self.window_size_sentences}/"
            f"{self.window_stride_sentences})"
        )

    def source_text(self, source: int) -> str:
        """The text that was tokenized for ``source`` (a chunk's own text)."""
        sources = self.sources
        if type(sources) is MappedSources:  # (decoded without the rest of the record)
            return sources.text(source)
        return sources[source].text

    def passage_text(self, passage: int) -> str:
        """The characters of one passage window."""
        source = int(self.passage_source[passage])
        return self.source_text(source)[
            int(self.passage_char_start[passage]) : int(self.passage_char_end[passage])
        ]

    @property
    def mapped_from(self) -> str | None:
        """The directory this corpus is memory-mapped from (:meth:`load` with ``mmap``),
        or None for a corpus in memory."""
        return None if self._mapping is None else self._mapping.directory

    def absolute(self, source: int, char_offset: int) -> int:
        """Turn an offset in the tokenized text into one in the parent document."""
        return int(self.base_offsets[source]) + int(char_offset)

    def check_tokenizer(self, tokenizer: Any) -> None:
        """Raise ``ValueError`` unless ``tokenizer`` matches the one that built the corpus."""
        signature = tokenizer_signature(tokenizer)
        if signature != self.tokenizer_signature:
            raise ValueError(
                "tokenizer does not match the corpus: the corpus was tokenized with "
                f"{self.tokenizer_signature}, the answer would be tokenized with {signature}"
            )

    # -- persistence ----------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the corpus to directory ``path`` (created if needed): ``.npy`` arrays,
        the sources' files and one small ``corpus.json``.

        Nothing is pickled: arrays are saved with ``allow_pickle=False``; the sources'
        texts, ids and chunk document texts go to one UTF-8 file each, their metadata to
        one JSON object per source, with arrays of where each begins (format version 2,
        which :meth:`load` can memory-map; a corpus written by citekit before it,
        version 1, still loads). Every ``str`` is saved as it is, lone surrogates
        included, so :meth:`load` gives a corpus with the same sources and the same
        results. The sources are written one at a time (memory holds one of them, not
        the files), so a memory-mapped corpus saves without reading all of it at once.

        The save is atomic: the files are written and flushed to disk in a new hidden
        directory beside ``path`` (``.<name>.saving-<random>``), which then takes the
        place of ``path``. A save that fails, for any reason, leaves what was at ``path``
        as it was, so a corpus saved there before stays loadable. When ``path`` holds a
        corpus already, it is renamed aside (``.<name>.replaced-<random>``), the new one
        renamed into its place and the old one removed; should the second rename fail,
        the old one is renamed back. A process killed between the two renames (a moment)
        leaves the old corpus under its aside name. A load running at that moment may
        find no corpus; it never finds a mixture of two. (A corpus memory-mapped from the
        old directory keeps reading the old files, which the system keeps until it is
        gone; on Windows, where mapped files cannot be removed, save elsewhere.)

        Parameters
        ----------
        path : str or os.PathLike
            A directory that does not exist, an empty one, or a saved corpus (replaced
            as a whole). A symbolic link is followed: the directory it names is replaced.

        Raises
        ------
        TypeError
            If ``path`` is not a path, or a source's metadata is not JSON-serializable
            (the message names the source).
        ValueError
            If ``path`` is a file or a directory holding files a saved corpus does not
            (a save replaces the whole directory and never deletes what it did not
            write, but for a file browser's ``.DS_Store`` or ``Thumbs.db``). Both are
            checked before anything is written.
        OSError
            If the files cannot be written (the message names the file); what was at
            ``path`` is left as it was.

        Examples
        --------
        >>> import tempfile, os
        >>> corpus = Corpus.build(["Revenue grew 15% in 2024.", "Costs fell\\udc00 3%."])
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     corpus.save(os.path.join(folder, "corpus"))
        ...     loaded = Corpus.load(os.path.join(folder, "corpus"))
        >>> loaded.sources == corpus.sources, loaded.source_text(1)
        (True, 'Costs fell\\udc00 3%.')
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        index_arrays = self.index._saved_arrays()
        if "first_positions" not in index_arrays:  # (an index made from given arrays)
            from citekit.kernels._index import index_arrays as build_index

            index_arrays["first_positions"] = build_index(
                self.token_ids, self.passage_token_start, self.passage_token_end
            )[1]
        _corpus_files.write_corpus(
            os.fspath(path),
            self.sources,
            {
                "window_size_sentences": self.window_size_sentences,
                "window_stride_sentences": self.window_stride_sentences,
                "tokenizer_signature": self.tokenizer_signature,
            },
            {name: getattr(self, name) for name in ARRAY_NAMES},
            index_arrays,
            self.embeddings,
        )

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, mmap: bool = False, verify: bool | None = None
    ) -> "Corpus":
        """Read a corpus written by :meth:`save`, into memory or memory-mapped.

        The tokenizer and segmenter objects are not stored: align with a pipeline whose
        tokenizer has the same signature (checked).

        **In memory** (the default), every file is read and checked before the corpus
        is made: the values of ``corpus.json``; that every array file holds a 1-D array
        of integers (the embeddings: a 2-D array of finite floats), one entry per token,
        source or passage; every source decoded and checked as its record checks its
        fields, the sources' ids distinct; that each source's tokens lie within its text
        (``0 <= start <= end <= len(text)``, starts never decreasing); that the passages
        come source after source, each with its token and character ranges inside its
        source; and that the saved index is the index of the passages' tokens (built
        again from them, about 30-50 ms for a million tokens, and compared). The corpus
        then depends on no file. Loading costs about the time of reading the files.

        **Memory-mapped** (``mmap=True``), the arrays and the sources' files are mapped,
        not read: the system reads the pages a query touches (the posting lists of its
        words, the tokens and texts of its candidate passages) and may drop them again,
        so loading takes milliseconds at any size and resident memory grows with what the
        queries touch, not with the corpus. The results are those of the corpus in
        memory. ``sources`` is then a read-only sequence
        (:class:`~citekit._mapped_sources.MappedSources`) that decodes a source when it
        is read. Only the checks that read no more than a file's header or a single
        entry are made: the files present, the arrays' types and lengths, the ends of
        the offset arrays, ``corpus.json``; pass ``verify=True`` to make every check of
        the in-memory load (it reads every file once: the time of an in-memory load). A
        mapped corpus pickles as its path (a few hundred bytes: batch scoring's worker
        processes map it again; the directory must still hold that save, else unpickling
        raises ValueError). The arrays are mapped copy-on-write, so the kernels see the
        array types of a corpus in memory (nothing is compiled again) and nothing ever
        writes to the files. Each mapped file keeps a file descriptor open while the
        corpus lives (about 30 per corpus: mapping hundreds of corpora at once may need a
        higher ``ulimit -n``). Mapping is not the default because a mapped corpus depends
        on its directory (deleting or replacing it while the corpus is in use is safe on
        Linux and macOS, which keep the old files for it, but not possible on Windows)
        and skips the full checks; map large corpora, or a corpus loaded by many
        processes (they share the pages), and verify a corpus you did not save yourself.

        Parameters
        ----------
        path : str or os.PathLike
            The directory :meth:`save` wrote.
        mmap : bool, default False
            Map the files instead of reading them (a corpus saved in format version 1,
            by citekit before mapping existed, cannot be mapped: load it and save it
            again).
        verify : bool, optional
            Make every check (default: when not mapping). ``mmap=False, verify=False``
            reads the files without the checks that cost more than their headers.

        Returns
        -------
        Corpus

        Raises
        ------
        TypeError
            If ``path`` is not a path, or ``mmap`` or ``verify`` not a bool.
        FileNotFoundError
            If ``path`` does not exist, or one of the corpus's files is missing
            (``embeddings.npy`` only when ``corpus.json`` says the corpus has
            embeddings); the message names the path or file.
        ValueError
            If ``path`` is a file, the directory does not hold a citekit corpus of a
            known version (no ``corpus.json``, another format), a version-1 corpus is
            to be mapped, or one of its files is damaged (as far as the checks made
            find): unreadable, a missing or wrong value in ``corpus.json``, an array of
            the wrong type or length, offsets that do not fit the sources' texts, an
            index that is not of the tokens, or two sources sharing an id. The message
            names the file (both files when they disagree, e.g. token offsets beyond a
            source's text) and what is wrong, with the line of ``corpus.json`` where its
            text is not JSON or not UTF-8.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     Corpus.build(["Revenue grew 15%.", "Costs fell 3%."]).save(folder)
        ...     mapped = Corpus.load(folder, mmap=True)
        ...     print(mapped.n_sources, mapped.source_text(1), mapped.sources[0].id)
        2 Costs fell 3%. 0
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        if not isinstance(mmap, bool):
            raise TypeError(f"mmap must be a bool, got {type(mmap).__name__}")
        if verify is not None and not isinstance(verify, bool):
            raise TypeError(f"verify must be a bool or None, got {type(verify).__name__}")
        directory = os.fspath(path)
        if mmap:  # (the path a pickled corpus is mapped again from, in any directory)
            directory = os.path.abspath(directory)
        loaded = _corpus_files.read_corpus(
            directory,
            mapped=mmap,
            verify=not mmap if verify is None else verify,
            check_records=_check_distinct_ids,
        )
        # (everything the constructor checks is checked above when verifying, naming
        # the files)
        corpus = cls.__new__(cls)
        corpus._install(
            loaded.sources,
            loaded.arrays,
            loaded.index,
            window_size_sentences=loaded.window_size_sentences,
            window_stride_sentences=loaded.window_stride_sentences,
            tokenizer_signature=loaded.tokenizer_signature,
            embeddings=loaded.embeddings,
            per_source=loaded.per_source,
        )
        if mmap:
            corpus._mapping = _Mapping(
                directory,
                str(loaded.save_id),
                {name: corpus.__dict__[name] for name in _MAPPED_ATTRIBUTES},
            )
        return corpus


# the attributes of a memory-mapped corpus read from its files (not pickled)
_MAPPED_ATTRIBUTES = (
    "sources", *ARRAY_NAMES, "index", "embeddings", "source_ids", "source_indices",
    "base_offsets", "source_documents",
)


class _Mapping:
    """The saved corpus a corpus is memory-mapped from, and the ``attributes`` it read
    from it. Pickled as the directory and the save's id, and mapped again where unpickled
    (a worker process), so that a mapped corpus's pickle holds none of its data: a few
    hundred bytes."""

    def __init__(self, directory: str, save_id: str, attributes: dict[str, Any]) -> None:
        self.directory = directory
        self.save_id = save_id
        self.attributes = attributes

    def __reduce__(self) -> tuple[Any, ...]:
        return (_mapped_again, (self.directory, self.save_id))


def _mapped_again(directory: str, save_id: str) -> _Mapping:
    """:class:`_Mapping` of the corpus saved at ``directory``, mapped again; ValueError
    when the directory holds another save now."""
    mapping = Corpus.load(directory, mmap=True)._mapping
    assert mapping is not None
    check_same_save(directory, save_id, mapping.save_id)
    return mapping


def embed_texts(embedder: Any, texts: list[str], *, name: str = "embedder") -> np.ndarray:
    """Call ``embedder.encode(texts)`` and return L2-normalized float32 rows.

    Raises
    ------
    TypeError
        If ``embedder`` has no ``encode`` method.
    ValueError
        If it does not return one finite row per text.

    Examples
    --------
    >>> class Lengths:
    ...     def encode(self, texts):
    ...         return [[len(t), 1.0] for t in texts]
    >>> embed_texts(Lengths(), ["", "abc"]).astype(float).round(3).tolist()
    [[0.0, 1.0], [0.949, 0.316]]
    """
    method = getattr(embedder, "encode", None)
    if not callable(method):
        raise TypeError(f"{name} must have an encode(texts) method, got {type(embedder).__name__}")
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    returned = method(list(texts))
    try:
        vectors = np.asarray(returned, dtype=np.float64)
    except (TypeError, ValueError) as error:
        # numpy's own message names neither the embedder nor what it returned
        raise ValueError(
            f"{name}.encode must return numbers, one equal-length row per text; "
            f"got {type(returned).__name__} that is not a numeric matrix ({error})"
        ) from None
    if vectors.ndim != 2 or vectors.shape[0] != len(texts):
        raise ValueError(
            f"{name}.encode must return a 2-D array with one row per text; "
            f"got shape {vectors.shape}"
        )
    if not np.all(np.isfinite(vectors)):
        raise ValueError(f"{name}.encode returned non-finite values")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32)
