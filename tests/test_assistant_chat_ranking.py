"""Ranking in a chat with an AI assistant, beyond the role weight (tests/test_role_ranking.py):
standing instructions and preferences come back, the parts of one long message take one place,
the lifts weigh an assistant's entry as its own match was, and the user's question is not
penalized for asking."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgrove import Memory
from memgrove.tree.text import standing
from memgrove.tree.index.catalog import Traits
from memgrove.tree.base.errors import MemgroveError
from memgrove.tree import store as store_mod
from memgrove.tree.ranking.coverage import one_per_source
from memgrove.tree.ranking.cut import may_mute, with_full_weight
from memgrove.tree.ranking.lifts import with_folder_coverage, with_neighbourhood_coverage
from memgrove.tree.ranking.own import standing_lift
from memgrove.tree.ranking.rules import with_rules
from memgrove.tree.ranking.table import with_lift
from memgrove.tree.settings import TreeSettings

S1 = "conversations/c1/session_1"
S2 = "conversations/c1/session_2"


def msg(i: int, role: str, text: str, session: str = "session_1") -> dict:
    return {"id": str(i), "speaker": role, "role": role, "text": text, "session": session, "time": "2024-03-15"}


def _entries(mem: Memory, question: str, limit: int = 10) -> list[str]:
    return [h.path for h in mem.tree.search(question, limit) if h.kind == "entry"]


def test_what_states_a_standing_instruction_or_preference() -> None:
    for text in ("Always include version numbers when I ask about software dependencies.",
                 "Please never push to main without a review.",
                 "Thanks! From now on, use tabs in my Go code.",
                 "OK. And always answer in British English.",
                 "Don't ever suggest jQuery to me.",
                 "I prefer e-books for their portability, but I enjoy print too.",
                 "I\u2019d rather keep the meeting short.",
                 "Use type hints going forward."):
        assert standing.states_standing(text, "user"), text
    for text in ("I always forget my keys.",             # a habit, not a rule for the assistant
                 "Can you help me write a cover letter?",
                 "What do you prefer, tea or coffee?",
                 "The script never finished on the server."):
        assert not standing.states_standing(text, "user"), text
    # an AI assistant's "always back up your data" is advice; between two people (no roles)
    # "Always here to help!" is a greeting
    assert not standing.states_standing("Always back up your data before upgrading.", "assistant")
    assert not standing.states_standing("Always here to help! Never give up.", "")
    assert standing.standing_kind("Always cite sources in APA style.", "user") == standing.RULE
    assert standing.standing_kind("Use tabs from now on.", "user") == standing.RULE
    assert standing.standing_kind("I prefer e-books.", "user") == standing.PREFERENCE
    assert standing.standing_kind("I bought e-books.", "user") == standing.NONE


def test_the_catalog_records_standing_and_the_one_source(mem: Memory) -> None:
    long_reply = "\n\n".join(f"Paragraph {n} on deployment pipelines and caching layers, "
                             + " ".join(f"word{n}x{k}" for k in range(60)) for n in range(4))
    mem.ingest(conversation={"id": "c1", "messages": [
        msg(1, "user", "Always include version numbers when I ask about libraries."),
        msg(2, "assistant", long_reply)]})
    traits = mem.tree.catalog.traits_of(sorted(mem.tree.catalog.files()))
    assert traits[f"{S1}/1.md"].standing == standing.RULE and traits[f"{S1}/1.md"].source == "conversation:c1#1"
    parts = sorted(p for p in traits if p.startswith(f"{S1}/2"))
    assert len(parts) >= 2
    assert {traits[p].source for p in parts} == {"conversation:c1#2"}
    assert not any(traits[p].standing for p in parts)


def test_a_standing_instruction_rises_over_messages_that_merely_share_its_words(tmp_path: Path) -> None:
    talk = [msg(1, "user", "Always include version numbers when I ask about libraries."),
            msg(2, "assistant", "Got it, I will include version numbers.")]
    for i in range(3, 9, 2):     # the answer: which libraries the project uses
        talk.append(msg(i, "user", f"The libraries this project uses: the project uses the libraries of build {i}.",
                        "session_2"))
        talk.append(msg(i + 1, "assistant", "Pin them in a lock file.", "session_2"))
    for i in range(9, 21, 2):    # short messages that share the question's other word
        talk.append(msg(i, "user", f"Project build {i}: the project.", "session_3"))
        talk.append(msg(i + 1, "assistant", "Good.", "session_3"))
    question, rule = "Which libraries does this project use?", f"{S1}/1.md"
    with Memory.open(tmp_path / "on", create=True, durable=False) as mem:
        mem.ingest(conversation={"id": "c1", "messages": talk})
        assert _entries(mem, question).index(rule) == 3           # right after the three answers
    with Memory.open(tmp_path / "off", create=True, durable=False, standing_weight=0.0, standing_rules=0) as mem:
        mem.ingest(conversation={"id": "c1", "messages": talk})
        order = _entries(mem, question)
        assert rule not in order[:9]                               # behind the six short ones


def test_the_users_rules_follow_the_best_hits_of_every_search(tmp_path: Path) -> None:
    talk = [msg(1, "user", "Always format dates as MM/DD/YYYY when I ask about scheduling."),
            msg(2, "assistant", "Noted."),
            msg(3, "user", "I prefer morning meetings."),                 # a preference: not a rule
            msg(4, "assistant", "Noted."),
            msg(5, "user", "Never use emoji in my commit messages.", "session_2"),
            msg(6, "assistant", "Understood.", "session_2")]
    for i in range(7, 19, 2):
        talk.append(msg(i, "user", f"The dentist appointment {i} is at the clinic on Main Street.", "session_3"))
        talk.append(msg(i + 1, "assistant", "OK.", "session_3"))
    rules = [f"{S2}/5.md", f"{S1}/1.md"]                                    # the latest first
    with Memory.open(tmp_path / "on", create=True, durable=False) as mem:
        mem.ingest(conversation={"id": "c1", "messages": talk})
        assert mem.tree.catalog.standing_rules(5) == rules and mem.tree.catalog.standing_rules(1) == rules[:1]
        hits = [h for h in mem.tree.search("When is my dentist appointment?", 10) if h.kind == "entry"]
        paths = [h.path for h in hits]
        assert paths[3:5] == rules and f"{S1}/3.md" not in paths         # after the best three; no preference
        assert all("dentist" in mem.tree.read_text(p) for p in paths[:3])
        rule_hit = hits[3]
        assert rule_hit.relevance == 0.0 and rule_hit.matched == ()          # no match of its own: no confidence
        assert _entries(mem, "dentist", 2) == paths[:2]                      # a short list keeps its best hits
        assert _entries(mem, "zebra quasar") == []                           # nothing found: no rules either
    with Memory.open(tmp_path / "one", create=True, durable=False, standing_rules=1) as mem:
        mem.ingest(conversation={"id": "c1", "messages": talk})
        # with more rules than it may bring, a search brings the ones the question matches, and no other
        paths = _entries(mem, "How should I format the dates of my dentist appointment?")
        assert f"{S1}/1.md" in paths[:4] and f"{S2}/5.md" not in paths
        assert not set(rules) & set(_entries(mem, "When is my dentist appointment?"))
    with Memory.open(tmp_path / "off", create=True, durable=False, standing_rules=0) as mem:
        mem.ingest(conversation={"id": "c1", "messages": talk})
        assert not set(rules) & set(_entries(mem, "When is my dentist appointment?"))


def test_with_rules_places_the_rules_after_the_best_hits() -> None:
    order = [("a", 0.9), ("b", 0.8), ("r1", 0.7), ("c", 0.6), ("d", 0.5), ("r3", 0.4)]
    # r1 is among the best three and stays; r3, found lower, moves up before r2, found not at all
    assert with_rules(order, ["r2", "r1", "r3", "r4"], 3) == [("a", 0.9), ("b", 0.8), ("r1", 0.7), ("r3", 0.7),
                                                               ("r2", 0.7), ("r4", 0.7), ("c", 0.6), ("d", 0.5)]
    assert with_rules(order[:1], ["r2"], 3) == [("a", 0.9), ("r2", 0.9)]
    assert with_rules([], ["r2"], 3) == [] and with_rules(order, [], 3) == order


def test_the_parts_of_one_long_message_take_one_place(mem: Memory) -> None:
    para = "The nginx cache config for the staging proxy needs a longer timeout and a warm cache. "
    long_msg = "\n\n".join(para * 5 + f"Section {n}." for n in range(4))
    mem.ingest(conversation={"id": "c1", "messages": [
        msg(1, "user", long_msg),
        msg(2, "user", "The staging proxy nginx cache is warm now.", "session_2"),
        msg(3, "user", "My nginx proxy timeout on staging was raised.", "session_2")]})
    order = _entries(mem, "nginx cache timeout on the staging proxy")
    firsts = [p for p in order if "_part_" not in p]
    assert {f"{S2}/2.md", f"{S2}/3.md"} <= set(order[:3])          # the other messages come before more parts
    assert sum(1 for p in order[:3] if p.startswith(f"{S1}/1")) == 1
    assert len(order) > len(firsts)                                   # the other parts still follow


def test_one_per_source_keeps_the_first_entry_of_each_source_in_place() -> None:
    t = {p: Traits(None, False, False, "user", src) for p, src in
         (("a1", "c#1"), ("a2", "c#1"), ("b", "c#2"), ("a3", "c#1"), ("n1", ""), ("n2", ""))}
    order = [("a1", 0.9), ("a2", 0.8), ("n1", 0.7), ("b", 0.6), ("a3", 0.5), ("n2", 0.4)]
    assert [p for p, _ in one_per_source(order, t)] == ["a1", "n1", "b", "n2", "a2", "a3"]
    assert one_per_source([], t) == []


def test_standing_lift_is_its_weight_times_its_coverage() -> None:
    idf = {"librari": 2.0, "project": 1.0, "use": 1.0}
    raw = [("x", 5.0, frozenset({"project", "use"})), ("rule", 1.0, frozenset({"librari"}))]
    t = {"x": Traits(None, False, False, "user"), "rule": Traits(None, False, False, "user", "", True)}
    assert standing_lift(raw, t, idf, 0.5) == {"rule": 0.25}
    assert standing_lift(raw, t, idf, 0.0) == {}


def test_an_assistant_entry_gains_its_lifts_at_its_role_weight() -> None:
    raw = [("u", 10.0, frozenset({"a"})), ("bot", 2.0, frozenset({"b"}))]
    assert dict((p, s) for p, s, _ in with_lift(raw, {"u": 0.1, "bot": 0.5}, {"bot": 0.2})) == \
        {"u": 11.0, "bot": 3.0}
    idf = {"a": 1.0, "b": 1.0}
    # the assistant's matched words do not cover the query for the user's entries around it
    near = with_neighbourhood_coverage(raw, idf, 1.0, {"u": {"bot"}, "bot": {"u"}}, {"bot": 0.2})
    assert dict((p, s) for p, s, _ in near) == {"u": 15.0, "bot": 2.0 + 1.0 * 0.2 * 10.0}
    folder = with_folder_coverage([("f/u.md", 10.0, frozenset({"a"})), ("f/bot.md", 2.0, frozenset({"b"}))],
                                  idf, 1.0, {"f/bot.md": 0.2})
    assert dict((p, s) for p, s, _ in folder) == {"f/u.md": 15.0, "f/bot.md": 3.0}


def test_the_users_question_is_not_penalized_for_asking(tmp_path: Path) -> None:
    talk = [msg(1, "user", "Is my Postgres 15 upgrade on the staging cluster safe to run tonight?"),
            msg(2, "assistant", "It should be; back it up first."),
            msg(3, "user", "The Postgres staging cluster runs version 14 and the upgrade is planned.")]
    with Memory.open(tmp_path / "m", create=True, durable=False, ask_penalty=0.9, near_weight=0,
                     folder_weight=0, link_weight=0) as mem:
        mem.ingest(conversation={"id": "c1", "messages": talk})
        assert mem.tree.catalog.traits_of([f"{S1}/1.md"])[f"{S1}/1.md"].asks
        assert _entries(mem, "Postgres upgrade staging cluster safe tonight")[0] == f"{S1}/1.md"


def _busy_chat() -> list[dict]:
    """One short user message holding the fact, then 29 assistant replies repeating the
    question's words, each of which outmatches it on words alone."""
    talk = [msg(1, "user", "I picked ClickHouse as the database for my analytics service.")]
    for i in range(2, 60, 2):
        talk.append(msg(i, "user", f"Thanks, next point {i}.", f"session_{i}"))
        talk.append(msg(i + 1, "assistant", "The analytics service database: an analytics database serves an "
                        f"analytics service, so pick the database for the analytics service with care ({i}).",
                        f"session_{i}"))
    return talk


