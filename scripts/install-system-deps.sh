#!/usr/bin/env bash
# Installs the Debian packages the test suites need and a fresh machine lacks:
# browsers for the end-to-end tests, redis-server for the store suites, coturn
# (a TURN server) for the privacy mode's relayed channels, ffmpeg for the
# media tests' video (test/support/video.js),
# unshare/ip for the loopback-only network namespace, and docker-compose to
# validate docker-compose.yml offline (coordinator/test/compose.test.js; no
# container engine: the package's recommended docker.io is left out). Does
# nothing when all are present. Used by .ci/run and by `npm test` (scripts/test.js).
set -euo pipefail

need=()
command -v chromium >/dev/null || need+=(chromium)
command -v firefox-esr >/dev/null || need+=(firefox-esr)
command -v redis-server >/dev/null || need+=(redis-server)
command -v turnserver >/dev/null || need+=(coturn)
command -v unshare >/dev/null || need+=(util-linux)
command -v ip >/dev/null || need+=(iproute2)
lean=()   # installed without their recommended packages (docker-compose would bring docker.io)
command -v docker-compose >/dev/null || lean+=(docker-compose)
command -v ffmpeg >/dev/null || lean+=(ffmpeg)
[ ${#need[@]} -eq 0 ] && [ ${#lean[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-system-deps: missing ${need[*]} ${lean[*]}; install them (Debian: apt-get install ${need[*]} ${lean[*]}) or run as root" >&2
  exit 1
fi
echo "install-system-deps: installing ${need[*]} ${lean[*]}"
apt-get update -q
[ ${#need[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
[ ${#lean[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${lean[@]}"
