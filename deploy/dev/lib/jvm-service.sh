# Shared by kafka.sh and elasticmq.sh (sourced, not run): fetching a JVM
# service's jars from Maven Central into a cache outside the repository, and
# running it as one background process tracked by a pid file.
#
# Settings (environment):
#   PALAI_DEV_CACHE            jar cache            (default ~/.cache/palai-dev)
#   PALAI_MAVEN_REPO           Maven local repo     (default ~/.m2/repository)
#   PALAI_BROKER_START_TIMEOUT seconds to wait for "ready"        (default 90)
#   PALAI_BROKER_STOP_GRACE    seconds between SIGTERM and SIGKILL (default 15)
#   PALAI_BROKER_OWNER_PID     when set, the service is killed once this
#                              process is gone (tests use it so a killed test
#                              run leaves no JVM behind)
#   PALAI_DEV_CDS=0            no class data sharing archive (see cds_options)

dev_cache=${PALAI_DEV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/palai-dev}
maven_repo=${PALAI_MAVEN_REPO:-$HOME/.m2/repository}
start_timeout=${PALAI_BROKER_START_TIMEOUT:-90}
stop_grace=${PALAI_BROKER_STOP_GRACE:-15}

say() { echo "$service: $*" >&2; }
die() { say "$*"; exit 1; }

# fetch_jars DIR COORD... — the runtime classpath of the given Maven
# coordinates (group:artifact:version) into DIR, once. Concurrent callers
# wait on a lock; the download goes to a temp dir renamed into place, so DIR
# either is complete or does not exist.
fetch_jars() {
  local dir=$1; shift
  [ -d "$dir" ] && return 0
  command -v mvn >/dev/null 2>&1 || die "mvn is not installed; it fetches the jars into $dir"
  mkdir -p "$dev_cache"
  (
    if command -v flock >/dev/null 2>&1; then
      exec 9>"$dir.lock"
      flock 9
    fi
    [ -d "$dir" ] && exit 0
    local tmp
    tmp=$(mktemp -d "$dir.tmp.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    {
      echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
      echo '<groupId>palai.dev</groupId><artifactId>fetch</artifactId><version>0</version><packaging>pom</packaging><dependencies>'
      local coord g a v
      for coord in "$@"; do
        IFS=: read -r g a v <<<"$coord"
        echo "<dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version></dependency>"
      done
      echo '</dependencies></project>'
    } >"$tmp/pom.xml"
    say "fetching $* into $dir"
    local started=$SECONDS
    # The plugin version is pinned: an unpinned goal makes Maven resolve plugin metadata first.
    if ! mvn -q -B -f "$tmp/pom.xml" -Dmaven.repo.local="$maven_repo" \
      org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$tmp/jars" >"$tmp/mvn.log" 2>&1; then
      tail -n 30 "$tmp/mvn.log" >&2
      die "fetching the jars with Maven failed"
    fi
    mv -T "$tmp/jars" "$dir"
    say "fetched $(ls "$dir" | wc -l) jars in $((SECONDS - started)) s"
  ) || exit 1
}

# PID runs (a zombie does not count: an orphaned JVM may wait unreaped).
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  local state
  state=$(sed -E 's/^[0-9]+ \(.*\) (.).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 0
  [ "$state" != Z ]
}

