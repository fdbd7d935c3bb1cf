#!/usr/bin/env bash
# Passes every test of retrysafe on a fresh machine: checks the services the tests need
# (PostgreSQL, Redis, MariaDB), starting them when installed but stopped, then runs gofmt,
# go vet, go test -race and the self-test of the properties against the reference API.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '==> %s\n' "$*"; }
die() { printf 'ci/test.sh: %s\n' "$*" >&2; exit 1; }

# answers HOST PORT: true when something accepts TCP connections there.
answers() { timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }

# wait_for NAME PORT: wait up to 30 s for a service to answer.
wait_for() {
  for _ in $(seq 60); do answers 127.0.0.1 "$2" && return 0; sleep 0.5; done
  die "$1 did not come up on 127.0.0.1:$2"
}

ensure_postgres() {
  answers 127.0.0.1 5432 && return 0
  say "PostgreSQL is not answering on 127.0.0.1:5432; starting it"
  command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ] ||
    die "PostgreSQL is needed (127.0.0.1:5432, trust auth, database test) but is not installed"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start ||
    die "could not start PostgreSQL"
  wait_for PostgreSQL 5432
}

ensure_redis() {
  answers 127.0.0.1 6379 && return 0
  say "Redis is not answering on 127.0.0.1:6379; starting it"
  command -v redis-server >/dev/null || die "Redis is needed (127.0.0.1:6379) but redis-server is not installed"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no || die "could not start Redis"
  wait_for Redis 6379
}

ensure_mariadb() {
  answers 127.0.0.1 3306 && return 0
  say "MariaDB is not answering on 127.0.0.1:3306; starting it"
  [ -x /usr/sbin/mariadbd ] || die "MariaDB is needed (127.0.0.1:3306, root, database test) but is not installed"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || die "could not start MariaDB"
  wait_for MariaDB 3306
}

command -v go >/dev/null || die "Go 1.26 is needed on PATH"
ensure_postgres
ensure_redis
ensure_mariadb

say "go mod download"
go mod download

say "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$unformatted" ] || die "not gofmt-formatted: $unformatted"

say "go vet"
go vet ./...

say "chromium (for the HTML report's browser test)"
./ci/ensure-chromium.sh

say "go test -race"
go test -race -count=1 -timeout 15m ./...

say "retrysafe selftest (the properties against the reference API and its mutants)"
go run ./cmd/retrysafe selftest --json retrysafe-report/selftest.json

say "fuzz targets, about 10 s each"
./ci/fuzz.sh 10s

say "retrysafe run (the README's first command)"
go run ./cmd/retrysafe run --report-dir retrysafe-report/run
say "all tests passed"
