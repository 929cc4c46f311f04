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
          --curve-secret-key FILE       turn CURVE on with this key pair file (quire keys curve) [QUIRE_CURVE_SECRET_KEY]
          --curve-allow FILE|DIR        client and worker public keys let in: a file with one Z85 key per line,
                                        or a folder of .pub files [QUIRE_CURVE_ALLOW]. Without it a broker
                                        with CURVE on refuses to start.
          --log-level LEVEL             [QUIRE_LOG_LEVEL] (info)

        Auth (tokens from the token worker, checked on every service but mmi.* and auth.*):
          --auth on|off                 [QUIRE_AUTH] (on); off only on a trusted network or for tests
          --audience NAME               'aud' tokens must carry [QUIRE_AUDIENCE] (quire)
          --issuer NAME                 'iss' tokens must carry [QUIRE_ISSUER] (quire)
          --rate-limit N                requests per second per client, burst 2N [QUIRE_RATE_LIMIT] (200)

        Durable jobs (titanic.*), on when a data folder is given:
          --data DIR                    folder of the job store, jobs.sqlite3 [QUIRE_DATA] (none: jobs off)
          --max-jobs N                  queued + running jobs before '500 busy' [QUIRE_MAX_JOBS] (100000)
          --max-job-bytes N             bytes of queued + running jobs before '500 busy' [QUIRE_MAX_JOB_BYTES] (4 GiB)
          --job-attempts N              attempts when the submitter names none [QUIRE_JOB_ATTEMPTS] (3)
          --job-retry-ms N              first retry backoff, doubling, jittered, up to 60 s [QUIRE_JOB_RETRY_MS] (1000)
          --job-lease-ms N              longest one attempt may run [QUIRE_JOB_LEASE_MS] (600000)
          --result-ttl-s N              results kept this long by default [QUIRE_RESULT_TTL_S] (86400)
          --max-store-bytes N           cap on the job store's size; past it, '500 storage_failure'
                                        [QUIRE_MAX_STORE_BYTES] (none: the disk is the limit)
          --job-services A,B            services jobs may name before a worker for them has been seen
                                        [QUIRE_JOB_SERVICES] (none; services seen once are remembered)
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let arguments = try Arguments(command: "quire broker", args, valued: Set<String>([
            "bind", "heartbeat-interval-ms", "heartbeat-liveness", "busy-worker-timeout-ms", "request-timeout-ms",
            "max-attempts", "max-queued", "max-message-bytes", "log-level", "stats", "stats-interval-ms", "curve-secret-key", "curve-allow",
        ]).union(jobOptionNames).union(authOptionNames))
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
        configuration.jobs = try jobConfiguration(arguments, base: configuration.jobs)
        configuration.auth = try authConfiguration(arguments)
        if let v = arguments.string("stats") { configuration.statsBind = v == "off" ? nil : v }
        if let v = try arguments.integer("stats-interval-ms", range: 10...3_600_000) { configuration.statsInterval = Milliseconds(Int64(v)) }
        let logger = try makeLogger("quire.broker", arguments)
        if configuration.auth == nil {
            logger.warning("auth is off: any client that reaches the broker may use every service (--auth off)")
        }
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
            logger.error("broker failed", metadata: ["error": "\(error)"])
            printError("quire broker: \(error)")
            context.terminate()
            return 1
        }
        // The socket is closed: let the goodbyes to clients and workers leave before exiting.
        context.terminate()
        return 0
    }
}

/// The durable-job options `quire broker` and `quire up` share.
let jobOptionNames: Set<String> = ["data", "max-jobs", "max-job-bytes", "job-attempts", "job-retry-ms", "job-lease-ms", "result-ttl-s", "job-services", "max-store-bytes"]

/// `base` (from the environment) with the flags applied; `nil` when no data folder is named anywhere.
func jobConfiguration(_ arguments: Arguments, base: JobConfiguration?, defaultDirectory: String? = nil) throws(UsageError) -> JobConfiguration? {
    var configuration = base
    if let directory = arguments.string("data") {
        guard !directory.isEmpty else { throw UsageError(command: arguments.command, message: "--data needs a folder") }
        if configuration == nil { configuration = JobConfiguration(directory: directory) } else { configuration?.directory = directory }
    }
    if configuration == nil, let defaultDirectory { configuration = JobConfiguration(directory: defaultDirectory) }
    guard var jobs = configuration else {
        for name in jobOptionNames where arguments.string(name) != nil {
            throw UsageError(command: arguments.command, message: "--\(name) needs a data folder (--data DIR or QUIRE_DATA)")
        }
        return nil
    }
    if let v = try arguments.integer("max-jobs", range: 1...100_000_000) { jobs.maxActiveJobs = v }
    if let v = try arguments.integer("max-job-bytes", range: 1...(1 << 50)) { jobs.maxActiveBytes = v }
    if let v = try arguments.integer("job-attempts", range: 1...20) { jobs.defaultMaxAttempts = v }
    if let v = try arguments.integer("job-retry-ms", range: 1...3_600_000) { jobs.retryBase = Milliseconds(Int64(v)) }
    if let v = try arguments.integer("job-lease-ms", range: 1...86_400_000) { jobs.lease = Milliseconds(Int64(v)) }
    if let v = try arguments.integer("max-store-bytes", range: 65_536...(1 << 50)) { jobs.maxStoreBytes = v }
    if let v = try arguments.integer("result-ttl-s", range: 1...2_592_000) { jobs.defaultResultTTL = Milliseconds(Int64(v) * 1_000) }
    if let v = arguments.string("job-services") {
        jobs.services = Set(v.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
    }
    return jobs
}

/// The auth options `quire broker` and `quire up` share.
let authOptionNames: Set<String> = ["auth", "audience", "issuer", "rate-limit"]

/// Auth is on unless `--auth off` or `QUIRE_AUTH=off` says otherwise.
func authConfiguration(_ arguments: Arguments) throws(UsageError) -> AuthConfiguration? {
    let environment = ProcessInfo.processInfo.environment
    let mode = arguments.string("auth") ?? environment["QUIRE_AUTH"] ?? "on"
    switch mode {
    case "on": break
    case "off": return nil
    default: throw UsageError(command: arguments.command, message: "'--auth \(mode)': expected on or off")
    }
    var configuration = AuthConfiguration()
    if let v = arguments.string("audience") ?? environment["QUIRE_AUDIENCE"] { configuration.audience = v }
    if let v = arguments.string("issuer") ?? environment["QUIRE_ISSUER"] { configuration.issuer = v }
    let rate: Int?
    if let text = environment["QUIRE_RATE_LIMIT"], arguments.string("rate-limit") == nil {
        guard let value = Int(text), (1...1_000_000).contains(value) else {
            throw UsageError(command: arguments.command, message: "QUIRE_RATE_LIMIT=\(text): expected an integer in 1…1000000")
        }
        rate = value
    } else {
        rate = try arguments.integer("rate-limit", range: 1...1_000_000)
    }
    if let rate {
        configuration.rateLimit = Double(rate)
        configuration.burst = Double(rate * 2)
    }
    return configuration
}
