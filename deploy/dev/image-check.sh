#!/usr/bin/env bash
# Builds deploy/Dockerfile, unchanged, and runs the image, on a machine with no
# Docker engine and no Docker Hub: Debian's podman builds it on a stand-in for
# the base image (node:24-bookworm-slim), made with debootstrap and this
# machine's Node.js. Then it checks the running image: /healthz, /readyz, the
# image's HEALTHCHECK command, the non-root user, one response from the fake
# model, on the embedded store and (when it answers) on the local PostgreSQL;
# and prints the image's size and the times taken. Exits non-zero on any failure.
#
# Root only: it installs Debian packages, runs debootstrap and rootful podman.
# It leaves the image and podman's layer cache (a second run builds from cache)
# and the base under the cache dir; it removes its containers and its database.
#
# Settings (environment):
#   PALAI_IMAGE_BASE_CACHE  where the base's root filesystem tarball is kept
#                           (default /var/cache/palai-image-base)
#   PALAI_IMAGE_TAG         the built image (default localhost/palai:image-check)
#   PALAI_IMAGE_NPM         npm in the base (default: the npm this machine runs, 11.x beside Node.js 24)
#   PALAI_IMAGE_MIRROR      Debian mirror for debootstrap (default: this machine's apt source)
#   PALAI_IMAGE_POSTGRES    auto (default: when PostgreSQL answers), 1 (must), 0 (skip)
#   PALAI_IMAGE_NO_CACHE=1  build without podman's layer cache
#   PGHOST, PGPORT, PGUSER  the local PostgreSQL (127.0.0.1, 5432, postgres; trust auth)
set -euo pipefail
cd "$(dirname "$0")/../.."

