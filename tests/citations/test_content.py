"""citekit._citations content, values, directions and conflicts: folding for coverage tests,
coverage weights, value analysis, rise and fall words, and value conflicts."""

import re

import naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citekit._citations.content import (
    FUNCTION_WORD_WEIGHT,
    VALUE_WEIGHT,
    content_mask,
    coverage_weights,
    fold_surface,
    ideograph_token_mask,
    is_content_token,
    letter_token_mask,
)


@pytest.mark.parametrize(
    "a, b",
    [
        ("countries", "country"),
        ("varies", "vary"),
        ("studied", "study"),
        ("making", "make"),
        ("stated", "state"),
        ("stopped", "stop"),
        ("planned", "plans"),
        ("used", "use"),
        ("pressed", "press"),
        ("classes", "class"),
        ("falls", "fall"),
        ("Analysts", "analyst"),
        ("Energy's", "energy"),
        ("Twelve", "12"),
        ("forty", "40"),
        ("7th", "7"),
        ("need", "needed"),
        ("needs", "need"),
        ("speeding", "speed"),
        ("exceeded", "exceeds"),
        ("using", "use"),
        ("using", "used"),
        ("aging", "age"),
    ],
)
def test_inflections_fold_together(a, b):
    assert fold_surface(a) == fold_surface(b)


@pytest.mark.parametrize(
    "a, b",
    [
        ("bus", "but"),
        ("press", "pres"),
        ("fall", "fail"),
        ("one", "once"),
        ("12", "13"),
        ("seed", "see"),
        ("feed", "fee"),
        ("thing", "the"),
        ("bring", "bre"),
    ],
)
def test_different_words_stay_apart(a, b):
    assert fold_surface(a) != fold_surface(b)


def test_short_words_keep_their_letters():
    assert [fold_surface(w) for w in ["is", "as", "was", "red", "bed", "sing"]] == [
        "is",
        "as",
        "was",
        "red",
        "bed",
        "sing",
    ]


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'-0123456789"))
def test_fold_ignores_case(text):
    assert fold_surface(text) == fold_surface(text.swapcase())


@given(st.text(max_size=30))
def test_fold_accepts_any_text(text):
    assert isinstance(fold_surface(text), str)


def test_coverage_weights_by_kind():
    words = ["Revenue", "grew", "15", "fifteen", "in", "the", ",", "%", "2024"]
    text = " ".join(words)
    starts, ends, position = [], [], 0
    for word in words:
        starts.append(position)
        ends.append(position + len(word))
        position += len(word) + 1
    content = content_mask(text, np.array(starts), np.array(ends))
    weights = coverage_weights([fold_surface(w) for w in words], content)
    assert weights.tolist() == [
        1.0,
        1.0,
        VALUE_WEIGHT,
        VALUE_WEIGHT,
        FUNCTION_WORD_WEIGHT,
        FUNCTION_WORD_WEIGHT,
        0.0,
        0.0,
        VALUE_WEIGHT,
    ]


def test_coverage_weights_edge_cases():
    assert coverage_weights([], np.zeros(0, dtype=bool)).shape == (0,)
    assert coverage_weights(["émigré", "🎉"], np.array([True, True])).tolist() == [1.0, 1.0]
    # a sentence judged on all its tokens (no content word) weighs its stop words fully
    assert coverage_weights(["the", "of"], np.array([True, True])).tolist() == [1.0, 1.0]


def test_find_conflicts_with_known_value_mask_is_the_same():
    from citekit._citations.conflicts import find_conflicts
    from citekit._citations.values import value_mask
    from citekit.tokenizers import SimpleTokenizer

    tokenizer = SimpleTokenizer()
    answer = "Sales grew 9% to $2.1 million in March 2020, said Dr. Lee."
    source = "Sales grew 15% to $2.4 million in May 2020, said Dr. Lee."
    a, s = tokenizer.tokenize(answer), tokenizer.tokenize(source)
    blocks = [(0, 0, 2), (3, 3, 2), (7, 7, 1), (9, 9, 4)]
    plain = find_conflicts(
        answer, a.token_ids, a.starts, a.ends, source, s.token_ids, s.starts, s.ends, blocks
    )
    assert {c.kind for c in plain} >= {"percent", "currency"}
    mask = value_mask(answer, a.starts, a.ends)
    assert mask.sum() >= 4
    given_mask = find_conflicts(
        answer, a.token_ids, a.starts, a.ends, source, s.token_ids, s.starts, s.ends, blocks,
        answer_values=mask.tolist(),
    )
    assert given_mask == plain
    # no value in the answer: nothing to contradict
    assert find_conflicts(
        answer, a.token_ids, a.starts, a.ends, source, s.token_ids, s.starts, s.ends, blocks,
        answer_values=[False] * len(a),
    ) == []


@given(st.text(max_size=12))
def test_digit_and_alnum_shortcuts_equal_their_definitions(text):
    from citekit._citations.content import _has_alnum
    from citekit._citations.values import _has_digit

    assert _has_digit(text) == any(char.isdigit() for char in text)
    assert _has_alnum(text) == any(char.isalnum() for char in text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12), st.booleans())
def test_token_facts_agree_with_the_three_functions(surface, is_content):
    from citekit._citations.content import coverage_weights, fold_surface, token_facts
    from citekit._citations.values import value_mask

    folded, weight, is_value = token_facts(surface, is_content)
    assert folded == fold_surface(surface)
    assert weight == coverage_weights([folded], np.array([is_content]))[0]
    assert is_value == value_mask(surface, [0], [len(surface)])[0]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12))
def test_surface_facts_agree_with_the_functions(surface):
    from citekit._citations.content import is_content_token, surface_facts, token_facts

    content, folded, weight_content, weight_other, is_value = surface_facts(surface)
    assert content == is_content_token(surface)
    assert (folded, weight_content, is_value) == token_facts(surface, True)
    assert (folded, weight_other, is_value) == token_facts(surface, False)


def test_surface_facts_bad_input():
    from citekit._citations.content import surface_facts

    with pytest.raises(TypeError):
        surface_facts(["not", "a", "str"])  # unhashable: the cache refuses it


def test_token_facts_bad_input():
    from citekit._citations.content import token_facts

    with pytest.raises(TypeError):
        token_facts(["not", "a", "str"], True)  # unhashable: the cache refuses it


# ---------------------------------------------------------------------------------------
# Value analysis and find_conflicts against their plain references (tests/naive.py)
# ---------------------------------------------------------------------------------------

