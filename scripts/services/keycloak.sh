#!/usr/bin/env bash
# Keycloak, the OpenID Provider of the single sign-on tests: the
# org.keycloak:keycloak-quarkus-dist zip fetched once with Maven (pinned in
# versions.sh) and unpacked into $STATE_DIR/keycloak, run by a Java >= 21 in
# `start-dev` mode (embedded dev database) on 127.0.0.1:57080. Every start
# begins with an empty database and imports the realm `didyma-test` from
# keycloak/didyma-test-realm.json beside this script, so a test that changed
# users or groups through the admin API leaves nothing for the next start.
#   admin (master realm): didyma-test-admin / didyma-test-admin-password
# usage: keycloak.sh start|stop|restart|status|env|install
set -euo pipefail
SERVICE_NAME=keycloak
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=versions.sh
. "$(dirname "${BASH_SOURCE[0]}")/versions.sh"

KC_HOST=127.0.0.1
KC_PORT="${DIDYMA_KEYCLOAK_PORT:-57080}"
KC_MANAGEMENT_PORT="${DIDYMA_KEYCLOAK_MANAGEMENT_PORT:-57081}"
KC_REALM=didyma-test
KC_ADMIN=didyma-test-admin
KC_ADMIN_PASSWORD=didyma-test-admin-password
REALM_FILE="$SERVICES_LIB_DIR/keycloak/didyma-test-realm.json"

KC_DIR="$STATE_DIR/keycloak"
KC_HOME="$KC_DIR/keycloak-$KEYCLOAK_VERSION"
KC_PIDFILE="$KC_DIR/keycloak.pid"
KC_LOG="$KC_DIR/keycloak.log"
INSTALL_LOG="$KC_DIR/install.log"

issuer() { echo "http://$KC_HOST:$KC_PORT/realms/$KC_REALM"; }

env_lines() {
  echo "export TEST_OIDC_ISSUER=$(issuer) TEST_OIDC_ADMIN_URL=http://$KC_HOST:$KC_PORT TEST_OIDC_ADMIN_USER=$KC_ADMIN TEST_OIDC_ADMIN_PASSWORD=$KC_ADMIN_PASSWORD"
  echo "export TEST_OIDC_DASHBOARD_CLIENT_ID=didyma-dashboard TEST_OIDC_DASHBOARD_CLIENT_SECRET=didyma-dashboard-test-secret TEST_OIDC_CLI_CLIENT_ID=didyma-cli"
  # The realm's users, each as user:password:groups (groups joined by '+').
  echo "export TEST_OIDC_USERS='alice:alice-test-password:ml-team-a bob:bob-test-password:ml-team-a+ml-team-a-supervisors+ml-team-b carol:carol-test-password:platform-admins dave:dave-test-password: erin:erin-test-password:ml-team-a'"
}

# The first JDK of at least 21 (Keycloak 26 needs it; the machine's default may be 17).
java_home() {
  local candidate
  for candidate in "${DIDYMA_KEYCLOAK_JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-21-jdk-amd64 /usr/lib/jvm/java-25-openjdk-amd64 /usr/lib/jvm/java-21-openjdk-amd64; do
    [ -n "$candidate" ] && [ -x "$candidate/bin/java" ] && { echo "$candidate"; return 0; }
  done
  return 1
}

installed() { [ -x "$KC_HOME/bin/kc.sh" ] && [ "$(cat "$KC_HOME/.version" 2>/dev/null)" = "$KEYCLOAK_VERSION" ]; }

install_keycloak() {
  installed && return 0
  command -v mvn >/dev/null 2>&1 || apt_install_once maven
  command -v unzip >/dev/null 2>&1 || apt_install_once unzip
  mkdir -p "$KC_DIR"
  local download="$KC_DIR/download"
  rm -rf "$download" "$KC_HOME"
  log "fetching org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION with Maven (log: $INSTALL_LOG)"
  mvn -q -B dependency:copy "-Dartifact=org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION:zip" "-DoutputDirectory=$download" >"$INSTALL_LOG" 2>&1 ||
    { tail -n 20 "$INSTALL_LOG" >&2; die "could not fetch Keycloak $KEYCLOAK_VERSION (log: $INSTALL_LOG)"; }
  unzip -q -o "$download/keycloak-quarkus-dist-$KEYCLOAK_VERSION.zip" -d "$KC_DIR" >>"$INSTALL_LOG" 2>&1 ||
    die "could not unpack Keycloak $KEYCLOAK_VERSION (log: $INSTALL_LOG)"
  rm -rf "$download"
  echo "$KEYCLOAK_VERSION" >"$KC_HOME/.version"
  log "installed Keycloak $KEYCLOAK_VERSION in $KC_HOME"
}

