"""Git replication of a tree: a primary turns every applied batch into a commit and pushes it
(``replicator``, ``git``), a replica pulls and applies what the primary wrote, refusing
anything that would leave the tree (``pull``, ``follow``), with their settings (``settings``).
It may use ``base``, ``text``, ``entries``, ``settings``, ``index`` and ``writes``; the tree is
handed to it and known only by what it calls (``ReplicatedTree``), so ``store`` can build a
replicator without a cycle.
"""
