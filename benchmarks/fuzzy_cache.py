#!/usr/bin/env python
"""Precision and recall of the fuzzy cache (tier 1) on labelled question pairs.

    python benchmarks/fuzzy_cache.py            # writes benchmarks/results/fuzzy_cache.md

``benchmarks/data/fuzzy_pairs.jsonl`` holds pairs written by hand for this benchmark,
one JSON object a line: ``cached`` (a question answered and cached), ``asked`` (the
next question), ``same`` (true when the cached answer answers it: a rewording;
false when it asks something else: another qualifier, entity, number, person,
negation, question word, roles swapped), ``kind``, and ``set``: the first 140 pairs
(no ``set``: "design") were written while the rule was designed, before its first run
(after which one step was added: Porter2's final-e step, for "decide" / "decided");
the ``holdout`` pairs were written after the rule was fixed and never tuned on.

A pair counts as served when tier 1 returns the cached answer for ``asked``.
The **new rule** is measured through ``QueryCache`` itself (``put`` then
``get_fuzzy``, each pair under its own fingerprint) with the pipeline's default
settings; the **old rule** is the tier 1 of commit 350a2ce (Jaccard >= 0.6 of
stopword-filtered token sets, the same numbers, capitalized names and negations),
copied below unchanged. Two variants of the new rule show what its parts buy:
without the word-order check, and with a Jaccard threshold below 1.0.

Precision = right answers served / answers served; recall = paraphrases served /
paraphrases. A wrong cached answer is worse than a miss (which just costs a search).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from harness.report import table
import harness.words_only  # noqa: F401 - ranks by words alone (see there)
from memgrove.graphs.settings import QuerySettings
from memgrove.tree.index.cache import QueryCache, asks_same, question_forms

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "fuzzy_pairs.jsonl"
OUT = ROOT / "results" / "fuzzy_cache.md"
OLD, NEW = "old rule (Jaccard >= 0.6, anchors)", "new rule (QueryCache, default settings)"


# -- the old rule (tree/index/cache.py at commit 350a2ce), unchanged --------------------------

_OLD_WORD = re.compile(r"[^\W_]+(?:[.'’][^\W_]+)*", re.UNICODE)
_OLD_NEGATIONS = frozenset({"not", "no", "never", "none", "without", "nobody", "nothing", "neither", "nor", "cannot",
                            "didn't", "doesn't", "don't", "isn't", "wasn't", "aren't", "weren't", "won't", "can't"})
_OLD_STOP = frozenset("""a an and are as at be been by did do does for from had has have how i if in into is it its me my
of on or our so that the their them then there these they this to was we were what when where which who whom why
will with would you your about can could should tell please know""".split())


def _old_tokens(q: str) -> frozenset[str]:
    return frozenset(w for w in (t.lower() for t in _OLD_WORD.findall(q)) if w not in _OLD_STOP)


def _old_anchors(q: str) -> frozenset[str]:
    out = set()
    for w in _OLD_WORD.findall(q):
        low = w.lower()
        if any(c.isdigit() for c in w) or low in _OLD_NEGATIONS:
            out.add(low)
        elif w[:1].isupper() and low not in _OLD_STOP:
            out.add(low)
    return frozenset(out)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def old_rule(cached: str, asked: str, threshold: float = 0.6, min_tokens: int = 2) -> bool:
    tokens, toks = _old_tokens(asked), _old_tokens(cached)
    if len(tokens) < min_tokens:
        return False
    if (_old_anchors(cached) ^ _old_anchors(asked)) - (tokens & toks):
        return False
    return _jaccard(tokens, toks) >= threshold


# -- the new rule and its variants ----------------------------------------------------------

def new_rule_variant(*, ordered: bool = True, threshold: float = 1.0, min_tokens: int = 2) -> Callable[[str, str], bool]:
    def match(cached: str, asked: str) -> bool:
        a, b = question_forms(cached), question_forms(asked)
        if len(set(b.words)) < min_tokens:
            return False
        if not ordered:   # the same check with both questions' words in one order
            a, b = a._replace(words=tuple(sorted(a.words))), b._replace(words=tuple(sorted(b.words)))
        return asks_same(a, b, threshold)
    return match


def served_by_query_cache(pairs: list[dict[str, Any]], settings: QuerySettings) -> list[bool]:
    """Tier 1 as the pipeline runs it: the cached question ``put``, the next one looked up."""
    with tempfile.TemporaryDirectory(prefix="memgrove-fuzzy-") as tmp:
        cache = QueryCache(Path(tmp) / "cache")
        try:
            out = []
            for i, p in enumerate(pairs):
                fp = f"pair-{i}"
                cache.put(p["cached"], fp, {"text": p["cached"]})
                found = cache.get_fuzzy(p["asked"], fp, threshold=settings.fuzzy_threshold,
                                        min_tokens=settings.fuzzy_min_tokens)
                out.append(found is not None and found[0]["answer"]["text"] == p["cached"])
            return out
        finally:
            cache.close()


# -- scoring and report -----------------------------------------------------------------------

def load_pairs(path: Path) -> list[dict[str, Any]]:
    pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for p in pairs:
        if not (isinstance(p.get("cached"), str) and isinstance(p.get("asked"), str) and isinstance(p.get("same"), bool)):
            raise ValueError(f"{path}: each line needs cached, asked (strings) and same (true/false): {p}")
    return pairs


def score(pairs: list[dict[str, Any]], served: list[bool]) -> dict[str, Any]:
    tp = sum(s and p["same"] for p, s in zip(pairs, served))
    fp = sum(s and not p["same"] for p, s in zip(pairs, served))
    fn = sum(not s and p["same"] for p, s in zip(pairs, served))
    return {"served": tp + fp, "right": tp, "wrong": fp, "missed": fn,
            "precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": tp / (tp + fn) if tp + fn else 0.0,
            "false_matches": [p for p, s in zip(pairs, served) if s and not p["same"]],
            "misses": [p for p, s in zip(pairs, served) if not s and p["same"]],
            "by_kind": _by_kind(pairs, served)}


def _by_kind(pairs: list[dict[str, Any]], served: list[bool]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for p, s in zip(pairs, served):
        row = out.setdefault(p["kind"], [0, 0, int(p["same"])])   # pairs, served, label
        row[0] += 1
        row[1] += int(s)
    return out


def run(data: Path = DATA) -> dict[str, Any]:
    pairs = load_pairs(data)
    settings = QuerySettings()
    rules = {
        OLD: [old_rule(p["cached"], p["asked"]) for p in pairs],
        NEW: served_by_query_cache(pairs, settings),
        "new rule without the word-order check": [new_rule_variant(ordered=False)(p["cached"], p["asked"]) for p in pairs],
        "new rule, threshold 0.8": [new_rule_variant(threshold=0.8)(p["cached"], p["asked"]) for p in pairs],
        "new rule, threshold 0.6": [new_rule_variant(threshold=0.6)(p["cached"], p["asked"]) for p in pairs],
    }
    sets = sorted({p.get("set", "design") for p in pairs})
    by_set = {name: {k: score([p for p in pairs if p.get("set", "design") == k],
                              [s for p, s in zip(pairs, served) if p.get("set", "design") == k]) for k in sets}
              for name, served in rules.items()}
    return {"pairs": len(pairs), "paraphrases": sum(p["same"] for p in pairs),
            "different": sum(not p["same"] for p in pairs),
            "sets": {k: sum(p.get("set", "design") == k for p in pairs) for k in sets},
            "settings": {"fuzzy_threshold": settings.fuzzy_threshold, "fuzzy_min_tokens": settings.fuzzy_min_tokens},
            "rules": {name: score(pairs, served) for name, served in rules.items()},
            "by_set": by_set}


def _pairs(pairs: list[dict[str, Any]]) -> list[str]:
    return table(["kind", "cached", "asked"], [[p["kind"], p["cached"], p["asked"]] for p in pairs])


def markdown(res: dict[str, Any], data: Path) -> str:
    old, new = res["rules"][OLD], res["rules"][NEW]
    lines = [
        "# Fuzzy cache (tier 1): precision and recall on labelled question pairs",
        "",
        f"`python benchmarks/fuzzy_cache.py` on `{data.relative_to(ROOT.parent) if data.is_relative_to(ROOT.parent) else data}`: "
        f"{res['pairs']} pairs written by hand, {res['paraphrases']} paraphrases (the cached answer is right) and "
        f"{res['different']} different questions (it is wrong). The new rule runs through `QueryCache.put` / "
        f"`get_fuzzy` with the pipeline's defaults (fuzzy_threshold {res['settings']['fuzzy_threshold']}, "
        f"fuzzy_min_tokens {res['settings']['fuzzy_min_tokens']}). Deterministic: no model, no clock.",
        "",
        *table(["rule", "served", "right", "wrong", "paraphrases missed", "precision", "recall"],
               [[name, r["served"], r["right"], r["wrong"], r["missed"], f"{r['precision']:.3f}", f"{r['recall']:.3f}"]
                for name, r in res["rules"].items()]),
    ]
    lines += ["", "## By set", "",
              "The design pairs were written with the rule in mind; the holdout pairs after it was fixed.", ""]
    lines += table(["rule", "set", "pairs", "wrong served", "precision", "recall"],
                   [[name, k, res["sets"][k], r["wrong"], f"{r['precision']:.3f}", f"{r['recall']:.3f}"]
                    for name in (OLD, NEW) for k, r in res["by_set"][name].items()])
    lines += ["", "## By kind (pairs: served by the old rule / the new rule)", ""]
    lines += table(["kind", "label", "pairs", "old", "new"],
                   [[kind, "paraphrase" if same else "different", n, old["by_kind"][kind][1], s_new]
                    for kind, (n, s_new, same) in sorted(new["by_kind"].items(), key=lambda kv: (-kv[1][2], kv[0]))])
    lines += ["", f"## Wrong answers the old rule served ({len(old['false_matches'])})", "", *_pairs(old["false_matches"])]
    lines += ["", f"## Wrong answers the new rule serves ({len(new['false_matches'])})", ""]
    lines += _pairs(new["false_matches"]) if new["false_matches"] else ["None."]
    lines += ["", f"## Paraphrases the new rule misses ({len(new['misses'])}): what recall costs", "",
              "Each goes to tier 2 (a search, ~10 ms warm) instead of being served from the cache.", "",
              *_pairs(new["misses"])]
    for name in ("new rule without the word-order check", "new rule, threshold 0.8", "new rule, threshold 0.6"):
        wrong = res["rules"][name]["false_matches"]
        if wrong:
            lines += ["", f"## Wrong answers of the variant: {name} ({len(wrong)})", "", *_pairs(wrong)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--out", type=Path, default=OUT, help="the markdown report")
    args = ap.parse_args(argv)
    res = run(args.data)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown(res, args.data), encoding="utf-8")
    for name, r in res["rules"].items():
        print(f"{name:42} precision {r['precision']:.3f}  recall {r['recall']:.3f}  "
              f"(served {r['served']}, wrong {r['wrong']}, missed {r['missed']})")
    print(f"wrote {args.out}")
    return res


if __name__ == "__main__":
    main()
    sys.exit(0)
