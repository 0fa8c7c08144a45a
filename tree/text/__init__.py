"""What words and sentences mean to memgrove, as pure functions of text: the one analyzer that
turns text into the terms every engine indexes and matches (``analysis``, ``word_forms``),
dates written in text and conversations (``dates``), the questions in a text, what of an entry
is searchable, who said what an entry holds (``roles``), and standing instructions the user
gave (``standing``). It may use ``base`` only; nothing here reads a file of the tree.
"""
