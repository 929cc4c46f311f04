import Foundation
import QuireMonitor
import QuireSupport
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

enum StatsCommand {
    static let help = """
        Usage: quire stats [options]

        Subscribes to the broker's stats socket (quire broker --stats) and shows queues, workers,
        throughput and latency in a table that refreshes in place (80 columns). Ctrl-C quits.

        Options (environment variable in brackets):
          --stats ENDPOINT     the broker's stats socket [QUIRE_STATS] (default tcp://127.0.0.1:5556)
          --json               print the raw snapshots as JSON lines instead of the table
          --events             with --json, print the events (worker joined/lost, job dead) too
          --once               print one snapshot and exit (status 1 when none comes in time)
          --timeout-ms N       with --once, how long to wait for a snapshot (10000)
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let command = "quire stats"
        let arguments = try Arguments(command: command, args, valued: ["stats", "timeout-ms", "log-level"], booleans: ["json", "once", "events"])
        guard arguments.positionals.isEmpty else {
            throw UsageError(command: command, message: "unexpected argument '\(arguments.positionals[0])'")
        }
        if arguments.flag("events") && !arguments.flag("json") {
            throw UsageError(command: command, message: "--events needs --json")
        }
        let endpoint = arguments.string("stats") ?? ProcessInfo.processInfo.environment["QUIRE_STATS"] ?? "tcp://127.0.0.1:5556"
        let timeout = Milliseconds(Int64(try arguments.integer("timeout-ms", range: 1...3_600_000) ?? 10_000))
        let context = try Context()
        let terminal = try StatsTerminal(endpoint: endpoint, output: arguments.flag("json") ? .json(events: arguments.flag("events")) : .table,
                                         once: arguments.flag("once"), timeout: timeout, context: context)
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
