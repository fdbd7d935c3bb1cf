#!/usr/bin/env bash
# Passes every test of retrysafe on a fresh machine: checks the services the tests need
# (PostgreSQL, Redis, MariaDB, RabbitMQ, NATS with JetStream), starting them when installed but
# stopped, then runs gofmt, go vet, go test -race, the self-test of the properties against the
# reference API, consumer and client, the fuzz targets, the README's run commands and a sharded
# load (run --shard, merge), and checks that the runs' reports heal only faults they injected.
#
# One retrysafe binary is built first and used by every later stage, while Chromium (for the
# HTML report's browser test) is installed if missing. Then four lanes run at
# once, each a sequence of stages: the checks (go test -race), the proof (the self-test, the
# runs, the sharded load: they mostly wait, for AckWaits, retention windows, kills and restarts)
# and, niced, go vet and the fuzz targets (a lane each). Each stage's output goes to its own log under
# retrysafe-report/ci/ and is printed whole when its lane ends, so that lanes never interleave;
# a line says when each stage starts and ends, and the stage table at the end gives each
# stage's lane, start, wall and CPU time, and the total.
set -euo pipefail
cd "$(dirname "$0")/.."
exec 3>&1 # the console: each stage says on it when it starts and ends, whichever lane runs it

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
command -v python3 >/dev/null || die "python3 is needed on PATH (the lifecycle example's app, testdata/pyapp/app.py: its standard library only)"
command -v psql >/dev/null || die "psql (PostgreSQL's client) is needed on PATH (the async reference run's schema ci_async)"
ensure_postgres
ensure_redis
ensure_mariadb
ensure_rabbitmq
ensure_nats

report=retrysafe-report
logs=$report/ci
rm -rf "$logs"
mkdir -p "$logs"
table=$logs/stages.tsv # name, lane, start (s since the beginning), wall (s), result
: >"$table"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# stage LANE NAME CMD...: runs one stage, its output to its own log, and records it in the
# table with its wall time and the CPU time its processes used (bash's times: what the stage's
# commands and every process they waited for spent). In the main lane ("-") the output is printed
# as it comes.
stage() {
  local lane=$1 name=$2 start=$SECONDS log rc=0 cpu
  shift 2
  log="$logs/$(printf '%02d' "$(wc -l <"$table")")-$(echo "$name" | tr -c 'A-Za-z0-9.-' '_' | cut -c1-60).log"
  cpu=$(mktemp)
  printf '==> [%s] %s (at %ds)\n' "$lane" "$name" "$start" >&3
  if [ "$lane" = "-" ]; then
    ( "$@"; r=$?; times >"$cpu"; exit $r ) 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
  else
    ( "$@"; r=$?; times >"$cpu"; exit $r ) >"$log" 2>&1 || rc=$?
  fi
  local result=ok
  [ "$rc" -eq 0 ] || result="FAILED ($rc)"
  printf '%s\t%s\t%d\t%d\t%s\t%s\t%d\n' "$name" "$lane" "$start" $((SECONDS - start)) "$result" "$log" "$(cpu_seconds "$cpu")" >>"$table"
  rm -f "$cpu"
  printf '    [%s] %s: %s after %ds (at %ds)\n' "$lane" "$name" "$result" $((SECONDS - start)) "$SECONDS" >&3
  return "$rc"
}

# cpu_seconds FILE: the user and system seconds of the children in the output of bash's times.
cpu_seconds() {
  awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] }; printf "%d", n }' "$1" 2>/dev/null || echo 0
}

# busy_seconds: the CPU seconds the whole machine has spent busy since it started (/proc/stat:
# every state but idle and iowait), to report how busy the run kept it.
busy_seconds() {
  awk '/^cpu / { printf "%d", ($2 + $3 + $4 + $7 + $8 + $9) / '"$(getconf CLK_TCK)"' }' /proc/stat
}
busy_start=$(busy_seconds)

# print_lane LANE prints the logs of the lane's stages, in order.
print_lane() {
  awk -F'\t' -v lane="$1" '$2 == lane { print $1 "\t" $6 }' "$table" | while IFS=$'\t' read -r name log; do
    printf '\n==== [%s] %s: output (%s) ====\n' "$1" "$name" "$log"
    cat "$log"
  done
}

# print_table prints the stage table, the total and how busy the machine's cores were.
print_table() {
  printf '\n%-78s %-7s %7s %7s %7s  %s\n' "stage" "lane" "start" "wall" "cpu" "result"
  sort -t$'\t' -k3,3n "$table" | while IFS=$'\t' read -r name lane start wall result _ cpu; do
    printf '%-78s %-7s %6ds %6ds %6ds  %s\n' "$name" "$lane" "$start" "$wall" "$cpu" "$result"
  done
  printf '%-78s %-7s %7s %6ds %6ds  (the machine: %d cores, busy %d%% of the time)\n' "total" "" "" "$SECONDS" \
    $(($(busy_seconds) - busy_start)) "$(nproc)" $((100 * ($(busy_seconds) - busy_start) / (SECONDS * $(nproc) + 1)))
}

