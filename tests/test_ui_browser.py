"""The web page end to end: a real ``memgrove serve`` driven by headless Chromium (helpers/browser.py).

Sign-in with the token, a folder opened and closed in place, an entry, search, ask, a review item
approved and another rejected, an operation undone from the journal, and the hostile corpus shown
inert: no payload runs (``window.__mgx`` is installed before any page script and counts every call)
and no page of ours trips its own Content-Security-Policy. Each test stands alone (pytest-xdist may
hand them to different workers, each with its own server and browser). Skips, naming the missing
file, where there is no Chromium.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from memgrove.tree.hygiene import review

from helpers.browser import (browser, console_errors, console_payload_runs, count_payload_runs,  # noqa: F401
                             csp_violations, page_report, read_console, settle)
from helpers.memgrove_server import Server, start_server, stop_server
from helpers.ui_site import APPROVE, REJECT, UNDO, WAIT, hostile_path, review_ids, seed, sign_in

try:
    from helpers.hostile import pages as hostile_pages       # the corpus tests/test_ui_markdown.py renders
except ImportError:                                            # pragma: no cover - before it is merged
    hostile_pages = None

pytest.importorskip("selenium")


def _own_pages() -> list[dict[str, Any]]:
    """A few payloads of our own, in the corpus's shape, while helpers/hostile.py is not here."""
    def m(name: str) -> str:
        return f"window.__mgx&&window.__mgx('{name}')"
    bodies = {"script": f"<script>{m('script')}</script>", "img": f'<img src=x onerror="{m("img")}">',
              "svg": f'<svg onload="{m("svg")}"></svg>', "link": f"[click](javascript:{m('link')})",
              "iframe": f'<iframe srcdoc="&lt;script&gt;{m("iframe")}&lt;/script&gt;"></iframe>',
              "jinja": "{{ 7*7 }} {% for x in range(3) %}x{% endfor %} " + m("jinja")}
    return [{"name": k, "title": f'"><script>{m(k + "-title")}</script>', "body": v,
             "tags": [f"<img src=x onerror={m(k + '-tag')}>"], "visible": [m(k)]} for k, v in bodies.items()]


HOSTILE = hostile_pages() if hostile_pages else _own_pages()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seed(tmp_path_factory.mktemp("ui-browser") / "project", hostile=HOSTILE)


@pytest.fixture(scope="module")
def ids(project: Path) -> dict[str, str]:
    """The review items' ids, read before the server opens the project."""
    return review_ids(project)


@pytest.fixture(scope="module")
def served(project: Path, ids: dict[str, str]) -> Iterator[Server]:
    srv = start_server(project)
    try:
        yield srv
    finally:
        assert stop_server(srv) == 0, srv.log_text()


@pytest.fixture
def ui(browser, served: Server) -> Iterator[Any]:
    """The browser signed in to the served project, counting payloads; after the test, nothing
    our pages did may have been refused by their own policy or failed in the console."""
    count_payload_runs(browser)
    sign_in(browser, served.url, served.token)
    read_console(browser)
    yield browser
    assert_clean(browser, read_console(browser))


def assert_clean(driver, entries: list[dict]) -> None:
    assert console_payload_runs(entries) == 0, entries
    assert csp_violations(entries) == [], entries
    assert console_errors(entries) == [], entries


def wait(driver, condition, timeout: float = WAIT):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def by_css(driver, css: str):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, css)


def all_css(driver, css: str) -> list:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, css)


def notices(driver) -> list[str]:
    return [n.text for n in all_css(driver, "p.notice")]


# -- sign-in ---------------------------------------------------------------------------------------

