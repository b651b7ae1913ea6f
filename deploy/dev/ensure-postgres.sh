#!/usr/bin/env bash
# Makes sure the local PostgreSQL the tests use answers on 127.0.0.1:5432,
# starting the machine's cluster when it is installed but stopped.
set -euo pipefail
host=${PGHOST:-127.0.0.1}
port=${PGPORT:-5432}

if pg_isready -q -h "$host" -p "$port"; then
  exit 0
fi
if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  echo "starting PostgreSQL $version"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
fi
for _ in $(seq 1 30); do
  pg_isready -q -h "$host" -p "$port" && exit 0
  sleep 1
done
echo "PostgreSQL is not answering on $host:$port" >&2
exit 1
