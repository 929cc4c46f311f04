# Scenario "swarm" (--swarm): the same docker-compose.yml on a one-node Swarm. `docker stack deploy`
# (plus docker-compose.dnsrr.yml where the kernel has no IPVS) → broker 1/1 and OCR 2/2 healthy →
# recognize through the published port → `docker service scale` to 3 OCR workers, which the broker
# sees, and 30 requests → `stack rm`, leave the Swarm. Reported MISSING when the daemon is already in a
# Swarm (this test does not touch one it did not make).

step "Swarm: docker stack deploy with the same file"
state=$($docker info -f '{{.Swarm.LocalNodeState}}')
if [ "$state" != inactive ]; then
  skip_missing "swarm" "this daemon is already in a Swarm ($state); the smoke test does not touch it"
else
  $docker network inspect docker_gwbridge >/dev/null 2>&1 || gwbridge_made=1
  $docker swarm init --advertise-addr 127.0.0.1 >/dev/null
  swarm_joined=1
  say "one-node Swarm initialised"
  files=(-c docker-compose.yml)
  modprobe ip_vs 2>/dev/null || true
  if [ -e /proc/net/ip_vs ]; then
    say "IPVS present: service virtual IPs and the ingress routing mesh"
  else
    files+=(-c docker-compose.dnsrr.yml)
    say "no IPVS in this kernel: + docker-compose.dnsrr.yml (DNS round robin, broker ports in host mode)"
  fi
  QUIRE_PORT=$(free_port); QUIRE_STATS_PORT=$(free_port); QUIRE_EXPORTER_PORT=$(free_port)
  endpoint="tcp://127.0.0.1:$QUIRE_PORT"
  stack="quiresmoke$$"
  if [ $feature_auth = 1 ]; then  # the compose phase covered auth; its client died with its volume
    export QUIRE_AUTH=off; unset QUIRE_CLIENT_ID QUIRE_CLIENT_SECRET
    say "QUIRE_AUTH=off on the Swarm (the compose phase ran with auth)"
  fi
  # What stack deploy says about images without a registry is no news here.
  $docker stack deploy "${files[@]}" "$stack" 2>&1 \
    | { grep -vE "registry to record|its digest|independently|versions of the image|^$" || true; } | indent
  replicas() { $docker service ls --filter "name=${stack}_$1" --format '{{.Replicas}}' | head -1; }
  wait_replicas() {  # $1 service, $2 wanted; tasks count once their health check passes
    local got=""
    for _ in $(seq 1 180); do
      got=$(replicas "$1"); [ "$got" = "$2/$2" ] && break; sleep 1
    done
    say "${stack}_$1: $got running and healthy"
    [ "$got" = "$2/$2" ] || fail "Swarm service $1 has $got replicas, wanted $2"
  }
  wait_replicas broker 1
  wait_replicas ocr 2
  broker_logs() {  # the broker task's log, for expect_workers without stats
    $docker ps -q --filter "label=com.docker.swarm.service.name=${stack}_broker" | head -1 | xargs -r $docker logs 2>&1
  }
  wait_for_ocr
  text=$("$bin" recognize samples/hello.png --broker "$endpoint" --format text) || fail "recognize on the Swarm failed"
  grep -q "quick brown fox" <<<"$text" || fail "wrong text from the Swarm"
  say "recognize through the published port: the sample's text"
  $docker service scale -d "${stack}_ocr=3" >/dev/null
  wait_replicas ocr 3
  expect_workers 3
  ok=$(recognize_many 30 30 | grep -c "quick brown fox" || true)
  say "30 requests, $ok answered"
  [ "$ok" = 30 ] || fail "expected 30 answers from the Swarm, got $ok"
  remove_stack
  $docker swarm leave --force >/dev/null
  swarm_joined=0
  [ "$gwbridge_made" = 1 ] && $docker network rm docker_gwbridge >/dev/null 2>&1
  say "stack removed (services, network, volumes); left the Swarm"
fi
