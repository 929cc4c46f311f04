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
          --curve-secret-key FILE       turn CURVE on with this key pair file (quire keys curve) [QUIRE_CURVE_SECRET_KEY]
          --curve-allow FILE|DIR        client and worker public keys let in: a file with one Z85 key per line,
                                        or a folder of .pub files [QUIRE_CURVE_ALLOW]. Without it a broker
                                        with CURVE on refuses to start.
          --log-level LEVEL             [QUIRE_LOG_LEVEL] (info)
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let arguments = try Arguments(command: "quire broker", args, valued: [
            "bind", "heartbeat-interval-ms", "heartbeat-liveness", "busy-worker-timeout-ms", "request-timeout-ms",
            "max-attempts", "max-queued", "max-message-bytes", "log-level", "curve-secret-key", "curve-allow",
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
        let logger = try makeLogger("quire.broker", arguments)
        let curve = try CurveOptions.server(arguments)
        if let curve { configuration.curve = CurveServerSettings(secretKey: curve.secretKey, allowedKeys: curve.allowedKeys) }

        let context = try Context()
        var zap: ZAPHandler?
        if let allowed = curve?.allowedKeys {
            zap = try ZAPHandler(context: context, allowedKeys: allowed, logger: logger)
            logger.notice("curve on", metadata: ["server.key": (try? Z85.encode(curve?.publicKey ?? [])) ?? "", "allowed_keys": String(allowed.count)])
        }
        defer { withExtendedLifetime(zap) {} }
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
            context.terminate()
            return 1
        }
        // The socket is closed: let the goodbyes to clients and workers leave before exiting.
        context.terminate()
        return 0
    }
}
