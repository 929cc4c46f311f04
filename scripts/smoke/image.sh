# Scenario "image": the Quire image (quire:smoke) from the Dockerfile with the host's binary on the
# base image, checked inside (libraries, user, language packs, PDF and scene engine), then what this
# build can do. Needs host's docker, bin, base; sets the feature_* flags the later scenarios consult
# (a step whose feature is not in the build is reported MISSING).

step "Quire image ($image): the Dockerfile with QUIRE_BINARY (the host's binary) on $base"
mkdir -p "$work/context/scripts"
cp "$bin" "$work/context/quire"
cp -r scripts/build-tesseract scripts/debian-mirror scripts/tesseract-patches scripts/install-pdfium scripts/install-onnxruntime "$work/context/scripts/"  # the Dockerfile copies them (run only when compiling)
if [ -f /opt/quire-pdfium/lib/libpdfium.so ]; then cp -r /opt/quire-pdfium "$work/context/quire-pdfium"; fi  # PDF input
if [ -f /opt/quire-onnxruntime/lib/libonnxruntime.so ]; then cp -r /opt/quire-onnxruntime "$work/context/quire-onnxruntime"; fi  # the scene engine for photos
$docker images -aq --no-trunc | sort -u >"$work/images-before"
$docker build -q --build-arg QUIRE_BINARY=quire --build-arg "BUILD_IMAGE=$base" --build-arg "RUNTIME_IMAGE=$base" \
  -t "$image" -f Dockerfile "$work/context" >/dev/null || fail "docker build failed"
size=$($docker image inspect -f '{{.Size}}' "$image")
say "image size: $((size / 1000000)) MB ($size bytes; base $(($($docker image inspect -f '{{.Size}}' "$base") / 1000000)) MB)"
libraries=$($docker run --rm --entrypoint ldd "$image" /usr/local/bin/quire)
unresolved=$(grep "not found" <<<"$libraries" || true)
[ -z "$unresolved" ] || fail "libraries missing in the image: $unresolved"
say "ldd in the image: every library resolved ($(grep -c '=>' <<<"$libraries") shared objects)"
say "runs as: $($docker run --rm --entrypoint id "$image"); OMP_THREAD_LIMIT=$($docker run --rm --entrypoint printenv "$image" OMP_THREAD_LIMIT)"
say "language packs: $($docker run --rm --entrypoint ls "$image" /usr/share/tesseract-ocr/5/tessdata | grep traineddata | tr '\n' ' ')"
in_image=$($docker run --rm "$image" --version)
grep -q "(PDF: pdfium " <<<"$in_image" || fail "the image reads no PDF: $in_image"
grep -q "(scene engine: onnxruntime " <<<"$in_image" || fail "the image has no scene engine: $in_image"
say "in the image: $in_image"

step "what this build can do (steps for features not in it are reported MISSING)"
usage_text=$($docker run --rm "$image" --help)
worker_help=$($docker run --rm "$image" worker --help)
broker_help=$($docker run --rm "$image" broker --help)
has_command() { grep -qE "^ +$1( |$)" <<<"$usage_text"; }
feature_token=0; grep -qE "^ +token " <<<"$worker_help" && feature_token=1
feature_stats=0; has_command stats && feature_stats=1
feature_exporter=0; has_command exporter && feature_exporter=1
feature_jobs=0; has_command submit && has_command result && feature_jobs=1
feature_auth=0; grep -q -- "--auth" <<<"$broker_help" && feature_auth=1
feature_clients=0; has_command clients && feature_clients=1
feature_gateway=0; has_command gateway && feature_gateway=1
say "token worker=$feature_token stats=$feature_stats exporter=$feature_exporter durable jobs=$feature_jobs broker auth=$feature_auth clients=$feature_clients gateway=$feature_gateway"
