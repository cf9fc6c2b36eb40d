"""citekit.display: escaping, highlighted spans in the DOM equal citation offsets, alignments."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit.display import AlignmentStep, alignment_view, explain_citation, render_html
from citekit.results import (
    AlignmentResult,
    AnswerSpan,
    Citation,
    Conflict,
    EvidenceSpan,
    SourceChunk,
    SourceDocument,
    SpanCitations,
)

# ----------------------------------------------------------------------------- a tiny DOM


class Node:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def classes(self):
        return (self.attrs.get("class") or "").split()


_VOID = {"br", "img", "meta", "link", "hr", "input"}


class TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.current)
        self.current.children.append(node)
        if tag not in _VOID:
            self.current = node

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None, f"unmatched </{tag}>"
        assert node is self.current, f"</{tag}> closes <{self.current.tag}> early (bad nesting)"
        self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(page: str) -> Node:
    builder = TreeBuilder()
    builder.feed(page)
    builder.close()
    assert builder.current is builder.root, "unclosed elements"
    return builder.root


def source_text_of(root: Node, number: int) -> str:
    """The visible text of the n-th cited source block (1-based), elision notes removed."""
    block = next(
        n
        for n in root.iter()
        if "ck-source" in n.classes() and n.attrs["id"].endswith(f"src{number}")
    )
    text_div = next(n for n in block.iter() if "ck-text" in n.classes())
    parts = []
    for node in text_div.children:
        if isinstance(node, str):
            parts.append(node)
        elif "ck-elided" not in node.classes():
            parts.append(node.text())
    return "".join(parts)


def evidence_marks(root: Node) -> dict[str, list[tuple[int, int, str]]]:
    """evidence id -> [(data-start, data-end, text)] of the marks that carry it."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    for node in root.iter():
        if node.tag == "mark":
            for evidence_id in node.attrs["data-evidence"].split():
                out.setdefault(evidence_id, []).append(
                    (int(node.attrs["data-start"]), int(node.attrs["data-end"]), node.text())
                )
    return out


def assert_marks_equal_citations(page: str, results) -> None:
    root = parse(page)
    marks = evidence_marks(root)
    expected_ids = set()
    for s, item in enumerate(results):
        for c, citation in enumerate(item.citations):
            for e, span in enumerate(citation.evidence_spans):
                evidence_id = f"s{s}c{c}e{e}"
                expected_ids.add(evidence_id)
                pieces = sorted(marks.get(evidence_id, []))
                if span.char_start == span.char_end:
                    assert not pieces
                    continue
                assert pieces, evidence_id
                # contiguous pieces that exactly tile the evidence span
                assert pieces[0][0] == span.char_start and pieces[-1][1] == span.char_end
                for (_, end, _), (start, _, _) in zip(pieces, pieces[1:]):
                    assert end == start
                assert "".join(text for _, _, text in pieces) == span.evidence
    assert set(marks) <= expected_ids


# ----------------------------------------------------------------------------- fixtures

SOURCE = (
    "Letter to shareholders.\nNorthwind closed fiscal 2023 with revenue of $412.6 million, "
    "up 15% from $358.8 million. Online sales rose 31% and now account for 44% of revenue."
)
ANSWER = (
    "Revenue was $412.6 million, up 9% from $358.8 million. Online sales rose 31%. "
    "It will enter Canada."
)


def _citation(text, evidence, *, source_id="report", source_index=0, spans=None, score=2.0, **kw):
    start = text.index(evidence)
    evidence_spans = tuple(EvidenceSpan(a, b, text[a:b]) for a, b in spans) if spans else ()
    return Citation(
        score=score,
        source_id=source_id,
        source_index=source_index,
        candidate_index=0,
        char_start=start,
        char_end=start + len(evidence),
        evidence=evidence,
        evidence_spans=evidence_spans,
        components={"alignment_score": 14.0, "answer_coverage": 0.71},
        **kw,
    )


def _sentence(answer, text, status, citations=(), unsupported=()):
    start = answer.index(text)
    return SpanCitations(
        AnswerSpan(text, start, start + len(text)), tuple(citations), status, tuple(unsupported)
    )


