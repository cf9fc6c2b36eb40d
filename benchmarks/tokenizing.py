"""Throughput of citekit's normalize + tokenize, side by side with peers, in one run.

Usage::

    python benchmarks/tokenizing.py --peer-python PATH   # 4 MB per corpus, 5 repeats
    python benchmarks/tokenizing.py --mb 8 --repeats 7   # peer from $CITEKIT_PEER_PYTHON
    python benchmarks/tokenizing.py --peer-python ""     # skip cite-right

``--peer-python`` (or the environment variable ``CITEKIT_PEER_PYTHON``) is the python of
a venv with cite-right 0.4.0 (see ``benchmarks/README.rst``). Without it, with an empty
value, or when the path does not exist, the script says so on stderr and measures citekit
and the regex baseline alone (the ``vs cite-right Rust`` column shows ``-``).

Generated corpora of ~2 KB documents (a realistic source size; the same seed gives
the same text every run):

- ``english``: ASCII English prose with numbers, percentages, currency, hyphenated words,
  apostrophes and abbreviations;
- ``english-typographic``: the same prose with curly quotes and apostrophes and em dashes
  (non-ASCII, but replaced one for one by ASCII stand-ins, so still the kernel path);
- ``english-few-unicode``: the ASCII prose with a few ``€`` amounts (``€310``,
  ``1,200€``), accented words (``café``, ``naïve``) and em dashes, about one such word
  per sentence (all read by citekit's kernel since it reads precomposed letters; before,
  the words around them took the general path);
- ``european``: French, German, Spanish, Portuguese, Italian and Nordic prose (one
  language per document) from word lists rich in accented letters (``é``, ``ü``, ``ß``,
  ``ñ``, ``ç``, ``ø``, ``œ``, ``ã``), with typographic apostrophes and guillemets,
  decimal commas, ``€`` amounts and percentages (read by citekit's kernel alone);
- ``english-emoji``: the ASCII prose of chat and social posts, an emoji after about every
  other sentence (nine in ten of one code point, read by citekit's kernel; one in ten a
  sequence: a skin tone, a ZWJ family, a flag or ``❤️``, whose word takes the general path);
- ``mixed``: documents mixing English, accented Latin, Cyrillic, Arabic, Devanagari,
  Chinese, Japanese, Thai and emoji: citekit's hybrid path (the kernel for the text it
  reads, the general path for the words around the other characters);
- ``chinese``, ``japanese``, ``arabic``, ``russian``, ``hindi``: one script per corpus (the
  languages of the specification's exact-copy tests), news-style sentences drawn from a
  dozen per language with random numbers and percentages (Arabic with Arabic-Indic
  digits half of the time, ``٪``, ``،``; Chinese and Japanese with ``，``/``、``, ``。``,
  ``「」``, ASCII and full-width digits). Chinese, Japanese, Arabic and Russian are read by
  citekit's kernel alone; Hindi words with a vowel sign, virama or nukta (most of them)
  take the general path.

Measured, each on every document of a corpus (one core, nothing in parallel):

- ``citekit SimpleTokenizer``: :meth:`SimpleTokenizer.tokenize` (NFKC + casefold + number /
  percent / currency folding + ids + spans into the original text), one tokenizer reused
  across documents as the pipeline does;
- ``citekit normalize_text``: the offset-mapped normalization alone;
- ``citekit general path only``: ``SimpleTokenizer._tokenize_unicode``, the general path
  on the whole document, which is what ``tokenize`` did for any document with a
  character the kernel cannot read before the hybrid path (same output);
- ``re.finditer baseline``: ``[m.span() for m in re.finditer(r"\\w+", doc)]``: no
  normalization, no ids; the floor for any regex tokenizer in Python;
- ``cite-right SimpleTokenizer``: ``cite_right.text.tokenizer.SimpleTokenizer().tokenize``
  (cite-right 0.4.0, pure Python), run by ``--peer-python`` in a subprocess on the same
  text;
- ``cite-right Rust prepare``: ``cite_right._core.rust_tokenize_and_prepare(docs, 1, 1)``,
  cite-right's Rust path, which tokenizes AND segments, windows and builds an inverted
  index, so it does more than a tokenizer: compare it with ``citekit corpus path``.

- ``citekit segment_sentences``: sentence spans, for scale (the pipeline segments first);
- ``citekit segment+tokenize``: sentences, one-sentence passage windows, and token ids and
  spans: the tokenizer-side share of cite-right's Rust prepare below;
- ``citekit corpus path``: what ``Pipeline.prepare`` does to all documents at once, the
  same stages as cite-right's Rust prepare: ``tokenize_and_segment`` (one kernel call each
  for tokens and sentences, one general-path call for the pieces the kernel cannot read),
  then ``corpus_arrays`` (one-sentence windows and the inverted index);

Every repeat prefixes each document with a repeat number, so no implementation can answer
from a cache keyed by the text (cite-right's span finder has an ``lru_cache`` on the text).
Repeats are interleaved (every implementation once, then again), and time is the CPU time
of the measuring process (``time.process_time``), because the benchmark machine may be
shared: wall-clock time there measures the neighbours. Throughput is MB of UTF-8 text per
CPU second (1 MB = 10**6 bytes), median over repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable

from workload import add_peer_python_option, peer_python

ENGLISH_WORDS = """
the of and to in a is that for it as was with be by on not he this are or his from at which
but have an they you were her she there been one all we their has would when if so no will
more about can said its who up out them into time some only other than then could my these
revenue growth company's state-of-the-art model results market quarter increase decrease
percent share customers product analysis report data research study evidence source model's
significant higher lower annual total average cost price sales profit loss year years
government policy economic financial investment capital interest rate inflation bank
technology system network software hardware performance efficiency long-term short-term
well-known decision-making it's don't isn't we're they've university scientists patients
treatment clinical trial outcome risk factor population health climate temperature energy
""".split()
NAMES = ["Dr. Smith", "Mr. Jones", "J. K. Rowling", "the U.S.", "Acme Inc.", "Prof. Lee"]
MIXED_SENTENCES = [
    "Le chiffre d'affaires a augmenté de 5,2 % à 1 200 €, selon l'étude.",
    "Die Straße wurde für 3,5 Mio. € erneuert; das Ergebnis übertraf die Erwartungen.",
    "Выручка компании выросла на 15% за последний квартал.",
    "ارتفعت الإيرادات بنسبة ١٥٪ في الربع الأخير من العام.",
    "कंपनी का राजस्व पिछले वर्ष १५ प्रतिशत बढ़ा।",
    "会社の売上高は前年比15%増加し、過去最高を記録した。",
    "该公司的收入在上一季度增长了百分之十五。",
    "รายได้ของบริษัทเพิ่มขึ้นร้อยละ 15 ในไตรมาสที่แล้ว",
    "Great results this quarter 👍🏽 — the team 👨‍👩‍👧 celebrated 🎉.",
    "Ｔｈｅ ﬁnal ＲＥＰＯＲＴ showed ①②③ and 10㎏ of café samples.",
]


def english_document(rng: random.Random, typographic: bool) -> str:
    sentences = []
    size = 0
    while size < 2000:
        words = [rng.choice(ENGLISH_WORDS) for _ in range(rng.randint(8, 24))]
        roll = rng.random()
        if roll < 0.2:
            words.insert(rng.randrange(len(words)), f"{rng.randint(1, 99)}.{rng.randint(0, 9)}%")
        elif roll < 0.35:
            words.insert(
                rng.randrange(len(words)), f"${rng.randint(1, 999)},{rng.randint(100, 999)}"
            )
        elif roll < 0.45:
            words.insert(rng.randrange(len(words)), rng.choice(NAMES))
        if rng.random() < 0.3:
            words.insert(rng.randrange(1, len(words)), words.pop() + ",")
        sentence = " ".join(words)
        if typographic:
            if rng.random() < 0.3:
                sentence = f"“{sentence}”"
            sentence = sentence.replace("'", "’").replace(" , ", " — ")
            if rng.random() < 0.3:
                sentence += " — indeed"
        sentence = sentence[0].upper() + sentence[1:] + rng.choice([".", ".", ".", "?", "!"])
        sentences.append(sentence)
        size += len(sentence) + 1
    return " ".join(sentences)


FEW_UNICODE_WORDS = ["€{}", "{},200€", "café", "naïve", "résumé", "—", "Zürich", "déjà"]


def few_unicode_document(rng: random.Random) -> str:
    """English prose with about one word per sentence that is neither ASCII nor typographic."""
    sentences = english_document(rng, typographic=False).split(". ")
    for index, sentence in enumerate(sentences):
        words = sentence.split(" ")
        word = rng.choice(FEW_UNICODE_WORDS).format(rng.randint(1, 999))
        words.insert(rng.randrange(len(words) + 1), word)
        sentences[index] = " ".join(words)
    return ". ".join(sentences)


EUROPEAN_WORDS = {
    "french": """
