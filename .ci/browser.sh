#!/usr/bin/env bash
# The board page in a real browser: installs Debian's chromium and
# chromium-driver (apt-get, only when missing; root or passwordless sudo, as
# wine.sh does), then runs the browser scenario (scenarios/browser, build tag
# browser). BOARD_SCREENSHOT=path keeps its screenshot of the page.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
unset DISPLAY WAYLAND_DISPLAY # headless, and `board` opens nothing

log() { printf 'browser.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

. .ci/apt.sh

pkgs=(chromium chromium-driver)
if ! installed "${pkgs[@]}" || [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
	apt_install browser.sh "${pkgs[@]}" || die "apt-get failed"
	[ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing after installing chromium"
	[ -x /usr/bin/chromedriver ] || die "/usr/bin/chromedriver missing after installing chromium-driver"
fi
go vet -tags browser ./scenarios/browser
go test -tags browser -count=1 ./scenarios/browser
