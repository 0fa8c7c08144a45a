"""The verbatim curator: conversations, markdown files and text become entries
with provenance, placed by source and session, deterministically."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memgrove import InvalidInput, Memory
from memgrove.tree.inputs import curator
from memgrove.tree.entries.entry import parse
from memgrove.tree.text.searchable import searchable

SAMPLE = Path(__file__).resolve().parents[1] / "memgrove" / "data" / "sample"


def conversation() -> dict:
    return {
        "id": "conv-26",
        "messages": [
            {"id": "D1:1", "speaker": "Ana", "text": "I adopted a greyhound named Pixel. She is three.",
             "time": "2023-05-08T13:56:00Z"},
            {"id": "D1:2", "speaker": "Ben", "text": "Congratulations! Does Pixel like long walks?",
             "time": "2023-05-08T13:57:00Z"},
            {"id": "D1:3", "speaker": "Ana", "text": "She prefers short sprints in the park.",
             "time": "2023-05-08T13:58:00Z"},
            {"id": "D2:1", "speaker": "Ben", "text": "How is the marathon training going?",
             "time": "2023-06-01T08:00:00Z"},
            {"id": "D2:2", "speaker": "Ana", "text": "Slowly. My knee hurts after twenty kilometres.",
             "time": "2023-06-01T08:05:00Z"},
        ],
    }


def entry_files(mem: Memory) -> dict[str, str]:
    root = mem.home / "tree"
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.md"))}


class Ticking:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=61)
        return self.now


# -- conversations ------------------------------------------------------------------

def test_conversation_becomes_entries_with_provenance(mem) -> None:
    results = mem.ingest(conversation=conversation())
    assert [r.status for r in results] == ["added"] * 5
    assert [r.path for r in results] == [
        "conversations/conv_26/session_2023_05_08/d1_1.md",
        "conversations/conv_26/session_2023_05_08/d1_2.md",
        "conversations/conv_26/session_2023_05_08/d1_3.md",
        "conversations/conv_26/session_2023_06_01/d2_1.md",
        "conversations/conv_26/session_2023_06_01/d2_2.md",
    ]
    e = mem.read("conversations/conv_26/session_2023_05_08/d1_1.md")
    assert e.sources == [{"kind": "conversation", "ref": "conv-26#D1:1", "at": "2023-05-08T13:56:00Z"}]
    assert e.title == "Ana, 8 May 2023"           # the day; the exact time stays in the sources
    assert e.summary == "I adopted a greyhound named Pixel."
    assert e.tags == ["Ana"]
    # the exact words; speaker and time once, in the title; nothing said twice
    assert e.sections == {"Narrative": "I adopted a greyhound named Pixel. She is three."}
    text = mem.tree.read_text("conversations/conv_26/session_2023_05_08/d1_1.md")
    assert text.split("---\n", 2)[2] == ("# Ana, 8 May 2023\n\n"
                                         "I adopted a greyhound named Pixel. She is three.\n")
    assert all(r.id for r in results)
    assert {r.actor for r in mem.history()} == {"verbatim-curator"}


def test_a_window_of_messages_names_each_speaker_and_a_different_day(mem) -> None:
    conv = conversation()
    for m in conv["messages"]:
        m["session"] = "s1"
    conv["messages"][2]["time"] = "2023-05-09T07:00:00Z"     # the next morning, same session
    mem.ingest(conversation=conv, window=3)
    e = mem.read("conversations/conv_26/s1/d1_1.md")
    assert e.title == "Ana and Ben, 8 May 2023"
    assert e.sections["Narrative"].split("\n\n") == [
        "**Ana**: I adopted a greyhound named Pixel. She is three.",
        "**Ben**: Congratulations! Does Pixel like long walks?",              # same day: said once, in the title
        "**Ana** (9 May 2023): She prefers short sprints in the park."]
    assert [s["ref"] for s in e.sources] == ["conv-26#D1:1", "conv-26#D1:2", "conv-26#D1:3"]
    assert [s["at"] for s in e.sources][2] == "2023-05-09T07:00:00Z"


@pytest.mark.parametrize("when, day", [
    ("1:56 pm on 8 May, 2023", "8 May 2023"), ("2023-05-08T13:56:00Z", "8 May 2023"), ("2023-05-08", "8 May 2023"),
    ("May 8, 2023", "8 May 2023"), ("Sep 3rd 2024", "3 September 2024"), ("the 1st of March 2022", "1 March 2022"),
    ("31 February, 2023", None), ("yesterday", None), ("8 May", None), ("", None), ("Monday 12 Smarch 2023", None)])
def test_day_of_a_message_time(when, day) -> None:
    assert curator.day_of(when) == day


def test_a_time_that_names_no_date_is_refused_naming_the_message(mem) -> None:
    # "yesterday" of when? A stored export is curated long after it was written: no silent guess
    conv = {"id": "c", "messages": [{"id": "0", "speaker": "Ben", "text": "ok", "time": "2023-05-08"},
                                    {"id": "1", "speaker": "Ana", "text": "hi", "time": "yesterday evening"}]}
    with pytest.raises(InvalidInput, match=r"conversation c: message 2 has a time that names no date "
                                           r"\(time 'yesterday evening'\)"):
        mem.ingest(conversation=conv)
    assert mem.count() == 0


def test_a_reply_keeps_the_question_it_answers_as_keywords(mem) -> None:
    mem.ingest(conversation=conversation())
    s1, s2 = "conversations/conv_26/session_2023_05_08/", "conversations/conv_26/session_2023_06_01/"
    # D1:3 answers "Does Pixel like long walks?"; D1:2 follows a message that asks nothing;
    # D2:1 opens a session, so what came before it in D1 is not what it answers
    assert mem.read(s1 + "d1_3.md").keywords == ["does", "pixel", "like", "long", "walks"]
    assert mem.read(s1 + "d1_2.md").keywords == []
    assert mem.read(s2 + "d2_1.md").keywords == []
    assert mem.read(s2 + "d2_2.md").keywords == ["how", "the", "marathon", "training", "going"]
    # the keywords are searchable, not text: the answer that shares no word with the question is found
    body = mem.tree.read_text(s2 + "d2_2.md").split("---\n", 2)[2]
    assert "marathon" not in body
    hits = mem.search("How is Ana's marathon training going?")
    assert {h.path for h in hits[:2]} == {s2 + "d2_1.md", s2 + "d2_2.md"}
    answer = next(h for h in hits if h.path == s2 + "d2_2.md")
    assert {"marathon", "train"} <= set(answer.matched)        # matched through its keywords


def test_question_words_take_only_the_questions() -> None:
    assert curator.question_words("Wow, great! How did you get into watercolor painting? I love it.") == [
        "how", "did", "you", "get", "into", "watercolor", "painting"]
    assert curator.question_words("No question here.") == []
    assert len(curator.question_words("Why " + " ".join(f"w{i}x" for i in range(100)) + "?")) == 40


def test_messages_link_to_the_next_one_of_their_session(mem) -> None:
    mem.ingest(conversation=conversation())
    s1 = "conversations/conv_26/session_2023_05_08/"
    assert mem.read(s1 + "d1_1.md").related == [s1 + "d1_2.md"]
    assert mem.read(s1 + "d1_3.md").related == []                      # the last of its session
    assert mem.tree.links(s1 + "d1_2.md") == ([s1 + "d1_3.md"], [s1 + "d1_1.md"])


def test_conversation_context_files(mem) -> None:
    mem.ingest(conversation=conversation())
    root = mem.home / "tree"
    conv = parse((root / "conversations/conv_26/context.md").read_text())
    assert conv.sections["Overview"] == "Conversation conv-26 between Ana, Ben."
    session = parse((root / "conversations/conv_26/session_2023_05_08/context.md").read_text())
    assert "starting 2023-05-08T13:56:00Z" in session.sections["Overview"]
    assert "(d1_1.md)" in session.sections["Contents"] and "(d1_3.md)" in session.sections["Contents"]


def test_conversation_is_searchable_with_sources(mem) -> None:
    mem.ingest(conversation=conversation())
    hits = mem.search("greyhound Pixel")
    assert hits[0].path == "conversations/conv_26/session_2023_05_08/d1_1.md"
    assert hits[0].sources[0]["ref"] == "conv-26#D1:1"


def test_session_field_wins_over_date(mem) -> None:
    conv = conversation()
    for m in conv["messages"][:2]:
        m["session"] = "Session 7"
    del conv["messages"][3]["time"]
    conv["messages"][3]["session"] = None
    results = mem.ingest(conversation=conv)
    assert [r.path.split("/")[2] for r in results] == [
        "session_7", "session_7", "session_2023_05_08", "session_1", "session_2023_06_01"]


def test_reingesting_a_conversation_changes_nothing(tmp_path) -> None:
    with Memory.open(tmp_path / "i", create=True, durable=False, clock=Ticking()) as m:
        first = m.ingest(conversation=conversation())
        files = entry_files(m)
        journal = (m.home / "journal/journal.jsonl").read_bytes()
        fp = m.fingerprint()
        signals = m.tree.signals.get_many([r.path for r in first])
        again = m.ingest(conversation=conversation())
        assert [r.status for r in again] == ["unchanged"] * 5
        assert [r.path for r in again] == [r.path for r in first]
        assert entry_files(m) == files
        assert (m.home / "journal/journal.jsonl").read_bytes() == journal
        assert m.fingerprint() == fp
        assert m.tree.signals.get_many([r.path for r in first]) == signals
        # a new message in the same conversation adds one entry, and the session's last one links to it
        conv = conversation()
        conv["messages"].append({"id": "D2:3", "speaker": "Ben", "text": "Rest it for a week.",
                                 "time": "2023-06-01T08:06:00Z"})
        third = m.ingest(conversation=conv)
        assert [r.status for r in third] == ["unchanged"] * 4 + ["updated", "added"]
        assert m.tree.links("conversations/conv_26/session_2023_06_01/d2_2.md")[0] == [
            "conversations/conv_26/session_2023_06_01/d2_3.md"]


def test_conversation_from_json_file(mem, tmp_path) -> None:
    f = tmp_path / "conv.json"
    f.write_text(json.dumps(conversation()))
    assert len(mem.ingest(conversation=f)) == 5
    assert len(mem.ingest(conversation=str(f))) == 5


def test_sample_conversation(mem) -> None:
    results = mem.ingest(conversation=SAMPLE / "conversation.json")
    conv = json.loads((SAMPLE / "conversation.json").read_text())
    assert len(results) == len(conv["messages"])
    sessions = {r.path.split("/")[2] for r in results}
    assert sessions == {"session_1", "session_2", "session_3"}
    assert mem.doctor().ok


@pytest.mark.parametrize("window", [2, 3, 10])
def test_window_groups_messages_within_a_session(mem, window) -> None:
    results = mem.ingest(conversation=conversation(), window=window)
    first_session = 3
    expected = -(-first_session // window) + -(-2 // window)
    assert len(results) == expected
    first = mem.read(results[0].path)
    n = min(window, first_session)
    assert [s["ref"] for s in first.sources] == [f"conv-26#D1:{i}" for i in range(1, n + 1)]
    assert "**Ben**" in first.sections["Narrative"]
    assert first.tags == ["Ana", "Ben"]
    # groups never cross a session
    for r in results:
        refs = [s["ref"] for s in mem.read(r.path).sources]
        assert len({ref.split("#")[1].split(":")[0] for ref in refs}) == 1


def test_window_must_be_positive() -> None:
    with pytest.raises(InvalidInput, match="window"):
        curator.ops_from_conversation(conversation(), window=0)


def test_curator_is_deterministic() -> None:
    assert curator.ops_from_conversation(conversation()) == curator.ops_from_conversation(conversation())


# -- files --------------------------------------------------------------------------

MARKDOWN = """\
# Deploy Guide

