"""Sources from retrieved items (framework-neutral): placement, ids, checks, the corpus cache."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit import Pipeline, SourceChunk, SourceDocument
from citekit.integrations._corpora import CorpusCache, check_pipeline, cited_positions
from citekit.integrations._sources import Retrieved, parent_offset, place_sources

PARENT = "Intro. Revenue grew 15% in 2024. Costs fell 3%. The board met."


def item(text, *, own_id=None, parent_id=None, start=None, end=None, metadata=None, where="i"):
    return Retrieved(own_id, parent_id, text, start, end, metadata or {}, where, "start", "end")


def test_a_located_item_becomes_a_chunk_of_its_parent():
    start = PARENT.index("Revenue")
    text = "Revenue grew 15% in 2024."
    [checked] = place_sources([item(text, parent_id="r", start=start)], {"r": PARENT},
                              parent_hint="")
    [unchecked] = place_sources([item(text, parent_id="r", start=start)], {}, parent_hint="")
    for source in (checked, unchecked):
        assert isinstance(source, SourceChunk) and source.source_id == "r"
        assert PARENT[source.doc_char_start:source.doc_char_end] == text
    assert checked.document_text == PARENT and unchecked.document_text is None


def test_a_parent_that_does_not_hold_the_text_at_the_offset_is_refused():
    with pytest.raises(ValueError, match=r"items\[2\].*parent 'r' at start = 8"):
        place_sources([item("Revenue grew", parent_id="r", start=8, where="items[2]")],
                      {"r": PARENT}, parent_hint="")
    # an offset past the end of the parent
    with pytest.raises(ValueError, match="parent 'r'"):
        place_sources([item("The board met.", parent_id="r", start=len(PARENT) - 5)],
                      {"r": PARENT}, parent_hint="")


def test_an_end_that_does_not_fit_the_text_is_refused():
    with pytest.raises(ValueError, match="end = 12 but i holds 7 characters from start = 0"):
        place_sources([item("Intro. ", parent_id="r", start=0, end=12)], {}, parent_hint="")
    # an end that fits is accepted
    [source] = place_sources([item("Intro.", parent_id="r", start=0, end=6)], {},
                             parent_hint="")
    assert source.doc_char_end == 6


def test_overlapping_chunks_of_one_parent_must_agree_when_its_text_is_unknown():
    agree = [item("Revenue grew 15%", parent_id="r", start=7),
             item("grew 15% in 2024.", parent_id="r", start=15)]
    assert len(place_sources(agree, {}, parent_hint="")) == 2
    disagree = [item("Page one text", parent_id="r", start=0, where="a"),
                item("Page two", parent_id="r", start=5, where="b")]
    with pytest.raises(ValueError, match="a and b both say .* 'r' .* characters 5-13.*HINT"):
        place_sources(disagree, {}, parent_hint="HINT")
    # touching but not overlapping: nothing to compare
    touching = [item("abc", parent_id="r", start=0), item("xyz", parent_id="r", start=3)]
    assert len(place_sources(touching, {}, parent_hint="")) == 2


def test_unlocated_items_are_documents_named_by_own_id_then_parent_then_position():
    sources = place_sources(
        [item("a", own_id="x"), item("b", parent_id="p"), item("c"), item("d", start=4)],
        {}, parent_hint="",
    )
    assert all(isinstance(s, SourceDocument) for s in sources)
    # (an item with a start but no parent cannot be placed: a document of its own)
    assert [s.id for s in sources] == ["x", "p", "2", "3"]


def test_the_same_text_under_one_id_is_one_document_and_other_texts_get_a_suffix():
    sources = place_sources(
        [item("same", own_id="x"), item("other", own_id="x"), item("same", own_id="x"),
         item("third", own_id="x")],
        {}, parent_hint="",
    )
    assert [getattr(s, "source_id", getattr(s, "id", None)) for s in sources] == [
        "x", "x#2", "x", "x#3"
    ]
    assert isinstance(sources[0], SourceChunk) and isinstance(sources[2], SourceChunk)
    assert (sources[0].doc_char_start, sources[0].doc_char_end) == (0, 4)
    assert isinstance(sources[1], SourceDocument)


def test_an_own_id_equal_to_a_chunk_parent_gets_a_suffix():
    sources = place_sources(
        [item("stray text", own_id="r"), item("Intro.", parent_id="r", start=0)],
        {}, parent_hint="",
    )
    assert sources[0].id == "r#2" and sources[1].source_id == "r"


def test_a_parent_retrieved_whole_is_a_chunk_covering_it():
    sources = place_sources(
        [item(PARENT, own_id="u1", parent_id="r"), item("Intro.", parent_id="r", start=0)],
        {"r": PARENT}, parent_hint="",
    )
    assert [type(s).__name__ for s in sources] == ["SourceChunk", "SourceChunk"]
    assert sources[0].source_id == "r" and sources[0].doc_char_end == len(PARENT)


def test_parent_offset_reads_ints_and_refuses_the_rest():
    assert parent_offset(5, "f") == 5 and parent_offset(-1, "f") is None
    with pytest.raises(TypeError, match="meta must be an int or None, got str"):
        parent_offset("5", "meta")
    with pytest.raises(TypeError, match="got bool"):
        parent_offset(True, "meta")
    with pytest.raises(ValueError, match=r"meta must be >= 0 \(or -1: not found\), got -2"):
        parent_offset(-2, "meta")


@settings(max_examples=100)
@given(
    parent=st.text(min_size=1, max_size=60),
    cuts=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 30)), min_size=1, max_size=6),
    known=st.booleans(),
)
def test_chunks_cut_anywhere_from_any_text_slice_their_parent(parent, cuts, known):
    items = []
    for start, length in cuts:
        start = min(start, len(parent))
        items.append(item(parent[start:start + length], parent_id="p", start=start))
    sources = place_sources(items, {"p": parent} if known else {}, parent_hint="")
    for source, original in zip(sources, items):
        assert isinstance(source, SourceChunk) and source.text == original.text
        assert parent[source.doc_char_start:source.doc_char_end] == source.text


def test_the_cache_reuses_a_corpus_for_the_same_sources_only():
    cache = CorpusCache(Pipeline(), 2)
    first = [SourceDocument("a", "Water boils at 100 degrees.")]
    second = [SourceDocument("b", "Ice melts at 0 degrees.")]
    third = [SourceDocument("c", "The sky is blue.")]
    assert cache.align("Water boils at 100 degrees.", first)[0].status == "supported"
    cache.align("Water boils.", [SourceDocument("a", "Water boils at 100 degrees.")])
    assert cache.hits == 1
    # other metadata: prepared again (the result's sources carry the metadata)
    tagged = [SourceDocument("a", "Water boils at 100 degrees.", {"title": "Physics"})]
    result = cache.align("Water boils.", tagged)
    assert cache.hits == 1 and result.sources[0].metadata == {"title": "Physics"}
    cache.align("x", second)
    cache.align("x", third)  # the least recently used (the first) is dropped
    cache.align("x", tagged)
    assert cache.hits == 1
    cache.align("x", third)
    assert cache.hits == 2


def test_a_cache_of_size_zero_keeps_nothing_and_sizes_are_checked():
    cache = CorpusCache(Pipeline(), 0)
    sources = [SourceDocument("a", "The sky is blue.")]
    cache.align("The sky is blue.", sources)
    cache.align("The sky is blue.", sources)
    assert cache.hits == 0
    with pytest.raises(ValueError, match="cache_size must be >= 0"):
        CorpusCache(Pipeline(), -1)
    with pytest.raises(TypeError, match="cache_size must be an int"):
        CorpusCache(Pipeline(), 2.0)
    with pytest.raises(TypeError, match="pipeline must be a citekit Pipeline, got dict"):
        check_pipeline({})


def test_cited_positions_are_the_sources_cited_ascending():
    pipe = Pipeline()
    sources = ["The sky is blue.", "Grass is green.", "Water boils at 100 degrees."]
    result = pipe.align("Water boils at 100 degrees. The sky is blue.", sources)
    assert cited_positions(result) == [0, 2]
    assert cited_positions(pipe.align("Nothing here matches.", [])) == []


def test_a_chunk_retrieved_twice_is_cited_once_in_its_parent():
    start = PARENT.index("Costs")
    twice = [item("Costs fell 3%.", parent_id="r", start=start)] * 2
    sources = place_sources(twice, {}, parent_hint="")
    assert sources[0] == sources[1] and sources[0].source_id == "r"
    [span] = Pipeline().align("Costs fell 3%.", sources)
    assert [(c.source_index, c.char_start) for c in span.citations] == [(0, start)]
