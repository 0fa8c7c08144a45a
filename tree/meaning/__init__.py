"""Ranking by meaning: the all-MiniLM-L6-v2 encoder (``embedding``), the vectors of entries kept
in ``vectors.db`` by their text (``vectors``), every current entry's vector as one matrix per process
(``matrix``: the dense leg and the cosines), the bound on vectors a search may compute and the
registry of those in flight (``vector_claims``), the background thread that computes them ahead
(``embedder``), the detached job that computes them where no process stays to (``embed_job``) and the
tree's side of it, the texts entries are embedded from and the cosines a
ranking asks for (``tree_meaning``). It may use ``base``, ``text``, ``entries``, ``settings`` and
``index``; ranking uses it, never the other way. The tree is handed to the embedder, which
knows it only by the few methods it calls (``EmbeddingTree``).
"""
