import Foundation
import QuireBroker
import QuireSupport
import ZeroMQ

enum BrokerCommand {
    static let help = """
        Usage: quire broker [options]

        Runs the Majordomo broker: one ROUTER socket for clients and workers of every dialect
        (MDP/0.2, MDP/0.1, majortomo). Stops cleanly on SIGTERM or SIGINT.

        Options (environment variable in brackets):
          --bind ENDPOINT               where to listen [QUIRE_BIND] (default tcp://*:5555)
          --heartbeat-interval-ms N     heartbeat to workers every N ms [QUIRE_HEARTBEAT_INTERVAL_MS] (2500)
          --heartbeat-liveness N        missed heartbeats before a worker is dead [QUIRE_HEARTBEAT_LIVENESS] (4)
          --busy-worker-timeout-ms N    longest request for workers that are silent while busy
                                        (MDP/0.1, majortomo) [QUIRE_BUSY_WORKER_TIMEOUT_MS] (900000)
          --request-timeout-ms N        longest wait in a queue for a worker [QUIRE_REQUEST_TIMEOUT_MS] (30000)
          --max-attempts N              workers that may lose one request in turn [QUIRE_MAX_ATTEMPTS] (3)
          --max-queued N                queued requests per service before 'busy' [QUIRE_MAX_QUEUED_REQUESTS] (10000)
          --max-message-bytes N         largest request accepted [QUIRE_MAX_MESSAGE_BYTES] (67108864)
          --stats ENDPOINT              publish stats snapshots and events on a PUB socket bound here,
                                        e.g. tcp://*:5556 [QUIRE_STATS_BIND] (default: off)
          --stats-interval-ms N         one snapshot every N ms [QUIRE_STATS_INTERVAL_MS] (1000)
          --log-level LEVEL             [QUIRE_LOG_LEVEL] (info)
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let arguments = try Arguments(command: "quire broker", args, valued: [
            "bind", "heartbeat-interval-ms", "heartbeat-liveness", "busy-worker-timeout-ms", "request-timeout-ms",
            "max-attempts", "max-queued", "max-message-bytes", "log-level", "stats", "stats-interval-ms",
        ])
        guard arguments.positionals.isEmpty else {
            throw UsageError(command: "quire broker", message: "unexpected argument '\(arguments.positionals[0])'")
        }
        var configuration: BrokerConfiguration
        do {
            configuration = try BrokerConfiguration(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw UsageError(command: "quire broker", message: error.description)
        }
        if let v = arguments.string("bind") { configuration.bind = v }
        if let v = try arguments.integer("heartbeat-interval-ms", range: 1...3_600_000) { configuration.heartbeatInterval = Milliseconds(Int64(v)) }
        if let v = try arguments.integer("heartbeat-liveness", range: 1...100) { configuration.heartbeatLiveness = v }
        if let v = try arguments.integer("busy-worker-timeout-ms", range: 1...604_800_000) { configuration.busyWorkerTimeout = Milliseconds(Int64(v)) }
        if let v = try arguments.integer("request-timeout-ms", range: 1...604_800_000) { configuration.requestTimeout = Milliseconds(Int64(v)) }
        if let v = try arguments.integer("max-attempts", range: 1...100) { configuration.maxAttempts = v }
        if let v = try arguments.integer("max-queued", range: 1...10_000_000) { configuration.maxQueuedRequests = v }
        if let v = try arguments.integer("max-message-bytes", range: 1024...(1 << 31)) { configuration.maxMessageBytes = v }
        if let v = arguments.string("stats") { configuration.statsBind = v == "off" ? nil : v }
        if let v = try arguments.integer("stats-interval-ms", range: 10...3_600_000) { configuration.statsInterval = Milliseconds(Int64(v)) }
        let logger = try makeLogger("quire.broker", arguments)

        let context = try Context()
        let broker = try Broker(configuration: configuration, context: context, logger: logger)
        let signals = SignalWatcher { number in
            logger.notice("signal received; stopping", metadata: ["signal": String(number)])
            broker.stop()
        }
        defer { withExtendedLifetime(signals) {} }
        do {
            try broker.run()
        } catch {
            logger.error("broker failed", metadata: ["error": error.description])
            printError("quire broker: \(error)")
            return 1
        }
        // The socket is closed: let the goodbyes to clients and workers leave before exiting.
        context.terminate()
        return 0
    }
}
