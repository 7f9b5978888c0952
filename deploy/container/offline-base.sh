#!/usr/bin/env bash
# The offline path to the container image: a base made with debootstrap from Debian's own
# packages, for a machine that reaches a Debian mirror but no image registry. Debian 13 (trixie)
# minimal, with ca-certificates and Debian's nodejs (20.19, what package.json's engines ask).
# It stands in for the Containerfile's ordinary base, node:20-trixie-slim (docs/operations.md,
# "In a container"):
#
#   deploy/container/offline-base.sh                  # imports localhost/svc-base:trixie
#   podman build --format docker --build-arg BASE=localhost/svc-base:trixie -t svc .
#
# Run as root (debootstrap needs it). Settings, all optional:
#   MIRROR   the Debian mirror (http://deb.debian.org/debian)
#   CA_FILES extra certificate authorities (PEM files, separated by spaces) the image trusts, such
#            as a TLS-inspecting proxy's between the machine and the npm registry; Debian's
#            Node.js and npm use the system's store
#   CACHE    a directory to keep the root file system's tarball in: a second run with the same
#            mirror imports it again instead of running debootstrap
#   PODMAN   the podman command, with any global options ("podman")
# The image's name is the first argument (localhost/svc-base:trixie).
set -euo pipefail

image=${1:-localhost/svc-base:trixie}
mirror=${MIRROR:-http://deb.debian.org/debian}
suite=trixie
packages=ca-certificates,nodejs
read -r -a podman <<<"${PODMAN:-podman}"

cache=${CACHE:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/svc-base.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -n "$cache" ]; then
  mkdir -p "$cache"
  # shellcheck disable=SC2086 # CA_FILES is a list
  key=$( (printf '%s %s %s\n' "$mirror" "$suite" "$packages" && cat ${CA_FILES:-} /dev/null) |
    sha256sum | cut -c1-16)
  tarball="$cache/$suite-$key.tar"
else
  tarball="$work/rootfs.tar"
fi

if ! [ -s "$tarball" ]; then
  rootfs="$work/rootfs"
  echo "debootstrap $suite from $mirror"
  debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" >"$work/log" 2>&1 ||
    { tail -20 "$work/log" >&2; exit 1; }
  # What an image does not need: the package lists and downloaded packages, logs, documentation.
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/var/log/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/*
  # The mirror the image's apt uses afterwards (the build stage installs a compiler with it).
  printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$mirror" "$suite" "$suite" >"$rootfs/etc/apt/sources.list.d/debian.sources"
  rm -f "$rootfs/etc/apt/sources.list"
  if [ -n "${CA_FILES:-}" ]; then
    # shellcheck disable=SC2086 # CA_FILES is a list
    for ca in $CA_FILES; do cp "$ca" "$rootfs/usr/local/share/ca-certificates/$(basename "$ca" .crt).crt"; done
    chroot "$rootfs" update-ca-certificates >/dev/null 2>&1
  fi
  # The host's name and resolver are the container manager's to fill in.
  : >"$rootfs/etc/hostname"
  : >"$rootfs/etc/resolv.conf"
  tar --numeric-owner -C "$rootfs" -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
fi

"${podman[@]}" import --quiet --change 'CMD ["/bin/bash"]' "$tarball" "$image" >/dev/null
echo "$image"
