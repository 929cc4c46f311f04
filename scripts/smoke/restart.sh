# Scenario "restart": on the project "scale" left with one OCR worker, a durable job submitted with no
# worker running survives `restart broker` and is read once a worker is back; the worker re-registers
# and the gateway reconnects by themselves → health checks (broker, OCR, gateway) → the OCR worker's
# memory → `down`, and nothing of the project remains.

step "broker restart: $( [ $feature_jobs = 1 ] && echo 'a durable job waiting on disk survives it' || echo 'workers come back by themselves')"
if [ $feature_jobs = 1 ]; then
  $compose up -d --no-deps --scale ocr=0 ocr 2>&1 | indent
  job=$("$bin" submit samples/hello.png --broker "$endpoint") || fail "quire submit failed"
  job=$(tail -1 <<<"$job" | tr -d '[:space:]')
  say "submitted job $job with no OCR worker running: $("$bin" status "$job" --broker "$endpoint" 2>&1 | tr '\n' ' ' | cut -c1-160)"
else
  skip_missing "durable job" "'quire submit/result' are not in this build; restarting the broker without a job"
fi
t0=$(date +%s%N)
$compose restart broker 2>&1 | indent
say "broker restarted in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
if [ $feature_jobs = 1 ]; then
  $compose up -d --no-deps --scale ocr=1 ocr 2>&1 | indent
  result=$("$bin" result "$job" --wait --broker "$endpoint") || fail "quire result $job --wait failed"
  grep -q "quick brown fox" <<<"$result" || fail "job $job's result is not the sample's text: $(cut -c1-300 <<<"$result")"
  say "job $job after the restart: done, with the sample's text"
fi
wait_for_ocr
text=$("$bin" recognize samples/hello.png --broker "$endpoint" --format text) || fail "recognize after the restart failed"
grep -q "quick brown fox" <<<"$text" || fail "wrong text after the restart"
say "the OCR worker re-registered by itself; recognize works again"
if [ $feature_gateway = 1 ]; then
  text=$(gateway_annotate) || fail "the gateway did not read after the broker's restart"
  grep -q "quick brown fox" <<<"$text" || fail "wrong text from the gateway after the restart"
  say "the gateway reconnected to the restarted broker by itself; images:annotate works again"
fi

step "health checks (HEALTHCHECK asks the broker with MMI; the gateway's, in compose, asks it over HTTP)"
health_services=(broker ocr)
[ $feature_gateway = 1 ] && health_services+=(gateway)
for svc in "${health_services[@]}"; do
  id=$($compose ps -q "$svc" | head -1)
  health=""
  for _ in $(seq 1 90); do
    health=$($docker inspect -f '{{.State.Health.Status}}' "$id")
    [ "$health" = healthy ] && break
    sleep 1
  done
  say "$svc: $health"
  [ "$health" = healthy ] || fail "$svc is $health: $($docker inspect -f '{{json .State.Health.Log}}' "$id" | cut -c1-400)"
done

step "OCR worker memory in its container"
id=$(ocr_containers | head -1)
say "docker stats: $($docker stats --no-stream --format '{{.Name}} mem {{.MemUsage}} cpu {{.CPUPerc}}' "$id")"
long_id=$($docker inspect -f '{{.Id}}' "$id")
for peak in "/sys/fs/cgroup/memory/docker/$long_id/memory.max_usage_in_bytes" \
            "/sys/fs/cgroup/system.slice/docker-$long_id.scope/memory.peak"; do
  [ -r "$peak" ] && say "peak since the container started (cgroup): $(($(cat "$peak") / 1048576)) MiB"
done

step "down"
compose_up=0
$compose down --volumes --remove-orphans --timeout 30 2>&1 | indent
leftovers=$($docker ps -aq --filter "label=com.docker.compose.project=$project"; \
            $docker network ls -q --filter "label=com.docker.compose.project=$project"; \
            $docker volume ls -q --filter "label=com.docker.compose.project=$project")
[ -z "$leftovers" ] || fail "left behind: $leftovers"
say "no containers, networks or volumes of project $project remain"
