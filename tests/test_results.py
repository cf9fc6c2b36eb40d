"""Result records: validation naming the field, to_dict / JSON round trips."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from citekit.pipeline import align_citations
from citekit.results import (
    AlignmentResult,
    AnswerSpan,
    Citation,
    Conflict,
    EvidenceSpan,
    SourceChunk,
    SourceDocument,
    SpanCitations,
    SourceView,
    results_from_json,
    results_to_json,
    source_views,
)


def make_citation(**changes):
    values = dict(
        score=2.5,
        source_id="s",
        source_index=0,
        candidate_index=4,
        char_start=3,
        char_end=10,
        evidence="grew 9%",
        evidence_spans=(EvidenceSpan(3, 7, "grew"), EvidenceSpan(8, 10, "9%")),
        components={"answer_coverage": 1.0},
        answer_char_start=0,
        answer_char_end=7,
        conflicts=(Conflict("percent", "9%", 5, 7, "15%", 8, 11),),
    )
    values.update(changes)
    return Citation(**values)


def test_nested_round_trip_through_json():
    span = SpanCitations(
        AnswerSpan("grew 9%", 0, 7, sentence_index=0),
        (make_citation(),),
        "partial",
        unsupported_spans=((5, 7),),
    )
    again = results_from_json(results_to_json([span]))
    assert again == [span]
    assert SpanCitations.from_json(span.to_json()) == span
    data = json.loads(span.to_json())
    assert data["citations"][0]["conflicts"][0]["evidence_text"] == "15%"
    assert data["unsupported_spans"] == [[5, 7]]


def test_pipeline_results_round_trip():
    answer = "Revenue grew 9% in 2024. Penguins fly."
    result = align_citations(answer, ["Revenue grew 15% in 2024."])
    assert isinstance(result, AlignmentResult)
    assert results_from_json(results_to_json(result)) == list(result)
    assert "AlignmentResult(2 spans" in repr(result)


def test_citation_defaults_and_exact_evidence():
    c = Citation(
        score=1,
        source_id="s",
        source_index=0,
        candidate_index=0,
        char_start=0,
        char_end=2,
        evidence="ab",
    )
    assert c.evidence_spans == (EvidenceSpan(0, 2, "ab"),)
    assert isinstance(c.score, float)
    # cite-right's meaning of exact_evidence: the matched regions joined with " ... "
    assert make_citation().exact_evidence == "grew ... 9%"
    assert c.exact_evidence == c.evidence == c.evidence_display == "ab"


def test_evidence_texts_are_exact_source_slices():
    source = "We grew 9% in 2024."
    citation = make_citation(
        char_start=3, char_end=10, evidence=source[3:10],
        # given out of order: the properties list the spans in source order
        evidence_spans=(EvidenceSpan(8, 10, source[8:10]), EvidenceSpan(3, 7, source[3:7])),
    )
    assert citation.evidence_texts == ("grew", "9%")
    spans = sorted(citation.evidence_spans, key=lambda span: span.char_start)
    assert [source[s.char_start : s.char_end] for s in spans] == list(citation.evidence_texts)
    assert all(text in source for text in citation.evidence_texts)
    # the display form is not a slice of the source; the exact pieces are
    assert citation.evidence_display == "grew ... 9%" and citation.evidence_display not in source
    # properties, not fields: the records' data (and their JSON) are unchanged
    assert "evidence_texts" not in citation.to_dict()
    assert "evidence_display" not in citation.to_dict()


def test_reprs_are_short():
    long_sentence = "Revenue grew by fifteen percent in the year under review, " * 4
    span = AnswerSpan(long_sentence, 0, len(long_sentence))
    citation = make_citation(components={f"component_{i}": 0.5 for i in range(12)})
    item = SpanCitations(span, (citation,) * 3, "partial", unsupported_spans=((5, 7),))
    text = repr(item)
    assert len(text) < 160 and "\n" not in text, text
    assert text.startswith(f"SpanCitations(partial, answer[0:{len(long_sentence)}] 'Revenue grew")
    assert "\u2026" in text and "3 citations; best 's'[3:10] score 2.50" in text
    assert "component_" not in text
    empty = SpanCitations(AnswerSpan("Hi.", 0, 3), (), "unsupported")
    assert repr(empty) == "SpanCitations(unsupported, answer[0:3] 'Hi.', no citations)"
    result = AlignmentResult([item, empty] * 3, answer=long_sentence)
    lines = repr(result).splitlines()
    assert lines[0] == "AlignmentResult(6 spans: 0 supported, 3 partial, 3 unsupported)"
    assert lines[1].startswith("  [0] partial     'Revenue grew") and "(3 citations)" in lines[1]
    assert lines[2] == "  [1] unsupported 'Hi.'"
    assert lines[-1] == "  ... 3 more" and len(lines) == 5
    assert all(len(line) < 100 for line in lines)


def test_documents_and_chunks():
    doc = SourceDocument("d", "text", metadata={"k": 1})
    assert SourceDocument.from_dict(doc.to_dict()) == doc
    chunk = SourceChunk("d", "xt", 2, 4, document_text="text")
    assert SourceChunk.from_json(chunk.to_json()) == chunk
    with pytest.raises(ValueError, match="document_text"):
        SourceChunk("d", "xx", 2, 4, document_text="text")
    with pytest.raises(ValueError, match="len\\(text\\)"):
        SourceChunk("d", "xt", 2, 5)
    with pytest.raises(ValueError, match="source_index"):
        SourceChunk("d", "xt", 2, 4, source_index=-1)


def test_record_metadata_is_a_copied_dict_of_any_mapping():
    from types import MappingProxyType

    given = {"k": [1]}
    doc = SourceDocument("d", "text", metadata=given)
    assert doc.metadata == given and doc.metadata is not given
    proxy = SourceDocument("d", "text", metadata=MappingProxyType(given))
    assert type(proxy.metadata) is dict and proxy.metadata == given
    assert SourceChunk("d", "t", 0, 1, metadata=None).metadata == {}
    for bad in ([("k", 1)], "k=1", 3):
        with pytest.raises(TypeError, match="SourceDocument.metadata must be a mapping"):
            SourceDocument("d", "text", metadata=bad)
        with pytest.raises(TypeError, match="SourceChunk.metadata must be a mapping"):
            SourceChunk("d", "t", 0, 1, metadata=bad)


@pytest.mark.parametrize(
    "changes, error, field",
    [
        ({"score": float("nan")}, ValueError, "score"),
        ({"score": "high"}, TypeError, "score"),
        ({"source_id": 3}, TypeError, "source_id"),
        ({"char_start": 5, "char_end": 4}, ValueError, "char_start"),
        ({"char_start": -1}, ValueError, "char_start"),
        ({"evidence_spans": "abc"}, TypeError, "evidence_spans"),
        ({"evidence_spans": (1,)}, TypeError, "evidence_spans"),
        ({"components": [1]}, TypeError, "components"),
        ({"answer_char_start": 9, "answer_char_end": 2}, ValueError, "answer_char_start"),
        ({"conflicts": ("x",)}, TypeError, "conflicts"),
        # the evidence is the characters its offsets give: 7 of them here
        ({"evidence": "grew"}, ValueError, r"evidence must hold char_end - char_start = 7"),
        ({"char_end": 12}, ValueError, "evidence must hold"),
        ({"source_index": True}, TypeError, "Citation.source_index must be int, got bool"),
        ({"score": None}, TypeError, "Citation.score must be int or float, got NoneType"),
    ],
)
def test_citation_validation_names_the_field(changes, error, field):
    with pytest.raises(error, match=field):
        make_citation(**changes)


def test_text_and_offsets_of_every_record_agree():
    with pytest.raises(ValueError, match="EvidenceSpan: evidence must hold"):
        EvidenceSpan(0, 7, "x")
    with pytest.raises(ValueError, match="AnswerSpan: text must hold"):
        AnswerSpan(text="Hi.", char_start=0, char_end=2)
    with pytest.raises(ValueError, match="Conflict: answer_text must hold"):
        Conflict("percent", "9%", 5, 8, "15%", 8, 11)
    with pytest.raises(ValueError, match="Conflict: evidence_text must hold"):
        Conflict("percent", "9%", 5, 7, "15%", 8, 10)
    assert EvidenceSpan(2, 2, "").evidence == ""


def test_numpy_numbers_become_python_numbers():
    np = pytest.importorskip("numpy")
    citation = make_citation(
        score=np.float32(2.5), source_index=np.int64(0), char_start=np.int32(3),
        char_end=np.uint16(10),
    )
    assert citation == make_citation()
    assert type(citation.char_end) is int and type(citation.score) is float
    chunk = SourceChunk("d", "text", np.int64(4), np.int64(8), source_index=np.int8(1))
    assert (chunk.doc_char_start, chunk.source_index) == (4, 1)
    assert type(chunk.doc_char_start) is int and json.loads(chunk.to_json())["doc_char_end"] == 8
    with pytest.raises(TypeError, match="SourceChunk.doc_char_start must be int, got bool"):
        SourceChunk("d", "t", False, 1)


def test_span_citations_status_rules():
    span = AnswerSpan("a", 0, 1)
    with pytest.raises(ValueError, match="status"):
        SpanCitations(span, (), "maybe")
    with pytest.raises(ValueError, match="requires no citations"):
        SpanCitations(span, (make_citation(),), "unsupported")
    with pytest.raises(ValueError, match="requires citations"):
        SpanCitations(span, (), "supported")
    with pytest.raises(ValueError, match="unsupported_spans"):
        SpanCitations(span, (), "unsupported", unsupported_spans=((3, 1),))
    with pytest.raises(ValueError, match="kind"):
        AnswerSpan("a", 0, 1, kind="word")
    with pytest.raises(ValueError, match="unknown keys"):
        AnswerSpan.from_dict({"text": "a", "char_start": 0, "char_end": 1, "extra": 1})
    with pytest.raises(TypeError, match="mapping"):
        AnswerSpan.from_dict(["a"])


def test_results_from_json_rejects_non_array():
    with pytest.raises(ValueError, match="array"):
        results_from_json("{}")


def test_unchecked_records_equal_the_checked_ones():
    from citekit.results import _unchecked

    citation = make_citation()
    values = {name: getattr(citation, name) for name in citation.__dataclass_fields__}
    built = _unchecked(Citation, **values)
    assert built == citation and type(built) is Citation
    assert list(vars(built)) == list(Citation.__dataclass_fields__)  # field order
    # omitted fields take their defaults, a default factory a fresh value each time
    span = _unchecked(EvidenceSpan, char_start=1, char_end=3, evidence="ab")
    assert span == EvidenceSpan(char_start=1, char_end=3, evidence="ab")
    first = _unchecked(SourceDocument, id="d", text="t")
    second = _unchecked(SourceDocument, id="d", text="t")
    assert first.metadata == {} and first.metadata is not second.metadata
    assert list(vars(first)) == ["id", "text", "metadata"]


def test_unchecked_records_refuse_missing_and_unknown_fields():
    from citekit.results import _unchecked

    with pytest.raises(TypeError, match="missing field 'text'"):
        _unchecked(SourceDocument, id="d")
    with pytest.raises(TypeError, match="unknown field 'colour'"):
        _unchecked(SourceDocument, id="d", text="t", colour="red")


# ----------------------------------------------------------------------------- views of sources


def test_source_views_give_the_text_and_offset_base_of_every_kind_of_source():
    document = "Intro. Revenue grew 15%."
    views = source_views(
        [
            "plain",
            SourceDocument(id="doc", text="Doc text.", metadata={"title": "Report"}),
            SourceChunk(source_id="c1", text="Revenue grew 15%.", doc_char_start=7,
                        doc_char_end=24),
            SourceChunk(source_id="c2", text="Revenue grew 15%.", doc_char_start=7,
                        doc_char_end=24, document_text=document, metadata={"title": "Q4"}),
            {"id": "m", "text": "From a dict.", "title": "Dict"},
            {"text": "No id."},
        ]
    )
    assert views == [
        SourceView("0", "", "plain", 0),
        SourceView("doc", "Report", "Doc text.", 0),
        # a chunk alone: its own text, placed at its offset in the parent
        SourceView("c1", "", "Revenue grew 15%.", 7),
        # a chunk that carries its parent: the whole parent, from 0
        SourceView("c2", "Q4", document, 0),
        SourceView("m", "Dict", "From a dict.", 0),
        SourceView("5", "", "No id.", 0),
    ]


def test_source_views_accept_a_prepared_corpus_and_name_bad_sources():
    class Prepared:
        sources = ("text",)

    assert source_views(Prepared()) == [SourceView("0", "", "text", 0)]
    with pytest.raises(TypeError, match="sequence of sources"):
        source_views("a string")
    with pytest.raises(TypeError, match=r"sources\[1\] must be a str"):
        source_views(["ok", 3])


# ----------------------------------------------------------------------------- no import circle


def test_results_imports_without_the_renderer():
    code = "import sys, citekit.results; print('citekit.display' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert out.stdout.strip() == "False"


def test_the_one_import_of_the_renderer_is_inside_alignment_result_repr_html():
    """results.py imports citekit.display once, lazily, in AlignmentResult._repr_html_."""
    import citekit.results

    tree = ast.parse(Path(citekit.results.__file__).read_text(encoding="utf-8"))
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    places = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        if any(name == "citekit.display" or name.startswith("citekit.display.") for name in names):
            path, up = [], parents.get(node)
            while up is not None:
                if isinstance(up, (ast.FunctionDef, ast.ClassDef)):
                    path.append(up.name)
                up = parents.get(up)
            places.append(".".join(reversed(path)))
    assert places == ["AlignmentResult._repr_html_"]


def test_unchecked_builders_build_the_checked_records():
    from citekit.results import _unchecked_builder

    citation = make_citation()
    new_citation = _unchecked_builder(Citation)
    assert _unchecked_builder(Citation) is new_citation  # made once per class
    values = {name: getattr(citation, name) for name in citation.__dataclass_fields__}
    built = new_citation(**values)
    assert built == citation and type(built) is Citation
    # the fields in field order, whatever the order of the keywords
    reordered = new_citation(**dict(reversed(list(values.items()))))
    assert list(vars(reordered)) == list(vars(built)) == list(Citation.__dataclass_fields__)
    # omitted fields take their defaults, a default factory a fresh value each time
    new_document = _unchecked_builder(SourceDocument)
    first, second = new_document(id="d", text="t"), new_document(id="d", text="t")
    assert first == SourceDocument(id="d", text="t") and first.metadata is not second.metadata
    with pytest.raises(TypeError, match="'text'"):
        new_document(id="d")
    with pytest.raises(TypeError, match="'colour'"):
        new_document(id="d", text="t", colour="red")
    with pytest.raises(TypeError):
        new_document("d", "t")  # (keywords only)


def test_source_views_of_many_sources_are_read_when_used():
    from citekit.results import EAGER_VIEWS, SourceView, SourceViews, source_views

    class Counting(list):
        read: list = []

        def __getitem__(self, index):
            Counting.read.append(index)
            return list.__getitem__(self, index)

    few = source_views(["a", "b"])
    assert isinstance(few, list) and few[1] == SourceView("1", "", "b", 0)
    many = Counting(f"text {i}" for i in range(EAGER_VIEWS + 1))
    views = source_views(many)
    assert isinstance(views, SourceViews) and len(views) == EAGER_VIEWS + 1
    assert Counting.read == []
    assert views[-1].text == f"text {EAGER_VIEWS}" and views[3].label == "3"
    assert views[3] is views[3] and sorted(Counting.read) == [3, EAGER_VIEWS]
    views[3] = SourceView("x", "", "text 3", 0)
    assert views[3].label == "x" and [v.label for v in views[:2]] == ["0", "1"]
    with pytest.raises(IndexError):
        views[EAGER_VIEWS + 1]
    with pytest.raises(TypeError, match="indexed by int"):
        views["0"]
    bad = [*["ok"] * EAGER_VIEWS, 7]
    lazy = source_views(bad)  # (a bad item beyond the first EAGER_VIEWS: named when read)
    with pytest.raises(TypeError, match=rf"sources\[{EAGER_VIEWS}\] must be a str"):
        lazy[EAGER_VIEWS]
    with pytest.raises(TypeError, match=r"sources\[1\] must be a str"):
        source_views(["ok", 7])
