"""The current value first (graphs/current/): of statements giving one subject different
values, a question about now is answered by the newest, one about the past by the one that held
then, on any memory, with or without a supersession recorded."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from memgrove.graphs.current import recorded as answer_recorded, statements as ac, when as answer_when

JAN, MAR, MAY = (datetime(2026, m, d, 10, tzinfo=timezone.utc) for m, d in ((1, 10), (3, 2), (5, 2)))

# long messages stating several things at once: one of five changes
OLD = ("Morning! A few infra notes. The deploy window is Tuesday at 14:00. The staging database listens on "
       "port 5432. Backups run at 02:00 every night. Priya is on call this week.")
CHITCHAT = "Lunch was great today. I tried the new ramen place near the office, highly recommended."
NEW = ("Quick round-up after the migration. We renamed the analytics schema to events. Staging database now "
       "listens on port 6543 since the migration. The dashboard got a dark mode. Tom is on call from this week.")


def _plan(question: str, bodies=(OLD, CHITCHAT, NEW), times=(JAN, MAR, MAY)):
    return ac.plan(question, list(bodies), list(times), ["Ana, x", "Ben, x", "Ana, x"])


def test_a_question_about_now_leaves_out_the_older_statement_and_puts_the_newest_entry_first():
    p = _plan("Which port does the staging database listen on?")
    assert "5432" not in p.bodies[0] and "Backups run at 02:00" in p.bodies[0]   # only the one statement goes
    assert "6543" in p.bodies[2]
    assert p.order.index(2) < p.order.index(0)
    assert p.labels == ["", "", ""]


def test_a_question_about_the_past_keeps_the_older_value_and_says_what_replaced_it():
    for q in ("Which port did the staging database use before?", "Which port did staging listen on in March?",
              "What port did the staging database originally listen on?"):
        p = _plan(q)
        assert "6543" not in p.bodies[2] and "5432" in p.bodies[0], q
        assert p.labels[0] == "(until 2 May 2026; since then: 6543)", q
        assert p.order.index(0) < p.order.index(2), q


def test_a_name_replaced_is_a_new_value_of_one_subject():
    p = _plan("Who is on call?")
    assert "Priya" not in p.bodies[0] and "Tom is on call" in p.bodies[2]
    assert _plan("Who was on call before?").labels[0] == "(until 2 May 2026; since then: Tom)"


@pytest.mark.parametrize("old, new", [
    # two subjects: the production proxy and the preview proxy
    ("The production auth proxy listens on 5581.", "The preview auth proxy listens on 4767."),
    # two values changed at once: two facts sharing a template
    ("Alice's phone is 555-1234.", "Bob's phone is 555-9876."),
    # the same value said again is no change
    ("The staging database listens on port 5432.", "Reminder: the staging database listens on port 5432."),
])
def test_statements_that_are_not_one_subject_changed_are_left_alone(old, new):
    # how rare each word is in the memory (the index's idf): "production" and "preview" name the proxy
    rare = {"product": 3.0, "preview": 3.0}
    p = ac.plan("Which port does the proxy listen on? What phone? staging database", [old, new], [JAN, MAY],
                weight=lambda t: rare.get(t, 1.0))
    assert p.bodies == [old, new] and p.order == [0, 1]


def test_statements_without_a_time_or_of_one_time_are_not_ordered():
    q = "Which port does the staging database listen on?"
    assert not ac.plan(q, [OLD, NEW], [None, MAY]).changed
    assert not ac.plan(q, [OLD, NEW], [MAY, MAY]).changed


def test_a_first_person_statement_is_its_speakers_own():
    a, b = "My desk is on floor 3.", "My desk is on floor 5."
    p = ac.plan("Which floor is my desk on?", [a, b], [JAN, MAY], ["Ana, 10 January 2026", "Ben, 2 May 2026"])
    assert not p.changed
    p = ac.plan("Which floor is my desk on?", [a, b], [JAN, MAY], ["Ana, 10 January 2026", "Ana, 2 May 2026"])
    assert p.changed and p.bodies[0].strip() == ""


def test_the_time_asked_picks_the_value_that_held_then():
    mid = "Update: the staging database listens on port 7000 now."
    q = "Which port did the staging database listen on in April?"
    p = ac.plan(q, [OLD, mid, NEW], [JAN, MAR, MAY])
    assert "7000" in p.bodies[1] and "5432" not in p.bodies[0] and "6543" not in p.bodies[2]
    assert p.labels[1] == "(until 2 May 2026; since then: 6543)"


def test_a_closed_entrys_label_names_the_new_value():
    assert answer_recorded.closed_label(OLD, NEW, MAY.date()) == "(until 2 May 2026; since then: 6543)"
    assert answer_recorded.closed_label("The office is at 12 Oak Road.", "The office moved to 3 Elm Street.", None) \
        == "(superseded; since then: 3 Elm Street)"
    assert answer_recorded.closed_label(OLD, CHITCHAT, MAY.date()) == ""


def test_the_time_of_an_entry_comes_from_its_sources_else_its_dates_else_its_label():
    assert answer_when.time_of([{"kind": "conversation", "at": "2026-05-02T09:00:00Z"}]) == \
        datetime(2026, 5, 2, 9, tzinfo=timezone.utc)
    # a time memgrove made up (the time of curation) orders nothing
    assert answer_when.time_of([{"at": "2026-05-02T09:00:00Z", "generated": "time"}]) is None
    assert answer_when.time_of([], {"validFrom": "2026-03-02"}, "2026-01-01T00:00:00Z") == datetime(2026, 3, 2, tzinfo=timezone.utc)
    assert answer_when.time_of([], None, "", "Ana, 2 May 2026") == datetime(2026, 5, 2, tzinfo=timezone.utc)


@pytest.mark.parametrize("question, past", [
    ("Which port does staging use?", False), ("Who is on call now?", False),
    ("What is my highest score so far?", False), ("How old is Ana?", False),
    ("Which port did staging use before?", True), ("What was the port originally?", True),
    ("Which port did staging use in March?", True), ("What did we use last year?", True),
    ("Which port did staging use before 24 April 2026?", True), ("What port did we use to have?", True),
])
def test_what_asks_about_the_past(question, past):
    assert answer_when.asks_past(question) is past


def test_through_a_query_without_a_model(mem):
    msgs = [("m1", "2026-01-10T10:00:00Z", "Ana", OLD), ("m2", "2026-02-11T10:00:00Z", "Ben", CHITCHAT),
            ("m3", "2026-05-02T09:00:00Z", "Ana", NEW)]
    mem.ingest(conversation={"id": "ops", "messages": [{"id": i, "speaker": sp, "text": t, "time": at}
                                                       for i, at, sp, t in msgs]})
    now = mem.query("Which port does the staging database listen on?")
    assert "6543" in now.answer and "5432" not in now.answer
    assert now.sources[0].endswith("m3.md")
    before = mem.query("Which port did the staging database use before?")
    assert "5432" in before.answer and "(until 2 May 2026; since then: 6543)" in before.answer
    assert "Tom" in mem.query("Who is on call?").answer


def test_a_time_asked_before_every_value_tells_nothing():
    p = ac.plan("Which port did the staging database listen on in 2025?", [OLD, NEW], [JAN, MAY])
    assert not p.changed and p.bodies == [OLD, NEW]


def test_an_entry_found_beyond_the_chosen_ones_is_added_only_when_it_answers():
    q = "Which port does the staging database listen on?"
    p = ac.plan(q, [OLD, CHITCHAT, NEW], [JAN, MAR, MAY], optional=1)
    assert p.order[0] == 2 and set(p.order) == {0, 1, 2}          # the newer value, found further, leads
    p = ac.plan(q, [NEW, CHITCHAT, OLD], [MAY, MAR, JAN], optional=1)
    assert p.order == [0, 1]            # an older one, for now, is not added
    p = ac.plan("Which port did the staging database use before?", [NEW, CHITCHAT, OLD], [MAY, MAR, JAN], optional=1)
    assert p.order[0] == 2 and p.labels[2] == "(until 2 May 2026; since then: 6543)"


def test_the_statement_that_answers_leads_when_the_picker_chose_another_subject():
    p = _plan("Which port does the staging database listen on?")
    assert p.lead("…", "The dashboard got a dark mode. (Ana, 2 May 2026)").sentence.startswith("Staging database now")
    assert p.lead("…", "Staging database now listens on port 6543 since the migration. (Ana, 2 May 2026)") is None


def test_a_sentence_is_split_into_clauses_where_it_states_two_things():
    assert ac.clauses("The dentist appointment is on March 14 at 9:00, and Lily's piano lesson is on Wednesdays.") == \
        ["The dentist appointment is on March 14 at 9:00", "and Lily's piano lesson is on Wednesdays."]
    # "which" keeps its subject: "the docs, which are hosted on Read the Docs"
    assert len(ac.clauses("I keep the docs, which are hosted on Read the Docs.")) == 1


def test_values_side_by_side_are_one_and_a_date_beside_the_value_asked_is_when_it_holds():
    p = ac.plan("When is the maintainers' sync?", ["Our maintainers' sync stays on Thursdays at 16:00 UTC, same link.",
                                                  "The maintainers' sync moves to Tuesdays at 15:00 UTC, same link."],
                [JAN, MAY])
    assert p.changed and "Thursdays" not in p.bodies[0]
    p = ac.plan("How much is our rent?", ["Our rent is $1,850 a month until the lease ends in August.",
                                          "The lease renewal letter came: rent will be $1,975 a month from March."],
                [JAN, MAY], ["Maya, x", "Maya, x"])
    assert p.changed and "1,850" not in p.bodies[0]


def test_a_statement_dream_recorded_as_replaced_is_left_out_for_now_and_quoted_with_its_new_value():
    extra = {"supersededStatements": [{"statement": "The staging database listens on port 5432.", "value": "5432",
                                       "by": "ops/new.md", "newValue": "6543", "since": "2026-05-02"}]}
    recorded = answer_recorded.recorded_of(extra, 0, ["ops/old.md", "ops/new.md"])
    assert recorded == [answer_recorded.Recorded(0, "The staging database listens on port 5432.", "6543",
                                    datetime(2026, 5, 2).date(), True)]
    now = answer_recorded.with_recorded(ac.Plan([0, 1], [OLD, "Something else entirely."], ["", ""]), "Which port does staging use?",
                           recorded)
    assert "5432" not in now.bodies[0] and now.changed
    before = answer_recorded.with_recorded(ac.Plan([0, 1], [OLD, "x"], ["", ""]), "Which port did staging use before?", recorded)
    assert "5432" in before.bodies[0]
    assert before.quoted_labels == {"The staging database listens on port 5432.": "(until 2 May 2026; since then: 6543)"}
    # the newer entry not among those answered from: the statement stays, and says what replaced it when quoted
    far = answer_recorded.with_recorded(ac.Plan([0], [OLD], [""]), "Which port does staging use?",
                           answer_recorded.recorded_of(extra, 0, ["ops/old.md"]))
    assert "5432" in far.bodies[0] and far.quoted_labels


def test_dreams_record_is_read_by_the_answer(mem):
    msgs = [("m1", "2026-01-10T10:00:00Z", "Ana", OLD), ("m3", "2026-05-02T09:00:00Z", "Ana", NEW)]
    mem.ingest(conversation={"id": "ops", "messages": [{"id": i, "speaker": sp, "text": t, "time": at}
                                                       for i, at, sp, t in msgs]})
    old = next(p for p in mem.tree.entry_paths() if p.endswith("m1.md"))
    new = next(p for p in mem.tree.entry_paths() if p.endswith("m3.md"))
    mem.curate([{"op": "UPDATE", "path": old, "reason": "dream: the backup time changed", "extra": {
        "supersededStatements": [{"statement": "Backups run at 02:00 every night.", "value": "02:00", "by": new,
                                  "newValue": "03:30", "since": "2026-05-02"}]}}])
    a = mem.query("When did backups run before?")
    assert "02:00" in a.answer and "(until 2 May 2026; since then: 03:30)" in a.answer


def test_messages_of_one_time_keep_the_order_of_their_ids():
    def at(when: str, ref: str, kind: str = "conversation"):
        return answer_when.time_of([{"kind": kind, "at": when, "ref": ref}])

    day = "2024-04-25"
    assert at(day, "chat#148") < at(day, "chat#182") and at(day, "chat#D1:3") < at(day, "chat#D1:12")
    # never across a second: what was said at another time keeps its order
    assert at("2024-04-25T10:00:01Z", "chat#1") > at("2024-04-25T10:00:00Z", "chat#9999")
    # a file's time is its checkout's, not when its facts were stated: pages curated on one day are of one time
    assert at(day, "notes/incident.md#INC-231", "file") is None
    assert answer_when.time_of([{"kind": "file", "at": "2026-05-02T09:00:01Z"}], None, "2026-05-02T09:13:22Z") == \
        answer_when.time_of([{"kind": "file", "at": "2026-05-02T09:07:00Z"}], None, "2026-05-02T09:13:25Z")


def test_the_value_changed_is_of_the_kind_asked_and_an_assistant_restates_none():
    a = "Given that you have 45 sources in your Zotero library, tagged by theme."
    b = "I've added 52 sources to my Zotero library, how can I organize them?"
    q = "How many sources are in my Zotero library?"
    assert ac.plan(q, [a, b], [JAN, MAY], ["user, x", "user, x"]).changed
    assert not ac.plan(q, [b, a], [JAN, MAY], ["user, x", "assistant, x"], echoes=[False, True]).changed
    # a name swapped is no answer to "how many"
    assert not ac.plan(q, ["Organizing your sources in Zotero library helps.", "Groups of sources in Zotero library."],
                       [JAN, MAY]).changed


@pytest.mark.parametrize("question", ["Have I ever met Kelly at a book club?",
                                      "Have I completed any coin toss problems before?"])
def test_whether_something_ever_happened_is_no_question_about_a_value(question):
    assert not answer_when.asks_state(question) and not answer_when.asks_past(question)


def test_a_long_sentence_is_quoted_by_its_clause():
    long = ("I reviewed the routing tutorials dated Feb 2024 and added error handlers for 404 and 500 with custom "
            "responses for every endpoint of the API, and I've scheduled two-week sprints, first sprint ends March 29, "
            "focusing on user registration and login.")
    d = ac.Dated(0, ac.statement("and I've scheduled two-week sprints, first sprint ends March 29", frozenset()), JAN,
                 sentence=long)
    assert ac.quotable(d) == "I've scheduled two-week sprints, first sprint ends March 29"


def test_a_closed_label_without_one_value_changed_quotes_the_newer_statement_not_who_said_it():
    old = "Registrations so far: 180, which is ahead of last year."
    new = "We now have 340 registrations and the waiting list opened for the workshops track."
    label = answer_recorded.closed_label(old, new, MAY.date())
    assert label.startswith("(until 2 May 2026; since then: ") and "340" in label
