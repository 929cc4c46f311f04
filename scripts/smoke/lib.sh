# The runner's state and the functions its scenarios share (sourced by scripts/docker-smoke, which sets
# repo, smoke, allow_missing, keep_image and swarm first). The scenarios' Python is scripts/smoke/helpers.py.

started=$SECONDS
step() { printf '\n== [%3ds] %s\n' $((SECONDS - started)) "$*"; }
say() { printf '   %s\n' "$*"; }
indent() { sed 's/^/   /'; }
fail() { printf '\nFAIL [%ds]: %s\n' $((SECONDS - started)) "$*"; exit 1; }
missing=()
skip_missing() { missing+=("$1"); printf '   MISSING: %s — %s\n' "$1" "$2"; }
py() { python3 "$smoke/helpers.py" "$@"; }
free_port() { py free-port; }

# What the run made, for cleanup: the compose project while it is up, the Swarm stack, the daemon.
project="quiresmoke$$"
image="quire:smoke"
work="$(mktemp -d /tmp/quire-smoke.XXXXXX)"
daemon_pid=""
compose_up=0
stack=""
swarm_joined=0
gwbridge_made=0
log_followers=()

remove_stack() {  # stack rm, then wait for its containers and remove its volumes and network
  $docker stack rm "$stack" >/dev/null 2>&1
  for _ in $(seq 1 120); do
    [ -z "$($docker ps -aq --filter "label=com.docker.stack.namespace=$stack")" ] && break
    sleep 0.5
  done
  for _ in $(seq 1 20); do
    [ -z "$($docker network ls -q --filter "label=com.docker.stack.namespace=$stack")" ] && break
    sleep 0.5
  done
  $docker volume ls -q --filter "label=com.docker.stack.namespace=$stack" | xargs -r $docker volume rm >/dev/null
  stack=""
}

cleanup() {  # the EXIT trap: removes everything the run made, on success and on failure
  local status=$?
  set +e
  if [ "$compose_up" = 1 ]; then
    if [ "$status" != 0 ]; then
      echo; echo "== logs (last 30 lines per service)"
      $compose logs --no-color --tail 30 2>&1 | indent
    fi
    echo; echo "== cleanup: compose down (containers, network, volumes)"
    $compose down --volumes --remove-orphans --timeout 30 2>&1 | indent
  fi
  for pid in "${log_followers[@]}"; do kill "$pid" 2>/dev/null; done
  if [ -n "$stack" ]; then
    echo; echo "== cleanup: stack rm $stack (services, network, volumes)"
    remove_stack
  fi
  if [ "$swarm_joined" = 1 ]; then
    $docker swarm leave --force >/dev/null 2>&1 && echo "   left the Swarm this script created"
    [ "$gwbridge_made" = 1 ] && $docker network rm docker_gwbridge >/dev/null 2>&1
  fi
  if [ -n "${docker:-}" ]; then
    $docker image rm -f quire-postgres:smoke >/dev/null 2>&1  # the ha scenario's, when it failed before removing it
  fi
  if [ "$keep_image" = 0 ] && [ -n "${docker:-}" ] && $docker image inspect "$image" >/dev/null 2>&1; then
    $docker image rm -f "$image" >/dev/null 2>&1 && echo "   removed image $image"
    # The build stage's images from this run (they hold a copy of the binary); nothing older.
    if [ -f "$work/images-before" ]; then
      $docker images -aq --no-trunc --filter dangling=true | sort -u | comm -13 "$work/images-before" - \
        | xargs -r $docker image rm >/dev/null 2>&1
    fi
  fi
  rm -rf "$work"
  if [ -n "$daemon_pid" ]; then
    echo "   stopping the Docker daemon this script started (pid $daemon_pid)"
    kill -TERM "$daemon_pid" 2>/dev/null
    for _ in $(seq 1 60); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.5; done
  fi
  printf '== [%ds] docker-smoke finished with status %s\n' $((SECONDS - started)) "$status"
  exit "$status"
}

summary() {  # the last line: PASS, or INCOMPLETE with the steps that could not run (exit 3 without --allow-missing)
  echo
  if [ ${#missing[@]} -eq 0 ]; then
    printf 'PASS: every step ran, in %d s\n' $((SECONDS - started))
  else
    printf 'INCOMPLETE in %d s: these steps need features not in this build: %s\n' $((SECONDS - started)) "${missing[*]}"
    [ "$allow_missing" = 1 ] || exit 3
  fi
}

# ---------------------------------------------------------------------------------------------
# The stack, seen from the host (bin, endpoint, compose and the feature_* flags come from the
# scenarios before the ones that call these).

wait_for_ocr() {  # until the broker, through the published port, has an 'ocr' worker (MMI, RFC 8)
  local answer=""
  for _ in $(seq 1 120); do
    answer=$("$bin" call mmi.service ocr --broker "$endpoint" --timeout-ms 500 --retries 0 2>/dev/null || true)
    [ "$answer" = 200 ] && return 0
    sleep 0.5
  done
  fail "the broker at $endpoint has no ocr worker after 60 s (last answer: '${answer:-none}')"
}

ocr_containers() { $compose ps -q ocr | sort; }

stats_workers() {  # OCR workers in one stats snapshot (published port)
  "$bin" stats --once --json --stats "tcp://127.0.0.1:$QUIRE_STATS_PORT" 2>/dev/null | py stats-workers ocr
}
broker_logs() { $compose logs --no-color broker 2>/dev/null; }  # the swarm scenario reads its task's instead
broker_view() {  # OCR workers the broker registered, from its own log: ready minus gone
  broker_logs | py log-workers ocr
}
expect_workers() {  # $1 = count; polls the stats snapshot (or the broker's log without stats)
  local want=$1 got=""
  for _ in $(seq 1 40); do
    if [ $feature_stats = 1 ]; then got=$(stats_workers || true); else got=$(broker_view); fi
    [ "$got" = "$want" ] && break
    sleep 0.5
  done
  if [ $feature_stats = 1 ]; then
    say "stats snapshot (quire stats --once --json, published port): $got ocr workers"
  else
    say "broker log (workers ready minus gone): $got ocr workers"
  fi
  [ "$got" = "$want" ] || fail "expected $want ocr workers, the broker reports ${got:-nothing}"
}

gateway_annotate() {  # Cloud Vision images:annotate of samples/hello.png through the gateway's published port; prints the text
  local bearer=""
  [ "$use_auth" = 1 ] && bearer="${token:-}"
  QUIRE_SMOKE_BEARER="$bearer" py annotate "http://127.0.0.1:$QUIRE_GATEWAY_PORT" samples/hello.png
}

recognize_many() {  # $1 = count, $2 = in flight: samples/hello.png that many times through the published port
  local images=()
  for _ in $(seq 1 "$1"); do images+=(samples/hello.png); done
  "$bin" recognize "${images[@]}" --broker "$endpoint" --format text --in-flight "$2"
}
