#!/usr/bin/env bash
# RabbitMQ for the tests: Debian's `rabbitmq-server` package, run as our own
# user-space node (not the Debian service) with everything in
# $STATE_DIR/rabbitmq:
#   AMQP 127.0.0.1:55672, Erlang distribution 127.0.0.1:55682,
#   epmd on 127.0.0.1:54369, CLI distribution ports 55690-55699,
#   user didyma / didyma, administrator, full permissions on vhost /.
#   Plugin rabbitmq_prometheus on 127.0.0.1:55675 with per-queue metrics
#   (what a metrics adapter turns into executor queue depth).
#   Quorum queues work (single node).
#   As a managed broker has it: AMQP over TLS on 127.0.0.1:55671, with a CA
#   of its own in $STATE_DIR/rabbitmq/tls and a certificate for 127.0.0.1
#   and localhost.
# usage: rabbitmq.sh start|stop|restart|status|env
set -euo pipefail
SERVICE_NAME=rabbitmq
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=pki.sh
. "$(dirname "${BASH_SOURCE[0]}")/pki.sh"

RMQ_HOST=127.0.0.1
RMQ_PORT="${DIDYMA_RABBITMQ_PORT:-55672}"
RMQ_TLS_PORT="${DIDYMA_RABBITMQ_TLS_PORT:-55671}"
RMQ_DIST_PORT="${DIDYMA_RABBITMQ_DIST_PORT:-55682}"
RMQ_EPMD_PORT="${DIDYMA_RABBITMQ_EPMD_PORT:-54369}"
RMQ_CTL_PORT_MIN="${DIDYMA_RABBITMQ_CTL_PORT_MIN:-55690}"
RMQ_PROMETHEUS_PORT="${DIDYMA_RABBITMQ_PROMETHEUS_PORT:-55675}"
RMQ_USER=didyma
RMQ_PASSWORD=didyma
RMQ_NODE="${DIDYMA_RABBITMQ_NODENAME:-didyma@localhost}"
RMQ_SBIN=/usr/lib/rabbitmq/bin

RMQ_DIR="$STATE_DIR/rabbitmq"
RMQ_PIDFILE="$RMQ_DIR/server.pid"
RMQ_LOG="$RMQ_DIR/server.out"
RMQ_TLS="$RMQ_DIR/tls"
RMQ_TLS_NAMES=IP:127.0.0.1,DNS:localhost

env_lines() {
  echo "export TEST_AMQP_URL=amqp://$RMQ_USER:$RMQ_PASSWORD@$RMQ_HOST:$RMQ_PORT/"
  echo "export TEST_AMQPS_URL=amqps://$RMQ_USER:$RMQ_PASSWORD@$RMQ_HOST:$RMQ_TLS_PORT/ TEST_AMQP_CA_FILE=$RMQ_TLS/ca.crt"
}

# The environment the server and the CLI tools (rabbitmqctl) share. HOME holds
# the Erlang cookie, so both find the same one.
rmq_env() {
  export HOME="$RMQ_DIR/home"
  export RABBITMQ_NODENAME="$RMQ_NODE"
  export RABBITMQ_NODE_IP_ADDRESS="$RMQ_HOST"
  export RABBITMQ_NODE_PORT="$RMQ_PORT"
  export RABBITMQ_DIST_PORT="$RMQ_DIST_PORT"
  # Erlang distribution on loopback only.
  export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
  export RABBITMQ_CTL_DIST_PORT_MIN="$RMQ_CTL_PORT_MIN"
  export RABBITMQ_CTL_DIST_PORT_MAX="$((RMQ_CTL_PORT_MIN + 9))"
  export ERL_EPMD_PORT="$RMQ_EPMD_PORT"
  export ERL_EPMD_ADDRESS="127.0.0.1"
  export RABBITMQ_BASE="$RMQ_DIR"
  export RABBITMQ_CONF_ENV_FILE="$RMQ_DIR/rabbitmq-env.conf"
  export RABBITMQ_CONFIG_FILE="$RMQ_DIR/rabbitmq.conf"
  export RABBITMQ_ADVANCED_CONFIG_FILE="$RMQ_DIR/advanced.config"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$RMQ_DIR/enabled_plugins"
  export RABBITMQ_MNESIA_BASE="$RMQ_DIR/mnesia"
  export RABBITMQ_LOG_BASE="$RMQ_DIR/log"
  export RABBITMQ_PID_FILE="$RMQ_DIR/rabbitmq.pid"
  export RABBITMQ_PLUGINS_EXPAND_DIR="$RMQ_DIR/plugins-expand"
  unset RABBITMQ_ENV_LOADED
}

rmqctl() {
  (rmq_env && with_closed_fds "$RMQ_SBIN/rabbitmqctl" -n "$RMQ_NODE" "$@")
}