def test_sign_in_takes_the_token_and_keeps_the_session_out_of_reach_of_scripts(browser, served: Server) -> None:
    from selenium.webdriver.common.by import By

    count_payload_runs(browser)
    read_console(browser)                 # what the module's other tests left there
    browser.delete_all_cookies()
    browser.get(f"{served.url}/ui/entry/ops/oncall/rotation.md")
    assert "/ui/login" in browser.current_url
    box = browser.find_element(By.ID, "token")
    box.send_keys("not-the-token")
    box.submit()
    wait(browser, lambda d: any("not the token" in n for n in notices(d)))
    read_console(browser)                 # the refused sign-in answers 401: an expected console error

    box = browser.find_element(By.ID, "token")
    box.send_keys(served.token)
    box.submit()
    wait(browser, lambda d: "/ui/entry/ops/oncall/rotation.md" in d.current_url)   # back where it was going
    assert by_css(browser, "h1").text == "On-call rotation"
    session = [c for c in browser.get_cookies() if c["name"].startswith("memgrove_ui_session")]
    assert len(session) == 1 and session[0]["httpOnly"] and session[0]["sameSite"] == "Strict"
    assert "memgrove_ui_session" not in browser.execute_script("return document.cookie")
    assert_clean(browser, read_console(browser))


# -- reading ----------------------------------------------------------------------------------------

def test_a_folder_opens_and_closes_in_place(ui, served: Server) -> None:
    ui.get(f"{served.url}/ui/tree")
    ui.execute_script("window.__stayed = 'this page'")       # gone if the page reloads
    ops = by_css(ui, 'details[data-folder="ops"]')
    by_css(ops, "summary").click()
    wait(ui, lambda d: all_css(ops, '.children details[data-folder="ops/oncall"]'))
    oncall = by_css(ops, 'details[data-folder="ops/oncall"]')
    by_css(oncall, "summary").click()
    link = wait(ui, lambda d: [a for a in all_css(oncall, ".children a") if a.text == "On-call rotation"])[0]
    assert ops.get_attribute("open") is not None and link.is_displayed()

    by_css(ops, "summary").click()                          # closed: its rows hidden, still loaded
    wait(ui, lambda d: ops.get_attribute("open") is None)
    assert not link.is_displayed()
    by_css(ops, "summary").click()                          # open again: no second fetch needed
    wait(ui, lambda d: link.is_displayed())
    assert ui.execute_script("return window.__stayed") == "this page"
    assert "/ui/tree" in ui.current_url

    link.click()
    wait(ui, lambda d: "/ui/entry/ops/oncall/rotation.md" in d.current_url)
    assert by_css(ui, "h1").text == "On-call rotation"


def test_an_entry_shows_its_body_metadata_and_history(ui, served: Server) -> None:
    ui.get(f"{served.url}/ui/entry/ops/backups/every_night.md")
    assert by_css(ui, "h1").text == "Backups every night"
    assert "Backups run every night at 02:00 UTC" in by_css(ui, ".body").text
    assert {t.text for t in all_css(ui, ".meta .tag")} >= {"backups", "retention"}
    history = by_css(ui, ".history").text
    assert "ADD" in history and "seeded for the page" in history
    assert [a.text for a in all_css(ui, "nav.crumbs a")] == ["Tree", "ops", "backups"]


def test_a_conversation_message_names_its_speaker(ui, served: Server) -> None:
    ui.get(f"{served.url}/ui/tree?folder=conversations/team_chat/session_1")
    first = [a for a in all_css(ui, "table.entries a") if a.text.startswith("Ana")][0]
    first.click()
    wait(ui, lambda d: "/ui/entry/conversations/team_chat/session_1/" in d.current_url)
    sources = by_css(ui, ".sources").text
    assert "conversation" in sources and "Ana" in sources


def test_search_ranks_hits_with_score_and_excerpt(ui, served: Server) -> None:
    from selenium.webdriver.common.keys import Keys

    ui.get(f"{served.url}/ui/tree")
    box = by_css(ui, "header form.quick input[name=q]")
    box.send_keys("on-call rotation Monday", Keys.ENTER)
    wait(ui, lambda d: "/ui/search" in d.current_url and all_css(d, ".hits li"))
    hits = all_css(ui, ".hits li")
    assert "On-call rotation" in hits[0].find_element("css selector", "a").text
    assert float(by_css(hits[0], ".score").text) > 0
    assert "every Monday" in by_css(hits[0], ".excerpt").text


