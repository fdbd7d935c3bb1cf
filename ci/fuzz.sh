#!/usr/bin/env bash
# Runs every fuzz target of retrysafe for a short while (FUZZTIME, default 10s each). The seed
# corpora live in each package's testdata/fuzz/<FuzzName>/ and in the f.Add calls; a failing
# input is written there and should be committed with the fix.
#
# Each package's instrumented test binary is built once (go test -c -fuzz: coverage
# instrumentation of the package and everything it imports, the standard library included, is
# most of the stage's cost) and every fuzz target of the package runs from it, one fuzzing
# worker each (FUZZWORKERS), so that the stage leaves a core to whatever runs beside it. The
# binaries are built with the tag retrysafe_nosqlite: without the embedded SQLite driver, whose
# translated C no fuzz target reaches and which would be most of what is instrumented.
#
# Usage: ci/fuzz.sh [FUZZTIME]      e.g. ci/fuzz.sh 60s for a longer local session
#        FUZZJOBS=N (targets at once, default 3), FUZZWORKERS=N (workers per target, default 1)
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${1:-${FUZZTIME:-10s}}"
workers="${FUZZWORKERS:-1}"
module=$(go list -m)
cache="$(go env GOCACHE)/fuzz"

# package    fuzz target: listed explicitly, so that a renamed or removed target fails here
targets=(
  "./targets            FuzzParse"
  "./targets            FuzzExpandEnv"
  "./targets            FuzzTemplate"
  "./targets/reference  FuzzParseKey"
  "./targets/reference  FuzzCanonicalJSON"
  "./suites/check       FuzzCompareBodies"
)

bins=$(mktemp -d)
trap 'rm -rf "$bins"' EXIT

# binary PKG prints the path of PKG's instrumented test binary, building it the first time.
binary() {
  local pkg=$1 bin
  bin="$bins/$(echo "${pkg#./}" | tr / _).fuzz.test"
  if [ ! -x "$bin" ]; then
    printf '==> build the instrumented test binary of %s (once for its fuzz targets)\n' "$pkg" >&2
    go test -c -fuzz . -vet=off -tags retrysafe_nosqlite -o "$bin" "$pkg" >&2
  fi
  echo "$bin"
}

# fuzz_one PKG NAME fuzzes one target with its package's binary, in the package's folder (where
# its corpus is). Go 1.26's fuzz coordinator can fail a run with a bare "context deadline
# exceeded" as -fuzztime expires on a loaded machine (golang/go#75804, fixed in Go 1.27): no
# input is written and nothing reproduces. Such a failure is retried once, and if it recurs the
# seed corpus is replayed deterministically instead; a written failing input, a panic or any
# other failure fails at once.
fuzz_one() {
  local pkg=$1 name=$2 bin log
  bin=$(binary "$pkg")
  log=$(mktemp)
  for attempt in 1 2; do
    if (cd "$pkg" && "$bin" -test.run '^$' -test.fuzz "^${name}\$" -test.fuzztime "$fuzztime" -test.parallel "$workers" \
        -test.fuzzcachedir "$cache/$module/${pkg#./}") 2>&1 | tee "$log"; then
      rm -f "$log"; return 0
    fi
    if ! grep -q 'context deadline exceeded' "$log" || grep -qE 'Failing input written|panic:' "$log"; then
      rm -f "$log"; echo "ci/fuzz.sh: $name found a failure" >&2; return 1
    fi
    echo "ci/fuzz.sh: $name hit the fuzz coordinator's deadline race (golang/go#75804), attempt $attempt" >&2
  done
  rm -f "$log"
  echo "ci/fuzz.sh: replaying the $name corpus instead" >&2
  (cd "$pkg" && "$bin" -test.run "^${name}\$")
}

for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  # A fuzz target -fuzz does not find passes silently; the source says whether it exists, without
  # building the package's test binary once more just to list it.
  grep -qE "^func ${name}\(f \*testing\.F\)" "$pkg"/*_test.go || { echo "ci/fuzz.sh: no $name in $pkg" >&2; exit 1; }
done
# Every instrumented binary is built first (the builds use every core by themselves), then the
# targets run FUZZJOBS at a time (default 3: one fuzzing worker each, and their coordinators),
# each one's output kept and printed whole, in order, when it ends.
for t in "${targets[@]}"; do
  read -r pkg _ <<<"$t"
  binary "$pkg" >/dev/null
done
jobs_at_once="${FUZZJOBS:-3}"
out=$(mktemp -d)
pids=()
for i in "${!targets[@]}"; do
  read -r pkg name <<<"${targets[$i]}"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n || true; done
  ( printf '==> fuzz %s %s for %s (%s worker)\n' "$pkg" "$name" "$fuzztime" "$workers"
    fuzz_one "$pkg" "$name" ) >"$out/$i.log" 2>&1 &
  pids[$i]=$!
done
failed=0
for i in "${!targets[@]}"; do
  wait "${pids[$i]}" || failed=1
  cat "$out/$i.log"
done
rm -rf "$out"
[ "$failed" -eq 0 ] || { echo "ci/fuzz.sh: a fuzz target failed (its output is above)" >&2; exit 1; }
echo "==> every fuzz target ran for $fuzztime without a failure"
