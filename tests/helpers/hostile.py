"""Hostile entries: markdown and HTML that try to run script in the web page.

Each page is ``{"name", "title", "body", "tags", "visible"}``. ``name`` is unique and safe in
a file name; ``visible`` lists strings that must still be in the page's text after rendering
(a payload shown as text, not silently dropped); by default the body's marker call.

Every script in a payload, title or tag calls ``window.__mgx && window.__mgx('<name>')`` (the
title's and tags' with ``-title`` and ``-tag``), so a browser test that defines ``__mgx`` before
the page's content counts every execution, and names the payload that ran.

Used by tests/test_ui_markdown.py (the renderer and the templates' escaping) and by the
browser tests (the same pages written to a tree, opened in Chromium).
"""

from __future__ import annotations

import base64


def mark(name: str) -> str:
    """The call a payload makes if it ever runs (no spaces: it must survive a URL)."""
    return f"window.__mgx&&window.__mgx('{name}')"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _body(name: str, m: str) -> tuple[str, list[str] | None]:   # noqa: C901 - one table of payloads
    """The body of payload ``name`` (with its marker call ``m``) and, when the marker call is
    not what stays visible, what does."""
    long_a = "A" * 150_000
    table = {
        # -- script elements ------------------------------------------------------------
        "script_plain": (f"<script>{m}</script>", None),
        "script_mixed_case": (f"<ScRiPt>{m}</sCrIpT>", None),
        "script_split": (f"<scr<script>ipt>{m}</scr</script>ipt>", None),
        "script_src_data": (f'<script src="data:text/javascript,{m}"></script>', None),
        "script_unclosed": (f"text before\n\n<script>{m}", None),
        "script_inline_in_paragraph": (f"**bold** and <script>{m}</script> and _em_", None),
        "script_in_attribute": (f'<div title="</div><script>{m}</script>">x</div>', None),
        "script_after_textarea": (f"</textarea><script>{m}</script>", None),
        "script_after_title": (f"</title></head><body><script>{m}</script>", None),
        "script_in_html_comment": (f"<!-- --><script>{m}</script><!-- -->", None),
        "script_in_cdata": (f"<![CDATA[<script>{m}</script>]]>", None),
        "script_in_template": (f"<template><script>{m}</script></template>", None),
        "script_setext_heading": (f"<script>{m}</script>\n===", None),
        "script_in_list_and_quote": (f"- item <script>{m}</script>\n\n> quote <script>{m}</script>", None),
        "script_in_table": (f"| a | b |\n|---|---|\n| <script>{m}</script> | [x](javascript:{m}) |", None),
        # -- event handlers ---------------------------------------------------------------
        "img_onerror": (f'<img src=x onerror="{m}">', None),
        "img_onerror_unquoted": (f"<img src=x onerror={m}>", None),
        "img_srcset_onerror": (f'<img srcset="x 1x" onerror="{m}">', None),
        "body_onload": (f'<body onload="{m}">', None),
        "input_autofocus": (f'<input autofocus onfocus="{m}">', None),
        "div_onmouseover": (f'<div onmouseover="{m}" style="position:fixed;inset:0">hover</div>', None),
        "details_ontoggle": (f'<details open ontoggle="{m}"><summary>s</summary></details>', None),
        "video_source_onerror": (f'<video><source onerror="{m}"></video>', None),
        "audio_onerror": (f'<audio src=x onerror="{m}"></audio>', None),
        "marquee_onstart": (f'<marquee onstart="{m}">m</marquee>', None),
        # -- svg, math, foreign content ------------------------------------------------------
        "svg_onload": (f'<svg onload="{m}"></svg>', None),
        "svg_script": (f"<svg><script>{m}</script></svg>", None),
        "svg_animate_onbegin": (f'<svg><animate onbegin="{m}" attributeName=x dur=1s /></svg>', None),
        "svg_a_javascript": (f'<svg><a xlink:href="javascript:{m}"><text x=20 y=20>click</text></a></svg>', None),
        "svg_use_data": (f'<svg><use href="data:image/svg+xml;base64,{_b64("<svg onload=" + chr(34) + m + chr(34) + "/>")}#x"/></svg>',
                         ["<svg><use href="]),
        "math_mxss": (f'<math><mtext><table><mglyph><style><img src=x onerror="{m}">', None),
        "math_href": (f'<math href="javascript:{m}"><mi>x</mi></math>', None),
        "noscript_mxss": (f'<noscript><p title="</noscript><img src=x onerror={m}>">', None),
        # -- frames, objects, documents ------------------------------------------------------
        "iframe_srcdoc": (f'<iframe srcdoc="&lt;script&gt;{m}&lt;/script&gt;"></iframe>', ["<iframe srcdoc="]),
        "iframe_src_javascript": (f'<iframe src="javascript:{m}"></iframe>', None),
        "object_data": (f'<object data="data:text/html,<script>{m}</script>"></object>', None),
        "embed_src": (f'<embed src="data:text/html,<script>{m}</script>">', None),
        "base_href": (f'<base href="javascript:{m}//">\n\n[a relative link](other.md)', None),
        "meta_refresh": (f'<meta http-equiv="refresh" content="0;url=javascript:{m}">', None),
        "form_action": (f'<form action="javascript:{m}"><button>go</button></form>', None),
        "button_formaction": (f'<button formaction="javascript:{m}">go</button>', None),
        "a_href_javascript_html": (f'<a href="javascript:{m}">an html link</a>', None),
        "link_stylesheet": (f'<link rel=stylesheet href="javascript:{m}">', None),
        "style_expression": (f"<style>body{{background:expression({m})}}</style>", None),
        "style_import": (f'<style>@import "javascript:{m}";</style>', None),
        "style_attribute": (f'<p style="background:url(javascript:{m})">p</p>', None),
        # -- markdown links and images -------------------------------------------------------
        "md_link_javascript": (f"[click](javascript:{m})", None),
        "md_link_javascript_angle": (f"[click](<javascript:{m}>)", None),
        "md_link_javascript_mixed_case": (f"[click](JaVaScRiPt:{m})", [f"JaVaScRiPt:{m}"]),
        "md_link_javascript_tab_entity": (f"[click](java&#x09;script:{m})", [m]),
        "md_link_javascript_newline_entity": (f"[click](java&#10;script:{m})", [m]),
        "md_link_javascript_colon_entity": (f"[click](javascript&#58;{m})", [m]),
        "md_link_javascript_named_colon": (f"[click](javascript&colon;{m})", [m]),
        "md_link_javascript_percent": (f"[click](%6A%61%76%61%73%63%72%69%70%74:{m})", ["click"]),
        "md_link_javascript_leading_space": (f"[click](<  javascript:{m}>)", [m]),
        "md_link_javascript_zero_width": (f"[click](java\u200bscript:{m})", [m]),
        "md_link_javascript_fullwidth": (f"[click](\uff4a\uff41\uff56\uff41\uff53\uff43\uff52\uff49\uff50\uff54:{m})", [m]),
        "md_link_vbscript": (f"[click](vbscript:{m})", None),
        "md_link_data_html": (f"[click](data:text/html;base64,{_b64('<script>' + m + '</script>')})",
                              [_b64("<script>" + m + "</script>")]),
        "md_link_file": (f"[passwd](file:///etc/passwd) {m}", None),
        "md_link_title_breakout": (f'[x](https://example.org "\\"><script>{m}</script>")', None),
        "md_link_href_breakout": (f'[x](https://example.org/"onmouseover="{m}") {m}', None),
        "md_image_javascript": (f"![x](javascript:{m})", None),
        "md_image_data_svg": (f"![x](data:image/svg+xml;base64,{_b64('<svg onload=' + chr(34) + m + chr(34) + '/>')})",
                              ["data:image/svg+xml"]),
        "md_image_data_png": (f"![pixel](data:image/png;base64,iVBORw0KGgo=) {m}", None),
        "md_image_alt_breakout": (f'![" onerror="{m}](x.png)', None),
        "md_image_foreign_host": (f"![tracker](https://tracker.example/pixel.gif?{m})", ["tracker"]),
        "md_reference_javascript": (f"[click][evil]\n\n[evil]: javascript:{m}", None),
        "md_reference_javascript_angle": (f'[click][evil]\n\n[evil]: <javascript:{m}> "t"', None),
        "md_reference_image_data": (f"![img][evil]\n\n[evil]: data:text/html;base64,{_b64(m)} {m}", None),
        "md_autolink_javascript": (f"<javascript:{m}>", None),
        "md_autolink_data": (f"<data:text/html;base64,{_b64('<script>' + m + '</script>')}>",
                             ["data:text/html;base64"]),
        "md_autolink_vbscript": (f"<VBScript:{m}>", [f"VBScript:{m}"]),
        "md_link_protocol_relative": (f"[far away](//evil.example/x) {m}", None),
        "md_link_escape_tree": (f"[passwd](../../../../../etc/passwd) {m}", ["../../../../../etc/passwd"]),
        "md_link_escape_encoded": (f"[passwd](%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd) {m}", ["../../../../etc/passwd"]),
        "md_link_reserved": (f"[state](../../.memgrove/config.yaml) {m}", [".memgrove/config.yaml"]),
        # -- code, entities, templates -------------------------------------------------------
        "fence_info_breakout": (f'```"><script>{m}</script>\ncode\n```', ["code"]),  # a language name that is no word is dropped
        "nested_fences": (f"````\n```html\n<script>{m}</script>\n```\n````\n\n<script>{m}</script>", None),
        "code_span_script": (f"`<script>{m}</script>`", None),
        "html_entities": (f"&lt;script&gt;{m}&lt;/script&gt;", [f"<script>{m}</script>"]),
        "double_encoded_entities": (f"&amp;lt;script&amp;gt;{m}&amp;lt;/script&amp;gt;", [f"&lt;script&gt;{m}"]),
        "numeric_entities": (f"&#60;script&#62;{m}&#60;/script&#62;", [f"<script>{m}</script>"]),
        "jinja_expression": ("{{ 7*7 }} {{ config }} {{ ''.__class__.__mro__ }} " + m,
                             ["{{ 7*7 }}", "{{ config }}", m]),
        "jinja_statement": ("{% for x in range(3) %}loop{% endfor %} {# hidden #} " + m,
                            ["{% for x in range(3) %}loop{% endfor %}", "{# hidden #}"]),
        "processing_instruction": (f"<?xml version='1.0'?><!DOCTYPE html><script>{m}</script>", None),
        # -- text tricks and size ------------------------------------------------------------
        "unicode_rtl_zero_width": (f"\u202egpj.exe\u202c [pay\u200bpal](https://example.org) \ufeff{m}",
                                   ["\u202egpj.exe", m]),
        "very_long_line": (f"{long_a}<script>{m}</script>", [m]),
        "deep_blockquotes": (">" * 400 + f" <script>{m}</script>", None),
        "many_brackets": ("[" * 5000 + f"<script>{m}</script>" + "]" * 5000, None),
        "deep_emphasis": ("*" * 3000 + f"<script>{m}</script>" + "*" * 3000, None),
        "over_the_size_cut": (f"<script>{m}</script>\n\n" + ("B" * 99 + "\n") * 2_500, None),
    }
    return table[name]