def test_ask_gives_the_answer_with_its_tier_and_evidence(ui, served: Server) -> None:
    ui.get(f"{served.url}/ui/search")
    box = by_css(ui, "form.searchbox input[name=q]")
    box.send_keys("What pool size did we set for Postgres?")
    by_css(ui, "form.searchbox button.ask").click()
    answer = wait(ui, lambda d: all_css(d, "section.answer"))[0]
    assert "tier" in by_css(answer, ".tier").text
    assert by_css(answer, ".body").text.strip()
    cited = [a.get_attribute("href") for a in all_css(answer, ".evidence a, .sources a")]
    assert any("postgres_tuning" in h or "conversations" in h for h in cited), cited


# -- changing ---------------------------------------------------------------------------------------

def test_approving_a_review_item_applies_it_as_a_journaled_merge(ui, served: Server, ids: dict[str, str]) -> None:
    kept, merged = APPROVE
    item = ids[merged]
    ui.get(f"{served.url}/ui/review")
    by_css(ui, f"#item-{item} button.approve").click()
    wait(ui, lambda d: any("approved" in n for n in notices(d)))
    assert any("1 applied" in n for n in notices(ui)), notices(ui)
    assert not all_css(ui, f"#item-{item}")
    assert served.client.get(f"/api/entries/{merged}").status_code == 404
    ops = served.client.get("/api/history", params={"path": merged, "limit": 5}).json()["operations"]
    # the same operation `memgrove review approve` journals, by the review queue's actor
    assert [(o["op"], o["actor"]) for o in ops][0] == ("MERGE", review.ACTOR), ops


def test_rejecting_a_review_item_changes_nothing_and_is_remembered(ui, served: Server, ids: dict[str, str]) -> None:
    kept, dup = REJECT
    item = ids[dup]
    ui.get(f"{served.url}/ui/review")
    by_css(ui, f"#item-{item} button.reject").click()
    wait(ui, lambda d: any("rejected 1 change" in n for n in notices(d)))
    assert not all_css(ui, f"#item-{item}")
    assert served.client.get(f"/api/entries/{dup}").status_code == 200
    assert served.client.get(f"/api/entries/{kept}").status_code == 200


def test_undo_from_the_journal_reverts_the_operation(ui, served: Server) -> None:
    assert served.client.get(f"/api/entries/{UNDO}").status_code == 200
    ui.get(f"{served.url}/ui/journal?folder=ops/scratch")
    rows = [r for r in all_css(ui, "li.op-row") if UNDO in r.text and "ADD" in r.text]
    assert len(rows) == 1, [r.text for r in all_css(ui, "li.op-row")]
    by_css(rows[0], "button.undo").click()
    alert = wait(ui, lambda d: d.switch_to.alert)            # the page asks first
    assert "Undo" in alert.text
    alert.accept()
    wait(ui, lambda d: any(n.startswith("undo ") for n in notices(d)))
    assert served.client.get(f"/api/entries/{UNDO}").status_code == 404
    ui.get(f"{served.url}/ui/journal?folder=ops/scratch&kind=UNDO")
    assert any(UNDO in r.text and "web" in r.text for r in all_css(ui, "li.op-row"))


def test_status_shows_the_memory_and_runs_the_health_checks_on_request(ui, served: Server) -> None:
    ui.get(f"{served.url}/ui/status")
    cards = {c.text.split("\n", 1)[1].split(" of ")[0]: c.text.split("\n", 1)[0] for c in all_css(ui, ".card")}
    assert int(cards["entries"]) == served.client.get("/api/doctor").json()["entries"]
    assert "standalone" in by_css(ui, "dl.meta").text
    by_css(ui, "a[href*='doctor=true']").click()
    wait(ui, lambda d: any(n.startswith(("Healthy", "Problems found")) for n in notices(d)))
    assert any(n.startswith("Healthy") for n in notices(ui)), notices(ui)