Intro paragraph about deploys.

## Build

Run the build.

```bash
# this is a comment, not a heading
## neither is this
make build
```

After the code block.

## Ship It

Ship on tuesdays.

### Rollback

Use the previous image.
"""


def test_markdown_file_split_by_headings(mem, tmp_path) -> None:
    f = tmp_path / "Deploy Guide.md"
    f.write_text(MARKDOWN)
    results = mem.ingest(files=[f])
    assert [r.path for r in results] == [
        "files/deploy_guide/deploy_guide.md",
        "files/deploy_guide/build.md",
        "files/deploy_guide/ship_it.md",
        "files/deploy_guide/rollback.md",
    ]
    intro = mem.read("files/deploy_guide/deploy_guide.md")
    assert intro.title == "Deploy Guide"
    assert intro.sections["Narrative"] == "Intro paragraph about deploys."
    build = mem.read("files/deploy_guide/build.md")
    assert build.title == "Deploy Guide › Build"          # where it stands: the page, then its headings
    # the fenced block stays whole, with its '#' lines, in the Build entry
    assert "```bash\n# this is a comment, not a heading\n## neither is this\nmake build\n```" \
        in build.sections["Narrative"]
    assert "After the code block." in build.sections["Narrative"]
    assert build.sources == [{"kind": "file", "ref": "Deploy Guide.md#build", "at": build.sources[0]["at"]}]
    assert build.sources[0]["at"].endswith("Z")
    assert mem.read("files/deploy_guide/rollback.md").title == "Deploy Guide › Ship It › Rollback"


def test_markdown_file_without_headings_and_duplicate_headings(mem, tmp_path) -> None:
    f = tmp_path / "notes.md"
    f.write_text("Just a paragraph.\n\n## Same\n\none\n\n## Same\n\ntwo\n")
    results = mem.ingest(files=[f])
    assert [r.path for r in results] == ["files/notes/overview.md", "files/notes/same.md", "files/notes/same_2.md"]


def test_many_equal_headings_get_distinct_names_beside_a_literal_numbered_one(tmp_path) -> None:
    f = tmp_path / "log.md"
    f.write_text("## Same\na\n## Same_2\nb\n" + "## Same\nx\n" * 3000)
    ops = curator.ops_from_file(f, max_bytes=10**7, now=datetime.now(timezone.utc), root=tmp_path)
    names = [o["path"].rsplit("/", 1)[1] for o in ops]
    assert names[:4] == ["same.md", "same_2.md", "same_3.md", "same_4.md"]
    assert len(set(names)) == len(names) == 3002


@pytest.mark.parametrize("blob", ["a" * 100_000, "word " * 6_000, "data:image/png;base64," + "QUJD" * 30_000])
def test_every_word_of_a_long_text_is_searchable(mem, tmp_path, blob) -> None:
    # only an entry's first content_cap characters are indexed: a part longer than that was
    # stored and its tail never found (a marker after a 100,000-character run); embedded base64
    # stays whole in its entry and is skipped by the index
    for results in (mem.ingest(text=blob + "\n\nmarker zqxmarkerone"),
                    mem.ingest(files=[_write(tmp_path / "long.md", "# Doc\n## Big\n" + blob + " marker zqxmarkertwo\n")]),
                    mem.ingest(files=[_write(tmp_path / "long.txt", blob + "\nmarker zqxmarkerthree\n")])):
        assert all(len(searchable(mem.read(r.path).body)) <= curator.PART_CHARS for r in results)
    for marker in ("zqxmarkerone", "zqxmarkertwo", "zqxmarkerthree"):
        assert mem.search(marker), marker


def _write(path, text: str):
    path.write_text(text)
    return path


def test_sample_notes(mem) -> None:
    notes = sorted((SAMPLE / "notes").glob("*.md"))
    results = mem.ingest(files=notes)
    assert {r.path.split("/")[1] for r in results} == {n.stem for n in notes}
    assert mem.search("refresh token reuse")[0].path.startswith("files/auth_design/")
    again = mem.ingest(files=notes)
    assert {r.status for r in again} == {"unchanged"}


def test_text_file_in_parts(mem, tmp_path) -> None:
    paras = [f"Paragraph {i} " + " ".join(f"word{i}_{j}" for j in range(60)) for i in range(8)]
    f = tmp_path / "log.txt"
    f.write_text("\n\n".join(paras))
    results = mem.ingest(files=[f])
    assert len(results) > 1
    assert all(r.path.startswith("files/log/part_") for r in results)
    seen = []
    for r in results:
        e = mem.read(r.path)
        text = e.sections["Narrative"]
        assert len(text.split()) <= curator.CHUNK_WORDS
        seen += [p for p in text.split("\n\n")]
        assert e.sources[0]["ref"].startswith("log.txt#p")
    assert seen == paras   # verbatim, in order, nothing lost


def test_text_in_chunks(mem) -> None:
    code = "```\n" + "\n\n".join(f"line {i}" for i in range(300)) + "\n```"
    text = "\n\n".join(["First words of the note. " + "alpha " * 150, "beta " * 150, code, "gamma " * 10])
    results = mem.ingest(text=text)
    day = results[0].path.split("/")[1]
    assert [r.path for r in results] == [f"notes/{day}/first_words_of_the_note.md"] + [
        f"notes/{day}/first_words_of_the_note_part_{i}.md" for i in range(2, 5)]
    bodies = [mem.read(r.path).sections["Narrative"] for r in results]
    assert bodies[2] == code             # a fenced block is never split, even when long
    assert bodies[0].startswith("First words of the note.")
    assert mem.read(results[0].path).sources[0]["kind"] == "text"


def test_ingest_needs_something(mem) -> None:
    with pytest.raises(InvalidInput, match="nothing to curate"):
        mem.ingest()
    with pytest.raises(InvalidInput, match="empty"):
        mem.ingest(text="   \n ")


def test_ingest_progress_and_batches(mem) -> None:
    conv = {"id": "big", "messages": [{"id": str(i), "speaker": "S", "text": f"message number {i}",
                                        "time": "2024-01-01T00:00:00Z"} for i in range(25)]}
    seen: list[tuple[int, int]] = []
    results = mem.ingest(conversation=conv, batch_size=10, progress=lambda d, t: seen.append((d, t)))
    assert len(results) == 25
    assert seen == [(10, 25), (20, 25), (25, 25)]
    assert len(mem.history(limit=None)) == 25


# -- issue 14: sources keep the file's folder; notes share a folder per day -----------------

def test_a_files_source_keeps_its_folder(tmp_path, monkeypatch) -> None:
    from click.testing import CliRunner

    from memgrove.cli import cli

    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "alpha.md").write_text("# Alpha\n\nThe alpha service runs on port 8001.\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "alpha.md").write_text("# Alpha\n\nThe alpha docs live in the wiki.\n")
    outside = tmp_path.parent / f"{tmp_path.name}_outside.md"
    outside.write_text("# Beta\n\nBeta is outside the project.\n")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["init"]).exit_code == 0
    out = runner.invoke(cli, ["curate", "-f", "notes/alpha.md", "--json"])
    assert out.exit_code == 0, out.output
    monkeypatch.chdir(tmp_path / "docs")            # from a subfolder: still named from the project
    assert runner.invoke(cli, ["curate", "-f", "alpha.md", "-f", str(outside)]).exit_code == 0
    with Memory.open(tmp_path) as mem:
        refs = sorted(s["ref"] for p in mem.tree.entries_under("files") for s in mem.read(p).sources)
    assert refs == sorted(["notes/alpha.md#alpha", "docs/alpha.md#alpha", f"{outside.resolve().as_posix()}#beta"])


def test_notes_of_one_day_share_a_folder_and_never_overwrite_each_other(mem) -> None:
    notes = [f"Note {i}: the build cache lives on volume {i}." for i in range(5)] + \
            ["Note 0: the build cache moved to volume 9."]        # opens like the first: its own entry
    paths = [r.path for n in notes for r in mem.ingest(text=n)]
    folders = {p.rsplit("/", 1)[0] for p in paths}
    assert len(folders) == 1 and re.fullmatch(r"notes/\d{4}_\d{2}_\d{2}", folders.pop())
    assert len(set(paths)) == 6
    for note, path in zip(notes, paths):
        assert mem.read(path).sections["Narrative"] == note
    assert len(mem.tree.entries_under("notes")) == 6


def test_a_note_curated_again_another_day_stays_where_it_is(mem, monkeypatch) -> None:
    import memgrove.memory as memory_module

    class Later(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2031, 1, 2, 12, 0, tzinfo=timezone.utc)

    [first] = mem.ingest(text="The release train leaves every other Tuesday.")
    monkeypatch.setattr(memory_module, "datetime", Later)
    [again] = mem.ingest(text="The release train leaves every other Tuesday.")
    assert (again.status, again.path) == ("unchanged", first.path)
    [other] = mem.ingest(text="The release train skips December.")
    assert other.path.startswith("notes/2031_01_02/")
