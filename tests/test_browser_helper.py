"""The browser the web page's end-to-end tests drive (helpers/browser.py), proved on a tiny page served
from 127.0.0.1: it loads, a click runs, ``__mgx`` counts a script that calls it, a Content-Security-Policy
refusal is seen, and a screenshot is a PNG. Skips, naming the missing file, where there is no Chromium."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from helpers.browser import (browser, console_errors, console_payload_runs, count_payload_runs,  # noqa: F401
                             csp_violations, page_csp_violations, payload_runs, payloads_ran, read_console,
                             settle)

PAGE = """<!doctype html><html><head><title>proof</title></head><body>
<button id="go" onclick="document.getElementById('out').textContent = 'clicked'">go</button>
<p id="out">waiting</p>
<script>__mgx()</script>
</body></html>"""

# the same inline script under the policy the web page sends: refused, so it never counts
GUARDED = """<!doctype html><html><head><title>guarded</title></head><body>
<p id="out">guarded</p><script>__mgx()</script></body></html>"""
POLICY = "default-src 'self'; script-src 'self'"

# payloads that run late: at the first paint after the page loaded, and when an image fails to load
LATE = """<!doctype html><html><head><title>late</title></head><body>
<script>addEventListener("load", () => requestAnimationFrame(() => __mgx("frames")))</script>
<img src="/missing.png" onerror="__mgx('image')" alt=""></body></html>"""


class _Handler(SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        if self.path.startswith("/guarded"):
            self.send_header("Content-Security-Policy", POLICY)
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:   # keep the test's output clean
        pass


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """``folder`` over HTTP on a free port of 127.0.0.1, in a thread; closed at the end."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("site")
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    (folder / "guarded.html").write_text(GUARDED, encoding="utf-8")
    (folder / "late.html").write_text(LATE, encoding="utf-8")
    (folder / "favicon.ico").write_bytes(b"")   # else the browser's request for it is a console error
    with serving(folder) as url:
        yield url


def test_loads_clicks_and_counts_a_script_that_runs(browser, site: str) -> None:
    from selenium.webdriver.common.by import By

    count_payload_runs(browser)
    read_console(browser)                  # what the module's other tests left there
    browser.get(f"{site}/index.html")
    assert browser.title == "proof"
    browser.find_element(By.ID, "go").click()
    assert browser.find_element(By.ID, "out").text == "clicked"
    assert payload_runs(browser) == 1
    entries = read_console(browser)
    assert console_payload_runs(entries) == 1, entries
    assert console_errors(entries) == [] and csp_violations(entries) == []


def test_a_refused_inline_script_is_a_csp_violation_not_a_run(browser, site: str) -> None:
    count_payload_runs(browser)
    read_console(browser)
    browser.get(f"{site}/guarded.html")
    assert payload_runs(browser) == 0
    assert [v["directive"] for v in page_csp_violations(browser)] == ["script-src-elem"]
    entries = read_console(browser)
    assert console_payload_runs(entries) == 0
    assert len(csp_violations(entries)) == 1, entries


def test_payloads_that_run_after_the_load_are_counted(browser, site: str) -> None:
    count_payload_runs(browser)
    browser.get(f"{site}/late.html")
    settle(browser)
    assert sorted(payloads_ran(browser)) == ["frames", "image"]
    read_console(browser)                 # the missing image's 404 is this page's own doing


def test_a_screenshot_is_a_png(browser, site: str, tmp_path: Path) -> None:
    browser.get(f"{site}/index.html")
    shot = tmp_path / "proof.png"
    assert browser.save_screenshot(str(shot))
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == tuple(browser.execute_script("return [innerWidth, innerHeight]"))


def test_without_a_browser_the_reason_names_the_file_and_the_fix(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    import helpers.browser as b

    monkeypatch.setattr(b, "DRIVER", tmp_path / "chromedriver")
    why = b.missing() or ""
    assert str(tmp_path / "chromedriver") in why and "chromium-driver" in why and "make browser" in why
    with pytest.raises(pytest.skip.Exception, match="make browser"):
        with b.chromium():
            pass
