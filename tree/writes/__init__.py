"""The write path, where the tree changes and nowhere else: the journal that records every
operation with its reason before and after it is applied (``journal``; read newest first, a page
at a time: ``journal_read``), the operations ADD, UPDATE, UPSERT, MERGE, DELETE, SUPERSEDE and
ARCHIVE planned against an overlay of the tree as it will be (``operations``, ``op_entries``,
``op_shapes``, ``overlay``, ``group_batch``), the archive, validity operations, undo, the writer
lock shared by every process and the path that applies a batch durably and brings index, catalog
and contexts along (``write_path``). It may use ``base``, ``text``, ``entries``, ``settings`` and
``index``.
"""
