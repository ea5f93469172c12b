#!/usr/bin/env bash
# Vet, build and compile the tests of every platform majordomus-mcp ships
# for (pure Go, CGO_ENABLED=0). Linux runs every test besides; the others
# are checked here as far as this machine can.
#
# arm64 is built, not vetted and tests compiled again: this module has no
# file or build constraint of its own that tells arm64 from amd64 (a test
# below keeps it so), so vet and the test builds see the same code for
# both, while the binary links the dependencies' per-architecture files.
# With a cold build cache that spares about 75 s a target (vet 32 s and the
# tests' build 44 s for darwin/arm64, against 66 s for its binary).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  export GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0
  start=$SECONDS
  go build -o "$out/majordomus-mcp-$GOOS-$GOARCH" ./cmd/majordomus-mcp
  if [ "$GOARCH" = arm64 ]; then
    echo "platform $target: built ($((SECONDS - start)) s)"
    continue
  fi
  go vet ./...
  mkdir -p "$out/tests-$GOOS-$GOARCH"
  go test -c -o "$out/tests-$GOOS-$GOARCH/" ./... >/dev/null
  echo "platform $target: vetted, built, tests compiled ($((SECONDS - start)) s)"
done
