#!/bin/sh
# The container's entry point (Dockerfile): `primary` (the default) or `replica`, else any memgrove
# command. The project is the working directory (/data, a volume). Environment:
#   MEMGROVE_TOKEN    the bearer token clients and replicas send (required: the server listens on
#                     every interface, where it never runs without a token)
#   MEMGROVE_REMOTE   primary: the git remote its tree is pushed to (a URL, or the path of a bare
#                     repository, made here when missing); empty: no replication
#   MEMGROVE_PRIMARY  replica: the primary's URL (http://primary:7437)
set -eu
: "${MEMGROVE_TOKEN:?set MEMGROVE_TOKEN: the server listens on every interface}"
role="${1:-primary}"
[ $# -gt 0 ] && shift
case "$role" in
  primary)
    [ -f .memgrove/config.toml ] || memgrove init
    remote="${MEMGROVE_REMOTE:-}"
    if [ -n "$remote" ]; then
      case "$remote" in
        /*) [ -d "$remote" ] || git init --bare --quiet "$remote" ;;
      esac
      # set [replication] remote in the config memgrove init wrote (its settings are commented out)
      python - "$remote" <<'PY'
import re, sys
from pathlib import Path
path = Path(".memgrove/config.toml")
text = path.read_text(encoding="utf-8")
line = "remote = " + '"' + sys.argv[1].replace("\\", "\\\\").replace('"', '\\"') + '"'
text, n = re.subn(r'(?m)^#? ?remote = .*$', line, text, count=1)
if n != 1:
    text += "\n[replication]\n" + line + "\n"
path.write_text(text, encoding="utf-8")
PY
    fi
    exec memgrove serve --host 0.0.0.0 --port 7437 "$@"
    ;;
  replica)
    : "${MEMGROVE_PRIMARY:?set MEMGROVE_PRIMARY to the primary's URL}"
    exec memgrove serve --host 0.0.0.0 --port 7437 --replica-of "$MEMGROVE_PRIMARY" "$@"
    ;;
  *)
    exec memgrove "$role" "$@"
    ;;
esac
