#!/usr/bin/env bash
# Installs Debian's `chromium` (headless, for the browser test of histsim's HTML pages) when it
# is missing. Needs root or sudo; prints what it did. Exit 0 when chromium is on PATH after it.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  echo "chromium: $(chromium --version 2>/dev/null || echo present)"
  exit 0
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-chromium: not root and no sudo: cannot install chromium" >&2
    exit 1
  fi
  as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "chromium: $(chromium --version)"
