"""The system's Chromium driven by Selenium, for the web page's end-to-end tests.

    from helpers.browser import browser, count_payload_runs, page_report, read_console, settle

    def test_page(browser):                  # a fixture: one headless Chromium per module, fresh profile
        count_payload_runs(browser)          # before the first page: window.__mgx(name) counts
        browser.get(url)
        settle(browser)
        assert page_report(browser) == {"count": 0, "names": [], "csp": []}
        assert csp_violations(read_console(browser)) == []

Debian's ``chromium`` and ``chromium-driver`` (``make browser`` installs them as root, .ci/browser);
where either file is missing, every test using the fixture skips and names it. Selenium Manager never
runs: the driver is given by path (selenium then skips it), and ``SE_MANAGER_PATH`` names no file, so
a call to it would fail at once instead of downloading a driver. Every call ends in bounded time: the
page-load and script timeouts, and the HTTP timeout to chromedriver (selenium's default is none).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

BROWSER = Path("/usr/bin/chromium")
DRIVER = Path("/usr/bin/chromedriver")
PAGE_LOAD_TIMEOUT = 30.0    # seconds; the machine is shared and may be busy
SCRIPT_TIMEOUT = 15.0
COMMAND_TIMEOUT = 90.0      # one WebDriver command, starting the browser included

# Without the background-networking flags Chromium keeps trying the (closed) network: updates,
# safe browsing, sync, field trials. Even with them it still looks up accounts.google.com,
# clients2.google.com and update.googleapis.com at start (strace, Chromium 156): the resolver rule
# answers every name but localhost and 127.0.0.1 "not found", so nothing leaves the machine, not even DNS.
# --disable-dev-shm-usage: a container's /dev/shm is often 64 MB.
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
         "--disable-dev-shm-usage", "--disable-extensions", "--no-default-browser-check",
         "--window-size=1280,900")

# Selenium Manager (a Rust binary shipped in the wheel) would look for, download and report on
# browsers and drivers over the network; these keep it offline and silent should anything call it.
_SELENIUM_ENV = {"SE_MANAGER_PATH": "/nonexistent/selenium-manager (the tests give the driver's path)",
                 "SE_OFFLINE": "true", "SE_AVOID_STATS": "true"}

# Runs before any script of every page: a hostile payload calls __mgx(its name) (tests/helpers/hostile.py);
# each call is counted in the page (__mgx.count, __mgx.names) and in the console (read_console), which
# outlives a navigation. A page cannot replace __mgx. CSP violations are kept too, as the page
# reports them (securitypolicyviolation).
_COUNTER = """
(() => {
  if (window.__mgx) return;
  const mgx = function (name) {
    mgx.count += 1;
    mgx.names.push(String(name));
    console.warn("__mgx: a payload ran: " + String(name).slice(0, 200));
  };
  mgx.count = 0;
  mgx.names = [];
  mgx.csp = [];
  Object.defineProperty(window, "__mgx", {value: mgx, writable: false, configurable: false});
  document.addEventListener("securitypolicyviolation", (e) => {
    mgx.csp.push({directive: e.effectiveDirective, blocked: e.blockedURI, source: e.sourceFile,
                  line: e.lineNumber, sample: e.sample});
  });
})();
"""
PAYLOAD_MARK = "__mgx: a payload ran"


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for path, package in ((BROWSER, "chromium"), (DRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return (f"BROWSER TESTS SKIPPED: {path} is missing (Debian's {package}); "
                    "`make browser` installs chromium and chromium-driver as root")
    return None


@contextmanager
def _socket_timeout(seconds: float) -> Iterator[None]:
    # selenium reads its HTTP timeout to chromedriver from the socket default when it builds the
    # driver's connection: set for the constructor only, then pinned on the connection itself
    before = socket.getdefaulttimeout()
    socket.setdefaulttimeout(seconds)
    try:
        yield
    finally:
        socket.setdefaulttimeout(before)


def start_chromium(profile: Path, log: Path | None = None):
    """A headless Chromium on a fresh profile under ``profile``; the caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(BROWSER)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.page_load_strategy = "normal"
    service = Service(str(DRIVER), log_output=str(log) if log else os.devnull)
    with _socket_timeout(COMMAND_TIMEOUT):
        driver = webdriver.Chrome(options=options, service=service)
    try:
        driver.command_executor._client_config.timeout = COMMAND_TIMEOUT
        driver.set_page_load_timeout(PAGE_LOAD_TIMEOUT)
        driver.set_script_timeout(SCRIPT_TIMEOUT)
    except BaseException:
        driver.quit()
        raise
    return driver


