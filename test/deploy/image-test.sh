#!/usr/bin/env bash
# Builds the container image of deploy/Containerfile for real and checks it from inside: no
# registry and no Docker engine are needed. buildah (chroot isolation, vfs storage) builds it on a
# debian:12-slim base made locally with debootstrap from Debian's archive. Needs root.
#
#   test/deploy/image-test.sh PLUGIN_BIN CTL_BIN
#       the Containerfile's runtime stage, with the given binaries standing in for the build
#       stage's (what scripts/test.sh runs, with the binaries it just built)
#   test/deploy/image-test.sh --whole
#       the whole Containerfile, the build stage too (slow: it compiles the project)
#
# Inside the image it runs `oxide-csi-plugin --version` and `--help`, starts the plugin in
# --mode=node against a fake sysfs tree, asks its Identity service for Probe and plugin info over
# the unix socket with oxide-csi-ctl, reads its idle RSS, stops it with SIGTERM, and runs the
# node's filesystem tools (mkfs.ext4, mkfs.xfs, blkid, fsck.ext4, mount, cryptsetup, tune2fs,
# e2fsck, xfs_db, xfs_repair). Then it prints the image's size on disk and gzip-compressed.
#
# Cache: the base image and buildah's layer cache live under $OXIDE_CSI_IMAGE_CACHE
# (default /var/cache/oxide-csi-image, ~0.7 GB); a warm run rebuilds only the layers of the
# binaries, and each run drops the images older runs left there.
# When buildah or debootstrap cannot be installed, or Debian's archive cannot be reached, it
# prints one line saying so and exits 0 (under CI=true: exits 1). OXIDE_CSI_DEBIAN_MIRROR
# overrides the archive's address.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${OXIDE_CSI_IMAGE_CACHE:-/var/cache/oxide-csi-image}"
mirror="${OXIDE_CSI_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
tag=localhost/oxide-csi-plugin:test
instance=11111111-2222-4333-8444-555555555555

# Under CI=true the image must be built and checked: a reason to skip fails the run instead.
skip() {
  if [ "${CI:-}" = true ]; then
    echo "image: CI=true, and the image cannot be tested here ($*)" >&2
    exit 1
  fi
  echo "image: skipped ($*)"
  exit 0
}

[ "$(id -u)" -eq 0 ] || skip "needs root"
whole=0
if [ "${1:-}" = "--whole" ]; then
  whole=1
elif [ $# -ne 2 ]; then
  echo "usage: $0 PLUGIN_BIN CTL_BIN | --whole" >&2
  exit 2
fi

archive_reachable() {
  python3 - "$mirror" <<'EOF'
import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1] + "/dists/bookworm/InRelease", timeout=15).read(64)
except Exception as e:
    print(e)
    sys.exit(1)
EOF
}
missing=()
for tool in buildah debootstrap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
    skip "${missing[*]} not installed and apt-get could not install it"
fi
why="$(archive_reachable)" || skip "Debian's archive at $mirror cannot be reached: $why"

