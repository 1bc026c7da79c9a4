#!/usr/bin/env bash
# Local stand-ins for the three public images that docker-compose.yml, docker-compose.scale.yml
# and the Dockerfile name (python:3.11-slim, postgres:16, redis:7), built from Debian's own
# packages, for a machine with a Docker engine but no Docker Hub: only a Debian mirror and PyPI
# (possibly through a TLS-intercepting proxy whose root is in the host's CA bundle) are reachable.
# The images are tagged with the public names, so the committed Compose files and Dockerfile run
# unchanged on top of them. On a normal machine nobody needs this: Compose pulls the real images.
#
#   sudo bench/compose/build_offline_images.sh        # needs root, debootstrap, docker
#
# What it builds (the stand-ins differ from the real images; enough to run the stack):
#   pluralist-local/debian:bookworm  a debootstrap --variant=minbase rootfs, `docker import`ed
#   python:3.11-slim                 Debian's python3.11, venv at /opt/venv first on PATH
#                                    (python, pip), the host's CA bundle trusted by pip
#   postgres:16                      Debian's PostgreSQL 15 with a POSTGRES_DB/USER/PASSWORD
#                                    entrypoint (postgres-entrypoint.sh), pg_isready on PATH
#   redis:7                          Debian's redis-server 7.0, 0.0.0.0, protected mode off
#
# Environment: WORK (scratch folder, default /tmp/pluralist-offline-images), DEBIAN_MIRROR
# (default http://deb.debian.org/debian), CA_BUNDLE (default /etc/ssl/certs/ca-certificates.crt),
# REBUILD_BASE=1 to debootstrap again although the base image exists.
#
# Such a machine may have only docker-compose v1 (Debian bookworm packages no Compose v2), which
# refuses docker-compose.scale.yml as committed: compose_v1_scale.py writes a v1 form of it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-/tmp/pluralist-offline-images}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
ca_bundle=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
base=pluralist-local/debian:bookworm
export DOCKER_BUILDKIT=0   # the classic builder: no buildx plugin needed

command -v docker >/dev/null || { echo "docker not found" >&2; exit 1; }
docker info >/dev/null || { echo "no Docker engine answers (start dockerd)" >&2; exit 1; }
mkdir -p "$work"

seconds() { echo $(( $(date +%s) - $1 )); }

if [ "${REBUILD_BASE:-0}" = 1 ] || ! docker image inspect "$base" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || { echo "debootstrap not found (apt-get install debootstrap)" >&2; exit 1; }
  [ "$(id -u)" = 0 ] || { echo "debootstrap needs root" >&2; exit 1; }
  start=$(date +%s)
  rootfs="$work/rootfs"
  rm -rf "$rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  security_mirror=${mirror%/debian}/debian-security
  cat > "$rootfs/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security_mirror bookworm-security main
SOURCES
  # Image hygiene as in the slim Debian images: no recommends, no package cache, no docs.
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' \
    > "$rootfs/etc/apt/apt.conf.d/90-no-recommends"
  printf 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };\n' \
    > "$rootfs/etc/apt/apt.conf.d/90-clean"
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
    'path-exclude /usr/share/locale/*' > "$rootfs/etc/dpkg/dpkg.cfg.d/90-nodoc"
  chroot "$rootfs" apt-get clean
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
  tar -C "$rootfs" -c . | docker import -c 'CMD ["bash"]' - "$base" >/dev/null
  rm -rf "$rootfs"
  echo "$base: $(seconds "$start") s (debootstrap + import)"
fi

context="$work/context"
rm -rf "$context"
mkdir -p "$context"
cp "$here"/python.Dockerfile "$here"/postgres.Dockerfile "$here"/redis.Dockerfile \
   "$here"/postgres-entrypoint.sh "$context"/
cp "$ca_bundle" "$context/host-ca.crt"

build() {  # build TAG DOCKERFILE
  local start log="$work/build-${2%.Dockerfile}.log"
  start=$(date +%s)
  docker build -t "$1" -f "$context/$2" "$context" > "$log" 2>&1 \
    || { tail -30 "$log" >&2; echo "build of $1 failed (log: $log)" >&2; exit 1; }
  echo "$1: $(seconds "$start") s (log: $log)"
}
# One at a time: the builds are apt downloads and unpacking, no gain from running them together.
build python:3.11-slim python.Dockerfile
build postgres:16 postgres.Dockerfile
build redis:7 redis.Dockerfile

docker image ls --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' \
  | grep -E '^(pluralist-local/debian:bookworm|python:3.11-slim|postgres:16|redis:7)\s'
