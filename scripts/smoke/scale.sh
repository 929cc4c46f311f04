# Scenario "scale": on the project "compose" left up, the broker sees 3 OCR workers (stats snapshot,
# or its log without stats; the exporter's quire_ metrics) → scale to 1 while 90 requests are in
# flight: every one answered, the 2 stopped workers log that they drained → 30 more requests queued at
# once drain through the one worker left.

step "the broker sees 3 OCR workers"
running=$(ocr_containers | xargs -r $docker inspect -f '{{.State.Running}}' | grep -c true || true)
say "compose: $running ocr containers running: $(ocr_containers | xargs -r $docker inspect -f '{{.Name}}' | tr '\n' ' ')"
[ "$running" = 3 ] || fail "expected 3 running ocr containers, found $running"
if [ $feature_stats = 0 ]; then
  skip_missing "stats snapshot" "'quire stats' is not in this build; counting the broker's 'worker ready' log lines instead"
fi
expect_workers 3
if [ $feature_exporter = 1 ]; then
  metrics=$(py get "http://127.0.0.1:$QUIRE_EXPORTER_PORT/metrics" 2>/dev/null || true)
  grep -E '^quire_.*workers.*ocr' <<<"$metrics" | head -3 | sed 's/^/   exporter: /'
  grep -qE '^quire_' <<<"$metrics" || fail "the exporter serves no quire_ metrics"
fi

step "scale to 1 while 90 requests are in flight: stopped workers drain, none is lost"
for id in $(ocr_containers); do
  $docker logs -f "$id" >"$work/ocr-$id.log" 2>&1 &
  log_followers+=($!)
done
recognize_many 90 32 >"$work/batch1.out" 2>"$work/batch1.err" &
batch=$!
sleep 1
t0=$(date +%s%N)
$compose up -d --no-deps --scale ocr=1 ocr 2>&1 | indent
say "scale-down (2 workers stopped and removed) took $(( ($(date +%s%N) - t0) / 1000000 )) ms"
wait "$batch" || { cat "$work/batch1.err"; fail "requests failed during the scale-down"; }
ok=$(grep -c "quick brown fox" "$work/batch1.out" || true)
say "90 requests sent, $ok answered with the sample's text"
[ "$ok" = 90 ] || fail "expected 90 answers, got $ok"
for f in "$work"/ocr-*.log; do
  line=$(grep '"worker drained and stopped"' "$f" | grep '"service":"ocr"' | tail -1 || true)
  [ -n "$line" ] && say "$(basename "$f" .log | cut -c1-16): $line"
done
# Each container's OCR connection (its ocr.document connections drain too, and say so apart).
drained=$(cat "$work"/ocr-*.log | grep '"worker drained and stopped"' | grep -c '"service":"ocr"' || true)
[ "$drained" = 2 ] || fail "expected 2 workers to drain and stop, saw $drained"
left=$(ocr_containers | wc -l)
say "ocr containers now: $left"
[ "$left" = 1 ] || fail "expected 1 ocr container after the scale-down"
expect_workers 1

step "the queue still drains with one worker: 30 more requests"
t0=$SECONDS
recognize_many 30 30 >"$work/batch2.out" 2>"$work/batch2.err" \
  || { cat "$work/batch2.err"; fail "requests failed with one worker"; }
ok=$(grep -c "quick brown fox" "$work/batch2.out" || true)
say "30 queued at once, $ok answered in $((SECONDS - t0)) s by one worker"
[ "$ok" = 30 ] || fail "expected 30 answers, got $ok"
