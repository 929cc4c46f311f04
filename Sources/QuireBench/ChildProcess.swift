import Foundation
import QuireSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A subprocess (majortomo's broker) with its output in a temporary file, stopped with SIGTERM and,
/// failing that, SIGKILL. Owned by one thread; ``ChildRegistry`` lets a signal handler kill it too.
final class ChildProcess {
    let process = Process()
    let logURL: URL
    private let logHandle: FileHandle
    private var stopped = false

    /// Starts `executable` with `arguments`, standard output and error going to a temporary file.
    init(executable: String, arguments: [String], environment extra: [String: String] = [:]) throws {
        logURL = FileManager.default.temporaryDirectory.appendingPathComponent("quire-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log")
        guard FileManager.default.createFile(atPath: logURL.path, contents: nil) else {
            throw BenchError("cannot create \(logURL.path)")
        }
        logHandle = try FileHandle(forWritingTo: logURL)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        environment.merge(extra) { _, new in new }
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = logHandle
        process.standardError = logHandle
        do {
            try process.run()
        } catch {
            try? logHandle.close()
            try? FileManager.default.removeItem(at: logURL)
            throw BenchError("cannot start '\(executable)': \(error.localizedDescription)")
        }
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// The last lines the process wrote, for error messages.
    func outputTail(lines count: Int = 15) -> String {
        guard let data = FileManager.default.contents(atPath: logURL.path) else { return "" }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true)
        return lines.suffix(count).joined(separator: "\n")
    }

    /// Waits up to `timeout` for the process to exit on its own.
    func waitForExit(timeout: Milliseconds) -> Bool {
        let deadline = Instant.now() + timeout
        while process.isRunning {
            if Instant.now() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }

    /// SIGTERM, `grace` to exit, then SIGKILL; removes the log. Safe to call more than once.
    func stop(grace: Milliseconds = 3_000) {
        guard !stopped else { return }
        stopped = true
        if process.isRunning {
            kill(pid, SIGTERM)
            if !waitForExit(timeout: grace) {
                kill(pid, SIGKILL)
                _ = waitForExit(timeout: 2_000)
            }
        }
        try? logHandle.close()
        try? FileManager.default.removeItem(at: logURL)
    }

    deinit { stop(grace: 500) }
}

/// Running subprocesses (process id and log file), so that a signal handler on another thread can
/// kill them and remove their logs before the benchmark exits.
final class ChildRegistry: Sendable {
    private let children = Mutex<[Int32: String]>([:])

    func add(_ child: ChildProcess) {
        let (pid, log) = (child.pid, child.logURL.path)
        children.withLock { $0[pid] = log }
    }

    func remove(pid: Int32) { children.withLock { _ = $0.removeValue(forKey: pid) } }

    /// SIGKILL for every registered subprocess; their logs are removed.
    func killAll() {
        for (pid, log) in children.withLock({ $0 }) {
            kill(pid, SIGKILL)
            unlink(log)
        }
    }
}

/// Runs a short command to completion, at most `timeout` (then it is killed and this throws); its exit
/// status and the end of its output.
func runBriefly(_ executable: String, _ arguments: [String], timeout: Milliseconds) throws -> (status: Int32, output: String) {
    let child = try ChildProcess(executable: executable, arguments: arguments)
    defer { child.stop(grace: 200) }
    guard child.waitForExit(timeout: timeout) else {
        throw BenchError("'\(executable)' did not finish within \(timeout.value) ms")
    }
    return (child.process.terminationStatus, child.outputTail(lines: 40))
}

/// A TCP port on 127.0.0.1 that nothing listens on right now (the kernel's pick for port 0).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BenchError("socket(): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = loopback(port: 0)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw BenchError("bind(127.0.0.1:0): \(String(cString: strerror(errno)))") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw BenchError("getsockname(): \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func loopbackPortAccepts(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopback(port: UInt16(port))
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    return result == 0
}

private func loopback(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
}