@pytest.fixture
def example():
    evidence = SOURCE[SOURCE.index("revenue of") : SOURCE.index("358.8 million") + 13]
    first = SOURCE.index("revenue of")
    second = SOURCE.index("$358.8")
    conflict = Conflict(
        "percent",
        "9%",
        ANSWER.index("9%"),
        ANSWER.index("9%") + 2,
        "15%",
        SOURCE.index("15%"),
        SOURCE.index("15%") + 3,
    )
    multi = _citation(
        SOURCE,
        evidence,
        spans=[(first, first + len("revenue of $412.6 million")), (second, second + 14)],
        conflicts=(conflict,),
    )
    other = "Other doc: online sales rose 31% indeed"
    results = AlignmentResult(
        [
            _sentence(
                ANSWER, "Revenue was $412.6 million, up 9% from $358.8 million.", "partial", [multi]
            ),
            _sentence(
                ANSWER,
                "Online sales rose 31%.",
                "supported",
                [
                    _citation(SOURCE, "Online sales rose 31%", score=3.0),
                    _citation(other, "online sales rose 31%", source_id="other", source_index=1),
                ],
            ),
            _sentence(
                ANSWER,
                "It will enter Canada.",
                "unsupported",
                unsupported=[(ANSWER.index("It"), len(ANSWER))],
            ),
        ],
        answer=ANSWER,
        sources=[
            SourceDocument("report", SOURCE, {"title": "Annual report"}),
            other,
            "never cited",
        ],
    )
    return results


# ----------------------------------------------------------------------------- render_html


def test_marks_in_the_dom_equal_citation_offsets(example):
    page = render_html(example, example.answer, example.sources)
    assert_marks_equal_citations(page, example)
    root = parse(page)
    # the full source text survives, highlighted or not
    assert source_text_of(root, 1) == SOURCE


def test_multi_span_evidence_is_separate_marks_with_a_gap(example):
    page = render_html(example, example.answer, example.sources)
    marks = evidence_marks(parse(page))
    ((a_start, a_end, _),) = marks["s0c0e0"]
    ((b_start, b_end, _),) = marks["s0c0e1"]
    assert a_end < b_start  # the text between the two spans is not marked
    assert SOURCE[a_end:b_start] == ", up 15% from "


def test_sentences_are_coloured_by_status_with_their_offsets(example):
    root = parse(render_html(example, example.answer, example.sources))
    sentences = [n for n in root.iter() if "ck-sent" in n.classes()]
    assert [n.attrs["data-status"] for n in sentences] == ["partial", "supported", "unsupported"]
    for node, item in zip(sentences, example):
        assert f"ck-{item.status}" in node.classes()
        assert (int(node.attrs["data-start"]), int(node.attrs["data-end"])) == (
            item.answer_span.char_start,
            item.answer_span.char_end,
        )
        assert node.text() == item.answer_span.text
    answer_div = next(n for n in root.iter() if "ck-answer" in n.classes())
    markers = [n for n in answer_div.iter() if "ck-cite" in n.classes()]
    # "S1", not "[1]": an answer's own markers are bracketed numbers
    assert [m.text() for m in markers] == ["S1", "S1", "S2"]
    visible = "".join(
        c if isinstance(c, str) else ("" if "ck-cite" in c.classes() else c.text())
        for c in answer_div.children
    )
    assert visible == ANSWER


def test_score_components_and_conflicts_on_hover(example):
    # (without the legend, whose samples carry the same classes)
    root = parse(render_html(example, example.answer, example.sources, legend=False))
    first_marker = next(n for n in root.iter() if n.tag == "a" and n.text() == "S1")
    tooltip = first_marker.attrs["title"]
    assert "alignment_score: 14" in tooltip and "answer_coverage: 0.71" in tooltip
    assert "'9%'" in tooltip and "'15%'" in tooltip
    mark = next(n for n in root.iter() if n.tag == "mark")
    assert "score 2.000" in mark.attrs["title"]
    gaps = [n for n in root.iter() if "ck-gap" in n.classes()]
    assert gaps and gaps[0].text() == "It will enter Canada."
    conflicts = [n.text() for n in root.iter() if "ck-conflict" in n.classes()]
    assert "9%" in conflicts and "15%" in conflicts


def test_uncited_sources_are_listed_not_shown(example):
    root = parse(render_html(example, example.answer, example.sources))
    note = [n.text() for n in root.iter() if "ck-note" in n.classes()]
    assert any("never cited" not in t and "Not cited: 2" in t for t in note)


def test_repr_html_of_alignment_result_is_render_html(example):
    assert example._repr_html_() == render_html(example, example.answer, example.sources)


