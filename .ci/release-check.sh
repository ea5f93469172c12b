#!/usr/bin/env bash
# The release checked with the tools that take it: npm installs the npm
# packages from their tarballs into a scratch prefix (no registry asked)
# and the tests spawn the product through npx as a host does; ruby -c
# checks the Homebrew formula and a stub evaluates its DSL for each
# system and processor; the Scoop manifest's fields are checked against
# Scoop's schema. node, npm and ruby are installed with apt-get (Debian)
# when missing; the rest of CI needs none of them.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

need=()
command -v node >/dev/null || need+=(nodejs)
{ command -v npm >/dev/null && command -v npx >/dev/null; } || need+=(npm)
command -v ruby >/dev/null || need+=(ruby)
if [ ${#need[@]} -gt 0 ]; then
  . .ci/apt.sh
  apt_install release-check "${need[@]}" || { echo "release-check: apt-get failed" >&2; exit 1; }
fi
echo "release-check: node $(node --version), npm $(npm --version), $(ruby --version)"

# One release and one npm install serve every test of the package.
go test -tags npm,ruby -count=1 ./internal/cmd/mkrelease