# texts around values: numbers with digits of several kinds (superscripts are digits
# that int() refuses), currency signs (any of category Sc), percent signs, month names in
# any case, ranges ("to", dashes), the spaces of numbers (no-break, thin) and any text
_NUMBERS = st.one_of(
    st.integers(0, 99_999).map(str),
    st.integers(1000, 2999).map(str),
    st.sampled_from(["٣", "²", "²⁰²⁰", "１２", "7th", "2020-01-05", "1,200", "2.5", "12 000", "½"]),
    # Arabic-Indic digits with the Arabic thousands and decimal separators
    st.sampled_from(["١٬٢٠٠", "٣٫٥", "٢٠٢٠", "1٬200", "3٫5", "٬", "٫"]),
)
_CURRENCY = st.characters(whitelist_categories=["Sc"])
_MONTH_NAMES = ["January", "May", "may", "Sept", "nov.", "Mär", "déc", "août", "jun"]
_WORDS = st.one_of(
    _NUMBERS,
    st.tuples(_CURRENCY, _NUMBERS).map("".join),
    st.tuples(_NUMBERS, st.sampled_from(["%", "％", "٪", "€", " %", " ٪"])).map("".join),
    st.tuples(_NUMBERS, st.sampled_from(["-", "\u2013", "\u2014", "/", " to "]), _NUMBERS).map(
        "".join
    ),
    st.sampled_from(_MONTH_NAMES).map(str.swapcase) | st.sampled_from(_MONTH_NAMES),
    st.sampled_from(["percent", "per cent", "pct", "dollars", "EUR", "yen", "people", "units"]),
    # signs and leading decimal points ("-40", "−2.5", ".5", "-$5", "$-5"), and words
    # that make a value a fall ("fell 3%" states "-3%")
    st.tuples(
        st.sampled_from(["-", "\u2212", "\uff0d", ".", "-.", "-$", "$-", "(-", "=-", "x-", ")."]),
        _NUMBERS,
    ).map("".join),
    st.sampled_from(["fell", "fell by", "a decline of", "down", "Loss", "fell to"]),
    # and a rise, which the same value as a fall contradicts ("rose 3%", "fell 3%")
    st.sampled_from(["rose", "grew by", "an increase of", "up", "Profit", "rose to"]),
    st.sampled_from(["stieg um", "sank auf", "une baisse de", "cayó un", "вырос на", "Упал"]),
    # and the level a rise or a fall ended at ("rose to 3%"), or a bound ("up to 3%")
    st.sampled_from(["up to", "growth to", "bajó al", "a chuté à", "выросла до", "a", "auf"]),
    # and the level it started from ("rose from 3% to 5%")
    st.sampled_from(["rose from", "fell from", "from", "von", "с", "stieg von", "упал с"]),
    # and after the value ("a 3% increase", "3 percent lower", "$2 million loss")
    st.sampled_from(["increase", "Decrease", "higher", "lower", "loss", "percent lower",
                     "points up", "-point gain", "per cent"]),
    # scale words, apart or in the token ("2.4 million", "$1.5bn")
    st.tuples(_NUMBERS, st.sampled_from([" million", " Billion", "bn", "mn", " thousand",
                                         " trillions", "\u00a0million", "  million"])).map(
        "".join
    ),
    st.sampled_from(["grew", "in", "the", "Revenue", "to", "-", "\u2013", "\u2014", ".", ","]),
    _CURRENCY,
    st.text(max_size=3),
)
_SEPARATORS = st.sampled_from(
    [" "] * 8 + ["", "\u00a0", "\u2009", "\u202f", "\n", " to ", "-", "\u2013", " \u2014 "]
)
_TEMPLATES = st.lists(st.tuples(_WORDS, _SEPARATORS), max_size=16)


def _render(pieces):
    return "".join(word + separator for word, separator in pieces)


value_texts = _TEMPLATES.map(_render)


def _outcome(function, *args):
    """What a call gives: its result, or the type and message of what it raises."""
    try:
        return "returns", function(*args)
    except Exception as error:  # noqa: BLE001 - both sides must raise alike
        return "raises", type(error), str(error)


@settings(max_examples=500, deadline=None)
@given(value_texts, st.data())
def test_value_analysis_matches_reference(text, data):
    from citekit._citations.values import (
        _in_range,
        _value_facts_at,
        value_class,
        value_key,
        value_kind,
        value_mask,
    )

    n = len(text)
    # a token's offsets (or any inside the text), then any offsets at all
    _, token_starts, token_ends = _tokens(text, [], data.draw(st.integers(0, 2)))
    if token_starts.shape[0] and data.draw(st.booleans()):
        token = data.draw(st.integers(0, token_starts.shape[0] - 1))
        start, end = int(token_starts[token]), int(token_ends[token])
    else:
        start = data.draw(st.integers(0, n))
        end = data.draw(st.integers(start, n))
    anywhere = data.draw(st.integers(-n - 3, n + 3)), data.draw(st.integers(-n - 3, n + 3))
    spans = [(start, end), anywhere]
    for s, e in spans:
        assert _outcome(value_kind, text, s, e) == _outcome(naive.naive_value_kind, text, s, e)
        assert _outcome(value_class, text, s, e) == _outcome(naive.naive_value_class, text, s, e)
        assert _in_range(text, s, e) == naive.naive_in_range(text, s, e)
        # what find_conflicts learns of a value (key, class, span, kind, scale word)
        got = _outcome(_value_facts_at, text, s, e)
        expected = _outcome(naive.naive_answer_value, text, s, e)
        if got[0] == "returns" and expected[0] == "returns":
            key, value_class_, left, right, kind, scale_end, attached = got[1]
            ref_key, ref_class, ref_start, ref_end, ref_kind = expected[1]
            assert (key, value_class_, kind) == (ref_key, ref_class, ref_kind)
            if key is not None:
                assert (s - left, e + right) == (ref_start, ref_end)
                assert (scale_end, attached) == naive.naive_scale_word_facts(text, s, e)
        else:
            assert got == expected
    surface = text[start:end]
    assert value_key(surface) == naive.naive_value_key(surface)
    assert value_mask(text, [start], [end]).tolist() == naive.naive_value_mask(text, [start], [end])


_TOKEN_SHAPES = [r"\S+", r"\w+|[^\w\s]", r"\d[\d.,/-]*\d|\w+|[^\w\s]"]


def _tokens(text, cuts, shape=0):
    """Tokens of ``text`` (regex ``_TOKEN_SHAPES[shape]``, also cut at ``cuts``): ids (one
    per distinct text, so that equal values match, and a few collisions), starts, ends."""
    import re
    import zlib

    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    starts, ends = [], []
    for lo, hi in zip(bounds, bounds[1:]):
        for match in re.finditer(_TOKEN_SHAPES[shape], text[lo:hi]):
            starts.append(lo + match.start())
            ends.append(lo + match.end())
    surfaces = [text[s:e].encode("utf-8", "surrogatepass") for s, e in zip(starts, ends)]
    ids = [zlib.crc32(surface) % 50 for surface in surfaces]
    return [np.array(v, dtype=np.int64) for v in (ids, starts, ends)]


