"""``.memgrove/config.toml``: every setting, its default and what it does.

The settings are the fields of five dataclasses, one per table:

    [tree]    memgrove.tree.settings.TreeSettings     ranking, index, writes
    [query]   memgrove.graphs.settings.QuerySettings  the five tiers' thresholds, the cache
    [curate]  memgrove.graphs.settings.CurateSettings the LLM curator
    [server]  memgrove.server.settings.ServerSettings `memgrove serve`
    [replication]  memgrove.tree.replication.settings.ReplicationSettings  git replication

``config_template()`` renders them as a TOML file with every setting commented
out at its default and its sentence (``setting``, tree/base/setting_field.py),
generated from the dataclasses so it cannot drift from them (docs/settings.md is
generated from them too: memgrove/settings_docs.py); ``memgrove init`` writes it
(``write_config``). A file left as written loads as all defaults, so a default
changed in a later release still applies; uncomment a line to pin a value.
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any

from memgrove.graphs.settings import CurateSettings, QuerySettings
from memgrove.server.settings import ServerSettings
from memgrove.tree.base.fsio import atomic_write
from memgrove.tree.base.setting_field import doc_of
from memgrove.tree.replication.settings import ReplicationSettings
from memgrove.tree.settings import AUTO, TreeSettings

CONFIG_NAME = "config.toml"
_COLUMN = 34      # where the descriptions start
_WIDTH = 100

TABLES: dict[str, tuple[type, str]] = {
    "tree": (TreeSettings, "Search, ranking, the index, writes and hygiene (memgrove.tree); the ranking weights "
                           "are tuned: measure before changing them (docs/settings.md)."),
    "query": (QuerySettings, "The 5-tier query pipeline: when each tier answers, the LLM client, "
                             "the answer cache."),
    "curate": (CurateSettings, "The LLM curator (`memgrove curate` / `Memory.learn` with a model "
                               "configured)."),
    "server": (ServerSettings, "`memgrove serve` (its --host and --port options override these, "
                               "--project adds to projects)."),
    "replication": (ReplicationSettings, "Git replication: every batch a commit, pushed to the remote "
                                         "replicas follow (docs/replication.md)."),
}


def toml_value(value: Any) -> str:
    """A default as TOML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise TypeError(f"no TOML form for a default of type {type(value).__name__}")


def documented_default(default: Any) -> Any:
    """A default as the user writes it: ``"auto"`` for one resolved when the settings load
    (``semantic_weight``: on where the model is installed)."""
    return "auto" if isinstance(default, float) and default == AUTO else default


def config_template() -> str:
    """``config.toml`` with every setting commented out at its default, with what it does."""
    lines = [
        "# memgrove settings. Every setting is listed at its default, commented out:",
        "# uncomment a line to change it. Unknown names are refused with the list of known ones.",
        "# Reference: docs/settings.md (every setting by what it is about) and docs/architecture.md.",
    ]
    for table, (cls, about) in TABLES.items():
        lines += ["", f"[{table}]", *("# " + line for line in textwrap.wrap(about, _WIDTH - 2))]
        for f in dataclasses.fields(cls):
            setting = f"# {f.name} = {toml_value(documented_default(f.default))}"
            pad = max(_COLUMN, len(setting) + 2)
            wrapped = textwrap.wrap(doc_of(f), _WIDTH - pad - 2, break_on_hyphens=False) or [""]
            lines.append(setting.ljust(pad) + "# " + wrapped[0])
            lines += ["#".ljust(pad) + "# " + more for more in wrapped[1:]]
    return "\n".join(lines) + "\n"


def write_config(home: str | Path) -> Path | None:
    """Write ``config.toml`` into ``home`` (a ``.memgrove`` folder) unless one is there;
    the path written, or None when a config was already there (it is never overwritten)."""
    path = Path(home) / CONFIG_NAME
    if path.exists():
        return None
    atomic_write(path, config_template(), durable=False)
    return path
