"""The sentence that answers: an extractive pick over the chosen entries' sentences (no LLM).

Tiers without a model used to lead with the top entry's first sentence, which
misses the answer as often as not: "What is the minimum payout per job?" was
answered with the sentence about per-km pay, and the 3.50 EUR was the next one.
Here every sentence of the chosen entries is scored by the question's analyzed
terms it contains, each weighted by its idf (a rare word that the question and
a sentence share says more than a common one), and the best leads; the
entry's rank breaks ties. A sentence that asks never leads unless nothing else
matches: "How much do we pay per job?" shares every word with the question and
holds none of the answer. A markdown table row is a sentence too, and is shown
under its table's header, so the answer stays a table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# A sentence ends at . ! or ? followed by a space and what can start a sentence; "3.50",
# "e.g. the" and "staging.kestrel.dev" do not end one.
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[*`_]*[A-Z0-9])")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_SPEAKER = re.compile(r"^\*\*([^*\n]{1,60})\*\*:\s*")   # "**Ana**: ..." in a windowed conversation entry

# A later entry's sentence must match this much more of the question (in idf-weighted share)
# per rank to lead over an earlier entry's: the rank breaks ties and near-ties only.
RANK_STEP = 0.02
# A sentence this short seldom holds its answer alone ("I booked my trip to Lisbon!", "Access
# token: a JWT signed with RS256."): the next sentence of its paragraph is shown with it.
SHORT_WORDS = 12


@dataclass(frozen=True)
class Candidate:
    text: str        # what is shown: a sentence, or a table's header and one of its rows
    scored: str      # what is matched against the question
    rank: int        # the entry's rank among the chosen ones (0 = best)
    order: int       # the sentence's position in its entry
    asks: bool       # a question, which never leads unless nothing else matched
    para: int = 0    # the paragraph (or table) it belongs to, within its entry
    row: bool = False


def _table(lines: list[str]) -> list[tuple[str, str]]:
    """A markdown table as (shown, scored) pairs: each body row under the header, scored by the row."""
    rows = [ln.strip() for ln in lines if ln.strip()]
    if len(rows) >= 2 and _TABLE_RULE.match(rows[1]):
        header, rule, body = rows[0], rows[1], rows[2:]
        return [(f"{header}\n{rule}\n{row}", row) for row in body] or [(f"{header}\n{rule}", header)]
    return [(row, row) for row in rows]


def sentences(text: str) -> list[tuple[str, str, int]]:
    """The sentences of an entry's body as (shown, scored, paragraph) triples, in order.

    Paragraphs and list items are split into sentences (line breaks inside a paragraph
    read as spaces); headings and fenced or indented code are left out; a table gives one
    pair per row.
    """
    out: list[tuple[str, str, int]] = []
    para: list[str] = []
    blocks = [0]
    table: list[str] = []
    fenced = False

    def flush_para() -> None:
        if para:
            joined = " ".join(" ".join(para).split())
            blocks[0] += 1
            out.extend((s, s, blocks[0]) for s in (p.strip() for p in _SPLIT.split(joined)) if s)
            para.clear()

    def flush_table() -> None:
        if table:
            blocks[0] += 1
            out.extend((shown, scored, -blocks[0]) for shown, scored in _table(table))
            table.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            flush_para()
            flush_table()
            fenced = not fenced
            continue
        if fenced or line.startswith(("    ", "\t")) and not para:
            continue
        if stripped.startswith("|"):
            flush_para()
            table.append(stripped)
            continue
        flush_table()
        if not stripped or _HEADING.match(line):
            flush_para()
            continue
        if _BULLET.match(line):
            flush_para()
            stripped = _BULLET.sub("", line).strip()
        m = _SPEAKER.match(stripped)
        if m:
            flush_para()
            stripped = f"{m.group(1)}: {stripped[m.end():]}"
        para.append(stripped)
    flush_para()
    flush_table()
    return out


def candidates(bodies: Sequence[str]) -> list[Candidate]:
    """Every sentence of ``bodies`` (the chosen entries' texts, best first)."""
    out = []
    for rank, body in enumerate(bodies):
        for order, (shown, scored, para) in enumerate(sentences(body)):
            plain = scored.rstrip(" \"')]*_`")
            out.append(Candidate(shown, scored, rank, order, asks=plain.endswith("?"), para=abs(para),
                                 row=para < 0))
    return out


def shown(best: Candidate, pool: Sequence[Candidate]) -> str:
    """``best``'s text, with the next sentence of its paragraph when it is short."""
    if best.row or len(best.text.split()) >= SHORT_WORDS:
        return best.text
    nxt = next((c for c in pool if c.rank == best.rank and c.order == best.order + 1), None)
    return f"{best.text} {nxt.text}" if nxt and nxt.para == best.para and not nxt.row else best.text


def pick(question_terms: Sequence[str], idf: dict[str, float], bodies: Sequence[str],
         terms: Callable[[str], list[str]], contexts: Sequence[str] = ()) -> Candidate | None:
    """The sentence of ``bodies`` that best answers a question with the analyzed terms ``question_terms``.

    ``terms`` analyzes a sentence as the index does (``engine.terms``); ``idf`` weighs the
    question's terms (``engine.idf``); ``contexts`` (one per body: its title and path) name what
    an entry's sentences are about without repeating it ("Current settings" of
    ``postgres_tuning`` for the row "pool_size | 8"). Score: the idf-weighted share of the
    question's terms the sentence contains, plus the share it and its context contain between
    them, less ``RANK_STEP`` per rank of its entry; ties go to the earlier entry, then the
    earlier sentence. A question never leads while the entries state anything: when only a
    question matches, the statement after it in its entry leads (its answer, in a conversation
    or a FAQ), else the best entry's first statement.
    """
    pool = candidates(bodies)
    if not pool:
        return None
    weights = {t: max(idf.get(t, 0.0), 0.0) or 1e-6 for t in question_terms}
    total = sum(weights.values())

    around = [set(terms(c)) for c in contexts]

    def share(c: Candidate) -> float:
        if not total:
            return 0.0
        got = set(terms(c.scored))
        own = sum(w for t, w in weights.items() if t in got) / total
        if not own:
            return 0.0
        ctx = got | (around[c.rank] if c.rank < len(around) else set())
        return own + sum(w for t, w in weights.items() if t in ctx) / total

    scored = [(share(c), c) for c in pool]

    def key(item: tuple[float, Candidate]) -> tuple[float, int, int]:
        s, c = item
        return (-(s - RANK_STEP * c.rank) if s else 1.0, c.rank, c.order)

    statements = [item for item in scored if not item[1].asks]
    matching = [item for item in statements if item[0] > 0]
    if matching:
        return min(matching, key=key)[1]
    asking = [item for item in scored if item[1].asks and item[0] > 0]
    if asking and statements:
        # only a question matches: what follows it in its entry is its answer, if anything does
        q = min(asking, key=key)[1]
        after = [c for _, c in statements if c.rank == q.rank and c.order > q.order]
        if after:
            return after[0]
    if statements:
        # nothing that states matches a word of the question: the best entry's first statement
        return min(statements, key=key)[1]
    return min(asking or scored, key=key)[1]

__all__ = ["Candidate", "RANK_STEP", "SHORT_WORDS", "candidates", "pick", "sentences", "shown"]