@st.composite
def _alignments(draw):
    """An answer and a passage (mostly the answer with some words changed), their tokens
    and blocks: in order (what alignments give) or anywhere (overlapping, out of order,
    empty)."""
    pieces = draw(st.lists(st.tuples(_WORDS, _SEPARATORS), min_size=3, max_size=16))
    if draw(st.booleans()):
        # the answer's words, some with other digits ("grew 9%" / "grew 15%"), some others
        new_digits = draw(st.text(alphabet="0123456789", min_size=4, max_size=4))
        renumber = str.maketrans("0123456789", new_digits * 2 + new_digits[:2])
        source_pieces = []
        for word, separator in pieces:
            if draw(st.integers(0, 4)) == 0:  # a word more
                source_pieces.append((draw(_WORDS), draw(_SEPARATORS)))
            # the same word, other digits, another word, or a sign or point gained or lost
            # ("-40" / "40", ".5" / "5")
            word = draw(st.sampled_from([
                word, word.translate(renumber), draw(_WORDS), word.lstrip("-\u2212\uff0d.$"),
                draw(st.sampled_from(["-", "\u2212", ".", "$-"])) + word,
                word.replace("million", "billion").replace("bn", " billion"),
            ]))
            source_pieces.append((word, separator))
    else:
        source_pieces = draw(_TEMPLATES)
    answer, source = _render(pieces), _render(source_pieces)
    shape = draw(st.integers(0, len(_TOKEN_SHAPES) - 1))
    a = _tokens(answer, draw(st.lists(st.integers(0, 200), max_size=3)), shape)
    s = _tokens(source, draw(st.lists(st.integers(0, 200), max_size=3)), shape)
    n_a, n_s = a[0].shape[0], s[0].shape[0]
    how = draw(st.sampled_from(["matched", "in order", "anywhere"]))
    if how == "matched":  # the blocks of equal tokens, as an alignment finds them
        blocks = naive.naive_matching_blocks(a[0].tolist(), s[0].tolist())
    elif how == "in order":
        blocks, q, t = [], 0, 0
        same_steps = draw(st.booleans())
        while q < n_a and t < n_s and len(blocks) < 5:
            step = draw(st.integers(0, 2))
            q, t = q + step, t + (step if same_steps else draw(st.integers(0, 2)))
            length = draw(st.integers(1, 3))
            if q + length > n_a or t + length > n_s:
                break
            blocks.append((q, t, length))
            q, t = q + length, t + length
    else:
        blocks = draw(st.lists(
            st.tuples(st.integers(0, max(n_a - 1, 0)), st.integers(0, max(n_s - 1, 0)),
                      st.integers(-1, 2)),
            max_size=4,
        ))
        blocks = [(q, t, min(length, n_a - q, n_s - t)) for q, t, length in blocks]
    return answer, a, source, s, np.array(blocks, dtype=np.int64).reshape(-1, 3)


def _fields(conflicts):
    """Conflicts as their fields with their exact types (results must be bit-identical)."""
    return [[(type(v), v) for v in vars(c).values()] for c in conflicts]


@settings(max_examples=400, deadline=None)
@given(_alignments(), st.integers(0, 1000), st.booleans())
def test_find_conflicts_matches_reference(alignment, offset, known_values):
    from citekit._citations.conflicts import find_conflicts

    answer, a, source, s, blocks = alignment
    values = naive.naive_value_mask(answer, a[1], a[2]) if known_values else None
    got = _outcome(find_conflicts, answer, *a, source, *s, blocks, offset, values)
    expected = _outcome(naive.naive_find_conflicts, answer, *a, source, *s, blocks, offset, values)
    if got[0] == "returns":
        assert expected[0] == "returns" and _fields(got[1]) == _fields(expected[1])
    else:
        assert got == expected


@settings(max_examples=150, deadline=None)
@given(value_texts, st.lists(st.integers(0, 200), max_size=8),
       st.lists(st.tuples(value_texts, st.lists(st.integers(0, 200), max_size=8)), max_size=4),
       st.data())
def test_find_conflicts_with_one_cache_per_sentence_matches_reference(answer, cuts, passages,
                                                                      data):
    # one sentence checked against several passages, learning about its values once
    from citekit._citations.conflicts import find_conflicts

    a = _tokens(answer, cuts, 1)
    values = naive.naive_value_mask(answer, a[1], a[2])
    cache, reference_cache = {}, {}
    for source, source_cuts in passages:
        s = _tokens(source, source_cuts, 1)
        n = min(a[0].shape[0], s[0].shape[0])
        split = data.draw(st.integers(0, n))
        blocks = np.array([(0, 0, split), (split + 1, split + 1, max(n - split - 1, 0))])
        got = _outcome(find_conflicts, answer, *a, source, *s, blocks, 0, values, cache)
        expected = _outcome(naive.naive_find_conflicts, answer, *a, source, *s, blocks, 0,
                            values, reference_cache)
        if got[0] == "returns":
            assert expected[0] == "returns" and _fields(got[1]) == _fields(expected[1])
        else:
            assert got == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("fell to -40 degrees", ("-", 8)),
        ("fell to \u221240", ("-", 8)),
        ("at .5 mm", ("0.", 3)),
        ("at -.5 mm", ("-0.", 3)),
        ("lost -$5 today", ("-", 5)),
        ("lost $-5 today", ("-", 6)),
        ("(-5)", ("-", 1)),
        ("x=-3", ("-", 2)),
        ("-7 at the start", ("-", 0)),
        ("x-5 and COVID-19", ("", 2)),  # after a word: no sign
        ("thorax).2 Children", ("", 8)),  # after a closing bracket: a footnote
        ("grew 2.5%", ("", 7)),  # the decimals of 2.5
        ("- 5 apart", ("", 2)),
    ],
)
def test_value_prefix_reads_signs_and_leading_points(text, expected):
    from citekit._citations.values import PREFIXED_VALUE, _value_prefix

    start = expected[1] if not expected[0] else next(i for i, c in enumerate(text) if c.isdigit())
    end = start + 1
    assert _value_prefix(text, start, end) == expected
    assert naive.naive_value_prefix(text, start, end) == expected
    if expected[0]:  # the quick test finds every sign and point
        assert PREFIXED_VALUE.search(text, max(0, start - 3), end)