def test_rendering_is_deterministic_and_ids_differ_between_results(example):
    first = render_html(example, example.answer, example.sources)
    assert first == render_html(example, example.answer, example.sources)
    other = AlignmentResult([], answer="Something else.", sources=[])
    id_a = parse(first).children[0].attrs["id"]
    id_b = parse(render_html(other, other.answer, other.sources)).children[0].attrs["id"]
    assert id_a != id_b


HOSTILE = [
    "<script>alert('x')</script>",
    '"><img src=x onerror=alert(1)>',
    "</style><script>alert(2)</script>",
    "' onmouseover='alert(3)",
    "&lt;already escaped&gt; &amp;",
]


@pytest.mark.parametrize("payload", HOSTILE)
def test_user_text_is_escaped_everywhere(payload):
    source = f"Intro {payload} revenue grew 15% {payload} end."
    answer = f"Revenue grew 15%. {payload}"
    cite = _citation(source, "revenue grew 15%", source_id=payload)
    results = [
        _sentence(answer, "Revenue grew 15%.", "supported", [cite]),
        _sentence(answer, payload, "unsupported"),
    ]
    sources = [SourceDocument(payload, source, {"title": payload})]
    page = render_html(results, answer, sources)
    root = parse(page)
    tags = {node.tag for node in root.iter()}
    assert "script" not in tags and "img" not in tags
    # every element's attributes are ones citekit writes; nothing injected
    allowed = {
        "class",
        "id",
        "title",
        "href",
        "data-start",
        "data-end",
        "data-status",
        "data-evidence",
    }
    for node in root.iter():
        assert set(node.attrs) <= allowed, node.attrs
    style_nodes = [n for n in root.iter() if n.tag == "style"]
    assert len(style_nodes) == 1 and payload not in style_nodes[0].text()
    assert source_text_of(root, 1) == source
    assert payload in root.text()
    assert_marks_equal_citations(page, results)


def test_no_external_resources_or_scripts(example):
    page = render_html(example, example.answer, example.sources)
    for needle in ("http://", "https://", "<script", "<link", "src=", "@import", "url("):
        assert needle not in page


def test_source_chunk_offsets_are_absolute_in_the_parent_document():
    document = "Preface text. " * 3 + "Revenue grew 15% in 2023. Costs fell."
    start = document.index("Revenue")
    chunk_text = document[start:]
    evidence = "Revenue grew 15%"
    cite = Citation(
        score=1.0,
        source_id="doc",
        source_index=0,
        candidate_index=0,
        char_start=start,
        char_end=start + len(evidence),
        evidence=evidence,
    )
    answer = "Revenue grew 15%."
    results = [_sentence(answer, answer, "supported", [cite])]
    without_parent = SourceChunk("doc", chunk_text, start, len(document))
    with_parent = SourceChunk("doc", chunk_text, start, len(document), document_text=document)
    for chunk, shown in ((without_parent, chunk_text), (with_parent, document)):
        page = render_html(results, answer, [chunk])
        assert_marks_equal_citations(page, results)
        assert source_text_of(parse(page), 1) == shown
    assert "excerpt of the parent document" in render_html(results, answer, [without_parent])


def test_dict_and_string_sources():
    answer = "Cats purr."
    cite = Citation(
        score=1.0,
        source_id="cats",
        source_index=0,
        candidate_index=0,
        char_start=0,
        char_end=9,
        evidence="Cats purr",
    )
    results = [_sentence(answer, answer, "supported", [cite])]
    for sources in ([{"id": "cats", "text": "Cats purr loudly."}], ["Cats purr loudly."]):
        page = render_html(results, answer, sources)
        assert_marks_equal_citations(page, results)
        assert "cats" in parse(page).text()


