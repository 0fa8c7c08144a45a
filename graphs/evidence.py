"""The chosen entries as an answer without a model reads them: their texts, who said them and when,
the messages around a message, and for the current value (graphs/current/) their times,
what ``dream`` recorded on them, their closed labels with the value that replaced them, and the
search's next hits beyond them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memgrove.tree.entries import validity
from memgrove.tree.ranking.hits import Hit

from .current import recorded as answer_recorded, statements as answer_current, when as answer_when
from .settings import QuerySettings

# The most of an entry's text the answer is picked from: a sentence beyond it is not worth
# analyzing every sentence of a 10 MB entry for.
PICK_CHARS = 8_000
# The most of the messages around a chosen one that is read as its context (a message is short;
# its context is the end of what was said before it and the start of the reply, not a whole
# pasted document).
NEAR_CHARS = 2_000


def _entry_text(tree, path: str, read: dict | None = None) -> str:
    """An entry's text; ``read`` keeps the entry (or None) for the next look at it in the same answer."""
    try:
        entry = tree.read(path)
    except Exception:  # noqa: BLE001 - a vanished entry: fall back to the excerpt
        entry = None
    if read is not None:
        read[path] = entry
    return (entry.body or entry.summary).strip() if entry is not None else ""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + " …"


def chosen_hits(hits: list[Hit], s: QuerySettings) -> list[Hit]:
    """The entries an answer without a model is made of: the best ``direct_max_entries``."""
    return [h for h in hits if h.kind == "entry"][: s.direct_max_entries] or hits[: s.direct_max_entries]


