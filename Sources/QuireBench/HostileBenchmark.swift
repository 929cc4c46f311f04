import Foundation
import QuireClient
import QuireSupport
import QuireWire
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// What `quire bench hostile` runs, with every default in one place.
public struct HostileBenchOptions: Sendable, Equatable {
    /// The folder `scripts/hostile-images` made: `valid/` (the warm-up) and `hostile/`.
    public var directory = ""
    /// Times every hostile file is sent.
    public var passes = 3
    /// Engines (threads) in the one OCR worker process, as `quire up` runs them.
    public var threads = 2
    /// The `quire` executable the processes run; `nil`: this one.
    public var executable: String?
    /// One request unanswered this long fails the run.
    public var requestTimeout: Milliseconds = 120_000

    public init() {}
}

/// The numbers of one `quire bench hostile` run.
public struct HostileBenchReport: Sendable, Codable, Equatable {
    public var machine: MachineInfo
    public var files: Int
    public var passes: Int
    public var threads: Int
    /// How the files were answered in the first pass: `result`, or the error's code.
    public var outcomes: [String: Int]
    /// Every answer of every pass, slowest first.
    public var answers: [Answer]
    /// The worker's RSS after the warm-up and after each pass.
    public var workerRSSBytes: [Int]
    /// The worker's RSS once it has been idle long enough to hand its free memory back
    /// (``IdleRelease/delay``), after the warm-up and after each pass.
    public var workerIdleRSSBytes: [Int]
    public var brokerRSSBytes: [Int]

    public struct Answer: Sendable, Codable, Equatable {
        public var file: String
        public var pass: Int
        public var milliseconds: Double
        public var outcome: String
        /// The page's steps that explain the time (`blank`, `engine`, `script`), for a result.
        public var steps: [String]
    }

    public var slowestMilliseconds: Double { answers.first?.milliseconds ?? 0 }
    /// RSS growth of the worker over the hostile passes, from the warm-up's end.
    public var workerGrowthBytes: Int { (workerRSSBytes.last ?? 0) - (workerRSSBytes.first ?? 0) }

    public func markdown() -> String {
        func mb(_ bytes: Int) -> String { String(format: "%.0f MB", Double(bytes) / 1_048_576) }
        var lines = ["| \(files) hostile files, \(passes) passes, one worker of \(threads) engines | value |", "| --- | ---: |"]
        lines.append("| answers | " + outcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + " (each pass) |")
        let sorted = answers.map(\.milliseconds).sorted()
        if !sorted.isEmpty {
            lines.append(String(format: "| p50 / p99 / slowest | %.0f ms / %.0f ms / %.0f ms |", sorted[sorted.count / 2],
                                sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)], sorted[sorted.count - 1]))
        }
        lines.append("| worker RSS after the warm-up → each pass | " + workerRSSBytes.map(mb).joined(separator: " → ") + " |")
        lines.append("| worker RSS idle after the warm-up → each pass | " + workerIdleRSSBytes.map(mb).joined(separator: " → ") + " |")
        lines.append("| broker RSS after the warm-up → each pass | " + brokerRSSBytes.map(mb).joined(separator: " → ") + " |")
        lines.append("")
        lines.append("| slowest answers | pass | ms | answer | steps |")
        lines.append("| --- | ---: | ---: | --- | --- |")
        for answer in answers.prefix(10) {
            lines.append("| \(answer.file) | \(answer.pass) | \(String(format: "%.0f", answer.milliseconds)) | \(answer.outcome) | \(answer.steps.joined(separator: ", ")) |")
        }
        lines.append("")
        lines.append("Machine: \(machine.summary).")
        return lines.joined(separator: "\n")
    }

    public func json() -> String { benchJSON(self) }
}

/// `quire bench hostile`: a broker and one OCR worker process (both engines warmed up on the valid
/// renderings), then every hostile file sent once a pass, one at a time: how each is answered, how
/// long it takes, and what the worker's RSS does over the passes.
public final class HostileBenchmark: Sendable {
    public let options: HostileBenchOptions
    private let progress: @Sendable (String) -> Void
    private let children = ChildRegistry()

    public init(options: HostileBenchOptions, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.options = options
        self.progress = progress
    }

    public func killSubprocesses() { children.killAll() }