def test_a_visible_legend_explains_colours_underlines_and_labels(example):
    root = parse(render_html(example, example.answer, example.sources))
    legend = next(n for n in root.iter() if "ck-legend" in n.classes())
    text = legend.text()
    for meaning in ("supported", "partial", "unsupported", "no source covers these words",
                    "a value differs from the source", "cited source", "best citation",
                    "lower-ranked citation", "source text left out"):
        assert meaning in text, meaning
    # drawn with the styles it explains
    samples = {n.text(): n.classes() for n in legend.iter() if isinstance(n, Node)}
    assert "ck-gap" in samples["wavy"] and "ck-conflict" in samples["red"]
    assert "ck-secondary" in samples["dashed"] and "ck-secondary" not in samples["solid"]
    assert "ck-label" in samples["S1"]
    # the legend comes before the answer, and can be left out
    order = [n for n in root.iter() if {"ck-legend", "ck-answer"} & set(n.classes())]
    assert "ck-legend" in order[0].classes()
    bare = render_html(example, example.answer, example.sources, legend=False)
    assert 'class="ck-legend"' not in bare
    with pytest.raises(TypeError, match="legend"):
        render_html(example, example.answer, example.sources, legend="yes")


def test_source_labels_cannot_be_taken_for_the_answers_own_markers():
    source = "Net income per share rose to 2.41 dollars. The dividend doubled."
    answer = "Net income per share rose to 2.41 dollars [2]. The dividend doubled [3]."
    first, second = answer.index("[2].") + 4, len(answer)
    results = [
        _sentence(answer, answer[:first], "supported",
                  [_citation(source, "Net income per share rose to 2.41 dollars")]),
        _sentence(answer, answer[first + 1 : second], "supported",
                  [_citation(source, "The dividend doubled")]),
    ]
    root = parse(render_html(results, answer, [source]))
    answer_div = next(n for n in root.iter() if "ck-answer" in n.classes())
    labels = [n.text() for n in answer_div.iter() if "ck-cite" in n.classes()]
    assert labels == ["S1", "S1"]
    assert "[2]" in answer_div.text() and "[1]" not in root.text()
    heads = [n for n in root.iter() if "ck-source-head" in n.classes()]
    assert [next(c for c in h.iter() if "ck-label" in c.classes()).text() for h in heads] == ["S1"]


def _excerpt_edges(page: str) -> list[tuple[int, int]]:
    """(start, end) of each excerpt shown of the first cited source (from the marks and
    the elision notes)."""
    root = parse(page)
    block = next(n for n in root.iter() if "ck-text" in n.classes())
    edges, position, start = [], 0, 0
    for node in block.children:
        if isinstance(node, str):
            position += len(node)
        elif "ck-elided" in node.classes():
            if position > start:
                edges.append((start, position))
            position += int(node.text().split()[1])
            start = position
        else:
            position += len(node.text())
    if position > start:
        edges.append((start, position))
    return edges


def test_excerpts_are_cut_at_word_boundaries():
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima ".split()
    filler = " ".join(words * 30) + ". "
    source = filler + "Operating statistics matter for the dividend policy. " + filler
    evidence = "statistics matter for the dividend"
    answer = "Statistics matter for the dividend."
    results = [_sentence(answer, answer, "supported", [_citation(source, evidence)])]
    for context in range(0, 60, 7):
        page = render_html(results, answer, [source], max_source_chars=300, context_chars=context)
        assert_marks_equal_citations(page, results)
        edges = _excerpt_edges(page)
        assert len(edges) == 1
        start, end = edges[0]
        assert start == 0 or not (source[start - 1].isalnum() and source[start].isalnum())
        assert end == len(source) or not (source[end - 1].isalnum() and source[end].isalnum())
        # the context asked for, give or take one word
        assert abs(source.index(evidence) - context - start) <= 12, (context, start)


def test_excerpts_of_text_without_spaces_keep_the_context_asked_for():
    source = "東京は日本の首都です。" * 60 + "売上は十五パーセント増加した。" + "大阪は大きな都市です。" * 60
    evidence = "売上は十五パーセント増加した"
    answer = evidence + "。"
    results = [_sentence(answer, answer, "supported", [_citation(source, evidence)])]
    page = render_html(results, answer, [source], max_source_chars=100, context_chars=5)
    assert_marks_equal_citations(page, results)
    ((start, end),) = _excerpt_edges(page)
    evidence_start = source.index(evidence)
    # "。" ends a word, so the cut may move to it, but never more than the reach
    assert evidence_start - 5 - 40 <= start <= evidence_start
    assert evidence_start + len(evidence) <= end <= evidence_start + len(evidence) + 5 + 40


