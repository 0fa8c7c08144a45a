"""The consolidation prompt (graphs/dream.py): the model decides a candidate group, its answer parsed
defensively; through a scripted chat model, and the real ``ChatOpenAI`` against a local server."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from helpers.dream_scan import fake_scan
from helpers.openai_server import serve, status, text
from helpers.scripted_model import ScriptedChatModel
from memgrove.graphs.dream import dream_prompt, model_decider, neighbours, parse_decision
from memgrove.graphs.llm import chat_model
from memgrove.tree.hygiene import review
from memgrove.tree.hygiene.findings import Candidate

OLD, NEW = "infra/db/staging_port_2025.md", "infra/db/staging_port_2026.md"


def superseded() -> Candidate:
    return Candidate("superseded", (NEW, OLD), "SUPERSEDE",
                     ({"op": "SUPERSEDE", "path": OLD, "by": NEW, "reason": "the port changed"},),
                     "same subject, a different port, later", 0.7, {"values": ["5432", "6543"]})


def near(a: str, b: str) -> Candidate:
    return Candidate("near_duplicate", (a, b), "MERGE",
                     ({"op": "MERGE", "path": b, "merge_into": a, "reason": "nearly the same"},), "overlap", 0.75)


@pytest.fixture
def mem(mem):
    for path, words in ((OLD, "The staging database listens on port 5432."),
                        (NEW, "Since March 2026 the staging database listens on port 6543."),
                        ("infra/db/staging_host.md", "The staging database runs on db-stage-1."),
                        ("ops/backups/nightly.md", "Backups run nightly at 02:00."),
                        ("ops/backups/every_night.md", "Backups run every night at 02:00 UTC.")):
        mem.curate([{"op": "ADD", "path": path, "title": path.rsplit("/", 1)[1][:-3], "content": words,
                     "reason": "test"}])
    return mem


def test_the_prompt_shows_the_group_in_full_and_its_neighbours(mem):
    c = superseded()
    near_ = neighbours(mem.tree, c)
    assert "infra/db/staging_host.md" in [n["path"] for n in near_]
    assert all(n["path"] not in c.paths for n in near_)
    p = dream_prompt(mem.tree, c, near_)
    assert "port 5432" in p and "port 6543" in p and "superseded" in p and "staging_host.md" in p


@pytest.mark.parametrize("reply, action, ops", [
    ('{"action": "TEMPORAL_UPDATE", "files": ["%s", "%s"], "current": "%s", "since": "2026-03-01", '
     '"confidence": 0.9, "reason": "the port changed"}' % (NEW, OLD, NEW), "SUPERSEDE",
     [{"op": "SUPERSEDE", "path": OLD, "by": NEW, "since": "2026-03-01"}]),
    ('Sure!\n```json\n{"action": "MERGE", "keep": "%s", "confidence": 0.8, "reason": "same"}\n```' % NEW,
     "MERGE", [{"op": "MERGE", "path": OLD, "merge_into": NEW}]),
    ('{"action": "CROSS_REFERENCE", "confidence": 0.7, "reason": "related"}', "LINK",
     [{"op": "UPDATE", "path": NEW, "related": [OLD]}, {"op": "UPDATE", "path": OLD, "related": [NEW]}]),
    ('{"action": "SKIP", "confidence": 0.9, "reason": "unrelated"}', "SKIP", []),
])
def test_the_four_actions(reply, action, ops):
    d = parse_decision(reply, superseded())
    assert d is not None and d.action == action
    assert [{k: v for k, v in op.items() if k != "reason"} for op in d.ops] == ops


@pytest.mark.parametrize("reply", [
    "I think they are the same.",                                               # no JSON
    '{"action": "DELETE", "confidence": 1}',                                    # not one of the four
    '{"action": "MERGE", "keep": "../../etc/passwd.md", "confidence": 1}',      # a path outside the group
    '{"action": "MERGE", "files": ["%s", "infra/db/staging_host.md"]}' % OLD,  # a neighbour
    '{"action": "TEMPORAL_UPDATE", "current": "x/y/z.md"}',
    '{"action": "MERGE", "files": "%s"}' % OLD,
    '[1, 2, 3]',
])
def test_anything_else_is_no_decision(reply):
    assert parse_decision(reply, superseded()) is None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300) | st.dictionaries(st.sampled_from(["action", "files", "keep", "current", "confidence",
                                                                 "since", "reason"]),
                                               st.one_of(st.text(max_size=40), st.floats(), st.lists(st.text()),
                                                         st.sampled_from(["MERGE", "SKIP", OLD, NEW])))
       .map(json.dumps))
def test_untrusted_answers_never_name_a_path_outside_the_group(reply):
    d = parse_decision(reply, superseded())
    if d is not None:
        assert 0.0 <= d.confidence <= 1.0
        for op in d.ops:
            assert {op.get("path"), op.get("by", NEW), op.get("merge_into", NEW)} <= {OLD, NEW}


def test_a_scripted_model_decides_a_dream_run(mem, monkeypatch):
    fake_scan(monkeypatch, [near("ops/backups/every_night.md", "ops/backups/nightly.md"),
                            near(NEW, "infra/db/staging_host.md"), superseded()])
    model = ScriptedChatModel(replies=[
        '{"action": "MERGE", "keep": "ops/backups/every_night.md", "confidence": 0.95, "reason": "same backups"}',
        '{"action": "CROSS_REFERENCE", "confidence": 0.9, "reason": "both about the staging database"}',
        "```json\n{\"action\": \"TEMPORAL_UPDATE\", \"current\": \"%s\", \"confidence\": 0.6, "
        "\"reason\": \"the port changed\"}\n```" % NEW])
    out = mem.dream(model=model)
    rows = {r["kind"]: r for r in out["candidates"]}
    assert out["model_calls"] == 3 and len(model.calls) == 3
    assert "port 5432" in model.prompt_text(2) and "Kind of finding: superseded" in model.prompt_text(2)
    merge_row = next(r for r in out["candidates"] if "ops/backups/nightly.md" in r["paths"])
    link_row = next(r for r in out["candidates"] if "infra/db/staging_host.md" in r["paths"])
    assert merge_row["status"] == "queued" and merge_row["action"] == "MERGE"       # MERGE waits
    assert link_row["status"] == "applied" and link_row["action"] == "LINK"
    assert rows["superseded"]["status"] == "queued" and rows["superseded"]["confidence"] == 0.6   # unsure
    assert NEW in mem.tree.read("infra/db/staging_host.md").related
    assert {i.proposed_by for i in review.pending(mem.tree)} == {"model"}


def test_a_failing_model_queues_the_candidate(mem, monkeypatch):
    fake_scan(monkeypatch, [superseded()])
    model = ScriptedChatModel(replies=[TimeoutError("model timed out")])
    out = mem.dream(model=model)
    assert [r["status"] for r in out["candidates"]] == ["queued"]
    assert [i.proposed_by for i in review.pending(mem.tree)] == ["dream"]


def test_the_real_client_against_a_local_server(mem, monkeypatch):
    fake_scan(monkeypatch, [near(NEW, "infra/db/staging_host.md"), superseded()])
    with serve([text('{"action": "CROSS_REFERENCE", "confidence": 0.85, "reason": "same database"}'),
                status(500, "boom")]) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        errors: list[str] = []
        decide = model_decider(mem.tree, chat_model("test-model", retries=0), errors=errors)
        from memgrove.tree.hygiene.dream import dream

        rep = dream(mem.tree, decide=decide)
        assert [r["status"] for r in rep.candidates] == ["applied", "queued"]
        assert "Answer with JSON only" in srv.request_text(0) and "db-stage-1" in srv.request_text(0)
        assert errors and "HTTP 500" in errors[0]


def _has(op: str) -> bool:
    from memgrove.tree.writes.operations import OPS

    return op in OPS


@pytest.mark.skipif(not _has("SUPERSEDE"), reason="SUPERSEDE arrives with the validity branch")
def test_a_confident_temporal_update_closes_the_old_fact_and_undo_reopens_it(mem, monkeypatch):
    fake_scan(monkeypatch, [superseded()])
    before = {p: mem.tree.read_text(p) for p in (OLD, NEW)}
    model = ScriptedChatModel(replies=['{"action": "TEMPORAL_UPDATE", "current": "%s", "since": "2026-03-01", '
                                       '"confidence": 0.9, "reason": "the port changed"}' % NEW])
    out = mem.dream(model=model)
    assert [r["status"] for r in out["candidates"]] == ["applied"]
    old = mem.read(OLD)
    assert old.extra.get("supersededBy") == NEW and str(old.extra.get("validUntil", "")).startswith("2026-03-01")
    assert OLD in (mem.read(NEW).extra.get("supersedes") or [])
    mem.dream(undo=True)
    assert {p: mem.tree.read_text(p) for p in (OLD, NEW)} == before


@pytest.mark.skipif(not _has("ARCHIVE"), reason="ARCHIVE arrives with the validity branch")
def test_an_archive_candidate_waits_and_approving_it_archives(mem, monkeypatch):
    path = "ops/backups/nightly.md"
    fake_scan(monkeypatch, [Candidate("archive", (path,), "ARCHIVE",
                                      ({"op": "ARCHIVE", "path": path, "reason": "never retrieved"},),
                                      "never retrieved, low importance, old", 0.9)])
    out = mem.dream(model=ScriptedChatModel(replies=[]))        # never sent to the model
    assert [r["status"] for r in out["candidates"]] == ["queued"] and mem.tree.exists(path)
    mem.review_approve(all=True)
    assert not mem.tree.exists(path) and (mem.home / "archive" / path).exists()
