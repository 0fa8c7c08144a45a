"""Entry bodies on the web page (memgrove/ui/markdown.py) and the hostile corpus.

Every payload of tests/helpers/hostile.py is rendered and parsed back: no element or
attribute that can run script or load a document, no link anywhere but http(s), mailto,
a fragment or the page's own /ui/ paths, and the payload still readable as text. The same
check run over an unsafe renderer (raw HTML on) must fail, so the checks can fail.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import jinja2
import pytest
from markdown_it import MarkdownIt
from markupsafe import Markup

from helpers import hostile
from memgrove.ui import markdown
from memgrove.ui.markdown import render

PAGES = hostile.pages()
ENTRY = "notes/hostile/page.md"

# What markdown-it (commonmark + tables + strikethrough) can produce; anything else is a leak.
ALLOWED_TAGS = {"p", "a", "em", "strong", "code", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol",
                "li", "blockquote", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "s"}
DANGEROUS_TAGS = {"script", "iframe", "object", "embed", "svg", "math", "base", "meta", "form", "style",
                  "link", "img", "input", "button", "textarea", "template", "noscript", "video", "audio",
                  "source", "details", "marquee", "body", "html", "head", "title", "frame", "frameset"}
ALLOWED_ATTRS = {"href", "title", "rel", "class", "start", "style"}
SAFE_HREF = re.compile(r"^(#|/ui/|https?://|mailto:)")


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.tags.append(("<!--", []))

    def handle_decl(self, decl: str) -> None:
        self.tags.append(("<!", []))

    def handle_pi(self, data: str) -> None:
        self.tags.append(("<?", []))


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def findings(html: str) -> list[str]:
    """What in ``html`` could run script, load something or leave the page unsafely."""
    out = []
    for tag, attrs in _parse(html).tags:
        if tag in DANGEROUS_TAGS or tag not in ALLOWED_TAGS:
            out.append(f"element <{tag}>")
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                out.append(f"handler {name}= on <{tag}>")
            elif name not in ALLOWED_ATTRS:
                out.append(f"attribute {name}= on <{tag}>")
            elif name == "href" and (not SAFE_HREF.match(value) or re.search(r"[\x00-\x20\x7f]", value)):
                out.append(f"href {value[:60]!r}")
            elif name == "style" and not re.fullmatch(r"text-align:(left|right|center)", value):
                out.append(f"style {value[:60]!r}")
    return out


def _text(html: str) -> str:
    return "".join(_parse(html).text)


def _readable(html: str) -> str:
    """The page's text and its tooltips (a link's title)."""
    page = _parse(html)
    return "".join(page.text) + "\n" + "\n".join(v or "" for _, attrs in page.tags for k, v in attrs if k == "title")


def test_the_corpus_is_large_and_every_page_calls_its_marker() -> None:
    assert len(PAGES) >= 60
    for page in PAGES:
        assert set(page) >= {"name", "title", "body", "tags", "visible"}
        assert hostile.mark(page["name"]) in page["body"] or page["name"].startswith(
            ("md_link_data_html", "md_image_data_svg", "md_autolink_data", "svg_use_data")), page["name"]
        assert hostile.mark(page["name"] + "-title") in page["title"]


@pytest.mark.parametrize("page", PAGES, ids=[p["name"] for p in PAGES])
def test_a_hostile_body_renders_inert_and_readable(page: dict) -> None:
    html = render(page["body"], entry_path=ENTRY)
    assert isinstance(html, Markup)
    assert findings(html) == []
    text = _readable(html)
    for visible in page["visible"]:
        assert visible in text, f"{visible[:80]!r} is no longer readable in the page"


_ENV = jinja2.Environment(autoescape=True)
_CARD = _ENV.from_string(
    '<article title="{{ title }}" data-name=\'{{ title }}\'><h1>{{ title }}</h1>'
    '<ul>{% for t in tags %}<li><a href="/ui/search?tag={{ t | urlencode }}" title="{{ t }}">{{ t }}</a></li>'
    "{% endfor %}</ul><div>{{ body }}</div></article>")


@pytest.mark.parametrize("page", PAGES, ids=[p["name"] for p in PAGES])
def test_a_hostile_title_and_tags_are_escaped_by_the_templates(page: dict) -> None:
    """The templates' autoescape, with the body dropped in as rendered Markup: the title and tags
    are shown exactly, in text and in attributes, and nothing in them becomes markup."""
    html = _CARD.render(title=page["title"], tags=page["tags"], body=render(page["body"], entry_path=ENTRY))
    problems = [f for f in findings(html) if f not in ("element <article>", "element <div>",
                                                         "attribute data-name= on <article>")]
    assert problems == []
    parsed = _parse(html)
    assert parsed.tags[0] == ("article", [("title", page["title"]), ("data-name", page["title"])])
    text = "".join(parsed.text)
    assert page["title"] in text
    for tag in page["tags"]:
        assert tag in text
        assert any(("title", tag) in attrs for _, attrs in parsed.tags)
    assert "49" not in text.replace(page["body"], "")   # {{ 7*7 }} is never evaluated


def test_the_checks_catch_an_unsafe_renderer() -> None:
    """Raw HTML on and markdown-it's own link check: the same checks find the payloads."""
    unsafe = MarkdownIt("commonmark", {"html": True}).enable("table")
    caught = [p["name"] for p in PAGES if findings(unsafe.render(p["body"]))]
    assert len(caught) >= 40
    for name in ("script_plain", "img_onerror", "svg_onload", "iframe_srcdoc", "md_image_data_png", "base_href"):
        assert name in caught
    loose = MarkdownIt("commonmark", {"html": False})
    assert findings(loose.render("[x](<java\tscript:alert(1)>) ![p](data:image/png;base64,AA)"))


