#!/usr/bin/env bash
# Commit subjects from the first commit of the convention on: `pkg: summary`,
# at most 72 characters (the detail belongs in the body).
set -euo pipefail
cd "$(dirname "$0")/.."
# The commit that began it (its own subject ran to 74 characters).
since=76981d410b4d03026e16ba533a257de6f2f73840
subjects=$(git log --no-merges --format=%s "$since..HEAD")
bad=0
while IFS= read -r subject; do
  [ -n "$subject" ] || continue
  if [ "${#subject}" -gt 72 ] || ! [[ "$subject" =~ ^[A-Za-z0-9_./,{}\ -]+:\ [^\ ] ]]; then
    echo "commit subject not in the form 'pkg: summary' of at most 72 characters: $subject" >&2
    bad=1
  fi
done <<<"$subjects"
exit "$bad"