@pytest.mark.parametrize(
    "answer, source, expected",
    [
        ("rose to -40 today", "rose to 40 today", [("number", "-40", "40")]),
        ("rose to $40 today", "rose to -$40 today", [("currency", "$40", "-$40")]),
        ("rose to .5 today", "rose to 5 today", [("number", ".5", "5")]),
        ("rose to \u221240 today", "rose to -40 today", []),
        # a fall states the negative: by or of may stand between
        ("revenue fell 3% today", "revenue changed -3% today", []),
        ("revenue fell by 3% today", "revenue was at -3% today", []),
        ("a decline of 3% today", "a decline of -3% today", []),
        ("revenue fell to 3% today", "revenue fell to -3% today", [("percent", "3%", "-3%")]),
        ("rose 2018-2019 today", "rose -2018-2019 today", []),  # a range
        # a rise against a fall of the same value: the spans take the words saying so
        ("revenue rose 3% today", "revenue fell 3% today", [("percent", "rose 3%", "fell 3%")]),
        ("revenue fell by 3% today", "revenue Grew by 3% today",
         [("percent", "fell by 3%", "Grew by 3%")]),
        ("a profit of $3 today", "a loss of $3 today",
         [("currency", "profit of $3", "loss of $3")]),
        ("prices up 3% today", "prices down 3% today", [("percent", "up 3%", "down 3%")]),
        # "rose -3%" states a fall; two rises or two falls agree
        ("revenue rose -3% today", "revenue fell 3% today", []),
        ("revenue grew 3% today", "revenue increased 3% today", []),
        ("revenue dropped 3% today", "revenue fell 3% today", []),
        # levels ("to"): a level risen to against one fallen to, never against a change
        ("revenue rose to 3% today", "revenue fell to 3% today",
         [("percent", "rose to 3%", "fell to 3%")]),
        ("revenue rose to 3% today", "revenue fell by 3% today", []),
        ("revenue rose by 3% today", "revenue fell to 3% today", []),
        ("revenue rose to 3% today", "revenue dropped to 3% today",
         [("percent", "rose to 3%", "dropped to 3%")]),
        ("revenue fell to 3% today", "revenue down to 3% today", []),
        ("fees were up to 3% today", "fees then fell to 3% today", []),  # "up to": a bound
        ("revenue fell to 3% today", "revenue changed to -3% today",
         [("percent", "3%", "-3%")]),  # a level fallen to is not negative
        ("revenue rose 3% today", "revenue was 3% today", []),
        # the word after the value says so when none before does
        ("a 3% increase today", "a 3% decrease today", [("percent", "3% increase", "3% decrease")]),
        ("3 percent higher today", "3 percent lower today",
         [("percent", "3 percent higher", "3 percent lower")]),
        ("a $2 million loss today", "a $2 million profit today",
         [("currency", "$2 million loss", "$2 million profit")]),
        ("a 3% decrease today", "a -3% change today", []),
        ("rose 3% lower today", "fell 3% lower today", [("percent", "rose 3%", "fell 3%")]),
    ],
)
def test_matched_values_with_other_signs_conflict(answer, source, expected):
    from citekit._citations.conflicts import find_conflicts

    import re

    def tokens(text):  # words, numbers and "%", as the tokenizers give them: no signs
        found = list(re.finditer(r"\d[\d.,-]*\d|\d|[^\W\d_]+|%", text))
        return [np.arange(len(found)), np.array([m.start() for m in found]),
                np.array([m.end() for m in found])]

    a, s = tokens(answer), tokens(source)
    assert len(a[0]) == len(s[0])
    blocks = np.array([(0, 0, len(a[0]))])  # every token matched
    got = find_conflicts(answer, *a, source, *s, blocks)
    assert _fields(got) == _fields(naive.naive_find_conflicts(answer, *a, source, *s, blocks))
    assert [(c.kind, c.answer_text, c.evidence_text) for c in got] == expected
    for c in got:
        assert answer[c.answer_char_start : c.answer_char_end] == c.answer_text
        assert source[c.evidence_char_start : c.evidence_char_end] == c.evidence_text


@pytest.mark.parametrize(
    "answer, source, last_block, expected",
    [
        # a year in superscript digits is a year (int() refused it: value_kind raised)
        ("in ²⁰²⁰ we", "in ²⁰²¹ we", (2, 2, 1), [("date", "²⁰²⁰", "²⁰²¹")]),
        ("in 2021 we", "in ²⁰²⁰ we", (2, 2, 1), [("date", "2021", "²⁰²⁰")]),
        ("in 2020 we", "in ²⁰²⁰ we", (2, 2, 1), []),  # the same year
        ("in 2021 we", "in ²⁰²⁰ to 5 we", (2, 4, 1), []),  # a range: not one value
    ],
)
def test_find_conflicts_reads_years_in_any_digits(answer, source, last_block, expected):
    from citekit._citations.conflicts import find_conflicts
    from citekit._citations.values import value_kind

    a, s = _tokens(answer, []), _tokens(source, [])
    a[0], s[0] = np.arange(len(a[0])), np.arange(len(s[0])) + 100 * np.arange(len(s[0]))
    blocks = np.array([(0, 0, 1), last_block])
    got = _outcome(find_conflicts, answer, *a, source, *s, blocks)
    assert got == _outcome(naive.naive_find_conflicts, answer, *a, source, *s, blocks)
    assert got[0] == "returns"
    assert [(c.kind, c.answer_text, c.evidence_text) for c in got[1]] == expected
    assert value_kind("in ²⁰²⁰ we", 3, 7) == value_kind("in 2020 we", 3, 7) == "date"
    assert value_kind("①②③④ units", 0, 4) == "number"


def test_superscript_year_in_the_pipeline():
    # it raised ValueError: invalid literal for int() with base 10: '²⁰²⁰'
    from citekit import align_citations

    result = align_citations(
        "Sales grew 15 percent in ²⁰²⁰ across the region, the company said.",
        ["Sales grew 15 percent in ²⁰²¹ across the region, the company said on Monday."],
    )
    [conflict] = result[0].citations[0].conflicts
    assert (conflict.answer_text, conflict.evidence_text) == ("²⁰²⁰", "²⁰²¹")
    assert result[0].status == "partial"


@pytest.mark.parametrize(
    "answer, source, blocks, expected",
    [
        # fullwidth percent signs widen the values, as "%" does
        ("Sales grew 9％ in 2020", "Sales grew 15％ in 2020", [(0, 0, 2), (3, 3, 3)],
         [("percent", "9％", "15％")]),
        # one token beyond the last block faces one token: "by" is no value, 15 is not read
        ("Sales grew 9 % in 2020", "Sales grew by 15 % in 2021", [(0, 0, 2)], []),
        # in a gap, the i-th value faces the i-th value, words between them skipped
        ("from 5 and 7 in May", "from about 5 or 8 in May", [(0, 0, 1), (4, 5, 2)],
         [("number", "7", "8")]),
        # the year of a range is not compared, the day is
        ("on 3 May 2019-2020 ,", "on 4 May 2018 ,", [(0, 0, 1), (2, 2, 1), (4, 4, 1)],
         [("date", "3", "4")]),
    ],
)
def test_find_conflicts_examples(answer, source, blocks, expected):
    from citekit._citations.conflicts import find_conflicts

    a, s = _tokens(answer, [], 1), _tokens(source, [], 1)
    found = find_conflicts(answer, *a, source, *s, np.array(blocks))
    assert [(c.kind, c.answer_text, c.evidence_text) for c in found] == expected
    reference = naive.naive_find_conflicts(answer, *a, source, *s, np.array(blocks))
    assert _fields(found) == _fields(reference)


