# Quire: one image for every role. Compose services differ only in `command:` (broker, worker ocr,
# worker token, gateway, exporter, and the client verbs). libmicrohttpd12 serves HTTP (exporter); Debian builds
# it with GnuTLS, so TLS needs nothing more. libcurl4 is FoundationNetworking's transport (the gateway
# fetches allowed image URLs): --static-swift-stdlib links Foundation in, but libcurl stays a shared
# library, and the binary must be linked against this flavour (libcurl.so.4, OpenSSL), so the build
# stage installs libcurl4-openssl-dev (libtesseract-dev would otherwise pull in the NSS flavour).
#
# From source (needs a registry for the official Swift image):
#   docker build -t quire .
# From a static binary already built on a Debian 12 host (what scripts/docker-smoke does where no
# registry answers; the base image then comes from scripts/docker-base):
#   swift build -c release --static-swift-stdlib --product quire
#   mkdir -p ctx/scripts && cp .build/release/quire ctx/ && cp -r scripts/build-tesseract scripts/debian-mirror scripts/tesseract-patches scripts/install-pdfium scripts/install-onnxruntime ctx/scripts/
#   cp -r /opt/quire-pdfium ctx/quire-pdfium     # PDF input (scripts/install-pdfium made it on the host)
#   cp -r /opt/quire-onnxruntime ctx/quire-onnxruntime   # the scene engine for photos (scripts/install-onnxruntime)
#   docker build --build-arg QUIRE_BINARY=quire --build-arg BUILD_IMAGE=quire-base:bookworm-slim \
#     --build-arg RUNTIME_IMAGE=quire-base:bookworm-slim -t quire -f Dockerfile ctx
#
# Two stages and no optional ones: the classic builder (Debian's docker.io 20.10, docker-compose 1.29)
# builds every stage before the target, so the choice between compiling and taking a binary is made
# by a build argument inside the build stage, not by picking a stage.
#
# Build arguments:
#   BUILD_IMAGE          the build stage's image: the official Swift image, or any Debian 12 image
#                        when QUIRE_BINARY is given
#   QUIRE_BINARY         path in the build context of a static quire binary to use instead of compiling
#   RUNTIME_IMAGE        Debian 12 for the runtime (debian:bookworm-slim, or a local import of it)
#   TESSERACT_LANGUAGES  Debian language packs to install, by package suffix (default: the languages and
#                        scripts of docs/ocr.md "Languages"; "eng osd" for an English-only image)

