"""CitationConfig / CitationWeights: defaults of the spec, validation, presets, serialization."""

import json

import pytest

from citekit.config import _INT_RANGES, MAX_INT_FIELD, MAX_WEIGHT, CitationConfig, CitationWeights

SPEC_DEFAULTS = {
    "top_k": 3,
    "min_final_score": 0.0,
    "min_alignment_score": 0,
    "min_answer_coverage": 0.2,
    "supported_answer_coverage": 0.6,
    "allow_embedding_only": False,
    "min_embedding_similarity": 0.3,
    "supported_embedding_similarity": 0.6,
    "max_citations_per_source": 2,
    "prefer_source_order": True,
    "window_size_sentences": 1,
    "window_stride_sentences": 1,
    "max_candidates_lexical": 200,
    "max_candidates_embedding": 200,
    "max_candidates_total": 400,
    "match_score": 2,
    "mismatch_score": -1,
    "gap_score": -1,
    "multi_span_evidence": False,
    "multi_span_merge_gap_chars": 16,
    "multi_span_max_spans": 5,
}


def test_every_spec_default():
    config = CitationConfig()
    for name, value in SPEC_DEFAULTS.items():
        assert getattr(config, name) == value, name
    assert config.band_width is None
    assert config.weights == CitationWeights(1.0, 1.0, 0.0, 0.5, 0.5)


def test_spec_example_constructs():
    config = CitationConfig(
        top_k=1,
        min_final_score=0.3,
        min_answer_coverage=0.4,
        supported_answer_coverage=0.7,
        window_size_sentences=1,
        max_candidates_lexical=150,
        max_candidates_total=200,
        weights=CitationWeights(
            alignment=1.0, answer_coverage=1.0, evidence_coverage=0.0, lexical=0.3, embedding=0.0
        ),
    )
    assert config.weights.lexical == 0.3
    assert config.max_candidates_total == 200


def test_frozen():
    config = CitationConfig()
    with pytest.raises(AttributeError):
        config.top_k = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        config.weights.lexical = 1.0  # type: ignore[misc]


@pytest.mark.parametrize(
    "name, value",
    [
        ("top_k", -1),
        ("min_answer_coverage", 1.5),
        ("min_answer_coverage", -0.1),
        ("supported_answer_coverage", 2.0),
        ("max_citations_per_source", 0),
        ("window_size_sentences", 0),
        ("window_stride_sentences", 0),
        ("max_candidates_lexical", -5),
        ("match_score", 0),
        ("mismatch_score", 1),
        ("mismatch_score", 0),
        ("gap_score", 2),
        ("gap_score", 0),
        ("match_score", 1001),
        ("band_width", 0),
        ("multi_span_max_spans", 0),
        ("multi_span_merge_gap_chars", -1),
        ("min_embedding_similarity", 1.5),
        ("min_final_score", float("nan")),
        ("min_final_score", float("inf")),
        # beyond what the kernels' 64-bit arithmetic takes (once an OverflowError in align)
        ("top_k", 2**31),
        ("top_k", 2**63),
        ("max_candidates_lexical", 2**64),
        ("window_size_sentences", 2**31),
        ("band_width", 2**63),
        ("multi_span_max_spans", 2**40),
        ("min_alignment_score", 2**31),
    ],
)
def test_bad_values_name_the_field(name, value):
    with pytest.raises(ValueError, match=name):
        CitationConfig(**{name: value})


@pytest.mark.parametrize(
    "name, value",
    [
        ("top_k", 1.5),
        ("top_k", "3"),
        ("top_k", True),
        ("min_answer_coverage", "0.2"),
        ("allow_embedding_only", 1),
        ("prefer_source_order", None),
        ("band_width", 2.0),
        ("weights", 3),
    ],
)
def test_bad_types_name_the_field(name, value):
    with pytest.raises(TypeError, match=name):
        CitationConfig(**{name: value})


def test_weights_validation():
    with pytest.raises(ValueError, match="CitationWeights.lexical"):
        CitationWeights(lexical=-0.5)
    with pytest.raises(TypeError, match="CitationWeights.embedding"):
        CitationWeights(embedding="high")  # type: ignore[arg-type]
    assert CitationWeights(alignment=2).alignment == 2.0
    assert isinstance(CitationWeights(alignment=2).alignment, float)
    # a weight so large that a score would overflow to inf (and not survive JSON)
    with pytest.raises(ValueError, match="CitationWeights.alignment must be <= "):
        CitationWeights(alignment=1e308)
    assert CitationWeights(alignment=MAX_WEIGHT).alignment == MAX_WEIGHT