# A TCP connect succeeds: something listens on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The pid in FILE when that process is alive and is this kind of service
# (its command line names MARKER), so a recycled pid is never signalled.
live_pid() {
  local file=$1 marker=$2 pid
  [ -f "$file" ] || return 1
  pid=$(cat "$file" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  alive "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$marker" || return 1
  echo "$pid"
}

log_tail() {
  local log=$1
  if [ -f "$log" ]; then
    echo "---- last lines of $log ----" >&2
    tail -n 40 "$log" >&2
    echo "----" >&2
  fi
}

# wait_ready PID LOG PROBE... — polls PROBE until it succeeds; fails with the
# log tail when the process dies or the timeout passes.
wait_ready() {
  local pid=$1 log=$2; shift 2
  local deadline=$((SECONDS + start_timeout))
  while :; do
    if ! alive "$pid"; then
      log_tail "$log"
      # A port free when probed may be taken before the JVM binds it: say so
      # last, where a caller choosing other ports looks.
      grep -q 'Address already in use' "$log" 2>/dev/null && die "exited during start (pid $pid): a port is already in use"
      die "exited during start (pid $pid)"
    fi
    "$@" && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      log_tail "$log"
      kill -KILL "$pid" 2>/dev/null || true
      die "not ready after ${start_timeout} s; killed pid $pid"
    fi
    sleep 0.25
  done
}

# already_started PORT_PATTERN — the start of `start`: takes the start lock (a
# second concurrent start waits, then finds the service up) and succeeds when
# the service in $dir already runs and answers; dies when it runs on another
# port (its $config has no line matching PORT_PATTERN). Uses the caller's
# $dir, $pidfile, $config and $log, and its `answers` probe.
already_started() {
  local port_pattern=$1 pid
  mkdir -p "$dir"
  exec 8>"$dir/start.lock"
  command -v flock >/dev/null 2>&1 && flock 8
  pid=$(live_pid "$pidfile" "$config") || { rm -f "$pidfile"; return 1; }
  grep -q -- "$port_pattern" "$config" || die "$dir already runs a server (pid $pid) on another port"
  wait_ready "$pid" "$log" answers
  say "already running (pid $pid)"
}

# stop_pid PID — SIGTERM, then SIGKILL after the grace period.
stop_pid() {
  local pid=$1 waited=0
  kill -TERM "$pid" 2>/dev/null || return 0
  while alive "$pid"; do
    if [ "$waited" -eq $((stop_grace * 10)) ]; then
      say "pid $pid ignored SIGTERM for ${stop_grace} s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
}

# Kills PID once PALAI_BROKER_OWNER_PID is gone; exits with PID. Its stdio is
# detached so a caller reading this script's output is not kept waiting.
watch_owner() {
  local pid=$1 owner=${PALAI_BROKER_OWNER_PID:-}
  [ -n "$owner" ] || return 0
  (
    while alive "$pid"; do
      if ! alive "$owner"; then
        kill -KILL "$pid" 2>/dev/null
        exit 0
      fi
      sleep 1
    done
  ) </dev/null >/dev/null 2>&1 &
}

# Class data sharing: the first clean stop of a service dumps the classes it
# loaded into an archive in the cache; later starts map that archive instead
# of loading and verifying every class again, which takes about a third off
# the CPU a start costs. The archive belongs to one JDK and one classpath (a
# mismatch only makes the JVM ignore it). Sets cds_use (for every JVM of the
# service) and cds_dump (for the long-running one).
cds_options() {
  local name=$1 state_dir=$2
  cds_use=() cds_dump=()
  [ "${PALAI_DEV_CDS:-1}" = 1 ] || return 0
  local jdk
  jdk=$(java -version 2>&1 | cksum | cut -d' ' -f1)
  local archive=$dev_cache/cds/$name-$jdk.jsa
  if [ -f "$archive" ]; then
    cds_use=("-XX:SharedArchiveFile=$archive")
  else
    rm -f "$state_dir/classes.jsa"
    echo "$archive" >"$state_dir/classes.jsa.target"
    # The dump lists every class it skips; that is not worth the broker's log.
    cds_dump=("-XX:ArchiveClassesAtExit=$state_dir/classes.jsa" '-Xlog:cds*=off')
  fi
}

# After a clean stop: the dumped archive into the cache, unless another
# process put one there first (copied beside it, then renamed: never half there).
cds_keep() {
  local state_dir=$1 target
  [ -s "$state_dir/classes.jsa" ] && [ -f "$state_dir/classes.jsa.target" ] || return 0
  target=$(cat "$state_dir/classes.jsa.target")
  if [ ! -f "$target" ]; then
    mkdir -p "$(dirname "$target")"
    cp "$state_dir/classes.jsa" "$target.tmp.$$" && mv -n "$target.tmp.$$" "$target"
    rm -f "$target.tmp.$$"
  fi
  rm -f "$state_dir/classes.jsa" "$state_dir/classes.jsa.target"
}

# The commands both services share. They read the caller's $pidfile and
# $config (the config path is on the JVM's command line, which tells this
# service's process from any other) and its `answers` probe.

# stop_service stop|kill — a clean shutdown, or SIGKILL at once (a crash).
stop_service() {
  local pid
  if pid=$(live_pid "$pidfile" "$config"); then
    if [ "$1" = kill ]; then
      kill -KILL "$pid" 2>/dev/null || true
      while alive "$pid"; do sleep 0.05; done
    else
      stop_pid "$pid"
      cds_keep "$(dirname "$config")"
    fi
    say "stopped (pid $pid)"
  else
    say "not running"
  fi
  rm -f "$pidfile"
}

# Exit 0 when running and answering, 1 when running but not answering, 3 when not running.
service_status() {
  local pid
  if ! pid=$(live_pid "$pidfile" "$config"); then
    say "not running"
    exit 3
  fi
  answers || { say "running (pid $pid) but not answering"; exit 1; }
  say "running (pid $pid, dir $(dirname "$config"))"
}
