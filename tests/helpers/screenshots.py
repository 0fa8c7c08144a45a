"""The web page's screenshots in docs/images/ (ui-tree.png, ui-entry.png, ...), taken in headless
Chromium from a real ``memgrove serve`` on the bundled sample (helpers/ui_site.py: a team
conversation, three notes, a few operations facts, two changes waiting for review):

    make screenshots                                   # = the line below, in the project's venv
    .venv/bin/python -m tests.helpers.screenshots      # [--out docs/images] [--only tree,review]

Needs Debian's chromium and chromium-driver (``make browser``). 1280x900, the same every run but
for the dates and times the page shows.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:          # run as `python -m tests.helpers.screenshots`: helpers.* as the tests see them
    sys.path.insert(0, str(TESTS))

from helpers.browser import headless_chromium, missing  # noqa: E402
from helpers.memgrove_server import start_server, stop_server  # noqa: E402
from helpers.ui_site import WAIT, seed, sign_in  # noqa: E402

OUT = TESTS.parent / "docs" / "images"
WIDTH, HEIGHT = 1280, 900


def _css(driver: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, css)


def _wait(driver: Any, until: Callable[[Any], Any]) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT).until(until)


def _open_folder(driver: Any, folder: str) -> None:
    """Open ``folder`` in place on the tree page, as a person clicking it would."""
    from selenium.webdriver.common.by import By

    box = _css(driver, f'details[data-folder="{folder}"]')
    _css(box, "summary").click()
    _wait(driver, lambda d: box.find_elements(By.CSS_SELECTOR, ".children details, .children table"))


def tree(d: Any, base: str) -> None:
    d.get(f"{base}/ui/tree")
    _open_folder(d, "files")
    _open_folder(d, "files/postgres_tuning")
    _open_folder(d, "ops")


def entry(d: Any, base: str) -> None:
    d.get(f"{base}/ui/entry/files/postgres_tuning/current_settings.md")


def search(d: Any, base: str) -> None:
    d.get(f"{base}/ui/search")
    _css(d, "form.searchbox input[name=q]").send_keys("What pool size did we set for Postgres?")
    _css(d, "form.searchbox button.ask").click()
    _wait(d, lambda d: d.find_elements("css selector", "section.answer"))


def journal(d: Any, base: str) -> None:
    d.get(f"{base}/ui/journal")
    _css(d, "li.op-row details summary").click()          # the newest operation with its diff
    _wait(d, lambda d: d.find_elements("css selector", "li.op-row .children .diff"))


def review(d: Any, base: str) -> None:
    d.get(f"{base}/ui/review")


def status(d: Any, base: str) -> None:
    d.get(f"{base}/ui/status")


VIEWS: dict[str, Callable[[Any, str], None]] = {"tree": tree, "entry": entry, "search": search,
                                                 "journal": journal, "review": review, "status": status}


def _history(folder: Path) -> None:
    """A few changes after the seed, so that the journal and the entries have a story to show."""
    from memgrove import Memory

    with Memory.open(folder, durable=False) as mem:
        mem.curate([{"op": "UPDATE", "path": "ops/oncall/rotation.md",
                     "content": "The on-call rotation changes every Monday at 09:00 Lisbon time; "
                                "the handover note goes in #ops.",
                     "reason": "handover rule agreed in the Monday sync"}])
        mem.curate([{"op": "ADD", "path": "ops/oncall/escalation.md", "title": "Escalation",
                     "content": "Page the secondary after 15 minutes without an acknowledgement.",
                     "tags": ["oncall", "paging"], "related": ["ops/oncall/rotation.md"],
                     "reason": "from the incident review of 3 March"}])


def take(out: Path, only: list[str], base: Path | None = None) -> list[Path]:
    """``ui-<view>.png`` in ``out`` for each view in ``only``; the project is made under ``base``
    (default: the same folder each run, since the pages show it) and removed at the end."""
    why = missing()
    if why:
        raise SystemExit(why)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    base = base or Path(tempfile.gettempdir()) / "memgrove-screenshots"
    shutil.rmtree(base, ignore_errors=True)
    try:
        folder = seed(base / "tally-api")
        _history(folder)
        srv = start_server(folder)
        try:
            with headless_chromium() as driver:
                # exactly WIDTH x HEIGHT of page (a window's size includes the browser's own bars)
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                       {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
                sign_in(driver, srv.url, srv.token)
                for name in only:
                    VIEWS[name](driver, srv.url)
                    time.sleep(0.3)                          # fonts and layout settled
                    path = out / f"ui-{name}.png"
                    driver.save_screenshot(str(path))
                    written.append(path)
                    print(f"{path} ({path.stat().st_size // 1024} KB)")
        finally:
            stop_server(srv)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return written


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help=f"folder for the PNGs (default: {OUT})")
    ap.add_argument("--only", default=",".join(VIEWS), help=f"views, comma-separated (default: {','.join(VIEWS)})")
    args = ap.parse_args(argv)
    only = [v.strip() for v in args.only.split(",") if v.strip()]
    unknown = sorted(set(only) - set(VIEWS))
    if unknown:
        ap.error(f"no view {', '.join(unknown)}; the views: {', '.join(VIEWS)}")
    take(args.out, only)


if __name__ == "__main__":
    main()
