# Scenario "host": what the image is made of, on this machine. Packages (docker.io, docker-compose,
# debootstrap, python3, and Quire's own through scripts/install-deps) → a Docker daemon (started here
# if none answers) → the static quire binary ($QUIRE_SMOKE_BIN, or built) → the base image (here,
# pulled, or made with debootstrap by scripts/docker-base). Sets docker, compose_bin, compose, bin, base.

step "packages: docker.io docker-compose debootstrap, and Quire's own (scripts/install-deps)"
[ "$(id -u)" = 0 ] || fail "run as root (apt-get, dockerd, debootstrap)"
need=()
for p in docker.io docker-compose debootstrap python3; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
scripts/install-deps
docker="${DOCKER:-/usr/bin/docker}"
[ -x "$docker" ] || docker="$(command -v docker)"
compose_bin="${COMPOSE:-docker-compose}"
compose="$compose_bin -p $project -f $repo/docker-compose.yml"
say "$($docker --version); $($compose_bin --version)"

step "Docker daemon"
if $docker info >/dev/null 2>&1; then
  say "using the running daemon ($($docker info -f '{{.ServerVersion}}, {{.Driver}}'))"
else
  say "no daemon answers: starting dockerd (log $work/dockerd.log)"
  dockerd >"$work/dockerd.log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 1 60); do $docker info >/dev/null 2>&1 && break; sleep 0.5; done
  $docker info >/dev/null 2>&1 || { tail -20 "$work/dockerd.log"; fail "dockerd did not come up"; }
  say "dockerd pid $daemon_pid ($($docker info -f '{{.ServerVersion}}, {{.Driver}}'))"
fi

step "quire binary (release, static Swift standard library)"
bin="${QUIRE_SMOKE_BIN:-}"
if [ -z "$bin" ]; then
  say "swift build -c release --static-swift-stdlib --product quire --scratch-path .build/docker"
  # A build already up to date prints none of these lines: grep finding nothing is no failure (the
  # build's own status still counts, through pipefail).
  swift build -c release --static-swift-stdlib --product quire --scratch-path .build/docker 2>&1 \
    | { grep -E "error|warning: .*Sources|Compiling|Build complete|Build of product" || true; } | tail -5 | indent
  bin="$repo/.build/docker/release/quire"
fi
[ -x "$bin" ] || fail "no quire binary at $bin"
needed=$(readelf -d "$bin" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p')
if grep -q libswift <<<"$needed"; then
  fail "$bin links the Swift runtime dynamically; build it with --static-swift-stdlib"
fi
say "$bin: $("$bin" --version), $(($(stat -c %s "$bin") / 1048576)) MB, needs: $(tr '\n' ' ' <<<"$needed")"

step "base image"
if $docker image inspect debian:bookworm-slim >/dev/null 2>&1; then
  base="debian:bookworm-slim"; say "debian:bookworm-slim is here"
elif timeout 60 $docker pull -q debian:bookworm-slim >/dev/null 2>&1; then
  base="debian:bookworm-slim"; say "pulled debian:bookworm-slim"
else
  base="quire-base:bookworm-slim"
  say "no registry answers: $base from debootstrap + docker import (scripts/docker-base)"
  DOCKER="$docker" scripts/docker-base "$base" 2>&1 | indent
fi