@pytest.mark.parametrize(
    "answer, source, expected, agreeing",
    [
        # "rose 3%" cited by "fell 3%" was supported: the values are equal, one word differs
        ("Quarterly revenue rose 3% to $1.2 billion in 2023.",
         "Quarterly revenue fell 3% to $1.2 billion in 2023, the company said on Tuesday.",
         ("percent", "rose 3%", "fell 3%"),
         # the same fall in other words
         ["Quarterly revenue fell 3% to $1.2 billion in 2023.",
          "Quarterly revenue decreased by 3% to $1.2 billion in 2023.",
          "Quarterly revenue rose -3% to $1.2 billion in 2023."]),
        # "rose to $1.2 billion" cited by "fell to $1.2 billion" was supported: the same
        # level, reached by a rise in one and by a fall in the other
        ("Quarterly revenue rose to $1.2 billion in 2023.",
         "Quarterly revenue fell to $1.2 billion in 2023, the company said on Tuesday.",
         ("currency", "rose to $1.2 billion", "fell to $1.2 billion"),
         # a level is not a change, nor is "up to" a level risen to
         ["Quarterly revenue fell to $1.2 billion in 2023.",
          "Quarterly revenue declined to $1.2 billion in 2023.",
          "Quarterly revenue rose 3% to $1.2 billion in 2023.",
          "Quarterly revenue of up to $1.2 billion in 2023."]),
        # past the level it started from
        ("Operating margin rose from 7% to 5% in 2023.",
         "Operating margin fell from 7% to 5% in 2023, the company said on Tuesday.",
         ("percent", "rose from 7% to 5%", "fell from 7% to 5%"),
         ["Operating margin fell from 7% to 5% in 2023.",
          "Operating margin declined to 5% in 2023."]),
    ],
)
def test_rise_against_fall_in_the_pipeline(answer, source, expected, agreeing):
    from citekit import align_citations

    result = align_citations(answer, [source])
    [conflict] = result[0].citations[0].conflicts
    assert (conflict.kind, conflict.answer_text, conflict.evidence_text) == expected
    assert source[conflict.evidence_char_start : conflict.evidence_char_end] == expected[2]
    assert result[0].status == "partial"
    for other in agreeing:
        same = align_citations(other, [source])
        assert same[0].status == "supported", other
        assert not same[0].citations[0].conflicts, other


def test_rise_against_fall_outside_the_evidence_in_the_pipeline():
    # the alignment starts at the value: the words saying rise and fall lie before it
    from citekit import align_citations

    source = "The bank's index fell 3% on Monday in Frankfurt, traders said."
    result = align_citations("Acme's stock rose 3% on Monday in Frankfurt.", [source])
    [citation] = result[0].citations
    assert not citation.evidence.startswith("fell")
    [conflict] = citation.conflicts
    assert (conflict.answer_text, conflict.evidence_text) == ("rose 3%", "fell 3%")
    assert result[0].status == "partial"


@settings(max_examples=300, deadline=None)
@given(value_texts, st.data())
def test_direction_words_match_reference_and_bound_every_value(text, data):
    from citekit._citations import directions

    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    bits = directions.directions_in(text, start, end)
    assert 0 <= bits <= 3
    for first in range(max(0, start - 1), end + 1):
        direction, word = directions._direction_before(text, first)
        assert (direction, word) == naive.naive_direction_before(text, first)
        # every value of the range (its span widened by one) said to fall or rise sets a bit
        assert direction == 0 or bits & (1 if direction < 0 else 2)
        after, word_end = directions._direction_after(text, first)
        assert (after, word_end) == naive.naive_direction_after(text, first)
        assert after == 0 or bits & (1 if after < 0 else 2)
        # (looked up by the value's neighbourhood: the same as reading the whole text)
        for value_end in {first, min(len(text), first + 1), min(len(text), first + 3)}:
            assert directions._value_direction(text, first, value_end) == (
                naive.naive_value_direction(text, first, value_end)
            )
        if direction:  # the whole word that says so, before the value
            assert 0 <= word < first and (word == 0 or not re.match(r"\w", text[word - 1]))
            said = re.match(r"\w+", text[word:first]).group().casefold()
            assert said in (directions._FALL_WORDS if direction < 0 else directions._RISE_WORDS)


@pytest.mark.parametrize(
    "text, first, expected",
    [
        ("costs fell 3%", 11, (-1, 6)),
        ("costs fell by 3%", 14, (-1, 6)),
        ("an increase of 3%", 15, (1, 3)),
        # the level a rise or a fall ended at, past one "to" (or its counterparts)
        ("rose to 3%", 8, (2, 0)),
        ("costs fell to 3%", 14, (-2, 6)),
        ("rose by to 3%", 11, (0, -1)),
        ("rose to by 3%", 11, (0, -1)),
        ("rose to to 3%", 11, (0, -1)),
        ("up to 3%", 6, (0, -1)),  # a bound
        ("growth to 3%", 10, (0, -1)),  # may have slowed
        ("rose 3% to 5%", 11, (0, -1)),  # "3" stands before "to"
        ("las ventas bajaron al 3 %", 22, (-2, 11)),
        ("sales fell a 3%", 13, (0, -1)),  # an article, not a level
        ("le taux a chuté à 3 %", 18, (-2, 10)),
        ("Выручка выросла до 3%", 19, (2, 8)),
        # past the level it started from
        ("rose from 3% to 5%", 16, (2, 0)),
        ("costs fell from $1.2 billion to $1", 33, (-2, 6)),
        ("rose from 1,200 to 1,500", 19, (2, 0)),
        ("stieg von 3 auf 5 %", 16, (2, 0)),
        ("вырос с 3% до 5%", 14, (2, 0)),
        ("rose from 3. To 5%", 16, (0, -1)),  # another sentence
        ("rose from 3%\nto 5%", 16, (0, -1)),  # another line
        ("rose from three to 5", 19, (0, -1)),  # only numbers and unit words
        ("from 3 to 5", 10, (0, -1)),
        ("RISE 3", 5, (1, 0)),
        # a word cut by the 30-character window is not read ("arose" is not "rose")
        ("arose" + " " * 26 + "3", 31, (0, -1)),
        ("rose" + " " * 26 + "3", 30, (1, 0)),
        # German, French, Spanish and Russian, with the words between ("um", "de", "un", "на")
        ("Umsatz stieg um 3 %", 16, (1, 7)),
        ("Umsatz sank auf 3 %", 16, (-2, 7)),  # "auf": a level
        ("une hausse de 3 %", 14, (1, 4)),
        ("en baisse de 3 %", 13, (-1, 3)),
        ("las ventas cayeron un 3 %", 22, (-1, 11)),
        ("el alza del 3 %", 12, (1, 3)),
        ("Выручка выросла на 3%", 19, (1, 8)),
        ("Выручка упала на 3%", 17, (-1, 8)),
        ("increase0", 8, (0, -1)),  # the word goes on into the value
        ("increase 0", 9, (1, 0)),
    ],
)
def test_direction_before(text, first, expected):
    from citekit._citations.directions import _direction_before

    assert _direction_before(text, first) == expected
    assert naive.naive_direction_before(text, first) == expected