le la les des une été très à où déjà après être société année résultats économie
prévisions croissance hausse baisse marché élevé réseau stratégie évolution dépenses
intérêt privé général sécurité santé étude données recherche françaises côté même
cœur œuvre manœuvre garçon reçu français leçon façon naïve noël hôpital forêt château
""",
    "german": """
der die das und für über größer Straße Maße schön Ergebnis Erwartungen übertraf Umsatz
Wachstum Bevölkerung Gebäude Größe Prüfung Lösung müssen können Käufer Märkte Ökonomie
Österreich Zürich Geschäftsjahr Grundstück Öffentlichkeit Verhältnis Bürger ähnlich
außerdem Fußball weiß heißt Schlüssel Qualität Gemüse Bäcker Mühle täglich""",
    "spanish": """
el la los las año años niño español también más según económico política crecimiento
mañana compañía información inversión población razón señal pequeño después además
análisis países públicos acción región situación últimos producción educación sí aún
""",
    "portuguese": """
o a os as não são também então ação informação população situação coração irmã
mãe pão avó será está através já órgão país países econômico público crescimento
negócios previsões últimos ninguém também português organização""",
    "italian": """
il lo la gli le è più però perché città università qualità attività società già può
così caffè virtù metà lunedì sarà crescita economia mercato ricerca risultati dati
""",
    "nordic": """
