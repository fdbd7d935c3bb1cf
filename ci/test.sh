#!/usr/bin/env bash
# Passes every test of retrysafe on a fresh machine: checks the services the tests need
# (PostgreSQL, Redis, MariaDB, RabbitMQ, NATS with JetStream), starting them when installed but
# stopped, then runs gofmt, go vet, go test -race, the self-test of the properties against the
# reference API, consumer and client, the fuzz targets, the README's run commands and a sharded load
# (run --shard, merge), and checks that the runs' reports heal only faults they injected. Each stage prints how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '==> %s\n' "$*"; }

# stage NAME CMD...: runs one stage and prints its time.
stage() {
  local name=$1 start=$SECONDS
  shift
  say "$name"
  "$@"
  printf '    %s took %ds (total %ds)\n' "$name" $((SECONDS - start)) "$SECONDS"
}
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

ensure_rabbitmq() {
  answers 127.0.0.1 5672 && return 0
  say "RabbitMQ is not answering on 127.0.0.1:5672; starting it (this can take a minute)"
  command -v rabbitmq-server >/dev/null || die "RabbitMQ is needed (127.0.0.1:5672, guest/guest) but rabbitmq-server is not installed"
  rabbitmq-server -detached || die "could not start RabbitMQ"
  for _ in $(seq 180); do answers 127.0.0.1 5672 && return 0; sleep 0.5; done
  die "RabbitMQ did not come up on 127.0.0.1:5672 within 90 s"
}

ensure_nats() {
  answers 127.0.0.1 4222 && return 0
  say "NATS is not answering on 127.0.0.1:4222; starting it with JetStream"
  [ -x /usr/sbin/nats-server ] || die "NATS with JetStream is needed (127.0.0.1:4222) but /usr/sbin/nats-server is not installed"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server ||
    die "could not start NATS"
  wait_for NATS 4222
}

command -v go >/dev/null || die "Go 1.26 is needed on PATH"
ensure_postgres
ensure_redis
ensure_mariadb
ensure_rabbitmq
ensure_nats

stage "go mod download" go mod download

gofmt_check() {
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
  [ -z "$unformatted" ] || die "not gofmt-formatted: $unformatted"
}
stage "gofmt" gofmt_check
stage "go vet" go vet ./...
stage "chromium (for the HTML report's browser test)" ./ci/ensure-chromium.sh
# The sharded-load tests run processes of one binary, built once, in their own stage below.
stage "go test -race" go test -race -count=1 -timeout 15m $(go list ./... | grep -v '/shardtest$')
stage "retrysafe selftest (the properties against the reference API, consumer, client and their mutants)" \
  go run ./cmd/retrysafe selftest --json retrysafe-report/selftest.json
stage "fuzz targets, about 10 s each" ./ci/fuzz.sh 10s
stage "retrysafe run (the README's first command)" go run ./cmd/retrysafe run --report-dir retrysafe-report/run
for transport in webhook amqp nats; do
  stage "retrysafe run --consumer $transport" go run ./cmd/retrysafe run --consumer "$transport" --report-dir "retrysafe-report/consumer-$transport"
done
stage "retrysafe run --client" go run ./cmd/retrysafe run --client --report-dir retrysafe-report/client
shard_tests() {
  local dir
  dir=$(mktemp -d)
  go build -o "$dir/retrysafe" ./cmd/retrysafe
  RETRYSAFE_BIN="$dir/retrysafe" go test -count=1 -timeout 5m ./cmd/retrysafe/shardtest
  rm -rf "$dir"
}
stage "sharded load (4 shard processes vs two reference instances on PostgreSQL, then merge; one binary)" shard_tests
stage "every heal in the runs' report.json follows an inject of the same fault" \
  env RETRYSAFE_CHECK_REPORTS="$PWD/retrysafe-report/run,$PWD/retrysafe-report/consumer-webhook,$PWD/retrysafe-report/consumer-amqp,$PWD/retrysafe-report/consumer-nats,$PWD/retrysafe-report/client" \
  go test -count=1 -run '^TestReportedHealsFollowInjects$' ./cmd/retrysafe
say "all tests passed in ${SECONDS}s"