def test_long_sources_are_excerpted_around_the_evidence():
    filler = "Nothing to see here. " * 2000
    source = filler + "The key fact is 42. " + filler
    evidence = "The key fact is 42"
    cite = _citation(source, evidence)
    answer = "The key fact is 42."
    results = [_sentence(answer, answer, "supported", [cite])]
    page = render_html(
        results, answer, [source], max_source_chars=1000, context_chars=50, legend=False
    )
    assert len(page) < 10_000
    root = parse(page)
    elided = [n.text() for n in root.iter() if "ck-elided" in n.classes()]
    assert len(elided) == 2 and all("characters" in t for t in elided)
    assert_marks_equal_citations(page, results)
    full = render_html(results, answer, [source], max_source_chars=None)
    assert source_text_of(parse(full), 1) == source


def test_unicode_text_and_offsets():
    source = "前置き。売上は15%増加した😀。Straße ﬁnal.\r\nनमस्ते दुनिया"
    answer = "売上は15%増加した😀。 नमस्ते"
    results = [
        _sentence(
            answer, "売上は15%増加した😀。", "supported", [_citation(source, "売上は15%増加した😀")]
        ),
        _sentence(answer, "नमस्ते", "supported", [_citation(source, "नमस्ते दुनिया")]),
    ]
    page = render_html(results, answer, [source])
    assert_marks_equal_citations(page, results)
    assert source_text_of(parse(page), 1) == source


def test_empty_results_render():
    page = render_html([], "", [])
    root = parse(page)
    assert "No source supports this answer" in root.text()
    assert "0 sentences" in root.text()


def test_bad_arguments_name_the_argument(example):
    with pytest.raises(TypeError, match="results"):
        render_html("not results", "a", [])
    with pytest.raises(TypeError, match=r"results\[0\]"):
        render_html([{"status": "supported"}], "a", [])
    with pytest.raises(TypeError, match="answer"):
        render_html(example, None, example.sources)
    with pytest.raises(TypeError, match="sources"):
        render_html(example, example.answer, "just a string")
    with pytest.raises(TypeError, match=r"sources\[0\]"):
        render_html(example, example.answer, [42])
    with pytest.raises(ValueError, match="source_index"):
        render_html(example, example.answer, example.sources[:1])
    with pytest.raises(ValueError, match="does not match"):
        render_html(example, example.answer, ["x" * 500, "y" * 50])
    with pytest.raises(ValueError, match="outside the answer"):
        render_html(example, "short", example.sources)
    with pytest.raises(ValueError, match="max_source_chars"):
        render_html(example, example.answer, example.sources, max_source_chars=-1)
    with pytest.raises(TypeError, match="context_chars"):
        render_html(example, example.answer, example.sources, context_chars=1.5)


@st.composite
def text_with_citations(draw):
    source = draw(st.text(max_size=60))
    answer = draw(st.text(max_size=40))
    n = len(source)
    items = []
    position = 0
    for _ in range(draw(st.integers(0, 3))):
        if position > len(answer):
            break
        end = draw(st.integers(position, len(answer)))
        citations = []
        for _ in range(draw(st.integers(0, 2))):
            cuts = sorted(draw(st.lists(st.integers(0, n), min_size=2, max_size=6)))
            pairs = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
            spans = [EvidenceSpan(a, b, source[a:b]) for a, b in pairs]
            citations.append(
                Citation(
                    score=1.0,
                    source_id="s",
                    source_index=0,
                    candidate_index=0,
                    char_start=pairs[0][0],
                    char_end=pairs[-1][1],
                    evidence=source[pairs[0][0] : pairs[-1][1]],
                    evidence_spans=spans,
                )
            )
        status = draw(st.sampled_from(["supported", "partial"])) if citations else "unsupported"
        gap = ((position, end),) if draw(st.booleans()) else ()
        items.append(
            SpanCitations(
                AnswerSpan(answer[position:end], position, end), tuple(citations), status, gap
            )
        )
        position = end + draw(st.integers(0, 2))
    return source, answer, items


@settings(max_examples=150)
@given(text_with_citations())
def test_property_marks_match_offsets_for_arbitrary_unicode(case):
    source, answer, items = case
    page = render_html(items, answer, [source], max_source_chars=None)
    assert_marks_equal_citations(page, items)
    root = parse(page)
    if any(item.citations for item in items):
        assert source_text_of(root, 1) == source
    answer_div = next(n for n in root.iter() if "ck-answer" in n.classes())
    visible = "".join(
        c if isinstance(c, str) else ("" if "ck-cite" in c.classes() else c.text())
        for c in answer_div.children
    )
    assert visible == answer


