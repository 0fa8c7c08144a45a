"""YAML frontmatter, read safely and written deterministically.

Frontmatter is untrusted (hand-edited, or written by an LLM): the loader
refuses anchors/aliases (billion-laughs "alias bombs"), caps the size, and
keeps timestamps as strings so a round trip never changes their text.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from ..base.errors import InvalidEntry

MAX_FRONTMATTER_BYTES = 64 * 1024


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader without aliases and without implicit timestamps."""

    def compose_node(self, parent, index):  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise InvalidEntry(f"YAML aliases are not allowed in frontmatter (line {event.start_mark.line + 1})")
        event = self.peek_event()
        if getattr(event, "anchor", None):
            raise InvalidEntry(f"YAML anchors are not allowed in frontmatter (line {event.start_mark.line + 1})")
        return super().compose_node(parent, index)


_StrictLoader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


_NO_TIMESTAMPS = _StrictLoader.yaml_implicit_resolvers

if hasattr(yaml, "CSafeLoader"):
    class _FastLoader(yaml.CSafeLoader):  # libyaml: ~10x faster than the pure-Python loader
        yaml_implicit_resolvers = _NO_TIMESTAMPS
else:  # pragma: no cover - PyYAML built without libyaml
    _FastLoader = None

# Where an anchor (&a) or alias (*a) could start a node. Matching is conservative
# (an asterisk after a space in a plain string also matches); such text goes to
# the strict loader, which decides exactly and refuses real anchors and aliases.
_MAYBE_ANCHOR = re.compile(r"(?:^|[\s\[{,!])[&*]")


def load(text: str) -> dict[str, Any]:
    """Parse a frontmatter block into a dict; raise InvalidEntry with the reason."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        raise InvalidEntry(f"frontmatter is larger than {MAX_FRONTMATTER_BYTES // 1024} KiB")
    try:
        fast = _FastLoader is not None and not _MAYBE_ANCHOR.search(text)
        # both loaders are SafeLoaders (no Python objects) without timestamp resolution
        data = yaml.load(text, Loader=_FastLoader if fast else _StrictLoader)  # noqa: S506
    except InvalidEntry:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InvalidEntry(f"malformed YAML frontmatter{where}: {problem}") from None
    except RecursionError:
        raise InvalidEntry("malformed YAML frontmatter: nested too deeply") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InvalidEntry(f"frontmatter must be a mapping of keys to values, not {type(data).__name__}")
    return {str(k): v for k, v in data.items()}


class _Dumper(yaml.SafeDumper):
    """Block-style mapping; lists and the mappings inside them in flow style
    (``tags: [a, b]``, ``sources: [{kind: ..., ref: ...}]``), as in the design."""

    def ignore_aliases(self, data):  # never write anchors either
        return True


def _flow_list(dumper: yaml.SafeDumper, data: list) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # Inside plain or single-quoted scalars YAML folds these line breaks into
    # spaces when reading back; only a double-quoted scalar escapes them.
    style = '"' if any(c in data for c in "\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


if hasattr(yaml, "CSafeDumper"):
    class _FastDumper(yaml.CSafeDumper):  # libyaml's emitter, the same representers: the same text, ~4x faster
        def ignore_aliases(self, data):
            return True
else:  # pragma: no cover - PyYAML built without libyaml
    _FastDumper = _Dumper

for _dumper in {_Dumper, _FastDumper}:
    _dumper.add_representer(list, _flow_list)
    _dumper.add_representer(tuple, _flow_list)
    _dumper.add_representer(str, _str)


# The emitters differ on some keys (PyYAML writes an empty key as "? ''", a "\r" key as '"\r"' where
# libyaml writes "? ...") and on characters past U+FFFF (an emoji: libyaml escapes it as "\U0001F600",
# PyYAML writes it as it is). Data with neither goes to libyaml: no other difference was found.
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_ .-]{0,63}", re.ASCII)
_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


def _libyaml_same(value: Any) -> bool:
    if isinstance(value, str):
        return not _ASTRAL.search(value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _PLAIN_KEY.fullmatch(k) and _libyaml_same(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_libyaml_same(v) for v in value)
    return True


def dump(data: dict[str, Any], *, dumper: type | None = None) -> str:
    """Serialize in the given key order, one key per line. libyaml's emitter writes it unless
    ``dumper`` says otherwise; its text is PyYAML's own, byte for byte (a property test holds it)."""
    if not data:
        return ""
    if dumper is None:
        dumper = _FastDumper if _libyaml_same(data) else _Dumper
    return yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=10**9)