og i på er til av med for både også år årets økonomi økning kjøpt små større første
nærmere søndag Ærø Ålesund Malmö Göteborg Tromsø försäljning tillväxt förväntningar
kunder företag påverkan hälsa øst søster færre København""",
}


def european_document(rng: random.Random) -> str:
    """Prose in one European language: accented words, ’ and « », decimal commas, €."""
    words_of_language = EUROPEAN_WORDS[rng.choice(sorted(EUROPEAN_WORDS))].split()
    sentences = []
    size = 0
    while size < 2000:
        words = [rng.choice(words_of_language) for _ in range(rng.randint(8, 24))]
        roll = rng.random()
        if roll < 0.2:
            words.insert(rng.randrange(len(words)), f"{rng.randint(1, 99)},{rng.randint(0, 9)} %")
        elif roll < 0.35:
            amount = f"{rng.randint(1, 999)} {rng.randint(100, 999)} €"
            words.insert(rng.randrange(len(words)), amount)
        elif roll < 0.45:
            words.insert(rng.randrange(len(words)), f"« {rng.choice(words_of_language)} »")
        if rng.random() < 0.3:
            index = rng.randrange(len(words))
            words[index] = rng.choice(["l’", "d’", "qu’", "dell’"]) + words[index]
        if rng.random() < 0.3:
            words.insert(rng.randrange(1, len(words)), words.pop() + ",")
        sentence = " ".join(words)
        sentence = sentence[0].upper() + sentence[1:] + rng.choice([".", ".", ".", "?", "!"])
        sentences.append(sentence)
        size += len(sentence) + 1
    return " ".join(sentences)


EMOJI = ["😀", "😂", "🚀", "👍", "🎉", "✅", "🔥", "💡", "📈", "☕", "🙏", "😅", "🤔", "👀", "💯"]
EMOJI_SEQUENCES = ["👍🏽", "👨‍👩‍👧", "🇺🇸", "❤️"]


def emoji_document(rng: random.Random) -> str:
    """English prose with an emoji after about every other sentence."""
    sentences = english_document(rng, typographic=False).split(". ")
    out = []
    for sentence in sentences:
        if rng.random() < 0.5:
            emoji = rng.choice(EMOJI_SEQUENCES if rng.random() < 0.1 else EMOJI)
            sentence = f"{sentence} {emoji}"
        out.append(sentence)
    return ". ".join(out)


def mixed_document(rng: random.Random) -> str:
    parts = []
    size = 0
    while size < 2000:
        if rng.random() < 0.4:
            part = english_document(rng, typographic=False)[: rng.randint(80, 240)]
        else:
            part = rng.choice(MIXED_SENTENCES)
        parts.append(part)
        size += len(part) + 1
    return " ".join(parts)


SCRIPT_SENTENCES = {
    "chinese": [
        "该公司的收入在上一季度增长了{p}%，达到{n}亿元。",
        "研究人员发现，这种治疗方法可以将风险降低{p}%。",
        "根据最新报告，全球气温在过去{n}年中持续上升。",
        "政府宣布将在未来{n}年内投资更多资金用于基础设施建设。",
        "市场分析师认为，通货膨胀率将在明年有所下降。",
        "这项研究共有{n}名患者参加，结果显示效果显著。",
        "“我们对这个结果非常满意，”首席执行官说。",
        "银行将利率上调了{p}个百分点，影响了投资者的信心。",
        "该技术系统的效率比旧系统高出{f}倍。",
        "据统计，去年共有{n}万人访问了这个城市。",
        "专家指出，气候变化对农业生产的影响越来越明显。",
        "公司计划在{n}年推出新的软件产品。",
    ],
    "japanese": [
        "会社の売上高は前年比{p}%増加し、過去最高を記録した。",
        "研究チームは{n}人の患者を対象に臨床試験を行った。",
        "東京の気温は昨日{n}度まで上昇しました。",
        "政府は新しい経済政策を発表し、市場は好意的に反応した。",
        "「この結果は非常に重要です」と教授は述べた。",
        "エネルギー価格の上昇により、インフレ率は{p}%に達した。",
        "データの分析によると、顧客満足度が向上している。",
        "同社は{n}年に新しいソフトウェアを発売する予定だ。",
        "銀行は金利を引き上げ、投資家の間に不安が広がった。",
        "調査では、回答者の{p}％が改革を支持すると答えた。",
        "専門家は、気候変動が農業に与える影響を指摘している。",
        "新しいシステムの効率は従来の{f}倍になった。",
    ],
    "arabic": [
        "ارتفعت الإيرادات بنسبة {p}٪ في الربع الأخير من العام.",
        "أظهرت الدراسة أن العلاج يقلل من خطر الإصابة بنسبة {p}٪.",
        "أعلنت الحكومة عن خطة جديدة للاستثمار في البنية التحتية.",
        "شارك في التجربة السريرية {n} مريضا من عدة دول.",
        "قال المدير التنفيذي إن الشركة حققت نتائج قوية هذا العام.",
        "ارتفعت درجات الحرارة في المدينة إلى {n} درجة مئوية.",
        "يتوقع المحللون أن ينخفض معدل التضخم في العام المقبل.",
        "بلغت قيمة الصفقة {n} مليون دولار، وفقا للتقرير.",
        "هل تؤثر أسعار الفائدة على قرارات المستثمرين؟",
        "أكد الباحثون أن النتائج تحتاج إلى دراسات إضافية.",
        "زاد عدد العملاء بمقدار {n} ألف عميل خلال عام {n}.",
        "تعمل الشركة على تطوير أنظمة الطاقة المتجددة.",
    ],
    "russian": [
        "Выручка компании выросла на {p}% за последний квартал.",
        "В исследовании приняли участие {n} пациентов из нескольких стран.",
        "Правительство объявило о новой программе инвестиций в инфраструктуру.",
        "По словам аналитиков, инфляция снизится в следующем году.",
        "«Мы очень довольны результатом», — сказал генеральный директор.",
        "Температура в городе поднялась до {n} градусов.",
        "Стоимость сделки составила {n} млн долларов, говорится в отчёте.",
        "Банк повысил ключевую ставку на {f} процентного пункта.",
        "Учёные считают, что изменение климата влияет на урожайность.",
        "Компания планирует выпустить новое программное обеспечение в {n} году.",
    ],
    "hindi": [
        "कंपनी का राजस्व पिछले वर्ष {p} प्रतिशत बढ़ा।",
        "अध्ययन में {n} मरीजों ने भाग लिया।",
        "सरकार ने नई आर्थिक नीति की घोषणा की।",
        "विशेषज्ञों का मानना है कि महंगाई कम होगी।",
        "शहर का तापमान कल {n} डिग्री तक पहुंच गया।",
        "बैंक ने ब्याज दर में {f} प्रतिशत की वृद्धि की।",
        "शोधकर्ताओं ने कहा कि परिणाम बहुत महत्वपूर्ण हैं।",
        "इस सौदे का मूल्य {n} करोड़ रुपये था।",
        "जलवायु परिवर्तन का खेती पर असर बढ़ रहा है।",
        "कंपनी अगले साल नया सॉफ्टवेयर जारी करेगी।",
    ],
}
_ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
_FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def script_document(rng: random.Random, language: str) -> str:
    """About 2 KB of sentences in one language, with fresh numbers in each sentence."""
    sentences = []
    size = 0
    while size < 2000:
        sentence = rng.choice(SCRIPT_SENTENCES[language]).format(
            n=rng.randint(2, 2030),
            p=rng.randint(1, 99),
            f=f"{rng.randint(1, 9)}.{rng.randint(0, 9)}",
        )
        if language == "arabic" and rng.random() < 0.5:
            sentence = sentence.translate(_ARABIC_INDIC)
        elif language in ("chinese", "japanese") and rng.random() < 0.2:
            sentence = sentence.translate(_FULL_WIDTH)
        sentences.append(sentence)
        size += len(sentence.encode("utf-8")) + 1
    separator = "" if language in ("chinese", "japanese") else " "
    return separator.join(sentences)


def make_corpus(kind: str, megabytes: float, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    documents: list[str] = []
    total = 0
    while total < megabytes * 1e6:
        if kind == "mixed":
            document = mixed_document(rng)
        elif kind in SCRIPT_SENTENCES:
            document = script_document(rng, kind)
        elif kind == "english-few-unicode":
            document = few_unicode_document(rng)
        elif kind == "english-emoji":
            document = emoji_document(rng)
        elif kind == "european":
            document = european_document(rng)
        else:
            document = english_document(rng, typographic=kind == "english-typographic")
        documents.append(document)
        total += len(document.encode("utf-8"))
    return documents


def time_once(run: Callable[[list[str]], object], documents: list[str], repeat: int) -> float:
    """CPU seconds of one pass over documents this implementation has never seen before."""
    fresh = [f"r{repeat} {document}" for document in documents]
    start = time.process_time()
    run(fresh)
    return time.process_time() - start


PEER_SCRIPT = r"""
import json, sys, time
from cite_right.text.tokenizer import SimpleTokenizer
from cite_right._core import rust_tokenize_and_prepare
documents = json.load(open(sys.argv[1], encoding="utf-8"))
repeat = int(sys.argv[2])
result = {}
fresh = [f"r{repeat} {d}" for d in documents]
tokenizer = SimpleTokenizer()
start = time.process_time()
for d in fresh:
    tokenizer.tokenize(d)