# ----------------------------------------------------------------------------- alignment view


def _need_kernels():
    kernels = pytest.importorskip("citekit.kernels")
    if not hasattr(kernels, "smith_waterman"):
        pytest.skip("citekit.kernels.smith_waterman not available yet")
    pytest.importorskip("citekit.tokenizers.simple")


def test_alignment_view_shows_match_mismatch_and_gaps():
    _need_kernels()
    view = alignment_view("Revenue grew 9% in fiscal 2023.", "Revenue grew 15% in 2023.")
    kinds = [(s.kind, s.answer_token, s.evidence_token) for s in view.steps]
    assert ("mismatch", "9", "15") in kinds
    assert ("answer_gap", "fiscal", None) in kinds
    assert view.counts["match"] >= 4
    # every answer token appears exactly once, in order, at its offsets
    answer_steps = [s for s in view.steps if s.answer_token is not None]
    assert [s.answer_start for s in answer_steps] == sorted(s.answer_start for s in answer_steps)
    for step in view.steps:
        if step.answer_token is not None:
            assert view.sentence[step.answer_start : step.answer_end] == step.answer_token
        if step.evidence_token is not None:
            assert view.evidence[step.evidence_start : step.evidence_end] == step.evidence_token
    text = view.to_text()
    assert text.splitlines()[0].startswith("answer   : Revenue grew 9")
    assert "x" in text.splitlines()[1]
    html_table = parse(view._repr_html_())
    cells = [n for n in html_table.iter() if n.tag == "td"]
    assert any("ck-mismatch" in c.classes() for c in cells)


def test_alignment_view_evidence_gap_and_no_alignment():
    _need_kernels()
    view = alignment_view("sales rose sharply", "sales rose very very sharply")
    assert [s.kind for s in view.steps].count("evidence_gap") == 2
    none = alignment_view("completely different words", "nothing shared here")
    assert all(s.kind == "answer_gap" for s in none.steps) and none.score == 0
    empty = alignment_view("", "")
    assert empty.steps == () and empty.to_text().startswith("answer   :")


def test_alignment_view_wraps_long_alignments_and_wide_characters():
    _need_kernels()
    sentence = " ".join(f"word{i}" for i in range(60))
    view = alignment_view(sentence, sentence)
    blocks = view.to_text(width=60).split("\n\n")
    assert len(blocks) > 3
    assert all(len(line) <= 60 for block in blocks for line in block.splitlines())
    cjk = alignment_view("売上は増加", "売上は減少").to_text().splitlines()
    # wide characters take two columns: the marker under each sits at its display column
    assert cjk[0] == "answer   : 売 上 は 増 加"
    assert cjk[1] == "           |  |  |"


def test_alignment_view_plot_draws_a_figure():
    _need_kernels()
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    view = alignment_view("Revenue grew 9% in 2023", "Revenue grew 15% in 2023")
    fig = view.plot()
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "9" in texts and "15" in texts
    plt.close(fig)
    fig, ax = plt.subplots()
    assert view.plot(ax=ax) is fig
    plt.close(fig)


def test_explain_citation_uses_the_sentence_and_evidence(example):
    _need_kernels()
    view = explain_citation(example, 1, 1)
    assert view.sentence == "Online sales rose 31%." and view.evidence == "online sales rose 31%"
    assert view.counts["mismatch"] == 0 and view.counts["match"] >= 4
    with pytest.raises(ValueError, match="no citations"):
        explain_citation(example, 2)
    with pytest.raises(ValueError, match="span_index"):
        explain_citation(example, 7)
    with pytest.raises(ValueError, match="citation_index"):
        explain_citation(example, 0, 3)


def test_alignment_view_bad_arguments():
    with pytest.raises(TypeError, match="sentence"):
        alignment_view(None, "x")
    with pytest.raises(TypeError, match="evidence"):
        alignment_view("x", 3)
    with pytest.raises(TypeError, match="gap_score"):
        alignment_view("x", "y", gap_score=0.5)
    assert AlignmentStep("match", "a", 0, 1, "a", 0, 1).kind == "match"


