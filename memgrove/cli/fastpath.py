"""Where the ``memgrove`` command starts: ``query`` and ``search`` answered by the project's running
``memgrove serve`` with the standard library alone, everything else handed to the click CLI.

A cold ``memgrove query`` through the server spends most of its time importing: click, the
CLI's modules, ``http.client`` (which imports ``ssl`` and ``email``), ``pathlib`` and
``typing`` cost more than the answer. This module reads the words itself, finds the project's
``.memgrove/server.json`` as ``memgrove.server.registry.find_server`` does (the process alive,
``/health`` answering as that process), asks over a plain socket on the same connection, and
prints what ``memgrove.cli.read`` prints, with the same renderers (``memgrove/cli/render.py``).

It hands the whole command line to the click CLI (``memgrove.cli.main``), unchanged, whenever it
is not sure to do the same: another command, a word or flag it does not know (``--help``,
``--no-server``, ``--``), a value click would refuse or read otherwise, ``MEMGROVE_NO_SERVER`` or
``MEMGROVE_URL`` set, no project or no live server, a project folder it would find differently
(a symbolic link, ``..``), a terminal that is not UTF-8, or a server that fails to answer (a
read: asking again is harmless). Its own imports: ``os``, ``sys``, ``json``, ``re`` and
``socket`` (``textwrap`` and ``shutil`` for search's text).

As ``Memory.connect``'s client, the answer comes within ``MEMGROVE_TIMEOUT`` seconds (600) in all,
however slowly it drips (``memgrove/remote/deadline_socket.py``), and is at most 64 MB: past either, one line says
so (``server_timeout``, ``bad_reply``). A read replica's server this process has no token for is
left to the click CLI, which reads the replica's tree itself (``memgrove/cli/which_memory.py``).
"""

from __future__ import annotations

import json
import os
import socket
import sys

from memgrove.terminal import dumps, safe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

COMMANDS = ("query", "search")
PROBE_TIMEOUT = 0.5       # seconds for /health, as memgrove.server.registry.PROBE_TIMEOUT
TIMEOUT = 600.0           # seconds for the answer, as memgrove.remote.wire.TIMEOUT (MEMGROVE_TIMEOUT)
MAX_REPLY = 64 * 2**20    # bytes, as memgrove.remote.wire.MAX_REPLY
SEARCH_LIMIT = 200        # the most results /api/search gives (memgrove.cli.which_memory.SEARCH_LIMIT)
_OFF = ("", "0", "false", "no")
NO_SERVER_ENV = "MEMGROVE_NO_SERVER"     # as memgrove.cli.which_memory: work in-process
URL_ENV = "MEMGROVE_URL"                 # a remote server named: the click CLI's to reach
TOKEN_ENV = "MEMGROVE_TOKEN"


def main() -> None:
    """The console script: the fast path when it applies, else the click CLI."""
    code = run(sys.argv[1:])
    if code is None:
        from memgrove.cli.app import main as full

        full()
        return
    sys.exit(code)


def run(argv: list[str]) -> int | None:
    """Answer ``argv`` through the running server and return the exit status; None when the
    click CLI should run it instead (nothing was printed then)."""
    cmd = parse(argv)
    if cmd is None or not _plain_env():
        return None
    home = find_home(cmd["root"])
    server = _registration(home) if home else None
    if server is None:
        return None
    timeout = _timeout()
    if timeout is None:
        return None           # the click CLI says what is wrong with MEMGROVE_TIMEOUT
    path = "/api/query" if cmd["command"] == "query" else "/api/search"
    try:
        if cmd["command"] == "query":
            status, data, ms = _ask(server, home, "POST", path, None, {"question": cmd["text"]}, timeout)
        else:
            params = {"q": cmd["text"], "limit": cmd["limit"] + 1}    # one more: is anything left out?
            if cmd["archived"]:
                params["include_archived"] = "true"
            status, data, ms = _ask(server, home, "GET", path, params, None, timeout)
    except (_Fallback, UnicodeError):     # an unencodable question: the click CLI says what is wrong
        return None
    except _Late:
        return _fail("server_timeout", f"memgrove serve at {server['url']} did not answer {path} within {timeout:g} s",
                     as_json=cmd["json"])
    except _TooLarge:
        return _fail("bad_reply", f"memgrove serve at {server['url']} answered {path} with a reply past the "
                                  f"client's limit of {MAX_REPLY:,} bytes: refused, nothing more was read",
                     as_json=cmd["json"])
    try:
        if status >= 400 or data is _NOT_JSON:
            return _fail(*_error_message(status, data, server["url"]), as_json=cmd["json"])
        if cmd["command"] == "query":
            _print_answer(data, cmd)
        else:
            _print_hits(data, cmd, ms)
    except BrokenPipeError:        # `memgrove query ... | head -1`: the reader left, not an error
        _reader_left()
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:   # raised before any output
        return _fail("bad_reply", f"memgrove serve at {server['url']} answered {path} with JSON of another shape "
                                  f"than a memgrove server sends ({type(exc).__name__}: {str(exc)[:200]})",
                     as_json=cmd["json"])
    return 0


