import Foundation
import QuireMonitor
import QuireSupport
import ZeroMQ

enum ExporterCommand {
    static let help = """
        Usage: quire exporter [options]

        A Prometheus exporter: subscribes to the broker's stats socket and serves the latest snapshot
        at GET /metrics in the text exposition format 0.0.4 (quire_queue_depth, quire_workers,
        quire_requests_completed_total, quire_wait_seconds, …). Labels are service, state, reason,
        priority and quantile only. Stops on SIGTERM or SIGINT.

        Options (environment variable in brackets):
          --listen [HOST]:PORT   where to serve HTTP [QUIRE_EXPORTER_LISTEN] (default :9464, every interface)
          --stats ENDPOINT       the broker's stats socket [QUIRE_STATS] (default tcp://127.0.0.1:5556)
          --log-level LEVEL      [QUIRE_LOG_LEVEL] (info)
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let command = "quire exporter"
        let arguments = try Arguments(command: command, args, valued: ["listen", "stats", "log-level"])
        guard arguments.positionals.isEmpty else {
            throw UsageError(command: command, message: "unexpected argument '\(arguments.positionals[0])'")
        }
        let environment = ProcessInfo.processInfo.environment
        let listen = arguments.string("listen") ?? environment["QUIRE_EXPORTER_LISTEN"] ?? ":9464"
        guard Exporter.parseListen(listen) != nil else {
            throw UsageError(command: command, message: "'--listen \(listen)': expected [HOST]:PORT such as :9464")
        }
        let endpoint = arguments.string("stats") ?? environment["QUIRE_STATS"] ?? "tcp://127.0.0.1:5556"
        let logger = try makeLogger("quire.exporter", arguments)
        let context = try Context()
        let exporter = try Exporter(statsEndpoint: endpoint, listen: listen, context: context, logger: logger)
        let signals = SignalWatcher { number in
            logger.notice("signal received; stopping", metadata: ["signal": String(number)])
            exporter.stop()
        }
        defer { withExtendedLifetime(signals) {} }
        do {
            try exporter.run()
        } catch {
            logger.error("exporter failed", metadata: ["error": String(describing: error)])
            printError("quire exporter: \(error)")
            return 1
        }
        context.terminate()
        return 0
    }
}
