import Foundation
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// Where the numbers were taken, so that a table pasted into the README says what it measured.
public struct MachineInfo: Sendable, Codable, Equatable {
    /// Processors this process may run on (what `nproc` prints).
    public var processors: Int
    /// `model name` from /proc/cpuinfo.
    public var cpuModel: String
    /// Kernel name and release, such as `Linux 6.1.0-18-amd64`.
    public var os: String
    /// The Swift compiler that built this binary, such as `6.3`.
    public var swift: String
    /// `release` or `debug`.
    public var buildConfiguration: String
    public var libzmq: String

    public static func current() -> MachineInfo {
        MachineInfo(
            processors: ProcessInfo.processInfo.activeProcessorCount,
            cpuModel: cpuModel() ?? "unknown",
            os: kernel(),
            swift: swiftVersion,
            buildConfiguration: buildConfiguration,
            libzmq: Context.libraryVersion
        )
    }

    private static func cpuModel() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    private static func kernel() -> String {
        var name = utsname()
        guard uname(&name) == 0 else { return "unknown" }
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        }
        return "\(field(name.sysname)) \(field(name.release))"
    }

    private static var buildConfiguration: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }

    private static var swiftVersion: String {
        #if compiler(>=6.4)
        "6.4+"
        #elseif compiler(>=6.3)
        "6.3"
        #elseif compiler(>=6.2)
        "6.2"
        #elseif compiler(>=6.1)
        "6.1"
        #else
        "6.0"
        #endif
    }

    /// One line for the README.
    public var summary: String {
        "\(processors) CPU\(processors == 1 ? "" : "s") (nproc), \(cpuModel), \(os), Swift \(swift) \(buildConfiguration) build, libzmq \(libzmq)"
    }
}

/// One broker's numbers.
public struct BrokerBenchResult: Sendable, Codable, Equatable {
    /// `Quire` or `majortomo 0.2.0`.
    public var broker: String
    /// The dialect Quire's client and workers spoke to it.
    public var dialect: String
    public var workers: Int
    public var inFlight: Int
    /// Pipelined requests measured, after the warm-up.
    public var requests: Int
    public var seconds: Double
    public var requestsPerSecond: Double
    /// Sequential requests (one in flight) measured for the percentiles.
    public var latencyRequests: Int
    public var p50Microseconds: Double
    public var p90Microseconds: Double
    public var p99Microseconds: Double
    public var maxMicroseconds: Double
    /// A run reached the phase limit (`--phase-timeout-ms`) before sending all its requests; the
    /// numbers are for the requests it did send.
    public var stoppedAtPhaseLimit: Bool
}

/// Everything `quire bench broker` measured.
public struct BrokerBenchReport: Sendable, Codable, Equatable {
    public var machine: MachineInfo
    public var payloadBytes: Int
    /// Whether broker, workers and client shared one ZeroMQ context (`--shared-context`).
    public var sharedContext: Bool
    public var results: [BrokerBenchResult]
    /// Quire's requests/s over majortomo's, when both ran.
    public var throughputRatio: Double?
    /// majortomo's p50 over Quire's (how many times faster one round trip is), when both ran.
    public var p50Ratio: Double?

    init(machine: MachineInfo, payloadBytes: Int, sharedContext: Bool, results: [BrokerBenchResult]) {
        self.machine = machine
        self.payloadBytes = payloadBytes
        self.sharedContext = sharedContext
        self.results = results
        if results.count == 2, results[1].requestsPerSecond > 0, results[0].p50Microseconds > 0 {
            throughputRatio = (results[0].requestsPerSecond / results[1].requestsPerSecond * 10).rounded() / 10
            p50Ratio = (results[1].p50Microseconds / results[0].p50Microseconds * 10).rounded() / 10
        }
    }

    /// A Markdown table with the machine underneath, ready for the README.
    public func markdown() -> String {
        var lines = [
            "| broker | requests/s (pipelined) | p50 µs | p90 µs | p99 µs | max µs | workers | in-flight | requests |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in results {
            let cells = [
                r.broker, groupedThousands(r.requestsPerSecond), groupedThousands(r.p50Microseconds), groupedThousands(r.p90Microseconds),
                groupedThousands(r.p99Microseconds), groupedThousands(r.maxMicroseconds), String(r.workers), String(r.inFlight),
                groupedThousands(Double(r.requests)) + (r.stoppedAtPhaseLimit ? "*" : ""),
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        lines.append("")
        if results.contains(where: \.stoppedAtPhaseLimit) {
            lines.append("\\* stopped at the phase time limit; the numbers are for the requests sent until then.")
            lines.append("")
        }
        if let throughputRatio, let p50Ratio {
            lines.append("Quire / majortomo: \(oneDecimal(throughputRatio))× the requests/s; majortomo's p50 is \(oneDecimal(p50Ratio))× Quire's.")
            lines.append("")
        }
        lines.append("Machine: \(machine.summary).")
        let contexts = sharedContext
            ? "broker, workers and client share one ZeroMQ context"
            : "broker, workers and client each have their own ZeroMQ context, as separate processes would"
        let subprocess = results.count > 1 ? " (majortomo's broker as a Python subprocess)" : ""
        let counts = Set(results.map(\.latencyRequests))
        let sequential = counts.count == 1
            ? groupedThousands(Double(counts.first!))
            : results.map { "\(groupedThousands(Double($0.latencyRequests))) (\($0.broker))" }.joined(separator: ", ")
        lines.append("One process over TCP loopback\(subprocess); \(contexts); echo "
            + "workers answer inline; one \(payloadBytes)-byte frame per request; latency is the round trip with one "
            + "request in flight, in µs, over \(sequential) sequential requests.")
        return lines.joined(separator: "\n")
    }

    /// The report as one JSON object (snake_case keys).
    public func json() -> String { benchJSON(self) }


    private func oneDecimal(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10))"
    }
}
