#!/usr/bin/env bash
# `make run`: `didyma dev` with its metric endpoints and the dashboard's
# Metrics page answering out of the box. Unless PROMETHEUS_URL already names
# a Prometheus, it starts one of its own with scripts/services/prometheus.sh
# (Debian's package, installed once), kept apart from the tests' one: state in
# $DIDYMA_RUN_DIR (default ~/.cache/didyma/run), port $DIDYMA_RUN_PROMETHEUS_PORT
# (default 59091), scraping every second the /metrics of the dev servers and
# executor listed in targets.d/didyma-dev.json (scripts/run-targets.ts). When
# that Prometheus cannot start, didyma dev still starts, with metrics off.
# DIDYMA_RUN_CLI is the command that runs didyma (default: the build,
# `node bin/didyma.js`; the tests run the sources).
# usage: scripts/run.sh [arguments of didyma dev]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

RUN_DIR="${DIDYMA_RUN_DIR:-${HOME:-/root}/.cache/didyma/run}"
RUN_PROMETHEUS_PORT="${DIDYMA_RUN_PROMETHEUS_PORT:-59091}"
TARGETS=""

# prometheus.sh with the run's own state directory and port.
prometheus() {
  DIDYMA_SERVICES_DIR="$RUN_DIR" DIDYMA_PROMETHEUS_PORT="$RUN_PROMETHEUS_PORT" bash scripts/services/prometheus.sh "$@"
}

start_prometheus() {
  prometheus start >&2 || return 1
  local env_line url file
  env_line="$(prometheus env)"
  url="$(sed -n 's/.*TEST_PROMETHEUS_URL=\([^ ]*\).*/\1/p' <<<"$env_line")"
  file="$(sed -n 's/.*TEST_PROMETHEUS_TARGETS_FILE=\([^ ]*\).*/\1/p' <<<"$env_line")"
  TARGETS="$(dirname "$file")/targets.d/didyma-dev.json"
  mkdir -p "$(dirname "$TARGETS")"
  # Written whole then renamed, so Prometheus never reads half a file.
  npx --no-install tsx scripts/run-targets.ts >"$TARGETS.tmp" || return 1
  mv "$TARGETS.tmp" "$TARGETS"
  export PROMETHEUS_URL="$url"
  echo "[run] metrics: Prometheus on $url scrapes $(tr -d '\n' <"$TARGETS")" >&2
}

if [ -n "${PROMETHEUS_URL:-}" ]; then
  echo "[run] metrics: PROMETHEUS_URL=$PROMETHEUS_URL (yours; none started)" >&2
elif ! start_prometheus; then
  echo "[run] metrics off: no Prometheus could be started (see the lines above); the metric endpoints answer 502 until PROMETHEUS_URL is set" >&2
fi

# The dev servers are gone once didyma dev exits: so are their scrape targets.
# didyma dev gets the signal too (same process group) and shuts down; the traps run once it has.
cleanup() { [ -z "$TARGETS" ] || rm -f "$TARGETS"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# shellcheck disable=SC2086 # the command is words on purpose
${DIDYMA_RUN_CLI:-node bin/didyma.js} dev "$@"
