import Foundation
import Synchronization
import QuireTestSupport

/// The `quire` binary under test: `QUIRE_BIN`, or the debug build next to this package.
let quireBinary: URL = {
    if let path = ProcessInfo.processInfo.environment["QUIRE_BIN"] { return URL(fileURLWithPath: path) }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/quire")
}()

/// A `quire` child process whose standard error is kept in a file, killed when the test ends.
final class QuireProcess: @unchecked Sendable {
    let process = Process()
    let logURL: URL
    let name: String

    init(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        self.name = name
        logURL = FileManager.default.temporaryDirectory.appendingPathComponent("quire-e2e-\(name)-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        process.executableURL = quireBinary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        // Brokers enforce tokens by default; these tests are about the protocol, not auth.
        env["QUIRE_AUTH"] = "off"
        // Never the machine's real data folder: credentials there would make client verbs fetch tokens.
        env["XDG_DATA_HOME"] = testDataHome
        for name in ["QUIRE_DATA", "QUIRE_TOKEN", "QUIRE_CLIENT_ID", "QUIRE_CLIENT_SECRET"] { env[name] = nil }
        for (k, v) in environment { env[k] = v }
        process.environment = env
        process.standardError = try FileHandle(forWritingTo: logURL)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: logURL)
    }

    var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to exit; its status, or nil if it is still running at the deadline.
    func waitForExit(seconds: Double) async -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Waits until the log contains `text`; false at the deadline.
    func waitForLog(_ text: String, seconds: Double = 10) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        // The log is read once more after the deadline: on a loaded machine this task can be kept
        // from running past the deadline while the line was written long before.
        while true {
            if log.contains(text) { return true }
            if Date() >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The endpoint a broker logged when it bound.
    func boundEndpoint(seconds: Double = 10) async -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        // Read once more after the deadline, as in `waitForLog`.
        while true {
            for line in log.split(separator: "\n") where line.contains("broker listening") {
                if let data = line.data(using: .utf8),
                   let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                   let endpoint = object["endpoint"] as? String {
                    return endpoint
                }
            }
            if Date() >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// Runs the binary to completion: exit status, standard output and standard error.
func runQuire(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 30) throws -> (status: Int32, out: String, err: String) {
    let process = Process()
    process.executableURL = quireBinary
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    // Brokers enforce tokens by default; these tests are about the protocol, not auth.
    env["QUIRE_AUTH"] = "off"
    // Never the machine's real data folder: credentials there would make client verbs fetch tokens.
    env["XDG_DATA_HOME"] = testDataHome
    for name in ["QUIRE_DATA", "QUIRE_TOKEN", "QUIRE_CLIENT_ID", "QUIRE_CLIENT_SECRET"] { env[name] = nil }
    for (k, v) in environment { env[k] = v }
    process.environment = env
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let deadline = Date().addingTimeInterval(timeout)
    // Read while running so a full pipe never stalls the child.
    let outData = Mutex(Data()), errData = Mutex(Data())
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async { let d = out.fileHandleForReading.readDataToEndOfFile(); outData.withLock { $0 = d }; group.leave() }
    group.enter()
    DispatchQueue.global().async { let d = err.fileHandleForReading.readDataToEndOfFile(); errData.withLock { $0 = d }; group.leave() }
    while process.isRunning && Date() < deadline { usleep(10_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    group.wait()
    return (process.terminationStatus,
            String(decoding: outData.withLock { $0 }, as: UTF8.self),
            String(decoding: errData.withLock { $0 }, as: UTF8.self))
}

/// An empty folder that stands for `$XDG_DATA_HOME` in every process the tests start.
let testDataHome = temporaryDirectory("quire-e2e-data-home")
