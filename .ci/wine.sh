#!/usr/bin/env bash
# Run Go GOOS=windows GOARCH=amd64 test binaries under wine on Debian.
#
#   bash .ci/wine.sh setup            install wine64 + mingw-w64 (apt-get, only
#                                     if missing), build the ProcessPrng DLL,
#                                     create the wine prefix (all idempotent)
#   bash .ci/wine.sh test PKG... [-- ARGS...]
#                                     setup, then for each package matched by
#                                     the patterns (resolved from the current
#                                     directory, as go test does) build its
#                                     windows test binary and run it under wine
#                                     from the package's directory; ARGS (e.g.
#                                     -test.v, -test.run=X) go to every test
#                                     binary. Exits non-zero if any fails.
#   bash .ci/wine.sh run ARGS...      setup, then build majordomus-mcp.exe and
#                                     run it under wine with ARGS.
#
# Needs only Go, git and root (or passwordless sudo) on Debian 12. Wine 8.0 is not
# Windows: a pass here is strong evidence, not proof. Known wine 8 gap:
# os.RemoveAll (so t.TempDir's cleanup) fails with "unlinkat ...: Invalid
# function" while os.Remove works.
#
# Environment:
#   MAJORDOMUS_WINE_CACHE      cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/majordomus-wine)
#   MAJORDOMUS_WINE_TIMEOUT    seconds one test binary may run (default 600)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

cache=${MAJORDOMUS_WINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/majordomus-wine}
test_timeout=${MAJORDOMUS_WINE_TIMEOUT:-600}

WINE64=/usr/lib/wine/wine64
WINESERVER=/usr/lib/wine/wineserver64
MINGW_CC=x86_64-w64-mingw32-gcc

# Quiet, headless, bounded wine.
export WINEPREFIX="$cache/prefix"
export WINEARCH=win64
export WINEDEBUG=-all
# No Mono/Gecko install prompts, no desktop menu entries.
export WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d"
unset DISPLAY WAYLAND_DISPLAY
export DEBIAN_FRONTEND=noninteractive

# A Windows user's profile, %TEMP% among it, admits only its user, SYSTEM
# and the Administrators; wine gives what it makes an access list from the
# Unix mode, Everyone reading under umask 022 or 002: a private umask is
# Windows's private profile.
umask 077