say() { echo "image-check: $*" >&2; }
die() { say "FAILED: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (apt-get, debootstrap and rootful podman)"

cache=${PALAI_IMAGE_BASE_CACHE:-/var/cache/palai-image-base}
tag=${PALAI_IMAGE_TAG:-localhost/palai:image-check}
npm_version=${PALAI_IMAGE_NPM:-$(npm -v)}
pg_mode=${PALAI_IMAGE_POSTGRES:-auto}
pg_host=${PGHOST:-127.0.0.1}
pg_port=${PGPORT:-5432}
pg_user=${PGUSER:-postgres}
# The README's demo key: the containers below listen on 127.0.0.1 only.
demo_key=palai_sk_local_demo_key

# The base the Dockerfile names (ARG NODE_IMAGE=node:24-bookworm-slim):
# its Node.js line (24, or a minor such as 24.22) and Debian suite (bookworm) drive the stand-in.
node_image=$(sed -n 's/^ARG NODE_IMAGE=//p' deploy/Dockerfile)
[[ $node_image =~ ^node:([0-9]+(\.[0-9]+)?)-([a-z]+)-slim$ ]] ||
  die "deploy/Dockerfile's NODE_IMAGE ($node_image) is not node:X[.Y]-SUITE-slim"
node_line=${BASH_REMATCH[1]}
suite=${BASH_REMATCH[3]}
base_ref=docker.io/library/$node_image

t_start=$SECONDS
declare -a timings=()
took() { timings+=("$(printf '%-32s %4ss' "$1" "$2")"); }

# ---- cleanup: only what this run made ----
work=$(mktemp -d /tmp/palai-image-check.XXXXXX)
containers=()
database=
base_tmp=
image_mounted=
cleanup() {
  local c
  for c in "${containers[@]}"; do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  if [ -n "$database" ]; then
    psql -h "$pg_host" -p "$pg_port" -U "$pg_user" -d postgres -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 ||
      say "could not drop database $database"
  fi
  if [ -n "$image_mounted" ]; then podman image unmount "$tag" >/dev/null 2>&1 || true; fi
  if [ -n "$base_tmp" ] && [ -d "$base_tmp" ]; then
    # A failed debootstrap can leave /proc or /sys mounted inside its target.
    findmnt -rn -o TARGET | grep "^$base_tmp/" | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
    rm -rf --one-file-system "$base_tmp"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- 1. packages ----
# podman builds (it embeds buildah); runc because crun 1.8 refuses this
# machine's hybrid cgroups ("cgroups in hybrid mode not supported").
t=$SECONDS
need=()
for pkg in podman runc debootstrap curl; do command -v "$pkg" >/dev/null 2>&1 || need+=("$pkg"); done
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"; } >"$work/apt.log" 2>&1 ||
    { tail -n 30 "$work/apt.log" >&2; die "apt-get install ${need[*]}"; }
fi
took "packages" $((SECONDS - t))

# This machine's root cannot raise rlimits, and podman's defaults for root
# (nofile 1048576, nproc 4194304) are above the hard limits: every container
# then fails with "setrlimit RLIMIT_NOFILE: Operation not permitted". Ask for
# what the process may have (conmon runs with nproc 32768 at most).
nofile=$(ulimit -Hn); nproc=$(ulimit -Hu)
[ "$nofile" = unlimited ] && nofile=1048576
{ [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; } && nproc=32768
limits=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")
pm() { podman --runtime runc "$@"; }

# ---- 2. the stand-in base image ----
# Like the official one: Debian minbase without docs, node at /usr/local/bin
# with its headers, npm (the version Node.js bundles, from the npm registry) and
# corepack beside it, and a `node` user, uid/gid 1000, home /home/node.
# No ca-certificates: Node.js carries its own roots, as in the official image.
t=$SECONDS
node_bin=$(readlink -f "$(command -v node)") || die "Node.js $node_line is needed on this machine"
node_version=$("$node_bin" -v)
[[ $node_version == "v$node_line."* ]] || die "this machine's Node.js is $node_version, the Dockerfile's base is $node_line"
node_prefix=$(dirname "$(dirname "$node_bin")")
key=node-${node_version#v}-npm-$npm_version-$suite-1
base_tar=$cache/$key.tar

make_base_tar() {
  local mirror=${PALAI_IMAGE_MIRROR:-}
  if [ -z "$mirror" ]; then
    # The first Debian archive this machine's apt uses (deb822 or one-line format).
    mirror=$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | grep -v '^[[:space:]]*#' |
      grep -oE 'https?://[^ ]+/debian/?( |$)' | grep -v security | head -n 1 | tr -d ' ') || true
    mirror=${mirror:-http://deb.debian.org/debian}
  fi
  base_tmp=$(mktemp -d "$cache/tmp.XXXXXX")
  local root=$base_tmp/rootfs
  say "debootstrap $suite from $mirror (once, a few minutes)"
  debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$base_tmp/debootstrap.log" 2>&1 ||
    { tail -n 30 "$base_tmp/debootstrap.log" >&2; die "debootstrap"; }
  chroot "$root" groupadd --gid 1000 node
  chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  # What debian:*-slim leaves out, and apt's caches.
  rm -rf "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* \
    "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* "$root"/usr/share/lintian
  find "$root/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  install -D -m 755 "$node_bin" "$root/usr/local/bin/node"
  ln -s node "$root/usr/local/bin/nodejs"
  if [ -d "$node_prefix/include/node" ]; then
    mkdir -p "$root/usr/local/include" && cp -a "$node_prefix/include/node" "$root/usr/local/include/"
  fi
  mkdir -p "$root/usr/local/lib/node_modules/npm"
  (cd "$base_tmp" && npm pack "npm@$npm_version" --silent >/dev/null) || die "npm pack npm@$npm_version"
  tar -xzf "$base_tmp/npm-$npm_version.tgz" -C "$root/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  if [ -d "$node_prefix/lib/node_modules/corepack" ]; then
    cp -a "$node_prefix/lib/node_modules/corepack" "$root/usr/local/lib/node_modules/"
    ln -s ../lib/node_modules/corepack/dist/corepack.js "$root/usr/local/bin/corepack"
  fi
  # node and npm must run in there, with none of this machine's environment.
  chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin sh -c 'node -v && npm -v && npx -v' >/dev/null ||
    die "node or npm does not run in the base's root filesystem"
  tar --numeric-owner -C "$root" -cf "$base_tmp/base.tar" .
  mv "$base_tmp/base.tar" "$base_tar"
  rm -rf --one-file-system "$base_tmp"
  base_tmp=
}

mkdir -p "$cache"
# Concurrent runs wait here; the tarball is renamed into place when complete.
exec 9>"$cache/.lock"
flock 9
if [ ! -f "$base_tar" ]; then make_base_tar; fi
# Import unless this very tarball is already the local $base_ref.
base_id=$(podman image inspect --format '{{.Id}}' "$base_ref" 2>/dev/null) || base_id=
if [ -z "$base_id" ] || [ "$base_id" != "$(cat "$cache/$key.id" 2>/dev/null)" ]; then
  say "importing $base_ref from $base_tar"
  podman import -q \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=${node_version#v}" \
    --change 'CMD ["node"]' \
    "$base_tar" "$base_ref" >/dev/null
  podman image inspect --format '{{.Id}}' "$base_ref" >"$cache/$key.id"
fi
exec 9>&-
took "base image" $((SECONDS - t))

# ---- 3. build, the Dockerfile unchanged ----
# This machine reaches the npm registry through a TLS-inspecting proxy whose CA
# is in the system bundle (host npm's cafile): the build's `npm ci` gets it
# through a global npmrc mounted at /usr/local/etc for the RUN steps only (an
# empty directory in the image, and still empty in the result).
t=$SECONDS
build=(build --format docker --pull=never "${limits[@]}" -f deploy/Dockerfile -t "$tag")
[ "${PALAI_IMAGE_NO_CACHE:-0}" = 1 ] && build+=(--no-cache)
cafile=$(npm config get cafile 2>/dev/null || true)
[ -f "$cafile" ] || cafile=/etc/ssl/certs/ca-certificates.crt
if [ -f "$cafile" ]; then
  mkdir -p "$work/npm-etc"
  cp "$cafile" "$work/npm-etc/ca.crt"
  echo 'cafile=/usr/local/etc/ca.crt' >"$work/npm-etc/npmrc"
  build+=(-v "$work/npm-etc:/usr/local/etc:ro")
fi
say "podman build -f deploy/Dockerfile -t $tag ."
# HEALTHCHECK needs the docker format (OCI drops it); --pull=never: no Docker Hub.
pm "${build[@]}" . 2>&1 | grep -v '^npm notice' || die "podman build (see above)"
took "build" $((SECONDS - t))

# The image as the Dockerfile says: user node, the HEALTHCHECK kept.
[ "$(podman image inspect --format '{{.Config.User}}' "$tag")" = node ] || die "the image's user is not node"
[[ $(podman image inspect "$tag") == *'"Healthcheck"'* ]] || die "the image has no HEALTHCHECK"

# ---- 4. run ----
# --health-interval=disable: podman would put the HEALTHCHECK on a systemd
# timer, and there is no systemd here; `podman healthcheck run` runs it by hand.
run=(run -d "${limits[@]}" --health-interval=disable -e "PALAI_BOOTSTRAP_API_KEY=$demo_key")

wait_healthy() { # ADMIN_ADDR CONTAINER SECONDS
  local i
  for ((i = 0; i < $3 * 4; i++)); do
    curl -sf -o /dev/null "http://$1/healthz" && return 0
    [ "$(podman inspect --format '{{.State.Running}}' "$2")" = true ] || break
    sleep 0.25
  done
  podman logs "$2" 2>&1 | tail -n 30 >&2
  die "$2: /healthz did not answer 200"
}

check_running() { # CONTAINER API_ADDR ADMIN_ADDR STORE
  local c=$1 api=$2 admin=$3 out
  out=$(curl -sf "http://$admin/readyz") || die "$c: /readyz did not answer 200"
  [[ $out == *"\"store\":\"$4\""* ]] || die "$c: /readyz says $out, not store $4"
  [ "$(podman exec "$c" id -u)" = 1000 ] || die "$c: not running as uid 1000"
  [ "$(podman top "$c" user | tail -n +2 | sort -u)" = node ] || die "$c: a process is not the node user"
  podman healthcheck run "$c" >"$work/hc.log" 2>&1 || { cat "$work/hc.log" >&2; die "$c: the image's HEALTHCHECK failed"; }
  curl -sf "http://$api/v1/agents" -H "Authorization: Bearer $demo_key" -H 'Content-Type: application/json' \
    -d '{"name":"echo","model":{"provider":"fake"}}' >/dev/null || die "$c: creating the agent failed"
  out=$(curl -sf "http://$api/v1/responses" -H "Authorization: Bearer $demo_key" -H 'Content-Type: application/json' \
    -d '{"model":"echo","input":"Hello, Palai"}') || die "$c: creating the response failed"
  out=$(node -e 'const r = JSON.parse(process.argv[1]); console.log(r.status, r.output_text)' "$out")
  [ "$out" = "completed Hello, Palai" ] || die "$c: the fake model's response was: $out"
  say "$c: /healthz, /readyz ($4), HEALTHCHECK, uid 1000 and a fake-model response: ok"
}

stop_container() { # CONTAINER: SIGTERM, and a clean exit
  local code
  pm stop -t 30 "$1" >/dev/null 2>&1 || die "$1: podman stop"
  code=$(podman inspect --format '{{.State.ExitCode}}' "$1")
  [ "$code" = 0 ] || { podman logs "$1" 2>&1 | tail -n 20 >&2; die "$1: exited $code on SIGTERM"; }
}

# Embedded store, published on loopback ports podman picks (no clash with anything listening).
t=$SECONDS
c=palai-image-check-$$-embedded
containers+=("$c")
pm "${run[@]}" --name "$c" -p 127.0.0.1::8080 -p 127.0.0.1::9090 "$tag" >/dev/null 2>"$work/run.log" ||
  { cat "$work/run.log" >&2; die "podman run (embedded store)"; }
api=$(podman port "$c" 8080/tcp); admin=$(podman port "$c" 9090/tcp)
wait_healthy "$admin" "$c" 180
took "embedded: start to /healthz" $((SECONDS - t))
check_running "$c" "$api" "$admin" pglite
stop_container "$c"

# PostgreSQL: it listens on loopback only, so host networking, on free ports,
# with HOST=127.0.0.1 and a read-only root filesystem (nothing is written).
if [ "$pg_mode" != 0 ]; then
  if command -v pg_isready >/dev/null && command -v psql >/dev/null && pg_isready -q -h "$pg_host" -p "$pg_port"; then
    t=$SECONDS
    database=palai_image_check_$$
    psql -h "$pg_host" -p "$pg_port" -U "$pg_user" -d postgres -qc "CREATE DATABASE $database" >/dev/null
    url=postgres://$pg_user@$pg_host:$pg_port/$database
    pm run --rm "${limits[@]}" --network host -e "PALAI_DATABASE_URL=$url" "$tag" migrate >"$work/migrate.log" 2>&1 ||
      { cat "$work/migrate.log" >&2; die "migrate in the image"; }
    free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }
    port=$(free_port); admin_port=$(free_port)
    c=palai-image-check-$$-postgres
    containers+=("$c")
    pm "${run[@]}" --name "$c" --network host --read-only -e "PALAI_DATABASE_URL=$url" \
      -e HOST=127.0.0.1 -e "PORT=$port" -e "PALAI_ADMIN_PORT=$admin_port" "$tag" >/dev/null 2>"$work/run.log" ||
      { cat "$work/run.log" >&2; die "podman run (PostgreSQL)"; }
    wait_healthy "127.0.0.1:$admin_port" "$c" 60
    check_running "$c" "127.0.0.1:$port" "127.0.0.1:$admin_port" postgres
    stop_container "$c"
    took "postgres: migrate, run, checks" $((SECONDS - t))
  elif [ "$pg_mode" = 1 ]; then
    die "PostgreSQL does not answer on $pg_host:$pg_port (PALAI_IMAGE_POSTGRES=1)"
  else
    say "PostgreSQL does not answer on $pg_host:$pg_port: its check is skipped"
  fi
fi

# ---- 5. sizes ----
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
echo
echo "image $tag: $(mb "$(podman image inspect --format '{{.Size}}' "$tag")") (layers, unpacked); base $base_ref: $(mb "$(podman image inspect --format '{{.Size}}' "$base_ref")")"
echo "layers with content (podman history):"
podman history --no-trunc --format '{{.Size}}|{{.CreatedBy}}' "$tag" | awk -F'|' '$1 != "0 B" { printf "  %10s  %.90s\n", $1, $2 }'
root=$(podman image mount "$tag"); image_mounted=1
echo "unpacked runtime filesystem: $(mb "$(du -sb "$root" | cut -f1)") ($(du -sh "$root" | cut -f1) on disk)"
for d in app/node_modules app/dist usr/local/bin/node usr/local/include usr/local/lib/node_modules; do
  if [ -e "$root/$d" ]; then printf '  %-28s %s\n' "/$d" "$(mb "$(du -sb "$root/$d" | cut -f1)")"; fi
done
podman image unmount "$tag" >/dev/null; image_mounted=
# What a registry would hold: the layers gzipped, as a push writes them.
pm push -q --compression-format gzip "$tag" "oci:$work/oci:palai" >/dev/null 2>&1 || die "podman push to an OCI layout"
node -e '
  const fs = require("fs"), dir = process.argv[1];
  const blob = (d) => JSON.parse(fs.readFileSync(`${dir}/blobs/sha256/${d.split(":")[1]}`));
  const layers = blob(JSON.parse(fs.readFileSync(`${dir}/index.json`)).manifests[0].digest).layers;
  const mb = (n) => (n / 1e6).toFixed(1) + " MB";
  console.log(`gzipped layers: ${mb(layers.reduce((s, l) => s + l.size, 0))} (base ${mb(layers[0].size)}, the rest ${mb(layers.slice(1).reduce((s, l) => s + l.size, 0))})`);
' "$work/oci"

echo
echo "times:"
printf '  %s\n' "${timings[@]}"
printf '  %-32s %4ss\n' "total" $((SECONDS - t_start))
echo "image-check: ok"
