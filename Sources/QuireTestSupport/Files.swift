import Foundation

/// A new empty folder under the system's temporary folder, named `prefix-<uuid>`, for one test.
public func temporaryDirectory(_ prefix: String = "quire-test") -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Runs `body` with a new empty folder (``temporaryDirectory(_:)``), removed afterwards.
public func withTemporaryDirectory<T>(_ prefix: String = "quire-test", _ body: (String) throws -> T) rethrows -> T {
    let path = temporaryDirectory(prefix)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// A string's UTF-8 bytes, as frames and bodies are written in tests.
public func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }
