"""Self-contained HTML rendering of citation results, and a token-level alignment view.

:func:`render_html` draws one answer with each sentence coloured by status, a citation
marker per cited source, and the cited sources below it with every evidence span
highlighted at its exact character offsets (multi-span evidence as separate marks, score
components on hover). The page needs no network: styles are inline in one ``<style>``
block, there is no script, and every piece of user text is HTML-escaped.
:class:`citekit.AlignmentResult` uses it for its Jupyter ``_repr_html_``.

:func:`alignment_view` shows how one answer sentence aligns with one piece of evidence:
matched, mismatched and gap tokens side by side, as text, as HTML, or as a matplotlib
figure (:meth:`AlignmentView.plot`, matplotlib imported only then).
"""

from __future__ import annotations

import hashlib
import html
import unicodedata
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from citekit._validation import check_bool, check_int, check_str
from citekit.results import STATUSES, Citation, SourceView, SpanCitations, source_views

__all__ = [
    "render_html",
    "alignment_view",
    "explain_citation",
    "AlignmentStep",
    "AlignmentView",
]

_STYLE = """
.ck-root{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:14px;
 line-height:1.6;color:#1f2328;background:#fff;border:1px solid #d0d7de;border-radius:8px;
 padding:12px 16px;max-width:1100px}
.ck-root h4{margin:14px 0 6px 0;font-size:13px;text-transform:uppercase;letter-spacing:.04em;
 color:#57606a}
.ck-summary{margin-bottom:4px}
.ck-chip{display:inline-block;border-radius:10px;padding:0 8px;margin-right:6px;font-size:12px;
 border:1px solid}
.ck-answer,.ck-text{white-space:pre-wrap;word-wrap:break-word}
.ck-sent{border-radius:3px;padding:1px 0}
.ck-supported{background:#dafbe1;border-color:#2da44e}
.ck-partial{background:#fff3c4;border-color:#bf8700}
.ck-unsupported{background:#ffe1e0;border-color:#cf222e}
.ck-chip.ck-supported{color:#116329}.ck-chip.ck-partial{color:#7d4e00}
.ck-chip.ck-unsupported{color:#a40e26}
.ck-gap{text-decoration:underline wavy #cf222e;text-underline-offset:3px}
.ck-conflict,.ck-ev.ck-conflict{color:#cf222e;font-weight:600;
 text-decoration:underline double #cf222e}
.ck-ev.ck-secondary{background:transparent;border-bottom-style:dashed}
.ck-cite{font-size:10px;vertical-align:super;line-height:0;margin-left:2px}
.ck-cite a,.ck-label{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-weight:600;
 color:#0550ae;background:#ddf4ff;border:1px solid #54aeff;border-radius:4px;padding:0 3px;
 text-decoration:none}
.ck-cite a{cursor:help}
.ck-label{font-size:11px;margin-right:6px}
.ck-legend{margin:6px 0 2px 0;padding:4px 8px;background:#f6f8fa;border-radius:6px;
 font-size:12px;line-height:1.9;color:#57606a}
.ck-legend .ck-key{white-space:nowrap;margin-right:14px}
.ck-legend-head{font-weight:600;color:#1f2328;margin-right:6px}
.ck-swatch{display:inline-block;width:11px;height:11px;border-radius:2px;border:1px solid;
 vertical-align:-1px;margin-right:4px}
.ck-source{border-top:1px solid #eaeef2;padding:6px 0}
.ck-source-head{font-weight:600;margin-bottom:2px}
.ck-source-head .ck-id{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-weight:400;
 color:#57606a;font-size:12px;margin-left:6px}
.ck-text{color:#24292f}
.ck-ev{color:inherit;border-bottom:2px solid;border-radius:2px;padding:1px 0;cursor:help}
.ck-legend .ck-ev{cursor:default}
.ck-ev.ck-supported{border-bottom-color:#2da44e}
.ck-ev.ck-partial{border-bottom-color:#bf8700}
.ck-elided{color:#8c959f;font-style:italic;margin:0 3px}
.ck-note{color:#57606a;font-size:12px}
table.ck-align{border-collapse:collapse;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;
 font-size:12px;margin:4px 0}
table.ck-align td{border:1px solid #d0d7de;padding:2px 5px;text-align:center;white-space:pre}
table.ck-align th{text-align:right;padding-right:8px;font-weight:600;color:#57606a}
td.ck-match{background:#dafbe1}td.ck-mismatch{background:#ffe1e0}
td.ck-answer_gap,td.ck-evidence_gap{background:#eaeef2;color:#57606a}
"""

_STATUS_LABEL = {"supported": "supported", "partial": "partial", "unsupported": "unsupported"}


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _format_number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def _citation_tooltip(citation: Citation) -> str:
    lines = [
        f"source {citation.source_id!r}, characters {citation.char_start}\u2013{citation.char_end}",
        f"score {citation.score:.3f}",
    ]
    lines += [f"  {name}: {_format_number(value)}" for name, value in citation.components.items()]
    for conflict in citation.conflicts:
        lines.append(
            f"conflict ({conflict.kind}): answer says {conflict.answer_text!r}, "
            f"source says {conflict.evidence_text!r}"
        )
    return "\n".join(lines)


def _shown_conflicts(item: SpanCitations) -> tuple:
    """Conflicts drawn in the text: the best citation's. A lower-ranked citation's differing
    numbers are usually a different fact; they stay in the tooltips, not in red."""
    return item.citations[0].conflicts if item.citations else ()


def _segments(length: int, ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Cut ``[0, length)`` at every range edge so each piece is covered uniformly."""
    cuts = {0, length}
    for start, end in ranges:
        cuts.add(min(max(start, 0), length))
        cuts.add(min(max(end, 0), length))
    ordered = sorted(cuts)
    return [(a, b) for a, b in zip(ordered, ordered[1:]) if b > a]


#: uncited sources named by the HTML view (the rest are counted)
UNCITED_NAMED = 20


def _uncited_note(views: Sequence[SourceView], cited: Mapping[int, int]) -> str:
    """The note naming the sources nothing cites: the first :data:`UNCITED_NAMED`, then
    how many more (reading only those named)."""
    n_uncited = len(views) - len(cited)
    if n_uncited <= 0:
        return ""
    named: list[str] = []
    for index in range(len(views)):
        if len(named) == UNCITED_NAMED:
            break
        if index not in cited:
            named.append(views[index].label)
    more = n_uncited - len(named)
    text = ", ".join(named) + (f" and {more:,} more" if more else "")
    return f'<div class="ck-note">Not cited: {_esc(text)}</div>'


def _render_id(answer: str, results: Sequence[SpanCitations], labels: Sequence[str]) -> str:
    # Deterministic per content, so re-rendering gives identical HTML, yet distinct between
    # different results shown in one notebook (anchors must not collide).
    digest = hashlib.sha1()
    digest.update(answer.encode("utf-8", "surrogatepass"))
    for label in labels:
        digest.update(b"\0" + label.encode("utf-8", "surrogatepass"))
    for item in results:
        key = (item.answer_span.char_start, item.status, len(item.citations))
        digest.update(repr(key).encode())
    return "ck" + digest.hexdigest()[:10]


def _check_results(results: Any) -> list[SpanCitations]:
    if isinstance(results, (str, bytes, Mapping)) or not isinstance(results, Iterable):
        raise TypeError(
            f"results must be a sequence of SpanCitations, got {type(results).__name__}"
        )
    items = list(results)
    for index, item in enumerate(items):
        if not isinstance(item, SpanCitations):
            raise TypeError(f"results[{index}] must be a SpanCitations, got {type(item).__name__}")
    return items


def _render_answer(
    answer: str, items: Sequence[SpanCitations], marker_of: Mapping[int, int], uid: str
) -> str:
    ranges: list[tuple[int, int]] = []
    for item in items:
        span = item.answer_span
        if span.char_end > len(answer):
            raise ValueError(
                f"results: answer span {span.char_start}\u2013{span.char_end} is outside the "
                f"answer ({len(answer)} characters); pass the answer the results came from"
            )
        ranges.append((span.char_start, span.char_end))
        ranges.extend(item.unsupported_spans)
        for c in _shown_conflicts(item):
            ranges.append((c.answer_char_start, c.answer_char_end))
    order = sorted(range(len(items)), key=lambda i: items[i].answer_span.char_start)
    sentence_at: list[tuple[int, int, int]] = []  # (start, end, item index), non-overlapping
    covered_until = 0
    for index in order:
        span = items[index].answer_span
        start = max(span.char_start, covered_until)
        if span.char_end > start:
            sentence_at.append((start, span.char_end, index))
            covered_until = span.char_end
    pieces: list[str] = []
    cursor_sentence = 0
    for seg_start, seg_end in _segments(len(answer), ranges):
        while cursor_sentence < len(sentence_at) and sentence_at[cursor_sentence][1] <= seg_start:
            cursor_sentence += 1
        text = _esc(answer[seg_start:seg_end])
        inside = cursor_sentence < len(sentence_at) and sentence_at[cursor_sentence][0] <= seg_start
        if not inside:
            pieces.append(text)
            continue
        s_start, s_end, index = sentence_at[cursor_sentence]
        item = items[index]
        classes = []
        if any(a <= seg_start and seg_end <= b for a, b in item.unsupported_spans):
            classes.append("ck-gap")
        if any(
            c.answer_char_start <= seg_start and seg_end <= c.answer_char_end
            for c in _shown_conflicts(item)
        ):
            classes.append("ck-conflict")
        if classes:
            text = f'<span class="{" ".join(classes)}">{text}</span>'
        if seg_start == s_start:
            tooltip = f"sentence {index + 1}: {item.status}"
            if item.unsupported_spans:
                tooltip += " (wavy underline: no source covers this part)"
            pieces.append(
                f'<span class="ck-sent ck-{item.status}" id="{uid}-s{index}" '
                f'data-status="{item.status}" data-start="{item.answer_span.char_start}" '
                f'data-end="{item.answer_span.char_end}" title="{_esc(tooltip)}">'
            )
        pieces.append(text)
        if seg_end == s_end:
            pieces.append("</span>")
            pieces.append(_render_markers(item, marker_of, uid))
    return "".join(pieces)


def _source_label(number: int) -> str:
    """The label of the ``number``-th cited source: ``S1``, ``S2``, ... Answers often carry
    their own markers in brackets (``"... per share [2]."``); a bracketed number of
    citekit's right after it would read as the same kind of thing. ``S`` (for source) in
    a badge cannot be confused with text of the answer (which is always plain, escaped
    text), and it stays short and ordered, unlike letters, which run out after 26."""
    return f"S{number}"


def _render_markers(item: SpanCitations, marker_of: Mapping[int, int], uid: str) -> str:
    by_source: dict[int, list[Citation]] = {}
    for citation in item.citations:
        by_source.setdefault(citation.source_index, []).append(citation)
    out = []
    for source_index, citations in sorted(by_source.items(), key=lambda kv: marker_of[kv[0]]):
        number = marker_of[source_index]
        tooltip = "\n\n".join(_citation_tooltip(c) for c in citations)
        out.append(
            f'<sup class="ck-cite"><a href="#{uid}-src{number}" title="{_esc(tooltip)}">'
            f"{_source_label(number)}</a></sup>"
        )
    return "".join(out)


# how far an excerpt's edge moves to reach a word boundary (beyond: a text without spaces,
# such as Chinese or Japanese, is cut where the context ends)
_BOUNDARY_REACH = 40


def _at_boundary(text: str, position: int) -> bool:
    """Whether ``position`` lies between words (not inside a run of letters and digits)."""
    if position <= 0 or position >= len(text):
        return True
    return not (text[position - 1].isalnum() and text[position].isalnum())


def _word_boundary(text: str, position: int, lowest: int, highest: int, outward: int) -> int:
    """The word boundary nearest ``position`` within ``[lowest, highest]``, looking first
    outward (``-1``: to the left, ``+1``: to the right: more context) and then inward, at
    most :data:`_BOUNDARY_REACH` characters each way; ``position`` if there is none."""
    for direction in (outward, -outward):
        for step in range(_BOUNDARY_REACH + 1):
            candidate = position + direction * step
            if not lowest <= candidate <= highest:
                break
            if _at_boundary(text, candidate):
                return candidate
    return position


def _visible_windows(
    text: str, marks: Sequence[tuple[int, int]], max_chars: int | None, context: int
) -> list[tuple[int, int]]:
    """The parts of a source shown: all of it when short, else windows of ``context``
    characters around the marks, their edges moved to word boundaries (an excerpt never
    starts or ends inside a word, nor inside a mark)."""
    length = len(text)
    if max_chars is None or length <= max_chars:
        return [(0, length)]
    windows: list[tuple[int, int]] = []
    for start, end in sorted(marks):
        lo = _word_boundary(text, max(0, start - context), 0, start, -1)
        hi = _word_boundary(text, min(length, end + context), end, length, 1)
        if windows and lo <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(windows[-1][1], hi))
        else:
            windows.append((lo, hi))
    if not windows:
        windows.append((0, _word_boundary(text, min(length, max_chars), 0, length, -1)))
    return windows


def _covering(
    segments: Sequence[tuple[int, int]], intervals: Sequence[tuple[int, int]]
) -> list[list[int]]:
    """For each segment (cut at every interval edge), the indices of the intervals covering it.

    One sweep in start order, so thousands of evidence spans on one source stay linear.
    """
    order = sorted(range(len(intervals)), key=lambda i: intervals[i][0])
    active: list[int] = []
    next_interval = 0
    out = []
    for seg_start, _ in segments:
        while next_interval < len(order) and intervals[order[next_interval]][0] <= seg_start:
            active.append(order[next_interval])
            next_interval += 1
        # segments never straddle an edge: an interval alive at seg_start covers the segment
        active = [i for i in active if intervals[i][1] > seg_start]
        out.append(sorted(active))
    return out


_MAX_TOOLTIP_ENTRIES = 5


def _render_source(
    view: SourceView,
    number: int,
    evidence: Sequence[tuple[int, int, str, str, SpanCitations, Citation]],
    conflicts: Sequence[tuple[int, int]],
    uid: str,
    max_source_chars: int | None,
    context_chars: int,
) -> str:
    # evidence items: (local_start, local_end, evidence id, status, span, citation)
    text = view.text
    evidence_ranges = [(ev[0], ev[1]) for ev in evidence]
    windows = _visible_windows(text, evidence_ranges, max_source_chars, context_chars)
    edges = [edge for window in windows for edge in window]
    segments = _segments(
        len(text), evidence_ranges + list(conflicts) + list(zip(edges[::2], edges[1::2]))
    )
    window_index = 0
    visible = []
    for seg_start, seg_end in segments:
        while window_index < len(windows) and windows[window_index][1] <= seg_start:
            window_index += 1
        if window_index < len(windows) and windows[window_index][0] <= seg_start:
            visible.append((seg_start, seg_end))
    evidence_cover = _covering(visible, evidence_ranges)
    conflict_cover = _covering(visible, list(conflicts))
    rank = {status: i for i, status in enumerate(STATUSES)}
    pieces = []
    previous_end = 0
    for (seg_start, seg_end), covering_ids, conflict_ids in zip(
        visible, evidence_cover, conflict_cover
    ):
        if seg_start > previous_end:
            pieces.append(
                f'<span class="ck-elided">[\u2026 {seg_start - previous_end} characters \u2026]'
                "</span>"
            )
        previous_end = seg_end
        chunk = _esc(text[seg_start:seg_end])
        covering = [evidence[i] for i in covering_ids]
        in_conflict = bool(conflict_ids)
        if not covering:
            pieces.append(
                f'<span class="ck-conflict" title="conflicting value">{chunk}</span>'
                if in_conflict
                else chunk
            )
            continue
        # the colour of the best status citing this text
        status = min((ev[3] for ev in covering), key=rank.__getitem__)
        tooltip = "\n\n".join(
            _evidence_tooltip(ev[2], ev[4], ev[5]) for ev in covering[:_MAX_TOOLTIP_ENTRIES]
        )
        if len(covering) > _MAX_TOOLTIP_ENTRIES:
            tooltip += f"\n\n(+{len(covering) - _MAX_TOOLTIP_ENTRIES} more citations)"
        classes = f"ck-ev ck-{status}"
        if all(ev[4].citations[0] is not ev[5] for ev in covering):
            # only lower-ranked citations point here: draw it lighter than a best match
            classes += " ck-secondary"
        if in_conflict:
            classes += " ck-conflict"
        ids = " ".join(ev[2] for ev in covering)
        pieces.append(
            f'<mark class="{classes}" data-evidence="{ids}" '
            f'data-start="{seg_start + view.base}" data-end="{seg_end + view.base}" '
            f'title="{_esc(tooltip)}">{chunk}</mark>'
        )
    if previous_end < len(text):
        pieces.append(
            f'<span class="ck-elided">[\u2026 {len(text) - previous_end} characters \u2026]</span>'
        )
    title = f"{_esc(view.title)}" if view.title else ""
    offset_note = (
        f' <span class="ck-note">(excerpt of the parent document from character {view.base})</span>'
        if view.base
        else ""
    )
    return (
        f'<div class="ck-source" id="{uid}-src{number}">'
        f'<div class="ck-source-head"><span class="ck-label">{_source_label(number)}</span>'
        f'{title}<span class="ck-id">{_esc(view.label)}</span>{offset_note}</div>'
        f'<div class="ck-text">{"".join(pieces)}</div></div>'
    )


def _evidence_tooltip(evidence_id: str, item: SpanCitations, citation: Citation) -> str:
    sentence_number = int(evidence_id[1 : evidence_id.index("c")]) + 1
    sentence = item.answer_span.text
    if len(sentence) > 120:
        sentence = sentence[:117] + "..."
    return f"sentence {sentence_number} ({item.status}): {sentence}\n" + _citation_tooltip(citation)


def _legend() -> str:
    """What the colours, underlines and labels mean, drawn with the same styles."""

    def key(sample: str, meaning: str) -> str:
        return f'<span class="ck-key">{sample} {meaning}</span>'

    swatches = "".join(
        key(f'<span class="ck-swatch ck-{status}"></span>', status) for status in STATUSES
    )
    answer_keys = (
        swatches
        + key('<span class="ck-gap">wavy</span>', "no source covers these words")
        + key('<span class="ck-conflict">red</span>', "a value differs from the source")
        + key(f'<span class="ck-label">{_source_label(1)}</span>', "cited source (hover: scores)")
    )
    source_keys = (
        key('<span class="ck-ev ck-supported">solid</span>', "evidence of a best citation")
        + key('<span class="ck-ev ck-supported ck-secondary">dashed</span>',
              "cited only by a lower-ranked citation")
        + key('<span class="ck-elided">[\u2026]</span>', "source text left out")
    )
    return (
        f'<div class="ck-legend"><div><span class="ck-legend-head">Answer</span>{answer_keys}'
        f'</div><div><span class="ck-legend-head">Sources</span>{source_keys}</div></div>'
    )


def render_html(
    results: Sequence[SpanCitations],
    answer: str,
    sources: Any,
    *,
    max_source_chars: int | None = 5000,
    context_chars: int = 300,
    legend: bool = True,
) -> str:
    """Render citation results as one self-contained HTML fragment.

    A legend at the top says what the colours, underlines and labels mean. The answer is
    shown with each sentence coloured by status (green supported, amber partial, red
    unsupported), parts of a sentence that no source covers with a wavy underline, values
    that differ from the best citation's evidence in red, and a label ``S1``, ``S2``, ...
    per cited source (numbered in the order first cited; not in brackets, so that it
    cannot be taken for the answer's own markers such as ``[2]``) whose tooltip lists
    each citation's score components and conflicts. Below, each cited source is shown
    with every evidence span underlined at its exact offsets (solid for a sentence's best
    citation, dashed when only a lower-ranked citation points there); a long source is
    shown as excerpts around its evidence, cut at word boundaries; each ``<mark>``
    carries ``data-start`` / ``data-end`` (offsets in the citation's coordinates) and
    ``data-evidence`` (ids
    ``s{sentence}c{citation}e{span}`` of the evidence spans it belongs to), so separate
    spans of multi-span evidence are separate marks. No script, no external resources;
    all user text is escaped.

    Parameters
    ----------
    results : sequence of SpanCitations
        One answer's results, e.g. an :class:`~citekit.AlignmentResult`.
    answer : str
        The answer the results were computed from.
    sources : sequence or Corpus
        The sources passed to the alignment (str, ``SourceDocument``, ``SourceChunk`` or
        dicts with ``"id"``/``"text"``), or an object with a ``sources`` attribute.
        ``Citation.source_index`` indexes this sequence.
    max_source_chars : int or None, optional
        Sources longer than this are shown as excerpts around the evidence (``None``
        shows every source in full).
    context_chars : int, optional
        Characters of context kept around each piece of evidence in an excerpt (moved
        to the nearest word boundary, up to 40 characters either way).
    legend : bool, optional
        Draw the legend (``False`` for pages that show many results under one legend).

    Returns
    -------
    str
        An HTML fragment (a ``<div>`` with its own ``<style>``).

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a citation's offsets do not match the given sources (wrong sources passed).

    Examples
    --------
    >>> from citekit.results import AnswerSpan, Citation, SpanCitations
    >>> source = "Revenue grew 15% in 2023. <b>Costs</b> fell."
    >>> answer = "Revenue grew 15%."
    >>> cite = Citation(score=2.0, source_id="report", source_index=0, candidate_index=0,
    ...                 char_start=0, char_end=16, evidence="Revenue grew 15%")
    >>> results = [SpanCitations(AnswerSpan(answer, 0, 17), (cite,), "supported")]
    >>> page = render_html(results, answer, [source])
    >>> 'data-start="0" data-end="16"' in page, "<b>" in page, "&lt;b&gt;" in page
    (True, False, True)
    """
    items = _check_results(results)
    check_str(answer, "answer")
    check_int(max_source_chars, "max_source_chars", minimum=0, allow_none=True)
    check_int(context_chars, "context_chars", minimum=0)
    check_bool(legend, "legend")
    views = source_views(sources)

    # number cited sources by first citation in answer order
    marker_of: dict[int, int] = {}
    evidence_by_source: dict[int, list[tuple[int, int, str, str, SpanCitations, Citation]]] = {}
    conflicts_by_source: dict[int, list[tuple[int, int]]] = {}
    for s_index, item in enumerate(items):
        for c_index, citation in enumerate(item.citations):
            where = f"results[{s_index}].citations[{c_index}]"
            if not 0 <= citation.source_index < len(views):
                raise ValueError(
                    f"{where}.source_index is {citation.source_index} but {len(views)} sources "
                    "were passed; pass the sources the results came from"
                )
            view = views[citation.source_index]
            if citation.source_index not in marker_of:
                marker_of[citation.source_index] = len(marker_of) + 1
                # the pipeline's id for a plain-string source is better than its position
                view = views[citation.source_index] = SourceView(
                    citation.source_id, view.title, view.text, view.base
                )
            for e_index, span in enumerate(citation.evidence_spans):
                local_start, local_end = span.char_start - view.base, span.char_end - view.base
                if (
                    local_start < 0
                    or local_end > len(view.text)
                    or view.text[local_start:local_end] != span.evidence
                ):
                    raise ValueError(
                        f"{where}: evidence at characters {span.char_start}\u2013{span.char_end} "
                        f"does not match sources[{citation.source_index}] "
                        f"({view.label!r}); pass the sources the results came from"
                    )
                evidence_by_source.setdefault(citation.source_index, []).append(
                    (
                        local_start,
                        local_end,
                        f"s{s_index}c{c_index}e{e_index}",
                        item.status,
                        item,
                        citation,
                    )
                )
            for conflict in citation.conflicts if c_index == 0 else ():
                conflicts_by_source.setdefault(citation.source_index, []).append(
                    (
                        conflict.evidence_char_start - view.base,
                        conflict.evidence_char_end - view.base,
                    )
                )

    # (the cited sources' labels and the number of sources: a corpus of a million sources
    # is not read to name a result)
    cited_labels = [views[index].label for index in sorted(marker_of)]
    uid = _render_id(answer, items, [str(len(views)), *cited_labels])
    counts = {status: sum(item.status == status for item in items) for status in STATUSES}
    chips = "".join(
        f'<span class="ck-chip ck-{status}">{counts[status]} {_STATUS_LABEL[status]}</span>'
        for status in STATUSES
    )
    summary = (
        f'<div class="ck-summary">{len(items)} sentence{"s" if len(items) != 1 else ""} '
        f"&nbsp;{chips}</div>"
    )
    answer_html = _render_answer(answer, items, marker_of, uid)
    source_blocks = [
        _render_source(
            views[source_index],
            number,
            evidence_by_source.get(source_index, []),
            conflicts_by_source.get(source_index, []),
            uid,
            max_source_chars,
            context_chars,
        )
        for source_index, number in sorted(marker_of.items(), key=lambda kv: kv[1])
    ]
    uncited_html = _uncited_note(views, marker_of)
    sources_html = (
        "<h4>Cited sources</h4>" + "".join(source_blocks)
        if source_blocks
        else '<h4>Cited sources</h4><div class="ck-note">No source supports this answer.</div>'
    )
    return (
        f'<div class="ck-root" id="{uid}"><style>{_STYLE}</style>'
        f"{summary}{_legend() if legend else ''}<h4>Answer</h4>"
        f'<div class="ck-answer">{answer_html}</div>{sources_html}{uncited_html}</div>'
    )


# --------------------------------------------------------------------------- alignment view


@dataclass(frozen=True)
class AlignmentStep:
    """One column of an alignment: two tokens matched or mismatched, or one token facing a gap.

    ``kind`` is ``"match"``, ``"mismatch"``, ``"answer_gap"`` (an answer token with no
    evidence token opposite) or ``"evidence_gap"`` (the reverse). Offsets index the
    sentence and evidence strings given to :func:`alignment_view`; the missing side is
    ``None``.

    Examples
    --------
    >>> AlignmentStep("match", "grew", 8, 12, "grew", 8, 12).kind
    'match'
    """

    kind: str
    answer_token: str | None
    answer_start: int | None
    answer_end: int | None
    evidence_token: str | None
    evidence_start: int | None
    evidence_end: int | None


_STEP_SYMBOL = {"match": "|", "mismatch": "x", "answer_gap": " ", "evidence_gap": " "}


def _display_width(text: str) -> int:
    return sum(
        0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in text
    )


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _display_width(text))


@dataclass(frozen=True)
class AlignmentView:
    """How one answer sentence aligns with one piece of evidence, token by token.

    Built by :func:`alignment_view`. ``steps`` run in order through the local alignment;
    answer tokens before and after it appear as ``answer_gap`` steps so every answer
    token is shown. Print it for a text view, display it in Jupyter for a coloured table,
    or call :meth:`plot` for a matplotlib figure.

    Attributes
    ----------
    sentence, evidence : str
        The two texts.
    steps : tuple of AlignmentStep
        The alignment columns.
    score : int
        The Smith-Waterman score of the local alignment.
    """

    sentence: str
    evidence: str
    steps: tuple[AlignmentStep, ...]
    score: int

    @property
    def counts(self) -> dict[str, int]:
        """Number of steps of each kind.

        Examples
        --------
        >>> alignment_view("revenue grew", "revenue grew").counts["match"]
        2
        """
        out = {kind: 0 for kind in _STEP_SYMBOL}
        for step in self.steps:
            out[step.kind] += 1
        return out

    def to_text(self, width: int = 100) -> str:
        """Three-line blocks (answer, markers, evidence) wrapped at ``width`` columns.

        ``|`` marks a match, ``x`` a mismatch, ``-`` fills the side of a gap.

        Examples
        --------
        >>> print(alignment_view("Revenue grew 9% in 2023", "revenue grew 15% in 2023").to_text())
        answer   : Revenue grew 9  % in 2023
                   |       |    x  | |  |
        evidence : revenue grew 15 % in 2023
        """
        check_int(width, "width", minimum=20)
        label_answer, label_marks, label_evidence = "answer   : ", "           ", "evidence : "
        columns = []
        for step in self.steps:
            top = step.answer_token if step.answer_token is not None else "-"
            bottom = step.evidence_token if step.evidence_token is not None else "-"
            top, bottom = top.replace("\n", " "), bottom.replace("\n", " ")
            cell = max(_display_width(top), _display_width(bottom), 1)
            columns.append((top, _STEP_SYMBOL[step.kind], bottom, cell))
        blocks: list[list[str]] = []
        line = ["", "", ""]
        used = 0
        for top, mark, bottom, cell in columns:
            if used and used + cell + 1 > width - len(label_answer):
                blocks.append(line)
                line, used = ["", "", ""], 0
            line[0] += _pad(top, cell) + " "
            line[1] += _pad(mark, cell) + " "
            line[2] += _pad(bottom, cell) + " "
            used += cell + 1
        if used or not blocks:
            blocks.append(line)
        rendered = [
            "\n".join(
                (
                    label_answer + block[0].rstrip(),
                    label_marks + block[1].rstrip(),
                    label_evidence + block[2].rstrip(),
                )
            )
            for block in blocks
        ]
        return "\n\n".join(rendered)

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        def cell(token: str | None, kind: str) -> str:
            return f'<td class="ck-{kind}">{_esc(token) if token is not None else "&ndash;"}</td>'

        top = "".join(cell(step.answer_token, step.kind) for step in self.steps)
        bottom = "".join(cell(step.evidence_token, step.kind) for step in self.steps)
        counts = self.counts
        note = (
            f"score {self.score}: {counts['match']} matched, {counts['mismatch']} mismatched, "
            f"{counts['answer_gap'] + counts['evidence_gap']} gap tokens"
        )
        return (
            f'<div class="ck-root"><style>{_STYLE}</style><table class="ck-align">'
            f"<tr><th>answer</th>{top}</tr><tr><th>evidence</th>{bottom}</tr></table>"
            f'<div class="ck-note">{_esc(note)}</div></div>'
        )

    def plot(self, ax: Any = None, *, max_columns: int = 40) -> Any:
        """Draw the alignment as a two-row grid of coloured token cells (matplotlib).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; a new figure is created when omitted.
        max_columns : int, optional
            Show at most this many alignment columns (long alignments are cut at the end).

        Returns
        -------
        matplotlib.figure.Figure

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> fig = alignment_view("Revenue grew 9%", "revenue grew 15%").plot()
        >>> len(fig.axes)
        1
        """
        from citekit._optional import import_optional

        check_int(max_columns, "max_columns", minimum=1)
        import_optional("matplotlib", "notebook", purpose="AlignmentView.plot")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch, Rectangle

        colours = {
            "match": "#aceebb",
            "mismatch": "#ffc1bd",
            "answer_gap": "#e1e4e8",
            "evidence_gap": "#e1e4e8",
        }
        steps = self.steps[:max_columns]
        if ax is None:
            fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(steps) + 1.2), 1.9))
        else:
            fig = ax.figure
        for column, step in enumerate(steps):
            for row, token in ((1, step.answer_token), (0, step.evidence_token)):
                ax.add_patch(
                    Rectangle(
                        (column, row),
                        0.96,
                        0.9,
                        facecolor=colours[step.kind],
                        edgecolor="#8c959f",
                        linewidth=0.5,
                    )
                )
                label = token if token is not None else "\u2013"
                if len(label) > 10:
                    label = label[:9] + "\u2026"
                ax.text(column + 0.48, row + 0.45, label, ha="center", va="center", fontsize=8)
        ax.set_xlim(0, max(len(steps), 1))
        ax.set_ylim(0, 2)
        ax.set_yticks([0.45, 1.45], ["evidence", "answer"])
        ax.set_xticks([])
        for side in ("top", "right", "bottom", "left"):
            ax.spines[side].set_visible(False)
        counts = self.counts
        ax.set_title(
            f"alignment score {self.score}: {counts['match']} matched, "
            f"{counts['mismatch']} mismatched, "
            f"{counts['answer_gap'] + counts['evidence_gap']} gap tokens",
            fontsize=9,
        )
        ax.legend(
            handles=[
                Patch(facecolor=colours["match"], label="match"),
                Patch(facecolor=colours["mismatch"], label="mismatch"),
                Patch(facecolor=colours["answer_gap"], label="gap"),
            ],
            loc="upper left",
            bbox_to_anchor=(1.0, 1.0),
            fontsize=8,
            frameon=False,
        )
        fig.tight_layout()
        return fig


def _tokenize_for_view(tokenizer: Any, text: str, name: str) -> Any:
    from citekit.tokenizers.base import tokenize_checked

    return tokenize_checked(tokenizer, text, name=name)


def _resolve_alignment_settings(
    pipeline: Any, tokenizer: Any, scores: tuple[int | None, int | None, int | None]
) -> tuple[Any, int, int, int]:
    if pipeline is not None and not hasattr(pipeline, "config"):
        raise TypeError(f"pipeline must be a citekit Pipeline, got {type(pipeline).__name__}")
    config = getattr(pipeline, "config", None)
    if tokenizer is None and pipeline is not None:
        tokenizer = getattr(pipeline, "tokenizer", None)
    if tokenizer is None:
        from citekit.tokenizers import SimpleTokenizer

        tokenizer = SimpleTokenizer()
    names = ("match_score", "mismatch_score", "gap_score")
    defaults = (2, -1, -1)  # CitationConfig's
    resolved = []
    for name, value, default in zip(names, scores, defaults):
        if value is None:
            value = getattr(config, name, default) if config is not None else default
        resolved.append(check_int(value, name))
    return tokenizer, resolved[0], resolved[1], resolved[2]


def alignment_view(
    sentence: str,
    evidence: str,
    *,
    pipeline: Any = None,
    tokenizer: Any = None,
    match_score: int | None = None,
    mismatch_score: int | None = None,
    gap_score: int | None = None,
) -> AlignmentView:
    """Align one answer sentence with one piece of evidence and show it token by token.

    Both texts are tokenized with the same tokenizer and aligned with citekit's
    Smith-Waterman kernel. Between two matched runs, opposite tokens are paired as
    mismatches and the surplus on the longer side becomes gaps when a mismatch costs no
    more than two gaps (as with the default scores), else all of them are gaps: what an
    optimal alignment does.

    Parameters
    ----------
    sentence, evidence : str
        The answer sentence and the evidence (or a whole passage) to align.
    pipeline : Pipeline, optional
        Use this pipeline's tokenizer and alignment scores, to see exactly what it aligned.
    tokenizer : Tokenizer, optional
        Any object following the tokenizer protocol (default: the pipeline's, else
        ``SimpleTokenizer()``).
    match_score, mismatch_score, gap_score : int, optional
        Smith-Waterman scores (default: the pipeline's configuration, else 2, -1, -1).

    Returns
    -------
    AlignmentView

    Examples
    --------
    >>> view = alignment_view("Revenue grew 9% in 2023.", "Revenue grew 15% in 2023.")
    >>> [(s.kind, s.answer_token, s.evidence_token) for s in view.steps][2]
    ('mismatch', '9', '15')
    >>> view.counts["match"]
    5
    """
    check_str(sentence, "sentence")
    check_str(evidence, "evidence")
    tokenizer, match_score, mismatch_score, gap_score = _resolve_alignment_settings(
        pipeline, tokenizer, (match_score, mismatch_score, gap_score)
    )
    answer_tokens = _tokenize_for_view(tokenizer, sentence, "tokenizer")
    evidence_tokens = _tokenize_for_view(tokenizer, evidence, "tokenizer")

    from citekit.kernels import smith_waterman

    local = smith_waterman(
        answer_tokens.token_ids,
        evidence_tokens.token_ids,
        match_score=match_score,
        mismatch_score=mismatch_score,
        gap_score=gap_score,
        return_blocks=True,
    )
    a_starts, a_ends = answer_tokens.starts.tolist(), answer_tokens.ends.tolist()
    e_starts, e_ends = evidence_tokens.starts.tolist(), evidence_tokens.ends.tolist()

    def answer_step(i: int, kind: str, j: int | None = None) -> AlignmentStep:
        a = (sentence[a_starts[i] : a_ends[i]], a_starts[i], a_ends[i])
        e = (
            (evidence[e_starts[j] : e_ends[j]], e_starts[j], e_ends[j])
            if j is not None
            else (None, None, None)
        )
        return AlignmentStep(kind, *a, *e)

    def evidence_step(j: int) -> AlignmentStep:
        return AlignmentStep(
            "evidence_gap",
            None,
            None,
            None,
            evidence[e_starts[j] : e_ends[j]],
            e_starts[j],
            e_ends[j],
        )

    steps: list[AlignmentStep] = []
    blocks = [b for b in (local.blocks or ()) if b[2] > 0]
    if local.score <= 0 or not blocks:
        steps = [answer_step(i, "answer_gap") for i in range(len(answer_tokens))]
        return AlignmentView(sentence, evidence, tuple(steps), int(max(local.score, 0)))
    steps.extend(answer_step(i, "answer_gap") for i in range(blocks[0][0]))
    previous_q = previous_t = None
    for q_start, t_start, length in blocks:
        if previous_q is not None:
            gap_q = list(range(previous_q, q_start))
            gap_t = list(range(previous_t, t_start))
            paired = min(len(gap_q), len(gap_t)) if mismatch_score >= 2 * gap_score else 0
            steps.extend(answer_step(gap_q[k], "mismatch", gap_t[k]) for k in range(paired))
            steps.extend(answer_step(i, "answer_gap") for i in gap_q[paired:])
            steps.extend(evidence_step(j) for j in gap_t[paired:])
        steps.extend(answer_step(q_start + k, "match", t_start + k) for k in range(length))
        previous_q, previous_t = q_start + length, t_start + length
    steps.extend(answer_step(i, "answer_gap") for i in range(previous_q, len(answer_tokens)))
    return AlignmentView(sentence, evidence, tuple(steps), int(local.score))


def explain_citation(
    results: Sequence[SpanCitations],
    span_index: int,
    citation_index: int = 0,
    *,
    pipeline: Any = None,
    tokenizer: Any = None,
    match_score: int | None = None,
    mismatch_score: int | None = None,
    gap_score: int | None = None,
) -> AlignmentView:
    """The :func:`alignment_view` of one citation of one answer sentence.

    Parameters
    ----------
    results : sequence of SpanCitations
        One answer's results.
    span_index : int
        Which answer span (sentence).
    citation_index : int, optional
        Which of its citations (0 = the best).
    pipeline, tokenizer, match_score, mismatch_score, gap_score
        As in :func:`alignment_view`; pass the pipeline to see exactly what it aligned.

    Returns
    -------
    AlignmentView

    Examples
    --------
    >>> from citekit.results import AnswerSpan, Citation, SpanCitations
    >>> cite = Citation(score=1.0, source_id="s", source_index=0, candidate_index=0,
    ...                 char_start=0, char_end=16, evidence="Revenue grew 15%")
    >>> results = [SpanCitations(AnswerSpan("Revenue grew 9%.", 0, 16), (cite,), "partial")]
    >>> explain_citation(results, 0).counts["mismatch"]
    1
    """
    items = _check_results(results)
    check_int(span_index, "span_index", minimum=-len(items), maximum=len(items) - 1)
    item = items[span_index]
    if not item.citations:
        raise ValueError(f"span_index {span_index}: that sentence has no citations ({item.status})")
    check_int(
        citation_index,
        "citation_index",
        minimum=-len(item.citations),
        maximum=len(item.citations) - 1,
    )
    citation = item.citations[citation_index]
    return alignment_view(
        item.answer_span.text,
        citation.evidence,
        pipeline=pipeline,
        tokenizer=tokenizer,
        match_score=match_score,
        mismatch_score=mismatch_score,
        gap_score=gap_score,
    )
