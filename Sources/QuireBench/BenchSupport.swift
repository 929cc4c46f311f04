import Dispatch
import Foundation
import QuireClient
import QuireStack
import QuireSupport
import QuireWorker
import Synchronization
import ZeroMQ

/// Why the benchmark could not produce a number.
public struct BenchError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Runs async work on the cooperative pool and waits for it on this (non-pool) thread, at most
/// `timeout`. On the deadline the task is cancelled (which cancels its client requests) and a
/// ``BenchError`` names `what` took too long.
func awaitBlocking<T: Sendable>(
    _ what: String,
    timeout: Milliseconds,
    _ work: @escaping @Sendable () async throws -> T
) throws -> T {
    guard let result = blockingAwait(within: timeout, work) else {
        throw BenchError("\(what) did not finish within \(timeout.value) ms")
    }
    return try result.get()
}

/// A shared counter for the pipelined senders.
final class TicketCounter: Sendable {
    private let next = Atomic<Int>(0)
    /// The next ticket number, from 0.
    func take() -> Int { next.add(1, ordering: .relaxed).oldValue }
    /// Tickets taken so far.
    var count: Int { next.load(ordering: .relaxed) }
}

/// Percentiles of round-trip times, in microseconds.
struct LatencySummary: Sendable, Equatable {
    var p50: Double
    var p90: Double
    var p99: Double
    var max: Double

    /// Nearest-rank percentiles of `samples` (nanoseconds).
    init(nanoseconds samples: [UInt64]) {
        let sorted = samples.sorted()
        func rank(_ percent: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = Swift.max(0, Swift.min(sorted.count - 1, Int((percent / 100 * Double(sorted.count)).rounded(.up)) - 1))
            return Double(sorted[index]) / 1_000
        }
        p50 = rank(50)
        p90 = rank(90)
        p99 = rank(99)
        max = Double(sorted.last ?? 0) / 1_000
    }
}

/// A benchmark report as one JSON object (snake_case keys), for `--json`.
func benchJSON<Report: Encodable>(_ report: Report) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.keyEncodingStrategy = .convertToSnakeCase
    guard let data = try? encoder.encode(report) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
}

/// `61234.5` → `61,235`: thousands grouped with commas whatever the locale.
func groupedThousands(_ value: Double) -> String {
    let digits = String(Int64(value.rounded()))
    var out = ""
    for (index, character) in digits.reversed().enumerated() {
        if index > 0 && index % 3 == 0 && character != "-" { out.append(",") }
        out.append(character)
    }
    return String(out.reversed())
}

/// Clients against one broker (a ``Stack``, or majortomo's with workers of the rig's own), torn down in
/// order whatever happened: close the clients, stop the rig's workers (each given `workerStopTimeout` to
/// finish what it holds), stop the broker, terminate the contexts. Owned by the benchmark's thread.
class Rig {
    let logger: Logger
    let workerStopTimeout: Milliseconds
    var workers: [Worker] = []
    var workerThreads: [LoopThread] = []
    /// Stops the broker; `false` when it did not stop in time.
    var stopBroker: () -> Bool = { true }
    var clients: [QuireClient] = []
    var contexts: [Context] = []
    private var tornDown = false

    init(logger: Logger, workerStopTimeout: Milliseconds = 5_000) {
        self.logger = logger
        self.workerStopTimeout = workerStopTimeout
    }

    func tearDown() {
        guard !tornDown else { return }
        tornDown = true
        var clean = true
        // The clients first: a stack's context may be theirs too (--shared-context), and it can only
        // be terminated once their sockets are closed.
        for client in clients {
            do {
                try awaitBlocking("closing the client", timeout: 5_000) { await client.close() }
            } catch {
                logger.warning("the client did not close", metadata: ["error": String(describing: error)])
                clean = false
            }
        }
        clients = []
        for worker in workers { worker.stop() }
        for (index, thread) in workerThreads.enumerated() where !thread.join(timeout: workerStopTimeout) {
            logger.warning("a worker did not stop in time", metadata: ["worker": String(index), "timeout_ms": String(workerStopTimeout.value)])
            clean = false
        }
        if !stopBroker() { clean = false }
        // A thread that did not stop still has sockets open, and terminating would wait for them
        // forever: shut those contexts down instead, which fails every blocking call with ETERM.
        // (A shared context appears more than once; terminating it again does nothing.)
        for context in contexts {
            if clean { context.terminate() } else { context.shutdown() }
        }
    }
}
