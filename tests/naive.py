"""Slow, obviously correct reference implementations that the numba kernels must match.

Nothing here is optimized: each function follows its definition literally (tuples for
the tie-breaking order, full matrices, Python lists). Sections follow the package: the
kernels of citekit.kernels in data-flow order (alignment, copying, segmentation, index,
retrieval, overlap, scoring, rounds and ranking, evidence, coverage), then the citation
stages' reading of values, directions and conflicts (citekit._citations).
"""

from __future__ import annotations

import difflib


from typing import Sequence


# =======================================================================================
# Alignment (citekit.kernels: _sw, _sw_wide, _band, _lcs)
# =======================================================================================


def naive_band(query: Sequence[int], target: Sequence[int], band_width: int):
    """The seeded band: ``(diag_lo, diag_hi)``, or None when no token is shared.

    The centre is the token diagonal ``c`` (``-(n-1) <= c <= m-1``) whose window
    ``[c - w, c + w]`` holds the most pairs ``query[i] == target[j]`` (by diagonal
    ``j - i``); ties go to the smallest ``c``.
    """
    n, m = len(query), len(target)
    diagonals = [j - i for i in range(n) for j in range(m) if query[i] == target[j]]
    if not diagonals:
        return None
    best_center, best_count = None, -1
    for center in range(-(n - 1), m):
        count = sum(1 for d in diagonals if center - band_width <= d <= center + band_width)
        if count > best_count:
            best_center, best_count = center, count
    return max(best_center - band_width, -n), min(best_center + band_width, m)


def naive_smith_waterman(
    query: Sequence[int],
    target: Sequence[int],
    match_score: int = 2,
    mismatch_score: int = -1,
    gap_score: int = -1,
    diag_lo: int | None = None,
    diag_hi: int | None = None,
):
    """Full-matrix Smith-Waterman with citekit's tie-breaking, restricted to a band.

    Returns ``(score, query_start, query_end, target_start, target_end, matches, blocks,
    path)`` where ``path`` lists the DP cells visited from start to end (empty for the
    empty alignment).

    Cell ``(i, j)`` (``i`` query tokens and ``j`` target tokens consumed) holds the best
    tuple ``(score, matches, -target_start, -query_start)`` over alignments ending there;
    only cells with ``diag_lo <= j - i <= diag_hi`` exist.
    """
    n, m = len(query), len(target)
    empty = (0, 0, 0, 0, 0, 0, (), [])
    if n == 0 or m == 0:
        return empty
    lo = -n if diag_lo is None else diag_lo
    hi = m if diag_hi is None else diag_hi

    def inside(i, j):
        return 0 <= i <= n and 0 <= j <= m and lo <= j - i <= hi

    def step(i, j):  # diagonal step into cell (i, j)
        if query[i - 1] == target[j - 1]:
            return (match_score, 1)
        return (mismatch_score, 0)

    def add(cell, delta):
        return (cell[0] + delta[0], cell[1] + delta[1], cell[2], cell[3])

    table = {}
    for i in range(n + 1):
        for j in range(m + 1):
            if not inside(i, j):
                continue
            candidates = [(0, 0, -j, -i)]
            if i > 0 and j > 0 and inside(i - 1, j - 1):
                candidates.append(add(table[i - 1, j - 1], step(i, j)))
            if i > 0 and inside(i - 1, j):
                candidates.append(add(table[i - 1, j], (gap_score, 0)))
            if j > 0 and inside(i, j - 1):
                candidates.append(add(table[i, j - 1], (gap_score, 0)))
            table[i, j] = max(candidates)

    def preference(cell):
        (i, j), (score, matches, neg_ts, neg_qs) = cell
        span = (i + neg_qs) + (j + neg_ts)
        return (score, matches, neg_ts, neg_qs, -span, -j, -i)

    (end_i, end_j), best = max(table.items(), key=preference)
    if best[0] <= 0:
        return empty
    start_j, start_i = -best[2], -best[3]
    i, j = end_i, end_j
    path = [(i, j)]
    matches = 0
    matched_pairs = []
    while (i, j) != (start_i, start_j):
        value = table[i, j]
        diagonal = i > 0 and j > 0 and inside(i - 1, j - 1)
        if diagonal and add(table[i - 1, j - 1], step(i, j)) == value:
            if query[i - 1] == target[j - 1]:
                matches += 1
                matched_pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i > 0 and inside(i - 1, j) and add(table[i - 1, j], (gap_score, 0)) == value:
            i -= 1
        elif j > 0 and inside(i, j - 1) and add(table[i, j - 1], (gap_score, 0)) == value:
            j -= 1
        else:
            raise AssertionError("reference traceback lost its path")
        path.append((i, j))
    path.reverse()
    assert matches == best[1]
    # runs of matched pairs that are consecutive on the path
    matched_pairs.reverse()
    blocks = []
    for qi, tj in matched_pairs:
        if blocks and blocks[-1][0] + blocks[-1][2] == qi and blocks[-1][1] + blocks[-1][2] == tj:
            blocks[-1][2] += 1
        else:
            blocks.append([qi, tj, 1])
    return (best[0], start_i, end_i, start_j, end_j, matches, tuple(map(tuple, blocks)), path)


def naive_needs_band_or_wide_keys(n, m, band_width, full_cell_budget, match_score,
                                  max_penalty, key_bits_limit):
    """Whether a pair of n and m tokens leaves the full DP with one 64-bit key: an
    explicit band (``band_width >= 0``), a traceback store ``(n + m + 1) * (min(n, m) +
    1)`` above ``full_cell_budget``, or keys of ``score | matches | m - target_start | n
    - query_start`` wider than ``key_bits_limit`` bits. Empty pairs never do."""
    if n == 0 or m == 0:
        return False
    if band_width >= 0 or (n + m + 1) * (min(n, m) + 1) > full_cell_budget:
        return True
    field_bits = n.bit_length() + m.bit_length() + min(n, m).bit_length()
    score_bits = max(match_score * min(n, m) + 1, max_penalty).bit_length()
    return field_bits + score_bits > key_bits_limit


