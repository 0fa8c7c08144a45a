"""The deterministic scan (tree/hygiene/scan.py): each kind of finding on small hand-made trees, and the
look-alikes that must not be found."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memgrove import Memory
from memgrove.tree.hygiene.findings import Candidate
from memgrove.tree.hygiene.scan import scan

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=timezone.utc)


def chat(cid: str, *messages: tuple[str, str], start: datetime = T0, session: str | None = None) -> dict[str, Any]:
    """A conversation of (speaker, text) messages a minute apart from ``start``."""
    msgs = []
    for i, (speaker, text) in enumerate(messages, 1):
        m = {"id": f"m{i}", "speaker": speaker, "text": text,
             "time": (start + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")}
        if session:
            m["session"] = session
        msgs.append(m)
    return {"id": cid, "messages": msgs}


def found(mem: Memory, kind: str | None = None, **kw: Any) -> list[Candidate]:
    got = scan(mem.tree, **kw)
    return [c for c in got if kind is None or c.kind == kind]


def entry_of(mem: Memory, cid: str, text: str) -> str:
    for p in mem.tree.entry_paths():
        if p.startswith(f"conversations/{cid}/") and text in mem.read(p).body:
            return p
    raise AssertionError(f"no entry of {cid} says {text!r}")


def test_a_message_curated_twice_is_an_exact_duplicate_merged_into_the_oldest(mem: Memory) -> None:
    said = "The release checklist lives in the ops wiki under Deployments, page seven."
    mem.ingest(conversation=chat("first", ("Ana", said), ("Ben", "Got it.")))
    mem.ingest(conversation=chat("later", ("Ana", "  the RELEASE checklist lives in the ops wiki under deployments, page seven"),
                                 start=T0 + timedelta(days=30)))
    [dup] = found(mem, "duplicate")
    old, new = entry_of(mem, "first", "release checklist"), entry_of(mem, "later", "RELEASE")
    assert dup.paths == (old, new) and dup.action == "MERGE" and dup.confidence == 1.0
    assert dup.ops == ({"op": "MERGE", "path": new, "merge_into": old, "reason": dup.reason},)
    mem.curate(list(dup.ops))
    assert len(mem.read(old).sources) == 2 and not mem.tree.exists(new)
    assert found(mem, "duplicate") == []        # an entry merged away is gone from the next scan


def test_small_talk_is_not_a_duplicate_worth_merging(mem: Memory) -> None:
    # "Thanks!" said in two chats is two moments about two different things: merging would join the
    # two threads through one entry's links and save nothing
    for cid, day in (("a", 0), ("b", 9)):
        mem.ingest(conversation=chat(cid, ("Ana", "Thanks!"), ("Ben", "Sounds good"), ("Ana", "Thanks so much, sounds great!"),
                                     start=T0 + timedelta(days=day)))
    assert found(mem) == []


def test_the_same_first_person_words_from_two_speakers_are_two_facts(mem: Memory) -> None:
    mem.ingest(conversation=chat("a", ("Ana", "I moved to Lisbon with my two cats last spring."),
                                 ("Ben", "I moved to Lisbon with my two cats last spring.")))
    assert found(mem, "duplicate") == []
    mem.ingest(conversation=chat("b", ("Ben", "The quarterly budget review happens every first Monday."),
                                 ("Ana", "The quarterly budget review happens every first Monday.")))
    [dup] = found(mem, "duplicate")          # said of no one in particular: one fact, whoever says it
    assert dup.paths[0] == entry_of(mem, "b", "budget") and len(dup.paths) == 2


def test_a_paraphrased_repeat_is_a_near_duplicate(mem: Memory) -> None:
    mem.ingest(conversation=chat("a", ("Ana", "Our staging cluster nodes run Ubuntu with the hardened kernel image.")))
    mem.ingest(conversation=chat("b", ("Ana", "The staging cluster nodes run the hardened Ubuntu kernel image now."),
                                 start=T0 + timedelta(days=3)))
    [near] = found(mem, "near_duplicate")
    assert near.paths == (entry_of(mem, "a", "staging"), entry_of(mem, "b", "staging"))
    assert near.action == "MERGE" and 0.6 <= near.confidence < 1.0
    assert near.ops[0]["merge_into"] == near.paths[0]


def test_a_changed_value_is_not_a_near_duplicate_but_superseded(mem: Memory) -> None:
    mem.ingest(conversation=chat("a", ("Ana", "The staging database listens on port 5432.")))
    mem.ingest(conversation=chat("b", ("Ben", "Heads up: the staging database now listens on port 6543."),
                                 start=T0 + timedelta(days=60)))
    assert found(mem, "near_duplicate") == [] and found(mem, "duplicate") == []
    [sup] = found(mem, "superseded")
    old, new = entry_of(mem, "a", "5432"), entry_of(mem, "b", "6543")
    assert sup.paths == (new, old) and sup.action == "SUPERSEDE"
    assert sup.ops == ({"op": "SUPERSEDE", "path": old, "by": new, "reason": sup.reason, "since": "2026-04-30"},)
    ev = sup.evidence
    assert (ev["old_value"], ev["new_value"], ev["value_kind"]) == ("5432", "6543", "number")
    assert {"staging", "database"} <= set(ev["subject"])
    assert ev["old_date"].startswith("2026-03-01") and ev["new_date"].startswith("2026-04-30")
    assert sup.confidence > 0.8      # "now": the newer statement says it changed


def test_a_move_naming_both_values_supersedes(mem: Memory) -> None:
    mem.ingest(conversation=chat("a", ("Ana", "The billing service runs version 2.4.1 in production.")))
    mem.ingest(conversation=chat("b", ("Ana", "We upgraded the billing service in production from 2.4.1 to 3.0.0."),
                                 start=T0 + timedelta(days=5)))
    [sup] = found(mem, "superseded")
    assert (sup.evidence["old_value"], sup.evidence["new_value"]) == ("2.4.1", "3.0.0")


def test_code_and_markup_state_no_fact(mem: Memory) -> None:
    # an assistant answering with code: two versions of a snippet are not a fact that changed
    code = ("```js\nconst weatherApiVersion = '{v}';\nconst weatherCacheSeconds = 600;\n```\n"
            "const weatherApiVersion = '{v}'; // the weather API version the dashboard calls")
    mem.ingest(conversation=chat("a", ("Ana", code.format(v="2.5"))))
    mem.ingest(conversation=chat("b", ("Ana", code.format(v="3.0")), start=T0 + timedelta(days=5)))
    assert found(mem, "superseded") == []
    # prose around code still states facts, inline code keeps its words
    mem.ingest(conversation=chat("c", ("Ana", "The billing service runs version `2.4.1` in production.")))
    mem.ingest(conversation=chat("d", ("Ana", "```sh\nmake deploy\n```\nThe billing service now runs version `3.0.0` in "
                                              "production."), start=T0 + timedelta(days=9)))
    [sup] = found(mem, "superseded")
    assert (sup.evidence["old_value"], sup.evidence["new_value"]) == ("2.4.1", "3.0.0")


def test_a_value_changed_twice_is_two_steps(mem: Memory) -> None:
    for n, (city, day) in enumerate((("Porto", 0), ("Madrid", 20), ("Vienna", 40))):
        mem.ingest(conversation=chat(f"c{n}", ("Ana", f"The team offsite this year is planned in {city} for three days."),
                                     start=T0 + timedelta(days=day)))
    sups = found(mem, "superseded")
    pairs = {(c.evidence["old_value"], c.evidence["new_value"]) for c in sups}
    assert pairs == {("porto", "madrid"), ("madrid", "vienna")}


def test_two_peoples_facts_sharing_a_template_are_not_superseded(mem: Memory) -> None:
    mem.ingest(conversation=chat("a", ("Ana", "Carla's phone number is 555-1234 for the on-call rota.")))
    mem.ingest(conversation=chat("b", ("Ana", "Dmitri's phone number is 555-9876 for the on-call rota."),
                                 start=T0 + timedelta(days=2)))
    mem.ingest(conversation=chat("c", ("Ana", "My desk is on floor 3 near the kitchen."),
                                 ("Ben", "My desk is on floor 5 near the kitchen."), start=T0 + timedelta(days=4)))
    assert found(mem, "superseded") == []


def test_a_closed_fact_is_not_proposed_again(mem: Memory) -> None:
    mem.curate([
        {"op": "ADD", "path": "infra/db/staging_port_old.md", "title": "Staging port",
         "content": "The staging database listens on port 5432.", "reason": "t",
         "sources": [{"kind": "note", "ref": "n1", "at": "2026-03-01"}],
         "extra": {"supersededBy": "infra/db/staging_port.md", "validUntil": "2026-04-01"}},
        {"op": "ADD", "path": "infra/db/staging_port.md", "title": "Staging port",
         "content": "The staging database now listens on port 6543.", "reason": "t",
         "sources": [{"kind": "note", "ref": "n2", "at": "2026-04-01"}],
         "extra": {"supersedes": ["infra/db/staging_port_old.md"]}},
    ])
    assert found(mem, "superseded") == []


def test_related_entries_that_do_not_link_are_linked_both_ways(mem: Memory) -> None:
    mem.ingest(conversation=chat("a", ("Ana", "The Grafana dashboard for the payment gateway shows latency spikes at noon.")))
    mem.ingest(conversation=chat("b", ("Ben", "Latency spikes on the payment gateway again; Grafana alerts fired twice."),
                                 start=T0 + timedelta(days=1)))
    [link] = found(mem, "link")
    a, b = entry_of(mem, "a", "Grafana"), entry_of(mem, "b", "Grafana")
    assert link.paths == tuple(sorted((a, b))) and link.action == "LINK"
    assert [(o["op"], o["path"], o["extra"]) for o in link.ops] == [
        ("UPDATE", link.paths[0], {"seeAlso": [link.paths[1]]}), ("UPDATE", link.paths[1], {"seeAlso": [link.paths[0]]})]
    mem.curate(list(link.ops))
    assert found(mem, "link") == []           # linked now
    # for readers to follow, not for ranking: the search's links (``related``) are unchanged
    assert mem.read(a).related == [] and mem.read(a).extra["seeAlso"] == [b]
    assert mem.read(b).extra["seeAlso"] == [a]


def test_see_also_is_unioned_by_update_and_merge(mem: Memory) -> None:
    add = lambda p, text: {"op": "ADD", "path": p, "content": text, "reason": "t"}  # noqa: E731
    mem.curate([add("a/b/one.md", "one"), add("a/b/two.md", "two"), add("a/b/three.md", "three"),
                add("a/b/four.md", "four")])
    also = lambda p, q: {"op": "UPDATE", "path": p, "extra": {"seeAlso": [q]}, "reason": "t"}  # noqa: E731
    mem.curate([also("a/b/one.md", "a/b/two.md"), also("a/b/one.md", "a/b/three.md"), also("a/b/four.md", "a/b/two.md")])
    assert mem.read("a/b/one.md").extra["seeAlso"] == ["a/b/two.md", "a/b/three.md"]
    mem.curate([{"op": "MERGE", "path": "a/b/four.md", "merge_into": "a/b/one.md", "reason": "t"}])
    assert mem.read("a/b/one.md").extra["seeAlso"] == ["a/b/two.md", "a/b/three.md"]


def test_names_and_small_talk_link_nothing(mem: Memory) -> None:
    # every message of a chat names its speakers or the one spoken to, and thanks them
    mem.ingest(conversation=chat("a", ("Ana", "Hey Ben, thanks so much for the help today!"),
                                 ("Ben", "Anytime Ana, glad it worked out, sounds great!")))
    mem.ingest(conversation=chat("b", ("Ben", "Ana, thanks again for today, that was really awesome!"),
                                 ("Ana", "Ben, glad it worked out for you, see you soon!"), start=T0 + timedelta(days=3)))
    assert found(mem, "link") == []


def test_links_are_capped_per_entry(mem: Memory) -> None:
    hub = "Kafka consumer lag on the orders topic grows after each broker restart."
    mem.ingest(conversation=chat("hub", ("Ana", hub)))
    for n in range(6):
        mem.ingest(conversation=chat(f"s{n}", ("Ben", f"Kafka orders topic consumer lag, note {n}: broker restart {n} slowed it."),
                                     start=T0 + timedelta(days=n + 1)))
    hub_path = entry_of(mem, "hub", "Kafka")
    links = found(mem, "link", settings=mem.tree.settings.replace(dream_links_per_entry=2))
    assert sum(hub_path in c.paths for c in links) <= 2
    assert all(sum(p in c.paths for c in links) <= 2 for c in links for p in c.paths)


def _old_notes(mem: Memory) -> None:
    mem.curate([{"op": "ADD", "path": f"notes/misc/n{i}.md", "title": f"Note {i}",
                 "content": f"Parking permit renewal form number {i} for the east garage.", "reason": "t",
                 **({"extra": {"keep": True}} if i == 0 else {})} for i in range(3)])


def test_old_unretrieved_entries_are_archive_candidates_but_never_kept_ones(mem: Memory) -> None:
    _old_notes(mem)
    mem.tree.signals.record_access(["notes/misc/n1.md"])
    assert found(mem, "archive") == []         # new entries
    later = datetime.now(timezone.utc) + timedelta(days=400)
    arch = found(mem, "archive", now=later)
    assert [c.paths for c in arch] == [("notes/misc/n2.md",)]     # n0 is kept, n1 was retrieved
    assert arch[0].ops == ({"op": "ARCHIVE", "path": "notes/misc/n2.md", "reason": arch[0].reason},)
    assert arch[0].evidence["access_count"] == 0 and arch[0].evidence["importance"] < 25


def test_the_kind_filter(mem: Memory) -> None:
    mem.ingest(conversation=chat("a", ("Ana", "The staging database listens on port 5432."),
                                 ("Ana", "The nightly backup job writes to the Glacier vault in Oregon.")))
    mem.ingest(conversation=chat("b", ("Ana", "The staging database now listens on port 6543."),
                                 ("Ana", "The nightly backup job writes to the Glacier vault in Oregon."),
                                 start=T0 + timedelta(days=9)))
    everything = scan(mem.tree)
    assert {c.kind for c in everything} >= {"duplicate", "superseded"}
    assert [c.kind for c in scan(mem.tree, kinds="superseded")] == ["superseded"]
    assert scan(mem.tree, kinds=["duplicate", "superseded"]) == [c for c in everything if c.kind in ("duplicate", "superseded")]
    with pytest.raises(ValueError, match="unknown finding kind"):
        scan(mem.tree, kinds=["dupes"])


def _snapshot(home: Path) -> dict[str, str]:
    out = {}
    for p in sorted((home / "tree").rglob("*")) + sorted((home / "journal").rglob("*")):
        if p.is_file():
            out[str(p.relative_to(home))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_the_scan_is_deterministic_and_writes_nothing(mem: Memory) -> None:
    mem.ingest(conversation=chat("a", ("Ana", "The staging database listens on port 5432."),
                                 ("Ben", "The Grafana board for the payment gateway shows latency at noon."),
                                 ("Ana", "The nightly backup job writes to the Glacier vault in Oregon.")))
    mem.ingest(conversation=chat("b", ("Ana", "The staging database now listens on port 6543."),
                                 ("Ben", "Payment gateway latency spikes again, the Grafana alerts fired."),
                                 ("Ana", "The nightly backup job writes to the Glacier vault in Oregon."),
                                 start=T0 + timedelta(days=9)))
    before = _snapshot(mem.home)
    first = [c.to_dict() for c in scan(mem.tree)]
    second = [c.to_dict() for c in scan(mem.tree)]
    assert first == second and len(first) >= 3
    assert _snapshot(mem.home) == before
    order = ("duplicate", "near_duplicate", "superseded", "link", "archive")
    assert [order.index(c["kind"]) for c in first] == sorted(order.index(c["kind"]) for c in first)
    # and a fresh process reading the same files finds the same
    with Memory.open(mem.home.parent, durable=False) as again:
        assert [c.to_dict() for c in scan(again.tree)] == first


class TopicEncoder:
    """A stand-in sentence encoder: texts about the orders database mean one thing, the rest another."""

    name = "topics-1"
    dim = 2

    def encode(self, texts: list[str]) -> Any:
        import numpy as np

        return np.array([[1.0, 0.0] if "orders" in t.lower() else [0.0, 1.0] for t in texts], dtype=np.float32)


def test_with_semantic_weight_the_same_meaning_in_other_words_is_a_near_duplicate(tmp_path: Path) -> None:
    ops = [{"op": "ADD", "path": "db/choice/a.md", "title": "Orders database", "reason": "t",
            "content": "The orders service database will be Postgres on the shared cluster, decided at the review."},
           {"op": "ADD", "path": "db/choice/b.md", "title": "Orders database", "reason": "t",
            "content": "For the orders service we picked Postgres as its database, running on the shared cluster."},
           {"op": "ADD", "path": "food/lunch/c.md", "title": "Lunch", "reason": "t",
            "content": "The team likes the ramen place on the corner."}]
    with Memory.open(tmp_path, create=True, durable=False) as m:
        m.curate(ops)
        assert found(m, "near_duplicate") == []          # by the words alone: related, not the same
        assert [c.paths for c in found(m, "link")] == [("db/choice/a.md", "db/choice/b.md")]
    with Memory.open(tmp_path, durable=False, semantic_weight=0.5, embed_ahead=False) as m:
        m.tree.encoder = TopicEncoder()
        [near] = found(m, "near_duplicate")
        assert near.paths == ("db/choice/a.md", "db/choice/b.md") and near.confidence <= 0.95
        assert found(m, "link") == [] and found(m, "link", kinds="link") == []   # one finding per pair


def test_every_finding_names_the_entry_a_duplicate_group_keeps(mem: Memory) -> None:
    said = "The staging database listens on port 5432."
    for n, day in enumerate((0, 3, 6)):
        mem.ingest(conversation=chat(f"c{n}", ("Ana", said), ("Ben", "The Grafana board for the payment gateway shows latency."),
                                     start=T0 + timedelta(days=day)))
    mem.ingest(conversation=chat("new", ("Ana", "The staging database now listens on port 6543."),
                                 ("Ben", "Payment gateway latency again: the Grafana alerts fired."), start=T0 + timedelta(days=20)))
    got = scan(mem.tree)
    merged_away = {p for c in got if c.kind == "duplicate" for p in c.paths[1:]}
    assert len(merged_away) == 4                       # two groups of three
    assert not merged_away & {p for c in got if c.kind != "duplicate" for p in c.paths}
    [sup] = [c for c in got if c.kind == "superseded"]
    assert sup.paths[1] == entry_of(mem, "c0", "5432")
    # what loses nothing applies one candidate after another: merges, then links
    for c in got:
        if c.action in ("MERGE", "LINK"):
            mem.curate(list(c.ops))
    assert [c.kind for c in scan(mem.tree)] == ["superseded"]


def test_an_empty_tree_and_an_unreadable_entry_are_no_error(mem: Memory) -> None:
    assert scan(mem.tree) == []
    bad = mem.home / "tree" / "notes" / "misc" / "broken.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("---\ntitle: [unclosed\n---\n# x\n", encoding="utf-8")
    (bad.parent / "binary.md").write_bytes(b"\xff\xfe\x00garbage")
    mem.curate([{"op": "ADD", "path": "notes/misc/fine.md", "title": "Fine", "reason": "t",
                 "content": "The quarterly budget review happens every first Monday."}])
    assert scan(mem.tree) == []


@pytest.mark.parametrize("sentence, values, was", [
    ("The staging database now listens on port 6543.", [("6543", "number")], []),
    ("We moved the billing worker from port 6779 to port 4371.", [("4371", "number")], [("6779", "number")]),
    ("The office moved to 12 Oak Road last week.", [("12 oak road", "mixed")], []),
    ("Mark 22 November 2026 for the Glacier launch.", [("mark", "name"), ("22 november 2026", "date"),
                                                       ("glacier", "name")], []),
    ("The mechanic spent 612 minutes fixing a teapot.", [("612", "number:minut")], []),
    ("Heads up: FYI the qa proxy is on 2408.", [("2408", "number")], []),
])
def test_what_a_sentence_states(sentence: str, values: list, was: list) -> None:
    from memgrove.tree.hygiene.statement_values import proper_words, statement

    s = statement(sentence, proper_words([sentence, "We met Mark and the Glacier team."]))
    assert list(s.values) == values and list(s.was) == was


def test_a_speakers_name_is_no_value_where_written_as_a_name() -> None:
    from memgrove.tree.text.analysis import analyze
    from memgrove.tree.hygiene.statement_values import statement

    s = statement("Dev, the dev database listens on 5432.", frozenset(), frozenset(analyze("Dev")))
    assert list(s.values) == [("5432", "number")] and "dev" in s.subject


def test_a_word_wedged_into_the_subject_names_another_subject(mem: Memory) -> None:
    mem.ingest(conversation=chat("a", ("Ana", "The support team office is at 63 Cedar Road.")))
    mem.ingest(conversation=chat("b", ("Ana", "The support east team office is at 43 Elm Avenue."),
                                 start=T0 + timedelta(days=5)))
    assert found(mem, "superseded") == []
    mem.ingest(conversation=chat("c", ("Ben", "You can find the support team office at 80 Garden Street now."),
                                 start=T0 + timedelta(days=9)))
    [sup] = found(mem, "superseded")        # saying more before the subject is still the same subject
    assert sup.paths == (entry_of(mem, "c", "Garden"), entry_of(mem, "a", "Cedar"))
