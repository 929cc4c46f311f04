// swift-tools-version:6.0
import Foundation
import PackageDescription

// System libraries come from Debian (`scripts/install-deps`). None of them uses
// `pkgConfig:`: Debian's tesseract.pc drags in libcurl-nss and libzmq.pc adds an
// `-isystem` flag SwiftPM rejects; the headers are on the default paths and the
// module maps' `link` lines are enough.
//
// Tesseract: when `scripts/build-tesseract` has put its static 5.5 build in /opt/quire-tesseract,
// `-ltesseract` finds that archive before Debian's shared 5.3 (and Sources/CTesseract/CTesseract.h
// takes its headers); without it, Debian's libtesseract is linked as before.
// Its C++ headers (CTesseractWalk) then come from the same build, ahead of Debian's on the default
// path: the archive and the headers are taken together or not at all.
let bundledTesseract = "/opt/quire-tesseract"
let bundled = FileManager.default.fileExists(atPath: bundledTesseract + "/lib/libtesseract.a")
let tesseractLinking: [LinkerSetting] = bundled ? [.unsafeFlags(["-L" + bundledTesseract + "/lib"]), .linkedLibrary("stdc++")] : []
let tesseractHeaders: [CXXSetting] = bundled ? [.unsafeFlags(["-I" + bundledTesseract + "/include"])] : []

