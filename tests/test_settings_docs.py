"""docs/settings.md is generated from the settings' own definitions, and says what the code does.

Every setting is a ``setting(default, "sentence", section=...)`` field (tree/base/setting_field.py);
memgrove/settings_docs.py renders them, and the environment variables, into docs/settings.md.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from memgrove.config import TABLES
from memgrove.settings_docs import COMMAND, ENVIRONMENT, INTROS, render, rows
from memgrove.tree.base.setting_field import SECTIONS

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "settings.md"


def test_the_reference_is_generated_from_the_definitions():
    assert REFERENCE.read_text(encoding="utf-8") == render(), (
        f"docs/settings.md differs from the settings' definitions: run `make docs` ({COMMAND})")


def test_every_setting_has_one_sentence_and_a_section():
    for table, (cls, _) in TABLES.items():
        for f in dataclasses.fields(cls):
            where = f"[{table}] {f.name}"
            assert set(f.metadata) == {"doc", "section"}, f"{where}: define it with setting(default, doc, section=)"
            doc = f.metadata["doc"]
            assert f.metadata["section"] in SECTIONS, where
            assert doc[0].isupper() or doc[0] in "\"'`", f"{where}: a sentence starts with a capital"
            assert doc.endswith(".") and "\n" not in doc and "|" not in doc, f"{where}: one sentence, one line"
            assert not re.search(r"[.!?] [A-Z]", doc.replace("e.g. ", "")), f"{where}: one sentence, not more"
            assert len(doc) <= 250, f"{where}: {len(doc)} characters; the details belong in docs/"


def test_every_setting_and_environment_variable_is_listed_once():
    listed = [(r.where, r.name) for r in rows()]
    expected = [("environment", v.name) for v in ENVIRONMENT]
    expected += [(f"[{t}]", f.name) for t, (cls, _) in TABLES.items() for f in dataclasses.fields(cls)]
    assert listed == expected and len(set(listed)) == len(listed)
    text = render()
    for where, name in listed:
        assert f"| `{name}` | {where} |" in text, (where, name)


def test_every_section_has_an_introduction_and_settings():
    assert list(INTROS) == list(SECTIONS)
    assert {r.section for r in rows()} == set(SECTIONS)
    assert {v.section for v in ENVIRONMENT} <= set(SECTIONS)


def test_the_ranking_weights_are_marked_tuned_with_their_measurements():
    ranking = render().split(f"## {SECTIONS['ranking']}\n", 1)[1].split("\n## ", 1)[0]
    assert "Tuned" in SECTIONS["ranking"] or "tuned" in SECTIONS["ranking"]
    assert "**Tuned" in ranking
    for measured in ("../benchmarks/results/heldout.md", "../benchmarks/README.md#heldout"):
        assert f"]({measured})" in ranking, measured
    named = {r.name for r in rows() if r.section == "ranking"}
    # the steps benchmarks/ablation.py switches off, each measured on the held-out halves
    assert {"assistant_weight", "standing_rules", "standing_weight", "part_words", "folder_weight", "near_weight",
            "link_weight", "date_weight", "when_weight", "profile", "ask_penalty", "gap_ratio",
            "cover_weight"} <= named


def test_every_environment_variable_the_code_reads_is_listed():
    """A ``MEMGROVE_*`` or ``OPENAI_*`` name in the package's code, or read by the Docker image's entry
    point, is one a user may set (the tests' own, ``MEMGROVE_TEST_*``, live in tests/)."""
    read = set()
    for folder in ("tree", "tools", "graphs", "memgrove"):
        for src in (ROOT / folder).rglob("*.py"):
            read |= set(re.findall(r"""["']((?:MEMGROVE|OPENAI)_[A-Z_]+)["']""", src.read_text(encoding="utf-8")))
    entrypoint = (ROOT / "deploy" / "entrypoint.sh").read_text(encoding="utf-8")
    read |= set(re.findall(r"\$\{(MEMGROVE_[A-Z_]+)", entrypoint))
    assert {"MEMGROVE_HOME", "MEMGROVE_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"} <= read
    listed = {v.name for v in ENVIRONMENT}
    assert sorted(read - listed) == [], "read by the code, missing from memgrove/settings_docs.py's ENVIRONMENT"
    assert sorted(listed - read) == [], "in ENVIRONMENT, but no code reads it"