def _href(html: str) -> list[str]:
    return [v or "" for _, attrs in _parse(html).tags for k, v in attrs if k == "href"]


@pytest.mark.parametrize(("link", "href"), [
    ("other.md", "/ui/entry/a/b/other.md"),
    ("./other.md", "/ui/entry/a/b/other.md"),
    ("../c/other.md", "/ui/entry/a/c/other.md"),
    ("<sub/deeper.md#Part two>", "/ui/entry/a/b/sub/deeper.md#Part%20two"),
    ("other.md?x=1", "/ui/entry/a/b/other.md"),
    ("/x/y/z.md", "/ui/entry/x/y/z.md"),
    ("@x/y/z.md", "/ui/entry/x/y/z.md"),
    ("<my file.md>", "/ui/entry/a/b/my%20file.md"),
    ("my%20file.md", "/ui/entry/a/b/my%20file.md"),
    ("<q\"uote'.md>", "/ui/entry/a/b/q%22uote%27.md"),
    ("#facts", "#facts"),
    ("https://example.org/a?b=1", "https://example.org/a?b=1"),
    ("mailto:someone@example.org", "mailto:someone@example.org"),
])
def test_links_inside_the_tree_stay_inside(link: str, href: str) -> None:
    html = render(f"see [there]({link})", entry_path="a/b/e.md")
    assert _href(html) == [href]
    assert findings(html) == []


def test_external_links_are_marked_and_local_ones_are_not() -> None:
    html = render("[out](https://example.org) [in](x.md) [mail](mailto:a@example.org)", entry_path="a/b/e.md")
    rels = {dict(attrs)["href"]: dict(attrs).get("rel") for tag, attrs in _parse(html).tags if tag == "a"}
    assert rels == {"https://example.org": "noopener noreferrer nofollow", "/ui/entry/a/b/x.md": None,
                    "mailto:a@example.org": None}


def test_exists_picks_the_folder_or_the_root_and_marks_a_missing_link() -> None:
    files = {"a/b/near.md", "x/y/far.md"}
    html = render("[n](near.md) [f](x/y/far.md) [m](gone.md)", entry_path="a/b/e.md", exists=files.__contains__)
    anchors = [dict(attrs) for tag, attrs in _parse(html).tags if tag == "a"]
    assert [a["href"] for a in anchors] == ["/ui/entry/a/b/near.md", "/ui/entry/x/y/far.md", "/ui/entry/a/b/gone.md"]
    assert [a.get("class") for a in anchors] == [None, None, "missing"]
    # without `exists`, a path is read from the entry's folder, as a relative link in a file is,
    # or from the root when next to the entry it would be deeper than any entry
    assert _href(render("[f](x/y.md)", entry_path="a/b/e.md")) == ["/ui/entry/a/b/x/y.md"]
    assert _href(render("[f](x/y/far.md)", entry_path="a/b/e.md")) == ["/ui/entry/x/y/far.md"]


@pytest.mark.parametrize("link", [
    "../../../etc/passwd", "../../../../../../etc/passwd", "a/../../../../x.md", "%2e%2e/%2e%2e/%2e%2e/x.md",
    "..%2f..%2f..%2fx.md", "../../.memgrove/config.yaml", ".git/config", "_reserved/x.md", "//evil.example/x",
    "<..\\..\\..\\x.md>", "~/x.md", "<C:/Windows/x.md>", "a%00b.md", "java%09script:alert(1)", "x:y/z.md",
])
def test_a_link_that_would_leave_the_tree_is_text(link: str) -> None:
    html = render(f"[label]({link})", entry_path="a/b/e.md", exists=lambda p: True)
    assert _href(html) == []
    assert "label" in _text(html)
    assert findings(html) == []


