import Foundation
import QuireMonitor
import QuireSupport
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// Where `quire stats` and `quire exporter` subscribe.
enum StatsOptions {
    static let endpoint = Option("stats", variable: "QUIRE_STATS", .string("ENDPOINT"), default: "tcp://127.0.0.1:5556",
                                 help: "the broker's stats socket (quire broker --stats); brokers sharing a store each publish their own: one per broker")

    /// The one broker's stats endpoint: a list would mix the figures of brokers that serve together.
    static func endpoint(_ invocation: Invocation) throws -> String {
        let endpoint = try invocation.value(Self.endpoint, or: "tcp://127.0.0.1:5556")
        guard !endpoint.contains(",") else {
            throw UsageError(command: invocation.command, message: "--stats takes one broker's stats socket: brokers that share a store "
                             + "each publish their own figures (run one per broker)")
        }
        return endpoint
    }
}

enum StatsCommand {
    static let json = Option("json", .switch, default: false, help: "print the raw snapshots as JSON lines instead of the table")
    static let events = Option("events", .switch, default: false, help: "with --json, print the events (worker joined/lost, job dead) too")
    static let once = Option("once", .switch, default: false, help: "print one snapshot and exit (status 1 when none comes in time)")
    static let timeout = Option("timeout-ms", SettingValue.milliseconds(1...3_600_000), default: 10_000,
                                help: "with --once, how long to wait for a snapshot")

    static let command = Command(
        "stats", listing: ("stats", "show the broker's stats live (queues, workers, throughput, latency)"),
        usage: "quire stats [options]",
        discussion: """
            Subscribes to the broker's stats socket (quire broker --stats) and shows queues, workers,
            throughput and latency in a table that refreshes in place (80 columns). Ctrl-C quits. With
            CURVE on at the broker, its stats socket has it too: give --curve-server-key and --curve-key.
            """,
        groups: [OptionGroup(options: [StatsOptions.endpoint.info] + CurveOptions.clientGroup.options + [json.info, events.info, once.info, timeout.info])],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        guard invocation.positionals.isEmpty else {
            throw UsageError(command: command, message: "unexpected argument '\(invocation.positionals[0])'")
        }
        let json = try invocation.value(Self.json, or: false)
        if try invocation.value(events, or: false) && !json {
            throw UsageError(command: command, message: "--events needs --json")
        }
        let endpoint = try StatsOptions.endpoint(invocation)
        let timeout = try invocation.value(Self.timeout, or: 10_000)
        let output: StatsTerminal.Output = json ? .json(events: try invocation.value(events, or: false)) : .table
        let context = try Context()
        let terminal = try StatsTerminal(endpoint: endpoint, output: output, once: try invocation.value(once, or: false), timeout: timeout,
                                         context: context, curve: try CurveOptions.client(invocation))
        let signals = SignalWatcher(signals: [SIGTERM, SIGINT, SIGWINCH]) { number in
            if number == SIGWINCH { terminal.windowChanged() } else { terminal.stop() }
        }
        defer { withExtendedLifetime(signals) {} }
        do {
            try terminal.run()
        } catch {
            printError("quire stats: \(error)")
            return 1
        }
        return 0
    }
}