# -- the words --------------------------------------------------------------------------------
def parse(argv: list[str]) -> dict[str, Any] | None:
    """``memgrove [--root DIR] [--json] query|search TEXT [options]``, the options the click CLI
    takes for them, in any order after the command; None for anything else."""
    cmd: dict[str, Any] = {"command": None, "root": None, "json": False, "verbose": False,
                           "limit": 10, "archived": False}
    texts: list[str] = []
    words = iter(argv)
    for w in words:
        if w == "--json":
            cmd["json"] = True
        elif w == "--root" or w.startswith("--root="):
            root = w[7:] if "=" in w else next(words, None)
            if not root or root.startswith("-"):
                return None
            cmd["root"] = root
        elif cmd["command"] is None:
            if w not in COMMANDS:
                return None
            cmd["command"] = w
        elif cmd["command"] == "query" and w in ("-v", "--verbose"):
            cmd["verbose"] = True
        elif cmd["command"] == "search" and (w in ("-n", "--limit") or w.startswith(("--limit=", "-n"))):
            value = next(words, None) if w in ("-n", "--limit") else w[8:] if w.startswith("--") else w[2:]
            if not value or not value.isascii() or not value.isdigit() or int(value) < 1:
                return None
            cmd["limit"] = int(value)
        elif cmd["command"] == "search" and w == "--include-archived":
            cmd["archived"] = True
        elif w.startswith("-"):
            return None
        else:
            texts.append(w)
    if cmd["command"] is None or len(texts) != 1 or cmd["limit"] + 1 > SEARCH_LIMIT:
        return None
    cmd["text"] = texts[0]
    return cmd


def _plain_env() -> bool:
    if os.environ.get(NO_SERVER_ENV, "").strip().lower() not in _OFF or os.environ.get(URL_ENV):
        return False
    # click re-encodes a stream it finds misconfigured (ASCII); plain writes would not
    return all((getattr(s, "encoding", "") or "").lower().replace("-", "") == "utf8" for s in (sys.stdout, sys.stderr))


def find_home(root: str | None) -> str | None:
    """``.memgrove/`` as ``memgrove.tree.base.home.locate_home`` finds it, or None where that would
    refuse or could differ (a link, ``..``, a file named as the folder)."""
    start = root or os.environ.get("MEMGROVE_HOME") or os.getcwd()
    start = os.path.expanduser(start)
    if os.path.isfile(start) or ".." in start.split(os.sep) or start.startswith("//"):
        return None
    start = os.path.normpath(os.path.join(os.getcwd(), start))
    folder = start
    if os.path.basename(folder) == ".memgrove" and os.path.isdir(folder):
        home = folder
    else:
        while not os.path.isdir(os.path.join(folder, ".memgrove", "tree")):
            parent = os.path.dirname(folder)
            if parent == folder:
                return None
            folder = parent
        home = os.path.join(folder, ".memgrove")
    tree = os.path.join(home, "tree")
    if os.path.islink(home) or os.path.islink(tree) or not os.path.isdir(tree):
        return None
    real = os.path.realpath(home)
    if real != os.path.join(os.path.realpath(os.path.dirname(home)), ".memgrove"):
        return None
    return home


