#!/usr/bin/env bash
# Measures how often the self-test kills each cell of some mutants: runs the mutant cells alone
# (retrysafe selftest --only-cells) N times, each with its own report directory, and prints, per
# cell (those that apply: n-a cells are left out), how many runs killed it. With BESIDE set, that command runs over and over beside the
# self-tests (the load CI puts on them, e.g. BESIDE='go test -race -count=1 ./...').
#
# Usage: ci/kill-rate.sh N MUTANTS [selftest flags...]
#   e.g. BESIDE='go test -race -count=1 ./...' ci/kill-rate.sh 20 race,two-memory-instances,check-then-insert
# RETRYSAFE_BIN: a built retrysafe (else one is built); OUT: where the runs' reports go.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 N MUTANTS [selftest flags...]" >&2; exit 2; }
n=$1 mutants=$2
shift 2
cd "$(dirname "$0")/.."
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
bin=${RETRYSAFE_BIN:-}
if [ -z "$bin" ]; then
  bin="$out/retrysafe"
  go build -o "$bin" ./cmd/retrysafe
fi
beside_pid=
if [ -n "${BESIDE:-}" ]; then
  # in a process group of its own, so that the whole of it ends with the script
  setsid bash -c 'while :; do bash -c "$1" || true; done' beside "$BESIDE" >"$out/beside.log" 2>&1 &
  beside_pid=$!
  trap 'kill -- -"$beside_pid" 2>/dev/null || true' EXIT
fi
for i in $(seq "$n"); do
  start=$SECONDS
  "$bin" selftest --only-cells --mutants "$mutants" --report-dir "$out/run-$i" "$@" >"$out/run-$i.log" 2>&1 || true
  echo "run $i of $n: $((SECONDS - start))s ($out/run-$i)"
done
echo
printf '%-28s %-22s %-10s %-8s %-9s %-8s %s\n' mutant property transport shape store killed "seconds (mean)"
jq -r '.cells[] | select(.result != "n-a") | [.mutant, .property, (.transport // "-"), (.shape // "-"), .store, .result, .seconds] | @tsv' "$out"/run-*/selftest.json |
  awk -F'\t' '{ k = $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5; runs[k]++; if ($6 == "killed") killed[k]++; secs[k] += $7 }
    END { for (k in runs) { split(k, f, "\t"); printf "%-28s %-22s %-10s %-8s %-9s %3d/%-4d %.1f\n", f[1], f[2], f[3], f[4], f[5], killed[k], runs[k], secs[k] / runs[k] } }' | sort
