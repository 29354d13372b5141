# shellcheck shell=bash
# Shared helpers for the scripts in scripts/services/. Source it; do not run it.
#
# Every service keeps its binaries (when built here), data, logs and pid files
# under one state directory:
#   ${DIDYMA_SERVICES_DIR:-$HOME/.cache/didyma/services}
# Nothing here needs systemd: each service is started as a plain background
# process on an unprivileged loopback port.

set -euo pipefail

# shellcheck disable=SC2034 # used by the scripts that source this file
SERVICES_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE_DIR="${DIDYMA_SERVICES_DIR:-${HOME:-/root}/.cache/didyma/services}"
SERVICE_NAME="${SERVICE_NAME:-services}"

log() { printf '[services:%s] %s\n' "$SERVICE_NAME" "$*" >&2; }
warn() { printf '[services:%s] WARNING: %s\n' "$SERVICE_NAME" "$*" >&2; }
die() {
  printf '[services:%s] ERROR: %s\n' "$SERVICE_NAME" "$*" >&2
  exit 1
}

is_root() { [ "$(id -u)" -eq 0 ]; }

# Takes a service's ports (and a-b ranges) out of the kernel's ephemeral range
# (32768-60999 by default, where these ports sit): otherwise a client's
# outgoing connection may be handed a port while its service is stopped, and
# the restart fails with EADDRINUSE (tests stop and restart PostgreSQL and
# RabbitMQ under load). Needs root; without it, a note and nothing else.
reserve_ports() {
  local file=/proc/sys/net/ipv4/ip_local_reserved_ports list current
  list="$(IFS=,; echo "$*")"
  if [ -w "$file" ]; then
    current="$(cat "$file" 2>/dev/null || true)"
    printf '%s\n' "${current:+$current,}$list" >"$file" 2>/dev/null || warn "could not reserve ports $list from the ephemeral range"
  else
    log "ports $list are not reserved from the ephemeral range (needs root); a restart could find one taken"
  fi
}

ensure_state_dir() {
  mkdir -p "$STATE_DIR" "$STATE_DIR/locks" "$STATE_DIR/logs"
}

# with_lock NAME CMD...: run CMD while holding $STATE_DIR/locks/NAME.lck, so two
# concurrent `start`s of the same service do not race each other.
with_lock() {
  local name="$1"
  shift
  ensure_state_dir
  local lockfile="$STATE_DIR/locks/$name.lck"
  if command -v flock >/dev/null 2>&1; then
    (
      flock -w 900 9 || die "timed out waiting for lock $lockfile"
      "$@"
    ) 9>"$lockfile"
  else
    "$@"
  fi
}

# close_inherited_fds: close every file descriptor above 2 of the current
# (sub)shell. Anything that leaves a daemon behind must do this first (see
# with_closed_fds and spawn_daemon): otherwise the daemon inherits the lock fd
# of with_lock and holds the lock forever, or keeps the caller's pipes open.
close_inherited_fds() {
  local fd
  for fd in /proc/"$BASHPID"/fd/*; do
    fd="${fd##*/}"
    if [ "$fd" -gt 2 ] 2>/dev/null; then
      eval "exec $fd>&-" 2>/dev/null || true
    fi
  done
}

# with_closed_fds CMD...: run CMD (a command or a function, in a subshell)
# with every file descriptor above 2 closed.
with_closed_fds() {
  (
    close_inherited_fds
    if declare -F "$1" >/dev/null; then
      "$@"
    else
      exec "$@"
    fi
  )
}

# spawn_daemon PIDFILE LOGFILE CMD...: start the external command CMD in the
# background in its own session, stdin from /dev/null, stdout+stderr appended
# to LOGFILE, no other fds inherited; writes its pid to PIDFILE (the pid of
# CMD itself: the background subshell execs it) with the process's start time.
spawn_daemon() {
  local pidfile="$1" logfile="$2"
  shift 2
  (
    close_inherited_fds
    if command -v setsid >/dev/null 2>&1; then
      exec setsid "$@"
    else
      exec "$@"
    fi
  ) </dev/null >>"$logfile" 2>&1 &
  local pid="$!"
  { echo "$pid"; pid_start_time "$pid" || true; } >"$pidfile"
}

# run_privileged CMD...: run CMD as root (directly, or with sudo -n when not root).
run_privileged() {
  if is_root; then
    "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    return 126
  fi
}

# pkg_installed PKG: true when the Debian package PKG is installed.
pkg_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == *'install ok installed'* ]]
}

# apt_install_once PKG...: install the Debian packages that are missing.
# `apt-get update` runs only when something is missing, and at most once per
# run: a stamp file younger than an hour means an earlier script of this run
# (or a recent run) already refreshed the lists. If an install fails after the
# update was skipped, the lists are refreshed and the install retried once.
# Services installed this way are not started by the package scripts
# (policy-rc.d answers 101 for the duration of the install).
apt_install_once() {
  local missing=() pkg
  for pkg in "$@"; do
    pkg_installed "$pkg" || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0

  command -v apt-get >/dev/null 2>&1 ||
    die "missing Debian package(s) ${missing[*]} and apt-get is not available: install them by hand"
  if ! is_root && ! { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; }; then
    die "missing Debian package(s) ${missing[*]}: run 'apt-get install -y ${missing[*]}' as root (no root or passwordless sudo here)"
  fi

  ensure_state_dir
  local stamp="$STATE_DIR/.apt-updated"
  local updated=0
  if [ -z "$(find "$stamp" -mmin -60 2>/dev/null)" ]; then
    log "apt-get update (missing: ${missing[*]})"
    run_privileged apt-get update -qq >>"$STATE_DIR/logs/apt.log" 2>&1 ||
      die "apt-get update failed (log: $STATE_DIR/logs/apt.log)"
    touch "$stamp"
    updated=1
  fi

  log "apt-get install ${missing[*]}"
  if ! _apt_install_no_start "${missing[@]}"; then
    if [ "$updated" -eq 0 ]; then
      log "install failed; refreshing package lists and retrying"
      run_privileged apt-get update -qq >>"$STATE_DIR/logs/apt.log" 2>&1 ||
        die "apt-get update failed (log: $STATE_DIR/logs/apt.log)"
      touch "$stamp"
      _apt_install_no_start "${missing[@]}" ||
        die "could not install Debian package(s): ${missing[*]}"
    else
      die "could not install Debian package(s): ${missing[*]}"
    fi
  fi
  for pkg in "${missing[@]}"; do
    pkg_installed "$pkg" || die "Debian package $pkg is still not installed after apt-get install"
  done
}

