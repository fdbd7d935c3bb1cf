#!/usr/bin/env bash
# Runs every fuzz target of retrysafe for a short while (FUZZTIME, default 10s each). The seed
# corpora live in each package's testdata/fuzz/<FuzzName>/ and in the f.Add calls; a failing
# input is written there by `go test` and should be committed with the fix.
#
# Usage: ci/fuzz.sh [FUZZTIME]      e.g. ci/fuzz.sh 60s for a longer local session
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${1:-${FUZZTIME:-10s}}"

# package    fuzz target: listed explicitly, so that a renamed or removed target fails here
targets=(
  "./targets            FuzzParse"
  "./targets            FuzzExpandEnv"
  "./targets            FuzzTemplate"
  "./targets/reference  FuzzParseKey"
  "./targets/reference  FuzzCanonicalJSON"
  "./suites             FuzzCompareBodies"
)

for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  printf '==> fuzz %s %s for %s\n' "$pkg" "$name" "$fuzztime"
  go test -list "^${name}\$" "$pkg" | grep -x "$name" >/dev/null || { echo "ci/fuzz.sh: no $name in $pkg" >&2; exit 1; }
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"
done
echo "==> every fuzz target ran for $fuzztime without a failure"
