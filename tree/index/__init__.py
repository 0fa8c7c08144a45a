"""Everything derived from the files for finding them fast, and kept in step with them: the two
full-text engines behind one interface (``engine``, ``engines``, Whoosh and tantivy), where an
index lives on disk and how a rebuild replaces it (``folders``), the catalog of every file with
its traits (``catalog``), the sync that brings index and catalog up to date with the files
(``sync``), change notification and the check that stands in for it (``watch``,
``folder_check``), each folder's ``context.md`` (``contexts``), a folder listed a page at a time
(``listing``) and the query cache of tiers 0 and 1 (``cache``). Nothing here is the truth: all of it can be rebuilt from the files. It may
use ``base``, ``text``, ``entries`` and ``settings``.
"""
