"""Keeping a memory clean over time: scans that read the whole tree once (``scan_corpus``) and
find duplicates, superseded statements, missing links and entries to archive (``find_*``,
``statement_values``), each finding a candidate with the operations that would carry it out
(``findings``, ``scan``); ``memgrove dream``, which applies, asks a model about or queues each
candidate, with its state and its undo (``dream``, ``dream_state``, ``dream_undo``); and the
review queue where a person approves or rejects what waits (``review``). It stands above the
assembled tree (``store``) and may use every layer below it; nothing below imports it.
"""
