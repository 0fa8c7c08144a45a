"""Ranking: what ``ContextTree.search`` does to the engine's candidates, as one declared pipeline.
It owns the cut (how deep the engine is searched, cut.py), the one read of everything the steps
need (gather.py), the dense leg's candidates joined to the engine's before it (dense.py), the
table they run over (table.py), the steps as plain functions of that table
(own.py, lifts.py, by_signals.py, by_meaning.py, coverage.py, rules.py, in their order), the
ordered list of them that a search runs, ablation iterates and the docs show (pipeline.py's
``STEPS``, rendered by docs.py), what a search returns (hits.py) and the store of ranking signals
(signals.py). It may use the text layer (analysis, dates, roles, standing), entries (paths,
validity, lifecycle), the index's catalog, sqlite, settings and meaning's modules (the encoder's
cosines arrive as a callable); none of those import it. Nothing here imports store.py: the tree
hands ranking its parts (``RankingInputs``). This ``__init__`` imports nothing, so a client that
only needs ``Hit`` pays for no more than hits.py.
"""
