// swift-tools-version:6.0
import PackageDescription

// System libraries come from Debian (`scripts/install-deps`). None of them uses
// `pkgConfig:`: Debian's tesseract.pc drags in libcurl-nss and libzmq.pc adds an
// `-isystem` flag SwiftPM rejects; the headers are on the default paths and the
// module maps' `link` lines are enough.
let package = Package(
    name: "Quire",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "quire", targets: ["quire"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "QuireWire", targets: ["QuireWire"]),
        .library(name: "QuireBroker", targets: ["QuireBroker"]),
        .library(name: "QuireWorker", targets: ["QuireWorker"]),
        .library(name: "QuireClient", targets: ["QuireClient"]),
        .library(name: "QuireStats", targets: ["QuireStats"]),
        .library(name: "QuireTokens", targets: ["QuireTokens"]),
    ],
    targets: [
        .systemLibrary(name: "CZeroMQ", providers: [.apt(["libzmq3-dev"])]),
        .systemLibrary(name: "CTesseract", providers: [.apt(["libtesseract-dev", "libleptonica-dev"])]),
        .systemLibrary(name: "CSodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CHeif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),

        .target(name: "QuireSupport"),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        // HTTP on GNU libmicrohttpd: the exporter and the gateway serve through it.
        .target(name: "QuireHTTP", dependencies: ["CMicroHTTPD"]),
        .target(name: "QuireWire"),
        .target(name: "QuireBroker", dependencies: ["QuireWire", "ZeroMQ", "QuireSupport", "QuireStats", "QuireTokens", "CSQLite"]),
        .target(name: "QuireWorker", dependencies: ["QuireWire", "ZeroMQ", "QuireSupport", "QuireStats"]),
        // Stats: the snapshot model, histogram and renderers (no sockets), and the monitoring tools
        // that subscribe to the broker's stats socket (terminal view, Prometheus exporter).
        .target(name: "QuireStats", dependencies: ["QuireSupport"]),
        .target(name: "QuireMonitor", dependencies: ["QuireStats", "ZeroMQ", "QuireSupport", "QuireHTTP"]),
        .target(name: "QuireClient", dependencies: ["QuireWire", "ZeroMQ", "QuireSupport"]),
        .target(name: "QuireTokens", dependencies: ["CSodium", "QuireWire", "QuireSupport"]),
        .target(name: "Tesseract", dependencies: ["CTesseract", "CHeif"]),
        .target(name: "QuireOCR", dependencies: ["Tesseract", "QuireWire", "QuireWorker", "QuireSupport"]),
        .target(
            name: "QuireBench",
            dependencies: ["QuireBroker", "QuireWorker", "QuireClient", "QuireOCR", "Tesseract", "QuireWire", "QuireSupport", "ZeroMQ", "QuireTokens"]
        ),

        .executableTarget(
            name: "quire",
            dependencies: ["QuireBroker", "QuireWorker", "QuireClient", "QuireWire", "QuireSupport", "ZeroMQ", "QuireBench", "QuireOCR",
                           "QuireStats", "QuireMonitor", "QuireTokens"]
        ),

        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"]),
        .testTarget(name: "QuireHTTPTests", dependencies: ["QuireHTTP"]),
        .testTarget(name: "QuireWireTests", dependencies: ["QuireWire"]),
        .testTarget(name: "QuireBrokerTests", dependencies: ["QuireBroker", "QuireWire", "QuireStats", "QuireTokens", "ZeroMQ", "QuireSupport"]),
        .testTarget(name: "QuireStatsTests", dependencies: ["QuireStats", "QuireMonitor", "QuireSupport", "QuireHTTP"]),
        .testTarget(name: "QuireTokensTests", dependencies: ["QuireTokens", "QuireWire", "QuireSupport"]),
        .testTarget(name: "QuireOCRTests", dependencies: ["QuireOCR", "QuireWire", "Tesseract"]),
        .testTarget(name: "QuireBenchTests", dependencies: ["QuireBench"]),
        .testTarget(
            name: "QuireEndToEndTests",
            dependencies: ["quire", "QuireClient", "QuireWire", "ZeroMQ"]
        ),
        .testTarget(
            name: "SystemLibraryTests",
            dependencies: ["CTesseract", "CSodium", "CSQLite", "CHeif"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