ensure_installed() {
  if [ ! -x "$RMQ_SBIN/rabbitmq-server" ] || [ ! -x "$RMQ_SBIN/rabbitmqctl" ]; then
    apt_install_once rabbitmq-server
    [ -x "$RMQ_SBIN/rabbitmq-server" ] ||
      die "rabbitmq-server is missing: $RMQ_SBIN/rabbitmq-server not found even after installing the rabbitmq-server package"
  fi
  command -v erl >/dev/null 2>&1 || die "erl (Erlang runtime) is missing: install the erlang-base package"
  # If the package's own service got started (a machine with an init system),
  # stop it: we run our own node on our own ports.
  stop_system_daemons rabbitmq beam.smp
}

# The listener's certificate, signed by a CA of its own.
ensure_tls() {
  ensure_server_cert "$RMQ_TLS" didyma-test-rabbitmq-ca "$RMQ_TLS_NAMES"
  if [ "$CERT_SIGNED" = 1 ]; then
    log "signed the listener certificate of RabbitMQ for $RMQ_TLS_NAMES in $RMQ_TLS"
  fi
}

write_config() {
  mkdir -p "$RMQ_DIR/home" "$RMQ_DIR/mnesia" "$RMQ_DIR/log" "$RMQ_DIR/plugins-expand"
  chmod 700 "$RMQ_DIR/home"
  if [ ! -s "$RMQ_DIR/home/.erlang.cookie" ]; then
    # 20 random upper-case letters, as Erlang itself would generate.
    local cookie
    cookie="$(LC_ALL=C tr -dc '[:upper:]' </dev/urandom 2>/dev/null | head -c 20 || true)"
    [ "${#cookie}" -eq 20 ] || die "could not generate an Erlang cookie"
    rm -f "$RMQ_DIR/home/.erlang.cookie"
    printf '%s' "$cookie" >"$RMQ_DIR/home/.erlang.cookie"
  fi
  chmod 400 "$RMQ_DIR/home/.erlang.cookie"
  echo '[rabbitmq_prometheus].' >"$RMQ_DIR/enabled_plugins"
  : >"$RMQ_DIR/rabbitmq-env.conf"
  # A throwaway test broker, like the PostgreSQL cluster (fsync = off): quorum
  # queues still write their log, but without an fdatasync per batch, each of
  # which woke an I/O thread of the node (about half of the 17 context
  # switches RabbitMQ made per invocation). The platform does not rely on the
  # broker's disk for "none lost": its outbox is PostgreSQL (docs/decisions.md).
  echo '[{ra, [{wal_sync_method, none}]}].' >"$RMQ_DIR/advanced.config"
  cat >"$RMQ_DIR/rabbitmq.conf" <<EOF
# Generated by scripts/services/rabbitmq.sh: edits are overwritten on start.
listeners.tcp.1 = $RMQ_HOST:$RMQ_PORT
listeners.ssl.1 = $RMQ_HOST:$RMQ_TLS_PORT
ssl_options.cacertfile = $RMQ_TLS/ca.crt
ssl_options.certfile = $RMQ_TLS/server.crt
ssl_options.keyfile = $RMQ_TLS/server.key
ssl_options.verify = verify_none
ssl_options.fail_if_no_peer_cert = false
loopback_users = none
default_vhost = /
default_user = $RMQ_USER
default_pass = $RMQ_PASSWORD
default_user_tags.administrator = true
default_permissions.configure = .*
default_permissions.read = .*
default_permissions.write = .*
disk_free_limit.absolute = 50MB
log.console = false
log.file.level = warning
prometheus.tcp.ip = $RMQ_HOST
prometheus.tcp.port = $RMQ_PROMETHEUS_PORT
prometheus.return_per_object_metrics = true
# Queue depth in the metrics within a second, not five.
collect_statistics_interval = 1000
EOF
}

is_running() {
  pidfile_alive "$RMQ_PIDFILE" && port_open "$RMQ_HOST" "$RMQ_PORT"
}

# A node started before the TLS listener was part of its configuration.
lacks_tls() {
  ! port_open "$RMQ_HOST" "$RMQ_TLS_PORT"
}

# An AMQP 0-9-1 handshake up to connection.start: proves the broker (not just
# a socket) is answering.
amqp_answers() {
  # shellcheck disable=SC2016 # expanded by the inner bash
  timeout 5 bash -c '
    exec 3<>"/dev/tcp/$1/$2" || exit 1
    printf "AMQP\x00\x00\x09\x01" >&3
    [[ "$(head -c 8 <&3 | od -An -tx1 | tr -d " \n")" == 01000000* ]]
  ' _ "$RMQ_HOST" "$RMQ_PORT" 2>/dev/null
}

provision() {
  [ -f "$RMQ_DIR/.provisioned" ] && return 0
  # default_user in rabbitmq.conf creates the user on the first boot of an
  # empty database; this makes sure of it for a database that predates that.
  if ! rmqctl authenticate_user "$RMQ_USER" "$RMQ_PASSWORD" >/dev/null 2>&1; then
    log "creating user $RMQ_USER"
    rmqctl add_user "$RMQ_USER" "$RMQ_PASSWORD" >/dev/null 2>&1 ||
      rmqctl change_password "$RMQ_USER" "$RMQ_PASSWORD" >/dev/null
    rmqctl set_user_tags "$RMQ_USER" administrator >/dev/null
    rmqctl set_permissions -p / "$RMQ_USER" '.*' '.*' '.*' >/dev/null
  fi
  touch "$RMQ_DIR/.provisioned"
}