def naive_lcs_length(a: Sequence[int], b: Sequence[int]) -> int:
    """Textbook O(n * m) LCS dynamic programme."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def naive_matching_blocks(a: Sequence[int], b: Sequence[int]) -> list[tuple[int, int, int]]:
    """difflib itself: the behaviour ``matching_blocks`` must reproduce."""
    matcher = difflib.SequenceMatcher(None, list(a), list(b), autojunk=False)
    return [tuple(block) for block in matcher.get_matching_blocks()]


# =======================================================================================
# Copying and gathering ranges (citekit.kernels._copy)
# =======================================================================================


def naive_gather_ranges(starts, ends):
    """``(positions, rows)``: ``range(s, e)`` of every range, concatenated, and its row."""
    positions = [p for s, e in zip(starts, ends) for p in range(s, e)]
    rows = [i for i, (s, e) in enumerate(zip(starts, ends)) for _ in range(s, e)]
    return positions, rows


def naive_copy_range(target, target_start, source, source_start, n):
    """Reference of :func:`citekit.kernels._copy.copy_range` and ``copy_rows``: numpy's slice
    assignment (rows of a 2-D array, or elements of a 1-D one)."""
    target[target_start : target_start + n] = source[source_start : source_start + n]


# =======================================================================================
# Sentence segmentation (reference of citekit.kernels._segment, owned with citekit.segment)
#
# The regex-and-Python implementation that citekit.segment.SentenceSegmenter used before
# its numba kernel, kept verbatim in behaviour: the kernel must give the same spans for
# every text and every option.
# =======================================================================================

import functools  # noqa: E402
import re  # noqa: E402


_NAIVE_DEFAULT_ABBREVIATIONS = frozenset("""
    dr mr mrs ms mx prof sr jr st rev hon gen col capt lt sgt maj cmdr adm gov sen rep pres
    fr sr mt ft vs cf e.g i.e viz al fig figs eq eqs no nos vol vols ch sec p pp ed eds
    approx ca est dept univ assn bros jan feb mar apr jun jul aug sep sept oct nov dec
    """.split())


_NAIVE_SENTENCE_FINAL_ABBREVIATIONS = frozenset("etc inc ltd co corp llc plc".split())


_NAIVE_LINE_BREAK = re.compile(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]\n?")


_NAIVE_BLANK_LINES = re.compile(r"(?:[ \t]*(?:\r\n|[\n\r\u2029])){2,}")


_NAIVE_LIST_MARKER = re.compile(
    r"[ \t]*(?:[-*+•‣◦▪▫–—·]"
    r"|\(?(?:\d{1,3}|[a-z]|[A-Z](?=\))"
    r"|(?=[ivx])x{0,3}(?:ix|iv|v?i{0,3})|(?=[IVX])(?![IVX]\.)X{0,3}(?:IX|IV|V?I{0,3}))[.)])[ \t]+"
)


_NAIVE_CLOSERS = "\"'”’»)]}」』】〉》〕）］｝›"


_NAIVE_SPACED_TERMINATORS = ".?!…\u2024‼‽⁇⁈⁉⸮⸼\u2e53\u2e54﹒．"


# Unicode's Sentence_Terminal characters but the spaced ones above (test_segment_scripts
# checks the two lists against the regex module's \p{Sentence_Terminal}): in the Basic
# Multilingual Plane, and above it
_NAIVE_UNSPACED_BMP = (
    "。！？।॥؟۔\u0589\u061d\u061e\u0700-\u0702\u07f9\u0837\u0839\u083d\u083e\u104a\u104b"
    "\u1362\u1367\u1368\u166e\u1735\u1736\u17d4\u17d5\u1803\u1809\u1944\u1945"
    "\u1aa8-\u1aab\u1b4e\u1b4f\u1b5a\u1b5b\u1b5e\u1b5f\u1b7d-\u1b7f\u1c3b\u1c3c\u1c7e"
    "\u1c7f\u2cf9-\u2cfb\ua4ff\ua60e\ua60f\ua6f3\ua6f7\ua876\ua877\ua8ce\ua8cf\ua92f"
    "\ua9c8\ua9c9\uaa5d-\uaa5f\uaaf0\uaaf1\uabeb\ufe12\ufe15\ufe16\ufe56\ufe57\uff61"
)
_NAIVE_UNSPACED_ASTRAL = (
    "\U00010a56\U00010a57\U00010f55-\U00010f59\U00010f86-\U00010f89\U00011047\U00011048"
    "\U000110be-\U000110c1\U00011141-\U00011143\U000111c5\U000111c6\U000111cd\U000111de"
    "\U000111df\U00011238\U00011239\U0001123b\U0001123c\U000112a9\U000113d4\U000113d5"
    "\U0001144b\U0001144c\U000115c2\U000115c3\U000115c9-\U000115d7\U00011641\U00011642"
    "\U0001173c-\U0001173e\U00011944\U00011946\U00011a42\U00011a43\U00011a9b\U00011a9c"
    "\U00011c41\U00011c42\U00011ef7\U00011ef8\U00011f43\U00011f44\U00016a6e\U00016a6f"
    "\U00016af5\U00016b37\U00016b38\U00016b44\U00016d6e\U00016d6f\U00016e98\U0001bc9f"
    "\U0001da88"
)
_NAIVE_UNSPACED_TERMINATORS = _NAIVE_UNSPACED_BMP + _NAIVE_UNSPACED_ASTRAL
_NAIVE_ASTRAL_TERMINATOR = re.compile("[" + _NAIVE_UNSPACED_ASTRAL + "]")
_NAIVE_ABOVE_BMP = re.compile("[\U00010000-\U0010ffff]")


# closers, and reference markers ([1], [^2], [2, 3], [4-6]) right after the terminator
_NAIVE_MARKER = r"\[\^?[0-9]{1,4}(?:[ \t]*[,;\u2013-][ \t]*\^?[0-9]{1,4})*[ \t]*\]"


_NAIVE_CLOSER_RUN = "(?:[" + re.escape(_NAIVE_CLOSERS) + "]|" + _NAIVE_MARKER + ")*"


def _naive_run_patterns(unspaced: str) -> tuple[re.Pattern, re.Pattern]:
    """The terminator-run pattern and the unspaced-terminator pattern for the unspaced
    terminators of the character class body ``unspaced``.

    The run pattern's group 1: terminators and the closers after them; group 2: the
    whitespace that follows. Only runs that can end a sentence: with an unspaced
    terminator, or followed by whitespace or the end of the block.
    """
    every = "[" + re.escape(_NAIVE_SPACED_TERMINATORS) + unspaced + "]"
    spaced = "[" + re.escape(_NAIVE_SPACED_TERMINATORS) + "]"
    unspaced_class = "[" + unspaced + "]"
    run = re.compile(
        f"({every}"
        f"(?:(?<={unspaced_class}){every}*{_NAIVE_CLOSER_RUN}"
        f"|{spaced}*(?:{unspaced_class}{every}*{_NAIVE_CLOSER_RUN}"
        f"|{_NAIVE_CLOSER_RUN}(?=\\s|\\Z))))"
        r"(\s*)"
    )
    return run, re.compile(unspaced_class)


# (every terminator in one class: the definition, which tests compare with a reference)
NAIVE_TERMINATOR_RUN = _naive_run_patterns(_NAIVE_UNSPACED_TERMINATORS)[0]


@functools.lru_cache(maxsize=64)
def _naive_patterns_with_stand_in(stand_in: str) -> tuple[re.Pattern, re.Pattern]:
    return _naive_run_patterns(_NAIVE_UNSPACED_BMP + re.escape(stand_in))


def _naive_scan_text(text: str) -> tuple[str, re.Pattern, re.Pattern]:
    """The text the rules read and their two patterns. A class holding characters above
    the BMP makes Python's regular expressions scan several times slower, so the patterns
    hold the BMP terminators only, and a text with terminators above the BMP is read with
    each of them replaced by one private-use character it does not hold, added to the
    patterns: one code point for one (the offsets stay), and a character with the
    properties the rules ask about that a terminator has (no letter, digit, space, case,
    opener or closer)."""
    in_bmp = text.isascii() or len(text.encode("utf-16-le", "surrogatepass")) == 2 * len(text)
    terminators = () if in_bmp else {
        char for char in set(_NAIVE_ABOVE_BMP.findall(text))
        if _NAIVE_ASTRAL_TERMINATOR.fullmatch(char)
    }
    if not terminators:
        return (text, *_naive_patterns_with_stand_in(""))
    stand_in = next(chr(code) for code in range(0xE000, 0xF900) if chr(code) not in text)
    return (
        text.translate({ord(char): stand_in for char in terminators}),
        *_naive_patterns_with_stand_in(stand_in),
    )


# letters, or dotted letter groups (U.S, e.g, Ph.D), before a period
_NAIVE_ABBREVIATION_SHAPE = re.compile(r"(?:[^\W\d_]+\.)*[^\W\d_]+")


_NAIVE_OPENERS = "\"'“‘«([{"


def naive_segment(
    text: str,
    abbreviations=None,
    extra_abbreviations=(),
    split_on_newlines: bool = True,
    rules: str = "citekit",
) -> list[tuple[int, int]]:
    """Sentence spans by the rules of ``citekit.segment`` with regular expressions and a
    Python decision per terminator run (abbreviation keys as ``SentenceSegmenter`` makes
    them: stripped, without the final period, lower case).

    ``rules="cite-right"``: a lower-case word after a terminator run does not keep the
    sentence going, and every ``;`` ends a sentence, but for one inside the closers and
    reference markers right after a terminator run (``.[1; 2]``: they go with the run)."""
    cite_right = rules == "cite-right"
    base = _NAIVE_DEFAULT_ABBREVIATIONS if abbreviations is None else abbreviations
    keys = {word.strip().rstrip(".").lower() for word in base}
    keys |= {word.strip().rstrip(".").lower() for word in extra_abbreviations}
    text, terminator_run, unspaced_terminator = _naive_scan_text(text)
    spans: list[tuple[int, int]] = []
    block_pattern = _NAIVE_LINE_BREAK if split_on_newlines else _NAIVE_BLANK_LINES
    block_start = 0
    blocks = []
    for match in block_pattern.finditer(text):
        blocks.append((block_start, match.start()))
        block_start = match.end()
    blocks.append((block_start, len(text)))
    for block_start, block_end in blocks:
        marker = _NAIVE_LIST_MARKER.match(text, block_start, block_end)
        if marker is not None:
            block_start = marker.end()
        sentence_start = block_start
        boundaries = [
            match.end(1)
            for match in terminator_run.finditer(text, block_start, block_end)
            if _naive_is_boundary(text, match, block_end, keys, unspaced_terminator, cite_right)
        ]
        if cite_right:
            boundaries = sorted(
                set(boundaries)
                | _naive_semicolon_ends(text, block_start, block_end, unspaced_terminator)
            )
        for boundary in boundaries:
            _naive_append_trimmed(text, sentence_start, boundary, spans)
            sentence_start = boundary
        _naive_append_trimmed(text, sentence_start, block_end, spans)
    return spans


def _naive_semicolon_ends(text: str, start: int, end: int, unspaced_terminator) -> set[int]:
    """Positions just after each ``;`` of ``text[start:end]`` that is not inside the run
    of terminators, closers and reference markers that starts at a terminator."""
    runs = [
        match.span()
        for match in _naive_bare_runs(unspaced_terminator.pattern).finditer(text, start, end)
    ]
    return {
        position + 1
        for position in range(start, end)
        if text[position] == ";" and not any(a <= position < b for a, b in runs)
    }


@functools.lru_cache(maxsize=64)
def _naive_bare_runs(unspaced_class: str) -> re.Pattern:
    # terminators as the scan text has them (``unspaced_class``: the unspaced ones, with
    # the stand-in of those above the BMP), then closers and markers
    every = "[" + re.escape(_NAIVE_SPACED_TERMINATORS) + unspaced_class[1:-1] + "]"
    return re.compile(f"{every}+{_NAIVE_CLOSER_RUN}")


def _naive_is_boundary(
    text: str, match, block_end: int, keys, unspaced_terminator, cite_right: bool = False
) -> bool:
    run = match.group(1)
    if not run.isascii() and unspaced_terminator.search(run):
        return True
    after = match.end()
    next_char = text[after] if after < block_end else ""
    if next_char.islower() and not "\u10d0" <= next_char <= "\u10ff" and not cite_right:
        # (Georgian's Mkhedruli letters are lower case, but start sentences too)
        return False  # "approx. five", "wait… what", '"Really?" she asked'
    if run[0] != "." or run.startswith(".."):
        return True
    # a single period (possibly followed by closers): abbreviations and initials
    run_start = match.start()
    lookback = text[max(0, run_start - 64) : run_start]
    words = lookback.rsplit(None, 1)
    if not words or lookback[-1].isspace():
        return True
    before = words[-1].lstrip(_NAIVE_OPENERS)
    if _NAIVE_ABBREVIATION_SHAPE.fullmatch(before) is None:
        return True  # a number, or a word glued to other punctuation
    key = before.lower()
    if key in keys:
        return False
    if "." in before:  # U.S., e.g, Ph.D
        return False
    if len(before) == 1 and before.isupper():  # an initial: J. K. Rowling
        return False
    if key in _NAIVE_SENTENCE_FINAL_ABBREVIATIONS:
        return not next_char or next_char.isupper() or not next_char.isalpha()
    return True


def _naive_append_trimmed(text: str, start: int, end: int, spans: list) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append((start, end))


# =======================================================================================
# Index arrays and passage windows (citekit.kernels._index)
# =======================================================================================


def naive_index_arrays(ids, starts, ends):
    """Sorted distinct ids, where each first occurs, each range's sorted distinct columns,
    and each column's ranges (lists)."""
    ids = list(ids)
    vocabulary = sorted(set(ids))
    column = {value: j for j, value in enumerate(vocabulary)}
    first_positions = [ids.index(value) for value in vocabulary]
    rows = [sorted({column[value] for value in ids[a:b]}) for a, b in zip(starts, ends)]
    return vocabulary, first_positions, rows, naive_transpose(rows, len(vocabulary))


def naive_ascending_order(values):
    """Positions of ``values`` in ascending order, equal values in order of position."""
    return sorted(range(len(values)), key=lambda position: (values[position], position))


def naive_windows(n_sentences, size, stride):
    """Passage windows ``(first, last)`` over ``n_sentences`` sentences: starts 0, stride,
    2 * stride, ... up to the first window that reaches the last sentence; when the
    stride jumps past the last sentence, that window ends at the last sentence instead."""
    windows = []
    first = 0
    while n_sentences:
        if first >= n_sentences:
            first = max(n_sentences - size, 0)
        last = min(first + size, n_sentences)
        windows.append((first, last))
        if last >= n_sentences:
            break
        first += stride
    return windows


def naive_passage_windows(spans, size, stride):
    """:func:`naive_windows` over ``spans`` with their characters: per window ``(first,
    last, char start of the first sentence, char end of the last)``."""
    return [
        (first, last, spans[first][0], spans[last - 1][1])
        for first, last in naive_windows(len(spans), size, stride)
    ]


def naive_corpus_passages(sources, size, stride):
    """Passage rows of :func:`citekit.kernels._index.corpus_arrays` (7 lists).

    ``sources``: per source ``(token_spans, sentence_spans)``, lists of ``(start, end)``.
    A window's tokens are those lying wholly inside its characters, numbered across
    sources; with none, the empty range where the next token would start.
    """
    rows = [[] for _ in range(7)]
    token_base = 0
    for source, (token_spans, sentence_spans) in enumerate(sources):
        for first, last in naive_windows(len(sentence_spans), size, stride):
            char_start, char_end = sentence_spans[first][0], sentence_spans[last - 1][1]
            inside = [
                token_base + i
                for i, (start, end) in enumerate(token_spans)
                if start >= char_start and end <= char_end
            ]
            if inside:
                token_start, token_end = inside[0], inside[-1] + 1
            else:
                later = [i for i, (start, _) in enumerate(token_spans) if start >= char_start]
                token_start = token_end = token_base + (later[0] if later else len(token_spans))
            for row, value in zip(
                rows, (source, token_start, token_end, char_start, char_end, first, last)
            ):
                row.append(value)
        token_base += len(token_spans)
    return rows


def naive_range_rows(columns, starts, ends):
    """Row ``p``: the distinct values of ``columns[starts[p]:ends[p]]``, sorted."""
    return [sorted(set(columns[a:b])) for a, b in zip(starts, ends)]


def naive_transpose(rows, n_columns):
    """Column ``c``: the rows holding ``c``, ascending."""
    return [[p for p, row in enumerate(rows) if c in row] for c in range(n_columns)]


# =======================================================================================
# Retrieval (citekit.kernels._retrieval, _retrieval_masks, _retrieval_select)
# =======================================================================================


def naive_index_terms(queries, vocabulary, idf, unseen_idf):
    """queries[q] = list of (token id, rank flag). Per query, its distinct ids ascending:
    (query, column or -1, weight, any flag); and per query the weights summed in that
    order."""
    terms, totals = [], []
    for q, tokens in enumerate(queries):
        total = 0.0
        for token in sorted({token for token, _ in tokens}):
            column = vocabulary.index(token) if token in vocabulary else -1
            weight = idf[column] if column >= 0 else unseen_idf
            terms.append((q, column, weight, any(f for t, f in tokens if t == token)))
            total += weight
        totals.append(total)
    return terms, totals


