"""Corpora split into shards on a Dask cluster, searched scatter-gather with the results
of the whole corpus.

A :class:`ShardedCorpus` holds its documents in shards, each a normal
:class:`~citekit.corpus.Corpus` (and, when saved, a normal corpus directory) kept in
the memory of a Dask worker. Shard ``k`` holds a run of the documents in their given
order; the chunks of one document (:class:`~citekit.results.SourceChunk` sharing a
``source_id``) stay in one shard. Aligning an answer::

    client: read the answers (segment, tokenize)              ─► query tokens
    workers: each shard's best passages, IDF of the whole corpus ─► (1st round trip)
    client: merge by rank score, ties to the lower global passage ─► the corpus's top-K
    workers: the sources of the chosen passages                ─► (2nd round trip)
    client: the citation stages over a corpus of those sources, numbered as in the
            whole corpus                                        ─► AlignmentResult

The results are those of the single corpus built from the same documents in the same
order, bit for bit: IDF is merged from the shards' document frequencies, every shard
ranks its passages by the weights of the whole corpus, and the candidates merged are the
whole corpus's (same scores, same order, same ties). The citation stages after the
retrieval read only the candidate passages and their neighbours in the same source, so
a corpus of the cited sources, with the sources' numbers and document numbers of the
whole corpus, gives them the same input.
"""

from __future__ import annotations

import operator
import os
import uuid
from collections import abc
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from citekit import _shard_tasks as tasks
from citekit._corpus_files import ARRAY_NAMES
from citekit._source_records import sources_path
from citekit._validation import check_bool, check_int
from citekit.corpus import Corpus, as_source_records
from citekit.index import IdfIndex, TopK, TopKWithTerms
from citekit._shard_layout import (
    read_manifest,
    shard_bounds,
    shard_path,
    source_stream,
    stream_shards,
    write_manifest,
)
from citekit.results import AlignmentResult, SourceDocument

__all__ = ["ShardedCorpus", "shard_bounds"]


def _dask_client(client: Any) -> Any:
    """``client``, or the active ``distributed.Client``; an ImportError naming the extra
    without distributed."""
    from citekit._optional import import_optional

    distributed = import_optional("distributed", "dask", purpose="ShardedCorpus")
    if client is None:
        try:
            return distributed.default_client()
        except ValueError:
            raise ValueError(
                "client: no distributed.Client is active; pass client=Client(...)"
            ) from None
    if not isinstance(client, distributed.Client):
        raise TypeError(f"client must be a distributed.Client, got {type(client).__name__}")
    return client


class _GatheredIndex(IdfIndex):
    """The index of a corpus of the cited sources, which answers the retrieval with the
    candidates the shards found (``found``: by the query arrays of each batch), numbered
    in this corpus."""

    found: dict[bytes, TopKWithTerms]

    def top_k_with_terms(
        self,
        query_ids: Any,
        query_offsets: Any,
        k: int,
        *,
        rank_tokens: Any = None,
        n_threads: int | None = None,
    ) -> TopKWithTerms:
        key = _batch_key(query_ids, query_offsets, rank_tokens, k)
        if key not in self.found:  # (the stages asked for a batch not searched)
            raise RuntimeError("sharded search: a batch of sentences was not searched")
        top, held, _ = self.found[key]
        return TopKWithTerms(top, held, self.columns_of(query_ids))


def _batch_key(query_ids: Any, query_offsets: Any, rank_tokens: Any, k: int) -> bytes:
    parts = (
        np.ascontiguousarray(query_ids, dtype=np.int64).tobytes(),
        np.ascontiguousarray(query_offsets, dtype=np.int64).tobytes(),
        np.ascontiguousarray(rank_tokens, dtype=bool).tobytes(),
    )
    return b"|".join((str(k).encode(), *(str(len(p)).encode() + b":" + p for p in parts)))