# -- the server -------------------------------------------------------------------------------
class _Fallback(Exception):
    """Something the click CLI handles better: nothing was printed."""


class _Late(Exception):
    """The answer did not come within the timeout."""


class _TooLarge(Exception):
    """The answer is longer than ``MAX_REPLY``."""


class _Holder:
    deadline = float("inf")


def _timeout() -> float | None:
    raw = os.environ.get("MEMGROVE_TIMEOUT", "").strip()
    if not raw:
        return TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if 0 < value < float("inf") else None


_NOT_JSON = object()


def _registration(home: str) -> dict[str, Any] | None:
    try:
        with open(os.path.join(home, "server.json"), encoding="utf-8") as f:
            info = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or type(info.get("pid")) is not int or type(info.get("port")) is not int:
        return None
    if info["pid"] <= 0:
        return None
    try:
        os.kill(info["pid"], 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    except OSError:
        return None
    host = str(info.get("host", "127.0.0.1"))
    host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    info["connect"] = host
    info["url"] = f"http://{f'[{host}]' if ':' in host else host}:{info['port']}"
    info["token"] = _token(home, info) if info.get("auth", True) else None
    if info.get("auth", True) and not info["token"] and os.path.exists(os.path.join(home, "replica.json")):
        return None       # a replica's token is its primary's: without it, the click CLI reads the tree itself
    return info


def _token(home: str, info: dict[str, Any]) -> str | None:
    """As ``registry.client_token``: the registration's token file, else MEMGROVE_TOKEN, else server.token."""
    path = info.get("token_file")
    return (_read(path) if path else None) or os.environ.get(TOKEN_ENV) or _read(os.path.join(home, "server.token"))


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip() or None
    except (OSError, ValueError):
        return None


def _ask(server: dict[str, Any], home: str, method: str, path: str, params: dict[str, Any] | None,
         body: Any, timeout: float = TIMEOUT) -> tuple[int, Any, float]:
    """``/health`` (the registered process answers), then the request, on one connection:
    the status, the JSON answer and the milliseconds since the registration was read."""
    import time

    start = time.perf_counter()
    params = dict(params or {})
    if not server["token"] and (server.get("served_by") or server.get("project") != os.path.dirname(home)):
        params["project"] = os.path.dirname(home)   # as memgrove.cli.which_memory.ServerMemory names it
    if params:
        path += "?" + "&".join(f"{_quoted(str(k))}={_quoted(str(v))}" for k, v in params.items())
    from memgrove.remote.deadline_socket import Late, TooLarge, deadline_reader

    holder = _Holder()
    holder.deadline = time.monotonic() + PROBE_TIMEOUT * 4       # /health: as quick as a probe
    sock = _connect(server)
    reader = deadline_reader(sock, holder)
    try:
        host = f"Host: 127.0.0.1:{server['port']}\r\n"
        try:
            sock.sendall(f"GET /health HTTP/1.1\r\n{host}Accept: application/json\r\n\r\n".encode("ascii"))
            status, health, kept = _response(reader)
        except (OSError, ValueError, Late, TooLarge):
            raise _Fallback() from None
        if status != 200 or not isinstance(health, dict) or health.get("pid") != server["pid"]:
            raise _Fallback()
        if not kept:                    # a server that closes after each answer: a second connection
            reader.close()
            sock.close()
            sock = _connect(server)
            reader = deadline_reader(sock, holder)
        data = b"" if body is None else json.dumps(body).encode("utf-8")
        head = f"{method} {path} HTTP/1.1\r\n{host}Accept: application/json\r\nConnection: close\r\n"
        if server["token"]:
            head += f"Authorization: Bearer {server['token']}\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        holder.deadline = time.monotonic() + timeout
        try:
            sock.settimeout(timeout)
            sock.sendall(head.encode("latin-1") + b"\r\n" + data)
            status, answer, _ = _response(reader)
        except Late:
            raise _Late() from None
        except TooLarge:
            raise _TooLarge() from None
        except (OSError, ValueError, UnicodeError):
            raise _Fallback() from None
        return status, answer, (time.perf_counter() - start) * 1000
    finally:
        reader.close()   # the socket closes for real once its file is closed too
        sock.close()


def _connect(server: dict[str, Any]) -> socket.socket:
    # connect, not create_connection: getaddrinfo imports the idna codec (5 ms) even for 127.0.0.1
    sock = socket.socket(socket.AF_INET6 if ":" in server["connect"] else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.settimeout(PROBE_TIMEOUT)
        sock.connect((server["connect"], server["port"]))
    except OSError:
        sock.close()
        raise _Fallback() from None
    return sock


_URL_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


def _quoted(text: str) -> str:
    """``urllib.parse.quote_plus`` (what ``urlencode`` does), without importing urllib."""
    return "".join(chr(b) if b in _URL_SAFE else "+" if b == 32 else f"%{b:02X}"
                   for b in text.encode("utf-8"))


def _response(reader: Any) -> tuple[int, Any, bool]:
    """One HTTP/1.x response: its status, its JSON body (``_NOT_JSON`` when not JSON) and
    whether the connection stays open for another request."""
    line = reader.readline(65537)
    parts = line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise ValueError("not HTTP")
    status = int(parts[1])
    kept = parts[0] == b"HTTP/1.1"
    length, chunked = None, False
    while True:
        line = reader.readline(65537)
        if not line:
            raise ValueError("headers cut short")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif name == b"connection":
            kept = kept and b"close" not in value.lower()
    from memgrove.remote.deadline_socket import TooLarge

    if chunked:
        raw = bytearray()
        while True:
            size = int(reader.readline(65537).split(b";")[0], 16)
            if size == 0:
                while reader.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass
                break
            if len(raw) + size > MAX_REPLY:
                raise TooLarge(None)
            raw += _exactly(reader, size)
            reader.readline(65537)
    elif length is not None:
        if length > MAX_REPLY:
            raise TooLarge(length)
        raw = _exactly(reader, length)
    else:
        raise ValueError("no length")
    try:
        return status, json.loads(raw) if raw else None, kept
    except (ValueError, RecursionError):     # RecursionError: JSON nested deeper than the parser goes
        return status, _NOT_JSON, kept


def _exactly(reader: Any, n: int) -> bytes:
    raw = reader.read(n)
    if len(raw) != n:
        raise ValueError("body cut short")
    return raw


def _error_message(status: int, data: Any, url: str) -> tuple[str, str]:
    """The code and message memgrove.cli.which_memory turns an error answer into."""
    if data is _NOT_JSON:
        return "server_error", f"memgrove serve at {url} answered {status} with something not JSON"
    err = data.get("error") if isinstance(data, dict) else None
    if not isinstance(err, dict) or not isinstance(err.get("message"), str):
        return "server_error", f"memgrove serve at {url} answered {status}"
    return str(err.get("code") or "server_error"), err["message"]


def _fail(code: str, message: str, *, as_json: bool) -> int:
    """As the click CLI shows a known error: one line on stderr, or its JSON on stdout; status 1."""
    text = safe(message)
    if as_json:
        _out(dumps({"error": {"code": code, "message": text}}))
    else:
        sys.stderr.write(f"Error: {text}\n")
        sys.stderr.flush()
    return 1


# -- the output ------------------------------------------------------------------------------
def _print_answer(data: Any, cmd: dict[str, Any]) -> None:
    from memgrove.graphs.answer import Answer
    from memgrove.cli.render import answer_lines

    answer = Answer.from_dict(data)
    if cmd["json"]:
        _out(dumps(answer.to_dict()))
    else:
        _out("\n".join(answer_lines(answer, cmd["verbose"])))


def _print_hits(data: Any, cmd: dict[str, Any], ms: float) -> None:
    hits = data["hits"]
    more = len(hits) > cmd["limit"]
    hits = hits[:cmd["limit"]]
    if cmd["json"]:
        _out(dumps({"query": cmd["text"], "latency_ms": round(ms, 2), "hits": hits, "more": more}))
    else:
        from memgrove.cli.render import hits_lines

        _out("\n".join(hits_lines(cmd["text"], hits, ms, cmd["limit"], more, sys.stdout.isatty())))


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _reader_left() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    main()