def naive_top_candidates(passage_sets, queries, k):
    """queries[q] = list of (column, weight, ranks); passage_sets[p] = set of columns.

    The k passages with the largest sum of RANKING weights (ties: lower passage), each
    with that sum and the sum over every term."""
    out = []
    for terms in queries:
        rank = {}
        for p, columns in enumerate(passage_sets):
            value = sum(w for c, w, r in terms if r and c in columns)
            if value > 0:
                rank[p] = value
        best = sorted(rank, key=lambda p: (-rank[p], p))[:k]
        full = [sum(w for c, w, _ in terms if c in passage_sets[p]) for p in best]
        out.append((best, [rank[p] for p in best], full))
    return out


def assert_top_candidates_by_definition(got, passage_sets, queries, k):
    """``got`` (offsets, passages, rank scores, scores of ``top_candidates``) equals
    :func:`naive_top_candidates` query by query: for weights whose every summation order
    is exact (integers), where the definition applies as it stands."""
    out_offsets, passages, rank_scores, scores = got
    for q, (best, rank, full) in enumerate(naive_top_candidates(passage_sets, queries, k)):
        lo, hi = out_offsets[q], out_offsets[q + 1]
        assert passages[lo:hi].tolist() == best
        assert rank_scores[lo:hi].tolist() == rank
        assert scores[lo:hi].tolist() == full


def naive_top_candidates_in_order(
    posting_pointers, posting_passages, rows, n_passages, term_columns, term_weights,
    term_ranks, term_offsets, k,
):
    """The algorithm of ``citekit.kernels._retrieval.top_candidates`` before pruning, step
    by step, to compare its arrays bit for bit.

    A passage's rank score is its ranking terms' weights added one at a time, in query
    order, to 0.0 (every posting list walked in full); its full score adds, in query
    order, the weights of the non-ranking terms its row holds. The ``k`` best by larger
    rank score, then lower passage. Returns ``(offsets, passages, rank_scores, scores)``.
    """
    import numpy as np

    row_pointers, row_columns = rows
    offsets, passages, rank_scores, scores = [0], [], [], []
    for query in range(len(term_offsets) - 1):
        terms = range(term_offsets[query], term_offsets[query + 1])
        totals = np.zeros(n_passages)
        for term in terms:
            column = term_columns[term]
            if column >= 0 and term_ranks[term]:
                lo, hi = posting_pointers[column], posting_pointers[column + 1]
                # a posting list names each passage once: one rounded addition each
                totals[posting_passages[lo:hi]] += term_weights[term]
        touched = np.flatnonzero(totals)
        best = touched[np.lexsort((touched, -totals[touched]))][: max(k, 0)]
        for passage in best.tolist():
            row = set(row_columns[row_pointers[passage] : row_pointers[passage + 1]].tolist())
            full = totals[passage]
            for term in terms:
                column = term_columns[term]
                if column >= 0 and not term_ranks[term] and column in row:
                    full += term_weights[term]
            passages.append(passage)
            rank_scores.append(totals[passage])
            scores.append(full)
        offsets.append(len(passages))
    return (
        np.array(offsets, dtype=np.int64),
        np.array(passages, dtype=np.int64),
        np.array(rank_scores, dtype=np.float64),
        np.array(scores, dtype=np.float64),
    )


def naive_deal_queries(posting_pointers, term_columns, term_ranks, term_offsets, n_workers):
    """Longest-processing-time dealing: queries by load (entries of the ranking lists plus
    one) descending, ties by query; each to the least loaded worker (ties: the lowest).
    Returns the queries of each worker (ascending), the total entries and the loads."""
    loads = []
    for q in range(len(term_offsets) - 1):
        entries = 0
        for t in range(term_offsets[q], term_offsets[q + 1]):
            c = term_columns[t]
            if c >= 0 and term_ranks[t]:
                entries += posting_pointers[c + 1] - posting_pointers[c]
        loads.append(entries + 1)
    worker_load = [0] * n_workers
    dealt = [[] for _ in range(n_workers)]
    for q in sorted(range(len(loads)), key=lambda q: (-loads[q], q)):
        w = min(range(n_workers), key=lambda w: (worker_load[w], w))
        dealt[w].append(q)
        worker_load[w] += loads[q]
    return [sorted(d) for d in dealt], sum(loads) - len(loads), loads


def naive_pack_slots(counts, slot, columns):
    """Each of ``columns`` (lists) with query q's ``counts[q]`` entries taken from
    ``q * slot``, concatenated; and the CSR offsets."""
    packed = [[] for _ in columns]
    offsets = [0]
    for q, n in enumerate(counts):
        for out, column in zip(packed, columns):
            out.extend(column[q * slot:q * slot + n])
        offsets.append(offsets[-1] + n)
    return packed, offsets


def naive_held(rows, term_columns, term_offsets, out_offsets, passages):
    """The ``held`` of ``top_candidates(..., return_held=True)``: for candidate ``i`` of
    query ``q``, bit ``t`` set when its passage's row holds the column of term
    ``term_offsets[q] + t`` (-1 for queries of more than 63 terms)."""
    row_pointers, row_columns = rows
    held = []
    for q in range(len(term_offsets) - 1):
        first, last = term_offsets[q], term_offsets[q + 1]
        for i in range(out_offsets[q], out_offsets[q + 1]):
            passage = passages[i]
            row = set(row_columns[row_pointers[passage]:row_pointers[passage + 1]].tolist())
            if last - first > 63:
                held.append(-1)
                continue
            bits = 0
            for t in range(last - first):
                if term_columns[first + t] >= 0 and term_columns[first + t] in row:
                    bits |= 1 << t
            held.append(bits)
    return held


def naive_normalized_scores(offsets, sums, denominators):
    """The index's numpy expression: each entry's sum over its query's denominator (1
    when that is not positive)."""
    import numpy as np

    queries = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    with np.errstate(divide="ignore", invalid="ignore"):
        return sums / np.where(denominators[queries] > 0, denominators[queries], 1.0)


def naive_rank_score(weights, held):
    """A rank score as walking the lists sums it: the held terms' weights added one at a
    time, in query order, to 0.0."""
    total = 0.0
    for weight, is_held in zip(weights, held):
        if is_held:
            total += weight
    return total


def naive_kth_smallest(values, rank):
    """The ``rank``-th smallest (from 0) of ``values``."""
    return sorted(values)[rank]


def naive_collect_marked(words, bar):
    """The passages (ascending) whose word is at least ``bar``."""
    return [passage for passage, word in enumerate(words) if word >= bar]


def naive_sort_best(passages, values):
    """``(passages, values)`` larger value first, equal values by lower passage."""
    order = sorted(range(len(passages)), key=lambda i: (-values[i], passages[i]))
    return [passages[i] for i in order], [values[i] for i in order]


def naive_heaviest_first(terms, term_columns, term_weights, posting_pointers):
    """Positions of ``terms`` by weight, heaviest first; equal weights: the shorter
    posting list first, then the earlier position (MaxScore's walk order)."""

    def key(position):
        term = terms[position]
        column = term_columns[term]
        length = posting_pointers[column + 1] - posting_pointers[column]
        return (-term_weights[term], length, position)

    return sorted(range(len(terms)), key=key)

# =======================================================================================
# Overlap (citekit.kernels._overlap)
# =======================================================================================


def naive_group_into_terms(ids, offsets, flags, values):
    """Every query's terms (its distinct ids, ascending), numbered across queries: per
    term ``(value at its first token, occurrences, any flag set)``; the term offsets;
    per query its number of flagged terms; and the term of every token."""
    terms, term_offsets, n_flagged, token_terms = [], [0], [], [None] * len(ids)
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        positions = list(range(lo, hi))
        flagged = 0
        for token in sorted({ids[i] for i in positions}):
            occurrences = [i for i in positions if ids[i] == token]
            for i in occurrences:
                token_terms[i] = len(terms)
            flag = any(flags[i] for i in occurrences)
            terms.append((values[occurrences[0]], len(occurrences), flag))
            flagged += flag
        term_offsets.append(len(terms))
        n_flagged.append(flagged)
    return terms, term_offsets, n_flagged, token_terms


def naive_query_terms(queries):
    """``queries[q]`` lists ``(token_id, is_content, column)``; returns per query its
    distinct tokens ascending by id as ``(column, count, is_content)`` and the number of
    content ones."""
    terms, distinct_content = [], []
    for tokens in queries:
        by_id = {}
        for token, is_content, column in tokens:
            _, count, content = by_id.get(token, (column, 0, False))
            by_id[token] = (column, count + 1, content or is_content)
        terms.append([by_id[token] for token in sorted(by_id)])
        distinct_content.append(sum(1 for _, _, content in by_id.values() if content))
    return terms, distinct_content


def naive_pair_bag_counts(passage_sets, query_terms, pairs):
    """query_terms[q] = list of (column, count, is_content); passage_sets[p] = set of columns."""
    out = ([], [], [])
    for q, p in pairs:
        total = content = distinct = 0
        for column, count, is_content in query_terms[q]:
            if column >= 0 and column in passage_sets[p]:
                total += count
                if is_content:
                    content += count
                    distinct += 1
        out[0].append(total)
        out[1].append(content)
        out[2].append(distinct)
    return out


def naive_bag_counts_from_held(held, pair_query, term_offsets, term_counts, term_is_content):
    """``(all, content, distinct_content)`` per pair from its held bits (-1: unknown)."""
    out = ([], [], [])
    for bits, q in zip(held, pair_query):
        if bits < 0:
            for values in out:
                values.append(-1)
            continue
        terms = [term_offsets[q] + t for t in range(64) if bits >> t & 1]
        out[0].append(sum(term_counts[t] for t in terms))
        out[1].append(sum(term_counts[t] for t in terms if term_is_content[t]))
        out[2].append(sum(1 for t in terms if term_is_content[t]))
    return out


# =======================================================================================
# Scoring (citekit.kernels._scoring)
# =======================================================================================


