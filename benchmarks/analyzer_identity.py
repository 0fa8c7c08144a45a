#!/usr/bin/env python
"""The analyzer's terms of real English texts, before and after every script became searchable.

    python benchmarks/analyzer_identity.py            # every LoCoMo and BEAM message

Folding and CJK bigrams (tree/analysis.py) must leave English exactly as it was indexed: this
runs ``analysis.analyze`` (and ``analysis.terms``, each text asked as a question) and the analyzer as it was before (``before``: the same word pattern
over the unfolded text, no bigrams) over every message of LoCoMo (``$LOCOMO_PATH`` or
``../shared/datasets/locomo/locomo10.json``) and of BEAM (every tier under ``$BEAM_PATH`` or
``../shared/datasets/beam/``), and counts texts whose terms differ, listing the first few.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tree import analysis  # noqa: E402


def before(text: str) -> list[str]:
    """``analysis.analyze`` as it was before folding and bigrams."""
    out = []
    for m in analysis.WORD.finditer(text):
        w = m.group()
        ws = [w] + ([p for p in w.split(".") if p and not p.isdigit() and any(c.isalpha() for c in p)]
                    if "." in w else [])
        out += [t for t in (analysis._term(x.lower()) for x in ws) if t is not None]
    return out


def locomo_texts(path: Path):
    for conv in json.loads(path.read_text(encoding="utf-8")):
        c = conv["conversation"]
        for key, turns in c.items():
            if key.startswith("session_") and isinstance(turns, list):
                for t in turns:
                    yield t.get("text", "") + (f" [shares a photo: {t['blip_caption']}]" if t.get("blip_caption") else "")


def beam_texts(folder: Path):
    for chat in sorted(folder.glob("*/*/chat.json")):
        def walk(x):
            if isinstance(x, dict):
                if isinstance(x.get("content"), str):
                    yield x["content"]
                for v in x.values():
                    if isinstance(v, (list, dict)):
                        yield from walk(v)
            elif isinstance(x, list):
                for v in x:
                    yield from walk(v)
        yield from walk(json.loads(chat.read_text(encoding="utf-8")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--locomo", type=Path, default=Path(os.environ.get(
        "LOCOMO_PATH", ROOT.parent / "shared/datasets/locomo/locomo10.json")))
    ap.add_argument("--beam", type=Path, default=Path(os.environ.get("BEAM_PATH", ROOT.parent / "shared/datasets/beam")))
    args = ap.parse_args()
    for name, texts in (("LoCoMo", locomo_texts(args.locomo)), ("BEAM", beam_texts(args.beam))):
        n = terms = ascii_ = 0
        differ = []
        for text in texts:
            n += 1
            ascii_ += text.isascii()
            old, new = before(text), analysis.analyze(text)
            terms += len(new)
            if old != new:
                differ.append((text, old, new))
            elif list(dict.fromkeys(before(text[:analysis.MAX_QUERY_CHARS])))[:analysis.MAX_QUERY_TERMS] \
                    != analysis.terms(text):       # asked as a question
                differ.append((text, "query terms", analysis.terms(text)))
        print(f"{name}: {n:,} messages ({n - ascii_:,} not pure ASCII), {terms:,} terms; "
              f"terms differ in {len(differ):,}")
        for text, old, new in differ[:5]:
            changed = [(a, b) for a, b in zip(old, new) if a != b][:3]
            print(f"  {text[:80]!r}: {changed or (len(old), len(new))}")


if __name__ == "__main__":
    main()