class ShardedCorpus:
    """A corpus split into shards held by Dask workers, searched scatter-gather.

    Build one with :meth:`build` (each shard built by a worker task) or :meth:`load` one
    saved by ``build(..., path=...)``; align answers with :meth:`align` and
    :meth:`align_many`, or score records with :meth:`score_records`. The results are
    those of ``pipeline.align_many(answers, pipeline.prepare(sources))`` on one machine,
    bit for bit (see :mod:`citekit.sharded`).

    Attributes
    ----------
    client : distributed.Client
        The cluster the shards live on.
    pipeline : Pipeline
        The configuration and stages the shards were built with and answers are aligned
        with (no embedder: embeddings are not sharded).
    bounds : list of (int, int)
        The range of source positions each shard holds.
    n_sources, n_passages : int
        Of the whole corpus.
    vocabulary, document_frequency : ndarray of int64
        Of the whole corpus (merged from the shards').
    idf : ndarray of float64
        The IDF of each term of ``vocabulary``, as the whole corpus's index has it.
    paths : list of str or None
        The shards' directories when saved.

    Examples
    --------
    >>> from distributed import Client, LocalCluster
    >>> from citekit import Pipeline
    >>> cluster = LocalCluster(n_workers=1, processes=False, dashboard_address=":0")
    >>> client = Client(cluster)
    >>> sharded = ShardedCorpus.build(["Ice melts.", "Water boils at 100 degrees."], 2,
    ...                               client=client)
    >>> result = sharded.align("Water boils at 100 degrees.")
    >>> sharded.n_shards, result[0].citations[0].source_id
    (2, '1')
    >>> client.close(); cluster.close()
    """

    def __init__(self) -> None:
        raise TypeError("make a ShardedCorpus with ShardedCorpus.build or ShardedCorpus.load")

    @classmethod
    def _start(
        cls,
        client: Any,
        pipeline: Any,
        shards: list[Any],
        bounds: list[tuple[int, int]] | None,
        paths: list[str] | None,
        sources: Sequence[Any] | None,
        where: list[str],
    ) -> "ShardedCorpus":
        """Gather the shards' statistics, check that they fit together (``where`` names
        each shard in messages) and merge them."""
        self = cls.__new__(cls)
        self.client = client
        self.pipeline = pipeline
        self._shards = shards
        self.paths = paths
        self._sources = sources
        statistics = client.gather(client.map(tasks.shard_statistics, shards, pure=False))
        first = statistics[0]
        for name, shard in zip(where, statistics):
            for field in ("tokenizer_signature", "window_size_sentences",
                          "window_stride_sentences"):
                if getattr(shard, field) != getattr(first, field):
                    raise ValueError(
                        f"{name}: its {field} ({getattr(shard, field)!r}) differs from "
                        f"{where[0]}'s ({getattr(first, field)!r}); every shard must be "
                        "built with the same pipeline"
                    )
            if shard.has_embeddings:
                raise ValueError(f"{name} has passage embeddings: sharded corpora have none")
        counts = np.array([s.n_sources for s in statistics], dtype=np.int64)
        if bounds is None:
            ends = np.cumsum(counts)
            bounds = list(zip((ends - counts).tolist(), ends.tolist()))
        elif counts.tolist() != [hi - lo for lo, hi in bounds]:
            raise ValueError("the shards do not hold the sources they were given")
        self.bounds = bounds
        self.tokenizer_signature = first.tokenizer_signature
        self.window_size_sentences = first.window_size_sentences
        self.window_stride_sentences = first.window_stride_sentences
        self.chunks_share_documents = any(s.chunks_share_documents for s in statistics)
        passages = np.array([s.n_passages for s in statistics], dtype=np.int64)
        self.passage_offsets = np.zeros(len(statistics) + 1, dtype=np.int64)
        np.cumsum(passages, out=self.passage_offsets[1:])
        self.source_offsets = np.array([lo for lo, _ in bounds] + [bounds[-1][1]], np.int64)
        self.n_sources = int(self.source_offsets[-1])
        self.n_passages = int(self.passage_offsets[-1])
        self._merge_statistics(statistics)
        return self

    def _merge_statistics(self, statistics: list[tasks.ShardStatistics]) -> None:
        """The whole corpus's vocabulary, document frequencies and IDF (computed as its
        index computes them: the same floats), sent to every worker once."""
        vocabularies = [s.vocabulary for s in statistics]
        vocabulary = (
            np.unique(np.concatenate(vocabularies)) if vocabularies else np.zeros(0, np.int64)
        )
        frequency = np.zeros(vocabulary.shape[0], dtype=np.int64)
        for shard in statistics:
            # (each shard's vocabulary is distinct: one addition per column)
            frequency[np.searchsorted(vocabulary, shard.vocabulary)] += shard.document_frequency
        idf = np.log((self.n_passages + 1.0) / (frequency + 1.0))
        idf += 1.0
        self.vocabulary = vocabulary
        self.document_frequency = frequency
        self.idf = idf
        merged = tasks.GlobalStatistics(
            vocabulary, idf, float(np.log(self.n_passages + 1.0) + 1.0), uuid.uuid4().hex
        )
        # (in a list: a tuple given alone would be scattered field by field)
        self._statistics = self.client.scatter([merged], broadcast=True, hash=False)[0]

    # -- building and loading ---------------------------------------------------------

    @classmethod
    def build(
        cls,
        sources: Any,
        n_shards: int | None = None,
        *,
        documents_per_shard: int | None = None,
        client: Any = None,
        pipeline: Any = None,
        path: str | os.PathLike[str] | None = None,
        mmap: bool = False,
    ) -> "ShardedCorpus":
        """Split ``sources`` into shards and build each on a Dask worker.

        Give ``n_shards`` (a sequence split into that many runs of about equal length) or
        ``documents_per_shard`` (the sources read as a stream, a shard built as soon as it
        has that many documents: any iterable, read once, or a JSON Lines path, as
        :meth:`Corpus.build <citekit.corpus.Corpus.build>` reads them). A stream is never
        held whole: the sources of at most one shard more than the workers are building
        are in this process at a time, and the built corpus fetches a source from its
        worker when it is read (:attr:`sources`). With ``path`` and ``mmap=True``, each
        worker saves its shard and keeps it mapped rather than in memory, so that a corpus
        larger than the workers' memory can be built (and loaded again with
        :meth:`load`).

        Parameters
        ----------
        sources : sequence, iterable or JSON Lines path of sources
            The documents (str, SourceDocument, SourceChunk or mapping, as
            :func:`~citekit.corpus.as_source_records` takes them: a str gets its
            position in the whole sequence as id, as in a single corpus). In a stream,
            the chunks of one document come one after another.
        n_shards : int, optional
            Shards wanted (``>= 1``; fewer when there are fewer documents, see
            :func:`shard_bounds`); ``sources`` must then be a sequence.
        documents_per_shard : int, optional
            Documents per shard (``>= 1``; the last shard may hold fewer); instead of
            ``n_shards``.
        client : distributed.Client, optional
            Default: the active client.
        pipeline : Pipeline, optional
            Its tokenizer, source segmenter and windows build the shards; its
            configuration aligns answers (default ``Pipeline()``). No embedder.
        path : str or os.PathLike, optional
            A directory (that every worker and this process can reach, e.g. shared
            storage) to save the shards in: ``shard-00000``, ... (normal corpus
            directories, written by the workers) and ``shards.json``; :meth:`load`
            reads it back.
        mmap : bool, default False
            With ``path``: each worker maps the shard it saved
            (``Corpus.load(..., mmap=True)``) instead of keeping it in memory.

        Returns
        -------
        ShardedCorpus

        Raises
        ------
        TypeError, ValueError
            For malformed sources, a pipeline with an embedder, ``n_shards < 1``, both
            or neither of ``n_shards`` and ``documents_per_shard``, ``n_shards`` with a
            stream, ``mmap`` without ``path``, the chunks of a document apart in a
            stream, no client (the message names the argument).
        FileNotFoundError
            For a JSON Lines path that does not exist.
        ImportError
            Without ``distributed`` (``pip install 'citekit[dask]'``).

        Examples
        --------
        >>> from distributed import Client, LocalCluster
        >>> cluster = LocalCluster(n_workers=1, processes=False, dashboard_address=":0")
        >>> with cluster, Client(cluster):
        ...     sharded = ShardedCorpus.build(["Ice melts.", "Snow falls.", "Rain."], 2)
        >>> sharded.bounds, sharded.n_passages
        ([(0, 2), (2, 3)], 3)
        """
        pipeline = _check_pipeline(pipeline)
        client = _dask_client(client)
        if (n_shards is None) == (documents_per_shard is None):
            raise TypeError("give one of n_shards and documents_per_shard")
        mmap = check_bool(mmap, "mmap")
        if mmap and path is None:
            raise ValueError("mmap=True maps the shards saved in path: give path")
        directory = None
        if path is not None:
            if not isinstance(path, (str, os.PathLike)):
                raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
            directory = os.path.abspath(os.fspath(path))
            if os.path.isfile(directory):
                raise ValueError(f"path {directory!r} is a file, not a directory")
        if documents_per_shard is not None:
            per_shard = int(check_int(documents_per_shard, "documents_per_shard", minimum=1))
            stream = source_stream(sources)
            if directory is not None:
                os.makedirs(directory, exist_ok=True)
            return cls._build_streamed(client, pipeline, stream, per_shard, directory, mmap)
        if sources_path(sources) is not None or not isinstance(sources, abc.Sequence):
            raise ValueError(
                "n_shards splits a sequence of sources; for a stream or a JSON Lines file "
                "give documents_per_shard"
            )
        records = as_source_records(sources)
        bounds = shard_bounds(records, n_shards)
        paths = None
        if directory is not None:
            os.makedirs(directory, exist_ok=True)
            paths = [shard_path(directory, n) for n in range(len(bounds))]
        # (scattered, not embedded in the task graph: the texts travel once, to one worker)
        parts = client.scatter([list(records[lo:hi]) for lo, hi in bounds], hash=False)
        shards = client.map(
            tasks.build_shard, parts, [pipeline] * len(parts),
            paths if paths is not None else [None] * len(parts), [mmap] * len(parts),
            pure=False,
        )
        where = [f"shard {n}" for n in range(len(bounds))]
        sharded = cls._start(client, pipeline, shards, bounds, paths, records, where)
        if directory is not None and paths is not None:
            write_manifest(directory, [os.path.basename(p) for p in paths])
        return sharded

    @classmethod
    def _build_streamed(
        cls, client: Any, pipeline: Any, stream: Iterator[Any], per_shard: int,
        directory: str | None, mmap: bool,
    ) -> "ShardedCorpus":
        """:meth:`build` of a stream: a shard submitted as soon as it is read, and at
        most one more shard's sources here than the workers are building."""
        from distributed import wait

        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        shards: list[Any] = []
        bounds: list[tuple[int, int]] = []
        paths: list[str] = []
        start = 0
        for number, records in enumerate(stream_shards(stream, per_shard)):
            where_saved = None if directory is None else shard_path(directory, number)
            [part] = client.scatter([records], hash=False)
            shards.append(
                client.submit(tasks.build_shard, part, pipeline, where_saved, mmap, pure=False)
            )
            bounds.append((start, start + len(records)))
            start += len(records)
            if where_saved is not None:
                paths.append(where_saved)
            del part, records
            building = [shard for shard in shards if not shard.done()]
            if len(building) > n_workers:
                wait(building, return_when="FIRST_COMPLETED")
        where = [f"shard {n}" for n in range(len(bounds))]
        sharded = cls._start(
            client, pipeline, shards, bounds, paths or None, None, where
        )
        if directory is not None:
            write_manifest(directory, [os.path.basename(p) for p in paths])
        return sharded

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        client: Any = None,
        pipeline: Any = None,
        mmap: bool = False,
    ) -> "ShardedCorpus":
        """Load the shards saved by :meth:`build` in ``path``, each by a worker.

        Parameters
        ----------
        path : str or os.PathLike
            The directory given to :meth:`build` (reachable by the workers at the same
            path).
        client : distributed.Client, optional
            Default: the active client.
        pipeline : Pipeline, optional
            Aligns the answers (default ``Pipeline()``); its tokenizer must have the
            shards' signature (checked when aligning).
        mmap : bool, default False
            Map each shard on its worker (``Corpus.load(..., mmap=True)``: a load in
            milliseconds, memory growing with what queries read) instead of reading it.

        Raises
        ------
        FileNotFoundError
            If ``path`` or its ``shards.json`` is missing (or a shard's files: see
            :meth:`Corpus.load`).
        ValueError
            If ``shards.json`` is damaged, or the shards were built with different
            tokenizers or windows (the message names the shard).

        Examples
        --------
        >>> import os, tempfile
        >>> from distributed import Client, LocalCluster
        >>> cluster = LocalCluster(n_workers=1, processes=False, dashboard_address=":0")
        >>> with cluster, Client(cluster), tempfile.TemporaryDirectory() as folder:
        ...     _ = ShardedCorpus.build(["Ice melts.", "Snow falls."], 2,
        ...                             path=os.path.join(folder, "kb"))
        ...     print(sorted(os.listdir(os.path.join(folder, "kb"))))
        ...     loaded = ShardedCorpus.load(os.path.join(folder, "kb"))
        ...     print(loaded.align("Snow falls.")[0].citations[0].source_id)
        ['shard-00000', 'shard-00001', 'shards.json']
        1
        """
        pipeline = _check_pipeline(pipeline)
        client = _dask_client(client)
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        directory = os.path.abspath(os.fspath(path))
        names = read_manifest(directory)
        paths = [os.path.join(directory, name) for name in names]
        mmap = check_bool(mmap, "mmap")
        shards = client.map(tasks.load_shard, paths, mmap=mmap, pure=False)
        return cls._start(client, pipeline, shards, None, paths, None, paths)

    # -- access -----------------------------------------------------------------------

    @property
    def n_shards(self) -> int:
        """Number of shards."""
        return len(self._shards)

    @property
    def sources(self) -> Sequence[Any]:
        """Every source, in order: the records given to :meth:`build`, or for a loaded
        corpus a read-only sequence that fetches a source from its worker when it is
        read (and every source when iterated: the display of a result does)."""
        if self._sources is None:
            self._sources = _ShardSources(self)
        return self._sources

    def __len__(self) -> int:
        return self.n_sources

    def __repr__(self) -> str:
        return (
            f"ShardedCorpus({self.n_shards} shards, {self.n_sources} sources, "
            f"{self.n_passages} passages)"
        )

    # -- aligning ---------------------------------------------------------------------

    def align(self, answer: str, *, pipeline: Any = None) -> AlignmentResult:
        """Citations for every sentence of ``answer`` (:meth:`Pipeline.align
        <citekit.pipeline.Pipeline.align>` against the whole corpus); ``pipeline``
        as in :meth:`align_many`.

        Examples
        --------
        >>> from distributed import Client, LocalCluster
        >>> cluster = LocalCluster(n_workers=1, processes=False, dashboard_address=":0")
        >>> with cluster, Client(cluster):
        ...     sharded = ShardedCorpus.build(["Ice melts.", "Water boils."], 2)
        ...     sharded.align("Ice melts.")[0].status
        'supported'
        """
        from citekit._validation import check_str

        check_str(answer, "answer")
        return self.align_many([answer], pipeline=pipeline)[0]

    def align_many(
        self, answers: Iterable[str], *, pipeline: Any = None
    ) -> list[AlignmentResult]:
        """Align several answers (:meth:`Pipeline.align_many
        <citekit.pipeline.Pipeline.align_many>` against the whole corpus): two round
        trips to the workers per call, whatever the number of answers.

        Parameters
        ----------
        answers : iterable of str
            The answers.
        pipeline : Pipeline, optional
            Aligns with its configuration and stages instead of :attr:`pipeline`'s (the
            passage windows stay those the shards were built with, as for a prepared
            :class:`~citekit.corpus.Corpus`); no embedder.

        Returns
        -------
        list of AlignmentResult
            One per answer, in order: ``pipeline.align_many(answers, corpus)`` with the
            single corpus of the same documents.

        Raises
        ------
        TypeError
            If ``answers`` is not an iterable of str, or ``pipeline`` not a Pipeline.
        ValueError
            If the pipeline's tokenizer does not match the shards', or it has an
            embedder.

        Examples
        --------
        >>> from distributed import Client, LocalCluster
        >>> cluster = LocalCluster(n_workers=1, processes=False, dashboard_address=":0")
        >>> with cluster, Client(cluster):
        ...     sharded = ShardedCorpus.build(["Ice melts.", "Water boils."], 2)
        ...     results = sharded.align_many(["Water boils.", "Ice melts."])
        >>> [r[0].citations[0].source_id for r in results]
        ['1', '0']
        """
        from citekit._reading import tokenizer_signature

        pipeline = self.pipeline if pipeline is None else _check_pipeline(pipeline)
        if isinstance(answers, str) or not isinstance(answers, Iterable):
            raise TypeError(f"answers must be an iterable of str, got {type(answers).__name__}")
        answers = list(answers)
        signature = tokenizer_signature(pipeline._tokenizer_for(None))
        if signature != self.tokenizer_signature:
            raise ValueError(
                "tokenizer does not match the shards: they were tokenized with "
                f"{self.tokenizer_signature}, the answer would be tokenized with {signature}"
            )
        batches = _query_batches(pipeline, answers)
        found = self._search(pipeline, batches)
        corpus, passages = self._cited_corpus(found)
        results = pipeline.align_many(answers, corpus)
        _renumber(results, passages)
        for result in results:
            result.sources = self.sources
        return results

    def _search(
        self, pipeline: Any, batches: list[Any]
    ) -> list[tuple[bytes, TopKWithTerms, np.ndarray]]:
        """Every batch's candidates in the whole corpus (global passage numbers), with
        the global source of each: one task per shard and batch, gathered at once."""
        config = pipeline.config
        k = config.max_candidates_lexical
        if config.top_k == 0 or self.n_passages == 0:
            return []
        client = self.client
        futures = [
            [
                client.submit(
                    tasks.search_shard, shard, self._statistics, batch.ids, batch.offsets,
                    batch.content, k, pipeline.n_threads, pure=False,
                )
                for shard in self._shards
            ]
            for batch in batches
        ]
        gathered = client.gather(futures)
        out = []
        for batch, per_shard in zip(batches, gathered):
            key = _batch_key(batch.ids, batch.offsets, batch.content, k)
            top, held, sources = _merge(per_shard, self.passage_offsets, self.source_offsets, k)
            out.append((key, TopKWithTerms(top, held, np.zeros(0, np.int64)), sources))
        return out

    def _cited_corpus(
        self, found: list[tuple[bytes, TopKWithTerms, np.ndarray]]
    ) -> tuple[Corpus, np.ndarray]:
        """A corpus of the sources holding a candidate, numbered as in the whole corpus
        (source and document numbers), whose index answers with ``found``; and the
        whole corpus's number of each of its passages."""
        cited = (
            np.unique(np.concatenate([sources for _, _, sources in found]))
            if found
            else np.zeros(0, np.int64)
        )
        shard_of = np.searchsorted(self.source_offsets, cited, side="right") - 1
        requests = [
            (shard, cited[shard_of == shard] - self.source_offsets[shard])
            for shard in np.unique(shard_of).tolist()
        ]
        subsets = self.client.gather(
            [
                self.client.submit(tasks.shard_subset, self._shards[shard], local, pure=False)
                for shard, local in requests
            ]
        )
        records: list[Any] = []
        arrays: dict[str, list[np.ndarray]] = {name: [] for name in ARRAY_NAMES}
        global_passages = []
        documents = []
        n_tokens = n_sources = 0
        for (shard, _), subset in zip(requests, subsets):
            records.extend(subset.records)
            for name in ARRAY_NAMES:
                values = subset.arrays[name]
                if name == "source_token_offsets":
                    values = values[:-1] + n_tokens
                elif name in ("passage_token_start", "passage_token_end"):
                    values = values + n_tokens
                elif name == "passage_source":
                    values = values + n_sources
                arrays[name].append(values)
            n_tokens += int(subset.arrays["source_token_offsets"][-1])
            n_sources += len(subset.records)
            global_passages.append(subset.passages + self.passage_offsets[shard])
            documents.append(subset.source_documents + self.source_offsets[shard])
        arrays["source_token_offsets"].append(np.array([n_tokens], dtype=np.int64))
        joined = {
            name: np.concatenate(parts) if parts else np.zeros(0, np.int64)
            for name, parts in arrays.items()
        }
        index = _GatheredIndex.build(
            joined["token_ids"], joined["passage_token_start"], joined["passage_token_end"]
        )
        corpus = Corpus(
            records,
            joined,
            index,
            window_size_sentences=self.window_size_sentences,
            window_stride_sentences=self.window_stride_sentences,
            tokenizer_signature=self.tokenizer_signature,
        )
        # numbered as in the whole corpus: a source's number (tie-breaks, citations'
        # source_index) and its document (max_citations_per_source, duplicate evidence)
        corpus.source_indices = np.array(
            [
                position if isinstance(record, SourceDocument) or record.source_index is None
                else record.source_index
                for position, record in zip(cited.tolist(), records)
            ],
            dtype=np.int64,
        )
        corpus.source_documents = (
            np.concatenate(documents) if documents else np.zeros(0, np.int64)
        )
        corpus.chunks_share_documents = self.chunks_share_documents
        # the candidates, numbered in this corpus (its passages are the whole corpus's,
        # in the same order)
        passages = np.concatenate(global_passages) if global_passages else np.zeros(0, np.int64)
        index.found = {
            key: TopKWithTerms(
                TopK(top.offsets, np.searchsorted(passages, top.passages), top.scores),
                held,
                columns,
            )
            for key, (top, held, columns), _ in found
        }
        return corpus, passages

    def score_records(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        batch_size: int = 16,
        show_progress: bool = True,
    ) -> list[Any]:
        """:func:`citekit.batch.score_records` with this corpus as the shared corpus:
        records without ``"sources"`` are aligned against the shards (``batch_size`` at
        a time, one :meth:`align_many` each), records with their own sources by the
        pipeline here.

        Examples
        --------
        >>> from distributed import Client, LocalCluster
        >>> cluster = LocalCluster(n_workers=1, processes=False, dashboard_address=":0")
        >>> with cluster, Client(cluster):
        ...     sharded = ShardedCorpus.build(["Ice melts.", "Water boils."], 2)
        ...     out = sharded.score_records([{"id": "a", "answer": "Ice melts."}],
        ...                                 show_progress=False)
        >>> out[0].id, out[0].result[0].status
        ('a', 'supported')
        """
        from citekit.batch import score_records

        return score_records(
            records, pipeline=_ShardedAligner(self), corpus=self, n_jobs=1,
            show_progress=show_progress, batch_size=batch_size,
        )


