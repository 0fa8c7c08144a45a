"""The hostile section's API and LangChain-tool cases, run in its worker process: each payload through the
surface it fits, and what the tree holds afterwards."""

from __future__ import annotations

import base64
import json
import os
import traceback
from pathlib import Path
from typing import Any


def _payload(case: dict[str, Any]) -> Any:
    return case.get("text")


def _marker(case: dict[str, Any]) -> str:
    return "hx" + "".join(c for c in case["id"] if c.isalnum()).lower()[:40] + "q"


def api_case(mem: Any, tools: dict[str, Any], case: dict[str, Any], inputs: Path) -> dict[str, Any]:
    """Run one API or tool case; returns problems (an empty list: rejected cleanly or accepted and sound)."""
    from memgrove.tree.base.errors import MemgroveError

    s, p, marker = case["surface"], _payload(case), _marker(case)
    base = {"op": "UPSERT", "path": f"hostile/cases/{marker}.md", "title": "Hostile case",
            "content": f"Hostile case marker {marker}.", "reason": "hostile input"}
    problems: list[str] = []
    try:
        if s.startswith("api_") and s[4:] in ("title", "summary", "content", "tags", "reason", "source_ref",
                                              "curate_path", "related"):
            op = dict(base)
            field = s[4:]
            if field == "content":
                op["content"] = f"{p}\n\nmarker {marker}"
            elif field == "tags":
                op["tags"] = [p]
            elif field == "source_ref":
                op["sources"] = [{"kind": "text", "ref": p}]
            elif field == "curate_path":
                op["path"] = p
            elif field == "related":
                op["related"] = [p]
            else:
                op[field] = p
            results = mem.curate([op])
            problems += _accepted(mem, [r.path for r in results if r.path], marker)
        elif s == "api_merge_into":
            mem.curate([{"op": "UPSERT", "path": f"hostile/merge/{marker}.md", "content": f"merge me {marker}",
                         "reason": "setup"}])
            mem.curate([{"op": "MERGE", "path": f"hostile/merge/{marker}.md", "merge_into": p, "reason": "hostile"}])
        elif s == "api_delete":
            mem.curate([{"op": "DELETE", "path": p, "reason": "hostile delete"}])
        elif s == "api_show":
            mem.show(p)
        elif s == "api_list":
            mem.list(p)
        elif s == "api_history":
            mem.history(path=p)
        elif s == "api_ingest_text":
            results = mem.ingest(text=p + f"\n\nmarker {marker}")
            problems += _accepted(mem, [r.path for r in results if r.path], marker)
        elif s == "api_search":
            mem.search(p)
        elif s == "api_query":
            mem.query(p)
        elif s == "api_ingest_file":
            f = inputs / case["name"]
            f.write_bytes(base64.b64decode(case["b64"]))
            mem.ingest(files=[f])
        elif s == "api_conversation":
            mem.ingest(conversation=case["conv"])
        elif s == "hand_placed":
            # a file put in the tree by hand (a git pull): reading, searching and doctor must cope
            target = mem.home / "tree" / "hostile" / "hand" / (case["name"].rsplit(".", 1)[0] + ".md")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(base64.b64decode(case["b64"]))
            # one bad file must not break search or doctor for the whole tree
            for what, fn in (("search", lambda: mem.search("hostile hand placed body title")),
                             ("doctor", mem.doctor)):
                try:
                    fn()
                except Exception as exc:  # noqa: BLE001
                    problems.append(f"{what} fails because of a hand-placed file: {type(exc).__name__}: {exc}"[:200])
            try:
                mem.show(f"hostile/hand/{target.name}")
            except MemgroveError:
                pass
            target.unlink()
            target.parent.rmdir()
        elif s == "distinct":
            problems += _distinct(mem, case["pair"], inputs)
        elif s.startswith("tool_"):
            problems += _tool_case(tools, s, p, marker, mem)
        else:
            return {"problems": [f"unknown surface {s}"]}
    except MemgroveError as exc:
        return {"status": "rejected", "error": str(exc)[:300], "problems": problems}
    except RecursionError:
        return {"status": "unexpected", "error": "RecursionError", "problems": problems + ["RecursionError"]}
    except Exception as exc:  # noqa: BLE001 - the thing this suite looks for
        return {"status": "unexpected", "error": f"{type(exc).__name__}: {exc}"[:300],
                "problems": problems + [f"{type(exc).__name__}: {str(exc)[:200]}"],
                "where": traceback.format_exc().strip().splitlines()[-3][:200]}
    return {"status": "accepted", "problems": problems}


def _accepted(mem: Any, paths: list[str], marker: str) -> list[str]:
    """An accepted write must land inside the tree as an entry that reads back and is found."""
    problems = []
    for path in paths:
        full = (mem.home / "tree" / path).resolve()
        if not str(full).startswith(str((mem.home / "tree").resolve()) + os.sep):
            problems.append(f"written outside the tree: {path}")
            continue
        if full.exists():
            try:
                mem.read(path)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"accepted but unreadable: {path}: {str(exc)[:120]}")
    if paths and not any(h.path in paths for h in mem.search(marker, limit=10)):
        problems.append(f"accepted but not found by search ({paths[0]})")
    return problems


def _distinct(mem: Any, pair: dict[str, Any], inputs: Path) -> list[str]:
    from memgrove.tree.base.errors import MemgroveError

    markers: list[str]
    try:
        if "texts" in pair:
            for t in pair["texts"]:
                mem.ingest(text=t)
            markers = [t.split("marker ")[1].rstrip(".") for t in pair["texts"]]
        elif "files" in pair:
            files = []
            for name, text in pair["files"]:
                f = inputs / "distinct" / name
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_text(text, encoding="utf-8")
                files.append(f)
            mem.ingest(files=files)
            markers = [text.split("marker ")[1] for _, text in pair["files"]]
        else:
            mem.ingest(conversation=pair["conv"])
            markers = [m["text"].split("marker ")[1] for m in pair["conv"]["messages"]]
    except MemgroveError:
        return []   # refusing the batch is allowed
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in (mem.home / "tree").rglob("*.md"))
    lost = [m for m in markers if m not in text]
    return [f"different inputs overwrote each other: {', '.join(lost)} gone"] if lost else []


def _tool_case(tools: dict[str, Any], s: str, p: str, marker: str, mem: Any) -> list[str]:
    if s == "tool_search":
        out = tools["search_knowledge"].invoke({"query": p})
        if any(c.isalnum() for c in p) and "non-empty query" in out:
            return ["search_knowledge answered 'give a non-empty query' to a non-empty query"]
    elif s == "tool_read_entry":
        out = tools["read_entry"].invoke({"path": p})
    elif s == "tool_list_tree":
        out = tools["list_tree"].invoke({"folder": p})
    elif s == "tool_curate_path":
        out = tools["curate"].invoke({"operations": [{"op": "UPSERT", "path": p, "content": f"tool {marker}",
                                                       "reason": "hostile tool"}]})
    else:
        out = tools["curate"].invoke({"operations": [{"op": "UPSERT", "path": f"hostile/tool/{marker}.md",
                                                       "content": f"{p}\n\nmarker {marker}", "reason": "hostile tool"}]})
    text = out if isinstance(out, str) else json.dumps(out, default=str)
    return ["traceback in tool output"] if "Traceback" in text else []