def test_the_users_message_below_a_cut_the_assistant_filled_still_competes(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    question, fact = "Which database did I pick for the analytics service?", f"{S1}/1.md"
    with Memory.open(tmp_path / "m", create=True, durable=False) as mem:
        mem.ingest(conversation={"id": "c1", "messages": _busy_chat()})
        assert mem.tree.catalog.holds_assistant()
        engine_order = [p for p, _, _ in mem.tree._engine_search(question, 100)]
        assert engine_order.index(fact) >= 3 * 3 + 10                 # below the cut of a search for 3
        assert _entries(mem, question, 3)[0] == fact
        monkeypatch.setattr(store_mod, "POOL_WIDEN", 1)                 # the engine's cut alone
        assert fact not in _entries(mem, question, 3)
    with Memory.open(tmp_path / "plain", create=True, durable=False) as mem:
        mem.ingest(conversation={"id": "c1", "messages": [{k: v for k, v in m.items() if k != "role"}
                                                          for m in _busy_chat()]})
        assert not mem.tree.catalog.holds_assistant()                 # no roles: searched as before


def test_with_full_weight_adds_one_full_weight_entry_per_muted_one() -> None:
    class _Roles:
        def __init__(self, roles: dict[str, str]) -> None:
            self.roles = roles

        def traits_of(self, paths: list[str]) -> dict[str, Traits]:
            return {p: Traits(None, False, False, self.roles[p]) for p in paths if p in self.roles}

    roles = _Roles({"a1": "assistant", "u1": "user", "a2": "assistant", "a3": "assistant", "u2": "user",
                    "n1": "", "u3": "user"})
    cut = [("a1", 9.0, frozenset()), ("u1", 8.0, frozenset()), ("a2", 7.0, frozenset())]
    below = [("a3", 6.0, frozenset()), ("u2", 5.0, frozenset()), ("n1", 4.0, frozenset()), ("u3", 3.0, frozenset())]
    st = TreeSettings()
    got = with_full_weight("Which database did I pick?", cut, below, roles, st)  # type: ignore[arg-type]
    assert [p for p, _, _ in got] == ["a1", "u1", "a2", "u2", "n1"]      # two muted in the cut: two more
    # a question about the assistant's words mutes nothing; at weight 1 nothing is muted
    assert with_full_weight("What did you recommend?", cut, below, roles, st) == cut  # type: ignore[arg-type]
    assert with_full_weight("Which database?", cut, below, roles,  # type: ignore[arg-type]
                            TreeSettings(assistant_weight=1.0)) == cut
    assert with_full_weight("Which database?", cut, [], roles, st) == cut  # type: ignore[arg-type]
    # the search goes deeper only where the weight can mute something
    assert may_mute("Which database did I pick?", st)
    assert not may_mute("What did you recommend?", st) and not may_mute("Which?", TreeSettings(assistant_weight=1.0))


def test_standing_settings_are_checked(tmp_path: Path) -> None:
    assert TreeSettings().standing_weight == 0.5 and TreeSettings().standing_rules == 5
    with pytest.raises(MemgroveError, match="standing_weight must be between 0 and 2"):
        Memory.open(tmp_path / "a", create=True, standing_weight=3)
    with pytest.raises(MemgroveError, match="standing_rules must be between 0 and 20"):
        Memory.open(tmp_path / "b", create=True, standing_rules=-1)