class _ShardedAligner:
    """A pipeline for :func:`citekit.batch.score_records`: the sharded corpus aligns the
    answers of the shared corpus, the pipeline those with their own sources."""

    def __init__(self, sharded: ShardedCorpus) -> None:
        self.sharded = sharded

    def align(self, answer: str, sources: Any) -> AlignmentResult:
        if sources is self.sharded:
            return self.sharded.align(answer)
        return self.sharded.pipeline.align(answer, sources)  # type: ignore[no-any-return]

    def align_many(self, answers: Iterable[str], sources: Any) -> list[AlignmentResult]:
        if sources is self.sharded:
            return self.sharded.align_many(answers)
        return self.sharded.pipeline.align_many(answers, sources)  # type: ignore[no-any-return]


def _renumber(results: list[AlignmentResult], passages: np.ndarray) -> None:
    """Give the citations and retrieval support of ``results`` (fresh records of the
    corpus of cited sources) the whole corpus's passage numbers (``passages``)."""
    done: set[int] = set()
    for result in results:
        for span in result:
            for record in (*span.citations, *span.retrieval_support):
                if id(record) not in done:
                    done.add(id(record))
                    # (frozen records, built by this call: set as their builder sets them)
                    object.__setattr__(
                        record, "candidate_index", int(passages[record.candidate_index])
                    )