def naive_pair_feasibility(pair_query, query_lengths, content_total, distinct_per_query,
                           content_occurrences, content_distinct, words_per_query,
                           word_distinct, min_answer_coverage, min_content_tokens):
    """The pipeline's numpy expressions for the quantities of ``pair_feasibility``."""
    import numpy as np

    safe_len = np.maximum(query_lengths[pair_query], 1)
    safe_content = np.maximum(content_total[pair_query], 1)
    coverage = word_distinct / np.maximum(words_per_query[pair_query], 1)
    min_content = np.minimum(min_content_tokens, (distinct_per_query[pair_query] + 1) // 2)
    feasible = (content_occurrences >= 1) & (
        (content_occurrences / safe_content >= min_answer_coverage)
        | (coverage >= min_answer_coverage)
    )
    short = feasible & (content_distinct < min_content)
    return safe_len, safe_content, coverage, min_content, feasible, short


def naive_accept_pairs(score, target_start, target_end, content_matched, content_variants,
                       min_content, content_coverage, passage_coverage, final, pairs,
                       min_alignment_score, min_answer_coverage, min_final_score):
    """The pipeline's numpy expression for ``accept_pairs`` (``pairs`` None: every pair)."""
    import numpy as np

    def of(values):
        return values if pairs is None else values[pairs]

    return (
        (score >= min_alignment_score)
        & (target_end > target_start)
        & (content_matched >= 1)
        & (np.maximum(content_matched, of(content_variants)) >= of(min_content))
        & (
            (content_coverage >= min_answer_coverage)
            | (of(passage_coverage) >= min_answer_coverage)
        )
        & (final >= min_final_score)
    )


def naive_score_components(score, matches, target_start, target_end, content_matched,
                           safe_len, safe_content, passage_coverage, lexical, embedding,
                           pairs, match_score):
    """The pipeline's numpy expressions for the score components (``pairs`` None: every
    pair), as a dict in the pipeline's order."""
    import numpy as np

    def of(values):
        return values if pairs is None else values[pairs]

    pair_len, pair_content = of(safe_len), of(safe_content)
    return {
        "alignment_score": score.astype(np.float64),
        "normalized_alignment": score / np.maximum(match_score * pair_len, 1),
        "matches": matches.astype(np.float64),
        "answer_coverage": matches / pair_len,
        "evidence_coverage": matches / np.maximum(target_end - target_start, 1),
        "lexical_score": of(lexical).astype(np.float64),
        "embedding_score": of(embedding).astype(np.float64),
        "content_coverage": content_matched / pair_content,
        "passage_content_coverage": of(passage_coverage),
    }


# =======================================================================================
# Rounds and ranking (citekit.kernels._rounds, _ranking)
# =======================================================================================


def naive_record_alignments(calls, query_offsets, pair_query, query_content, content_present,
                            query_words=None, min_letter_run=1):
    """Apply aligner calls in order; each call is ``(pairs, rows, blocks_per_pair)`` with
    ``rows[k]`` the 6-tuple of ``pairs[k]`` and ``blocks_per_pair[k]`` its block tuples.

    Returns ``(rows, blocks, content_matched, retries)``: per pair its latest row, blocks
    and matched content tokens (dicts; in a block shorter than ``min_letter_run`` and
    than the query, only the ``query_words``), and per call the pairs that matched no
    content token although ``content_present[p] >= 1``.
    """
    if query_words is None:
        query_words = query_content
    rows, blocks, content_matched, retries = {}, {}, {}, []
    for pairs, call_rows, call_blocks in calls:
        retry = []
        for p, row, pair_blocks in zip(pairs, call_rows, call_blocks):
            rows[p] = tuple(row)
            blocks[p] = [tuple(b) for b in pair_blocks]
            base = query_offsets[pair_query[p]]
            run = min(min_letter_run, query_offsets[pair_query[p] + 1] - base)
            matched = sum(
                (query_content if length >= run else query_words)[base + i]
                for qs, _, length in pair_blocks
                for i in range(qs, qs + length)
            )
            content_matched[p] = matched
            if matched == 0 and content_present[p] >= 1:
                retry.append(p)
        retries.append(retry)
    return rows, blocks, content_matched, retries


def _numpy_float_key(value):
    """Sort key that orders floats as numpy sorts them: NaN after every number."""
    return (1, 0.0) if value != value else (0, value)


def naive_rank_within_queries(items, item_query, float_keys, int_keys):
    """``items`` sorted by (query, float keys with NaN last, int keys, position)."""
    def key(position):
        item = items[position]
        return (
            item_query[item],
            tuple(_numpy_float_key(row[item]) for row in float_keys),
            tuple(row[item] for row in int_keys),
            position,
        )

    return [items[position] for position in sorted(range(len(items)), key=key)]


def naive_choose(ranked, passage_source, char_start, char_end, top_k, max_per_source,
                 pool_size):
    """The walk of one sentence in citekit.kernels._ranking.choose_all: ``(chosen,
    judged)`` lists of pairs (duplicate evidence skipped, a per-source cap on citations,
    ``pool_size`` judged at most)."""
    chosen, judged, seen, per_source = [], [], set(), {}
    for pair in ranked:
        source = passage_source[pair]
        key = (source, char_start[pair], char_end[pair])
        if key in seen:
            continue
        seen.add(key)
        if len(judged) < pool_size:
            judged.append(pair)
        if len(chosen) < top_k and per_source.get(source, 0) < max_per_source:
            per_source[source] = per_source.get(source, 0) + 1
            chosen.append(pair)
        if len(chosen) >= top_k and len(judged) >= pool_size:
            break
    return chosen, judged


def naive_choose_all(ranked_per_query, passage_source, char_start, char_end, top_k,
                     max_per_source, pool_size):
    """:func:`naive_choose` of every sentence, as the pipeline uses it: per sentence, the
    judged pairs (its pool, then its citations not in the pool), the pool's size and the
    rows of its citations in its judged list."""
    out = []
    for ranked in ranked_per_query:
        chosen, pool = naive_choose(ranked, passage_source, char_start, char_end, top_k,
                                    max_per_source, pool_size)
        judged = list(dict.fromkeys(pool + chosen))
        out.append((judged, len(pool), [judged.index(pair) for pair in chosen]))
    return out


def naive_close_queries(open_query, limit, query_first, order, score_bound, ranked_per_query,
                        final, passage_source, char_start, char_end, top_k, max_per_source,
                        pool_size):
    """One close test of the best-first rounds; returns the new ``(open_query, limit)``."""
    open_query, limit = list(open_query), list(limit)
    for q, is_open in enumerate(open_query):
        if not is_open:
            continue
        if limit[q] >= query_first[q + 1] - query_first[q]:
            open_query[q] = False
            continue
        best_rest = score_bound[order[query_first[q] + limit[q]]]
        safe = [pair for pair in ranked_per_query[q] if final[pair] > best_rest]
        chosen, judged = naive_choose(
            safe, passage_source, char_start, char_end, top_k, max_per_source, pool_size
        )
        if len(chosen) >= top_k and len(judged) >= pool_size:
            open_query[q] = False
        else:
            limit[q] *= 4
    return open_query, limit


# =======================================================================================
# Evidence and records (citekit.kernels._evidence)
# =======================================================================================


def naive_evidence_chars(pair_passage, target_start, target_end, embedding_only,
                         passage_token_start, passage_char_start, passage_char_end,
                         token_starts, token_ends):
    """Characters of each pair's evidence: the passage window for embedding-only pairs,
    else from its first to its last aligned token (the first token for an empty
    alignment), token indices clipped to the last token; zeros without tokens."""
    starts, ends = [], []
    last = len(token_starts) - 1
    for p, passage in enumerate(pair_passage):
        if embedding_only[p]:
            starts.append(passage_char_start[passage])
            ends.append(passage_char_end[passage])
        elif last < 0:
            starts.append(0)
            ends.append(0)
        else:
            first_token = passage_token_start[passage] + target_start[p]
            last_token = passage_token_start[passage] + max(target_end[p] - 1, target_start[p])
            starts.append(token_starts[min(first_token, last)])
            ends.append(token_ends[min(last_token, last)])
    return starts, ends


def naive_judged_int_facts(pairs, pair_passage, passage_source, base_offsets,
                           source_indices, block_offsets, passage_token_start,
                           passage_token_end, char_start, char_end, query_start, query_end,
                           passage_char_start, passage_char_end):
    """The rows of ``judged_int_facts`` as the pipeline's numpy gathers computed them."""
    import numpy as np

    passage = pair_passage[pairs]
    source = passage_source[passage]
    base = base_offsets[source]
    return np.stack([
        source, source_indices[source], passage, base, block_offsets[pairs],
        block_offsets[pairs + 1], passage_token_start[passage], passage_token_end[passage],
        char_start[pairs], char_end[pairs], query_start[pairs],
        np.maximum(query_end[pairs] - 1, query_start[pairs]),
        base + passage_char_start[passage], base + passage_char_end[passage],
    ])


def naive_evidence_set(covers, n_pool, weights, content, row_source, by_score_rows, top_k,
                       max_per_source, uncovered_ok=None, matched=None):
    """Reference of citekit.kernels._evidence.evidence_set: only rows covering a content
    token (or flagged in uncovered_ok) take part; greedy cover of the content weight by
    the pool rows (the first such row first; then the largest gain, ties to the lower
    row, while a row adds anything, at most top_k); shown: the set's rows, then the
    other pool rows and the by_score_rows that take part, no repeats, each having
    matched (matched, default covers) a content token that the rows shown before it did
    not (rows of uncovered_ok excepted), at most max_per_source per source and top_k in
    all."""
    matched = covers if matched is None else matched
    n_tokens = len(weights)
    uncovered_ok = uncovered_ok if uncovered_ok is not None else [False] * len(covers)
    showable = [
        bool(uncovered_ok[row]) or any(content[t] and covers[row][t] for t in range(n_tokens))
        for row in range(len(covers))
    ]
    pool = [row for row in range(n_pool) if showable[row]]
    selected = pool[:1] if top_k else []
    union = set(t for t in range(n_tokens) if selected and covers[selected[0]][t])
    alive = pool[1:] if top_k else []
    while alive and len(selected) < top_k:
        gains = [
            sum(weights[t] for t in range(n_tokens)
                if content[t] and covers[row][t] and t not in union)
            for row in alive
        ]
        best = max(range(len(alive)), key=lambda i: (gains[i], -i))
        if gains[best] <= 0:
            break
        row = alive.pop(best)
        selected.append(row)
        union |= {t for t in range(n_tokens) if covers[row][t]}
    shown = []
    rest = [r for r in range(n_pool) if showable[r] and r not in selected]
    for row in sorted(selected) + rest + [r for r in by_score_rows if showable[r]]:
        if len(shown) >= top_k:
            break
        adds = bool(uncovered_ok[row]) or any(
            content[t] and matched[row][t] and not any(matched[r][t] for r in shown)
            for t in range(n_tokens)
        )
        same_source = sum(row_source[r] == row_source[row] for r in shown)
        if adds and row not in shown and same_source < max_per_source:
            shown.append(row)
    return [row in selected for row in range(len(covers))], shown


def naive_widen_evidence(sentence_ids, content, blocks, passage_ids, passage_starts,
                         passage_ends, evidence, reach):
    """Reference of citekit.kernels._evidence.widen_evidence for one pair: the evidence
    (start, end) characters after taking in, outward from the first and the last aligned
    passage token, passage tokens equal to content tokens of the sentence the alignment
    did not match (each such sentence token once; left side first), until ``reach``
    tokens in a row take none; then the sentence's tokens glued to either edge."""
    blocks = [block for block in blocks if block[2] > 0]
    if not blocks:
        return tuple(evidence)
    taken = [False] * len(sentence_ids)
    for q, _, length in blocks:
        for k in range(q, min(q + length, len(sentence_ids))):
            taken[k] = True
    first = min(t for _, t, _ in blocks)
    last = max(t + length - 1 for _, t, length in blocks)
    if last >= len(passage_ids):
        return tuple(evidence)

    def take(token_id):
        for k, sentence_id in enumerate(sentence_ids):
            if content[k] and not taken[k] and sentence_id == token_id:
                taken[k] = True
                return True
        return False

    start, misses = first, 0
    for t in range(first - 1, -1, -1):
        if misses >= reach:
            break
        if take(passage_ids[t]):
            start, misses = t, 0
        else:
            misses += 1
    end, misses = last, 0
    for t in range(last + 1, len(passage_ids)):
        if misses >= reach:
            break
        if take(passage_ids[t]):
            end, misses = t, 0
        else:
            misses += 1
    while (start > 0 and passage_ends[start - 1] == passage_starts[start]
           and passage_ids[start - 1] in sentence_ids):
        start -= 1
    while (end + 1 < len(passage_ids) and passage_starts[end + 1] == passage_ends[end]
           and passage_ids[end + 1] in sentence_ids):
        end += 1
    return min(evidence[0], passage_starts[start]), max(evidence[1], passage_ends[end])


def naive_value_regions(blocks, answer_values, n_answer, n_source):
    """The regions find_conflicts reads, as (query_lo, query_hi, target_lo, target_hi):
    one token before the first block of positive length, the gaps between such blocks,
    one token after the last; only those that hold a value of the answer."""
    import numpy as np

    block_list = [block for block in np.asarray(blocks, dtype=np.int64).tolist() if block[2] > 0]
    if not block_list:
        return []
    regions = []
    first_q, first_t, _ = block_list[0]
    regions.append((max(0, first_q - 1), first_q, max(0, first_t - 1), first_t))
    for (q0, t0, length0), (q1, t1, _) in zip(block_list, block_list[1:]):
        regions.append((q0 + length0, q1, t0 + length0, t1))
    last_q, last_t, last_len = block_list[-1]
    end_q, end_t = last_q + last_len, last_t + last_len
    regions.append((end_q, min(n_answer, end_q + 1), end_t, min(n_source, end_t + 1)))
    return [
        region
        for region in regions
        if region[0] < region[1]
        and region[2] < region[3]
        and any(answer_values[region[0] : region[1]])
    ]


def naive_evidence_spans(blocks, token_lo, token_starts, token_ends, whole, multi_span,
                         merge_gap, max_spans):
    """One span per matched block, a block starting at most merge_gap characters after the
    span before it joining it; the whole aligned range when multi_span is off, with fewer
    than two blocks, or when that gives more than max_spans spans."""
    if not multi_span or len(blocks) < 2:
        return [tuple(whole)]
    spans = []
    for _, target_pos, run in blocks:
        start = token_starts[token_lo + target_pos]
        end = token_ends[token_lo + target_pos + run - 1]
        if spans and start - spans[-1][1] <= merge_gap:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return [tuple(whole)] if len(spans) > max_spans else spans


def naive_records(sentences, top_k, max_per_source, multi_span, merge_gap, max_spans,
                  token_starts, token_ends):
    """Reference of citekit.kernels._evidence.records_batch, one sentence at a time.

    Each sentence is a dict: covers (rows x tokens), n_pool, chosen (by-score rows),
    weights, content, values, starts, ends (its tokens), and per row: source,
    uncovered_ok, aligned_content, blocks, token_lo, n_source, whole (start, end).
    Returns, per sentence, (rows, shown flags, check flags, coverage, runs, spans of
    each row, candidate flags) where rows are the evidence set, the shown rows and, while
    fewer than top_k are shown, the candidates: the other rows covering a content token,
    not uncovered_ok (they may be shown for a conflict; coverage leaves them out),
    ascending."""
    out = []
    for s in sentences:
        n_tokens = len(s["weights"])
        matched = [
            [any(q <= t < q + length for q, _, length in blocks) for t in range(n_tokens)]
            for blocks in s["blocks"]
        ]
        selected, shown = naive_evidence_set(
            s["covers"], s["n_pool"], s["weights"], s["content"], s["source"], s["chosen"],
            top_k, max_per_source, s["uncovered_ok"], matched,
        )
        judged = set(r for r, flag in enumerate(selected) if flag) | set(shown)
        n_tokens = len(s["weights"])
        candidates = set()
        if len(shown) < top_k:
            candidates = {
                r for r in range(len(s["covers"]))
                if r not in judged and not s["uncovered_ok"][r]
                and any(s["covers"][r][t] and s["content"][t] for t in range(n_tokens))
            }
        rows = sorted(judged | candidates)
        covered = [any(s["covers"][r][t] for r in judged) for t in range(n_tokens)]
        checks, spans = [], []
        for r in rows:
            checks.append(
                not s["uncovered_ok"][r]
                and s["aligned_content"][r] >= 2
                and bool(naive_value_regions(s["blocks"][r], s["values"], n_tokens,
                                             s["n_source"][r]))
            )
            spans.append(
                [tuple(s["whole"][r])]
                if s["uncovered_ok"][r]
                else naive_evidence_spans(
                    s["blocks"][r], s["token_lo"][r], token_starts, token_ends,
                    s["whole"][r], multi_span, merge_gap, max_spans,
                )
            )
        out.append((
            rows, [r in shown for r in rows], checks, naive_coverage(covered, s["weights"]),
            naive_uncovered_runs(covered, s["content"], s["starts"], s["ends"]), spans,
            [r in candidates for r in rows],
        ))
    return out


# =======================================================================================
# Coverage (citekit.kernels._coverage)
# =======================================================================================


def naive_near_passages(passages, passage_source, neighbours):
    """Every passage at most ``neighbours`` away from one of ``passages`` in the same
    source, the passages included, as a sorted list with repeats."""
    out = []
    for passage in passages:
        for near in range(passage - neighbours, passage + neighbours + 1):
            if 0 <= near < len(passage_source) and passage_source[near] == passage_source[
                passage
            ]:
                out.append(near)
    return sorted(out)


def naive_rows_hold(rows, word_forms, cells):
    """rows[p] = list of columns; word_forms[c] = set of forms of column c (its own and
    its parts'); cells = (passage, column, form): does the passage hold that column or a
    word with that form."""
    return [
        any(c == column or form in word_forms[c] for c in rows[passage])
        for passage, column, form in cells
    ]


def naive_cover_runs(passages, passage_source, pairs, sentences, neighbours, run, covered):
    """passages[p] = list of token ids; pairs = (passage, sentence, aligned);
    sentences[q] = list of (token id, is letter); covered = one list of flags per pair.
    Returns new flags: an aligned pair (of a sentence of at least ``run`` tokens) covers a
    letter of its sentence exactly when it lies inside a run of ``run`` consecutive
    sentence tokens that a passage at most ``neighbours`` away in the same source holds in
    a row; the other flags stay."""
    out = []
    for (passage, sentence, aligned), flags in zip(pairs, covered):
        flags = list(flags)
        tokens = sentences[sentence]
        if aligned and len(tokens) >= run and any(letter for _, letter in tokens):
            flags = [flag and not letter for flag, (_, letter) in zip(flags, tokens)]
            held = set()
            for near in range(passage - neighbours, passage + neighbours + 1):
                if 0 <= near < len(passages) and passage_source[near] == passage_source[passage]:
                    ids = passages[near]
                    held |= {tuple(ids[a : a + run]) for a in range(len(ids) - run + 1)}
            for start in range(len(tokens) - run + 1):
                if tuple(t for t, _ in tokens[start : start + run]) in held:
                    for k in range(start, start + run):
                        flags[k] = flags[k] or tokens[k][1]
        out.append(flags)
    return out


def naive_candidate_coverage(rows, word_forms, passage_source, pairs, sentences, neighbours):
    """rows[p] = list of columns; word_forms[c] = set of forms of column c (its own and
    its parts'); pairs = (passage, sentence, aligned, blocks); sentences[q] = list of
    (column, form) per token; blocks = (query_pos, target_pos, run). For each pair, the
    sentence tokens it covers: an aligned pair covers a token that a passage at most
    ``neighbours`` away in the same source holds (its column, or a word of its form), or
    that one of its blocks matched (clipped to the sentence)."""
    out = []
    for passage, sentence, aligned, blocks in pairs:
        tokens = sentences[sentence]
        flags = [False] * len(tokens)
        if aligned:
            for near in range(passage - neighbours, passage + neighbours + 1):
                if not 0 <= near < len(rows) or passage_source[near] != passage_source[passage]:
                    continue
                for t, (column, form) in enumerate(tokens):
                    if any(c == column or form in word_forms[c] for c in rows[near]):
                        flags[t] = True
            for query_pos, _, run in blocks:
                for t in range(max(query_pos, 0), min(query_pos + run, len(tokens))):
                    flags[t] = True
        out.append(flags)
    return out


def naive_uncovered_runs(covered, content, starts, ends):
    """Character ranges of the runs of uncovered content tokens; a stop word (not
    content) between two of them joins their runs."""
    runs, current = [], None
    for is_covered, is_content, start, end in zip(covered, content, starts, ends):
        if is_content and not is_covered:
            current = [start, end] if current is None else [current[0], end]
        elif is_content and current is not None:
            runs.append(tuple(current))
            current = None
    if current is not None:
        runs.append(tuple(current))
    return runs


def naive_coverage(covered, weights):
    """The covered share of the weights (0 for no weight)."""
    total = sum(weights)
    return sum(w for w, c in zip(weights, covered) if c) / max(total, 1e-12)


def naive_contested_coverage(covers, rows, conflicts, starts, ends, content, weights,
                             embedding_supported):
    """Reference of citekit.kernels._coverage.contested_coverage (the pipeline's numpy code
    as it was): conflicts[i] lists row rows[i]'s contradicted answer ranges."""
    n_tokens = len(weights)
    clean = [False] * n_tokens
    dirty = [False] * n_tokens
    disputed = [False] * n_tokens
    for row, ranges in zip(rows, conflicts):
        if not ranges:
            clean = [c or covers[row][t] for t, c in enumerate(clean)]
            continue
        inside = [any(starts[t] >= lo and ends[t] <= hi for lo, hi in ranges)
                  for t in range(n_tokens)]
        dirty = [d or (covers[row][t] and not inside[t]) for t, d in enumerate(dirty)]
        disputed = [d or inside[t] for t, d in enumerate(disputed)]
    unresolved = [disputed[t] and not clean[t] and content[t] for t in range(n_tokens)]
    covered = [(dirty[t] or clean[t]) and not unresolved[t] for t in range(n_tokens)]
    runs = [] if embedding_supported else naive_uncovered_runs(covered, content, starts, ends)
    return naive_coverage(covered, weights), any(unresolved), runs


# =======================================================================================
# Value conflicts (reference of citekit._citations' value analysis and find_conflicts)
#
# The implementation the value analysis had before it was made cheaper, kept
# verbatim in behaviour (its own regexes; citekit's word lists), with the signs, leading
# points and scale words of values read plainly from the whole text: value_kind,
# value_class, value_key, value_mask and find_conflicts must give the same results for
# every input.
# =======================================================================================

import unicodedata  # noqa: E402


from itertools import compress  # noqa: E402


# the word lists are data, not logic: the reference reads citekit's own
from citekit._citations.directions import (  # noqa: E402
    _FALL_WORDS as _NAIVE_FALL_WORDS,
    _NOT_LEVEL_WORDS as _NAIVE_NOT_LEVEL_WORDS,
    _RISE_WORDS as _NAIVE_RISE_WORDS,
)


from citekit._citations.values import (  # noqa: E402
    _CURRENCY_WORDS as _NAIVE_CURRENCY_WORDS,
    _MONTH_NUMBER as _NAIVE_MONTH_NUMBER,
    _MONTHS as _NAIVE_MONTHS,
)


_NAIVE_DATE_SHAPE = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}$")