def test_an_image_is_a_link_never_loaded() -> None:
    html = render("![a diagram](pic.png) ![far](https://example.org/p.png) ![bad](data:image/png;base64,AA)",
                  entry_path="a/b/e.md")
    tags = _parse(html).tags
    assert "img" not in [t for t, _ in tags]
    assert _href(html) == ["/ui/entry/a/b/pic.png", "https://example.org/p.png"]
    text = _text(html)
    assert "image: a diagram" in text and "image: far" in text and "data:image/png;base64,AA" in text
    # an image inside a link is its text, so no link nests in another
    assert _href(render("[![logo](l.png)](https://example.org)", entry_path="a/b/e.md")) == ["https://example.org"]


def test_raw_html_is_shown_as_text() -> None:
    html = render('<b onclick="x()">bold?</b>\n\n<div>\nblock\n</div>', entry_path="a/b/e.md")
    assert findings(html) == []
    assert '<b onclick="x()">bold?</b>' in _text(html) and "<div>" in _text(html)


def test_tables_and_markdown_still_render() -> None:
    html = render("# Title\n\n| a | b |\n|:--|--:|\n| *1* | ~~2~~ |\n\n```py\nx = 1\n```", entry_path="a/b/e.md")
    tags = [t for t, _ in _parse(html).tags]
    for tag in ("h1", "table", "th", "td", "em", "s", "pre", "code"):
        assert tag in tags
    assert findings(html) == []
    assert "<a" not in render("see www.example.org and http://example.org", entry_path="a/b/e.md")  # linkify off


def test_a_huge_body_is_cut_with_a_notice() -> None:
    limit = markdown.MAX_CHARS
    whole = render("x" * limit, entry_path="a/b/e.md")
    assert "class=\"cut\"" not in whole and whole.count("x") == limit
    cut = render("y" * (limit + 50_000) + "<script>tail</script>", entry_path="a/b/e.md")
    assert cut.split('<p class="cut">')[0].count("y") == limit and "tail" not in cut
    assert "only the first 200,000 are shown" in _text(cut)


def test_the_markup_is_not_escaped_twice_by_the_templates() -> None:
    html = _ENV.from_string("<div>{{ body }}</div>").render(body=render("*em* & <x>", entry_path="a/b/e.md"))
    assert "<em>em</em>" in html and "&amp; &lt;x&gt;" in html


def test_a_body_too_slow_to_parse_is_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``MAX_SECONDS`` (here at once) the body is shown escaped, whole and inert."""
    monkeypatch.setattr(markdown, "MAX_SECONDS", -1.0)
    body = "[[[ <script>alert(1)</script> [x](javascript:alert(1)) *em*"
    html = render(body, entry_path="a/b/e.md")
    assert findings(html) == []
    assert [t for t, _ in _parse(html).tags] == ["pre", "p"]
    assert body in _text(html) and "took too long" in _text(html)
    cut = render("z" * (markdown.MAX_CHARS + 1), entry_path="a/b/e.md")
    assert "200,001 characters long" in _text(cut)


def test_lines_nested_past_the_limit_are_kept_as_text() -> None:
    """markdown-it drops what is nested deeper than its limit; the page shows it as code."""
    html = render(">" * 40 + " the deep end <b>\n\nafter the quotes", entry_path="a/b/e.md")
    assert "the deep end <b>" in _text(html) and "after the quotes" in _text(html)
    assert findings(html) == []


def test_exists_is_asked_once_a_path_and_at_most_max_lookups_times() -> None:
    asked: list[str] = []

    def exists(path: str) -> bool:
        asked.append(path)
        return False

    body = "[same](same.md) [same again](same.md) " + " ".join(f"[n{i}](n{i}.md)" for i in range(500))
    html = render(body, entry_path="a/b/e.md", exists=exists)
    assert len(asked) == markdown.MAX_LOOKUPS and asked.count("a/b/same.md") == 1
    anchors = [dict(attrs) for tag, attrs in _parse(html).tags if tag == "a"]
    assert len(anchors) == 502 and anchors[0].get("class") == "missing" and anchors[-1].get("class") is None


def test_the_page_chooses_the_address_of_an_entry() -> None:
    html = render("[x](<x y.md#Part 2>) [out](https://example.org)", entry_path="a/b/e.md",
                  entry_url=lambda p: f"/ui/entry/{p.replace(' ', '%20')}?project=other")
    assert _href(html) == ["/ui/entry/a/b/x%20y.md?project=other#Part%202", "https://example.org"]
