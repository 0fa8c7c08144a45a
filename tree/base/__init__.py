"""The ground every other part stands on, with no knowledge of entries or trees: memgrove's
errors (``MemgroveError`` and its kin), durable file writes (write a temp file, fsync, rename),
SQLite connections that survive deleted files, full disks and ``fork`` (``sqlite``), locks and
handlers that make a forked child safe (``forksafe``), diskcache closed on every thread, bounded
parsing of untrusted nested input, the limits on text and questions, where a project's
``.memgrove/`` folder is, where the meaning model's files are, and ``setting()``, the field that
describes a setting where it is defined (``setting_field``). It uses only the standard
library and its third-party drivers (SQLite, diskcache); it imports nothing else of the tree.
"""
