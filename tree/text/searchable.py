"""What of an entry's text is words to search: embedded binary (``data:…;base64,…`` URIs, e.g. an
image pasted into markdown) is kept in the entry but never indexed, and does not count toward
the indexed span (``content_cap``) or the size of a curated part, so the words after it are found."""

from __future__ import annotations

import re

# a base64 run without spaces: the letters of the words after it are never swallowed
_DATA_URI = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[\w.+=-]+)*;base64,[A-Za-z0-9+/=]+")


def searchable(text: str) -> str:
    """``text`` without embedded base64 data."""
    return _DATA_URI.sub(" ", text) if "base64," in text else text