ready() {
  curl -fsS -m 2 -o /dev/null "$(issuer)/.well-known/openid-configuration" 2>/dev/null
}

is_running() { pidfile_alive "$KC_PIDFILE" && ready; }

do_start() {
  reserve_ports "$KC_PORT" "$KC_MANAGEMENT_PORT"
  is_running && return 0
  command -v curl >/dev/null 2>&1 || apt_install_once curl
  ensure_state_dir
  install_keycloak
  local jdk
  jdk="$(java_home)" || die "Keycloak $KEYCLOAK_VERSION needs Java >= 21: none found under /usr/lib/jvm (set DIDYMA_KEYCLOAK_JAVA_HOME)"
  if pidfile_alive "$KC_PIDFILE"; then
    stop_pid "$(pidfile_pid "$KC_PIDFILE")" 30
  fi
  port_open "$KC_HOST" "$KC_PORT" && die "port $KC_HOST:$KC_PORT is already in use by another process (not our Keycloak)"
  # A fresh dev database each start: the realm comes from the file alone.
  rm -rf "$KC_HOME/data/h2" "$KC_HOME/data/import"
  mkdir -p "$KC_HOME/data/import"
  cp "$REALM_FILE" "$KC_HOME/data/import/"
  log "starting Keycloak $KEYCLOAK_VERSION on $KC_HOST:$KC_PORT (Java: $jdk)"
  echo "=== start $(date -Is)" >>"$KC_LOG"
  (
    export JAVA_HOME="$jdk" JAVA_OPTS_KC_HEAP="-Xms64m -Xmx512m"
    export KC_BOOTSTRAP_ADMIN_USERNAME="$KC_ADMIN" KC_BOOTSTRAP_ADMIN_PASSWORD="$KC_ADMIN_PASSWORD"
    spawn_daemon "$KC_PIDFILE" "$KC_LOG" "$KC_HOME/bin/kc.sh" start-dev --import-realm \
      --http-host="$KC_HOST" --http-port="$KC_PORT" --http-management-port="$KC_MANAGEMENT_PORT" \
      --hostname-strict=false --log-level=warn
  )
  local deadline=$((SECONDS + 600)) pid
  pid="$(pidfile_pid "$KC_PIDFILE")"
  until ready; do
    if ! pid_running "$pid" || [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 30 "$KC_LOG" >&2 || true
      die "Keycloak did not serve the realm $KC_REALM on $KC_HOST:$KC_PORT (log: $KC_LOG)"
    fi
    sleep 1
  done
  log "Keycloak ready: $(issuer)"
}

do_stop() {
  if pidfile_alive "$KC_PIDFILE"; then
    log "stopping Keycloak"
    stop_pid "$(pidfile_pid "$KC_PIDFILE")" 30
  fi
  rm -f "$KC_PIDFILE"
}

do_status() {
  if is_running; then
    echo "keycloak: running on $KC_HOST:$KC_PORT (pid $(pidfile_pid "$KC_PIDFILE"), $KEYCLOAK_VERSION, realm $KC_REALM)"
  else
    echo "keycloak: stopped$(installed && echo " (installed: $KEYCLOAK_VERSION)" || echo " (not installed)")"
    return 1
  fi
}

cmd="${1:-}"
case "$cmd" in
  start) with_lock keycloak do_start ;;
  stop) with_lock keycloak do_stop ;;
  restart)
    with_lock keycloak do_stop
    with_lock keycloak do_start
    ;;
  install) with_lock keycloak install_keycloak ;;
  status) do_status ;;
  env) env_lines ;;
  *) usage_exit "$0" "start|stop|restart|status|env|install" ;;
esac