@pytest.mark.parametrize(
    "text, end, expected",
    [
        ("a 3% increase in sales", 3, (1, 13)),
        ("a 3% increase in sales", 4, (1, 13)),
        ("3 percent lower", 1, (-1, 15)),
        ("3 percentage points LOWER", 1, (-1, 25)),
        ("a $2 million loss", 4, (-1, 17)),
        ("2.5-point gain", 3, (1, 14)),
        ("was 3%. Growth followed", 5, (0, -1)),  # another sentence
        ("was 3%\nGrowth followed", 5, (0, -1)),  # another line
        ("3% of the growth", 2, (0, -1)),  # only the first word is read
        ("3" + " " * 37 + "gain", 1, (0, -1)),  # cut by the 40-character window
        ("3" + " " * 36 + "gain", 1, (1, 41)),
        ("3 percent percent percent lower", 1, (-1, 31)),
        ("3 percent percent percent percent lower", 1, (0, -1)),  # at most three unit words
        ("3increase", 1, (0, -1)),  # the value's own word
    ],
)
def test_direction_after(text, end, expected):
    from citekit._citations.directions import _direction_after

    assert _direction_after(text, end) == expected
    assert naive.naive_direction_after(text, end) == expected


def test_rise_and_fall_words_after_values_in_the_pipeline():
    from citekit import align_citations

    source = "Revenue saw a 3% decrease in 2023, the annual report said on Tuesday."
    result = align_citations("Revenue saw a 3% increase in 2023.", [source])
    [conflict] = result[0].citations[0].conflicts
    assert (conflict.answer_text, conflict.evidence_text) == ("3% increase", "3% decrease")
    assert result[0].status == "partial"
    same = align_citations("Revenue saw a 3% decrease in 2023.", [source])
    assert same[0].status == "supported" and not same[0].citations[0].conflicts


@pytest.mark.parametrize(
    "answer, source, expected",
    [
        ("Der Umsatz stieg um 3 % auf 1,2 Milliarden Euro im Jahr 2023.",
         "Der Umsatz sank um 3 % auf 1,2 Milliarden Euro im Jahr 2023, teilte die Firma mit.",
         ("stieg um 3", "sank um 3")),
        # only the word just before the value (past "um") is read: here it is "2023"
        ("Der Umsatz stieg im Jahr 2023 um 3 % auf 1,2 Milliarden Euro.",
         "Der Umsatz sank im Jahr 2023 um 3 % auf 1,2 Milliarden Euro, teilte die Firma mit.",
         None),
        ("Le chiffre d'affaires a enregistré une hausse de 3 % en 2023.",
         "Le chiffre d'affaires a enregistré une baisse de 3 % en 2023, selon la société.",
         ("hausse de 3", "baisse de 3")),
        ("Las ventas de la empresa aumentaron un 3 % en 2023.",
         "Las ventas de la empresa cayeron un 3 % en 2023, según el informe anual.",
         ("aumentaron un 3", "cayeron un 3")),
        ("Выручка компании выросла на 3% в 2023 году.",
         "Выручка компании упала на 3% в 2023 году, сообщила компания.",
         ("выросла на 3%", "упала на 3%")),
    ],
)
def test_rise_against_fall_in_other_languages(answer, source, expected):
    from citekit import align_citations

    result = align_citations(answer, [source])
    conflicts = [c for citation in result[0].citations for c in citation.conflicts]
    if expected is None:
        assert not conflicts and result[0].status == "supported"
        return
    assert [(c.answer_text.casefold(), c.evidence_text.casefold()) for c in conflicts] == [
        expected
    ]
    assert result[0].status == "partial"


def test_arabic_numbers_against_western_digits_in_the_pipeline():
    # ١٥٪ is 15%, ١٬٢٠٠ is 1,200 and ٣٫٥ is 3.5: the same facts, and 17% contradicts 15%
    from citekit import align_citations

    source = (
        "ارتفعت الإيرادات بنسبة 15% إلى 1,200 مليون دولار في عام 2023. "
        "وبلغ الهامش 3.5 نقطة."
    )
    same = align_citations(
        "ارتفعت الإيرادات بنسبة ١٥٪ إلى ١٬٢٠٠ مليون دولار في عام ٢٠٢٣. وبلغ الهامش ٣٫٥ نقطة.",
        [source],
    )
    assert [span.status for span in same] == ["supported", "supported"]
    assert all(not c.conflicts for span in same for c in span.citations)
    other = align_citations(
        "ارتفعت الإيرادات بنسبة ١٧٪ إلى ١٬٢٠٠ مليون دولار في عام ٢٠٢٣.", [source]
    )
    [conflict] = other[0].citations[0].conflicts
    assert (conflict.kind, conflict.answer_text, conflict.evidence_text) == (
        "percent", "١٧٪", "15%"
    )
    assert other[0].status == "partial"


@pytest.mark.parametrize(
    "answer, source, contradicting",
    [
        # a decimal comma or a list is no digit grouping: 2,5% is not 25%, 1,2,3 not 123
        ("Inflation was 25% in 2024.", "Inflation was 2,5% in 2024.", "2,5%"),
        ("Pi is about 314159 in the report.", "Pi is about 3,14159 in the report.", "3,14159"),
        ("The values were 123 in the test.", "The values were 1,2,3 in the test.", "1,2,3"),
        # digit groups of three (and the Indian 1,00,000) are the same number written out
        ("Revenue was 1,200 dollars in 2024.", "Revenue was 1200 dollars in 2024.", None),
        ("Revenue was 1,00,000 rupees in 2024.", "Revenue was 100000 rupees in 2024.", None),
        ("Inflation was 2,5% in 2024.", "Inflation was 2,5% in 2024.", None),
    ],
)
def test_only_digit_groups_of_three_are_dropped_when_values_are_compared(
    answer, source, contradicting
):
    from citekit import align_citations

    [span] = align_citations(answer, [source])
    conflicts = [c.evidence_text for citation in span.citations for c in citation.conflicts]
    if contradicting is None:
        assert span.status == "supported" and not conflicts
    else:
        assert span.status == "partial" and conflicts == [contradicting]


