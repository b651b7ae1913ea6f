#!/usr/bin/env bash
# ElasticMQ 1.7.1, an Amazon SQS-compatible server, on 127.0.0.1 for tests and
# CI, without Docker. The jars come from Maven Central once into
# PALAI_DEV_CACHE (see lib/jvm-service.sh), apart from Kafka's: the two need
# different Scala library versions.
#
#   elasticmq.sh fetch
#   elasticmq.sh start [--port N] [--dir DIR] [--persist] [--keep-data]
#   elasticmq.sh stop|kill|status [--port N] [--dir DIR]
#
# --port (PALAI_ELASTICMQ_PORT, default 9324) serves the SQS API (JSON and
# query protocols); --dir (PALAI_ELASTICMQ_DIR, default
# $TMPDIR/palai-dev-elasticmq-PORT) holds the config, log and pid file.
# Queues are created at runtime by the clients (CreateQueue), FIFO and
# redrive policies included. By default everything lives in memory; with
# --persist (PALAI_ELASTICMQ_PERSIST=1) queues and messages are written to
# DIR, and --keep-data starts from what the last run left there.
# PALAI_ELASTICMQ_JAVA_OPTS replaces the default heap and GC options.
set -euo pipefail
service=elasticmq
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/jvm-service.sh"

version=1.7.1
jars=$dev_cache/elasticmq-$version
command=${1:-}
[ $# -gt 0 ] && shift

port=${PALAI_ELASTICMQ_PORT:-9324}
dir=${PALAI_ELASTICMQ_DIR:-}
persist=${PALAI_ELASTICMQ_PERSIST:-0}
keep_data=0
while [ $# -gt 0 ]; do
  case $1 in
    --port) port=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --persist) persist=1; shift ;;
    --keep-data) keep_data=1; shift ;;
    *) die "unknown option $1" ;;
  esac
done
dir=${dir:-${TMPDIR:-/tmp}/palai-dev-elasticmq-$port}
service="elasticmq :$port"
config=$dir/elasticmq.conf
log=$dir/elasticmq.log
pidfile=$dir/elasticmq.pid

answers() {
  curl -sf -m 2 -o /dev/null "http://127.0.0.1:$port/?Action=ListQueues"
}

write_config() {
  local storage='enabled = false'
  if [ "$persist" = 1 ]; then storage='enabled = true'; fi
  cat >"$config" <<EOF
include classpath("application.conf")

# Queue URLs name this address, so clients on this machine can use them as they are.
node-address {
  protocol = http
  host = "127.0.0.1"
  port = $port
  context-path = ""
}
generate-node-address = false

rest-sqs {
  enabled = true
  bind-port = $port
  bind-hostname = "127.0.0.1"
  sqs-limits = strict
}

# No predefined queues: tests create theirs (standard, FIFO, with DLQs).
queues {}

queues-storage {
  $storage
  path = "$dir/queues.conf"
}

messages-storage {
  $storage
  uri = "jdbc:h2:$dir/messages"
}

aws {
  region = "elasticmq"
  accountId = "000000000000"
}
EOF
}

# A small heap, the serial collector and C1 only: little memory and CPU on a
# two-core machine.
read -ra java_opts <<<"${PALAI_ELASTICMQ_JAVA_OPTS:--Xms32m -Xmx192m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError}"
java_opts+=(-Djava.awt.headless=true "-Dconfig.file=$config")

fetch() {
  fetch_jars "$jars" org.elasticmq:elasticmq-server_2.13:$version
}

start() {
  already_started "bind-port = $port\$" && return 0
  local pid
  if port_open "$port"; then
    ss -ltnpH "sport = :$port" >&2 2>/dev/null || true
    die "port $port is already in use on 127.0.0.1"
  fi
  fetch

  local started=$SECONDS
  if [ "$keep_data" = 1 ]; then
    echo "==== start (data kept) $(date -Is)" >>"$log"
  else
    rm -f "$dir/queues.conf" "$dir"/messages.*.db
    echo "==== start (fresh) $(date -Is)" >"$log"
  fi
  write_config
  cds_options "elasticmq-$version" "$dir"
  java "${java_opts[@]}" "${cds_use[@]}" "${cds_dump[@]}" -cp "$jars/*" org.elasticmq.server.Main </dev/null >>"$log" 2>&1 8>&- &
  pid=$!
  echo "$pid" >"$pidfile"
  watch_owner "$pid" 8>&-
  wait_ready "$pid" "$log" answers
  say "ready on http://127.0.0.1:$port in $((SECONDS - started)) s (pid $pid, dir $dir)"
}

case $command in
  fetch) fetch ;;
  start) start ;;
  stop) stop_service stop ;;
  kill) stop_service kill ;;
  status) service_status ;;
  *) echo "usage: $0 fetch|start|stop|kill|status [--port N] [--dir DIR] [--persist] [--keep-data]" >&2; exit 2 ;;
esac
