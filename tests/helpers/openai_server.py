"""A tiny OpenAI-protocol server on 127.0.0.1 for driving the real ``ChatOpenAI`` client.

``POST /v1/chat/completions`` answers from a queue of canned replies and
records every request body. A reply is one of:

- ``text("...")``                      plain assistant content
- ``tool_calls(("name", {args}), ...)`` tool calls in OpenAI's JSON format
- ``status(401)``                      an HTTP error with an OpenAI-style error body
- ``stall(seconds)``                   sleep (past the client's timeout) before answering

>>> with serve([text("hi")]) as srv:                               # doctest: +SKIP
...     ChatOpenAI(base_url=srv.base_url, api_key="x", model="m").invoke("q").content
'hi'
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator


def text(content: str) -> dict[str, Any]:
    return {"kind": "text", "content": content}


def tool_calls(*calls: tuple[str, dict[str, Any]], raw_arguments: str | None = None) -> dict[str, Any]:
    """Tool calls; ``raw_arguments`` replaces the JSON of the first call's arguments (to send a malformed one)."""
    return {"kind": "tools", "calls": list(calls), "raw": raw_arguments}


def status(code: int, message: str = "Incorrect API key provided: x. You can find your API key at "
                                      "https://platform.openai.com/account/api-keys.") -> dict[str, Any]:
    return {"kind": "status", "code": code, "message": message}


def stall(seconds: float, then: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"kind": "stall", "seconds": seconds, "then": then or text("too late")}


class OpenAIServer:
    """The server; ``requests`` holds every request body (parsed JSON) in arrival order."""

    def __init__(self, replies: list[dict[str, Any]] | None = None):
        self.replies: deque[dict[str, Any]] = deque(replies or [])
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []        # lower-cased names
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._ids = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                with server._lock:
                    server.requests.append(body)
                    server.paths.append(self.path)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    reply = server.replies.popleft() if server.replies else None
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                if reply is None:
                    return self._send(500, {"error": {"message": "test server: no canned reply left",
                                                      "type": "server_error"}})
                if body.get("stream"):
                    return self._send(400, {"error": {"message": "test server: streaming is not scripted",
                                                      "type": "invalid_request_error"}})
                if reply["kind"] == "stall":
                    if server._stop.wait(reply["seconds"]):
                        return
                    reply = reply["then"]
                if reply["kind"] == "status":
                    return self._send(reply["code"], {"error": {"message": reply["message"],
                                                                "type": "invalid_request_error",
                                                                "code": "invalid_api_key", "param": None}})
                self._send(200, server._completion(body, reply))

            def _send(self, code: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    # one request per connection: a client keeps no idle connection to this server
                    # in its pool (langchain-openai caches its async client for the process, so a
                    # connection left from an `asyncio.run` outlives its event loop, unclosed)
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="openai-test-server", daemon=True)

    def _completion(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._ids += 1
            n = self._ids
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "stop"
        if reply["kind"] == "text":
            message["content"] = reply["content"]
        else:
            message["tool_calls"] = [
                {"id": f"call_{n}_{i}", "type": "function",
                 "function": {"name": name,
                              "arguments": reply["raw"] if (i == 0 and reply["raw"] is not None) else json.dumps(args)}}
                for i, (name, args) in enumerate(reply["calls"])]
            finish = "tool_calls"
        return {"id": f"chatcmpl-test-{n}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "test-model"), "system_fingerprint": None,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> "OpenAIServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def queue(self, *replies: dict[str, Any]) -> None:
        with self._lock:
            self.replies.extend(replies)

    # -- what the tests look at ------------------------------------------------------
    def request_text(self, i: int = -1) -> str:
        """Every message content of request ``i``, joined (tool results included)."""
        parts = []
        for m in self.requests[i].get("messages", []):
            c = m.get("content")
            if isinstance(c, list):
                parts += [p.get("text", "") for p in c if isinstance(p, dict)]
            elif c:
                parts.append(str(c))
        return "\n".join(parts)

    def messages(self, i: int = -1) -> list[dict[str, Any]]:
        return self.requests[i].get("messages", [])


@contextlib.contextmanager
def serve(replies: list[dict[str, Any]] | None = None) -> Iterator[OpenAIServer]:
    """Start a server on a free port of 127.0.0.1; stopped on exit."""
    srv = OpenAIServer(replies).start()
    try:
        yield srv
    finally:
        srv.stop()