result["cite-right SimpleTokenizer"] = time.process_time() - start
fresh = [f"s{repeat} {d}" for d in documents]
start = time.process_time()
rust_tokenize_and_prepare(fresh, 1, 1)
result["cite-right Rust prepare"] = time.process_time() - start
print(json.dumps(result))
"""


def run_peer(peer_interpreter: str, corpus_path: str, repeat: int) -> dict[str, float]:
    completed = subprocess.run(
        [peer_interpreter, "-c", PEER_SCRIPT, corpus_path, str(repeat)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=4.0, help="MB of text per corpus")
    parser.add_argument("--repeats", type=int, default=5)
    add_peer_python_option(parser)
    parser.add_argument(
        "--corpora",
        default="english,english-typographic,english-few-unicode,english-emoji,european,mixed,"
        "chinese,japanese,arabic,russian,hindi",
    )
    args = parser.parse_args()
    peer_interpreter = peer_python(parser, args.peer_python, required=False)

    from citekit.normalize import normalize_text
    from citekit.segment import passage_windows, segment_sentences
    from citekit.kernels._index import corpus_arrays
    from citekit._reading import tokenize_and_segment
    from citekit.segment import SentenceSegmenter
    from citekit.tokenizers.simple import SimpleTokenizer

    baseline_pattern = re.compile(r"\w+")
    tokenizer = SimpleTokenizer()

    def citekit_tokenize(documents: list[str]) -> None:
        for document in documents:
            tokenizer.tokenize(document)

    def citekit_general_path(documents: list[str]) -> None:
        for document in documents:
            tokenizer._tokenize_unicode(document)

    def citekit_normalize(documents: list[str]) -> None:
        for document in documents:
            normalize_text(document)

    def citekit_segment(documents: list[str]) -> None:
        for document in documents:
            segment_sentences(document)

    def citekit_prepare(documents: list[str]) -> None:
        # the tokenizer-side work of cite-right's Rust prepare: sentences, one-sentence
        # windows, token ids and spans (not the inverted index)
        for document in documents:
            sentences = segment_sentences(document)
            passage_windows(sentences, 1, 1)
            tokenizer.tokenize(document)

    segmenter = SentenceSegmenter()

    def citekit_corpus_path(documents: list[str]) -> None:
        # (on one thread, as everything here: ``Pipeline.prepare`` reads and indexes a
        # large corpus on numba's threads, which a rate per CPU second does not show)
        arrays = tokenize_and_segment(tokenizer, segmenter, documents, n_threads=1)
        corpus_arrays(*arrays, 1, 1, n_threads=1)

    def regex_baseline(documents: list[str]) -> None:
        for document in documents:
            [match.span() for match in baseline_pattern.finditer(document)]

    implementations = {
        "citekit SimpleTokenizer": citekit_tokenize,
        "citekit general path only": citekit_general_path,
        "citekit normalize_text": citekit_normalize,
        "re.finditer baseline": regex_baseline,
        "citekit segment_sentences": citekit_segment,
        "citekit segment+tokenize": citekit_prepare,
        "citekit corpus path": citekit_corpus_path,
    }
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"{args.repeats} interleaved repeats, medians of CPU time; MB = 10**6 bytes of UTF-8\n")
    header = f"{'corpus':<22}{'implementation':<30}{'MB/s':>8}{'vs cite-right Rust':>20}"
    print(header)
    print("-" * len(header))
    for kind in args.corpora.split(","):
        documents = make_corpus(kind, args.mb)
        megabytes = sum(len(d.encode("utf-8")) for d in documents) / 1e6
        # warm up: first-use costs (regex compilation, lazy imports) are not throughput
        for run in implementations.values():
            run(documents[:20])
        timings: dict[str, list[float]] = {}
        with tempfile.TemporaryDirectory() as folder:
            corpus_path = os.path.join(folder, "corpus.json")
            with open(corpus_path, "w", encoding="utf-8") as handle:
                json.dump(documents, handle, ensure_ascii=False)
            for repeat in range(args.repeats):
                for name, run in implementations.items():
                    timings.setdefault(name, []).append(time_once(run, documents, repeat))
                if peer_interpreter:
                    for name, seconds in run_peer(peer_interpreter, corpus_path, repeat).items():
                        timings.setdefault(name, []).append(seconds)
        rates = {name: megabytes / statistics.median(t) for name, t in timings.items()}
        reference = rates.get("cite-right Rust prepare")
        for name, rate in rates.items():
            ratio = f"{rate / reference:.2f}x" if reference else "-"
            print(f"{kind:<22}{name:<30}{rate:>8.2f}{ratio:>20}")
        print(f"{'':<22}({len(documents)} documents, {megabytes:.2f} MB)")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