NAMES = [
    "script_plain", "script_mixed_case", "script_split", "script_src_data", "script_unclosed",
    "script_inline_in_paragraph", "script_in_attribute", "script_after_textarea", "script_after_title",
    "script_in_html_comment", "script_in_cdata", "script_in_template", "script_setext_heading",
    "script_in_list_and_quote", "script_in_table",
    "img_onerror", "img_onerror_unquoted", "img_srcset_onerror", "body_onload", "input_autofocus",
    "div_onmouseover", "details_ontoggle", "video_source_onerror", "audio_onerror", "marquee_onstart",
    "svg_onload", "svg_script", "svg_animate_onbegin", "svg_a_javascript", "svg_use_data", "math_mxss",
    "math_href", "noscript_mxss",
    "iframe_srcdoc", "iframe_src_javascript", "object_data", "embed_src", "base_href", "meta_refresh",
    "form_action", "button_formaction", "a_href_javascript_html", "link_stylesheet", "style_expression",
    "style_import", "style_attribute",
    "md_link_javascript", "md_link_javascript_angle", "md_link_javascript_mixed_case",
    "md_link_javascript_tab_entity", "md_link_javascript_newline_entity", "md_link_javascript_colon_entity",
    "md_link_javascript_named_colon", "md_link_javascript_percent", "md_link_javascript_leading_space",
    "md_link_javascript_zero_width", "md_link_javascript_fullwidth", "md_link_vbscript", "md_link_data_html",
    "md_link_file", "md_link_title_breakout", "md_link_href_breakout", "md_image_javascript",
    "md_image_data_svg", "md_image_data_png", "md_image_alt_breakout", "md_image_foreign_host",
    "md_reference_javascript", "md_reference_javascript_angle", "md_reference_image_data",
    "md_autolink_javascript", "md_autolink_data", "md_autolink_vbscript", "md_link_protocol_relative",
    "md_link_escape_tree", "md_link_escape_encoded", "md_link_reserved",
    "fence_info_breakout", "nested_fences", "code_span_script", "html_entities", "double_encoded_entities",
    "numeric_entities", "jinja_expression", "jinja_statement", "processing_instruction",
    "unicode_rtl_zero_width", "very_long_line", "deep_blockquotes", "many_brackets", "deep_emphasis",
    "over_the_size_cut",
]

