# Sourced by the CI scripts that take what they need from Debian (wine,
# chromium, node, npm, ruby).

# apt_install WHO PACKAGE...: installs the packages with apt-get, as root or
# through passwordless sudo, each step bounded; apt-get's output is shown
# only when it fails, and the failure is the caller's to report.
apt_install() {
	local who=$1
	shift
	local sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo -n)
	printf '%s: installing %s with apt-get\n' "$who" "$*" >&2
	local aptlog
	aptlog=$(mktemp)
	if ! { DEBIAN_FRONTEND=noninteractive timeout 600 "${sudo[@]}" apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive timeout 900 "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@"; } >"$aptlog" 2>&1; then
		cat "$aptlog" >&2
		rm -f "$aptlog"
		return 1
	fi
	rm -f "$aptlog"
}

# installed PACKAGE...: every one is installed.
installed() {
	local p
	for p in "$@"; do
		[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || return 1
	done
}