ARG BUILD_IMAGE=swift:6.3-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---- build: compile with the Swift toolchain, or take the binary from the context ---------------
FROM ${BUILD_IMAGE} AS build
ARG QUIRE_BINARY=""
# The C libraries' headers for the compiler (only when compiling: this layer is cached apart from
# the sources).
RUN set -eux; \
    if [ -z "$QUIRE_BINARY" ]; then \
        export DEBIAN_FRONTEND=noninteractive; \
        apt-get update; \
        apt-get install -y --no-install-recommends \
            libzmq3-dev libtesseract-dev libleptonica-dev libsodium-dev libsqlite3-dev libpq-dev libheif-dev \
            libmicrohttpd-dev libcurl4-openssl-dev libcld2-dev libjemalloc-dev cmake g++ make patch python3 python3-venv xz-utils; \
        rm -rf /var/lib/apt/lists/*; \
    fi
# Tesseract 5.5 built from Debian 13's source into /opt/quire-tesseract, which Package.swift links
# statically, with Quire's patches (about 5 minutes; its own layer, so a change to the sources does
# not rebuild it).
COPY scripts/build-tesseract scripts/debian-mirror /usr/local/bin/
COPY scripts/tesseract-patches/ /usr/local/bin/tesseract-patches/
RUN set -eux; if [ -z "$QUIRE_BINARY" ]; then build-tesseract; fi
# PDFium (PDF input), loaded by quire at run time from /opt/quire-pdfium: fetched through pip's index
# when compiling; taken from the context (quire-pdfium/) with a prebuilt binary. Without it, the
# image reads every format but PDF.
COPY scripts/install-pdfium /usr/local/bin/install-pdfium
RUN set -eux; if [ -z "$QUIRE_BINARY" ]; then install-pdfium; fi
# ONNX Runtime and the PP-OCRv6 models (the scene engine for photos) in /opt/quire-onnxruntime: the C
# API header that the compiler reads, from ONNX Runtime's source in the Debian archive; the library
# and models that quire loads at run time, through pip's index. Taken from the context
# (quire-onnxruntime/) with a prebuilt binary. Without it, the image reads photos with Tesseract only.
COPY scripts/install-onnxruntime /usr/local/bin/install-onnxruntime
RUN set -eux; if [ -z "$QUIRE_BINARY" ]; then install-onnxruntime; fi
WORKDIR /src
# SwiftPM wants every target's directory, the test targets' too (.dockerignore leaves out .build).
COPY . ./
RUN set -eux; \
    if [ -n "$QUIRE_BINARY" ]; then \
        install -D -m 0755 "$QUIRE_BINARY" /out/quire; \
        if [ -d quire-pdfium ]; then rm -rf /opt/quire-pdfium; cp -r quire-pdfium /opt/quire-pdfium; fi; \
        if [ -d quire-onnxruntime ]; then rm -rf /opt/quire-onnxruntime; cp -r quire-onnxruntime /opt/quire-onnxruntime; fi; \
    else \
        swift build -c release --static-swift-stdlib --product quire; \
        install -D -m 0755 "$(swift build -c release --show-bin-path)/quire" /out/quire; \
    fi; \
    mkdir -p /opt/quire-pdfium /opt/quire-onnxruntime/lib /opt/quire-onnxruntime/models /opt/quire-onnxruntime/share/licenses

# ---- runtime: Debian's shared libraries, language packs, an unprivileged user, the binary -------
FROM ${RUNTIME_IMAGE} AS runtime
ARG TESSERACT_LANGUAGES="eng osd ita chi-tra chi-sim jpn kor hin mar rus ukr srp ell ara heb tha tam tel deu fra spa por script-latn script-hans script-hant script-jpan script-hang script-deva script-cyrl script-grek script-arab script-hebr script-thai script-taml script-telu"
RUN set -eux; \
    export DEBIAN_FRONTEND=noninteractive; \
    packs=""; for l in $TESSERACT_LANGUAGES; do packs="$packs tesseract-ocr-$(echo "$l" | tr '_' '-' | tr 'A-Z' 'a-z')"; done; \
    apt-get update; \
    apt-get install -y --no-install-recommends \
        libzmq5 libtesseract5 liblept5 libsodium23 libheif1 libsqlite3-0 libpq5 libmicrohttpd12 libcurl4 libcld2-0 libjemalloc2 wamerican $packs; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log; \
    groupadd --system --gid 10001 quire; \
    useradd --system --uid 10001 --gid quire --home-dir /var/lib/quire --no-create-home \
        --shell /usr/sbin/nologin quire; \
    install -d -o quire -g quire -m 0750 /var/lib/quire /var/lib/quire-token

# Debian's Tesseract is built with OpenMP: without this at process start it runs ~6x slower.
# Parallelism comes from worker containers (and --threads), one engine per thread.
ENV OMP_THREAD_LIMIT=1 \
    QUIRE_TESSDATA=/usr/share/tesseract-ocr/5/tessdata \
    QUIRE_BIND=tcp://*:5555
# No VOLUME here (every OCR worker and client run would get an anonymous volume): compose mounts named
# volumes on these directories, and an empty named volume takes their ownership, so the broker's job
# store and the token worker's keys are writable by the unprivileged user.
WORKDIR /var/lib/quire
USER quire:quire
EXPOSE 5555 5556 8080 9464

# Workers drain on SIGTERM (finish the request in hand, DISCONNECT, exit 0); give them the time with
# `stop_grace_period` (compose) or `docker stop -t`.
STOPSIGNAL SIGTERM

# Healthy = the broker answers MMI (RFC 8) within 3 s. In the broker's container that is the broker
# itself; in a worker's, the broker it serves (QUIRE_BROKER). QUIRE_HEALTH_BROKER overrides.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD quire call mmi.service ocr --broker "${QUIRE_HEALTH_BROKER:-${QUIRE_BROKER:-tcp://127.0.0.1:5555}}" \
        --timeout-ms 3000 --retries 0 >/dev/null || exit 1

ENTRYPOINT ["quire"]
CMD ["broker"]

COPY --from=build /out/quire /usr/local/bin/quire
COPY --from=build /opt/quire-pdfium /opt/quire-pdfium
# The header stays in the build stage: quire needs only the library, the models and their licences.
COPY --from=build /opt/quire-onnxruntime/lib /opt/quire-onnxruntime/lib
COPY --from=build /opt/quire-onnxruntime/models /opt/quire-onnxruntime/models
COPY --from=build /opt/quire-onnxruntime/share/licenses /opt/quire-onnxruntime/share/licenses
# Fails the build if a library is missing or the binary is not for this system.
RUN ["quire", "--version"]