# Titles break out of an element, of a double- or single-quoted attribute, of a <title>, or
# try a template; they cycle over the pages so that every kind meets every kind of body.
_TITLES = [
    '"><script>{m}</script>',
    "'><img src=x onerror={m}>",
    "</title><script>{m}</script>",
    '" onmouseover="{m}" x="',
    "{{{{ 7*7 }}}} <svg onload={m}>",
    "javascript:{m}",
    "<a href=javascript:{m}>title link</a>",
    "\u202e<iframe srcdoc='<script>{m}</script>'>",
]

# Tags as hostile as titles; a few pages carry them.
_TAGS = [
    ["<script>{m}</script>", "plain"],
    ['" onfocus="{m}" autofocus x="', "{{{{ 7*7 }}}}"],
    ["javascript:{m}", "</li><img src=x onerror={m}>"],
]


def pages() -> list[dict]:
    """The corpus, fresh on every call (a test may change its copy)."""
    out = []
    for i, name in enumerate(NAMES):
        m = mark(name)
        body, visible = _body(name, m)
        title_m, tag_m = mark(name + "-title"), mark(name + "-tag")
        page = {
            "name": name,
            "title": _TITLES[i % len(_TITLES)].format(m=title_m),
            "body": body,
            "tags": [t.format(m=tag_m) for t in _TAGS[i % len(_TAGS)]] if i % 4 == 0 else [],
            "visible": visible if visible is not None else [m],
        }
        out.append(page)
    return out


assert len(NAMES) == len(set(NAMES)), "payload names must be unique"