def test_sign_out_ends_the_session(ui, served: Server) -> None:
    ui.get(f"{served.url}/ui/tree")
    by_css(ui, "header form[action='/ui/logout'] button").click()
    wait(ui, lambda d: "/ui/login" in d.current_url)
    assert not [c for c in ui.get_cookies() if c["name"].startswith("memgrove_ui_session")]
    ui.get(f"{served.url}/ui/review")
    assert "/ui/login" in ui.current_url                   # the next test's fixture signs in again


# -- hostile content -----------------------------------------------------------------------------------

def _inert(driver, where: str) -> None:
    settle(driver)
    seen = page_report(driver)
    assert seen["count"] == 0 and seen["names"] == [], f"{where}: payloads ran: {seen['names']}"
    assert seen["csp"] == [], f"{where}: {seen['csp']}"


def test_every_hostile_entry_is_shown_inert(ui, served: Server) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    for page in HOSTILE:
        path = hostile_path(page)
        ui.get(f"{served.url}/ui/entry/{path}")
        assert by_css(ui, "h1").text == page["title"].strip(), path     # the title as text, whole
        ActionChains(ui, duration=0).move_to_element(by_css(ui, ".body")).perform()  # a handler waiting for the mouse
        _inert(ui, path)
    assert len(HOSTILE) >= (50 if hostile_pages else 6)


def test_hostile_titles_and_tags_are_inert_in_lists_search_journal_and_answers(ui, served: Server) -> None:
    from selenium.webdriver.common.by import By

    ui.get(f"{served.url}/ui/tree?folder=hostile/corpus")
    titles = [a.text for a in all_css(ui, "table.entries td:first-child > a")]
    assert len(titles) == len(HOSTILE) and all("__mgx" in t for t in titles)
    _inert(ui, "tree")

    ui.get(f"{served.url}/ui/tree")                          # the folder opened in place
    hostile = by_css(ui, 'details[data-folder="hostile"]')
    by_css(hostile, "summary").click()
    corpus = wait(ui, lambda d: all_css(hostile, 'details[data-folder="hostile/corpus"]'))[0]
    by_css(corpus, "summary").click()
    wait(ui, lambda d: len(all_css(corpus, "table.entries tr")) > len(HOSTILE) // 2)
    _inert(ui, "tree, opened in place")

    ui.get(f"{served.url}/ui/search?q=mgx+script")
    assert all_css(ui, ".hits li")
    _inert(ui, "search")
    by_css(ui, "form.searchbox button.ask").click()
    wait(ui, lambda d: all_css(d, "section.answer"))
    _inert(ui, "ask")

    ui.get(f"{served.url}/ui/journal?folder=hostile")
    rows = ui.find_elements(By.CSS_SELECTOR, "li.op-row details")
    assert len(rows) >= len(HOSTILE)
    for d in rows:                                           # each opens to its diff: the hostile body
        by_css(d, "summary").click()
    wait(ui, lambda d: all(r.find_elements(By.CSS_SELECTOR, ".children .diff") for r in rows))
    _inert(ui, "journal")


# -- the screenshots in docs/ ------------------------------------------------------------------------------

def test_the_screenshot_script_writes_a_png_of_a_view(tmp_path: Path) -> None:
    from helpers import browser as b
    from helpers.screenshots import HEIGHT, WIDTH, take

    if b.missing():
        pytest.skip(b.missing())
    [shot] = take(tmp_path / "images", ["review"], base=tmp_path / "site")
    data = shot.read_bytes()
    assert shot.name == "ui-review.png" and data[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (WIDTH, HEIGHT)
    assert not (tmp_path / "site").exists()