# -- letters of scripts tokenized letter by letter ------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("ก", True), ("เ", True), ("ล้", True),  # Thai, a cluster with its tone mark
        ("ກ", True), ("က", True), ("ក", True),  # Lao, Myanmar, Khmer
        ("の", True), ("カ", True), ("ｶ", True), ("ㇰ", True),  # kana, half-width, extension
        ("東", False), ("한", False), ("a", False), ("15", False), ("é", False),
        ("๕", True),  # a Thai digit is a Thai character too
        ("🎉", False), (" ", False),
    ],
)
def test_letter_token_mask_of_one_token(text, expected):
    assert letter_token_mask(text, [0], [len(text)]).tolist() == [expected]


def test_letter_token_mask_reads_each_token_at_its_start():
    text = "Apple ขาย iPhone"
    # "ขา" reads as a Thai token; a token starting at the space before it does not
    assert letter_token_mask(text, [0, 6, 5, 10], [5, 8, 7, 16]).tolist() == [
        False, True, False, False
    ]


def test_letter_token_mask_edge_cases():
    assert letter_token_mask("", [], []).tolist() == []
    assert letter_token_mask("ขาย", np.zeros(0, np.int64), np.zeros(0, np.int64)).shape == (0,)
    # an empty span is no token of any script
    assert letter_token_mask("ขาย", [1], [1]).tolist() == [False]
    # no character of those scripts: all False without looking at the tokens
    assert letter_token_mask("plain text", [0, 6], [5, 10]).tolist() == [False, False]


def test_letter_token_mask_bad_input():
    with pytest.raises(ValueError, match="starts and ends"):
        letter_token_mask("ขาย", [0, 1], [1])


@given(st.text(max_size=40), st.data())
def test_letter_token_mask_is_the_first_characters_script(text, data):
    starts = data.draw(st.lists(st.integers(0, len(text)), max_size=8))
    ends = [min(len(text), s + data.draw(st.integers(0, 3))) for s in starts]
    found = letter_token_mask(text, starts, ends).tolist()
    assert found == [
        s < e and ("\u0e00" <= text[s] <= "\u0eff" or "\u1000" <= text[s] <= "\u109f"
                   or "\u1780" <= text[s] <= "\u17ff" or "\u3040" <= text[s] <= "\u30ff"
                   or "\u31f0" <= text[s] <= "\u31ff" or "\uff66" <= text[s] <= "\uff9d")
        for s, e in zip(starts, ends)
    ]


@pytest.mark.parametrize(
    "token, content",
    [("的", False), ("是", False), ("了", False), ("他", False), ("不", True), ("没", True),
     ("一", True), ("首", True), ("都", True), ("地", True)],
)
def test_chinese_function_characters_are_stop_words(token, content):
    assert is_content_token(token) is content


@pytest.mark.parametrize(
    "text, expected",
    [("東", True), ("〇", False), ("㐀", True), ("豈", True), ("𠀀", True), ("か", False),
     ("ก", False), ("a", False), ("한", False), ("15", False)],
)
def test_ideograph_token_mask_of_one_token(text, expected):
    assert ideograph_token_mask(text, [0], [len(text)]).tolist() == [expected]


def test_ideograph_token_mask_edge_cases_and_bad_input():
    assert ideograph_token_mask("", [], []).tolist() == []
    assert ideograph_token_mask("東京", [1], [1]).tolist() == [False]
    with pytest.raises(ValueError, match="starts and ends"):
        ideograph_token_mask("東京", [0], [1, 2])


@pytest.mark.parametrize(
    "token, content",
    [("является", False), ("и", False), ("не", True), ("нет", True), ("столицей", True),
     ("هي", False), ("في", False), ("لا", True), ("عاصمة", True),
     ("है", False), ("का", False), ("नहीं", True), ("एक", True), ("शहर", True)],
)
def test_russian_arabic_hindi_function_words_are_stop_words(token, content):
    assert is_content_token(token) is content


# ---------------------------------------------------------------------------------------
# One list of scale words; one rule for a rise against a fall; the conflict prefilters
# ---------------------------------------------------------------------------------------


def _scale_cases():
    from citekit._citations.values import SCALES

    return list(SCALES)


@pytest.mark.parametrize("word", _scale_cases())
def test_may_be_scaled_finds_every_scale_word(word):
    from citekit._citations.values import may_be_scaled

    for casing in (str.lower, str.upper, str.title, str.swapcase):
        scale = casing(word)
        if scale == word and casing is str.swapcase:
            continue
        for text in (f"Sales were $2.4 {scale} last year.", f"Sales were $2.4{scale}.",
                     f"2.4\u00a0{scale}", scale):
            assert may_be_scaled(text, 0, len(text)), text
    # only the range is searched
    text = f"Sales were $2.4 {word} last year."
    assert not may_be_scaled(text, 0, text.index(word))
    assert not may_be_scaled(text, text.index(word) + len(word), len(text))


# letters of scale words in any casing, with the non-ASCII characters that match them
# case-insensitively (the dotless i, the capital I with a dot, the long s)
_LETTER_CASES = {"i": "iIıİ", "s": "sSſ"}
_CASED_SCALE_WORDS = st.sampled_from(_scale_cases()).flatmap(
    lambda word: st.tuples(
        *(st.sampled_from(_LETTER_CASES.get(c, c + c.upper())) for c in word)
    ).map("".join)
)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=8), _CASED_SCALE_WORDS, st.text(max_size=8), st.booleans())
def test_may_be_scaled_finds_what_the_scale_reader_finds(before, word, after, apart):
    from citekit._citations.values import _SCALE_AFTER, may_be_scaled

    for text in (before + ("2.4 " if apart else "2.4") + word + after, before + after):
        if _SCALE_AFTER.search(text):
            assert may_be_scaled(text, 0, len(text))


@pytest.mark.parametrize("text", ["2 mıllıon", "2 thouſand", "2 MİLLİON", "2 BİLLİON"])
def test_may_be_scaled_finds_case_variants_the_reader_takes(text):
    from citekit._citations.values import _scale_word, may_be_scaled

    assert _scale_word(text, 0, 1) is not None  # the reader takes it for a scale word
    assert may_be_scaled(text, 0, len(text))


@pytest.mark.parametrize("word, other", [("mıllıon", "mıllıon"), ("mıllıon", "MİLLİON"),
                                         ("thouſand", "thousand"), ("mıllıon", "bıllıon")])
def test_scale_words_in_case_variants_are_read_not_a_crash(word, other):
    # case-insensitive matching takes the dotless i and the long s, which case folding
    # leaves as they are: their scale was looked up by the folded word (KeyError)
    from citekit import align_citations
    from citekit._citations.values import _scale_power, _value_scale

    assert _value_scale(f"2 {word}", 0, 1) == naive.naive_value_scale(f"2 {word}", 0, 1) > 0
    answer, source = f"Sales were 2 {word} in 2023.", f"Sales were 3 {other} in 2023, it said."
    [span] = align_citations(answer, [source])
    assert span.status == "partial" and span.citations[0].conflicts
    assert _scale_power("MİLLİON") == _scale_power("million") == 6


