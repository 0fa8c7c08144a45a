"""One entry and where it lives: the markdown file with its YAML front matter (``entry``,
``frontmatter``), the rules of paths inside ``.memgrove/tree/`` that keep everything in the
tree (``paths``), an entry's validity in time (current, superseded, ended: ``validity``) and its
lifecycle (importance, recency, maturity: ``lifecycle``). It may use ``base`` and ``text``.
"""
