"""Fact verification: each claim of an answer checked against the sources on its own.

The answer is split into sentences and, with ``split_clauses=True``, into the clauses
joined by "; " or ", and" / ", but" ...; every claim gets a verdict (verified, partial,
unverified), its confidence (the covered share of its content), its evidence with exact
offsets in the sources, and the values the sources contradict.

Run: python examples/fact_verification.py
"""

from citekit import (
    FactVerificationConfig,
    Pipeline,
    SimpleClaimDecomposer,
    SourceDocument,
    verify_facts_many,
)

SOURCES = [
    SourceDocument(
        "annual-report",
        "Revenue grew 15% in 2024. The company hired 200 engineers in Berlin.",
    ),
    SourceDocument(
        "press-release",
        "The new factory in Lyon opened in March 2024 and employs 450 people.",
    ),
]

ANSWERS = [
    "Revenue grew 15% in 2024, and the company hired 300 engineers in Berlin. "
    "The Lyon factory opened in March 2024.",
    "The company plans to open an office on the Moon.",
]

config = FactVerificationConfig(verified_coverage_threshold=0.6, partial_coverage_threshold=0.3)
pipeline = Pipeline(config.citation_settings())
corpus = pipeline.prepare(SOURCES)  # prepared once, reused for every answer
texts = {source.id: source.text for source in SOURCES}

all_metrics = verify_facts_many(
    ANSWERS,
    corpus,
    pipeline=pipeline,
    claim_decomposer=SimpleClaimDecomposer(split_clauses=True),
)
for answer, metrics in zip(ANSWERS, all_metrics):
    print(f"Answer: {answer}")
    print(
        f"  {metrics.num_claims} claims: {metrics.num_verified} verified, "
        f"{metrics.num_partial} partial, {metrics.num_unverified} unverified "
        f"(rate {metrics.verification_rate:.2f}, mean confidence {metrics.avg_confidence:.2f})"
    )
    for verification in metrics.claim_verifications:
        claim = verification.claim
        assert answer[claim.char_start:claim.char_end] == claim.text
        print(
            f"  [{verification.status:>10}] {claim.text!r} "
            f"(answer {claim.char_start}-{claim.char_end}, confidence "
            f"{verification.confidence:.2f})"
        )
        best = verification.best_citation
        if best is not None:
            assert texts[best.source_id][best.char_start:best.char_end] == best.evidence
            print(f"      evidence {best.source_id}[{best.char_start}:{best.char_end}]: "
                  f"{best.evidence!r}")
        for conflict in verification.conflicts:
            print(f"      conflict ({conflict.kind}): the answer says {conflict.answer_text!r}, "
                  f"the source says {conflict.evidence_text!r}")
