// swift-tools-version:6.0
// The libFuzzer entry point for Quire's fuzz targets (Sources/QuireFuzz in the package above): one
// executable, `QUIRE_FUZZ_TARGET` naming the target. Its own package: a fuzzer has no `main`, and the
// flags that make one (`-sanitize=fuzzer,address -parse-as-library`) must not reach the service's
// build. `scripts/fuzz` builds and runs it.
import PackageDescription

let package = Package(
    name: "QuireFuzzTesting",
    dependencies: [.package(name: "Quire", path: "..")],
    targets: [.executableTarget(name: "Fuzz", dependencies: [.product(name: "QuireFuzz", package: "Quire")])]
)