# Install with a policy-rc.d that forbids starting services, unless the machine
# already has one (containers usually do). The temporary one is removed after.
_apt_install_no_start() {
  local policy=/usr/sbin/policy-rc.d created=0 rc=0
  if [ ! -e "$policy" ]; then
    run_privileged sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy" && created=1
  fi
  local aptlog="$STATE_DIR/logs/apt.log"
  echo "=== $(date -Is) apt-get install $*" >>"$aptlog"
  run_privileged env DEBIAN_FRONTEND=noninteractive \
    apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "$@" >>"$aptlog" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    tail -n 20 "$aptlog" >&2 || true
    warn "apt-get install $* failed (exit $rc, log: $aptlog)"
  fi
  if [ "$created" -eq 1 ]; then
    run_privileged rm -f "$policy" || true
  fi
  return "$rc"
}

# port_open HOST PORT: true when something accepts TCP connections there.
port_open() {
  # shellcheck disable=SC2016 # expanded by the inner bash
  timeout 1 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# wait_for_port HOST PORT TIMEOUT_SECONDS [PID]: wait until HOST:PORT accepts
# connections. With PID, give up early when that process has exited.
wait_for_port() {
  local host="$1" port="$2" timeout_s="$3" pid="${4:-}"
  local deadline=$((SECONDS + timeout_s))
  while ! port_open "$host" "$port"; do
    if [ -n "$pid" ] && ! pid_running "$pid"; then
      return 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      return 1
    fi
    sleep 0.2
  done
}

# wait_for_port_closed HOST PORT TIMEOUT_SECONDS
wait_for_port_closed() {
  local host="$1" port="$2" timeout_s="$3"
  local deadline=$((SECONDS + timeout_s))
  while port_open "$host" "$port"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.2
  done
}

# pid_running PID: true when PID is a live process (a zombie, killed but not
# yet reaped by its parent, does not count).
pid_running() {
  local pid="$1" stat
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ "${stat%% *}" != Z ]
}

# pid_start_time PID: when PID started (clock ticks since boot), which tells
# a process from a later one that reuses its pid.
pid_start_time() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  # shellcheck disable=SC2086 # split into the stat fields after the command name
  set -- $stat
  echo "${20}"
}

# pidfile_alive FILE: true when FILE names a running process, the one it was
# written for: after the processes of a session are killed, their pids are
# reused, and a stranger must be neither trusted nor stopped.
pidfile_alive() {
  local f="$1" pid started
  [ -s "$f" ] || return 1
  pid="$(head -n1 "$f" 2>/dev/null | tr -dc '0-9')"
  started="$(sed -n 2p "$f" 2>/dev/null | tr -dc '0-9')"
  pid_running "$pid" || return 1
  [ -z "$started" ] || [ "$(pid_start_time "$pid")" = "$started" ]
}

pidfile_pid() { head -n1 "$1" 2>/dev/null | tr -dc '0-9'; }

# stop_pid PID TIMEOUT_SECONDS: SIGTERM, wait, then SIGKILL.
stop_pid() {
  local pid="$1" timeout_s="$2"
  pid_running "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + timeout_s))
  while pid_running "$pid"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      warn "process $pid did not exit after ${timeout_s}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.2
      break
    fi
    sleep 0.1
  done
}

# stop_system_daemons OSUSER COMMAND_NAME...: stop processes that a Debian
# package's own service started (they run as that package's system user, not
# as ours). Best effort: `service NAME stop` is not used because there is no
# init system; the processes are signalled by pid.
stop_system_daemons() {
  local osuser="$1"
  shift
  getent passwd "$osuser" >/dev/null 2>&1 || return 0
  local name pids
  for name in "$@"; do
    pids="$(pgrep -u "$osuser" -x "$name" 2>/dev/null || true)"
    [ -z "$pids" ] && continue
    warn "stopping the Debian-started $name (user $osuser, pid(s) $(echo "$pids" | tr '\n' ' '))"
    local p
    for p in $pids; do stop_pid "$p" 15; done
  done
}

# usage_exit SCRIPT COMMANDS
usage_exit() {
  echo "usage: $1 {$2}" >&2
  exit 2
}

# python311: prints a Python 3.11 interpreter with a working venv module,
# installing Debian's python3 and python3-venv (3.11 on Debian 12) if none.
python311() {
  local c
  for _ in 1 2; do
    for c in python3.11 python3 /usr/bin/python3.11 /usr/bin/python3; do
      command -v "$c" >/dev/null 2>&1 || continue
      if "$c" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null; then
        command -v "$c"
        return 0
      fi
    done
    apt_install_once python3 python3-venv >&2
  done
  die "no Python 3.11 with the venv module (tried python3.11, python3; installed python3 python3-venv)"
}
