import Foundation
import QuireMonitor
import QuireSupport
import ZeroMQ

enum ExporterCommand {
    static let listen = Option("listen", variable: "QUIRE_EXPORTER_LISTEN", .listenAddress, default: ":9464",
                               help: "where to serve HTTP (every interface when HOST is left out)")

    static let command = Command(
        "exporter", listing: ("exporter", "serve the broker's stats as Prometheus metrics over HTTP"),
        usage: "quire exporter [options]",
        discussion: """
            A Prometheus exporter: subscribes to the broker's stats socket and serves the latest snapshot
            at GET /metrics in the text exposition format 0.0.4 (quire_queue_depth, quire_workers,
            quire_requests_completed_total, quire_wait_seconds, …). Labels are service, state, reason,
            priority and quantile only. Stops on SIGTERM or SIGINT. With CURVE on at the broker, its
            stats socket has it too: give --curve-server-key and --curve-key.
            """,
        groups: [OptionGroup(options: [listen.info, StatsOptions.endpoint.info] + CurveOptions.clientGroup.options)],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        guard invocation.positionals.isEmpty else {
            throw UsageError(command: command, message: "unexpected argument '\(invocation.positionals[0])'")
        }
        let listen = try invocation.value(Self.listen, or: ":9464")
        let endpoint = try StatsOptions.endpoint(invocation)
        let logger = try CommonOptions.logger("quire.exporter", invocation)
        let context = try Context()
        let exporter = try Exporter(statsEndpoint: endpoint, listen: listen, context: context, logger: logger,
                                    curve: try CurveOptions.client(invocation))
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

extension SettingValue where Value == String {
    /// `[HOST]:PORT`, as the exporter listens.
    static var listenAddress: Self {
        Self(placeholder: "[HOST]:PORT", expectation: "[HOST]:PORT such as :9464",
             parse: { Exporter.parseListen($0) != nil ? $0 : nil }, format: { $0 })
    }
}