    public func run() throws -> HostileBenchReport {
        let valid = try SoakBenchmark.files([(options.directory as NSString).appendingPathComponent("valid")])
        let hostileFolder = (options.directory as NSString).appendingPathComponent("hostile")
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: hostileFolder), !names.isEmpty else {
            throw BenchError("no files in \(hostileFolder) (scripts/hostile-images makes them)")
        }
        let hostile = names.filter { !$0.hasPrefix(".") }.sorted().map { (hostileFolder as NSString).appendingPathComponent($0) }
        let executable = options.executable ?? SoakStack.thisExecutable
        let port = try freeLoopbackPort()
        let endpoint = "tcp://127.0.0.1:\(port)"
        let stack = SoakStack(executable: executable, registry: children, arguments: [
            "broker": ["broker", "--bind", endpoint, "--auth", "off", "--request-timeout-ms", "\(options.requestTimeout.value)"],
            "worker": ["worker", "ocr", "--broker", endpoint, "--threads", "\(options.threads)"],
        ])
        defer { stack.stopAll() }
        progress("starting a broker and an OCR worker of \(options.threads) engines (\(executable))")
        try stack.start("broker", as: "broker")
        try stack.start("worker", as: "worker")
        let context = try Context()
        defer { context.shutdown() }
        let client = try QuireClient(configuration: ClientConfiguration(broker: endpoint, timeout: options.requestTimeout, retries: 0,
                                                                         maxInFlight: options.threads), context: context)
        defer { _ = blockingAwait { await client.close() } }
        try stack.waitForWorkers(client)

        // Both engines of every thread: each valid rendering read by Tesseract and by the scene engine,
        // as many at once as there are threads.
        progress("warming both engines on \(valid.count) valid renderings")
        let warmups = valid.flatMap { path in [OCRRequest.Engine.tesseract, .scene].map { (path, $0) } }
        for _ in 0..<2 {
            _ = try awaitBlocking("the warm-up", timeout: options.requestTimeout) { [client, threads = options.threads] in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (path, engine) in warmups {
                        for _ in 0..<threads {
                            group.addTask {
                                let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
                                _ = try await client.request(service: OCRServiceName.page, body: [OCRRequest(engine: engine).jsonBytes(), bytes])
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
        func rss(_ role: String) -> Int { stack.sample(at: 0).first { $0.role == role }?.rssBytes ?? 0 }
        func idleRSS() -> Int {
            progress("waiting for the worker to be idle for \(ProcessMemory.requests.delay.value / 1_000) s")
            Thread.sleep(forTimeInterval: Double(ProcessMemory.requests.delay.value) / 1_000 + 1)
            return rss("worker")
        }
        var workerRSS = [rss("worker")]
        var brokerRSS = [rss("broker")]
        var workerIdleRSS = [idleRSS()]
        var answers: [HostileBenchReport.Answer] = []
        var outcomes: [String: Int] = [:]
        for pass in 1...options.passes {
            progress("pass \(pass) of \(options.passes): \(hostile.count) files, one at a time")
            for path in hostile {
                let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
                let started = Instant.now()
                let outcome: String, steps: [String]
                do {
                    let reply = try awaitBlocking("a hostile request", timeout: Milliseconds(options.requestTimeout.value + 5_000)) { [client] in
                        try await client.request(service: OCRServiceName.page, body: [OCRRequest().jsonBytes(), bytes])
                    }
                    (outcome, steps) = Self.outcome(reply.first ?? [])
                } catch let error as ClientError {
                    // A typed error is an answer; anything else (a timeout, the broker gone) ends the run.
                    guard let remote = error.remote else { throw BenchError("\((path as NSString).lastPathComponent): \(error)") }
                    (outcome, steps) = (remote.code.rawValue, [])
                }
                let milliseconds = Instant.now().seconds(since: started) * 1_000
                if pass == 1 { outcomes[outcome, default: 0] += 1 }
                answers.append(.init(file: (path as NSString).lastPathComponent, pass: pass, milliseconds: (milliseconds * 10).rounded() / 10,
                                     outcome: outcome, steps: steps))
            }
            if let dead = stack.deadRole() { throw BenchError("\(dead) exited during the run:\n\(stack.outputTail(dead))") }
            workerRSS.append(rss("worker"))
            brokerRSS.append(rss("broker"))
            workerIdleRSS.append(idleRSS())
        }
        answers.sort { $0.milliseconds > $1.milliseconds }
        return HostileBenchReport(machine: MachineInfo.current(), files: hostile.count, passes: options.passes, threads: options.threads,
                                  outcomes: outcomes, answers: answers, workerRSSBytes: workerRSS, workerIdleRSSBytes: workerIdleRSS,
                                  brokerRSSBytes: brokerRSS)
    }

    /// `result` (with its first page's telling steps), or the error's code.
    static func outcome(_ frame: [UInt8]) -> (String, [String]) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(frame)) as? [String: Any] else { return ("not JSON", []) }
        if let error = object["error"] as? [String: Any] { return ((error["code"] as? String) ?? "error", []) }
        let steps = ((object["metadata"] as? [String: Any])?["steps"] as? [[String: Any]]) ?? []
        let telling = steps.compactMap { step -> String? in
            guard let name = step["step"] as? String, ["blank", "engine", "script", "language"].contains(name) else { return nil }
            return name + ((step["applied"] as? Bool) == true ? " ✓" : "")
        }
        return ("result", telling)
    }
}
