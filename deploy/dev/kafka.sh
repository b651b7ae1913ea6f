#!/usr/bin/env bash
# A single-node Apache Kafka 4.1.1 (KRaft, broker and controller in one JVM)
# on 127.0.0.1 for tests and CI, without Docker. The jars come from Maven
# Central once into PALAI_DEV_CACHE (see lib/jvm-service.sh).
#
#   kafka.sh fetch
#   kafka.sh start [--port N] [--controller-port N] [--dir DIR] [--keep-data]
#   kafka.sh stop|kill|status [--port N] [--dir DIR]
#
# --port (PALAI_KAFKA_PORT, default 9092) is the client listener;
# --controller-port (PALAI_KAFKA_CONTROLLER_PORT, default port+1) the KRaft
# controller's. --dir (PALAI_KAFKA_DIR, default $TMPDIR/palai-dev-kafka-PORT)
# holds the config, data, log and pid file. `start` formats fresh storage
# unless --keep-data, which keeps the topics and offsets of the last run.
# `stop` is SIGTERM (a clean shutdown), `kill` is SIGKILL (a crash); `fetch`
# only downloads the jars. `start` waits until a metadata request answers
# (through kafkajs when node_modules has it, else the broker's "started" line).
# PALAI_KAFKA_JAVA_OPTS replaces the default heap and GC options.
set -euo pipefail
service=kafka
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/jvm-service.sh"

version=4.1.1
jars=$dev_cache/kafka-$version
command=${1:-}
[ $# -gt 0 ] && shift

port=${PALAI_KAFKA_PORT:-9092}
controller_port=${PALAI_KAFKA_CONTROLLER_PORT:-}
dir=${PALAI_KAFKA_DIR:-}
keep_data=0
while [ $# -gt 0 ]; do
  case $1 in
    --port) port=$2; shift 2 ;;
    --controller-port) controller_port=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --keep-data) keep_data=1; shift ;;
    *) die "unknown option $1" ;;
  esac
done
controller_port=${controller_port:-$((port + 1))}
dir=${dir:-${TMPDIR:-/tmp}/palai-dev-kafka-$port}
service="kafka :$port"
config=$dir/server.properties
log=$dir/kafka.log
pidfile=$dir/kafka.pid

repo_root=$(cd "$here/../.." && pwd)
answers() {
  port_open "$port" || return 1
  # A metadata request through kafkajs when the repository's node_modules has
  # it; otherwise the broker's own "started" line.
  if [ -f "$repo_root/node_modules/kafkajs/package.json" ] && command -v node >/dev/null 2>&1; then
    node "$here/kafka-ready.mjs" "127.0.0.1:$port" </dev/null
  else
    grep -q 'Kafka Server started' "$log" 2>/dev/null
  fi
}

write_config() {
  cat >"$config" <<EOF
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
controller.quorum.bootstrap.servers=127.0.0.1:$controller_port
log.dirs=$dir/data
# One node: every internal topic has one replica.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# Fewer internal partitions and no join delay: a test's first consumer group is ready in a moment.
offsets.topic.num.partitions=4
transaction.state.log.num.partitions=4
group.initial.rebalance.delay.ms=0
group.coordinator.append.linger.ms=0
num.partitions=1
# After a crash the restarted broker cannot register until its old session
# expires (9 s by default); 4 s keeps kill-and-start tests quick.
broker.session.timeout.ms=4000
broker.heartbeat.interval.ms=1000
# The cleaner's default 128 MB buffer does not fit a 256 MB heap.
log.cleaner.dedupe.buffer.size=8388608
# Few threads: this broker serves tests on a small machine.
num.network.threads=2
num.io.threads=2
background.threads=2
num.recovery.threads.per.data.dir=1
EOF
  cat >"$dir/log4j2.properties" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.clients.name = org.apache.kafka.clients
logger.clients.level = WARN
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
EOF
}

# A small heap, the serial collector and C1 only: little memory and CPU on a
# two-core machine, at some cost in throughput tests do not need.
read -ra java_opts <<<"${PALAI_KAFKA_JAVA_OPTS:--Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError}"
java_opts+=(-Djava.awt.headless=true "-Dlog4j2.configurationFile=$dir/log4j2.properties")

fetch() {
  fetch_jars "$jars" org.apache.kafka:kafka_2.13:$version org.apache.logging.log4j:log4j-slf4j-impl:2.24.3
}

start() {
  already_started "PLAINTEXT://127.0.0.1:$port," && return 0
  local pid
  local p
  for p in "$port" "$controller_port"; do
    if port_open "$p"; then
      ss -ltnpH "sport = :$p" >&2 2>/dev/null || true
      die "port $p is already in use on 127.0.0.1"
    fi
  done
  fetch

  local started=$SECONDS
  cds_options "kafka-$version" "$dir"
  if [ "$keep_data" = 1 ] && [ -f "$dir/data/meta.properties" ]; then
    write_config
    echo "==== start (data kept) $(date -Is)" >>"$log"
  else
    rm -rf "$dir/data"
    write_config
    echo "==== start (fresh) $(date -Is)" >"$log"
    # 16 random bytes, base64url without padding, make a cluster id; like
    # Kafka's own, never one starting with "-", which would read as an option.
    local cluster_id=-
    while [[ $cluster_id == -* ]]; do
      cluster_id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
    done
    if ! java "${java_opts[@]}" "${cds_use[@]}" -cp "$jars/*" kafka.tools.StorageTool format --standalone \
      -t "$cluster_id" -c "$config" </dev/null >>"$log" 2>&1 8>&-; then
      log_tail "$log"
      die "formatting the storage failed"
    fi
  fi
  java "${java_opts[@]}" "${cds_use[@]}" "${cds_dump[@]}" -cp "$jars/*" kafka.Kafka "$config" </dev/null >>"$log" 2>&1 8>&- &
  pid=$!
  echo "$pid" >"$pidfile"
  watch_owner "$pid" 8>&-
  wait_ready "$pid" "$log" answers
  say "ready on 127.0.0.1:$port in $((SECONDS - started)) s (pid $pid, dir $dir)"
}

case $command in
  fetch) fetch ;;
  start) start ;;
  stop) stop_service stop ;;
  kill) stop_service kill ;;
  status) service_status ;;
  *) echo "usage: $0 fetch|start|stop|kill|status [--port N] [--controller-port N] [--dir DIR] [--keep-data]" >&2; exit 2 ;;
esac