_NAIVE_ORDINAL = re.compile(r"(?<=\d)(?:st|nd|rd|th)$")


_NAIVE_RANGE = re.compile(r"\d\s*[-\u2013\u2014/]\s*\d")


_NAIVE_RANGE_BEFORE = re.compile(r"\d\s*(?:to|-|\u2013|\u2014)\s*$")


_NAIVE_RANGE_AFTER = re.compile(r"^\s*(?:to|-|\u2013|\u2014)\s*\d")


_NAIVE_DIGIT_SEPARATORS = ",_'\u2009\u202f"


def _naive_is_separator(char: str) -> bool:
    return char in _NAIVE_DIGIT_SEPARATORS or char.isspace()


def _naive_groups_follow(text: str, at: int) -> bool:
    """Whether text[at:] starts with three digits (then no digit), or with two digits, a
    separator and again such groups."""
    run = 0
    while at + run < len(text) and text[at + run].isdecimal():
        run += 1
    if run == 3:
        return True
    if run == 2 and at + 2 < len(text) and _naive_is_separator(text[at + 2]):
        return _naive_groups_follow(text, at + 3)
    return False


def _naive_drop_digit_groups(text: str) -> str:
    kept = []
    for at, char in enumerate(text):
        if (
            _naive_is_separator(char)
            and at > 0
            and text[at - 1].isdecimal()
            and _naive_groups_follow(text, at + 1)
        ):
            continue
        kept.append(char)
    return "".join(kept)


