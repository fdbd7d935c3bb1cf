#!/usr/bin/env bash
# Compares two self-tests' JSON cell by cell (retrysafe selftest compare): prints every
# difference; exits 1 when a correct run or a required cell differs (reported-only cells may
# differ: they are listed, not counted).
#
# Usage: ci/compare-selftest.sh A.json B.json      (RETRYSAFE_BIN: a built retrysafe, else go run)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 A.json B.json" >&2; exit 2; }
a=$(realpath -m "$1") b=$(realpath -m "$2")
if [ -n "${RETRYSAFE_BIN:-}" ]; then
  exec "$RETRYSAFE_BIN" selftest compare "$a" "$b"
fi
cd "$(dirname "$0")/.."
exec go run ./cmd/retrysafe selftest compare "$a" "$b"
