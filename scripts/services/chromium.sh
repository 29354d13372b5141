#!/usr/bin/env bash
# Chromium for the dashboard's browser tests: Debian's `chromium` package,
# driven headless by playwright-core (which downloads no browser of its own).
# Nothing runs in the background: each test launches its own browser with a
# fresh profile, so `start` only installs and `stop` has nothing to do.
# usage: chromium.sh start|stop|restart|status|env
set -euo pipefail
SERVICE_NAME=chromium
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CHROMIUM_BIN=/usr/bin/chromium

env_lines() {
  echo "export TEST_CHROMIUM=$CHROMIUM_BIN"
}

do_start() {
  [ -x "$CHROMIUM_BIN" ] || apt_install_once chromium
  [ -x "$CHROMIUM_BIN" ] || die "chromium is missing: no $CHROMIUM_BIN even after installing the chromium package"
  log "$("$CHROMIUM_BIN" --version 2>/dev/null || echo chromium) ready"
}

do_status() {
  if [ -x "$CHROMIUM_BIN" ]; then
    echo "chromium: installed ($CHROMIUM_BIN)"
  else
    echo "chromium: not installed"
    return 1
  fi
}

cmd="${1:-}"
case "$cmd" in
  start | restart) with_lock chromium do_start ;;
  stop) ;;
  status) do_status ;;
  env) env_lines ;;
  *) usage_exit "$0" "start|stop|restart|status|env" ;;
esac
