import QuireFuzz

#if canImport(Glibc)
import Glibc
#endif

/// The target this process fuzzes: `QUIRE_FUZZ_TARGET` names one of ``FuzzTargets/all``.
nonisolated(unsafe) var target: ([UInt8]) -> Void = { _ in }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    target(start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? [])
    return 0
}

// SwiftPM links an executable with `main` aliased to `<module>_main`, which `-parse-as-library`
// (libFuzzer's `main` instead of Swift's) never defines: this one picks the target and hands over to
// libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
               _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

@_cdecl("Fuzz_main")
public func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    let name = getenv("QUIRE_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let chosen = FuzzTargets.all[name] else {
        let message = "QUIRE_FUZZ_TARGET names no target (\(FuzzTargets.all.keys.sorted().joined(separator: ", "))): '\(name)'\n"
        _ = message.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
        return 2
    }
    target = chosen
    var count = argc, arguments = argv
    return runDriver(&count, &arguments) { fuzz($0, $1) }
}