@contextmanager
def headless_chromium() -> Iterator:
    """A browser for a ``with`` block, quit and its profile removed at the end, whatever happened
    (a script's; a test uses ``chromium()``, which skips where there is no browser)."""
    profile = Path(tempfile.mkdtemp(prefix="memgrove-chromium-"))
    saved = {k: os.environ.get(k) for k in _SELENIUM_ENV}
    os.environ.update(_SELENIUM_ENV)
    try:
        driver = start_chromium(profile / "profile", profile / "chromedriver.log")
        try:
            yield driver
        finally:
            driver.quit()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(profile, ignore_errors=True)


@contextmanager
def chromium() -> Iterator:
    """``headless_chromium()`` for a test: skipped (loudly, naming the missing file) where there is
    no browser."""
    why = missing()
    if why:
        pytest.skip(why)
    with headless_chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """One headless Chromium for a module's tests (a start costs about a second of both cores)."""
    with chromium() as driver:
        yield driver


def count_payload_runs(driver) -> None:
    """From the next page on, every document gets ``window.__mgx`` before its own scripts run
    (once per browser: a second call changes nothing)."""
    if not getattr(driver, "_mgx_counting", False):
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _COUNTER})
        driver._mgx_counting = True


def payload_runs(driver) -> int:
    """How often a payload called ``__mgx()`` in the current page (-1: the counter is not there,
    ``count_payload_runs`` was not called before the page)."""
    return int(driver.execute_script("return window.__mgx ? window.__mgx.count : -1"))


def payloads_ran(driver) -> list[str]:
    """The names the payloads that ran in the current page gave ``__mgx``."""
    return list(driver.execute_script("return window.__mgx ? window.__mgx.names : []"))


def settle(driver) -> None:
    """Two frames painted and the task queue run once: a payload waiting for the first paint, an
    animation's start, a focus or a failed image load has had its chance to run."""
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        " requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 0)));")


def page_report(driver) -> dict:
    """The current page's payload runs and CSP violations in one call: ``{"count", "names", "csp"}``
    (count -1: no counter, ``count_payload_runs`` was not called before the page)."""
    return dict(driver.execute_script(
        "const m = window.__mgx; return m ? {count: m.count, names: m.names, csp: m.csp}"
        " : {count: -1, names: [], csp: []}"))


def page_csp_violations(driver) -> list[dict]:
    """The current page's Content-Security-Policy violations, as the page saw them."""
    return list(driver.execute_script("return window.__mgx ? window.__mgx.csp : []"))


def read_console(driver) -> list[dict]:
    """The browser's console messages since the last call (chromedriver hands each out once):
    dicts with ``level``, ``message``, ``source``, ``timestamp``."""
    return list(driver.get_log("browser"))


def csp_violations(entries: list[dict]) -> list[str]:
    """The console's Content-Security-Policy refusals among ``entries``."""
    return [e["message"] for e in entries if "Content Security Policy" in e.get("message", "")]


def console_payload_runs(entries: list[dict]) -> int:
    """How many payload runs the console recorded among ``entries`` (across navigations)."""
    return sum(PAYLOAD_MARK in e.get("message", "") for e in entries)


def console_errors(entries: list[dict]) -> list[str]:
    """The SEVERE messages among ``entries`` (script errors, refused loads, failed requests)."""
    return [e["message"] for e in entries if e.get("level") == "SEVERE"]