def naive_is_value(surface: str) -> bool:
    folded = surface.casefold()
    if folded == "may":  # the month, not the verb
        return surface == "May"
    has_digit = not surface.isalpha() and any(char.isdigit() for char in surface)
    return has_digit or folded in _NAIVE_MONTHS


def naive_value_mask(text, starts, ends):
    import numpy as np

    spans = zip(np.asarray(starts).tolist(), np.asarray(ends).tolist())
    return [naive_is_value(text[s:e]) for s, e in spans]


def naive_value_kind(text: str, start: int, end: int) -> str:
    surface = text[start:end]
    folded = surface.casefold()
    before = text[max(0, start - 12) : start].casefold()
    after = text[end : end + 12].casefold()
    after_stripped = after.lstrip()
    if folded in _NAIVE_MONTHS or _NAIVE_DATE_SHAPE.match(surface):
        return "date"
    if after_stripped.startswith(("%", "％", "\u066a", "percent", "per cent", "pct")):
        return "percent"
    before_stripped = before.rstrip()
    if before_stripped and unicodedata.category(before_stripped[-1]) == "Sc":
        return "currency"
    if after_stripped[:1] and unicodedata.category(after_stripped[0]) == "Sc":
        return "currency"
    first_word_after = after_stripped.split(" ", 1)[0].strip(".,;:") if after_stripped else ""
    if first_word_after in _NAIVE_CURRENCY_WORDS:
        return "currency"
    last_word_before = before_stripped.rsplit(" ", 1)[-1] if before_stripped else ""
    if last_word_before in _NAIVE_MONTHS or first_word_after in _NAIVE_MONTHS:
        return "date"
    # a year from 1000 to 2999, in any digits NFKC makes decimal ("²⁰²⁰")
    digits = unicodedata.normalize("NFKC", surface)
    year = surface.isdigit() and digits.isdecimal() and len(digits) == 4
    if year and 1000 <= int(digits) <= 2999:
        if first_word_after not in {"dollars", "euros", "people", "units"}:
            return "date"
    return "number"


def naive_class_of_kind(kind: str, surface: str) -> str:
    if kind != "date":
        return kind
    if surface.casefold() in _NAIVE_MONTHS:
        return "month"
    if _NAIVE_DATE_SHAPE.match(surface):
        return "date"
    if surface.isdigit() and len(surface) == 4:
        return "year"
    return "day"


def naive_value_class(text: str, start: int, end: int) -> str:
    return naive_class_of_kind(naive_value_kind(text, start, end), text[start:end])


def naive_in_range(text: str, start: int, end: int) -> bool:
    return bool(
        _NAIVE_RANGE_BEFORE.search(text[max(0, start - 8) : start])
        or _NAIVE_RANGE_AFTER.match(text[end : end + 8])
    )


def naive_value_key(surface: str) -> str:
    folded = unicodedata.normalize("NFKC", surface).casefold()
    month = _NAIVE_MONTH_NUMBER.get(folded.rstrip("."))
    if month is not None:
        return f"month {month}"
    # digits of any script as ASCII ones, the Arabic decimal/thousands separators as . and ,
    folded = "".join(
        str(unicodedata.decimal(c)) if c.isdecimal() else {"\u066b": ".", "\u066c": ","}.get(c, c)
        for c in folded
    )
    folded = _naive_drop_digit_groups(folded)
    return _NAIVE_ORDINAL.sub("", folded)


def naive_value_span(text: str, start: int, end: int) -> tuple[int, int]:
    if start > 0 and unicodedata.category(text[start - 1]) == "Sc":
        start -= 1
    if end < len(text) and text[end] in ("%", "％", "\u066a"):
        end += 1
    return start, end


_NAIVE_MINUS = "-\u2212\ufe63\uff0d"


def _naive_opens(char: str, others: str) -> bool:
    return char.isspace() or char in others or unicodedata.category(char) == "Sc"


def naive_value_prefix(text: str, start: int, end: int):
    """(prefix, first): a value's minus sign and leading decimal point as they prefix its
    key, read from the characters before it, and where they start."""
    if not (0 < start <= end <= len(text)) or not text[start:end][:1].isdigit():
        return "", start
    prefix, first = "", start
    if text[start - 1] == "." and (
        start == 1 or _naive_opens(text[start - 2], "([{\"'\u201c\u2018\u00ab" + _NAIVE_MINUS)
    ):
        prefix, first = "0.", start - 1
    sign = first - 1
    if sign >= 0 and unicodedata.category(text[sign]) == "Sc":
        sign -= 1
    if sign >= 0 and text[sign] in _NAIVE_MINUS and (
        sign == 0 or _naive_opens(text[sign - 1], "([{\"'\u201c\u2018\u00ab=:,;/")
    ):
        prefix, first = "-" + prefix, sign
    return prefix, first


def naive_direction_before(text: str, first: int) -> tuple[int, int]:
    """(-1 fall / 1 rise / 0, start of the word saying so or -1) of the value at ``first``:
    the last word of the 30 characters before it, past "by", "of" and their German, French,
    Spanish and Russian counterparts; -2 / 2 when a single
    "to" (or "auf", "à", "al", "до") stands between them, or "from <level> to": the level a
    fall or rise ended at, unless the word is one that says no direction there ("up to",
    "growth to")."""
    lo = max(0, first - 30)
    words = [(m.group().casefold(), lo + m.start())
             for m in re.finditer(r"\w+", text[lo : max(0, first)])]
    # a word going on into the value is not read ("increase0"), nor one cut by the
    # window's start
    if (words and 0 < first < len(text) and re.match(r"\w", text[first - 1])
            and re.match(r"\w", text[first])):
        words.pop()
    if words and words[0][1] == lo and lo > 0 and re.match(r"\w", text[lo - 1]):
        words.pop(0)
    links = ("by", "of", "um", "von", "de", "du", "del", "un", "una", "el", "en", "на")
    level = bool(words) and words[-1][0] in ("to", "auf", "à", "al", "до")
    if level:
        link_start = words.pop()[1]
        # "rose from 3% to": past the starting level (numbers and unit words after "from",
        # "von" or "с"), if no line break or end of a sentence is among them
        j = len(words) - 1
        while j >= 0 and (re.fullmatch(r"\d+", words[j][0]) or words[j][0] in _NAIVE_UNITS):
            j -= 1
        if 0 <= j < len(words) - 1 and words[j][0] in ("from", "von", "с"):
            lo_between = words[j][1] + re.match(r"\w+", text[words[j][1]:]).end()
            between = range(lo_between, link_start)
            points_in_numbers = all(  # a decimal point, between two word characters
                re.match(r"\w", text[k - 1]) and re.match(r"\w", text[k + 1])
                for k in between if text[k] == "."
            )
            if not any(text[k] in "\n\r!?;" for k in between) and points_in_numbers:
                del words[j:]
    while words and words[-1][0] in links and not level:
        words.pop()
    if not words:
        return 0, -1
    word, start = words[-1]
    if level and word in _NAIVE_NOT_LEVEL_WORDS:
        return 0, -1
    size = 2 if level else 1
    if word in _NAIVE_FALL_WORDS:
        return -size, start
    if word in _NAIVE_RISE_WORDS:
        return size, start
    return 0, -1


_NAIVE_UNITS = {"percent", "per", "cent", "pct", "percentage", "points", "point", "thousand",
                "million", "billion", "trillion", "bn", "mn", "tn"}


def naive_direction_after(text: str, end: int) -> tuple[int, int]:
    """(-1 fall / 1 rise / 0, end of the word saying so or -1) of the value ending at
    ``end``: the first word after it within 40 characters, past spaces (no line break),
    hyphens, percent signs and up to three unit words; a word the window cuts is not read."""
    limit = min(len(text), end + 40)
    if not 0 <= end < limit:
        return 0, -1

    def separated(i):
        while i < limit and (
            (text[i].isspace() and text[i] not in "\n\r") or text[i] in "%\uff05\u066a-"
            or "\u2010" <= text[i] <= "\u2013"
        ):
            i += 1
        return i

    def word_at(i):
        j = i
        while j < limit and re.match(r"\w", text[j]):
            j += 1
        return j

    i = separated(end)
    last = None  # the word read: past up to three unit words
    for _ in range(4):
        j = word_at(i)
        if j == i:
            break
        last = (i, j)
        if text[i:j].casefold() not in _NAIVE_UNITS:
            break
        i = separated(j)
    if last is None:
        return 0, -1
    start, stop = last
    if stop == limit and limit < len(text) and re.match(r"\w", text[limit]):
        return 0, -1
    if start == end and end > 0 and re.match(r"\w", text[end - 1]):
        return 0, -1  # the value's own word goes on ("3increase")
    word = text[start:stop].casefold()
    if word in _NAIVE_FALL_WORDS:
        return -1, stop
    if word in _NAIVE_RISE_WORDS:
        return 1, stop
    return 0, -1


def naive_value_direction(text: str, start: int, end: int) -> tuple[int, int, int]:
    """The word before the value says it, else the word after it."""
    before, word_start = naive_direction_before(text, start)
    after, word_end = naive_direction_after(text, end)
    if before:
        return before, word_start, end
    return after, start, word_end if after else end


def naive_falls(text: str, start: int, end: int) -> bool:
    return naive_value_direction(text, start, end)[0] == -1


def naive_opposite(text, start, end, other_text, other_start, other_end) -> bool:
    # a rise against a fall, or a level risen to against one fallen to
    directions = {naive_value_direction(text, start, end)[0],
                  naive_value_direction(other_text, other_start, other_end)[0]}
    return directions == {-1, 1} or directions == {-2, 2}


def naive_same_value(key, start, end, text, other_key, other_start, other_end,
                     other_text) -> bool:
    if key == other_key:
        return not naive_opposite(text, start, end, other_text, other_start, other_end)
    if key.removeprefix("-") != other_key.removeprefix("-"):
        return False
    return naive_falls(text, start, end) or naive_falls(other_text, other_start, other_end)


_NAIVE_SCALES = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12,
                 "bn": 9, "mn": 6, "tn": 12}


def naive_value_scale(text: str, start: int, end: int) -> int:
    """The power of ten of a scale word after a plain number (one white space at most)."""
    if not (0 <= start < end <= len(text)):
        return 0
    if not re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", naive_value_key(text[start:end])):
        return 0
    match = re.match(r"\s?(thousand|million|billion|trillion|bn|mn|tn)\b", text[end:],
                     re.IGNORECASE)
    if match is None:
        return 0
    # the scale whose word matched (case-insensitively: "mıllıon" with dotless i too)
    return next(power for scale, power in _NAIVE_SCALES.items()
                if re.fullmatch(scale, match.group(1), re.IGNORECASE))


def naive_scale_word_facts(text: str, start: int, end: int) -> tuple[int, bool]:
    """(how far past ``end`` the scale word after a plain number ends, -1 when none;
    whether the number carries its scale: "2.4bn")."""
    if not (0 <= start < end <= len(text)):
        return -1, False
    key = naive_value_key(text[start:end])
    attached = re.fullmatch(r"[0-9]+(?:\.[0-9]+)?(?:bn|mn|tn)", key) is not None
    if not re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", key):
        return -1, attached
    match = re.match(r"\s?(thousand|million|billion|trillion|bn|mn|tn)\b", text[end:],
                     re.IGNORECASE)
    return (match.end() if match else -1), attached