# Every build of the run uses the same flags (GOFLAGS, so the go commands the tests start too), so
# that what one stage compiled the others reuse: no DWARF (-gcflags=all=-dwarf=false, and
# -ldflags=-s, which implies -w): stack traces and the race detector's reports read the runtime's
# own tables, which stay, and a sixth of the compiler's work and most of the linker's go.
export GOFLAGS="-gcflags=all=-dwarf=false -ldflags=-s"

gofmt_check() {
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
  [ -z "$unformatted" ] || { echo "not gofmt-formatted: $unformatted" >&2; return 1; }
}

stage - "go mod download" go mod download || die "go mod download failed"
stage - "gofmt" gofmt_check || { print_table; die "not gofmt-formatted"; }

export RETRYSAFE_BIN="$work/retrysafe"

# The build lane builds the one retrysafe binary that every later stage uses; a non-race build
# keeps a core busy at most, so the race build starts beside it. The stages that need the binary
# wait for it (needs_binary).
build_lane() {
  if stage build "build retrysafe (one binary for every later stage)" go build -o "$work/retrysafe.partial" ./cmd/retrysafe; then
    mv "$work/retrysafe.partial" "$RETRYSAFE_BIN"
    touch "$work/binary.ok"
  else
    touch "$work/binary.failed"
    return 1
  fi
}

# The chromium lane makes sure headless Chromium is there for the HTML report's browser test
# (installing it takes most of a minute on a fresh machine, mostly waiting on the download: it
# runs beside the builds); go test -race waits for it (needs_chromium).
chromium_lane() {
  if stage chromium "chromium (for the HTML report's browser test)" ./ci/ensure-chromium.sh; then
    touch "$work/chromium.ok"
  else
    touch "$work/chromium.failed"
    return 1
  fi
}

needs_chromium() {
  until [ -e "$work/chromium.ok" ] || [ -e "$work/chromium.failed" ]; do sleep 1; done
  [ -e "$work/chromium.ok" ]
}

# needs_binary waits until the binary lane has built the binary, and fails if it could not.
needs_binary() {
  until [ -e "$work/binary.ok" ] || [ -e "$work/binary.failed" ]; do sleep 1; done
  [ -e "$work/binary.ok" ]
}

# The checks lane: go test -race. While the binary builds, every package is compiled for the race
# detector (go build -race); then the tests run. The tests that wait (on brokers, retention
# windows, processes) run in parallel: each test binary runs with GOMAXPROCS=8, so that go test's
# -parallel defaults to 8 (Ginkgo, which the harness drives, refuses an explicit -parallel flag),
# and four packages test at once. go test's own vet pass is off: the full go vet runs in the vet
# lane. The test binary of ./cmd/retrysafe is kept for the heals check after the runs. The
# sharded-load tests run in the proof lane, against the one binary.
# The HTML report's layout test keeps its screenshots (a failing and a passing report at 1400 px
# and at a 390 px phone width) in $report/html-screenshots/, beside the runs' reports.
# race_packages lists the packages go test -race runs, the longest first (go test starts them in
# the order given, four at a time): a long one started last would be the lane's tail.
race_packages() {
  local long=(suites/consumer cmd/retrysafe suites/probe targets/reference suites/embedtest suites/client suites/bench
    targets/reference/client targets/reference/consumer suites/selftest)
  local module p
  module=$(go list -m)
  for p in "${long[@]}"; do echo "$module/$p"; done
  go list ./... | grep -v '/shardtest$' | grep -vxF -f <(printf "$module/%s\n" "${long[@]}")
}

checks_lane() {
  stage checks "compile every package for the race detector" go build -race ./... &&
    needs_binary && needs_chromium &&
    stage checks "go test -race (waiting tests 8 at a time, 4 packages at once)" \
      env RETRYSAFE_HTML_SCREENSHOTS="$PWD/$report/html-screenshots" go test -race -count=1 -timeout 15m -vet=off -p 4 -exec "env GOMAXPROCS=8" $(race_packages) &&
    stage checks "the test binary of ./cmd/retrysafe (for the heals check)" go test -race -vet=off -c -o "$work/cmd.test" ./cmd/retrysafe
}

# start_run NAME REPORT_DIR [ENV=VALUE ...] -- ARGS...: starts `retrysafe run ARGS --report-dir
# REPORT_DIR` in the background with the environment given (run_all's pids and names record it,
# its output goes to $logs/run-NAME.log) and adds REPORT_DIR to the list the heals check reads
# ($work/run-reports), so that no run's report goes unchecked.
start_run() {
  local name=$1 dir=$2 envs=()
  shift 2
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  echo "$PWD/$dir" >>"$work/run-reports"
  env "${envs[@]}" "$RETRYSAFE_BIN" run "$@" --report-dir "$dir" >"$logs/run-$name.log" 2>&1 &
  pids+=($!) names+=("${envs[*]}${envs:+ }retrysafe run${*:+ $*}")
}

