#!/usr/bin/env bash
# Start, stop or describe several test services at once.
#   all.sh start [names...]    install if missing, start if not running, then
#                              print the env lines of those services (stdout)
#   all.sh stop [names...]     stop them
#   all.sh restart [names...]
#   all.sh status [names...]   one line each; exit 1 if any is not running
#   all.sh env [names...]      print `export ...` lines (starts nothing), e.g.
#                              eval "$(scripts/services/all.sh env)"
# names: postgres pgbouncer rabbitmq minio prometheus jaeger python kserve kube chromium cluster keycloak (default: all of them).
# Logs go to stderr, env lines to stdout.
set -euo pipefail
SERVICE_NAME=all
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ALL_SERVICES=(postgres pgbouncer rabbitmq minio prometheus jaeger python kserve kube chromium cluster keycloak)

usage() {
  echo "usage: $0 {start|stop|restart|status|env} [$(echo "${ALL_SERVICES[@]}" | tr ' ' '|')]..." >&2
  exit 2
}

[ $# -ge 1 ] || usage
cmd="$1"
shift
names=("$@")
[ ${#names[@]} -gt 0 ] || names=("${ALL_SERVICES[@]}")
# Also accept one space- or comma-separated argument (make SERVICES="a b").
read -r -a names <<<"$(echo "${names[*]}" | tr ',' ' ')"
for n in "${names[@]}"; do
  case " ${ALL_SERVICES[*]} " in
    *" $n "*) ;;
    *) die "unknown service '$n' (known: ${ALL_SERVICES[*]})" ;;
  esac
done

svc() {
  local name="$1"
  shift
  bash "$SERVICES_LIB_DIR/$name.sh" "$@"
}

# start_all ACTION: ACTION (start or restart) each service; the Python tools'
# setups and Keycloak in the background meanwhile: they need nothing the others
# install, and on a cold machine their downloads and Keycloak's first start
# overlap the others' builds.
start_all() {
  local action="$1" n pids=() labels=() i
  for n in "${names[@]}"; do
    case "$n" in
      python | kserve) svc "$n" setup & ;;
      keycloak) svc keycloak "$action" & ;;
      *) continue ;;
    esac
    pids+=("$!")
    labels+=("$n")
  done
  for n in "${names[@]}"; do
    case "$n" in python | kserve | keycloak) ;; *) svc "$n" "$action" ;; esac
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || die "${labels[$i]} failed to start (see its log above)"
  done
  for n in "${names[@]}"; do svc "$n" env; done
}

case "$cmd" in
  start) start_all start ;;
  stop)
    rc=0
    for n in "${names[@]}"; do
      case "$n" in python | kserve) continue ;; esac
      svc "$n" stop || rc=1
    done
    exit "$rc"
    ;;
  restart) start_all restart ;;
  status)
    rc=0
    for n in "${names[@]}"; do svc "$n" status || rc=1; done
    exit "$rc"
    ;;
  env)
    for n in "${names[@]}"; do svc "$n" env; done
    ;;
  *) usage ;;
esac
