// swift-tools-version:6.0
// libFuzzer entry points for Quire's fuzz targets (Sources/QuireFuzz in the package above), one
// executable each. Its own package: a fuzzer has no `main`, and the flags that make one
// (`-sanitize=fuzzer,address -parse-as-library`) must not reach the service's build. `scripts/fuzz`
// builds and runs them.
import PackageDescription

let targets = ["Wire", "JSON", "Images", "Gateway"]

let package = Package(
    name: "QuireFuzzTesting",
    dependencies: [.package(name: "Quire", path: "..")],
    targets: targets.map { name in
        .executableTarget(name: "Fuzz" + name, dependencies: [.product(name: "QuireFuzz", package: "Quire")])
    }
)
