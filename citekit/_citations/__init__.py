"""The citation stages, one module per arrow of the data flow: which answer tokens carry
content (:mod:`.content`), what a value reads as (:mod:`.values`), which words describe it
as a rise or a fall (:mod:`.directions`), and which values conflict with the evidence
(:mod:`.conflicts`)."""