def naive_scaled_key(key: str, text: str, start: int, end: int) -> str:
    from decimal import Decimal

    match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(bn|mn|tn)", key)
    if match:
        number, power = match.group(1), _NAIVE_SCALES[match.group(2)]
    else:
        number, power = key, naive_value_scale(text, start, end)
    if not power:
        return key
    # the number in scientific notation: "2.5 million" is 2.5e6, written out as "2500000"
    # (a product by 10**6 would keep the decimal: "2500000.0", which "2,500,000" is not)
    return format(Decimal(f"{number}e{power}"), "f")


def naive_contexts_agree(context, other) -> bool:
    """Same sign and point; the same scale unless one of them has none; not a rise for
    one and a fall for the other (nor a level risen to for one and fallen to for the
    other)."""
    (prefix, scale, direction), (other_prefix, other_scale, other_direction) = context, other
    return (
        prefix == other_prefix
        and (scale == other_scale or 0 in (scale, other_scale))
        and sorted((direction, other_direction)) not in ([-1, 1], [-2, 2])
    )


def naive_answer_value(text: str, start: int, end: int):
    surface = text[start:end]
    if _NAIVE_RANGE.search(surface) or naive_in_range(text, start, end):
        return None, "", start, end, ""
    a_start, a_end = naive_value_span(text, start, end)
    kind = naive_value_kind(text, start, end)
    key = naive_scaled_key(naive_value_key(surface), text, start, end)
    prefix, first = naive_value_prefix(text, start, end)
    if prefix:
        currency_before = first > 0 and unicodedata.category(text[first - 1]) == "Sc"
        a_start = first - 1 if currency_before else first
        key = prefix + key
    return key, naive_class_of_kind(kind, surface), a_start, a_end, kind


def naive_find_conflicts(answer_text, answer_ids, answer_starts, answer_ends, source_text,
                         source_ids, source_starts, source_ends, blocks, source_offset=0,
                         answer_values=None, answer_cache=None):
    """citekit._citations.conflicts.find_conflicts, plainly: the gaps' values as the code it had
    before, then the matched values, with the helpers above."""
    import numpy as np

    from citekit.results import Conflict, _unchecked

    if not [block for block in np.asarray(blocks, dtype=np.int64).tolist() if block[2] > 0]:
        return []
    if answer_values is None:
        answer_values = np.array(naive_value_mask(answer_text, answer_starts, answer_ends),
                                 dtype=bool).tolist()
    regions = naive_value_regions(blocks, answer_values, answer_ids.shape[0], source_ids.shape[0])
    answer_starts = np.asarray(answer_starts).tolist()
    answer_ends = np.asarray(answer_ends).tolist()
    conflicts = []
    seen = set()

    def conflict(kind, a_start, a_end, s_start, s_end):
        return _unchecked(
            Conflict,
            kind=kind,
            answer_text=answer_text[a_start:a_end],
            answer_char_start=a_start,
            answer_char_end=a_end,
            evidence_text=source_text[s_start:s_end],
            evidence_char_start=s_start + source_offset,
            evidence_char_end=s_end + source_offset,
        )

    def answer_of(i):  # the answer value's facts, kept in answer_cache when given
        answer = None if answer_cache is None else answer_cache.get(i)
        if answer is None:
            answer = naive_answer_value(answer_text, int(answer_starts[i]), int(answer_ends[i]))
            if answer_cache is not None:
                answer_cache[i] = answer
        return answer

    def context_of(i, j):  # what the text around each value adds: sign, point, scale
        a_start, a_end = int(answer_starts[i]), int(answer_ends[i])
        s_start, s_end = int(source_starts[j]), int(source_ends[j])
        return (
            (naive_value_prefix(answer_text, a_start, a_end)[0],
             naive_value_scale(answer_text, a_start, a_end),
             naive_value_direction(answer_text, a_start, a_end)[0]),
            (naive_value_prefix(source_text, s_start, s_end)[0],
             naive_value_scale(source_text, s_start, s_end),
             naive_value_direction(source_text, s_start, s_end)[0]),
        )

    def with_direction_words(a_start, a_end, s_start, s_end):
        # a rise against a fall: the spans take the words that say so
        if naive_opposite(answer_text, a_start, a_end, source_text, s_start, s_end):
            _, a_start, a_end = naive_value_direction(answer_text, a_start, a_end)
            _, s_start, s_end = naive_value_direction(source_text, s_start, s_end)
        return a_start, a_end, s_start, s_end

    def with_scale_words(i, j, a_end, s_end):
        # both values state a scale (a word after, or in the number: "2.4bn"): the spans
        # take their scale words
        a_value, s_value = (int(answer_starts[i]), int(answer_ends[i])), (
            int(source_starts[j]), int(source_ends[j]))
        a_scale = naive_value_scale(answer_text, *a_value)
        s_scale = naive_value_scale(source_text, *s_value)
        attached = r"[0-9]+(?:\.[0-9]+)?(?:bn|mn|tn)"
        a_states = a_scale or re.fullmatch(attached, naive_value_key(answer_text[slice(*a_value)]))
        s_states = s_scale or re.fullmatch(attached, naive_value_key(source_text[slice(*s_value)]))
        if (a_scale or s_scale) and a_states and s_states:
            word = r"\s?[^\W\d_]+"
            if a_scale:
                a_end = max(a_end, a_value[1] + re.match(word, answer_text[a_value[1]:]).end())
            if s_scale:
                s_end = max(s_end, s_value[1] + re.match(word, source_text[s_value[1]:]).end())
        return a_end, s_end

    for q_lo, q_hi, t_lo, t_hi in regions:
        region_values = [i for i in range(q_lo, q_hi) if answer_values[i]]
        starts = np.asarray(source_starts[t_lo:t_hi]).tolist()
        ends = np.asarray(source_ends[t_lo:t_hi]).tolist()
        surfaces = map(source_text.__getitem__, map(slice, starts, ends))
        source_values = list(compress(range(t_lo, t_hi), map(naive_is_value, surfaces)))
        for i, j in zip(region_values, source_values):
            if (i, j) in seen:
                continue
            if answer_ids[i] == source_ids[j] and naive_contexts_agree(*context_of(i, j)):
                continue
            key, answer_class, a_start, a_end, kind = answer_of(i)
            if key is None:  # part of a range
                continue
            source_start, source_end = int(source_starts[j]), int(source_ends[j])
            source_key, source_class, s_start, s_end, _ = naive_answer_value(
                source_text, source_start, source_end
            )
            if source_key is None or answer_class != source_class:
                continue
            if naive_same_value(key, a_start, a_end, answer_text, source_key, s_start, s_end,
                                source_text):
                continue
            seen.add((i, j))
            a_start, said_a_end, s_start, said_s_end = with_direction_words(
                a_start, a_end, s_start, s_end
            )
            a_end, s_end = with_scale_words(i, j, a_end, s_end)
            a_end, s_end = max(a_end, said_a_end), max(s_end, said_s_end)
            conflicts.append(conflict(kind, a_start, a_end, s_start, s_end))
    # values matched token for token whose signs, leading points or scales differ
    for q, t, length in np.asarray(blocks, dtype=np.int64).tolist():
        for i, j in zip(range(q, q + length), range(t, t + length)):
            if not answer_values[i] or (i, j) in seen:
                continue
            a_surface = answer_text[int(answer_starts[i]) : int(answer_ends[i])]
            s_surface = source_text[int(source_starts[j]) : int(source_ends[j])]
            if naive_contexts_agree(*context_of(i, j)) or (
                naive_value_key(a_surface) != naive_value_key(s_surface)
            ):
                continue
            key, answer_class, a_start, a_end, kind = answer_of(i)
            source_key, source_class, s_start, s_end, _ = naive_answer_value(
                source_text, int(source_starts[j]), int(source_ends[j])
            )
            if key is None or source_key is None or answer_class != source_class:
                continue
            if naive_same_value(key, a_start, a_end, answer_text, source_key, s_start, s_end,
                                source_text):
                continue
            seen.add((i, j))
            a_start, said_a_end, s_start, said_s_end = with_direction_words(
                a_start, a_end, s_start, s_end
            )
            a_end, s_end = with_scale_words(i, j, a_end, s_end)
            a_end, s_end = max(a_end, said_a_end), max(s_end, said_s_end)
            conflicts.append(conflict(kind, a_start, a_end, s_start, s_end))
    return conflicts


# =======================================================================================
# Chunking (reference of citekit.chunk.chunk_text)
#
# The chunker as it was before words longer than citekit.chunk.LONG_WORD were searched
# position by position: the same result on the tokenizers under test, in time cubic in
# the length of an unbroken text.
# =======================================================================================

from bisect import bisect_left, bisect_right  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402


def _naive_largest_prefix_within(
    cost: Callable[[int], int],
    start: int,
    stop: int,
    word_starts: list[int],
    max_tokens: int,
    hint: int | None = None,
    within_last_word: bool = True,
) -> tuple[int, int]:
    """The prefix search of citekit.chunk before long words (every position of the
    last word tried from the top)."""
    # The points searched are start, the word starts strictly inside, and stop; point k
    # is read from word_starts by index (no copy: chunking calls this once per chunk).
    first_inside = bisect_right(word_starts, start)
    n_inside = bisect_left(word_starts, stop) - first_inside
    last = n_inside + 1

    def point(k: int) -> int:
        if k == 0:
            return start
        return stop if k == last else word_starts[first_inside + k - 1]

    memo: dict[int, int] = {}

    def cost_at(end: int) -> int:
        value = memo.get(end)
        if value is None:
            value = memo[end] = cost(end)
        return value

    def fits(k: int) -> bool:
        return cost_at(point(k)) <= max_tokens

    # Gallop from the hinted point to bracket the last fitting point: good fits, bad
    # does not (bad == last + 1 means "nothing known to fail").
    if hint is None or hint <= start:
        guess = 1
    elif hint >= stop:
        guess = last
    else:
        guess = bisect_left(word_starts, hint, first_inside, first_inside + n_inside)
        guess = min(max(guess - first_inside + 1, 1), last)
    good, bad = 0, last + 1
    if guess <= last and fits(guess):
        good, step = guess, 1
        while good + step <= last and fits(good + step):
            good, step = good + step, step * 2
        bad = min(good + step, last + 1)
    elif guess <= last:
        bad, step = guess, 1
        while bad - step > 0 and not fits(bad - step):
            bad, step = bad - step, step * 2
        good = max(bad - step, 0)
    while bad - good > 1:
        middle = (good + bad) // 2
        if fits(middle):
            good = middle
        else:
            bad = middle
    anchor = point(good)
    if good == last or not within_last_word:
        return anchor, cost_at(anchor)
    for end in range(point(good + 1) - 1, anchor, -1):
        if cost_at(end) <= max_tokens:
            return end, memo[end]
    return anchor, cost_at(anchor)


