#!/usr/bin/env bash
# The message brokers the queue tests use, started side by side: Kafka on
# 127.0.0.1:9092 (controller 9093) and ElasticMQ on 127.0.0.1:9324 (the ports
# follow PALAI_KAFKA_PORT, PALAI_KAFKA_CONTROLLER_PORT, PALAI_ELASTICMQ_PORT).
#
#   brokers.sh start    fetch the jars if needed, start both, wait until both
#                       answer, then print on stdout the variables tests read:
#                         PALAI_TEST_KAFKA_BROKERS=127.0.0.1:9092
#                         PALAI_TEST_SQS_ENDPOINT=http://127.0.0.1:9324
#                       (progress goes to stderr, so `export $(brokers.sh start)` works)
#   brokers.sh fetch    only download the jars (CI does it while npm ci runs)
#   brokers.sh stop|status
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kafka_port=${PALAI_KAFKA_PORT:-9092}
elasticmq_port=${PALAI_ELASTICMQ_PORT:-9324}

# Runs the command on both, in parallel; fails when either fails.
both() {
  local kafka_status=0 elasticmq_status=0
  bash "$here/kafka.sh" "$@" &
  local kafka=$!
  bash "$here/elasticmq.sh" "$@" &
  local elasticmq=$!
  wait "$kafka" || kafka_status=$?
  wait "$elasticmq" || elasticmq_status=$?
  return $((kafka_status ? kafka_status : elasticmq_status))
}

case ${1:-} in
  start)
    # One that started stays up when the other fails; `stop` (or CI's trap) ends it.
    both start || { echo "brokers: start failed" >&2; exit 1; }
    echo "PALAI_TEST_KAFKA_BROKERS=127.0.0.1:$kafka_port"
    echo "PALAI_TEST_SQS_ENDPOINT=http://127.0.0.1:$elasticmq_port"
    ;;
  fetch) both fetch ;;
  stop) both stop ;;
  status) both status ;;
  *) echo "usage: $0 fetch|start|stop|status" >&2; exit 2 ;;
esac