def messages_around(tree, evidence: list[dict[str, Any]],
                    said: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Per chosen entry that is a conversation's message (``said``), the message before it in its
    session and the one after it, each with its title: the verbatim curator links each message to
    the next one (``related``), so they are its backlink and its link in the same folder.
    ``("", "")`` where there is none, and for entries that are no message."""
    before, after = [], []
    for e, who in zip(evidence, said):
        found = [("", ""), ("", "")]
        if who:
            folder = e["path"].rpartition("/")[0]
            try:
                links = tree.links(e["path"])
                for i, paths in enumerate((links[1], links[0])):
                    near = [p for p in paths if p.rpartition("/")[0] == folder]
                    if near:
                        entry = tree.read(near[0])
                        found[i] = ((entry.body or entry.summary).strip(), entry.title)
            except Exception:  # noqa: BLE001 - a vanished or unreadable neighbour: no context
                pass
        before.append(found[0])
        after.append(found[1])
    return before, after


def evidence_of(tree, hits: list[Hit], s: QuerySettings,
                read: dict | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """The chosen entries as evidence (``{"path", "title", "refs", "text"}``), and their full texts
    (``read``: where the entries read are kept)."""
    evidence, bodies = [], []
    for h in chosen_hits(hits, s):
        full = _entry_text(tree, h.path, read) or h.excerpt
        refs = [str(src["ref"]) for src in h.sources if src.get("ref")]
        text = _clip(full, s.direct_max_chars)
        evidence.append({"path": h.path, "title": h.title, "refs": refs, "text": f"{h.label}\n{text}" if h.label else text})
        bodies.append(full)
    return evidence, bodies


def evidence_of_paths(tree, paths: list[str], s: QuerySettings) -> list[dict[str, Any]]:
    """The entries a model's answer cites, as evidence (a vanished one is left out)."""
    out = []
    for p in paths:
        try:
            entry = tree.read(p)
        except Exception:  # noqa: BLE001 - deleted since the model read it
            continue
        refs = [str(src["ref"]) for src in entry.sources if src.get("ref")]
        out.append({"path": p, "title": entry.title, "refs": refs,
                    "text": _clip((entry.body or entry.summary).strip(), s.direct_max_chars)})
    return out


def contexts_of(evidence: list[dict[str, Any]]) -> list[str]:
    """What each chosen entry is about, beyond its sentences: its title and the words of its path."""
    return [f"{e['title']} {e['path'].replace('/', ' ')}" for e in evidence]


def said_of(hits: list[Hit], evidence: list[dict[str, Any]]) -> list[str]:
    """Per chosen entry, its title when it is a conversation's message (who said it, and when)."""
    kinds = {h.path: {src.get("kind") for src in h.sources} for h in hits}
    return [e["title"] if "conversation" in kinds.get(e["path"], ()) else "" for e in evidence]


# the most entries beyond the chosen ones read for a newer (or, for the past, older) statement of a
# chosen one's subject: the rest of the search's hits (prefetch_limit), already ranked, only read
FURTHER = 5


def further_look(tree, question: str, hits: list[Hit], chosen: list[Hit], s: QuerySettings,
                 read: dict | None = None) -> tuple[list[dict[str, Any]], list[str], list[Hit]]:
    """For a question about a state or the past, the search's next hits after the chosen ones (at most
    ``FURTHER``), as evidence, texts and hits: the newer value of a subject is often said in a long
    message that ranks below the short one it replaced. No new search: the hits are at hand, and each
    costs one read, only for a hit whose title, summary or excerpt holds a word like the question's."""
    if not (answer_when.asks_state(question) or answer_when.asks_past(question)):
        return [], [], []
    taken = {h.path for h in chosen}
    rest = [h for h in hits if h.kind == "entry" and h.path not in taken][:FURTHER]
    rest = [h for h in rest if answer_current.mentions(question, f"{h.title} {h.summary} {h.excerpt}")]
    evidence, bodies = evidence_of(tree, rest, s.replace(direct_max_entries=len(rest)), read) if rest else ([], [])
    return evidence, bodies, rest


def recorded_in(chosen: list[Hit], read: dict) -> list:
    """The statements of the chosen entries an approved ``dream`` finding recorded as replaced."""
    paths = [h.path for h in chosen]
    return [r for i, h in enumerate(chosen) if read.get(h.path) is not None
            for r in answer_recorded.recorded_of(read[h.path].extra, i, paths)]


def times_of(tree, chosen: list[Hit], said: list[str], read: dict | None = None) -> list[datetime | None]:
    """Per chosen entry, when it was said or written: a message's time (its sources), else the
    entry's ``validFrom`` or creation time (``read``: the entries already read; another is read)."""
    out = []
    read = {} if read is None else read
    for i, h in enumerate(chosen):
        who = said[i] if i < len(said) else ""
        at = answer_when.time_of(h.sources, None, "", "")
        if at is None and not who:
            if h.path not in read:
                _entry_text(tree, h.path, read)
            e = read.get(h.path)
            at = answer_when.time_of((), e.extra, e.created_at, "") if e is not None else None
        out.append(at or answer_when.time_of((), None, "", who))
    return out


def closed_labels(tree, chosen: list[Hit], bodies: list[str]) -> list[str]:
    """Per chosen entry, a closed one's label naming the value that replaced it ("(until 2 May 2026;
    since then: 6543)"), found by comparing its statements with the newer entry's; the store's
    label (the newer entry's title) where no one value changed."""
    out = []
    texts = {h.path: b for h, b in zip(chosen, bodies)}
    for h in chosen:
        lab = h.label
        if lab and h.superseded_by:
            newer = texts.get(h.superseded_by)
            if newer is None:
                newer = _entry_text(tree, h.superseded_by)
            until = validity.valid_until({validity.VALID_UNTIL: h.valid_until}) if h.valid_until else None
            lab = answer_recorded.closed_label(texts.get(h.path, ""), newer, until) or lab
        out.append(lab)
    return out


__all__ = ["FURTHER", "NEAR_CHARS", "PICK_CHARS", "chosen_hits", "closed_labels", "contexts_of", "evidence_of",
           "evidence_of_paths", "further_look", "messages_around", "recorded_in", "said_of", "times_of"]
