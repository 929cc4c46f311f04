import Foundation
import Synchronization

/// A small logger with swift-log's shape: a label, levels, constant messages and metadata.
///
/// Passed in, never global. Writes one line per record to standard error: JSON lines when standard
/// error is not a terminal (for collectors), a readable line when it is.
public struct Logger: Sendable {
    public enum Level: Int, Comparable, Sendable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }

        public var name: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            case .critical: "critical"
            }
        }

        public init?(name: String) {
            guard let level = Level.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
            self = level
        }
    }

    public typealias Metadata = [String: String]

    public let label: String
    public var level: Level
    public var metadata: Metadata
    private let sink: LogSink

    public init(label: String, level: Level = .info, metadata: Metadata = [:], sink: LogSink = .standardError) {
        self.label = label
        self.level = level
        self.metadata = metadata
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> String? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(_ level: Level, _ message: @autoclosure () -> String, metadata extra: @autoclosure () -> Metadata = [:]) {
        guard level >= self.level else { return }
        var all = metadata
        for (key, value) in extra() { all[key] = value }
        sink.write(label: label, level: level, message: message(), metadata: all)
    }

    public func trace(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.trace, m(), metadata: metadata()) }
    public func debug(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.debug, m(), metadata: metadata()) }
    public func info(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.info, m(), metadata: metadata()) }
    public func notice(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.notice, m(), metadata: metadata()) }
    public func warning(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.warning, m(), metadata: metadata()) }
    public func error(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(.error, m(), metadata: metadata()) }
}

/// Where log records go. Thread-safe: one record is one `write(2)`.
public final class LogSink: Sendable {
    private let descriptor: Int32
    private let json: Bool
    private let capturing: Bool
    private let lines = Mutex<[String]>([])

    /// Standard error, JSON lines unless it is a terminal.
    public static let standardError = LogSink(descriptor: 2, json: isatty(2) == 0)

    public init(descriptor: Int32, json: Bool) {
        self.descriptor = descriptor
        self.json = json
        self.capturing = false
    }

    /// Keeps records in memory, for tests.
    public init(capturing: Void) {
        self.descriptor = -1
        self.json = true
        self.capturing = true
    }

    /// The captured records (JSON lines), for tests.
    public var captured: [String] { lines.withLock { $0 } }

    func write(label: String, level: Logger.Level, message: String, metadata: Logger.Metadata) {
        let timestamp = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        var line: String
        if json {
            var object: [String: String] = metadata
            object["ts"] = timestamp
            object["level"] = level.name
            object["logger"] = label
            object["msg"] = message
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            line = String(decoding: data, as: UTF8.self)
        } else {
            line = "\(timestamp) \(level.name.uppercased()) \(label): \(message)"
            for key in metadata.keys.sorted() { line += " \(key)=\(metadata[key] ?? "")" }
        }
        if capturing {
            lines.withLock { $0.append(line) }
            return
        }
        line += "\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 { if errno == EINTR { continue } else { return } }
                offset += n
            }
        }
    }
}