let onnxRuntime = "/opt/quire-onnxruntime"

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
        .library(name: "QuireJWT", targets: ["QuireJWT"]),
        .library(name: "QuireTokens", targets: ["QuireTokens"]),
        .library(name: "QuireStack", targets: ["QuireStack"]),
        .library(name: "QuireFormats", targets: ["QuireFormats"]),
        // The fuzz targets' bodies, for FuzzTesting/ (its own package: libFuzzer's entry points).
        .library(name: "QuireFuzz", targets: ["QuireFuzz"]),
    ],
    targets: [
        .systemLibrary(name: "CZeroMQ", providers: [.apt(["libzmq3-dev"])]),
        .systemLibrary(name: "CLeptonica", providers: [.apt(["libleptonica-dev"])]),
        .systemLibrary(name: "CTesseract", providers: [.apt(["libtesseract-dev", "libleptonica-dev"])]),
        .systemLibrary(name: "CSodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // PostgreSQL's client library: the job store several brokers can share.
        .systemLibrary(name: "CLibPQ", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CHeif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),

        .target(name: "QuireSupport"),
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ"]),
        // HTTP on GNU libmicrohttpd: the exporter and the gateway serve through it.
        .target(name: "QuireHTTP", dependencies: ["CMicroHTTPD"]),
        .target(name: "QuireWire"),
        // The broker verifies tokens (QuireJWT) and never links the issuing side (QuireTokens).
        .target(name: "QuireBroker", dependencies: ["QuireWire", "ZeroMQ", "QuireSupport", "QuireStats", "QuireJWT", "CSQLite", "CLibPQ"]),
        .target(name: "QuireWorker", dependencies: ["QuireWire", "ZeroMQ", "QuireSupport"]),
        // Stats: the snapshot model, histogram and renderers (no sockets), and the monitoring tools
        // that subscribe to the broker's stats socket (terminal view, Prometheus exporter).
        .target(name: "QuireStats", dependencies: ["QuireSupport", "QuireWire"]),
        .target(name: "QuireMonitor", dependencies: ["QuireStats", "ZeroMQ", "QuireSupport", "QuireHTTP"]),
        // The gateway links the verifying side of tokens only for SHA-256 (its API-key cache); it holds no key.
        .target(name: "QuireGateway", dependencies: ["QuireClient", "QuireFormats", "QuireHTTP", "QuireWire", "QuireSupport", "QuireJWT"]),
        // What bytes from strangers go through, checked for what must hold (FuzzTesting/ fuzzes them).
        .target(name: "QuireFuzz", dependencies: ["Imaging", "QuireGateway", "QuireHTTP", "QuireJWT", "QuireWire"]),
        .target(name: "QuireClient", dependencies: ["QuireWire", "ZeroMQ", "QuireSupport"]),
        // Tokens, verifying side: the JWT format, JWKS, the verifier and its cache (what the broker links).
        .target(name: "QuireJWT", dependencies: ["CSodium", "QuireWire"]),
        // Tokens, issuing side: signing keys, the argon2id client registry, the token authority and the
        // token worker's services.
        .target(name: "QuireTokens", dependencies: ["CSodium", "QuireJWT", "QuireWire", "QuireSupport", "QuireWorker"]),
        // Leptonica's pixWriteMem, interposed so that Tesseract's line images skip a PNG round trip
        // (see its header).
        .target(name: "CTesseractShim", dependencies: ["CTesseract"], linkerSettings: [.linkedLibrary("dl")] + tesseractLinking),
        // Tesseract's left-to-right result iterator, which its C API lacks (see its header).
        .target(name: "CTesseractWalk", dependencies: ["CTesseract"], cxxSettings: tesseractHeaders),
        // Pixels: decoding (Leptonica, libheif for HEIC), EXIF orientation, the geometry that maps
        // recognition pixels back to the upload, and the preprocessing operations. No engine.
        .target(name: "Imaging", dependencies: ["CLeptonica", "CHeif"]),
        // PDFium's C API, opened with dlopen at run time (scripts/install-pdfium puts libpdfium.so in
        // /opt/quire-pdfium): without it quire builds and runs, and only PDF input is off.
        .target(name: "CPDFium", linkerSettings: [.linkedLibrary("dl")]),
        // ONNX Runtime's C API, opened with dlopen at run time (scripts/install-onnxruntime puts the library,
        // its header and the PP-OCR models in /opt/quire-onnxruntime): without the header quire builds
        // without the scene engine, without the library it runs without it.
        .target(name: "COnnxRuntime", cSettings: [.unsafeFlags(["-I" + onnxRuntime + "/include"])], linkerSettings: [.linkedLibrary("dl")]),
        // The scene engine (signs, screens, whiteboards, handwriting): PP-OCR's detector and line
        // recognizer, their pre- and post-processing in plain Swift.
        .target(name: "SceneText", dependencies: ["COnnxRuntime", "Imaging", "QuireRecognition"]),
        // PDF pages: counted, inspected (text layer or pictures), rendered, and read from their text layer.
        .target(name: "QuirePDF", dependencies: ["CPDFium", "Imaging", "QuireRecognition", "QuireWire"]),
        // Engine-neutral recognition, no C: the recognized page, the layout request and its choice
        // from the page's regions, the `TextRecognizer` protocol, and the post-edits as values.
        .target(name: "QuireRecognition", dependencies: ["Imaging", "QuireWire"]),
        // Language identification of read text: CLD2 (Debian's libcld2, C++) behind a C face.
        .target(name: "CCLD2", linkerSettings: [.linkedLibrary("cld2"), .linkedLibrary("stdc++")]),
        .target(name: "LanguageID", dependencies: ["CCLD2"]),
        // jemalloc instead of glibc's malloc for every role of the quire binary, with its options
        // (include/CJemallocOptions.h): Tesseract's layout analysis and recognizer allocate and free small
        // objects by the million, and a worker reading documents-dev used 2.7% less CPU with it
        // (docs/benchmarks.md). ProcessMemory finds it at run time (the package's test binary links it
        // too, with the executable's module).
        .target(name: "CJemallocOptions", linkerSettings: [.linkedLibrary("jemalloc")]),
        // The Tesseract engine: the first `TextRecognizer`.
        .target(name: "Tesseract", dependencies: ["CTesseract", "CTesseractShim", "CTesseractWalk", "Imaging", "QuireRecognition"]),
        // The Quire result in other services' shapes (Cloud Vision, Azure Read, Image Analysis) and as
        // the searchable PDF: no C, no sockets, for the CLI and the HTTP gateway alike.
        .target(name: "QuireFormats", dependencies: ["QuireWire"]),
        // A document's fields from a read page (a receipt's merchant, date, items, total): pure values
        // over the result's lines and boxes, no engine.
        .target(name: "QuireFields", dependencies: ["QuireWire", "QuireSupport"]),
        .target(name: "QuireOCR", dependencies: ["Tesseract", "SceneText", "LanguageID", "Imaging", "QuirePDF", "QuireRecognition", "QuireWire", "QuireWorker", "QuireSupport", "QuireFormats",
                                                 "QuireClient", "QuireJWT", "QuireFields"]),
        // One process's stack: a broker, workers of any kind, started and stopped in order (`quire up`,
        // the benchmarks, in-process tests).
        .target(name: "QuireStack", dependencies: ["QuireBroker", "QuireWorker", "ZeroMQ", "QuireSupport"]),
        // The benchmarks: a leaf that only the executable's `bench` command imports; no library depends on it.
        .target(
            name: "QuireBench",
            dependencies: ["QuireStack", "QuireBroker", "QuireWorker", "QuireClient", "QuireOCR", "Tesseract", "Imaging", "QuireRecognition", "QuireWire", "QuireSupport", "ZeroMQ",
                           "QuireTokens", "QuireJWT", "QuireGateway", "QuireFields"]
        ),

        // What tests share: temporary folders, byte helpers, drawn test images, fake engines. Only test
        // targets depend on it.
        .target(name: "QuireTestSupport", dependencies: ["Imaging", "CLeptonica", "QuireRecognition", "QuireWire"]),

        .executableTarget(
            name: "quire",
            dependencies: ["QuireBroker", "QuireWorker", "QuireClient", "QuireWire", "QuireSupport", "ZeroMQ", "QuireBench", "QuireOCR",
                           "QuireStats", "QuireMonitor", "QuireTokens", "QuireJWT", "QuireStack", "QuireFormats", "QuireGateway",
                           "CJemallocOptions"]
        ),

        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "QuireTestSupport"]),
        .testTarget(name: "QuireHTTPTests", dependencies: ["QuireHTTP", "QuireTestSupport"]),
        .testTarget(name: "QuireGatewayTests", dependencies: ["QuireGateway", "QuireHTTP", "QuireWire"]),
        .testTarget(name: "QuireFuzzTests", dependencies: ["QuireFuzz"]),
        .testTarget(name: "QuireWireTests", dependencies: ["QuireWire", "QuireTestSupport"]),
        .testTarget(name: "QuireClientTests", dependencies: ["QuireClient", "QuireWire", "QuireSupport", "QuireStack", "QuireBroker", "QuireWorker", "ZeroMQ"]),
        .testTarget(name: "QuireBrokerTests", dependencies: ["QuireBroker", "QuireWire", "QuireStats", "QuireJWT", "QuireTokens", "ZeroMQ", "QuireSupport", "QuireTestSupport"]),
        .testTarget(name: "QuireStatsTests", dependencies: ["QuireStats", "QuireMonitor", "QuireSupport", "QuireWire", "QuireHTTP"]),
        .testTarget(name: "QuireTokensTests", dependencies: ["QuireTokens", "QuireJWT", "QuireWire", "QuireSupport"]),
        // The pipeline's tests: fake engines from QuireTestSupport, no C module of their own.
        .testTarget(name: "QuireOCRTests", dependencies: ["QuireOCR", "QuireWire", "Imaging", "QuireRecognition", "QuireSupport", "QuireTestSupport",
                                                     "QuireBroker", "QuireClient", "QuireStack", "QuireWorker"]),
        .testTarget(name: "TesseractTests", dependencies: ["Tesseract", "Imaging", "QuireRecognition", "CTesseract", "CLeptonica", "CTesseractShim", "QuireTestSupport"]),
        .testTarget(name: "ImagingTests", dependencies: ["Imaging", "CLeptonica", "QuireTestSupport"]),
        .testTarget(name: "QuirePDFTests", dependencies: ["QuirePDF", "Imaging", "QuireRecognition"]),
        .testTarget(name: "SceneTextTests", dependencies: ["SceneText", "Imaging", "QuireRecognition", "QuireTestSupport"]),
        .testTarget(name: "QuireRecognitionTests", dependencies: ["QuireRecognition", "Imaging", "QuireWire"]),
        .testTarget(name: "LanguageIDTests", dependencies: ["LanguageID"]),
        .testTarget(name: "QuireBenchTests", dependencies: ["QuireBench", "QuireTestSupport"]),
        .testTarget(name: "QuireFieldsTests", dependencies: ["QuireFields", "QuireWire"]),
        .testTarget(name: "QuireFormatsTests", dependencies: ["QuireFormats", "QuireWire"], exclude: ["Fixtures"]),
        .testTarget(
            name: "QuireStackTests",
            dependencies: ["QuireStack", "QuireBroker", "QuireWorker", "QuireClient", "QuireTokens", "QuireWire", "QuireSupport"]
        ),
        .testTarget(
            name: "QuireEndToEndTests",
            dependencies: ["quire", "QuireClient", "QuireWire", "ZeroMQ", "QuireTestSupport"]
        ),
        .testTarget(
            name: "SystemLibraryTests",
            dependencies: ["CTesseract", "CLeptonica", "CSodium", "CSQLite", "CHeif"]
        ),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