def test_the_largest_values_of_every_field_align():
    from citekit import align_citations
    from citekit.results import SpanCitations

    # every integer field at its maximum (the scores: 1000, -1, -1), but a zero
    # min_alignment_score so that there is something to cite
    largest = {name: high for name, (_, high) in _INT_RANGES.items()}
    largest.update(band_width=MAX_INT_FIELD, min_alignment_score=0, multi_span_evidence=True)
    weights = CitationWeights(**{name: MAX_WEIGHT for name in CitationWeights().to_dict()})
    answer = "Revenue grew 15% to $1,200. Costs fell."
    sources = ["Revenue grew 15% to $1,200 in 2024. Costs fell by 3%.", "Costs fell. Revenue grew."]
    result = align_citations(answer, sources, config=CitationConfig(**largest, weights=weights))
    assert [span.status for span in result] == ["supported", "supported"]
    for span in result:
        assert SpanCitations.from_json(span.to_json()) == span
    # no sentence has more citations than candidates: the largest top_k is any large one
    assert align_citations(answer, sources, config=CitationConfig(top_k=MAX_INT_FIELD)) == (
        align_citations(answer, sources, config=CitationConfig(top_k=50))
    )


def test_weights_from_mapping_in_config():
    config = CitationConfig(weights={"lexical": 0.1})  # type: ignore[arg-type]
    assert config.weights == CitationWeights(lexical=0.1)


def test_presets_are_valid_and_distinct():
    presets = [CitationConfig.strict(), CitationConfig.balanced(), CitationConfig.permissive()]
    presets.append(CitationConfig.fast())
    assert CitationConfig.balanced() == CitationConfig()
    assert len({json.dumps(p.to_dict(), sort_keys=True) for p in presets}) == 4
    strict, balanced, permissive = presets[:3]
    assert strict.supported_answer_coverage > balanced.supported_answer_coverage
    assert permissive.supported_answer_coverage < balanced.supported_answer_coverage
    assert strict.min_answer_coverage > permissive.min_answer_coverage


def test_dict_json_round_trip():
    config = CitationConfig(
        top_k=4, band_width=32, multi_span_evidence=True, weights=CitationWeights(embedding=0.0)
    )
    assert CitationConfig.from_dict(config.to_dict()) == config
    assert CitationConfig.from_json(config.to_json()) == config
    assert json.loads(config.to_json())["weights"]["embedding"] == 0.0


def test_from_dict_rejects_unknown_and_non_mapping():
    with pytest.raises(ValueError, match="unknown keys"):
        CitationConfig.from_dict({"weights": {"lexcal": 1.0}})
    with pytest.raises(TypeError, match="mapping"):
        CitationConfig.from_dict([("top_k", 1)])  # type: ignore[arg-type]


def test_replace_revalidates():
    assert CitationConfig().replace(top_k=7).top_k == 7
    with pytest.raises(ValueError, match="top_k"):
        CitationConfig().replace(top_k=-2)


def test_from_file_json_and_toml(tmp_path):
    json_path = tmp_path / "c.json"
    json_path.write_text(json.dumps({"top_k": 2, "weights": {"lexical": 0.2}}))
    assert CitationConfig.from_file(json_path) == CitationConfig(
        top_k=2, weights=CitationWeights(lexical=0.2)
    )
    toml_path = tmp_path / "c.toml"
    toml_path.write_text("[citation]\ntop_k = 1\n[citation.weights]\nembedding = 0.0\n")
    loaded = CitationConfig.from_file(str(toml_path))
    assert loaded.top_k == 1 and loaded.weights.embedding == 0.0
    bad = tmp_path / "c.yaml"
    bad.write_text("top_k: 1")
    with pytest.raises(ValueError, match="path"):
        CitationConfig.from_file(bad)
    with pytest.raises(TypeError, match="path"):
        CitationConfig.from_file(3)  # type: ignore[arg-type]