do_start() {
  reserve_ports "$RMQ_PORT" "$RMQ_TLS_PORT" "$RMQ_DIST_PORT" "$RMQ_EPMD_PORT" "$RMQ_PROMETHEUS_PORT" "$RMQ_CTL_PORT_MIN-$((RMQ_CTL_PORT_MIN + 9))"
  if is_running && ! lacks_tls; then
    return 0
  fi
  if is_running; then
    log "the running node has no TLS listener yet; restarting it with one"
    do_stop
  fi
  ensure_installed
  ensure_state_dir
  mkdir -p "$RMQ_DIR"
  if pidfile_alive "$RMQ_PIDFILE"; then
    # Booting (or wedged) from an earlier start: give it time, then replace it.
    log "node process $(pidfile_pid "$RMQ_PIDFILE") exists; waiting for the AMQP port"
    if wait_for_port "$RMQ_HOST" "$RMQ_PORT" 60 "$(pidfile_pid "$RMQ_PIDFILE")"; then
      return 0
    fi
    warn "node did not open its port; restarting it"
    stop_pid "$(pidfile_pid "$RMQ_PIDFILE")" 30
  fi
  local p
  for p in "$RMQ_PORT" "$RMQ_TLS_PORT" "$RMQ_DIST_PORT" "$RMQ_PROMETHEUS_PORT"; do
    port_open "$RMQ_HOST" "$p" && die "port $RMQ_HOST:$p is already in use by another process (not our RabbitMQ node)"
  done
  ensure_tls
  write_config
  log "starting RabbitMQ node $RMQ_NODE on $RMQ_HOST:$RMQ_PORT"
  echo "=== start $(date -Is)" >>"$RMQ_LOG"
  (rmq_env && spawn_daemon "$RMQ_PIDFILE" "$RMQ_LOG" "$RMQ_SBIN/rabbitmq-server")
  if ! wait_for_port "$RMQ_HOST" "$RMQ_PORT" 120 "$(pidfile_pid "$RMQ_PIDFILE")"; then
    tail -n 40 "$RMQ_LOG" >&2 || true
    ls "$RMQ_DIR/log" >&2 || true
    die "RabbitMQ did not open $RMQ_HOST:$RMQ_PORT (output: $RMQ_LOG, logs: $RMQ_DIR/log)"
  fi
  amqp_answers || die "RabbitMQ port $RMQ_PORT is open but does not speak AMQP"
  wait_for_port "$RMQ_HOST" "$RMQ_TLS_PORT" 30 "$(pidfile_pid "$RMQ_PIDFILE")" ||
    die "RabbitMQ did not open its TLS listener $RMQ_HOST:$RMQ_TLS_PORT (logs: $RMQ_DIR/log)"
  provision
  log "RabbitMQ ready"
}

# pids of our node's Erlang VM (its -home argument is our private home dir).
node_vm_pids() {
  pgrep -f -- "beam.smp .*-home $RMQ_DIR/home " 2>/dev/null || true
}

do_stop() {
  if pidfile_alive "$RMQ_PIDFILE"; then
    log "stopping RabbitMQ node $RMQ_NODE"
    # The start script's wrapper stops the VM cleanly on SIGTERM; no need to
    # boot a CLI VM (rabbitmqctl stop) for it.
    stop_pid "$(pidfile_pid "$RMQ_PIDFILE")" 60
  fi
  rm -f "$RMQ_PIDFILE"
  local p
  for p in $(node_vm_pids); do
    log "stopping leftover node VM $p"
    stop_pid "$p" 60
  done
  wait_for_port_closed "$RMQ_HOST" "$RMQ_PORT" 10 || warn "port $RMQ_PORT still open after stop"
}

do_status() {
  if is_running; then
    echo "rabbitmq: running on $RMQ_HOST:$RMQ_PORT (node $RMQ_NODE, pid $(pidfile_pid "$RMQ_PIDFILE"))"
  else
    echo "rabbitmq: stopped"
    return 1
  fi
}

cmd="${1:-}"
case "$cmd" in
  start) with_lock rabbitmq do_start ;;
  stop) with_lock rabbitmq do_stop ;;
  restart)
    with_lock rabbitmq do_stop
    with_lock rabbitmq do_start
    ;;
  status) do_status ;;
  env) env_lines ;;
  ctl)
    # rabbitmq.sh ctl ARGS...: rabbitmqctl against our node (diagnostics).
    shift
    rmqctl "$@"
    ;;
  *) usage_exit "$0" "start|stop|restart|status|env|ctl" ;;
esac
