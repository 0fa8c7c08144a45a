"""The answering sentence (issue 44): the top entry's sentence leads unless another is clearly
better, an answer that the evidence does not give says so, a table row is quoted with its header,
and a documentation page is read as one (code, defaults, lists, admonitions).
"""

from __future__ import annotations

from memgrove.graphs import answer_pick, answer_type
from memgrove.graphs.answer_sentences import CODE, ROW, quotable, row_text
from memgrove.tree.text.analysis import terms


def answer(question: str, bodies: list[str], contexts: list[str] = (), said: list[str] = ()) -> str:
    ts = terms(question)
    return answer_pick.answer_text(question, ts, {t: 1.0 for t in ts}, bodies, terms, list(contexts), list(said))


# -- tables ------------------------------------------------------------------------------------

FLAGS = """Flags of the fetch command:

| Flag | Default | Type | Description |
|------|---------|------|-------------|
| fetch-retries | 2 | Number | How many times to retry a failed request. |
| fetch-timeout | 300000 | Number | Milliseconds before a request fails. |
"""


def test_a_row_is_quoted_with_its_header_never_the_header_alone():
    rows = [q for q in quotable(FLAGS) if q.kind == ROW]
    assert [q.shown for q in rows] == [
        "fetch-retries — Default: 2 · Type: Number · Description: How many times to retry a failed request.",
        "fetch-timeout — Default: 300000 · Type: Number · Description: Milliseconds before a request fails."]
    got = answer("What is the default of fetch-retries?", [FLAGS])
    assert got.startswith("fetch-retries — Default: 2"), got
    assert "| Flag |" not in got


def test_a_header_or_separator_never_leads():
    # a table without rows, with one-dash separators, without outer pipes: no header line is quoted
    for table in ("| Flag | Default |\n| --- | --- |\n", "| Flag | Default |\n|-|-|\n| retries | 2 |\n",
                  "Flag | Default\n--- | ---\nretries | 2\n"):
        shown = [q.shown for q in quotable(table)]
        assert not any("Flag" in s and "Default" in s and "—" not in s for s in shown), shown
        assert not any(set(s) <= set("|-: ") for s in shown), shown
    assert [q.shown for q in quotable("Flag | Default\n--- | ---\nretries | 2\n")] == ["retries — Default: 2"]
    assert row_text(["Setting", "Value"], ["`pool_size`", ""]) == "`pool_size`"


# -- the top entry as a prior ---------------------------------------------------------------------

def test_the_top_entry_leads_unless_another_is_clearly_better():
    q = "What is the maximum length of a package name?"
    top = "Rules for the name field. The name must be less than or equal to 214 characters."
    third = "The maximum length of a package name in the registry index is checked when a package name is published."
    # the third entry's sentence shares more of the question's words, no more than a little
    got = answer(q, [top, "Unrelated text about scopes.", third])
    assert "214 characters" in got, got
    # a sentence that answers (holds the kind asked) where the top entry's does not is clearly better
    got = answer("How long do refresh tokens live?",
                 ["Refresh tokens are rotated on every use and refresh tokens live in the refresh_tokens table.",
                  "Refresh tokens expire after 30 days of inactivity."])
    assert "30 days" in got, got


# -- when the evidence does not answer ------------------------------------------------------------

def test_an_answer_the_evidence_does_not_give_says_so():
    got = answer("What is the default timeout of an HTTPS request?",
                 ["When called, requests that the event loop not exit so long as the Timeout is active."])
    assert got.startswith("No entry states the default timeout of an HTTPS request; the closest: When called"), got
    # a question naming no kind: too little of it matched
    got = answer("How do we rotate the database encryption keys in staging?",
                 ["The staging cluster is reset every Sunday and its dashboards are public."])
    assert got.startswith(answer_pick.NOT_STATED), got
    # what answers is quoted as it is
    assert answer("How long was the billing API down?", ["The billing API was down for 22 minutes."]) \
        == "The billing API was down for 22 minutes."


def test_not_stated_names_what_was_asked():
    assert answer_pick.not_stated("What is the default port of the metrics server?") \
        == "No entry states the default port of the metrics server"
    assert answer_pick.not_stated("How long was it down?") == 'No entry states an answer to "How long was it down?"'


# -- documentation read as documentation ----------------------------------------------------------

def test_a_default_is_read_with_the_item_it_belongs_to():
    page = ("* `options` {Object}\n"
            "  * `historySize` {number} Maximum number of history lines retained. To disable the history set\n"
            "    this value to `0`.\n    **Default:** `30`.\n"
            "  * `tabSize` {integer} The number of spaces a tab is equal to (minimum 1).\n    **Default:** `8`.\n")
    got = answer("What is the default historySize?", [page])
    assert got.startswith("`historySize` {number} Maximum number of history lines retained. … **Default:** `30`."), got
    assert "`8`" in answer("What is the default tabSize?", [page])


