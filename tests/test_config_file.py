"""`memgrove init` writes a config.toml listing every setting at its default, commented out."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

from click.testing import CliRunner

from memgrove.cli import cli
from memgrove.config import TABLES, config_template, documented_default
from memgrove.graphs.settings import CurateSettings, QuerySettings, load_curate_settings, load_query_settings
from memgrove.server.settings import ServerSettings, load_server_settings
from memgrove.settings_docs import ENVIRONMENT
from memgrove.tree.replication.settings import ReplicationSettings, load_replication_settings
from memgrove.tree.settings import TreeSettings, load_settings

SETTINGS = {"tree": TreeSettings, "query": QuerySettings, "curate": CurateSettings, "server": ServerSettings,
            "replication": ReplicationSettings}
ROOT = Path(__file__).resolve().parent.parent


def init(tmp_path: Path) -> Path:
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "proj")])
    assert result.exit_code == 0, result.output
    return tmp_path / "proj" / ".memgrove" / "config.toml"


def test_init_writes_every_setting_with_its_default(tmp_path):
    text = init(tmp_path).read_text(encoding="utf-8")
    assert set(TABLES) == set(SETTINGS) and all(TABLES[t][0] is cls for t, cls in SETTINGS.items())
    for table, cls in SETTINGS.items():
        section = text.split(f"[{table}]\n", 1)[1].split("\n[", 1)[0]
        for f in dataclasses.fields(cls):
            line = next((ln for ln in section.splitlines() if ln.startswith(f"# {f.name} = ")), None)
            assert line is not None, f"[{table}] {f.name} is not in config.toml"
            value = tomllib.loads(line[2:].split("  #", 1)[0])[f.name]
            default = documented_default(f.default)       # "auto": semantic_weight, resolved at load
            assert value == default and type(value) is type(default), (table, f.name, value)
            assert len(line.split("  # ", 1)[1]) > 10, f"[{table}] {f.name} says nothing about what it does"


def test_the_written_file_loads_back_as_all_defaults(tmp_path):
    home = init(tmp_path).parent
    assert load_settings(home) == TreeSettings()
    assert load_query_settings(home) == QuerySettings()
    assert load_curate_settings(home) == CurateSettings()
    assert load_server_settings(home) == ServerSettings()
    assert load_replication_settings(home) == ReplicationSettings()


def test_every_line_uncommented_still_loads_as_the_defaults(tmp_path):
    """The commented values are valid TOML of the right type: uncommenting one pins the default."""
    home = tmp_path / ".memgrove"
    home.mkdir()
    setting = re.compile(r"^# (\w+ = .*?)(?:\s+# .*)?$")
    lines = []
    for ln in config_template().splitlines():
        m = setting.match(ln)
        lines.append(m.group(1) if m else ln)
    (home / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # the documented defaults (the fields'): `make test-tantivy` changes only the constructor's engine
    assert load_settings(home) == TreeSettings(**{f.name: f.default for f in dataclasses.fields(TreeSettings)})
    assert load_query_settings(home) == QuerySettings()
    assert load_curate_settings(home) == CurateSettings()


def test_every_line_says_what_its_setting_does_in_the_words_of_its_definition():
    """The template's sentences are the settings' own (``setting(default, doc, section=)``), as in docs/settings.md."""
    text = " ".join(ln.split("  # ", 1)[1] for ln in config_template().splitlines() if "  # " in ln)
    for table, cls in SETTINGS.items():
        for f in dataclasses.fields(cls):
            assert " ".join(f.metadata["doc"].split()) in " ".join(text.split()), (table, f.name)


def test_init_keeps_an_existing_config(tmp_path):
    cfg = init(tmp_path)
    cfg.write_text("[tree]\ntitle_boost = 5.0\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "proj")])
    assert result.exit_code == 0 and "kept" in result.output
    assert cfg.read_text(encoding="utf-8") == "[tree]\ntitle_boost = 5.0\n"


def readme_rows() -> list[tuple[str, str]]:
    """``(setting, default)`` of each row of the README's settings table, as written."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| `")]
    assert rows, "the README's Configuration has no table"
    return [tuple(c.strip() for c in row.strip("|").split("|")[:2]) for row in rows]  # type: ignore[misc]


def test_the_readme_shows_real_settings_with_their_defaults():
    """The README names a few settings; each exists, in the table it names, at the default it shows."""
    environment = {v.name for v in ENVIRONMENT}
    for name, default in readme_rows():
        m = re.fullmatch(r"`(?:\[(\w+)\] )?(\w+)`", name)
        assert m, f"a README row names one setting: {name}"
        table, field = m.groups()
        if table is None:
            assert field in environment, f"README: {field} is not an environment variable memgrove reads"
            continue
        fields = {f.name: f for f in dataclasses.fields(SETTINGS[table])}
        assert field in fields, f"README: [{table}] has no setting {field}"
        shown = tomllib.loads(f"x = {default.strip('`')}")["x"]
        assert shown == documented_default(fields[field].default), (table, field, default)