def test_only_the_best_citations_conflicts_are_drawn():
    answer = "Margin was 47.2% in 2023."
    good_source, other_source = "Margin was 47.2% in 2023.", "Cover was 23% in 2022."
    best = _citation(good_source, "Margin was 47.2% in 2023")
    other = _citation(
        other_source,
        "was 23% in 2022",
        source_id="reef",
        source_index=1,
        conflicts=(Conflict("percent", "47.2%", 11, 16, "23%", 10, 13),),
    )
    results = [_sentence(answer, answer, "supported", [best, other])]
    root = parse(render_html(results, answer, [good_source, other_source], legend=False))
    assert not [n for n in root.iter() if "ck-conflict" in n.classes()]
    # still listed on hover
    assert any("'23%'" in n.attrs.get("title", "") for n in root.iter() if n.tag == "a")


def test_huge_inputs_render_in_linear_passes():
    # 3,000 sentences citing one 1 MB source: quadratic rendering would not finish here
    sentence = "The key fact is 42."
    answer = " ".join([sentence] * 3000)
    source = ("Filler text without facts. " * 40_000)[:1_000_000] + " The key fact is 42. end"
    start = source.index("The key fact is 42")
    items = []
    for k in range(3000):
        offset = k * (len(sentence) + 1)
        cite = Citation(
            score=1.0,
            source_id="big",
            source_index=0,
            candidate_index=0,
            char_start=start,
            char_end=start + 18,
            evidence="The key fact is 42",
        )
        items.append(
            SpanCitations(
                AnswerSpan(sentence, offset, offset + len(sentence)), (cite,), "supported"
            )
        )
    page = render_html(items, answer, [source])
    assert len(page) < 5_000_000
    root = parse(page)
    (mark,) = [n for n in root.iter() if n.tag == "mark"]
    assert mark.text() == "The key fact is 42"
    assert len(mark.attrs["data-evidence"].split()) == 3000
    assert "(+2995 more citations)" in mark.attrs["title"]


@settings(max_examples=100)
@given(st.text(max_size=40), st.text(max_size=40))
def test_property_alignment_view_offsets_for_arbitrary_unicode(sentence, evidence):
    _need_kernels()
    from citekit.tokenizers import SimpleTokenizer

    view = alignment_view(sentence, evidence)
    for step in view.steps:
        if step.answer_token is not None:
            assert sentence[step.answer_start : step.answer_end] == step.answer_token
        if step.evidence_token is not None:
            assert evidence[step.evidence_start : step.evidence_end] == step.evidence_token
    # every answer token shown once, in order; evidence tokens in order
    answer_starts = [s.answer_start for s in view.steps if s.answer_token is not None]
    assert answer_starts == SimpleTokenizer().tokenize(sentence).starts.tolist()
    evidence_starts = [s.evidence_start for s in view.steps if s.evidence_token is not None]
    assert evidence_starts == sorted(set(evidence_starts))
    copy = alignment_view(sentence, sentence)
    assert {s.kind for s in copy.steps} <= {"match"}
    assert len(copy.steps) == len(SimpleTokenizer().tokenize(sentence))


def test_alignment_view_follows_the_pipeline_and_the_scores():
    _need_kernels()
    from citekit.config import CitationConfig
    from citekit.pipeline import Pipeline

    class Words:
        """Splits on spaces, case-sensitive: 'Revenue' and 'revenue' differ."""

        def tokenize(self, text):
            spans, start = [], 0
            for word in text.split(" "):
                if word:
                    spans.append((start, start + len(word)))
                start += len(word) + 1
            return [sum(map(ord, text[a:b])) for a, b in spans], spans

    sentence, evidence = "Revenue grew 9 percent last year", "Revenue grew 15 percent last year"
    default = alignment_view(sentence, evidence)
    assert [s.kind for s in default.steps] == ["match", "match", "mismatch"] + ["match"] * 3
    # a mismatch dearer than two gaps: the optimal path takes the gaps instead
    costly = alignment_view(sentence, evidence, mismatch_score=-3)
    assert [s.kind for s in costly.steps] == (
        ["match", "match", "answer_gap", "evidence_gap"] + ["match"] * 3
    )
    pipeline = Pipeline(CitationConfig(mismatch_score=-3), tokenizer=Words())
    view = alignment_view("revenue grew", "Revenue grew", pipeline=pipeline)
    assert [s.kind for s in view.steps] == ["answer_gap", "match"]
    assert [s.kind for s in alignment_view(sentence, evidence, pipeline=pipeline).steps] == [
        s.kind for s in costly.steps
    ]
    with pytest.raises(TypeError, match="pipeline"):
        alignment_view("a", "b", pipeline=object())
