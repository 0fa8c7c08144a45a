"""Fuzzing with hypothesis: paths, frontmatter, operation sequences, operations with any text, conversations.

The strategies and the agreement check of ``tests/test_properties.py`` are imported,
not copied; the suite runs them (and a few of its own) with a fixed seed, no
example database and ``--fuzz-examples`` examples each, every property in its own
process with a time limit. A failure is reported with hypothesis's falsifying example.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from .common import REPO, SectionResult, child_args, run

SECTION = "fuzz"
PROPERTIES = {"paths": None, "folders": None, "frontmatter_round_trip": None, "frontmatter_any_text": None,
              "operation_sequences": None, "operations_any_text": 5, "conversations": 4}   # issue item, if any


def _properties_module():
    """tests/test_properties.py, loaded by path (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("memgrove_reliability_properties", REPO / "tests" / "test_properties.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _props(examples: int, seed: int) -> dict[str, Callable[[], None]]:
    from hypothesis import HealthCheck, given, settings, strategies as st
    from hypothesis import seed as hseed

    from memgrove import BatchRejected, JournalError, Memory, OperationConflict
    from memgrove.tree.entries.entry import parse, serialize
    from memgrove.tree.base.errors import InvalidEntry, MemgroveError
    from memgrove.tree.entries.paths import normalize_entry_path, normalize_folder, resolve_inside

    tp = _properties_module()
    cfg = settings(max_examples=examples, deadline=None, database=None, derandomize=False,
                   suppress_health_check=list(HealthCheck))

    def bounded(fn):
        return hseed(seed)(cfg(fn))

    @bounded
    @given(tp.raw_paths)
    def paths(raw: str) -> None:
        try:
            p = normalize_entry_path(raw)
        except MemgroveError:
            return
        tp.check_entry_path(p)
        assert normalize_entry_path(p) == p
        root = Path("/nonexistent/tree")
        assert str(resolve_inside(root, p)).startswith(str(root) + "/")

    @bounded
    @given(tp.raw_paths)
    def folders(raw: str) -> None:
        try:
            f = normalize_folder(raw)
        except MemgroveError:
            return
        assert all(tp.SNAKE.match(s) for s in f.split("/")) and normalize_folder(f) == f

    @bounded
    @given(tp.entries)
    def frontmatter_round_trip(e) -> None:
        text = serialize(e)
        assert parse(text) == e and serialize(parse(text)) == text

    yaml_ish = st.text(st.sampled_from(list("ab:- []{}&*!|>'\"#\n\t%@`,?") + ["\x00", "é", "\ud7ff"]), max_size=200)

    @bounded
    @given(yaml_ish, st.text(max_size=300))
    def frontmatter_any_text(front: str, body: str) -> None:
        for text in (f"---\n{front}\n---\n{body}", body, f"---\n{front}"):
            t0 = time.monotonic()
            try:
                parse(text)
            except InvalidEntry:
                pass
            assert time.monotonic() - t0 < 2.0, "parse took over 2 s"

    @bounded
    @given(st.sets(st.integers(0, 3), max_size=4), st.lists(tp.step, min_size=1, max_size=8))
    def operation_sequences(initial, steps) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            mem = Memory.open(tmp, create=True, durable=False, profile="benchmark", gap_ratio=0.0)
            try:
                done: list[str] = []
                if initial:
                    done += [r.id for r in mem.curate([tp.to_op("ADD", i, i, False) for i in sorted(initial)])]
                for s in steps:
                    before = tp.snapshot(mem.home)
                    try:
                        if s[0] == "UNDO":
                            if not done:
                                continue
                            results = [mem.undo(done[s[1] % len(done)])]
                        else:
                            results = mem.curate([tp.to_op(*o) for o in s])
                    except (BatchRejected, OperationConflict, JournalError):
                        assert tp.snapshot(mem.home) == before
                        continue
                    done += [r.id for r in results if r.id]
                tp.check_agreement(mem)
            finally:
                mem.close()

    any_text = st.text(max_size=120) | st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40)
    fields = st.fixed_dictionaries({}, optional={"title": any_text, "summary": any_text, "content": any_text,
                                                 "tags": st.lists(any_text, max_size=3),
                                                 "keywords": st.lists(any_text, max_size=3),
                                                 "related": st.lists(tp.raw_paths, max_size=2), "reason": any_text,
                                                 "sources": st.lists(st.fixed_dictionaries(
                                                     {"kind": any_text, "ref": any_text}), max_size=2)})

    @bounded
    @given(tp.raw_paths, fields)
    def operations_any_text(path: str, extra: dict) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            with Memory.open(tmp, create=True, durable=False) as mem:
                op = {"op": "UPSERT", "path": path, "reason": "fuzz", "content": "fuzz body marker fzq", **extra}
                try:
                    results = mem.curate([op])
                except MemgroveError:
                    return
                for r in results:
                    mem.read(r.path)   # an accepted entry reads back
                assert mem.doctor().ok, mem.doctor().problems

    collide = st.sampled_from(["m-1", "m_1", "m 1", "M-1", "一", "二", "三", "../x", "..", "a"])
    ids = st.one_of(collide, collide, st.text(min_size=1, max_size=12), st.integers(-5, 5))

    @bounded
    @given(st.text(min_size=1, max_size=10), st.lists(ids, min_size=1, max_size=5))
    def conversations(cid: str, msg_ids: list) -> None:
        msgs = [{"id": m, "speaker": "Ana", "text": f"message number {k} marker fzc{k}q"} for k, m in enumerate(msg_ids)]
        with tempfile.TemporaryDirectory() as tmp:
            with Memory.open(tmp, create=True, durable=False) as mem:
                try:
                    mem.ingest(conversation={"id": cid, "messages": msgs})
                except MemgroveError:
                    return
                text = "\n".join(p.read_text(encoding="utf-8") for p in (mem.home / "tree").rglob("*.md"))
                lost = [k for k in range(len(msgs)) if f"fzc{k}q" not in text]
                assert not lost, f"messages {lost} of {[m['id'] for m in msgs]} overwritten by others"

    return {"paths": paths, "folders": folders, "frontmatter_round_trip": frontmatter_round_trip,
            "frontmatter_any_text": frontmatter_any_text, "operation_sequences": operation_sequences,
            "operations_any_text": operations_any_text, "conversations": conversations}


def prop_child(args: dict[str, Any]) -> None:
    """Every property in one process (one import of hypothesis and the strategies); results as they come."""
    props = _props(args["examples"], args["seed"])
    results: dict[str, Any] = {}
    for name in args["names"]:
        t0 = time.monotonic()
        fn = props[name]
        if name in ("operation_sequences", "conversations", "operations_any_text"):
            fn = _props(max(3, args["examples"] // 3), args["seed"])[name]
        try:
            fn()
            out: dict[str, Any] = {"ok": True}
        except Exception as exc:  # noqa: BLE001 - hypothesis re-raises the shrunk failure with notes
            notes = " ".join(getattr(exc, "__notes__", []))
            out = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:300]}", "example": notes[:800]}
        out["seconds"] = time.monotonic() - t0
        results[name] = out
        Path(args["out"]).write_text(json.dumps(results))


def run_section(work: Path, *, seed: int, examples: int, timeout: float = 600.0) -> SectionResult:
    res = SectionResult(SECTION, columns=["property", "examples", "result", "seconds"])
    base = work / SECTION
    base.mkdir(parents=True, exist_ok=True)
    args, out = base / "fuzz.json", base / "fuzz.out.json"
    args.write_text(json.dumps({"names": list(PROPERTIES), "examples": examples, "seed": seed, "out": str(out)}))
    r = run([sys.executable, "-m", "reliability.fuzz", "--child", "prop", str(args)], timeout=timeout)
    done = json.loads(out.read_text()) if out.exists() else {}
    for name, item in PROPERTIES.items():
        n = examples if name not in ("operation_sequences", "conversations", "operations_any_text") else max(3, examples // 3)
        repro = f"python -m reliability --sections fuzz --seed {seed} --fuzz-examples {examples} ({name})"
        d = done.get(name)
        if d is None:
            why = f"no result within {timeout:g} s" if r.timed_out else f"the fuzz process failed: {r.err.strip()[-200:]}"
            res.fail("hang" if r.timed_out else "suite error", f"{name}: {why}", repro, 8 if r.timed_out else None)
            res.rows.append([name, n, "HANG" if r.timed_out else "ERROR", "—"])
            continue
        if not d["ok"]:
            example = re.sub(r"\s+", " ", d.get("example") or "")
            res.fail("property", f"{name}: {d['error']}", f"{repro}; {example}", item)
        res.rows.append([name, n, "ok" if d["ok"] else "FAIL", f"{d['seconds']:.1f}"])
    res.summary.update(properties=len(PROPERTIES), failed=sum(1 for row in res.rows if row[2] != "ok"))
    res.notes.append("Strategies and the tree/index/journal agreement check come from tests/test_properties.py; "
                     "each property runs with hypothesis.seed(--seed), no example database.")
    return res


if __name__ == "__main__" and "--child" in sys.argv:
    mode, a = child_args()
    {"prop": prop_child}[mode](a)
