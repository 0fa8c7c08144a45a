"""``memgrove ui``: open the web page of this project's server, starting the server first when
none runs. The browser is signed in by a one-time link (``/ui/login?code=...``, valid two
minutes): the token itself never goes into a URL. Listed in ``COMMANDS`` for the group."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import click

from memgrove.cli.common import State, emit_json
from memgrove.terminal import echo

START_WAIT_S = 60.0       # a server opening a large memory takes a while before it answers
REQUEST_TIMEOUT_S = 10.0


def _home(state: State) -> Path:
    from memgrove.tree.base.home import locate_home

    return locate_home(state.root)      # --root, else MEMGROVE_HOME, else found upwards, as every command


def _start(home: Path, port: int | None) -> dict[str, Any]:
    """``memgrove serve`` in the background (its own session: it outlives this command; its output
    in ``.memgrove/logs/serve.log``), then its registration once it answers."""
    from memgrove.server.registry import find_server

    logs = home / "logs"
    logs.mkdir(exist_ok=True)
    args = [sys.executable, "-m", "memgrove", "--root", str(home.parent), "serve"]
    if port:
        args += ["--port", str(port)]
    with open(logs / "serve.log", "ab") as out:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, close_fds=True)
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        found = find_server(home)
        if found is not None:
            return found
        if proc.poll() is not None:
            raise click.ClickException(f"memgrove serve exited with status {proc.returncode}; see {logs / 'serve.log'}")
        time.sleep(0.2)
    raise click.ClickException(f"memgrove serve did not answer within {START_WAIT_S:g} s; see {logs / 'serve.log'}")


def sign_in_link(server: dict[str, Any]) -> str:
    """The page's address, with a one-time sign-in code when the server has tokens."""
    url = server["url"].rstrip("/")
    if not server.get("token"):
        return url + "/ui/"
    req = urllib.request.Request(url + "/ui/login/code", data=b"", method="POST",
                                 headers={"Authorization": f"Bearer {server['token']}"})
    with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT_S) as r:      # noqa: S310 - our own server
        code = json.loads(r.read())["code"]
    return f"{url}/ui/login?code={code}"


@click.command()
@click.option("--port", type=int, default=None, help="Port for the server this starts, when none runs.")
@click.option("--no-open", is_flag=True, help="Print the address only (a shell without a browser).")
@click.pass_obj
def ui(state: State, port: int | None, no_open: bool) -> None:
    """Open the memory's web page (browse, search, review, undo) in the browser, signed in; starts
    `memgrove serve` in the background when no server runs for this project."""
    from memgrove.server.registry import find_server

    home = _home(state)
    server = find_server(home)
    started = server is None
    if server is None:
        server = _start(home, port)
    link = sign_in_link(server)
    if state.json:
        emit_json({"url": link, "server": server["url"], "pid": server["pid"], "started": started})
    else:
        echo(("started memgrove serve (pid %d); " % server["pid"] if started else "") +
             f"the page: {link}\n(the link signs this browser in once, within two minutes)")
    if not no_open:
        import webbrowser

        webbrowser.open(link)


COMMANDS = [ui]