def _sources_of(corpus: Corpus, positions: list[int] | None = None) -> tuple[Any, ...]:
    if positions is None:
        return corpus.sources
    return tuple(corpus.sources[position] for position in positions)


class _ShardSources(abc.Sequence):  # type: ignore[type-arg]
    """The sources of a loaded :class:`ShardedCorpus`, fetched from the workers as they
    are read (kept once fetched); compares equal to any sequence of the same sources,
    and pickles as a tuple of them."""

    def __init__(self, sharded: ShardedCorpus) -> None:
        self._sharded = sharded
        self._fetched: dict[int, Any] = {}

    def __len__(self) -> int:
        return self._sharded.n_sources

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, slice):
            return tuple(self[i] for i in range(*item.indices(len(self))))
        position = operator.index(item)
        if position < 0:
            position += len(self)
        if not 0 <= position < len(self):
            raise IndexError("source index out of range")
        if position not in self._fetched:
            self._fetch([position])
        return self._fetched[position]

    def __iter__(self) -> Iterator[Any]:
        self._fetch([p for p in range(len(self)) if p not in self._fetched])
        return (self._fetched[p] for p in range(len(self)))

    def _fetch(self, positions: list[int]) -> None:
        """Fetch ``positions`` (ascending), one task per shard holding some."""
        if not positions:
            return
        sharded = self._sharded
        offsets = sharded.source_offsets
        wanted = np.array(positions, dtype=np.int64)
        shard_of = np.searchsorted(offsets, wanted, side="right") - 1
        shards = np.unique(shard_of).tolist()
        futures = [
            sharded.client.submit(
                _sources_of, sharded._shards[shard],
                (wanted[shard_of == shard] - offsets[shard]).tolist(), pure=False,
            )
            for shard in shards
        ]
        for shard, records in zip(shards, sharded.client.gather(futures)):
            self._fetched.update(zip(wanted[shard_of == shard].tolist(), records))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, abc.Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(other) == len(self) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> Any:
        return (tuple, (tuple(self),))

    def __repr__(self) -> str:
        return f"<{len(self)} sources of a sharded corpus>"