def test_scale_words_fit_the_value_neighbourhood():
    # a scale word is read from a value's neighbourhood (_value_facts): one white space,
    # the word and the character after it must fit in the characters after the value
    from citekit._citations.values import _NEIGHBOURHOOD, SCALES

    assert max(map(len, SCALES)) + 2 <= _NEIGHBOURHOOD


@pytest.mark.parametrize("word, other", [(w, o) for w in _scale_cases() for o in _scale_cases()
                                         if w != o])
def test_different_scale_words_conflict(word, other):
    from citekit._citations.conflicts import find_conflicts
    from citekit._citations.values import SCALES, may_be_scaled

    answer, source = f"Sales were 2.4 {word}", f"Sales were 2.4 {other.upper()}"
    a = (np.array([1, 2, 3, 10]), np.array([0, 6, 11, 15]),
         np.array([5, 10, 14, 15 + len(word)]))
    s = (np.array([1, 2, 3, 11]), np.array([0, 6, 11, 15]),
         np.array([5, 10, 14, 15 + len(other)]))
    blocks = [(0, 0, 3)]
    found = find_conflicts(answer, *a, source, *s, blocks)
    assert _fields(found) == _fields(naive.naive_find_conflicts(answer, *a, source, *s, blocks))
    if SCALES[word] == SCALES[other]:  # "billion" is "bn"
        assert found == []
    else:
        assert [(c.answer_text, c.evidence_text) for c in found] == [
            (answer[11:], source[11:])
        ]
        # and the sentence's prefilter lets it through
        assert may_be_scaled(answer, 0, len(answer))


@settings(max_examples=300, deadline=None)
@given(value_texts, st.integers(0, 2))
def test_may_be_scaled_finds_every_scale_word_a_value_reads(text, shape):
    from citekit._citations.values import _scale_word, may_be_scaled

    _, starts, ends = _tokens(text, [], shape)
    for start, end in zip(starts.tolist(), ends.tolist()):
        match = _scale_word(text, start, end)
        if match is not None:
            assert may_be_scaled(text, start, match.end())


@pytest.mark.parametrize(
    "text, expected",
    [("fell to -40", True), ("at .5", True), ("-$5", True), ("(−3)", True),
     ("COVID-19", False), ("2018-2019", False), ("pp. 3", False), ("grew 2.5%", False)],
)
def test_may_be_prefixed(text, expected):
    from citekit._citations.values import may_be_prefixed

    assert may_be_prefixed(text, 0, len(text)) is expected


@settings(max_examples=300, deadline=None)
@given(value_texts, st.integers(0, 2))
def test_may_be_prefixed_finds_every_sign_and_point(text, shape):
    from citekit._citations.values import _value_prefix, may_be_prefixed

    _, starts, ends = _tokens(text, [], shape)
    for start, end in zip(starts.tolist(), ends.tolist()):
        if _value_prefix(text, start, end)[0]:
            assert may_be_prefixed(text, start, end)


def test_opposed_is_a_rise_against_a_fall():
    from citekit._citations.directions import FALL, RISE, opposed

    assert (FALL, RISE) == (1, 2)  # the bits of directions_in
    both = FALL | RISE
    assert {(a, b) for a in range(4) for b in range(4) if opposed(a, b)} == {
        (FALL, RISE), (RISE, FALL), (FALL, both), (both, FALL), (RISE, both), (both, RISE),
        (both, both),
    }


def test_opposed_directions_compare_changes_and_levels_apart():
    from citekit._citations.directions import _opposed_directions

    codes = range(-2, 3)  # -1 / 1: a fall / rise; -2 / 2: the level one ended at
    assert {(a, b) for a in codes for b in codes if _opposed_directions(a, b)} == {
        (1, -1), (-1, 1), (2, -2), (-2, 2)
    }


@settings(max_examples=300, deadline=None)
@given(value_texts, value_texts, st.data())
def test_opposed_values_lie_in_texts_of_opposed_words(text, other, data):
    # the pipeline compares a sentence with a passage only where their direction words
    # (directions_in) are opposed: every pair of values read as opposed must pass
    from citekit._citations.directions import _opposite_directions, directions_in, opposed

    def span(of):
        start = data.draw(st.integers(0, len(of)))
        return start, data.draw(st.integers(start, min(len(of), start + 6)))

    (start, end), (other_start, other_end) = span(text), span(other)
    if _opposite_directions(text, start, end, other, other_start, other_end):
        bits = directions_in(text, start, end)
        other_bits = directions_in(other, other_start, other_end)
        assert opposed(bits, other_bits)


def test_rise_against_fall_through_both_paths():
    from citekit._citations.directions import _opposite_directions, directions_in, opposed

    rose, fell, rose_to = "Sales rose 3%.", "Sales fell 3%.", "Sales rose to 3%."
    assert _opposite_directions(rose, 11, 12, fell, 11, 12)
    assert opposed(directions_in(rose, 11, 12), directions_in(fell, 11, 12))
    # a level against a change: no conflict, though the words are opposed
    assert not _opposite_directions(rose_to, 14, 15, fell, 11, 12)
    assert opposed(directions_in(rose_to, 14, 15), directions_in(fell, 11, 12))
    assert not _opposite_directions(rose, 11, 12, rose_to, 14, 15)
    assert not opposed(directions_in(rose, 11, 12), directions_in(rose_to, 14, 15))


def test_passage_directions_reads_each_passage_once():
    from citekit._citations.directions import FALL, RISE, directions_in, passage_directions
    from citekit.corpus import Corpus

    corpus = Corpus.build(
        ["Sales rose 3% in 2023.", "Costs fell 2% while sales rose.", "Nothing moved."]
    )
    got = []
    for passage in range(corpus.n_passages):
        lo, hi = int(corpus.passage_token_start[passage]), int(corpus.passage_token_end[passage])
        text = corpus.source_text(int(corpus.passage_source[passage]))
        bits = passage_directions(corpus, passage, lo, hi, text)
        assert bits == directions_in(
            text, int(corpus.token_starts[lo]), int(corpus.token_ends[hi - 1])
        )
        got.append(bits)
    assert got == [RISE, FALL | RISE, 0]
    cache = corpus.caches["passage_directions"]
    assert cache == {0: RISE, 1: FALL | RISE, 2: 0}
    # kept per passage: a second call reads the cache, not the text
    cache[0] = FALL
    assert passage_directions(corpus, 0, 0, 0, "") == FALL
    # a passage without tokens holds no direction word
    assert passage_directions(corpus, 7, 3, 3, "Sales rose.") == 0
