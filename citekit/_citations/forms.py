"""The folded word forms of a corpus (:func:`~citekit._citations.content.fold_surface`: light
inflections, ``grows``/``growing``, ``twelve``/``12``), which the feasibility and coverage
stages compare with the sentence's words.

Forms are numbered in one table shared by every corpus of the process
(:class:`FormTable`); each corpus keeps the form of each of its words
(:class:`SurfaceForms`, in ``corpus.caches["surface_forms"]``), learnt when a call first
looks at a passage, or all at once by :meth:`citekit.pipeline.Pipeline.prepare`.
"""

from __future__ import annotations

import numpy as np

from citekit._citations.content import fold_surface
from citekit.corpus import Corpus
from citekit.index import gather_ranges
from citekit.kernels._coverage import rows_hold

__all__ = ["FormTable", "SurfaceForms"]


class FormTable:
    """Folded forms (:func:`~citekit._citations.content.fold_surface`) of token texts, numbered; a
    hyphenated word also stands for each of its parts ("twelve-bar" holds "12" and "bar").
    Shared by every corpus of the process: folding is a pure function of the text and
    words repeat across corpora (a new table replaces a full one; calls under way keep
    theirs)."""

    limit = 1 << 18  # texts; ~40 MB at most

    def __init__(self) -> None:
        import threading

        self.number: dict[str, int] = {}
        # text -> its form's number, or -1 - number when the text has parts
        self.of_surface: dict[str, int] = {}
        self.parts: dict[str, tuple[int, ...]] = {}
        self._lock = threading.Lock()  # numbering a new form (calls may run in threads)

    def form(self, form: str) -> int:
        """The number of a folded form."""
        number = self.number.get(form)
        if number is None:
            with self._lock:
                number = self.number.setdefault(form, len(self.number))
        return number

    def surface(self, surface: str) -> int:
        """The code of a token's text (:attr:`of_surface`), learning it if new."""
        found = self.of_surface.get(surface)
        if found is None:
            folded = fold_surface(surface)
            found = self.form(folded)
            if "-" in folded:
                parts = {self.form(fold_surface(part)) for part in folded.split("-") if part}
                parts.discard(found)
                if parts:
                    self.parts[surface] = tuple(sorted(parts))
                    found = -1 - found
            self.of_surface[surface] = found
        return found


_FORM_TABLE = [FormTable()]


