"""One type per concept: what one operation did is an ``OpResult`` everywhere.

``Memory.curate``, ``Memory.ingest``, ``Memory.undo``, the ``CurateReport`` of either curator
(``Memory.learn``, the curate graph) and the CLI's ``--json`` all give the same ``OpResult``
(``to_dict()`` for JSON); a curation is a ``CurateReport`` whichever curator ran.
"""

from __future__ import annotations

import json

from click.testing import CliRunner
from helpers.scripted_model import ScriptedChatModel, tool_call

from memgrove import Memory, OpResult
from memgrove.cli import cli
from memgrove.graphs.curate import build_curate_graph, report_from_state
from memgrove.graphs.curate_report import CurateReport

ADD = {"op": "ADD", "path": "people/ana/role.md", "title": "Ana leads payments", "content": "Ana leads payments.",
       "reason": "seed"}
FIELDS = {"op", "path", "status", "message", "id"}


def test_op_result_round_trips_through_its_json_form(mem):
    [r] = mem.curate([ADD])
    d = r.to_dict()
    assert set(d) == FIELDS and d["status"] == "added" and d["id"]
    assert json.loads(json.dumps(d)) == d and OpResult.from_dict(d) == r


def test_every_curator_reports_op_results(mem):
    verbatim = mem.learn(text="Ben handles search.")
    model = ScriptedChatModel(replies=[tool_call("curate", operations=[ADD])])
    llm = mem.learn(text="Ana leads payments.", model=model)
    for report in (verbatim, llm):
        assert isinstance(report, CurateReport)
        assert report.applied and all(isinstance(a, OpResult) for a in report.applied), report.applied
        assert report.to_dict()["applied"] == [a.to_dict() for a in report.applied]
    assert llm.applied[0].path == "people/ana/role.md" and llm.applied[0].id
    assert isinstance(mem.undo(llm.applied[0].id), OpResult)


def test_the_curate_graph_state_is_json_and_its_report_holds_op_results(mem):
    model = ScriptedChatModel(replies=[tool_call("curate", operations=[ADD])])
    state = build_curate_graph(mem, model=model).invoke({"text": "Ana leads payments."})
    assert json.loads(json.dumps(state["applied"])) == state["applied"]   # a server sends it as it is
    report = report_from_state(state)
    assert [a.to_dict() for a in report.applied] == state["applied"]
    assert set(state["applied"][0]) == FIELDS


def test_cli_curate_json_is_one_shape_whichever_curator_ran(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    Memory.open(tmp_path, create=True).close()
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps([ADD]))
    shapes = {}
    for name, args in (("verbatim", ["curate", "Ben handles search.", "--json"]),
                       ("ops", ["curate", "--ops", str(ops), "--json"])):
        res = runner.invoke(cli, args)
        assert res.exit_code == 0, res.output
        data = json.loads(res.stdout)
        assert data["curator"] == name and set(data["applied"][0]) == FIELDS
        shapes[name] = set(data)
    assert shapes["verbatim"] == shapes["ops"] == set(CurateReport(curator="x").to_dict())
