"""The citation stages: one module per arrow of the data flow, in this order.

- ``queries``: reading the answer sentences (tokens packed CSR, content / word /
  ideograph masks, coverage weights, values; reference markers dropped).
- ``candidates``: the candidate passages of every sentence (IDF top-K, plus embedding
  candidates), and embedding a corpus.
- ``forms``: the folded word forms of a corpus (light inflections), learnt lazily.
- ``feasibility``: what a passage's bag of tokens allows before aligning: which pairs can
  become citations and the best score each could reach.
- ``scoring``: the score components, final score and acceptance of aligned pairs.
- ``rounds``: the best-first alignment rounds and the aligner dispatch.
- ``ranking``: ranking a sentence's pairs and choosing its citations and evidence pool.
- ``coverage``: which sentence tokens each judged pair covers.
- ``records``: the evidence set, shown citations, status and the result records.
- ``align``: one batch of sentences through the stages above, in that order.

What the stages read of the text: which answer tokens carry content (``content``), what a
value reads as (``values``: kinds, keys, signs, scales), which words describe it as a rise
or a fall (``directions``), which values conflict with the evidence (``conflicts``), and
whether the evidence negates what the sentence states or the other way round
(``polarity``).

:mod:`citekit.pipeline` (``Pipeline``) reads the answers and runs their sentences through
``align`` in batches.
"""
