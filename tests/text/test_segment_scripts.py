"""Sentence terminators of every script: Unicode's Sentence_Terminal property, per script."""

from __future__ import annotations

import pytest
from naive import naive_segment

from citekit.kernels import _segment as kernel
from citekit.segment import segment_sentences


def sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in segment_sentences(text)]


def test_the_terminators_are_unicodes_sentence_terminal_characters():
    regex = pytest.importorskip("regex")
    sentence_terminal = {
        chr(code)
        for code in range(0x110000)
        if regex.match(r"\p{Sentence_Terminal}", chr(code)) is not None
    }
    if len(sentence_terminal) < 170:  # (Unicode 16 has 170)
        pytest.skip("the regex module knows an older Unicode than the table's")
    # the table follows Unicode 16.0; a regex module of a newer Unicode adds these (17.0:
    # U+2E60, U+2E61), which the table does not hold yet
    sentence_terminal -= {"\u2e60", "\u2e61"}
    spaced, unspaced = set(kernel._SPACED_TERMINATORS), set(kernel._UNSPACED_TERMINATORS)
    assert not spaced & unspaced
    # the ellipsis, which is not one, ends sentences as it always has
    assert spaced | unspaced == sentence_terminal | {"…"}, (
        "terminators to add or remove: "
        f"{sorted(map(hex, map(ord, sentence_terminal - spaced - unspaced)))} "
        f"{sorted(map(hex, map(ord, (spaced | unspaced) - sentence_terminal - {'…'})))}"
    )


# script: (two sentences, each ending with the script's full stop or question mark)
SCRIPTS = {
    "armenian": ("Եկամուտն աճել է 15%-ով։", "Ծախսերը նվազել են։"),
    "ethiopic": ("ገቢ በ15 በመቶ አድጓል።", "ወጪ ቀንሷል፧"),
    "ethiopic paragraph": ("ገቢ አድጓል፨", "ወጪ ቀንሷል።"),
    "khmer": ("ប្រាក់ចំណូលកើនឡើង១៥ភាគរយ។", "ចំណាយបានធ្លាក់ចុះ៕"),
    "myanmar": ("ဝင်ငွေ ၁၅ ရာခိုင်နှုန်း တိုးလာသည်။", "ကုန်ကျစရိတ် ကျဆင်းသည်။"),
    "mongolian": ("ᠣᠷᠣᠯᠭ\u180eᠠ ᠨᠡᠮᠡᠭᠳᠡᠪᠡ᠃", "ᠵᠠᠷᠳᠠᠯ ᠪᠠᠭᠤᠰᠪᠠ᠉"),
    "devanagari": ("राजस्व 15% बढ़ा।", "लागत घटी॥"),
    "arabic": ("هل نمت الإيرادات؟", "نعم، بنسبة 15٪۔"),
    "syriac": ("ܐܝܬ ܗܘܐ ܡܠܟܐ܂", "ܘܐܬܐ܁"),
    "nko": ("ߊ߬ ߓߘߊ߫ ߕߊ߯߹", "ߊ߬ ߞߊ߬ ߣߊ߬߹"),
    "tai tham": ("ᨠᩤ᩠ᨿᨷ᩠ᨿ᪨", "ᨠᩤ᩠ᨿᨷ᩠ᨿ᪩"),
    "balinese": ("ᬅᬓ᭄ᬱᬭ᭟", "ᬩᬮᬶ᭞"),
    "ol chiki": ("ᱥᱟᱱᱛᱟᱲᱤ᱾", "ᱚᱞ ᱪᱤᱠᱤ᱿"),
    "javanese": ("ꦲꦏ꧉", "ꦗꦮ꧈"),
    "cjk": ("利润增长了百分之十。", "今天天气很好！"),
    "cjk half-width": ("ｺﾝﾆﾁﾊ｡", "ｻﾖﾅﾗ｡"),
    "vai": ("ꕙꔤ꘎", "ꕙꔤ꘏"),
    "lisu": ("ꓡꓲ ꓢꓴ꓿", "ꓡꓲ ꓢꓴ꓿"),
    "brahmi (above the BMP)": ("𑀅𑀲𑁄𑀓𑁇", "𑀥𑀫𑁆𑀫𑁈"),
    "medefaidrin (above the BMP)": ("𖹀𖹁𖺘", "𖹂𖹃𖺘"),
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
@pytest.mark.parametrize("separator", [" ", ""])
def test_each_scripts_terminators_end_a_sentence(script, separator):
    first, second = SCRIPTS[script]
    text = first + separator + second
    assert sentences(text) == [first, second]
    assert naive_segment(text) == segment_sentences(text)


def test_georgian_sentences_split_after_a_period():
    # Georgian letters are lower case (Unicode 11 gave them capitals nobody starts a
    # sentence with): the "next word in lower case" rule does not hold them together
    first, second = "შემოსავალი გაიზარდა 15%-ით.", "ხარჯები შემცირდა!"
    text = f"{first} {second} რატომ? არ ვიცი."
    assert sentences(text) == [first, second, "რატომ?", "არ ვიცი."]
    assert naive_segment(text) == segment_sentences(text)
    # a decimal point is no boundary still
    assert sentences("ფასი 5.2 ლარია. ხვალ") == ["ფასი 5.2 ლარია.", "ხვალ"]


def test_latin_terminators_still_need_a_following_space():
    # the doubled, reversed, small and full-width forms behave as . ? ! do
    for terminator in "‼⁉⁈⁇‽⸮﹒．\u2024":
        text = f"Wow{terminator} Next one{terminator}"
        assert sentences(text) == [f"Wow{terminator}", f"Next one{terminator}"]
        assert sentences(f"a{terminator}b c") == [f"a{terminator}b c"]
        assert sentences(f"Wow{terminator} next") == [f"Wow{terminator} next"]
    assert sentences("価格は３．５％上昇。次") == ["価格は３．５％上昇。", "次"]


def test_closers_and_markers_after_other_scripts_terminators_belong_to_the_sentence():
    text = "«ገቢ አድጓል።»[1] ወጪ ቀንሷል። ប្រាក់ចំណូលកើនឡើង។) ok"
    assert sentences(text) == ["«ገቢ አድጓል።»[1]", "ወጪ ቀንሷል።", "ប្រាក់ចំណូលកើនឡើង។)", "ok"]


def test_english_segmentation_is_unchanged():
    text = (
        "Dr. Smith arrived at 5 p.m. on Jan. 3. Revenue grew 5.2% (approx. five) in the "
        'U.S. "Really?" she asked. Wait… what? Yes! Acme Inc. Then more. J. K. Rowling '
        "wrote it.[1] The end."
    )
    assert sentences(text) == [
        "Dr. Smith arrived at 5 p.m. on Jan. 3.",
        'Revenue grew 5.2% (approx. five) in the U.S. "Really?" she asked.',
        "Wait… what?",
        "Yes!",
        "Acme Inc.",
        "Then more.",
        "J. K. Rowling wrote it.[1]",
        "The end.",
    ]


def test_the_reference_reads_terminators_above_the_bmp_next_to_private_use_characters():
    # (tests/naive.py reads them as a private-use character the text does not hold)
    for text in ("𑀅𑁇\ue000. x", "\ue000𑁇\ue001 𑀥\ue000𑁈 ok. \ue002", "a😀. B 𑁇"):
        assert naive_segment(text) == segment_sentences(text)
    assert sentences("\ue000𑁇\ue001 a") == ["\ue000𑁇", "\ue001 a"]
