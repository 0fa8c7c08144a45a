"""``memgrove serve`` on a disk that fills up, stays full, and gets space back page by page.

A project on a small tmpfs of its own is served; the disk is filled before the first request, so
the server opens the project on a full disk. Readers loop over every read route and writers each
curate a new entry per request while space comes back one 4 KiB page at a time, then all of it.
Every read must answer 200 with its data throughout. Every write must answer 200 (then it is in
the tree and journaled exactly once) or 507 ``not_writable`` (then it is in neither): no 500, no
503, no write reported failed that later appears. Once space is back, writes go on without a
restart, no ``pending.json`` is left after a write, ``doctor`` is clean, the WAL files stay near
their 1 MiB bound and the server is the same process. Space that comes back a page at a time must let writes through
(at least one per ``PAGES_PER_WRITE`` pages): refused writes keep nothing of what they wrote, and
no file of a failed index commit is left.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

from . import serving
from .common import SectionResult, duplicates, journal_ids
from .disk import fill, free, free_pages, mount, umount

SECTION = "server_disk"
READS = [("GET", "/api/search?q=disk+marker&limit=5"), ("POST", "/api/query"), ("GET", "/api/tree"),
         ("GET", "/api/entries/disk/notes/n0.md"), ("GET", "/api/history?limit=5"), ("GET", "/api/stats"),
         ("GET", "/api/doctor")]
WAL_BOUND = 2 * 1024 * 1024    # 1 MiB limit plus one transaction's worth
# pages a write needs with its index and catalog updates (about 15 measured), with a margin: space that
# comes back a page at a time must let at least one write through per this many pages
PAGES_PER_WRITE = 25


def unlisted_index_files(home: Path) -> list[str]:
    """Files of the full-text index that its table of contents does not list: what a failed
    commit left (Whoosh's segments and half-written ``_MAIN_<n>.toc.<time>``, tantivy's segments)."""
    import json
    import re

    out: list[str] = []
    whoosh, tantivy = home / "index" / "whoosh", home / "index" / "tantivy"
    if (tantivy / "meta.json").exists():
        listed = {s["segment_id"].replace("-", "") for s in json.loads((tantivy / "meta.json").read_text())["segments"]}
        out += [p.name for p in tantivy.iterdir() if len(p.name.partition(".")[0]) == 32
                and p.name.partition(".")[0] not in listed]
    if whoosh.is_dir():
        from whoosh.filedb.filestore import FileStorage
        from whoosh.index import TOC

        toc = TOC.read(FileStorage(str(whoosh)), "MAIN")
        listed = {seg.segment_id() for seg in toc.segments}
        for p in whoosh.iterdir():
            m = re.match(r"(MAIN_[0-9a-z]+)\.", p.name)
            if (m and m.group(1) not in listed) or ".toc." in p.name:
                out.append(p.name)
    return sorted(out)


def _wal_bytes(home: Path) -> int:
    """Bytes held by every SQLite WAL of the project."""
    total = 0
    for f in home.rglob("*-wal"):
        try:
            total += f.stat().st_blocks * 512
        except OSError:
            pass
    return total


def _reader(srv: serving.Served, stop: threading.Event, tally: dict, bad: list) -> None:
    i = 0
    while not stop.is_set():
        method, path = READS[i % len(READS)]
        i += 1
        r = srv.call(method, path, {"question": "Which disk marker is noted?"} if method == "POST" else None,
                     timeout=60)
        if r.status == 200 and r.body:
            tally["reads"] += 1
        else:
            bad.append(f"{method} {path}: {r.status or r.error} {str(r.body)[:160]}")


def _writer(srv: serving.Served, k: str, stop: threading.Event, acked: list, refused: list, bad: list) -> None:
    i = 0
    while not stop.is_set():
        path = f"disk/w{k}/e{i}.md"
        i += 1
        r = srv.call("POST", "/api/curate", {"operations": [
            {"op": "ADD", "path": path, "content": f"disk marker written by {k} number {i}", "reason": "disk"}]},
            timeout=60)
        if r.status == 200:
            acked.append((path, r.body["results"][0].get("id")))
        elif r.status == 507:
            refused.append(path)
        else:
            bad.append(f"curate {path}: {r.status or r.error} {str(r.body)[:160]}")
        time.sleep(0.02)


def run_section(work: Path, *, size_mb: int, seconds: float, writers: int) -> SectionResult:
    from memgrove import Memory

    res = SectionResult(SECTION, columns=["phase", "seconds", "reads answered", "writes acknowledged",
                                          "writes refused (507)", "other answers", "WAL KiB grown"])
    base = work / SECTION
    shutil.rmtree(base, ignore_errors=True)
    point = base / "disk"
    point.mkdir(parents=True)
    why = mount(point, size_mb)
    if why:
        res.skipped = f"cannot mount a tmpfs ({why})"
        return res
    repro = "python -m reliability --sections server_disk"
    srv = None
    try:
        project = point / "proj"
        with Memory.open(project, create=True) as m:
            m.curate([{"op": "ADD", "path": f"disk/notes/n{i}.md", "content": f"disk marker note {i}",
                       "reason": "seed"} for i in range(50)])
            m.query("Which disk marker is noted?")
        srv = serving.start(project, base / "serve.log")      # the log lives off the small disk
        pid = srv.process.pid
        token = srv.token                                     # read before the disk is full
        fill(point)
        home = project / ".memgrove"
        pages_back = 0
        acked: list = []
        refused: list = []
        bad: list = []
        for n, (phase, freeing) in enumerate((("full", None), ("a page back every 0.1 s", 0.1),
                                              ("all space back", "all"))):
            if freeing == "all":
                free(point)
            stop = threading.Event()
            tally = {"reads": 0}
            a0, r0, b0 = len(acked), len(refused), len(bad)
            threads = [threading.Thread(target=_reader, args=(srv, stop, tally, bad))]
            threads += [threading.Thread(target=_writer, args=(srv, f"{n}_{k}", stop, acked, refused, bad))
                        for k in range(writers)]
            for t in threads:
                t.start()
            wal0 = _wal_bytes(home)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                if freeing == 0.1:
                    pages_back += free_pages(point, 1)
                time.sleep(0.1)
            stop.set()
            for t in threads:
                t.join(120)
            res.rows.append([phase, f"{seconds:g}", tally["reads"], len(acked) - a0, len(refused) - r0,
                             len(bad) - b0, (_wal_bytes(home) - wal0) // 1024])
            if freeing == 0.1:
                left = unlisted_index_files(home)
                if left:
                    res.fail("index files of failed commits left", f"{len(left)}: {', '.join(left[:4])}", repro)
                trickled = len(acked) - a0
                if trickled < pages_back // PAGES_PER_WRITE:
                    # each refusal kept what it wrote (a failed commit's segment, a failed transaction's
                    # WAL frames): 120 pages let 1 write through
                    res.fail("space that came back let no write through",
                             f"{pages_back} pages came back one by one, {trickled} write(s) acknowledged "
                             f"(expected at least {pages_back // PAGES_PER_WRITE})", repro)
        for b in bad[:8]:
            res.fail("answer while the disk was full", b, repro)
        final = srv.call("POST", "/api/curate", {"operations": [
            {"op": "ADD", "path": "disk/after/final.md", "content": "written once space came back", "reason": "r"}]},
            token=token)
        if final.status != 200:
            res.fail("write after space came back", f"{final.status or final.error} {str(final.body)[:160]}", repro)
        if srv.process.pid != pid or srv.process.poll() is not None:
            res.fail("server restarted", "the server process did not survive the full disk", repro)
        ids = journal_ids(home)
        idset = set(ids)
        with Memory.open(project) as m:
            for path, op_id in acked:
                if not m.tree.exists(path) or (op_id and op_id not in idset):
                    res.fail("acknowledged write lost", path, repro)
            for path in refused:
                if m.tree.exists(path):
                    res.fail("write refused, then found", path, repro)
            m.search("disk marker")
            rep = m.doctor()
            if not rep.ok:
                from memgrove.tree.index.catalog import scan

                known, now = m.tree.catalog.files(), scan(m.tree.root)
                odd = sorted(p for p in set(known) | set(now) if known.get(p) != now.get(p))
                res.fail("doctor after space came back", "; ".join(rep.problems)[:300] +
                         f" (catalog and files differ on {len(odd)}: {odd[:4]})", repro)
        for d in duplicates(ids)[:5]:
            res.fail("journal id twice", d, repro)
        if (home / "journal" / "pending.json").exists():
            res.fail("pending.json left", "after the final write", repro)
        wal = {f.name: f.stat().st_size for f in home.rglob("*-wal")}
        for name, size in wal.items():
            if size > WAL_BOUND:
                res.fail("WAL past its bound", f"{name}: {size:,} bytes", repro)
        res.summary.update(acked=len(acked), refused=len(refused), largest_wal_kib=max(wal.values(), default=0) // 1024,
                           pages_back=pages_back)
    finally:
        if srv is not None:
            srv.stop()
        umount(point)
    res.notes.append(f"A {size_mb} MB tmpfs holds the project (50 entries), filled before the server's first "
                     f"request; one reader over {len(READS)} read routes and {writers} writers, {seconds:g} s per "
                     "phase. A 200 must be in the tree and journaled once, a 507 in neither; any other answer "
                     f"fails. WAL files at the end must be under {WAL_BOUND // 1024} KiB. While space comes back "
                     f"a page at a time, at least one write per {PAGES_PER_WRITE} pages must be acknowledged (a "
                     "refused write keeps nothing of what it wrote).")
    return res