class SurfaceForms:
    """The form numbers (:class:`FormTable`) of the words of a corpus, found when first
    needed and kept on the corpus: a call folds only the words of the passages it looks
    at, never the whole vocabulary. A word (index column) is folded once per corpus, from
    the text of its first occurrence."""

    _UNKNOWN = np.iinfo(np.int64).min

    def __init__(self, corpus: Corpus, table: FormTable) -> None:
        self.corpus = corpus
        self.table = table
        self.form = table.form
        n_terms = corpus.index.n_terms
        # each column's code in the table (negative: has parts), or _UNKNOWN
        self.column_code = np.full(n_terms, self._UNKNOWN, dtype=np.int64)
        # each column's form, and its part forms: part_forms[part_start:+part_count]
        self.column_form = np.full(n_terms, -1, dtype=np.int64)
        self.part_start = np.zeros(n_terms, dtype=np.int64)
        self.part_count = np.zeros(n_terms, dtype=np.int64)
        self.part_forms = np.zeros(0, dtype=np.int64)
        # passages whose every word has its form
        self.known = np.zeros(corpus.n_passages, dtype=bool)
        self._first_positions: np.ndarray | None = None
        # learning appends to part_forms: one thread at a time (words once learnt never
        # change, so readers need no lock)
        import threading

        self._lock = threading.Lock()

    @classmethod
    def of(cls, corpus: Corpus) -> "SurfaceForms":
        """The forms of ``corpus``'s words (``corpus.caches["surface_forms"]``), numbered
        in the process's current table (a new one when the table is full)."""
        table = _FORM_TABLE[0]
        if len(table.of_surface) > FormTable.limit:
            table = _FORM_TABLE[0] = FormTable()
        cached = corpus.caches.get("surface_forms")
        if cached is None or cached.table is not table:
            cached = corpus.caches["surface_forms"] = cls(corpus, table)
        return cached

    def first_positions(self) -> np.ndarray:
        """Where each index column's token first occurs in the corpus."""
        if self._first_positions is None:
            index = self.corpus.index
            first = index.first_positions
            if first is None or first.shape[0] != index.n_terms:  # e.g. a loaded corpus
                from citekit.kernels._index import factorize

                vocabulary, _, first = factorize(self.corpus.token_ids, return_first=True)
                if not np.array_equal(vocabulary, index.vocabulary):
                    raise ValueError("the corpus index does not match its tokens")
            self._first_positions = first
        return self._first_positions

    def _learn_columns(self, columns: np.ndarray) -> None:
        """Fold the words of ``columns`` (distinct, not known yet)."""
        corpus = self.corpus
        first = self.first_positions()[columns]
        # in corpus order, so that each source's words are sliced out of its text in one
        # C-level map (a Python loop per word is most of the cost)
        order = np.argsort(first, kind="stable")
        columns, first = columns[order], first[order]
        bounds = np.searchsorted(first, corpus.source_token_offsets)
        starts, ends = corpus.token_starts[first].tolist(), corpus.token_ends[first].tolist()
        surfaces: list[str] = []
        # only the sources holding such a word (a loop over every source of a large
        # corpus cost more than the words)
        holding = np.flatnonzero(bounds[1:] > bounds[:-1])
        for source, lo, hi in zip(
            holding.tolist(), bounds[holding].tolist(), bounds[holding + 1].tolist()
        ):
            text = corpus.source_text(source)
            surfaces.extend(map(text.__getitem__, map(slice, starts[lo:hi], ends[lo:hi])))
        found = list(map(self.table.of_surface.get, surfaces))
        if None in found:
            for position, code in enumerate(found):
                if code is None:
                    found[position] = self.table.surface(surfaces[position])
        codes = np.array(found, dtype=np.int64)
        self.column_code[columns] = codes
        self.column_form[columns] = np.where(codes < 0, -1 - codes, codes)
        with_parts = np.flatnonzero(codes < 0)
        if with_parts.size:
            parts = [self.table.parts[surfaces[i]] for i in with_parts.tolist()]
            counts = np.array([len(numbers) for numbers in parts], dtype=np.int64)
            self.part_count[columns[with_parts]] = counts
            self.part_start[columns[with_parts]] = (
                self.part_forms.shape[0] + np.cumsum(counts) - counts
            )
            self.part_forms = np.concatenate(
                [self.part_forms, np.array([n for numbers in parts for n in numbers], np.int64)]
            )

    def learn_all(self) -> None:
        """Fold every word of the corpus (:meth:`citekit.pipeline.Pipeline.prepare`)."""
        with self._lock:
            unknown = np.flatnonzero(self.column_code == self._UNKNOWN)
            if unknown.size:
                self._learn_columns(unknown)
            self.known[:] = True

    def learn(self, passages: np.ndarray) -> None:
        """Make sure every word of ``passages`` (repeats allowed) has its form."""
        if self.known[passages].all():
            return
        with self._lock:
            self._learn_locked(passages)

    def _learn_locked(self, passages: np.ndarray) -> None:
        fresh = passages[~self.known[passages]]
        if fresh.size == 0:
            return
        indptr, indices = self.corpus.index.rows
        positions, _ = gather_ranges(indptr[fresh], indptr[fresh + 1])
        columns = indices[positions]
        unknown = columns[self.column_code[columns] == self._UNKNOWN]
        if unknown.size:
            # distinct and ascending, by a mask over the columns (cheaper than np.unique)
            mark = np.zeros(self.column_code.shape[0], dtype=bool)
            mark[unknown] = True
            self._learn_columns(np.flatnonzero(mark))
        self.known[fresh] = True

    def held(
        self,
        passages: np.ndarray,
        forms: np.ndarray,
        columns: np.ndarray | None = None,
    ) -> np.ndarray:
        """``held[i]``: whether passage ``passages[i]`` holds a token of form ``forms[i]``,
        or (``columns``, when given) the index column ``columns[i]`` itself."""
        if passages.shape[0] == 0:
            return np.zeros(0, dtype=bool)
        self.learn(np.unique(passages))
        indptr, indices = self.corpus.index.rows
        return rows_hold(
            indptr,
            indices,
            self.column_form,
            self.part_start,
            self.part_count,
            self.part_forms,  # (read after learning: holds the parts of every word asked)
            passages,
            np.full(passages.shape[0], -1, dtype=np.int64) if columns is None else columns,
            forms,
        )