# run_all runs the README's run commands at once, with the one binary (each starts its own
# reference target on ports reserved for it, with broker names of its own), and fails when one
# does.
run_all() {
  local pids=() names=() rc=0 i transport
  : >"$work/run-reports"
  start_run api "$report/run" --   # the README's first command
  for transport in webhook amqp nats; do
    start_run "consumer-$transport" "$report/consumer-$transport" -- --consumer "$transport"
  done
  start_run client "$report/client" -- --client
  for transport in amqp nats webhook; do
    start_run "chain-$transport" "$report/chain-$transport" -- --chain "$transport"
  done
  # An app that is not the reference, started through its lifecycle (python3 app.py): its
  # crash-after-claim on a port (below the ephemeral range the other runs reserve in) and a
  # SQLite file of its own.
  start_run python-app "$report/python-app" PYAPP_URL=http://127.0.0.1:18563 PYAPP_DB="$work/python-app.db" -- \
    --target targets/examples/python-app-managed.yaml --label-filter property:crash-after-claim
  # The asynchronous reference API (serve --async) through its example file, on SQLite and on
  # PostgreSQL, each on a port of its own (below the ephemeral range), with the built-in run's
  # short retention and lock timeout so that expiry and the crash properties run within
  # --max-wait. On PostgreSQL it has a schema of its own (ci_async), made anew, so that no other
  # stage's tables share its counts.
  psql -q -h 127.0.0.1 -U postgres -d test -c 'DROP SCHEMA IF EXISTS ci_async CASCADE' -c 'CREATE SCHEMA ci_async' ||
    { echo "could not make the schema ci_async in PostgreSQL's database test"; return 1; }
  start_run async-sqlite "$report/async-sqlite" RETRYSAFE_STORE=sqlite RETRYSAFE_DSN="$work/reference-async.db" \
    RETRYSAFE_URL=http://127.0.0.1:18561 RETRYSAFE_RETENTION=4s RETRYSAFE_LOCK_TIMEOUT=3s -- --target targets/examples/reference-async.yaml
  start_run async-postgres "$report/async-postgres" RETRYSAFE_STORE=postgres \
    RETRYSAFE_DSN="postgres://postgres@127.0.0.1:5432/test?search_path=ci_async&sslmode=disable" \
    RETRYSAFE_URL=http://127.0.0.1:18562 RETRYSAFE_RETENTION=4s RETRYSAFE_LOCK_TIMEOUT=3s -- --target targets/examples/reference-async.yaml
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then echo "${names[$i]}: passed"; else echo "${names[$i]}: FAILED"; rc=1; fi
  done
  for f in "$logs"/run-*.log; do printf '\n---- %s ----\n' "$f"; cat "$f"; done
  return "$rc"
}

# The proof lane: the self-test, then the README's runs at once, then the sharded load.
proof_lane() {
  needs_binary &&
    stage proof "retrysafe selftest (the properties against the reference API, consumer, client and their mutants)" \
      "$RETRYSAFE_BIN" selftest --report-dir "$report/selftest" &&
    stage proof "retrysafe run, run --consumer webhook|amqp|nats, run --client, run --chain amqp|nats|webhook, the Python app's crash-after-claim and run --target reference-async.yaml (sqlite, postgres), at once" run_all &&
    stage proof "sharded load (4 shard processes vs two reference instances on PostgreSQL, then merge)" \
      go test -count=1 -timeout 5m -vet=off ./cmd/retrysafe/shardtest
}

# The vet and fuzz lanes compute as much as the others but nothing waits on them: they start once
# the binary is built (go vet reads what that build compiled; the race build has the CPU until
# then) and run niced, beside each other, on the CPU that the waiting self-test and tests leave.
vet_lane() {
  needs_binary &&
    stage vet "go vet" nice -n 10 go vet ./...
}

fuzz_lane() {
  needs_binary &&
    stage fuzz "fuzz targets, about 10 s each, 3 at once (one instrumented build per package)" nice -n 10 ./ci/fuzz.sh 10s
}

lanes=(build chromium checks proof vet fuzz)
for lane in "${lanes[@]}"; do
  "${lane}_lane" >"$logs/lane-$lane.out" 2>&1 &
  eval "pid_$lane=\$!"
done
# Whatever ends the build lane, the lanes that wait for the binary learn how it went.
( while kill -0 "$pid_build" 2>/dev/null; do sleep 1; done
  [ -e "$work/binary.ok" ] || touch "$work/binary.failed" ) &
failed=()
for lane in build chromium proof checks vet fuzz; do
  pid_var="pid_$lane"
  if wait "${!pid_var}"; then status=passed; else status=FAILED; failed+=("$lane"); fi
  cat "$logs/lane-$lane.out"
  print_lane "$lane"
  printf '\n==> lane %s %s (at %ds)\n' "$lane" "$status" "$SECONDS"
done

if [ ${#failed[@]} -eq 0 ]; then
  stage - "every heal in the runs' report.json follows an inject of the same fault" \
    env RETRYSAFE_CHECK_REPORTS="$(paste -sd, "$work/run-reports")" \
    bash -c "cd cmd/retrysafe && '$work/cmd.test' -test.count=1 -test.run '^TestReportedHealsFollowInjects\$'" || failed+=(heals)
fi
print_table
[ ${#failed[@]} -eq 0 ] || die "failed: ${failed[*]}"
say "all tests passed in ${SECONDS}s"
