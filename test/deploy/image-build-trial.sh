#!/usr/bin/env bash
# Builds deploy/Containerfile for real on a machine with no container registry and no Docker
# engine: buildah (Debian package) with chroot isolation, and debian:12 / debian:12-slim base
# images made locally with debootstrap from Debian's archive. Not part of CTest (it needs root,
# the Debian archive and several minutes); run it by hand:
#
#   test/deploy/image-build-trial.sh                 # the whole Containerfile, build stage too
#   test/deploy/image-build-trial.sh --runtime-only PLUGIN_BIN CTL_BIN
#       # only the runtime stage, with the given binaries standing in for the build stage's
#
# Then it runs the image's tools (mkfs.ext4, mkfs.xfs, blkid, fsck, mount) and prints its labels.
# The base made by debootstrap --variant=minbase is larger than the real debian:12-slim; the
# packages and the steps are the same.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
S=(--storage-driver vfs)
tag=localhost/oxide-csi-plugin:trial

[ "$(id -u)" -eq 0 ] || { echo "image-build-trial: run as root" >&2; exit 1; }
for p in buildah debootstrap; do
  command -v "$p" >/dev/null || apt-get install -y -qq --no-install-recommends "$p" >/dev/null
done

if ! buildah "${S[@]}" inspect docker.io/library/debian:12-slim >/dev/null 2>&1; then
  root=$(mktemp -d)
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
  rm -f "$root"/var/cache/apt/archives/*.deb
  ctr=$(buildah "${S[@]}" from scratch)
  cp -a "$root"/. "$(buildah "${S[@]}" mount "$ctr")"/
  buildah "${S[@]}" config --cmd /bin/bash "$ctr"
  buildah "${S[@]}" commit -q "$ctr" docker.io/library/debian:12-slim >/dev/null
  buildah "${S[@]}" rm "$ctr" >/dev/null
  buildah "${S[@]}" tag docker.io/library/debian:12-slim docker.io/library/debian:12
  rm -rf "$root"
fi

ctx="$repo"
file="$repo/deploy/Containerfile"
if [ "${1:-}" = "--runtime-only" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --runtime-only PLUGIN_BIN CTL_BIN" >&2; exit 2; }
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  mkdir "$ctx/bin"
  cp "$2" "$ctx/bin/oxide-csi-plugin"
  cp "$3" "$ctx/bin/oxide-csi-ctl"
  # the real runtime stage, behind a build stage that only provides the binaries
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

buildah "${S[@]}" build --isolation chroot --network host --pull=false \
  --ignorefile "$repo/deploy/Containerfile.dockerignore" -f "$file" -t "$tag" "$ctx"

ctr=$(buildah "${S[@]}" from "$tag")
trap 'buildah "${S[@]}" rm "$ctr" >/dev/null; [ "$ctx" = "$repo" ] || rm -rf "$ctx"' EXIT
buildah "${S[@]}" run --isolation chroot "$ctr" -- sh -c \
  'mkfs.ext4 -V 2>&1 | head -1; mkfs.xfs -V; blkid -V; fsck --version; mount --version;
   test -s /etc/ssl/certs/ca-certificates.crt && echo "CA bundle present";
   ls -l /usr/bin/oxide-csi-plugin /usr/bin/oxide-csi-ctl'
buildah "${S[@]}" inspect --format '{{.OCIv1.Config.Labels}} entrypoint={{.OCIv1.Config.Entrypoint}}' "$tag"
echo "image-build-trial: built $tag"
