# Scenario "ha": compose's ha profile. PostgreSQL (quire-postgres:smoke, built on the base image) and
# two brokers serving it together; a durable job submitted to one with no worker running, answered for
# by the other, the first SIGKILLed, the job claimed from the store and read by a worker at the second,
# read back through the CLI given both brokers → `down`. Puts the environment back as it found it.

step "ha profile: PostgreSQL and two brokers serving it together; the broker that took a job SIGKILLed, the job finished through the other"
$docker build -q --build-arg "BASE_IMAGE=$base" -t quire-postgres:smoke deploy/postgres >/dev/null || fail "docker build deploy/postgres failed"
say "quire-postgres:smoke built on $base (Debian's postgresql-15)"
export QUIRE_POSTGRES_IMAGE=quire-postgres:smoke QUIRE_AUTH=off
export QUIRE_STORE="postgresql://quire@postgres/quire" QUIRE_STORE_PASSWORD="smoke-$RANDOM$RANDOM"
export QUIRE_BROKERS="tcp://broker:5555,tcp://broker-b:5555"
QUIRE_PORT=$(free_port); QUIRE_STATS_PORT=$(free_port); QUIRE_PORT_B=$(free_port); QUIRE_STATS_PORT_B=$(free_port)
export QUIRE_PORT QUIRE_STATS_PORT QUIRE_PORT_B QUIRE_STATS_PORT_B
both="tcp://127.0.0.1:$QUIRE_PORT,tcp://127.0.0.1:$QUIRE_PORT_B"
compose="$compose --profile ha"
$compose config -q || fail "docker-compose rejects the ha profile"
compose_up=1
$compose up -d --scale ocr=0 postgres broker broker-b ocr 2>&1 | indent
serves_store() {   # the logs are read whole first: `logs | grep -q` fails under pipefail when grep's early exit cuts the logs off (SIGPIPE)
  local logs
  logs=$($compose logs --no-color "$1" 2>/dev/null) || true
  grep -q 'durable jobs on, in a store brokers share' <<<"$logs"
}
for svc in broker broker-b; do   # a broker started before PostgreSQL answered exits and is restarted
  for _ in $(seq 1 120); do
    serves_store "$svc" && break
    sleep 1
  done
  serves_store "$svc" \
    || fail "$svc does not serve the PostgreSQL store: $($compose logs --no-color --tail 5 "$svc")"
done
say "broker and broker-b both serve the store"
job=$("$bin" submit samples/hello.png --broker "tcp://127.0.0.1:$QUIRE_PORT") || fail "quire submit to broker failed"
job=$(tail -1 <<<"$job" | tr -d '[:space:]')
say "submitted job $job to broker, with no OCR worker running (committed to PostgreSQL)"
status=$("$bin" status "$job" --broker "tcp://127.0.0.1:$QUIRE_PORT_B") || fail "broker-b does not answer for $job"
grep -q queued <<<"$status" || fail "broker-b says of $job: $status"
say "broker-b answers for it: queued"
$docker kill -s KILL "$($compose ps -q broker)" >/dev/null
say "SIGKILLed broker"
$compose up -d --no-deps --scale ocr=1 ocr 2>&1 | indent
result=$("$bin" result "$job" --wait --wait-timeout-s 120 --broker "$both") || fail "quire result $job --wait through both brokers failed"
grep -q "quick brown fox" <<<"$result" || fail "job $job's result is not the sample's text: $(cut -c1-300 <<<"$result")"
say "job $job: claimed from the store and read by the OCR worker at broker-b, read through the CLI given both brokers"
compose_up=0
$compose down --volumes --remove-orphans --timeout 30 2>&1 | indent
$docker image rm -f quire-postgres:smoke >/dev/null 2>&1 || true
unset QUIRE_STORE QUIRE_STORE_PASSWORD QUIRE_BROKERS QUIRE_POSTGRES_IMAGE QUIRE_PORT_B QUIRE_STATS_PORT_B
compose="${compose% --profile ha}"
