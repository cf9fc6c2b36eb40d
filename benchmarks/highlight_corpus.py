"""Seeded (answer, chunk) pairs for the highlighter: parity goldens and benchmark inputs.

Pure standard library, so it runs in the peers' environment too. Two uses:

* Parity goldens (inputs plus citeglow 0.1.2's outputs), regenerated in the peers'
  venv (its python in ``CITEKIT_PEER_PYTHON``, see ``benchmarks/README.rst``) with::

      "$CITEKIT_PEER_PYTHON" benchmarks/highlight_corpus.py \
          --golden tests/data/highlight_golden.json.gz

  ``tests/test_highlight_parity.py`` checks citekit against that file.
* Benchmark inputs: :func:`benchmark_pair` builds a multi-line prose chunk of a given size
  and an answer that paraphrases one of its sentences (``benchmarks/highlight.py``).

The corpus mixes English prose with stop words, repeated phrases, Vietnamese, Greek
(final sigma), Turkish (dotted capital I), German, emoji, random code points from every
plane, CRLF and blank-line paragraphs,
bullets, ``<cite>`` tags, Chinese / Japanese / Thai for ``tokenizer="char"``; answers copy,
shuffle, trim, paraphrase or ignore parts of the chunk; about 65 % of the pairs use default
options and the rest vary every option.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from typing import Any

ENGLISH = (
    "refund window days unused items shipping calculated checkout returned within delivery "
    "opened software licenses refundable policy customer support hours monday friday "
    "revenue grew percent quarter company reported earnings profit margin market share "
    "growth forecast analysts expected annual report board directors meeting approved "
    "budget project deadline engineering team released version update security patch "
    "vulnerability server database backup restore migration schedule weekend maintenance "
    "window outage minutes users affected incident review root cause network latency "
    "region cluster storage capacity memory usage limit request timeout retry error code "
    "warranty covers defects manufacturing materials workmanship period purchase receipt "
    "invoice payment method credit card bank transfer account balance statement monthly "
    "river valley mountain forest climate rainfall temperature season summer winter "
    "population city capital museum history century built ancient temple emperor dynasty "
    "patient doctor treatment dose tablet daily symptoms fever cough clinical trial results "
    "students course exam grade semester library research paper published journal author"
).split()
STOP = (
    "a an and are as at be but by for from had has have he her his i if in is it its me my "
    "of on or our she so that the their them they this to was we were will with you your"
).split()
VIETNAMESE = (
    "chính sách hoàn tiền trong vòng ngày kể từ khi nhận hàng sản phẩm chưa sử dụng được "
    "đổi trả miễn phí khách hàng liên hệ bộ phận hỗ trợ là và của một các có không để với"
).split()
GREEK = "ΟΔΟΣ ΝΟΜΟΣ Σοφία σοφός λόγος ΚΟΣΜΟΣ ΣΟΦΟΣ Ἀθῆναι πόλις ΛΑΟΣ".split()
TURKISH = "İstanbul İzmir İSTANBUL ışık iyi İyi kİtap Ilık çalışma".split()
OTHER = "Straße STRASSE ﬁnal café Café naïve ＲＥＶＥＮＵＥ １５％ 15% Σ ǅ ß ẞ".split()
EMOJI = ["🙂", "🚀", "👍🏽", "🇻🇳", "e\u0301", "x\u200dy", "\u00a0", "\u2028", "𝔘𝔫𝔦"]
CJK = [
    "退款期限为三十天。",
    "未使用的商品可以在交货后三十天内退货。",
    "已打开的软件许可证不予退款。",
    "運送料はチェックアウト時に計算されます。",
    "東京は日本の首都です！",
    "วันหยุดสุดสัปดาห์ร้านปิด",
    "ลูกค้าสามารถคืนสินค้าได้ภายในสามสิบวัน",
    "第二季度收入增长了百分之十五？",
]
CUSTOM_REGEXES = [
    r"<cite>.*?</cite>",
    r"(?s)(?:^|\n\n).*?(?=\n\n|$)",
    r"[^.!?\n]+[.!?]?",
    r"\S+",
    r"(?m)^.*$",
    r"[^\r\n]+",
]


def _word(rng: random.Random, language: str) -> str:
    if language == "en":
        pool = STOP if rng.random() < 0.35 else ENGLISH
        word = rng.choice(pool)
        roll = rng.random()
        if roll < 0.06:
            word = word.capitalize()
        elif roll < 0.08:
            word = word.upper()
        elif roll < 0.10:
            word = str(rng.randint(0, 2030))
        return word
    if language == "vi":
        return rng.choice(VIETNAMESE)
    if language == "mixed":
        return rng.choice(ENGLISH + STOP + GREEK + TURKISH + OTHER + EMOJI + VIETNAMESE)
    if language == "unicode":
        # code points from every plane (no surrogates: JSON cannot hold them), often
        # combining marks, separators, digits of other scripts, final-sigma contexts
        if rng.random() < 0.3:
            return rng.choice(GREEK + TURKISH + OTHER + EMOJI + STOP)
        chars = []
        for _ in range(rng.randint(1, 7)):
            code_point = rng.choice([rng.randrange(0x20, 0x250), rng.randrange(0x250, 0x3000),
                                     rng.randrange(0x3000, 0xD800), rng.randrange(0xE000, 0x30000)])
            chars.append(chr(code_point))
        return "".join(chars)
    raise ValueError(language)


def _sentence(rng: random.Random, language: str, n_words: int | None = None) -> str:
    if language == "cjk":
        return rng.choice(CJK)
    n_words = n_words or rng.randint(3, 18)
    words = [_word(rng, language) for _ in range(n_words)]
    for position in range(1, len(words)):
        if rng.random() < 0.08:
            words[position - 1] += rng.choice([",", ";", ":", " -", " (", ")"])
    words[0] = words[0][:1].upper() + words[0][1:]
    end = rng.choice([".", ".", ".", "!", "?", "…", "", ":"])
    return " ".join(words) + end


def _chunk(rng: random.Random, language: str, n_sentences: int) -> str:
    sentences = [_sentence(rng, language) for _ in range(n_sentences)]
    if rng.random() < 0.3 and len(sentences) > 2:
        # repeated phrases: copy a sentence (or half of one) elsewhere
        copied = rng.choice(sentences)
        if rng.random() < 0.5:
            copied = " ".join(copied.split()[: max(2, len(copied.split()) // 2)])
        sentences.insert(rng.randrange(len(sentences)), copied)
    if rng.random() < 0.15:
        sentences = [f"<cite>{s}</cite>" if rng.random() < 0.5 else s for s in sentences]
    pieces = []
    for sentence in sentences:
        roll = rng.random()
        if roll < 0.15:
            sentence = rng.choice(["- ", "* ", "1. ", "• "]) + sentence
        pieces.append(sentence)
        pieces.append(
            rng.choice([" ", " ", " ", "\n", "\n", "\n\n", "\r\n", "\n \n", "\t", "  ", "\n\n\n"])
        )
    text = "".join(pieces).rstrip(" ")
    if rng.random() < 0.1:
        text = rng.choice(["\n", "  ", "\r\n", "# Title\n"]) + text
    return text


def _answer(rng: random.Random, chunk: str, language: str) -> str:
    lines = [line for line in chunk.replace("\r", "\n").split("\n") if line.strip()]
    roll = rng.random()
    if roll < 0.08 or not lines:
        return _sentence(rng, language)  # unsupported answer
    if roll < 0.2:
        return rng.choice(lines).strip()  # exact copy of a line
    if language == "cjk":
        line = rng.choice(lines)
        start = rng.randrange(len(line))
        return line[start:start + rng.randint(2, 12)] + rng.choice(CJK)[: rng.randint(0, 5)]
    words = " ".join(rng.sample(lines, min(len(lines), rng.randint(1, 3)))).split()
    start = rng.randrange(len(words))
    words = words[start:start + rng.randint(3, 25)]
    edited = []
    for word in words:
        action = rng.random()
        if action < 0.12:
            continue  # dropped
        if action < 0.22:
            edited.append(_word(rng, language))  # paraphrased
        elif action < 0.27:
            edited.append(rng.choice(STOP))
            edited.append(word)
        elif action < 0.32:
            edited.append(word.upper() if rng.random() < 0.5 else word.lower())
        else:
            edited.append(word)
    if rng.random() < 0.25 and len(edited) > 3:
        cut = rng.randrange(1, len(edited) - 1)
        edited = edited[cut:] + edited[:cut]  # clauses reordered
    if rng.random() < 0.2:
        edited = [_word(rng, language) for _ in range(rng.randint(1, 4))] + edited
    return " ".join(edited) + rng.choice([".", "", "!", " (see source)."])


def _kwargs(rng: random.Random, language: str) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if language == "cjk":
        kwargs["tokenizer"] = "char"
    if rng.random() < 0.65:
        return kwargs
    options: dict[str, Any] = {}
    if rng.random() < 0.5:
        kwargs["keep_longest_only"] = False  # several passages per chunk
        if rng.random() < 0.5:
            options["max_highlight_ratio"] = 2.0  # ... that the valve does not collapse
    choices = rng.sample(range(1, 12), rng.randint(1, 3))
    for choice in choices:
        if choice == 0:
            kwargs["keep_longest_only"] = False
        elif choice == 1:
            kwargs["neighborhood_tokens"] = rng.choice([0, 1, 2, 10, 25])
        elif choice == 2:
            kwargs["min_span_words"] = rng.choice([1, 3, 5])
        elif choice == 3:
            kwargs["min_vocab_token_chars"] = rng.choice([1, 3, 6])
        elif choice == 4:
            kwargs["stop_words"] = rng.choice(
                [[], ["The", "AND", "of"], STOP + ["refund", "days"], ["là", "và", "của"]]
            )
        elif choice == 5:
            kwargs["tokenizer"] = "char"
        elif choice == 6:
            kwargs["expand_spans"] = False
        elif choice == 7:
            kwargs["span_expansion_regex"] = rng.choice(CUSTOM_REGEXES)
        elif choice == 8:
            options["lcs_merge_gap_tokens"] = rng.choice([0, 1, 5])
        elif choice == 9:
            options["lcs_min_run_tokens"] = rng.choice([1, 3])
        elif choice == 10:
            options["lcs_min_single_token_chars"] = rng.choice([1, 3, 8])
        elif choice == 11:
            options["max_highlight_ratio"] = rng.choice([0.05, 0.2, 0.9, 2.0])
    if options:
        kwargs["options"] = options
    return kwargs


def documented_examples() -> list[dict[str, Any]]:
    """The calls shown in the highlighter documentation, with its Quick Start texts."""
    answer = "The refund window is 30 days for unused items."
    source = (
        "Shipping is calculated at checkout.\n"
        "Unused items can be returned within 30 days of delivery for a refund.\n"
        "Opened software licenses are not refundable."
    )
    default_stop = STOP + (
        "là và của trong một các có không để được với cho từ đã sẽ này đó thì nhưng hoặc "
        "khi nếu vì bởi đến tại cũng hay rằng mà ở nên"
    ).split()
    return [
        {"answer": answer, "chunk": source, "kwargs": {}},
        {"answer": answer, "chunk": source, "kwargs": {
            "neighborhood_tokens": 10, "min_span_words": 1, "min_vocab_token_chars": 1,
            "stop_words": ["the", "and", "of"], "tokenizer": "char", "expand_spans": False}},
        {"answer": answer, "chunk": source, "kwargs": {"options": {
            "neighborhood_tokens": 10, "min_span_words": 1, "min_vocab_token_chars": 1,
            "stop_words": default_stop + ["custom", "domain", "terms"],
            "tokenizer": "unicode_word", "expand_spans": True,
            "span_expansion_regex": r"[^\r\n]+"}}},
        {"answer": "alpha beta", "chunk": "prefix <cite>alpha beta evidence</cite> suffix",
         "kwargs": {"span_expansion_regex": r"<cite>.*?</cite>"}},
        {"answer": answer, "chunk": source,
         "kwargs": {"span_expansion_regex": r"(?s)(?:^|\n\n).*?(?=\n\n|$)"}},
        {"answer": answer, "chunk": source, "kwargs": {"options": {
            "stop_words": default_stop + ["section", "article", "page"]}}},
        {"answer": answer, "chunk": source,
         "kwargs": {"options": {"stop_words": ["le", "la", "les", "de", "des"]}}},
        {"answer": answer, "chunk": source, "kwargs": {"tokenizer": "char"}},
    ]


def generate_pairs(n_pairs: int = 1200, seed: int = 20261130) -> list[dict[str, Any]]:
    """``n_pairs`` generated cases (``answer``, ``chunk``, ``kwargs``) after the documented ones."""
    rng = random.Random(seed)
    pairs = documented_examples()
    languages = ["en"] * 14 + ["vi"] * 2 + ["mixed"] * 3 + ["cjk"] * 2 + ["unicode"] * 2
    for _ in range(n_pairs):
        language = rng.choice(languages)
        n_sentences = rng.choice([1, 2, 4, 8, 15, 30, 60]) if rng.random() < 0.97 else 300
        chunk = _chunk(rng, language, n_sentences)
        pairs.append(
            {"answer": _answer(rng, chunk, language), "chunk": chunk,
             "kwargs": _kwargs(rng, language)}
        )
    return pairs


def benchmark_pair(n_chars: int, seed: int = 0, answer_sentences: int = 1) -> tuple[str, str]:
    """A multi-line English chunk of exactly ``n_chars`` characters and a grounded answer.

    The answer paraphrases ``answer_sentences`` consecutive sentences from the middle of the
    chunk (drops about 15 % of their words, swaps two, adds a few words of its own), like a
    generated answer that reuses its source's wording.
    """
    rng = random.Random(seed)
    sentences = []
    length = 0
    while length < n_chars or len(sentences) < answer_sentences:
        sentence = _sentence(rng, "en", rng.randint(8, 20))
        sentences.append(sentence)
        length += len(sentence) + 1
    separators = [rng.choice([" ", " ", "\n", "\n\n"]) for _ in sentences]
    chunk = "".join(s + sep for s, sep in zip(sentences, separators))[:n_chars]
    first = max(0, len(sentences) // 2 - answer_sentences // 2)
    while first > 0 and sum(len(s) + 1 for s in sentences[:first + answer_sentences]) > n_chars:
        first -= 1  # keep the paraphrased sentences inside the cut chunk
    answer_words = ["In", "short,"]
    for sentence in sentences[first:first + answer_sentences]:
        words = [w for w in sentence.split() if rng.random() > 0.15]
        if len(words) > 4:
            words[1], words[2] = words[2], words[1]
        answer_words += words
    answer = " ".join(answer_words + ["according", "to", "the", "source."])
    return answer, chunk


def run_citeglow(pairs: list[dict[str, Any]]) -> list[list[list[int]]]:
    """citeglow's output for every pair (run in an environment where citeglow is installed)."""
    import citeglow

    outputs = []
    for pair in pairs:
        kwargs = dict(pair["kwargs"])
        if "options" in kwargs:
            kwargs["options"] = citeglow.HighlightOptions(**kwargs["options"])
        spans = citeglow.find_answer_highlights(pair["answer"], pair["chunk"], **kwargs)
        outputs.append([[start, end] for start, end in spans])
    return outputs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--golden", required=True, help="output .json or .json.gz path")
    parser.add_argument("--pairs", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args(argv)
    import importlib.metadata

    pairs = generate_pairs(args.pairs, args.seed)
    outputs = run_citeglow(pairs)
    for pair, spans in zip(pairs, outputs):
        pair["citeglow"] = spans
    import dataclasses

    import citeglow

    defaults = {
        field.name: field.default for field in dataclasses.fields(citeglow.HighlightOptions)
    }
    defaults["stop_words"] = sorted(defaults["stop_words"])
    document = {
        "generator": "benchmarks/highlight_corpus.py",
        "citeglow_version": importlib.metadata.version("citeglow"),
        "citeglow_option_defaults": defaults,
        "seed": args.seed,
        "pairs": pairs,
    }
    payload = json.dumps(document, ensure_ascii=False, indent=0).encode("utf-8")
    if args.golden.endswith(".gz"):
        payload = gzip.compress(payload, mtime=0)  # mtime=0: same inputs, same bytes
    with open(args.golden, "wb") as handle:
        handle.write(payload)
    n_nonempty = sum(1 for spans in outputs if spans)
    print(f"{len(pairs)} pairs, {n_nonempty} with highlights -> {args.golden}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
