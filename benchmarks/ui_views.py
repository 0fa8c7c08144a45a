#!/usr/bin/env python
"""The web page's views at scale, timed by the server, side by side with the JSON API reading the same.

    python benchmarks/ui_views.py --tree /tmp/ui25k                 # 25,000 entries: ~8 min to build, then ~2 min
    python benchmarks/ui_views.py --tree /tmp/ui25k --full          # and 100,000 (the 25k tree's folders copied)
    python benchmarks/ui_views.py --entries 2000 --reps 3 --out /tmp/ui   # quick form (run_all.py)

The tree (``--tree``: built there once, reused after) holds ``--entries`` synthetic entries
(harness/synthetic.py, 500 folders), a folder ``bulk/big`` of 5,000 more (copies of entries: a
folder listed a page at a time), 500 pending review items, 40 dream runs, 20 recent edits.
``--full`` adds a tree of 4× as many entries: the first one's folders and journal records copied
under new names, the copies' index built by the server as it starts.

A real ``memgrove serve`` (words only, harness/words_only.py) on 127.0.0.1, signed in through
``/ui/login`` with the project's token. Every view is asked once to warm it, then ``--reps``
rounds of all of them, the order reversed every other round; a search and a question are new
each time (no cached answer). Per view: the server's own time (its ``Server-Timing`` header: from
signed in to rendered), the time on the wire, the bytes of its HTML, and the same read through
the JSON API (the wire time: the API sends no Server-Timing) as the baseline. The tree view's
first paint is its HTML plus every stylesheet and script it loads. Target: every view under 300
ms, the first paint under 200 KB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness.words_only  # noqa: E402,F401 - words only, here and in the server it starts
from harness.machine import brief, loadavg  # noqa: E402
from harness.report import RESULTS, log, publish, table, target  # noqa: E402
from harness.served import Served  # noqa: E402
from harness.stats import pct  # noqa: E402
from harness.synthetic import Corpus, build_tree, titles  # noqa: E402
from ui_calls import seed_review, seed_runs  # noqa: E402

BIG = "bulk/big"
LIMIT_MS, PAINT_KB = 300, 200


def built(tree: Path, n: int, big: int) -> None:
    """``n`` synthetic entries at ``tree`` (once) and ``big`` copies of them in ``bulk/big``."""
    if n and not (tree / ".memgrove").exists():
        t0 = time.perf_counter()
        build_tree(tree, n, Corpus(0), 500)
        log(f"built {n} entries in {time.perf_counter() - t0:.0f} s")
    folder = tree / ".memgrove" / "tree" / BIG
    if big and not folder.exists():
        folder.mkdir(parents=True)
        src = sorted(p for p in (tree / ".memgrove" / "tree").glob("*/*/*.md") if p.name != "context.md")
        for i, p in enumerate(src[:big]):
            shutil.copyfile(p, folder / f"copy_{i}_{p.name}")


def grown(src: Path, dst: Path, times: int) -> None:
    """``dst``: ``src`` with its top folders (but ``bulk``) copied ``times - 1`` more times under new
    names, and the journal records of each copy's entries appended under the copy's paths."""
    if (dst / ".memgrove").exists():
        return
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns("server.*", "serve-*.log"))
    root = dst / ".memgrove" / "tree"
    tops = sorted(d.name for d in root.iterdir() if d.is_dir() and d.name != "bulk")
    journal = dst / ".memgrove" / "journal" / "journal.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines()
    with journal.open("a", encoding="utf-8") as out:
        for c in range(1, times):
            for d in tops:
                shutil.copytree(root / d, root / f"{d}{c}")
            for n, line in enumerate(lines):
                r = json.loads(line)
                if r["path"].split("/", 1)[0] not in tops:
                    continue
                r["id"] = f"{r['id'].split('-')[0]}-{c:02x}{n:08x}"
                for ch in [r, *r.get("also", [])]:
                    top, _, rest = ch["path"].partition("/")
                    ch["path"] = f"{top}{c}/{rest}" if top in tops else ch["path"]
                out.write(json.dumps(r, ensure_ascii=False) + "\n")


def seeded(tree: Path) -> None:
    from memgrove import Memory

    with Memory.open(tree, durable=False, embed_ahead=False) as mem:
        seed_review(mem, 500)
        seed_runs(mem, 40)
        if not any(r.op == "UPDATE" for r in mem.history(limit=200)):
            paths = sorted(p for p in mem.tree.catalog.files() if not p.endswith("context.md"))
            mem.curate([{"op": "UPDATE", "path": p, "tags": ["edited"], "reason": "a recent edit"}
                        for p in random.Random(1).sample(paths, 20)])


class Client:
    """An httpx client signed in to the page (its session cookie, its CSRF token)."""

    def __init__(self, url: str, token: str):
        import httpx

        self.http = httpx.Client(base_url=url, timeout=120.0, trust_env=False, headers={"origin": url})
        self.api = {"authorization": f"Bearer {token}"}
        form = self.http.get("/ui/login")
        login = next(v for k, v in self.http.cookies.items() if k.startswith("memgrove_ui_login"))
        assert form.status_code == 200, form.status_code
        r = self.http.post("/ui/login", data={"token": token, "csrf": login, "next": "/ui/tree"})
        assert r.status_code == 303, r.text[:300]
        page = self.http.get("/ui/tree")
        self.csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)

    def ask(self, method: str, path: str, data: dict[str, Any] | None = None, *, api: bool = False
            ) -> tuple[float, float | None, int]:
        """(ms on the wire, the server's ms from Server-Timing or None, bytes of the body)."""
        t0 = time.perf_counter()
        if method == "GET":
            r = self.http.get(path, params=data, headers=self.api if api else None)
        elif api:
            r = self.http.post(path, json=data, headers=self.api)
        else:
            r = self.http.post(path, data={**(data or {}), "csrf": self.csrf})
        wall = (time.perf_counter() - t0) * 1000
        assert r.status_code == 200, (path, r.status_code, r.text[:300])
        m = re.search(r"dur=([\d.]+)", r.headers.get("server-timing", ""))
        return wall, float(m.group(1)) if m else None, len(r.content)

    def close(self) -> None:
        self.http.close()


def views(sample: dict[str, Any]) -> dict[str, tuple[tuple, tuple | None]]:
    """view: ((method, UI path, params), (method, API path, params) or None); ``q`` is asked anew."""
    d, t, e = sample["domain"], sample["topic"], sample["entry"]
    return {
        "tree": (("GET", "/ui/tree", None), ("GET", "/api/tree", {"folder": ""})),
        "folder fragment (a topic)": (("GET", "/ui/fragment/folder", {"folder": t}), ("GET", "/api/tree", {"folder": t})),
        "folder fragment (a domain)": (("GET", "/ui/fragment/folder", {"folder": d}), ("GET", "/api/tree", {"folder": d})),
        f"folder fragment ({BIG}: 5,000)": (("GET", "/ui/fragment/folder", {"folder": BIG}),
                                            ("GET", "/api/tree", {"folder": BIG})),
        "entry": (("GET", f"/ui/entry/{e}", None), ("GET", f"/api/entries/{e}", None)),
        "search": (("GET", "/ui/search", {"q": "?"}), ("GET", "/api/search", {"q": "?"})),
        "ask": (("POST", "/ui/ask", {"q": "?"}), ("POST", "/api/query", {"question": "?"})),
        "journal": (("GET", "/ui/journal", None), ("GET", "/api/history", {"limit": 100})),
        "journal, kind UPDATE": (("GET", "/ui/journal", {"kind": "UPDATE"}),
                                 ("GET", "/api/history", {"limit": 100, "page": "true", "kinds": "UPDATE"})),
        "journal, a folder": (("GET", "/ui/journal", {"folder": t}),
                              ("GET", "/api/history", {"limit": 100, "page": "true", "path": t})),
        "operation (the oldest)": (("GET", "/ui/operation", {"id": sample["oldest"]}), None),
        "review (500 pending)": (("GET", "/ui/review", None), ("GET", "/api/review", None)),
        "status": (("GET", "/ui/status", None), ("GET", "/api/stats", None)),
    }


def with_question(req: tuple, q: str) -> tuple:
    method, path, params = req
    if not params or "?" not in params.values():
        return req
    return method, path, {k: (q if v == "?" else v) for k, v in params.items()}


def first_paint(c: Client) -> dict[str, Any]:
    """The tree view's HTML and every stylesheet and script it loads: bytes each."""
    html = c.http.get("/ui/tree").text
    assets = sorted(set(re.findall(r'<(?:link[^>]+href|script[^>]+src)="(/ui/static/[^"?]+)', html)))
    sizes = {a: len(c.http.get(a).content) for a in assets}
    total = len(html.encode()) + sum(sizes.values())
    return {"html_bytes": len(html.encode()), "assets": sizes, "total_bytes": total,
            "total_kb": round(total / 1024, 1)}


def measure(tree: Path, reps: int, seed: int) -> dict[str, Any]:
    from memgrove import Memory

    with Memory.open(tree, durable=False, embed_ahead=False) as mem:
        oldest = next(iter(mem.tree.journal.records())).id
        journal_mb = round(mem.tree.journal.size() / 2 ** 20, 1)
    paths = [p for p in (tree / ".memgrove" / "tree").glob("*/*/*.md") if p.name != "context.md"]
    entries = len(paths)          # the files, indexed or not: the server brings its index in step
    rng = random.Random(seed)
    e = rng.choice(sorted(paths)).relative_to(tree / ".memgrove" / "tree").as_posix()
    sample = {"entry": e, "topic": e.rsplit("/", 1)[0], "domain": e.split("/")[0], "oldest": oldest}
    pool = titles(tree)
    ask = random.Random(time.time())     # questions never asked before: the server's answer cache is on disk
    served = Served(tree)
    log(f"server up in {served.started_s:.1f} s ({entries} entries)")
    c = Client(served.url, served.token)
    try:
        plan = views(sample)
        times: dict[str, dict[str, list[float]]] = {v: {"server": [], "wall": [], "api": [], "bytes": []} for v in plan}
        load = [loadavg()]
        for r in range(reps + 1):            # round 0 warms every view
            for name in (list(plan) if r % 2 == 0 else list(plan)[::-1]):
                ui, api = plan[name]
                # each side its own new question: the other's answer is cached
                q, q2 = (f"what do we know about {ask.choice(pool)}?" for _ in range(2))
                wall, server, size = c.ask(*with_question(ui, q))
                api_wall = c.ask(*with_question(api, q2), api=True)[0] if api else None
                if r:
                    t = times[name]
                    t["wall"].append(wall)
                    t["server"].append(server if server is not None else wall)
                    t["bytes"].append(size)
                    if api_wall is not None:
                        t["api"].append(api_wall)
        paint = first_paint(c)
        load.append(loadavg())
    finally:
        c.close()
        served.stop()
    rows = {}
    for name, t in times.items():
        rows[name] = {"server_p50_ms": round(pct(t["server"], 50), 1), "server_max_ms": round(max(t["server"]), 1),
                      "wall_p50_ms": round(pct(t["wall"], 50), 1),
                      "api_wall_p50_ms": round(pct(t["api"], 50), 1) if t["api"] else None,
                      "bytes_p50": int(pct(t["bytes"], 50)), "n": len(t["wall"])}
    return {"entries": entries, "journal_mb": journal_mb, "sample": sample, "views": rows, "first_paint": paint,
            "loadavg": load, "server_start_s": round(served.started_s, 1)}


def render(report: dict[str, Any]) -> str:
    lines = ["# The web page's views at scale", "",
             f"{report['date']} · commit {report['commit']} · `{report['command']}` · {report['machine']['cpus']} "
             f"cores (shared) · load {report['loadavg_start']} → {report['loadavg_end']}", "",
             "A real `memgrove serve` (words only), signed in; each view warmed once, then asked in rounds, the order "
             "reversed every other round, searches and questions new each time. *server*: its Server-Timing (signed "
             "in → rendered); *wire*: the request as the client saw it; *API*: the JSON route reading the same, on "
             "the wire. Target: every view ≤ 300 ms (server), the tree's first paint ≤ 200 KB.", ""]
    for size in report["sizes"]:
        lines += [f"## {size['entries']:,} entries (journal {size['journal_mb']} MB)", ""]
        rows = [[name, r["server_p50_ms"], r["server_max_ms"], r["wall_p50_ms"],
                 "—" if r["api_wall_p50_ms"] is None else r["api_wall_p50_ms"],
                 "—" if not r["api_wall_p50_ms"] else f"×{r['wall_p50_ms'] / max(r['api_wall_p50_ms'], 0.1):.2f}",
                 f"{r['bytes_p50'] / 1024:.1f}", target(r["server_p50_ms"], LIMIT_MS)]
                for name, r in size["views"].items()]
        lines += table(["view", "server p50 ms", "server max ms", "wire p50 ms", "API wire p50 ms", "page / API",
                        "HTML KB", "target"], rows, "lrrrrrrl")
        p = size["first_paint"]
        lines += ["", f"First paint of the tree view: {p['total_kb']} KB (HTML {p['html_bytes'] / 1024:.1f} KB + "
                  + ", ".join(f"{a.rsplit('/', 1)[-1]} {n / 1024:.1f} KB" for a, n in p["assets"].items())
                  + f"): {target(p['total_kb'], PAINT_KB, 'KB')}. Rounds: {next(iter(size['views'].values()))['n']}; "
                  f"load during it {size['loadavg'][0]} → {size['loadavg'][1]}; the server answered "
                  f"{size['server_start_s']} s after its start.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=25_000)
    ap.add_argument("--big", type=int, default=5_000, help="entries in the one big folder (bulk/big)")
    ap.add_argument("--tree", type=Path, help="where the tree is built once and reused (default: a temporary one)")
    ap.add_argument("--full", action="store_true", help="also a tree of 4× --entries")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(RESULTS / "ui_views"), help="prefix of the .json and .md written")
    a = ap.parse_args(argv)
    tmp = None
    if a.tree is None:
        tmp = Path(tempfile.mkdtemp(prefix="ui_views_"))
        a.tree = tmp / f"t{a.entries}"
    report: dict[str, Any] = {**brief("ui_views.py", argv), "config": {k: str(v) for k, v in vars(a).items()},
                              "sizes": []}
    try:
        built(a.tree, a.entries, a.big)
        seeded(a.tree)
        report["sizes"].append(measure(a.tree, a.reps, a.seed))
        if a.full:
            big = a.tree.with_name(a.tree.name + "_x4")
            grown(a.tree, big, 4)
            built(big, 0, a.big)
            seeded(big)
            report["sizes"].append(measure(big, a.reps, a.seed))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    report["loadavg_end"] = loadavg()
    return publish(report, render(report).rstrip("\n"), Path(a.out))


if __name__ == "__main__":
    os.environ.setdefault("NO_PROXY", "127.0.0.1")
    main()
