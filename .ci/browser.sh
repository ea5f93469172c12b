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

installed() { # package...
	local p
	for p in "$@"; do
		[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || return 1
	done
}

pkgs=(chromium chromium-driver)
if ! installed "${pkgs[@]}" || [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
	sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo -n)
	log "installing ${pkgs[*]} with apt-get"
	aptlog=$(mktemp)
	if ! { timeout 600 "${sudo[@]}" apt-get update -qq &&
		timeout 900 "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${pkgs[@]}"; } >"$aptlog" 2>&1; then
		cat "$aptlog" >&2
		die "apt-get failed"
	fi
	rm -f "$aptlog"
	[ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing after installing chromium"
	[ -x /usr/bin/chromedriver ] || die "/usr/bin/chromedriver missing after installing chromium-driver"
fi
go vet -tags browser ./scenarios/browser
go test -tags browser -count=1 ./scenarios/browser