def _check_pipeline(pipeline: Any) -> Any:
    from citekit.pipeline import Pipeline

    if pipeline is None:
        return Pipeline()
    if not isinstance(pipeline, Pipeline):
        raise TypeError(f"pipeline must be a Pipeline, got {type(pipeline).__name__}")
    if pipeline.embedder is not None:
        raise ValueError(
            "pipeline has an embedder: sharded corpora search lexically only (passage "
            "embeddings are not sharded)"
        )
    return pipeline


def _query_batches(pipeline: Any, answers: list[str]) -> list[Any]:
    """The sentences of ``answers`` in the batches :meth:`Pipeline.align_many
    <citekit.pipeline.Pipeline.align_many>` aligns them in (read as it reads them)."""
    from citekit._validation import check_str
    from citekit.pipeline import _query_ranges

    for position, answer in enumerate(answers):
        check_str(answer, f"answers[{position}]")
    queries = pipeline._read_answers(answers, pipeline._tokenizer_for(None))
    return [queries.pack(first, last) for first, last in _query_ranges(len(queries))]


def _merge(
    per_shard: list[tasks.ShardFound], passage_offsets: np.ndarray, source_offsets: np.ndarray,
    k: int,
) -> tuple[TopK, np.ndarray, np.ndarray]:
    """The whole corpus's top ``k`` of every query from the shards' top ``k``: by rank
    score, ties to the lower global passage (each shard's best ``k`` hold every passage
    of the global best ``k`` that it has). Returns the :class:`TopK` (global passage
    numbers), the ``held`` bits and the global source of each candidate."""
    n_queries = per_shard[0].offsets.shape[0] - 1
    query = np.concatenate(
        [np.repeat(np.arange(n_queries, dtype=np.int64), np.diff(f.offsets)) for f in per_shard]
    )
    passage = np.concatenate([f.passages + passage_offsets[n] for n, f in enumerate(per_shard)])
    source = np.concatenate([f.sources + source_offsets[n] for n, f in enumerate(per_shard)])
    rank = np.concatenate([f.rank_scores for f in per_shard])
    scores = np.concatenate([f.scores for f in per_shard])
    held = np.concatenate([f.held for f in per_shard])
    order = np.lexsort((passage, -rank, query))
    sorted_query = query[order]
    first = np.searchsorted(sorted_query, np.arange(n_queries))
    kept = np.arange(order.shape[0]) - first[sorted_query] < k
    keep = order[kept]
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(np.bincount(sorted_query[kept], minlength=n_queries), out=offsets[1:])
    return TopK(offsets, passage[keep], scores[keep]), held[keep], source[keep]