mkdir -p "$cache"
B=(buildah --root "$cache/storage" --runroot "$cache/run" --storage-driver vfs)
work="$(mktemp -d /tmp/oxide-csi-image.XXXXXX)"
ctr=""
cleanup() {
  [ -z "$ctr" ] || "${B[@]}" rm "$ctr" >/dev/null 2>&1 || true
  # Keeps the base and the layers of the newest image (the warm cache); drops older images.
  "${B[@]}" rmi --prune >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# ---- the base: debian:12-slim as Debian's own images are made (debootstrap minbase, then the
# slim variant's exclusions: no documentation, manual pages or translations) ----------------------
if ! "${B[@]}" inspect docker.io/library/debian:12-slim >/dev/null 2>&1; then
  echo "image: making the debian:12-slim base with debootstrap (once; cached in $cache)"
  root="$work/rootfs"
  debootstrap --variant=minbase bookworm "$root" "$mirror" > "$work/debootstrap.log" 2>&1 || {
    tail -n 20 "$work/debootstrap.log"
    echo "image: debootstrap failed"
    exit 1
  }
  cat > "$root/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF
  find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  rm -rf "$root"/usr/share/{man,info,locale,groff,lintian,linda}/* "$root"/var/cache/apt/*.bin \
    "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  base="$("${B[@]}" from scratch)"
  cp -a "$root"/. "$("${B[@]}" mount "$base")"/
  "${B[@]}" config --cmd /bin/bash "$base"
  "${B[@]}" commit -q "$base" docker.io/library/debian:12-slim >/dev/null
  "${B[@]}" rm "$base" >/dev/null
  "${B[@]}" tag docker.io/library/debian:12-slim docker.io/library/debian:12
  rm -rf "$root"
fi

# ---- the image ------------------------------------------------------------------------------------
ctx="$repo"
file="$repo/deploy/Containerfile"
if [ "$whole" = 0 ]; then
  # The real runtime stage, behind a build stage that only provides the given binaries.
  ctx="$work/context"
  mkdir -p "$ctx/bin"
  # Stripped, as the build stage's `cmake --install --strip` leaves them.
  strip -o "$ctx/bin/oxide-csi-plugin" "$1"
  strip -o "$ctx/bin/oxide-csi-ctl" "$2"
  python3 - "$file" "$ctx/Containerfile" <<'EOF'
import sys
s = open(sys.argv[1]).read()
a = s.index("FROM docker.io/library/debian:12 AS build")
b = s.index("# ---- runtime stage")
open(sys.argv[2], "w").write(s[:a] + "FROM docker.io/library/debian:12 AS build\n"
                             "COPY bin/ /out/usr/bin/\n\n" + s[b:])
EOF
  file="$ctx/Containerfile"
fi
"${B[@]}" build --isolation chroot --network host --pull=false --layers -q \
  --ignorefile "$repo/deploy/Containerfile.dockerignore" -f "$file" -t "$tag" "$ctx" \
  > "$work/build.log" 2>&1 || {
  tail -n 40 "$work/build.log"
  echo "image: the build failed"
  exit 1
}

# ---- inside the image -----------------------------------------------------------------------------
ctr="$("${B[@]}" from "$tag")"
"${B[@]}" run --isolation chroot "$ctr" -- sh -eu -c '
  oxide-csi-plugin --version
  oxide-csi-plugin --help | grep -q -- "--endpoint" || { echo "--help lists no --endpoint"; exit 1; }
  mkdir -p /tmp/csi /tmp/state /tmp/sys/block /tmp/sys/class/nvme
  oxide-csi-plugin --mode=node --endpoint=unix:///tmp/csi/csi.sock --instance-id='"$instance"' \
    --sysfs-root=/tmp/sys --state-db=/tmp/state/state.db 2> /tmp/plugin.log &
  pid=$!
  tries=0
  until [ -S /tmp/csi/csi.sock ]; do
    tries=$((tries + 1))
    if [ $tries -gt 200 ] || ! kill -0 $pid 2>/dev/null; then
      echo "the plugin did not serve its socket:"; cat /tmp/plugin.log; exit 1
    fi
    sleep 0.05  # a poll: the slim image has no inotifywait to wait for the socket with
  done
  ctl="oxide-csi-ctl --endpoint unix:///tmp/csi/csi.sock"
  probe="$($ctl identity probe)"
  [ "$probe" = "ready: true" ] || { echo "Probe answered: $probe"; cat /tmp/plugin.log; exit 1; }
  $ctl identity info | grep -q "csi.oxide.computer" || { echo "plugin info is wrong"; exit 1; }
  echo "node mode in the image: Probe ready, idle $(grep VmRSS /proc/$pid/status | tr -s " \t" " ")"
  kill -TERM $pid
  wait $pid || { echo "the plugin exited with status $? on SIGTERM"; cat /tmp/plugin.log; exit 1; }
  mkfs.ext4 -V 2>&1 | head -n 1
  mkfs.xfs -V
  blkid -V
  fsck.ext4 -V 2>&1 | head -n 1
  mount --version
  cryptsetup --version
  # What the node reads the history and completeness of a filesystem with (docs/node-safety.md).
  for tool in tune2fs e2fsck xfs_db xfs_repair; do
    command -v $tool >/dev/null || { echo "the image has no $tool"; exit 1; }
  done
  test -s /etc/ssl/certs/ca-certificates.crt
'
mnt="$("${B[@]}" mount "$ctr")"
on_disk=$(du -sb --exclude=./proc --exclude=./sys --exclude=./dev "$mnt" | cut -f1)
compressed=$(tar -C "$mnt" --exclude=./proc --exclude=./sys --exclude=./dev -cf - . | gzip -6 | wc -c)
"${B[@]}" umount "$ctr" >/dev/null
awk -v d="$on_disk" -v c="$compressed" -v t="$tag" \
  'BEGIN { printf "image: %s: %.1f MiB on disk, %.1f MiB gzip-compressed\n", t, d / 1048576, c / 1048576 }'
echo "image: built and checked $tag"