log() { printf 'wine.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

. "$here/apt.sh"

install_packages() {
	local pkgs=(wine64 gcc-mingw-w64-x86-64)
	if installed "${pkgs[@]}" && [ -x "$WINE64" ] && command -v "$MINGW_CC" >/dev/null; then
		return 0
	fi
	apt_install wine.sh "${pkgs[@]}" || die "apt-get failed"
	[ -x "$WINE64" ] || die "$WINE64 missing after installing wine64"
	command -v "$MINGW_CC" >/dev/null || die "$MINGW_CC missing after installing gcc-mingw-w64-x86-64"
}

# Builds $cache/bcryptprimitives.dll when its sources changed.
build_dll() {
	local src="$here/wine/bcryptprimitives.c" def="$here/wine/bcryptprimitives.def"
	local dll="$cache/bcryptprimitives.dll" stamp="$cache/bcryptprimitives.sum"
	local sum
	sum=$(cat "$src" "$def" | sha256sum | cut -d' ' -f1)
	if [ -f "$dll" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$sum" ]; then
		return 0
	fi
	log "building bcryptprimitives.dll"
	timeout 120 "$MINGW_CC" -shared -O2 -s -o "$dll.tmp" "$src" "$def" -ladvapi32
	mv -f "$dll.tmp" "$dll"
	printf '%s\n' "$sum" >"$stamp"
}

stop_wineserver() {
	[ -d "$WINEPREFIX" ] || return 0
	timeout 30 "$WINESERVER" -w 2>/dev/null || timeout 10 "$WINESERVER" -k 2>/dev/null || true
}

# Creates the prefix once; (re)places the DLL in its system32 when it differs.
make_prefix() {
	local ready="$WINEPREFIX/.majordomus-ready"
	local sys32="$WINEPREFIX/drive_c/windows/system32"
	if [ ! -f "$ready" ]; then
		log "creating wine prefix $WINEPREFIX"
		rm -rf "$WINEPREFIX"
		mkdir -p "$WINEPREFIX"
		if ! timeout 300 "$WINE64" wineboot --init >"$cache/wineboot.log" 2>&1; then
			cat "$cache/wineboot.log" >&2
			timeout 10 "$WINESERVER" -k 2>/dev/null || true
			die "wineboot --init failed or timed out"
		fi
		# Never try to open a window, even if DISPLAY is set later.
		timeout 120 "$WINE64" reg add 'HKCU\Software\Wine\Drivers' /v Graphics /d null /f \
			>>"$cache/wineboot.log" 2>&1 || true
		stop_wineserver
		[ -d "$sys32" ] || die "wine prefix has no $sys32 (see $cache/wineboot.log)"
		touch "$ready"
	fi
	if ! cmp -s "$cache/bcryptprimitives.dll" "$sys32/bcryptprimitives.dll"; then
		cp -f "$cache/bcryptprimitives.dll" "$sys32/bcryptprimitives.dll"
	fi
}

setup() {
	mkdir -p "$cache"
	# One setup at a time per cache dir.
	exec 9>"$cache/.lock"
	flock -w 900 9 || die "timed out waiting for $cache/.lock"
	install_packages
	build_dll
	make_prefix
	exec 9>&-
}

run_tests() {
	local patterns=() args=()
	while [ $# -gt 0 ]; do
		if [ "$1" = "--" ]; then
			shift
			args=("$@")
			break
		fi
		patterns+=("$1")
		shift
	done
	[ ${#patterns[@]} -gt 0 ] || die "usage: wine.sh test PKG... [-- TESTARGS...]"

	setup

	# Global, so the EXIT trap still sees it.
	wine_bindir=$(mktemp -d "${TMPDIR:-/tmp}/majordomus-wine-test.XXXXXX")
	trap 'rm -rf "$wine_bindir"' EXIT

	local list
	list=$(CGO_ENABLED=0 GOOS=windows GOARCH=amd64 \
		go list -e -f '{{.ImportPath}}|{{.Dir}}|{{len .TestGoFiles}}|{{len .XTestGoFiles}}|{{len .GoFiles}}|{{len .IgnoredGoFiles}}' "${patterns[@]}")

	local failed=0 total=0 pkg dir nt nxt ngo nign exe start end rc
	while IFS='|' read -r pkg dir nt nxt ngo nign; do
		[ -n "$pkg" ] || continue
		if [ "$nt" -eq 0 ] && [ "$nxt" -eq 0 ] && [ "$ngo" -eq 0 ] && [ "$nign" -gt 0 ]; then
			printf '?   \t%s\t[no windows files]\n' "$pkg"
			continue
		fi
		if [ "$nt" -eq 0 ] && [ "$nxt" -eq 0 ] && [ "$ngo" -gt 0 ]; then
			printf '?   \t%s\t[no test files]\n' "$pkg"
			continue
		fi
		total=$((total + 1))
		exe="$wine_bindir/${pkg//\//_}.test.exe"
		if ! CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go test -c -o "$exe" "$pkg"; then
			printf 'FAIL\t%s [build failed]\n' "$pkg"
			failed=$((failed + 1))
			continue
		fi
		start=$(date +%s.%N)
		rc=0
		(cd "$dir" && timeout -k 10 $((test_timeout + 30)) "$WINE64" "$exe" \
			-test.paniconexit0 -test.timeout="${test_timeout}s" "${args[@]}") </dev/null || rc=$?
		end=$(date +%s.%N)
		if [ "$rc" -eq 0 ]; then
			printf 'ok  \t%s\t%.3fs\n' "$pkg" "$(awk "BEGIN{print $end - $start}")"
		else
			[ "$rc" -ne 124 ] || printf 'wine.sh: %s: killed after %ss\n' "$pkg" $((test_timeout + 30))
			printf 'FAIL\t%s\t%.3fs\n' "$pkg" "$(awk "BEGIN{print $end - $start}")"
			failed=$((failed + 1))
		fi
	done <<<"$list"
	stop_wineserver

	if [ "$failed" -ne 0 ]; then
		printf 'FAIL\n'
		log "$failed of $total windows test packages failed under wine"
		return 1
	fi
	log "$total windows test packages passed under wine"
}

# Builds ./cmd/majordomus-mcp for windows/amd64 and runs it under wine with
# the given arguments (the whole product, as a Windows user runs it).
run_product() {
	setup
	stop_wineserver # start from a wineserver of its own, not one a test run is ending
	local bindir rc=0
	bindir=$(mktemp -d "${TMPDIR:-/tmp}/majordomus-wine-run.XXXXXX")
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go build -o "$bindir/majordomus-mcp.exe" ./cmd/majordomus-mcp
	timeout -k 10 "$test_timeout" "$WINE64" "$bindir/majordomus-mcp.exe" "$@" </dev/null || rc=$?
	stop_wineserver
	rm -rf "$bindir"
	return "$rc"
}

case "${1:-}" in
run)
	shift
	run_product "$@"
	;;
setup)
	setup
	stop_wineserver
	;;
test)
	shift
	run_tests "$@"
	;;
*)
	die "usage: wine.sh setup | wine.sh test PKG... [-- TESTARGS...] | wine.sh run ARGS..."
	;;
esac
