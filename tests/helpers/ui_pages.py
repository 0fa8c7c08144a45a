"""The web page in-process: the server's app over a project, a TestClient signed in through the
sign-in form as a browser would be, and the page's CSRF token.

    app = page_app(folder, token="t")
    with TestClient(app, base_url=BASE) as c:
        csrf = sign_in(c, "t")
        c.post("/ui/review/reject", data={"csrf": csrf, "all": "true"})
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

BASE = "http://127.0.0.1"     # a loopback Host without a port: the guard takes it for any port


def page_app(folder: str | Path, token: str | None = "page-token", **served: Any) -> Any:
    from memgrove.server.app import create_app
    from memgrove.server.settings import ServerSettings

    return create_app(folder, ServerSettings(), token=token, mcp=False, **served)


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf-token" content="([^"]*)"', html) or re.search(r'name="csrf" value="([^"]*)"', html)
    assert found, "no CSRF token on the page"
    return found.group(1)


def sign_in(client: Any, token: str | None, next: str = "") -> str:
    """Sign ``client`` in with ``token`` through the form; the CSRF token of its session."""
    form = client.get("/ui/login")
    if form.status_code == 303 or "csrf-token" in form.text and "Sign in" not in form.text:
        return csrf_of(client.get("/ui/tree").text)     # a server without tokens signed it in already
    r = client.post("/ui/login", data={"token": token or "", "csrf": csrf_of(form.text), "next": next},
                    follow_redirects=False)
    assert r.status_code == 303 and "error=" not in r.headers["location"], r.headers.get("location")
    return csrf_of(client.get("/ui/tree").text)


class Elements(HTMLParser):
    """Every element of a page with its attributes, and the page's text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def elements(html: str) -> Elements:
    p = Elements()
    p.feed(html)
    p.close()
    return p


OUR_SCRIPT = "/ui/static/ui.js"


def foreign_active_content(html: str) -> list[str]:
    """What on a page could run or load something that is not the page's own: any script but ours,
    an event-handler attribute, a javascript:/data:/vbscript: address, a frame, an object, a base or
    meta refresh. Empty on a safe page."""
    found = []
    for tag, attrs in elements(html).elements:
        if tag == "script" and not (attrs.get("src") or "").startswith(OUR_SCRIPT):
            found.append(f"<script {attrs}>")
        if tag in ("iframe", "frame", "object", "embed", "base", "applet", "svg", "math", "style", "form") \
                and not (tag == "form" and (attrs.get("action") or "").startswith("/ui/")):
            found.append(f"<{tag} {attrs}>")
        if tag == "meta" and (attrs.get("http-equiv") or "").lower() == "refresh":
            found.append(f"<meta {attrs}>")
        for name, value in attrs.items():
            if name.lower().startswith("on"):
                found.append(f"<{tag} {name}=...>")
            if name.lower() in ("href", "src", "action", "formaction", "srcdoc", "xlink:href", "data", "style"):
                v = re.sub(r"[\x00-\x20]", "", (value or "")).lower()
                if name.lower() in ("srcdoc", "style") or v.startswith(("javascript:", "vbscript:", "data:")):
                    found.append(f"<{tag} {name}={value!r}>")
    return found
