import Foundation

/// What a Quire worker says about itself in the extra frame of its HEARTBEAT
/// (`proto-json/worker-report.schema.json`).
public struct WorkerReport: Codable, Sendable, Equatable {
    /// Requests the worker process answered since it started.
    public var jobsDone: Int
    /// Seconds spent inside the service's handler (the OCR engine, the token signer) since start.
    public var engineSeconds: Double
    /// Resident memory of the worker process, from /proc/self/statm.
    public var rssBytes: Int
    public var pid: Int32

    public init(jobsDone: Int, engineSeconds: Double, rssBytes: Int, pid: Int32) {
        self.jobsDone = jobsDone
        self.engineSeconds = engineSeconds
        self.rssBytes = rssBytes
        self.pid = pid
    }

    /// Sorted keys, as the broker's stats JSON.
    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    /// The heartbeat extension frame.
    public var jsonFrame: [UInt8] {
        (try? Array(Self.encoder.encode(self))) ?? Array("{}".utf8)
    }

    /// Reads a heartbeat extension frame; `nil` when it is not a report (ignored, never an error).
    public init?(jsonFrame: [UInt8]) {
        guard jsonFrame.first == UInt8(ascii: "{"), jsonFrame.count <= 4_096,
              let report = try? JSONDecoder().decode(WorkerReport.self, from: Data(jsonFrame)),
              report.jobsDone >= 0, report.rssBytes >= 0, report.engineSeconds.isFinite, report.engineSeconds >= 0 else { return nil }
        self = report
    }
}