def test_commands_in_code_blocks_are_quoted_with_what_introduces_them():
    page = ("To install an alternative Python implementation, e.g., PyPy:\n\n```console\n$ uv python install pypy@3.10\n"
            "Installed 1 version in 2.1s\n```\n\nSee the documentation for more details.\n")
    code = [q for q in quotable(page) if q.kind == CODE]
    assert [q.scored for q in code] == ["uv python install pypy@3.10"]     # no prompt, no output
    got = answer("How do I install PyPy 3.10 with uv?", [page])
    assert got == "To install an alternative Python implementation, e.g., PyPy: `uv python install pypy@3.10`", got


def test_site_markup_comments_and_link_definitions_are_no_sentences_and_admonitions_are_text():
    page = ("<!-- YAML\nadded: v0.9.3\n-->\n\nProvides the platform-specific path delimiter:\n\n"
            "* `;` for Windows\n* `:` for POSIX\n\n{{% note %}}\nSee the FAQ.\n{{% /note %}}\n\n!!! note\n\n"
            "    The `dependencies` field must be provided even if empty.\n\n[Yarn]: https://yarnpkg.com\n")
    shown = [q.shown for q in quotable(page)]
    assert not any("YAML" in s or "v0.9.3" in s or "yarnpkg" in s or "{{" in s or "!!!" in s for s in shown), shown
    assert "The `dependencies` field must be provided even if empty." in shown
    got = answer("What is the path delimiter on Windows?", [page])
    assert got == "Provides the platform-specific path delimiter: `;` for Windows", got


# -- kinds of answers --------------------------------------------------------------------------------

def test_yes_no_default_command_and_identifier_questions():
    assert answer_type.asked("Should Poetry be installed into the project's environment?") == answer_type.YES_NO
    assert answer_type.asked("When I run a script in a project, are its dependencies installed?") == answer_type.YES_NO
    assert answer_type.asked("When did Leo adopt the cat?") == answer_type.TIME
    assert answer_type.asked("What is the default tabSize?") == answer_type.DEFAULT
    assert answer_type.asked("How do I install Poetry with pipx?") == answer_type.COMMAND
    assert answer_type.asked("Which environment variable moves the cache?") == answer_type.IDENTIFIER
    assert answer_type.holds(answer_type.DEFAULT, "Defaults to `'SIGUSR2'`.", "Which signal, by default?")
    assert answer_type.holds(answer_type.PLACE, "macOS: `~/Library/Caches/pypoetry`", "Where is the cache on macOS?")
    assert answer_type.holds(answer_type.YES_NO, "It should in no case be installed there.", "Should it be?")


def test_a_code_kind_asked_of_a_chat_asks_for_something_else():
    # "class" asks for a setting's name only where there is code to name one
    got = answer("What class is Sam taking to learn how to make healthier meals?",
                 ["I'm taking a cooking class to learn how to make healthier meals, it's every Tuesday."],
                 said=["Sam, 3 May 2023"])
    assert got.startswith("I'm taking a cooking class"), got


def test_hostile_text_is_read_in_bounded_time():
    # an unclosed code span, a 2,000-cell row, an unclosed comment or fence, a 5,000-letter tab label:
    # each read as text (no quadratic pattern); the bound is generous, a regression would take minutes
    import time

    hostile = ["`" + "a " * 4000, "default " * 2000, "| a " * 2000 + "\n|-|-|\n" + "| b " * 2000,
               "<!-- " + "x " * 4000, "```\n" + "$ x\n" * 3000, '=== "' + "x" * 5000, "`/" + "a/" * 4000]
    started = time.monotonic()
    for text in hostile:
        for q in ("How do I run it?", "What is the default port?", "Where is it?", "Is it safe?"):
            assert isinstance(answer(q, [text[:8000]] * 5), str)
    assert time.monotonic() - started < 20


def test_a_heading_inside_an_entry_says_what_its_sentences_are_about():
    # a long section keeps its sub-headings in one entry: "Default: 3" is the default of the heading above it
    chunk = ("#### `cache-max`\n\n* Default: 1000\n* Type: Number\n\nThe most entries the cache keeps.\n\n"
             "#### `sync-retries`\n\n* Default: 3\n* Type: Number\n\nHow many times a failed sync is retried.\n")
    got = answer("What is the default value of sync-retries?", [chunk])
    assert got.startswith("`sync-retries` — Default: 3") and "1000" not in got, got


def test_a_value_of_the_kind_asked_about_something_else_is_no_answer():
    # "Default: 15" is a default, but of maxsockets: the question asks about the cache folder
    limits = "| Setting | Default | Type |\n|---|---|---|\n| maxsockets | 15 | Number |\n| noproxy | none | String |\n"
    got = answer("What is the default cache folder?", [limits], ["Config › Limits files config limits"])
    assert got.startswith("No entry states the default cache folder; the closest: "), got
    # the same row answers when the question names its subject
    assert answer("What is the default of maxsockets?", [limits], ["Config › Limits files config limits"]) \
        == "maxsockets — Default: 15 · Type: Number"
