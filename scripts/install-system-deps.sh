#!/usr/bin/env bash
# Installs the Debian packages the test suites need and a fresh machine lacks:
# browsers for the end-to-end tests, redis-server for the store suites, and
# unshare/ip for the loopback-only network namespace. Does nothing when all
# are present. Used by .ci/run and by `npm test` (scripts/test.js).
set -euo pipefail

need=()
command -v chromium >/dev/null || need+=(chromium)
command -v firefox-esr >/dev/null || need+=(firefox-esr)
command -v redis-server >/dev/null || need+=(redis-server)
command -v unshare >/dev/null || need+=(util-linux)
command -v ip >/dev/null || need+=(iproute2)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-system-deps: missing ${need[*]}; install them (Debian: apt-get install ${need[*]}) or run as root" >&2
  exit 1
fi
echo "install-system-deps: installing ${need[*]}"
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
