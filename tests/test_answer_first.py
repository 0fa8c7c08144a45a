"""Answers first (issue 14, item 2): the sentence that answers leads, and one Answer type.

The short answer is an extractive pick over the chosen entries' sentences
(``graphs/answer_pick.py``); ``memgrove query`` prints it first and short, the
evidence behind ``--verbose``; ``Memory.query``, the query graph and ``--json``
give the same ``Answer``.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import QUESTIONS
from helpers.scripted_model import ScriptedChatModel

from memgrove import Memory
from memgrove.cli import cli
from memgrove.graphs import answer_pick, tiers
from memgrove.graphs.tiers import Answer

PAYOUT = "What is the minimum payout per job?"
PAYOUT_SENTENCE = "The minimum payout per job is 3.50 EUR."

SEED = [
    {"op": "ADD", "path": "drivers/pay/rates.md", "title": "Driver pay",
     "content": "Drivers are paid 0.40 EUR per km driven, counted from pickup. " + PAYOUT_SENTENCE
                + " Payouts are sent every Friday.",
     "reason": "seed"},
    {"op": "ADD", "path": "drivers/pay/faq.md", "title": "Pay questions drivers ask",
     "content": "How is the minimum payout per job decided? Ops reviews it every quarter with finance.",
     "reason": "seed"},
    {"op": "ADD", "path": "drivers/fleet/cars.md", "title": "Fleet cars",
     "content": "Every car is serviced every 20,000 km. Drivers book the service in the app.", "reason": "seed"},
    {"op": "ADD", "path": "ops/oncall/rota.md", "title": "On-call rota",
     "content": "The on-call week starts on Monday at 09:00. Handover is a short call.", "reason": "seed"},
]


@pytest.fixture
def pay(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    m = Memory.open(tmp_path, create=True, durable=False)
    m.curate(SEED)
    yield m
    m.close()


def cli_query(mem: Memory, *args: str):
    res = CliRunner().invoke(cli, ["--root", str(mem.home.parent), "query", *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res


# -- the pick ------------------------------------------------------------------------------

def test_the_minimum_payout_is_the_second_sentence_and_leads(pay):
    a = pay.query(PAYOUT)
    assert a.sources[0] == "drivers/pay/rates.md"
    assert a.answer.startswith(PAYOUT_SENTENCE)
    # the old rule led with the entry's first sentence, about per-km pay
    assert not tiers.first_sentence_rule(pay.search(PAYOUT)[0]).endswith(PAYOUT_SENTENCE)
    out = cli_query(pay, PAYOUT).stdout.splitlines()
    assert out[0].startswith(PAYOUT_SENTENCE)


def test_a_question_never_leads(pay):
    # the FAQ entry's question shares every word with the question asked; it must not lead:
    # the statement after it does (the FAQ's answer), not the payout amount, which says how much
    question = "How is the minimum payout per job decided?"
    a = pay.query(question)
    assert a.sources[0] == "drivers/pay/faq.md"
    assert question in tiers.first_sentence_rule(pay.search(question)[0])   # the old rule led with it
    assert "?" not in a.answer and a.answer.startswith("Ops reviews it every quarter with finance."), a.answer


def terms(text: str) -> list[str]:
    return [w.strip(".,?!").lower() for w in text.split() if len(w.strip(".,?!")) > 2]


def test_pick_unit_rules():
    q = terms(PAYOUT)
    idf = {t: 1.0 for t in q}
    # the matching sentence wins over the entry's first sentence
    got = answer_pick.pick(q, idf, ["Drivers get 0.40 EUR per km. " + PAYOUT_SENTENCE], terms)
    assert got is not None and got.text == PAYOUT_SENTENCE
    # a question that matches everything does not lead; the statement after it does
    got = answer_pick.pick(q, idf, ["What is the minimum payout per job? It is 3.50 EUR."], terms)
    assert got is not None and got.text == "It is 3.50 EUR."
    # only questions anywhere: then a question is all there is
    got = answer_pick.pick(q, idf, ["What is the minimum payout per job?"], terms)
    assert got is not None and got.text.endswith("?")
    # equal matches: the better-ranked entry wins
    got = answer_pick.pick(q, idf, ["The minimum payout per job is 4 EUR.", PAYOUT_SENTENCE], terms)
    assert got is not None and (got.rank, got.text) == (0, "The minimum payout per job is 4 EUR.")
    # a rarer word weighs more
    got = answer_pick.pick(["payout", "job"], {"payout": 5.0, "job": 0.1},
                           ["Every job is logged.", "The payout is weekly."], terms)
    assert got is not None and got.text == "The payout is weekly."


def test_sentences_keep_numbers_and_names_whole_and_tables_as_tables():
    got = [s for s, _, _ in answer_pick.sentences(
        "It costs 3.50 EUR on staging.kestrel.dev today. Next one.\n\n"
        "| Setting | Value |\n| --- | --- |\n| pool_size | 8 |\n| timeout | 10 s |\n")]
    assert got[:2] == ["It costs 3.50 EUR on staging.kestrel.dev today.", "Next one."]
    # a row is quoted with its header, its first cell leading; the header line alone never is
    assert got[2:] == ["pool_size — Value: 8", "timeout — Value: 10 s"]


# -- the CLI -----------------------------------------------------------------------------------

def test_query_prints_the_answer_first_and_short(pay):
    out = cli_query(pay, PAYOUT).stdout
    lines = out.rstrip().splitlines()
    assert lines[0].startswith(PAYOUT_SENTENCE)
    assert any(line.startswith("[tier 3 · search, quoted (no LLM configured: the LLM call did not run) · ")
               for line in lines)
    assert "  drivers/pay/rates.md" in lines
    assert len(lines) <= 9 and "## Details" not in out and "## Gaps" not in out
    verbose = cli_query(pay, "how much is the minimum payout per job", "--verbose").stdout
    assert "## Details" in verbose and "## Gaps" in verbose and "counted from pickup" in verbose


def test_query_json_has_answer_evidence_sources_tier(pay):
    data = json.loads(cli_query(pay, PAYOUT, "--json").stdout)
    assert set(data) == set(Answer.FIELDS)
    assert {"answer", "evidence", "sources", "tier"} <= set(data)
    assert data["answer"].startswith(PAYOUT_SENTENCE) and data["tier"] == 3
    assert [e["path"] for e in data["evidence"]] == data["sources"]
    first = data["evidence"][0]
    assert set(first) == {"path", "title", "refs", "text"}
    assert first["title"] == "Driver pay" and PAYOUT_SENTENCE in first["text"]
    # the CLI's JSON is Answer.to_dict(): the same answer, loaded back, through the library
    again = pay.query(PAYOUT)
    assert Answer.from_dict(data).to_dict() == {**again.to_dict(), "latency_ms": data["latency_ms"]}


# -- one type ------------------------------------------------------------------------------------

def test_graph_answer_is_the_same_type_as_memory_query(pay):
    from_query = pay.query(PAYOUT)
    state = pay.graph().invoke({"question": "minimum payout per job in EUR"})
    from_graph = state["answer"]
    assert type(from_graph) is type(from_query) is Answer
    assert from_graph.answer.startswith(PAYOUT_SENTENCE)
    assert set(from_graph) == set(from_query) == set(Answer.FIELDS)
    # the state stays plain JSON for Studio and checkpointers
    assert json.loads(json.dumps(state["answer"])) == from_graph.to_dict()


def test_llm_tiers_keep_the_models_answer(tmp_path):
    from conftest import QUERY_SEED

    reply = ("## Summary\nAna owns the billing service.\n\n## Details\n- see team/people/ana.md\n\n"
             "## Sources\n- team/people/ana.md\n\n## Gaps\nnone")
    mem = Memory.open(tmp_path, create=True, durable=False, model=ScriptedChatModel(replies=[reply]))
    try:
        mem.curate(QUERY_SEED)
        a = mem.query(QUESTIONS["llm"])
        assert (a.tier, a.llm) == (3, True)
        assert a.answer == "Ana owns the billing service."
        assert a.text == reply
        assert [e["path"] for e in a.evidence] == a.sources
    finally:
        mem.close()


def test_answer_is_read_only_and_round_trips():
    a = Answer(question="q", text="## Summary\nYes.\n\n## Details\nx", tier=2, sources=["a/b/c.md"])
    assert a.answer == "Yes."
    with pytest.raises(AttributeError):
        a.tier = 3  # type: ignore[misc]
    assert Answer.from_dict(json.loads(json.dumps(a.to_dict()))) == a
    import copy
    import pickle

    for same in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert type(same) is Answer and same == a and same.tier == 2
    d = a.to_dict()
    d["sources"].append("x/y/z.md")
    assert a.sources == ["a/b/c.md"]
