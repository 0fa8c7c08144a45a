"""``Memory.stats`` of a long-lived process reads the query log once, then what was appended
(graphs/stats.py ``QueryLog``): the same figures as reading the whole log each time."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memgrove.graphs.stats import QueryLog, _compact, summarize


def whole(log: Path) -> dict:
    rows, damaged = [], 0
    for line in log.read_bytes().splitlines():
        if line.strip():
            r = _compact(line)
            damaged += r is None
            rows += [r] if r is not None else []
    return summarize(rows, damaged)


def line(tier: int, ms: float, **more) -> str:
    return json.dumps({"tier": tier, "latency_ms": ms, **more}) + "\n"


def test_appended_lines_torn_lines_and_a_replaced_log(tmp_path: Path) -> None:
    log = tmp_path / "query-log.jsonl"
    q = QueryLog(log)
    assert q.stats()["queries"] == 0
    log.write_text(line(0, 1.0) + line(2, 30.0, llm=True) + "{damaged\n")
    assert q.stats() == whole(log) and q.stats()["damaged_lines"] == 1
    with log.open("a") as fh:
        fh.write(line(2, 50.0, out_of_domain=True) + '{"tier": 1, "latency')    # a line being written
    assert q.stats() == whole(log) and q.stats()["queries"] == 3
    with log.open("a") as fh:
        fh.write('_ms": 4.0}\n' + line(3, 900.0, error="x"))
    assert q.stats() == whole(log) and q.stats()["queries"] == 5
    new = tmp_path / "new.jsonl"                 # doctor --fix writes a new file over it
    new.write_text(line(1, 2.0))
    os.replace(new, log)
    assert q.stats() == whole(log) and q.stats()["queries"] == 1
    log.write_text("")                           # cut in place
    assert q.stats()["queries"] == 0
