# Scenario "compose": docker-compose.yml as shipped, `up` with 3 OCR workers and every service this
# build has (token worker, exporter, gateway) on free published ports → with auth, a client added in the
# token container gets a JWT through the published port and a request without one is refused → `quire
# recognize` through the published port → Cloud Vision images:annotate through the gateway's port (401
# without the token). Leaves the project up for "scale" and "restart"; sets endpoint, the QUIRE_*_PORT
# variables, use_auth and token (and exports the client's credentials for the client verbs after it).

step "docker-compose config"
$compose config -q || fail "docker-compose rejects docker-compose.yml"
say "accepted"

step "up: broker + 3 OCR workers$( [ $feature_token = 1 ] && echo ' + token worker')$( [ $feature_exporter = 1 ] && echo ' + exporter')$( [ $feature_gateway = 1 ] && echo ' + gateway')"
export QUIRE_IMAGE="$image"
QUIRE_PORT=$(free_port); QUIRE_STATS_PORT=$(free_port); QUIRE_EXPORTER_PORT=$(free_port); QUIRE_GATEWAY_PORT=$(free_port)
export QUIRE_PORT QUIRE_STATS_PORT QUIRE_EXPORTER_PORT QUIRE_GATEWAY_PORT
endpoint="tcp://127.0.0.1:$QUIRE_PORT"
# The host's client verbs must not pick up a local client's credentials.json (quire up's data folder).
export QUIRE_DATA="$work/client-data"
services=(broker ocr)
[ $feature_token = 1 ] && services+=(token)
[ $feature_exporter = 1 ] && services+=(exporter)
[ $feature_gateway = 1 ] && services+=(gateway)
use_auth=0
token=""
if [ $feature_auth = 1 ]; then
  if [ $feature_token = 1 ] && [ $feature_clients = 1 ]; then
    use_auth=1
  else
    skip_missing "auth" "the broker has --auth but this build has no token worker or 'quire clients'; QUIRE_AUTH=off"
    export QUIRE_AUTH=off
  fi
elif [ $feature_token = 0 ]; then
  skip_missing "token worker" "'quire worker token' is not in this build; the token service is not started"
fi
[ $feature_exporter = 1 ] || skip_missing "exporter" "'quire exporter' is not in this build; the exporter service is not started"
[ $feature_gateway = 1 ] || skip_missing "gateway" "'quire gateway' is not in this build; the gateway service is not started"
compose_up=1
$compose up -d --scale ocr=3 "${services[@]}" 2>&1 | indent
say "published: clients $endpoint, stats tcp://127.0.0.1:$QUIRE_STATS_PORT$( [ $feature_exporter = 1 ] && echo ", exporter http://127.0.0.1:$QUIRE_EXPORTER_PORT/metrics")$( [ $feature_gateway = 1 ] && echo ", gateway http://127.0.0.1:$QUIRE_GATEWAY_PORT")"
wait_for_ocr
say "mmi.service ocr → 200 through the published port"

if [ $feature_token = 1 ] && [ $feature_clients = 1 ]; then
  step "token worker: a client added in its container, a token through the published port"
  added=$($compose exec -T token quire clients add smoke --scope ocr --json 2>&1) || fail "quire clients add failed: $added"
  creds=$(py client-credentials "$added")
  [ -n "$creds" ] || fail "could not read a client id and secret from: $added"
  client_id="${creds%% *}" client_secret="${creds#* }"
  say "client $client_id added to the registry in the token-data volume"
  for _ in $(seq 1 20); do  # the token worker registers with the broker in its own time
    token=$(QUIRE_CLIENT_ID="$client_id" QUIRE_CLIENT_SECRET="$client_secret" QUIRE_RETRIES=0 \
      "$bin" token --broker "$endpoint" --timeout-ms 2000 2>"$work/token.err") && break
    sleep 0.5
  done
  [ -n "$token" ] || fail "quire token failed: $(cat "$work/token.err")"
  claims=$(py jwt-claims "$token") || fail "quire token did not print a JWT: $(cut -c1-200 <<<"$token")"
  say "auth.token → JWT ($claims)"
  grep -q "sub=$client_id " <<<"$claims" || fail "the token is not for client $client_id"
  if [ $use_auth = 1 ]; then
    if refused=$("$bin" recognize samples/hello.png --broker "$endpoint" --format text 2>&1); then
      fail "the broker answered an OCR request that carried no token"
    fi
    grep -q "unauthenticated" <<<"$refused" || fail "a request without a token was refused, but not as unauthenticated: $refused"
    say "without a token: refused ($(grep -o 'unauthenticated[^"]*' <<<"$refused" | head -1))"
    export QUIRE_CLIENT_ID="$client_id" QUIRE_CLIENT_SECRET="$client_secret"
    say "client verbs below send a token (the broker checks them)"
  fi
fi

step "quire recognize samples/hello.png through the published port"
text=$("$bin" recognize samples/hello.png --broker "$endpoint" --format text) || fail "recognize failed"
printf '%s\n' "$text" | sed '/^$/d; s/^/   | /'
grep -q "quick brown fox" <<<"$text" || fail "the recognised text is not the sample's"

if [ $feature_gateway = 1 ]; then
  step "gateway: Cloud Vision images:annotate through the published HTTP port$( [ $use_auth = 1 ] && echo ' (Authorization: Bearer, checked by the broker)')"
  text=$(gateway_annotate) || fail "the gateway did not read samples/hello.png"
  printf '%s\n' "$text" | sed '/^$/d; s/^/   | /'
  grep -q "quick brown fox" <<<"$text" || fail "the gateway's text is not the sample's: $(cut -c1-300 <<<"$text")"
  if [ $use_auth = 1 ]; then
    refused=$(py annotate-status "http://127.0.0.1:$QUIRE_GATEWAY_PORT")
    say "without a token: HTTP $refused"
    [ "$refused" = 401 ] || fail "the gateway answered $refused to a call without a token (expected 401)"
  fi
fi