def naive_chunk_text(
    text: str,
    tokenizer: Any,
    max_tokens: int,
    *,
    overlap_tokens: int = 0,
) -> list[tuple[int, int]]:
    """citekit.chunk.chunk_text before long words were searched position by position:
    step 2 tries every position of the last word (quadratic in a long word's length)."""
    from citekit.chunk import ChunkTokenizer, _sentence_starts, _word_starts
    from citekit.tokenizers.base import tokenize_checked

    chunker = tokenizer if isinstance(tokenizer, ChunkTokenizer) else ChunkTokenizer(tokenizer)
    budget = max_tokens - chunker.special_token_overhead
    if budget < 1:
        raise ValueError(
            f"max_tokens ({max_tokens}) leaves no room for text after "
            f"{chunker.special_token_overhead} special tokens"
        )
    if overlap_tokens >= budget:
        raise ValueError(
            f"overlap_tokens ({overlap_tokens}) must be below the text budget ({budget})"
        )
    n_chars = len(text)
    if n_chars == 0:
        return []
    count = chunker._count
    word_starts = _word_starts(text)
    sentence_starts = _sentence_starts(text)
    # One tokenization of the whole text gives each search a close first guess.
    token_starts = tokenize_checked(chunker.tokenizer, text).starts

    def guess_end(start: int) -> int:
        target = int(np.searchsorted(token_starts, start)) + budget
        return int(token_starts[target]) if target < token_starts.shape[0] else n_chars

    def has_boundary(boundaries: list[int], low: int, high: int) -> bool:
        """Is there a boundary in ``(low, high]``?"""
        k = bisect_right(boundaries, low)
        return k < len(boundaries) and boundaries[k] <= high

    chunks: list[tuple[int, int]] = []
    start, previous_end = 0, 0
    while True:
        def cost(end: int) -> int:
            return count(text[start:end])

        hint = guess_end(start)
        # The last fitting word start is enough unless the cut may need a position
        # inside the next word: no boundary to cut at before it, or a sentence start
        # (CJK, no space) between it and the next word start.
        limit, _ = _naive_largest_prefix_within(
            cost, start, n_chars, word_starts, budget, hint=hint, within_last_word=False
        )
        if limit == n_chars:
            chunks.append((start, n_chars))
            return chunks
        next_word = bisect_right(word_starts, limit)
        next_anchor = word_starts[next_word] if next_word < len(word_starts) else n_chars
        floor = max(start, previous_end)
        if not (
            has_boundary(sentence_starts, floor, limit) or has_boundary(word_starts, floor, limit)
        ) or has_boundary(sentence_starts, limit, next_anchor - 1):
            limit, _ = _naive_largest_prefix_within(
                cost, start, n_chars, word_starts, budget, hint=hint
            )
        if start < previous_end and limit <= previous_end:
            # the overlap left no room to advance: start this chunk at the previous end
            start = previous_end
            continue
        if limit == start:
            raise ValueError(
                f"max_tokens ({max_tokens}) is too small: the character at {start} "
                f"({text[start]!r}) alone costs more than {budget} text tokens"
            )
        end = _naive_preferred_cut(
            text, start, previous_end, limit, sentence_starts, word_starts, count, budget
        )
        chunks.append((start, end))
        next_start = end
        if overlap_tokens:
            next_start = _naive_overlap_start(text, start, end, word_starts, count, overlap_tokens)
        start, previous_end = next_start, end


def _naive_preferred_cut(
    text: str,
    start: int,
    previous_end: int,
    limit: int,
    sentence_starts: list[int],
    word_starts: list[int],
    count: Callable[[str], int],
    budget: int,
) -> int:
    """Last sentence start in ``(previous_end, limit]``, else last word start, else ``limit``.

    Cutting after ``previous_end`` (the end of the previous chunk, or ``start``) keeps
    every chunk reaching further than the one before. A candidate is re-checked against
    the budget (costs are not monotone everywhere).
    """
    for boundaries in (sentence_starts, word_starts):
        lo = bisect_right(boundaries, max(start, previous_end))
        for k in range(bisect_right(boundaries, limit) - 1, lo - 1, -1):
            if count(text[start : boundaries[k]]) <= budget:
                return boundaries[k]
    return limit


def _naive_overlap_start(
    text: str,
    start: int,
    end: int,
    word_starts: list[int],
    count: Callable[[str], int],
    overlap_tokens: int,
) -> int:
    """Earliest word start in ``(start, end)`` whose suffix up to ``end`` fits the overlap.

    Falls back to ``end`` (no overlap) when no word start qualifies.
    """
    candidates = word_starts[bisect_right(word_starts, start) : bisect_left(word_starts, end)]
    lo, hi = 0, len(candidates)  # suffix cost shrinks as the start moves right
    while lo < hi:
        middle = (lo + hi) // 2
        if count(text[candidates[middle] : end]) <= overlap_tokens:
            hi = middle
        else:
            lo = middle + 1
    for candidate in candidates[lo:]:
        if count(text[candidate:end]) <= overlap_tokens:
            return candidate
    return end


# =======================================================================================
# Polarity (reference of citekit._citations.polarity)
#
# Written apart from the implementation's single regular expression: the text is read
# position by position, phrases compared word by word; only the word lists (data) are
# citekit's own.
# =======================================================================================

from citekit._citations.polarity import (  # noqa: E402
    CLAUSE_IDEOGRAPHS,
    CLAUSE_WORDS,
    NEGATOR_IDEOGRAPHS,
    NEGATOR_PHRASES,
    NEGATOR_WORDS,
    NOT_NEGATING_IDEOGRAPHS,
    NOT_NEGATING_PHRASES,
)

NEGATOR_REACH = 12  # (the implementation's, written down again)

_NAIVE_MARKS = set(";:!?()[]{}\"\u201c\u201d\u00ab\u00bb\u2014\u2013\n\r"
                   "\uff0c\uff1b\uff1a\u3002\uff01\uff1f\u3001\uff08\uff09\u0964\u0965")


def _naive_word_char(char: str) -> bool:
    return char.isalnum() or char == "_" or "\u0900" <= char <= "\u097f"


def _naive_words_at(text: str, i: int, words) -> int:
    """End of the word sequence ``words`` read at ``text[i]`` (case-insensitive, white
    space between the words, whole words), or -1."""
    if i > 0 and _naive_word_char(text[i - 1]):
        return -1
    j = i
    for n, word in enumerate(words):
        if n:
            k = j
            while k < len(text) and text[k].isspace():
                k += 1
            if k == j:
                return -1
            j = k
        piece = text[j : j + len(word)]
        if len(piece) != len(word) or piece.lower() != word.lower():
            return -1
        j += len(word)
    if j < len(text) and _naive_word_char(text[j]):
        return -1
    return j


def _naive_longest(text: str, i: int, candidates, as_words: bool) -> int:
    """End of the longest candidate read at ``text[i]`` (word sequences when
    ``as_words``, else plain strings), or -1."""
    best = -1
    for candidate in candidates:
        if as_words:
            end = _naive_words_at(text, i, candidate)
        else:
            end = i + len(candidate) if text.startswith(candidate, i) else -1
        best = max(best, end)
    return best


def naive_polarity_marks(text: str):
    """(bounds, negators) of ``text`` by the rules of citekit._citations.polarity: read
    left to right; at each position a phrase that does not negate (or "No." before a
    number, or a Chinese word holding a negator character) is skipped whole, else a
    clause mark or clause word is a bound, else a negator (a word, "failed to", "n't"
    after a letter, French "n'" before one, a Chinese negator) is recorded."""
    bounds, negators = [], []
    i = 0
    while i < len(text):
        skip = max(
            _naive_longest(text, i, NOT_NEGATING_PHRASES, True),
            _naive_longest(text, i, NOT_NEGATING_IDEOGRAPHS, False),
        )
        if (
            skip < 0
            and text[i:i + 3].lower() == "no."
            and not (i > 0 and _naive_word_char(text[i - 1]))
        ):
            k = i + 3
            while k < len(text) and text[k].isspace():
                k += 1
            if k < len(text) and text[k].isdecimal():
                skip = i + 3
        if skip > i:
            i = skip
            continue
        char = text[i]
        if char in _NAIVE_MARKS or (
            char in ".," and not (i + 1 < len(text) and text[i + 1].isdecimal())
        ) or (
            char == "-" and 0 < i < len(text) - 1 and text[i - 1].isspace()
            and text[i + 1].isspace()
        ):
            bounds.append(i)
            i += 1
            continue
        end = max(
            _naive_longest(text, i, [[word] for word in CLAUSE_WORDS], True),
            _naive_longest(text, i, CLAUSE_IDEOGRAPHS, False),
        )
        if end > i:
            bounds.append(i)
            i = end
            continue
        end = max(
            _naive_longest(text, i, NEGATOR_PHRASES, True),
            _naive_longest(text, i, [[word] for word in NEGATOR_WORDS], True),
            _naive_longest(text, i, NEGATOR_IDEOGRAPHS, False),
        )
        apostrophe = text[i + 1:i + 2] in ("'", "\u2019")
        if end < 0 and text[i] in "nN" and apostrophe:
            after = text[i + 2:i + 3]
            letter_after = after.isalpha()
            if (
                i > 0 and text[i - 1].isalpha() and after in ("t", "T")
                and not (i + 3 < len(text) and _naive_word_char(text[i + 3]))
            ):
                end = i + 3  # "isn't"
            elif letter_after and not (i > 0 and _naive_word_char(text[i - 1])):
                end = i + 2  # French "n'a"
        if end > i:
            negators.append((i, end))
            i = end
            continue
        i += 1
    if not negators:
        return (), ()
    return tuple(bounds), tuple(negators)


def naive_negated(text: str, lo: int, hi: int, ranges):
    """The first negator of ``text[lo:hi]`` whose clause (between the bounds around it)
    overlaps one of ``ranges`` (whole-text offsets), in whole-text offsets, or None."""
    bounds, negators = naive_polarity_marks(text[lo:hi])
    for start, end in negators:
        before = [b for b in bounds if b < start]
        after = [b for b in bounds if b >= end]
        clause_lo = lo + (before[-1] + 1 if before else 0)
        clause_hi = lo + after[0] if after else hi
        for r_start, r_end in ranges:
            # the characters of the range in the clause, and their distance to the negator
            inside = [c for c in range(r_start, r_end) if clause_lo <= c < clause_hi]
            if inside:
                distance = min(
                    0 if lo + start <= c < lo + end
                    else (lo + start) - (c + 1) if c < lo + start
                    else c - (lo + end)
                    for c in inside
                )
                if distance <= NEGATOR_REACH:
                    return lo + start, lo + end
    return None


# =======================================================================================
# The general path of SimpleTokenizer (reference of citekit.tokenizers._general)
#
# tokenize_general as it was before it kept token spans in arrays and built token keys in
# bounded blocks (a Python tuple and string per token): the same tokens, ids and spans for
# every text.
# =======================================================================================


def naive_tokenize_general(text: str, normalizer_config, ids):
    """``tokenize_general`` with a list of span tuples and of surfaces for the whole text."""
    import numpy as np

    from citekit.normalize import normalize_text
    from citekit.tokenizers._general import regexes, snap_to_clusters
    from citekit.tokenizers.base import TokenizedText

    normalized = normalize_text(text, normalizer_config)
    folded = normalized.text
    spans = [match.span() for match in regexes()[0].finditer(folded)]
    if not spans:
        return TokenizedText(text, [], [], [])
    norm_spans = np.array(spans, dtype=np.int64)
    norm_starts, norm_ends = norm_spans[:, 0], norm_spans[:, 1]
    orig_starts = normalized.orig_starts[norm_starts]
    orig_ends = normalized.orig_ends[norm_ends - 1]
    orig_starts, orig_ends = snap_to_clusters(text, orig_starts, orig_ends)
    surfaces = [folded[start:end] for start, end in spans]
    overlaps = orig_starts[1:] < orig_ends[:-1]
    if overlaps.any():
        first = np.flatnonzero(np.concatenate([[True], ~overlaps]))
        orig_starts = orig_starts[first]
        orig_ends = np.maximum.reduceat(orig_ends, first)
        group_ends = np.append(first[1:], len(surfaces))
        surfaces = [
            " ".join(surfaces[group_start:group_end])
            for group_start, group_end in zip(first.tolist(), group_ends.tolist())
        ]
    return TokenizedText(text, ids(surfaces), orig_starts, orig_ends)
