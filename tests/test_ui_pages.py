"""The web page at /ui/ in-process: sign-in and sessions, CSRF on every change, every view,
hostile content escaped, paging, and every action journaled as the CLI journals it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from memgrove import Memory
from helpers.ui_pages import BASE, csrf_of, foreign_active_content, page_app, sign_in

TOKEN = "page-token-1"
HOSTILE_TITLE = '"><script>window.__mgx("title")</script><img src=x onerror=alert(1)>'
SEED = [
    {"op": "ADD", "path": "infra/db/postgres.md", "title": "Postgres version",
     "content": "Production runs Postgres 16 since March 2024. See [the runbook](../deploy/runbook.md).",
     "tags": ["db"], "related": ["infra/deploy/runbook.md"], "reason": "seed"},
    {"op": "ADD", "path": "infra/deploy/runbook.md", "title": "Deploy runbook",
     "content": "Deploys go out on Tuesdays with `make release`.", "reason": "seed"},
    {"op": "ADD", "path": "infra/deploy/runbook_copy.md", "title": "Deploy runbook",
     "content": "Deploys go out on Tuesdays with `make release`.", "reason": "seed"},
    {"op": "ADD", "path": "team/people/ana.md", "title": HOSTILE_TITLE, "tags": ["<b>x</b>", "javascript:alert(1)"],
     "content": "<script>window.__mgx('body')</script>\n\n[click](javascript:alert(1)) <iframe srcdoc='x'></iframe>",
     "reason": "<svg onload=alert(1)>"},
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "p"
    with Memory.open(folder, create=True, durable=False) as m:
        m.curate(SEED)
    return folder


@pytest.fixture
def client(project: Path):
    with TestClient(page_app(project, token=TOKEN), base_url=BASE) as c:
        yield c


def journal(folder: Path) -> list[dict]:
    path = folder / ".memgrove" / "journal" / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- signing in --------------------------------------------------------------------------------

def test_a_page_without_a_session_goes_to_the_sign_in_page(client):
    r = client.get("/ui/journal?kind=ADD", follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == "/ui/login?next=%2Fui%2Fjournal%3Fkind%3DADD"
    assert client.get("/ui/fragment/folder", headers={"X-Requested-With": "memgrove-ui"}).status_code == 401


def test_the_token_signs_in_with_a_strict_httponly_cookie_and_a_new_session_id(client):
    form = client.get("/ui/login")
    assert form.status_code == 200 and 'type="password"' in form.text
    r = client.post("/ui/login", data={"token": TOKEN, "csrf": csrf_of(form.text), "next": "/ui/review"},
                    follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/review"
    cookie = [c for c in r.headers.get_list("set-cookie") if c.startswith("memgrove_ui_session_")][0]
    assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower() and "Path=/ui" in cookie
    first = cookie.split(";")[0].split("=", 1)[1]
    form = client.get("/ui/login")
    r = client.post("/ui/login", data={"token": TOKEN, "csrf": csrf_of(form.text)}, follow_redirects=False)
    second = [c for c in r.headers.get_list("set-cookie") if c.startswith("memgrove_ui_session_")][0]
    assert second.split(";")[0].split("=", 1)[1] != first        # no session fixation
    assert client.get("/ui/tree").status_code == 200


def test_a_wrong_token_or_a_form_from_elsewhere_signs_nobody_in(client):
    form = client.get("/ui/login")
    r = client.post("/ui/login", data={"token": "nope", "csrf": csrf_of(form.text)}, follow_redirects=False)
    assert r.status_code == 303 and "error=" in r.headers["location"]
    assert not [c for c in r.headers.get_list("set-cookie") if c.startswith("memgrove_ui_session_")]
    assert client.get("/ui/tree", follow_redirects=False).status_code == 303
    client.cookies.clear()                                    # the form's own token, without its cookie
    r = client.post("/ui/login", data={"token": TOKEN, "csrf": csrf_of(form.text)}, follow_redirects=False)
    assert r.status_code == 403


def test_the_next_address_stays_on_this_page(client):
    form = client.get("/ui/login")
    for evil in ("//evil.example/x", "https://evil.example/", "/api/tree", "/ui//evil.example", "/ui\\..\\x"):
        r = client.post("/ui/login", data={"token": TOKEN, "csrf": csrf_of(form.text), "next": evil},
                        follow_redirects=False)
        assert r.headers["location"] == "/ui/", evil
        form = client.get("/ui/login")


def test_a_sign_in_link_works_once(client):
    assert client.post("/ui/login/code").status_code == 401
    code = client.post("/ui/login/code", headers={"Authorization": f"Bearer {TOKEN}"}).json()["code"]
    r = client.get(f"/ui/login?code={code}", follow_redirects=False)
    assert r.status_code == 303 and client.get("/ui/tree").status_code == 200
    client.cookies.clear()
    again = client.get(f"/ui/login?code={code}", follow_redirects=False)
    assert again.status_code == 401 and "used already" in again.text


def test_sign_out_ends_the_session(client):
    csrf = sign_in(client, TOKEN)
    assert client.post("/ui/logout", data={"csrf": "wrong"}).status_code == 403
    r = client.post("/ui/logout", data={"csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303
    assert client.get("/ui/tree", follow_redirects=False).status_code == 303


def test_a_session_reaches_only_the_projects_it_signed_in_to(tmp_path, project):
    from memgrove.server.served import Served, ServedProjects

    other = tmp_path / "q"
    with Memory.open(other, create=True, durable=False) as m:
        m.curate([{"op": "ADD", "path": "notes/misc/q.md", "title": "Only in Q", "content": "Q's note.",
                   "reason": "seed"}])
    served = ServedProjects(Served(project.resolve(), TOKEN))
    served.add(Served(other.resolve(), "token-of-q"))
    with TestClient(page_app(served), base_url=BASE) as c:
        sign_in(c, TOKEN)
        assert c.get("/ui/tree", params={"project": str(other)}).status_code == 403
        sign_in(c, "token-of-q")
        r = c.get("/ui/tree", params={"project": str(other), "folder": "notes/misc"})
        assert r.status_code == 200 and "Only in Q" in r.text
        assert c.get("/ui/tree", params={"folder": "team/people"}).status_code == 200     # the first still


def test_a_server_without_tokens_signs_a_browser_in_at_once(project):
    with TestClient(page_app(project, token=None), base_url=BASE) as c:
        r = c.get("/ui/tree")
        assert r.status_code == 200 and "Sign out" not in r.text
        assert c.post("/ui/ask", data={"q": "postgres"}).status_code == 403      # CSRF all the same


# -- every change needs the page's CSRF token and this origin -----------------------------------

CHANGES = [("/ui/ask", {"q": "postgres"}), ("/ui/undo", {"id": "x"}), ("/ui/review/approve", {"all": "true"}),
           ("/ui/review/reject", {"all": "true"}), ("/ui/dream", {}), ("/ui/dream/undo", {"run": "x"}),
           ("/ui/restore", {"path": "team/people/ana.md"})]


@pytest.mark.parametrize("route,data", CHANGES)
def test_every_change_needs_the_csrf_token_and_this_site(client, project, route, data):
    csrf = sign_in(client, TOKEN)
    before = (project / ".memgrove" / "journal" / "journal.jsonl").read_bytes()
    assert client.post(route, data=data).status_code == 403
    assert client.post(route, data={**data, "csrf": csrf + "x"}).status_code == 403
    assert client.post(route, data={**data, "csrf": csrf}, headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert client.post(route, data={**data, "csrf": csrf}, headers={"Origin": "http://evil.example"}).status_code == 403
    assert (project / ".memgrove" / "journal" / "journal.jsonl").read_bytes() == before


def test_a_foreign_host_never_reaches_the_page(client):
    assert client.get("/ui/login", headers={"Host": "evil.example"}).status_code == 403


def test_a_form_body_is_bounded_before_it_is_read(client):
    csrf = sign_in(client, TOKEN)
    r = client.post("/ui/ask", data={"q": "x" * (2 * 1024 * 1024), "csrf": csrf})
    assert r.status_code == 413 and "web page's forms" in r.text


# -- the views -------------------------------------------------------------------------------------

VIEWS = ["/ui/tree", "/ui/tree?folder=infra", "/ui/fragment/folder?folder=infra/deploy", "/ui/entry/infra/db/postgres.md",
         "/ui/entry/team/people/ana.md", "/ui/search?q=deploy+tuesday", "/ui/journal", "/ui/journal?kind=ADD&folder=team",
         "/ui/review", "/ui/status", "/ui/status?doctor=true", "/ui/archive"]


def test_every_view_answers_with_the_strict_policy_and_nothing_foreign(client):
    sign_in(client, TOKEN)
    for url in VIEWS:
        r = client.get(url)
        assert r.status_code == 200, (url, r.text[-500:])
        assert "script-src 'self'" in r.headers["content-security-policy"]
        assert r.headers["x-frame-options"] == "DENY" and r.headers["cache-control"] == "no-store"
        assert r.headers["server-timing"].startswith("view;dur=")
        assert foreign_active_content(r.text) == [], url


def test_hostile_titles_tags_bodies_and_reasons_are_shown_as_text(client, project):
    sign_in(client, TOKEN)
    hostile_op = [r["id"] for r in journal(project) if r["path"] == "team/people/ana.md"][0]
    shown = {"/ui/tree?folder=team/people": "window.__mgx", "/ui/entry/team/people/ana.md": "window.__mgx",
             "/ui/journal": "&lt;svg onload=alert(1)&gt;", f"/ui/fragment/operation?id={hostile_op}": "window.__mgx",
             "/ui/search?q=click+iframe+srcdoc": "team/people/ana.md"}
    for url, text in shown.items():
        r = client.get(url)
        assert r.status_code == 200, url
        assert foreign_active_content(r.text) == [], url
        assert text in r.text, url                                   # there, as text
    entry = client.get("/ui/entry/team/people/ana.md").text
    assert "&lt;script&gt;window.__mgx('body')&lt;/script&gt;" in entry      # the body, as text
    assert "&lt;svg onload=alert(1)&gt;" in entry                      # the reason, in the history


def test_the_entry_view_shows_sources_links_backlinks_and_history(client):
    sign_in(client, TOKEN)
    page = client.get("/ui/entry/infra/db/postgres.md").text
    assert "Production runs Postgres 16" in page and "Postgres version" in page
    assert 'href="/ui/entry/infra/deploy/runbook.md"' in page          # a link inside the tree stays inside
    back = client.get("/ui/entry/infra/deploy/runbook.md").text
    assert "infra/db/postgres.md" in back                              # its backlink
    assert ">ADD<" in page and "seed" in page


def test_a_big_folder_is_paged(tmp_path):
    folder = tmp_path / "big"
    with Memory.open(folder, create=True, durable=False) as m:
        m.curate([{"op": "ADD", "path": f"logs/day/e{i:03d}.md", "title": f"Entry {i:03d}",
                   "content": f"Line {i}.", "reason": "seed"} for i in range(230)])
    with TestClient(page_app(folder, token=TOKEN), base_url=BASE) as c:
        sign_in(c, TOKEN)
        first = c.get("/ui/tree", params={"folder": "logs/day"}).text
        assert first.count("/ui/entry/logs/day/") == 100 and ">130 more<" in first
        last = c.get("/ui/fragment/folder", params={"folder": "logs/day", "page": 2}).text
        assert last.count("/ui/entry/logs/day/") == 30 and "more</a>" not in last


def test_the_top_of_the_tree_says_what_waits_and_what_changed(client, project):
    from memgrove.tree.hygiene import review

    with Memory.open(project) as m:
        review.queue(m.tree, review.proposal([{"op": "DELETE", "path": "infra/deploy/runbook_copy.md",
                                               "reason": "a copy"}]), proposed_by="model")
    sign_in(client, TOKEN)
    top = client.get("/ui/tree").text
    assert "<strong>1</strong> change waits for you" in top
    assert f"<strong>{len(SEED)}</strong> operations in the last 24 hours" in top and "dream has not run yet" in top
    assert "changes wait" not in client.get("/ui/tree", params={"folder": "infra"}).text


def test_a_journal_row_opens_to_its_diff(client, project):
    sign_in(client, TOKEN)
    op = journal(project)[0]
    page = client.get("/ui/journal").text
    assert f"/ui/fragment/operation?id={op['id']}" in page
    diff = client.get("/ui/fragment/operation", params={"id": op["id"]}).text
    assert "+title: Postgres version" in diff and "(none)" not in diff.split("+title")[0][-5:]
    assert client.get("/ui/operation", params={"id": op["id"]}).status_code == 200
    assert client.get("/ui/operation", params={"id": "20990101T000000-0000000000"}).status_code == 404


def test_the_journal_pages_by_cursor_and_the_review_queue_by_page(tmp_path):
    from memgrove.tree.hygiene import review

    folder = tmp_path / "busy"
    with Memory.open(folder, create=True, durable=False) as m:
        m.curate([{"op": "ADD", "path": f"logs/day/e{i:03d}.md", "title": f"Entry {i:03d}", "content": f"Line {i}.",
                   "reason": f"seed {i}"} for i in range(130)])
        for i in range(60):
            review.queue(m.tree, review.proposal([{"op": "DELETE", "path": f"logs/day/e{i:03d}.md",
                                                   "reason": f"drop {i}"}]), proposed_by="model")
    with TestClient(page_app(folder, token=TOKEN), base_url=BASE) as c:
        sign_in(c, TOKEN)
        first = c.get("/ui/journal").text
        older = re.search(r'href="(/ui/journal\?before=\d+)"', first)
        assert older and first.count('class="op-row"') == 100
        second = c.get(older.group(1).replace("&amp;", "&")).text
        assert second.count('class="op-row"') == 30 and "older →" not in second and "seed 0<" in second
        assert "seed 0<" not in first and "seed 129<" in first
        queue = c.get("/ui/review").text
        assert "60 waiting" in queue and queue.count('class="item"') == 50 and "later →" in queue
        lazy = re.findall(r'data-src="/ui/fragment/review\?id=([0-9a-f]+)"', queue)
        assert len(lazy) == 40
        assert "-Line" in c.get("/ui/fragment/review", params={"id": lazy[0]}).text     # what it would remove
        assert c.get("/ui/review", params={"page": 1}).text.count('class="item"') == 10


def test_a_journal_page_without_offsets_lists_every_row(project):
    """A read replica's pages come from its primary over the wire, which sends no line offsets:
    the rows are all listed, each found by its id when opened."""
    import dataclasses

    from memgrove.ui.views import changes_view

    with Memory.open(project) as m:
        class OverTheWire:
            def history_page(self, *args, **kw):
                return dataclasses.replace(m.history_page(*args, **kw), offsets=[])
        view = changes_view.journal(OverTheWire())
        assert [r["id"] for r in view["operations"]] == [r["id"] for r in reversed(journal(project))]
        assert {r["offset"] for r in view["operations"]} == {None}
        assert changes_view.find(m, view["operations"][-1]["id"], None)["diffs"]


def test_asking_shows_the_answer_with_its_tier_and_evidence(client):
    csrf = sign_in(client, TOKEN)
    r = client.post("/ui/ask", data={"q": "Which Postgres version runs in production?", "csrf": csrf})
    assert r.status_code == 200
    assert "tier" in r.text and "/ui/entry/infra/db/postgres.md" in r.text and "Postgres 16" in r.text


def test_an_error_is_a_page_saying_what_failed(client):
    sign_in(client, TOKEN)
    r = client.get("/ui/entry/infra/db/nothing_here.md")
    assert r.status_code == 404 and "text/html" in r.headers["content-type"] and "nothing_here" in r.text
    assert client.get("/ui/static/../auth.py").status_code == 404
    assert client.get("/ui/static/ui.js").headers["content-type"].startswith("text/javascript")


# -- every action is the CLI's operation ---------------------------------------------------------

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?|\d{8}T\d{6,12}-[0-9a-f]{6,10}")   # times, op and run ids


def comparable(records: list[dict]) -> list[dict]:
    """Journal records without what differs between two runs of the same action: ids (also where a
    reason names one), times, the actor."""
    out = []
    for r in records:
        text = json.dumps({k: v for k, v in r.items() if k not in ("id", "at", "actor")}, sort_keys=True)
        out.append(json.loads(STAMP.sub("<time>", text)))
    return out


def test_page_actions_journal_the_same_operations_as_the_cli(project, tmp_path):
    """Dream, approve, reject, undo an operation, undo a dream run: once through the page, once through
    the CLI on a copy of the same memory; the journals then hold the same operations."""
    from memgrove.cli.app import cli

    # words only: with meaning on, dream asks the encoder within a time budget, which the page's
    # server (half its request timeout) and the CLI (dream_budget_s) spend differently under load
    (project / ".memgrove" / "config.toml").write_text("[tree]\nsemantic_weight = 0\n")
    twin = tmp_path / "twin"
    shutil.copytree(project, twin)
    runner = CliRunner()

    def cli_run(*args: str) -> dict:
        r = runner.invoke(cli, ["--root", str(twin), "--no-server", "--json", *args], catch_exceptions=False)
        assert r.exit_code == 0, r.output
        return json.loads(r.output) if r.output.strip() else {}

    with TestClient(page_app(project, token=TOKEN), base_url=BASE) as c:
        csrf = sign_in(c, TOKEN)
        assert c.post("/ui/dream", data={"csrf": csrf}).status_code == 200
        cli_run("dream", "--no-model")
        assert comparable(journal(project)) == comparable(journal(twin))

        # two review items: approve the first, reject the other; the same item ids on both sides
        from memgrove.tree.hygiene import review

        proposals = ([{"op": "ARCHIVE", "path": "team/people/ana.md", "reason": "hostile"}],
                     [{"op": "DELETE", "path": "infra/deploy/runbook.md", "reason": "stale"}])
        ids = []
        for folder in (project, twin):
            with Memory.open(folder) as m:
                ids.append([review.queue(m.tree, review.proposal(ops), proposed_by="model").id for ops in proposals])
        assert ids[0] == ids[1]                       # an item's id is its change's, wherever it is queued
        archive_item, other = ids[0]
        page_items = re.findall(r'name="id" value="([0-9a-f]+)"', c.get("/ui/review").text)
        assert set(page_items) == {archive_item, other}
        assert c.post("/ui/review/approve", data={"csrf": csrf, "id": archive_item}).status_code == 200
        cli_run("review", "approve", archive_item)
        assert c.post("/ui/review/reject", data={"csrf": csrf, "id": other}).status_code == 200
        cli_run("review", "reject", other)
        assert comparable(journal(project)) == comparable(journal(twin))

        # the archived entry: listed in the archive, shown with a way back, restored
        assert "/ui/entry/team/people/ana.md" in c.get("/ui/archive").text
        shown = c.get("/ui/entry/team/people/ana.md").text
        assert "archived" in shown and 'action="/ui/restore"' in shown
        assert c.post("/ui/restore", data={"csrf": csrf, "path": "team/people/ana.md"}).status_code == 200
        cli_run("restore", "team/people/ana.md")
        assert comparable(journal(project)) == comparable(journal(twin))

        # undo the seed's first ADD, then the dream run
        seed_add = journal(project)[0]["id"]
        twin_add = journal(twin)[0]["id"]
        r = c.post("/ui/undo", data={"csrf": csrf, "id": seed_add}, follow_redirects=False)
        assert r.status_code == 303
        cli_run("undo", twin_add)
        run = re.search(r'name="run" value="([^"]+)"', c.get("/ui/review").text)
        assert run, "the dream run merged the copy: it can be undone"
        assert c.post("/ui/dream/undo", data={"csrf": csrf, "run": run.group(1)}).status_code == 200
        cli_run("dream", "--undo")
    mine, theirs = journal(project), journal(twin)
    assert [(r["op"], r["path"]) for r in mine] == [(r["op"], r["path"]) for r in theirs]
    for a, b in zip(comparable(mine), comparable(theirs)):
        assert a == b, [(k, a.get(k), b.get(k)) for k in a if a.get(k) != b.get(k)]
    assert [r["op"] for r in mine[len(SEED):]].count("UNDO") >= 2
    # who: the page's own undo says "web" where the CLI's says "user"; dream and review are theirs
    assert [r["actor"] for r in mine if r["op"] == "UNDO" and r["path"] == "infra/db/postgres.md"] == ["web"]
    assert [r["actor"] for r in theirs if r["op"] == "UNDO" and r["path"] == "infra/db/postgres.md"] == ["user"]
    assert not (project / ".memgrove" / "tree" / "infra" / "db" / "postgres.md").exists()
