import Foundation
import QuireOCR
import QuireSupport
import QuireWire
import QuireWorker
import Synchronization
import ZeroMQ

enum WorkerCommand {
    static let help = """
        Usage: quire worker <kind> [options]

        Runs a worker that connects to the broker, registers its service and serves requests.
        Kinds:
          ocr         service 'ocr': images in, the JSON text hierarchy out (Tesseract; one engine per thread)
          echo        service 'echo': replies with the request's own frames (tests, benchmarks)
          token       services 'auth.token' and 'auth.jwks': signed access tokens and their public keys

        On SIGTERM or SIGINT the worker drains: it finishes the request in hand, sends DISCONNECT and
        exits 0. A second signal exits at once.

        Options (environment variable in brackets):
          --broker ENDPOINT             the broker [QUIRE_BROKER] (default tcp://127.0.0.1:5555)
          --threads N                   worker connections (and OCR engines) in this process [QUIRE_THREADS] (1)
          --tessdata DIR                language packs (ocr) [QUIRE_TESSDATA]
          --languages L                 default languages (ocr), e.g. eng+deu [QUIRE_LANGUAGES] (eng)
          --dialect D                   mdp02 (default), mdp01 or majortomo
          --heartbeat-interval-ms N     [QUIRE_HEARTBEAT_INTERVAL_MS] (2500; match the broker)
          --heartbeat-liveness N        [QUIRE_HEARTBEAT_LIVENESS] (4)
          --service NAME                serve under another service name (echo only)
          --json                        require a JSON object as the first frame (echo only)
          --delay-ms N                  hold each request N ms, sending a PARTIAL first (echo only; tests)
          --data DIR                    keys and clients (token) [QUIRE_DATA] (default: quire up's)
          --issuer NAME                 'iss' of tokens (token) [QUIRE_ISSUER] (quire)
          --audience NAME               'aud' of tokens (token) [QUIRE_AUDIENCE] (quire)
          --token-ttl-s N               access token lifetime (token) [QUIRE_TOKEN_TTL_S] (900)
          --curve-server-key K          the broker's CURVE public key (Z85 or .pub file) [QUIRE_CURVE_SERVER_KEY]
          --curve-key FILE              this worker's CURVE key pair file [QUIRE_CURVE_KEY]
          --log-level LEVEL             [QUIRE_LOG_LEVEL] (info)
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let arguments = try Arguments(command: "quire worker", args, valued: [
            "broker", "threads", "dialect", "heartbeat-interval-ms", "heartbeat-liveness", "service", "log-level", "delay-ms", "tessdata", "languages",
            "data", "issuer", "audience", "token-ttl-s", "curve-server-key", "curve-key",
        ], booleans: ["json"])
        guard let kind = arguments.positionals.first else {
            throw UsageError(command: "quire worker", message: "missing the worker kind (ocr, echo, token)")
        }
        guard arguments.positionals.count == 1 else {
            throw UsageError(command: "quire worker", message: "unexpected argument '\(arguments.positionals[1])'")
        }
        var configuration: WorkerConfiguration
        do {
            configuration = try WorkerConfiguration(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw UsageError(command: "quire worker", message: error.description)
        }
        if let v = arguments.string("broker") { configuration.broker = v }
        if let v = arguments.string("dialect") {
            guard let dialect = Dialect(rawValue: v) else {
                throw UsageError(command: "quire worker", message: "unknown dialect '\(v)' (mdp02, mdp01, majortomo)")
            }
            configuration.dialect = dialect
        }
        if let v = try arguments.integer("heartbeat-interval-ms", range: 1...3_600_000) { configuration.heartbeatInterval = Milliseconds(Int64(v)) }
        if let v = try arguments.integer("heartbeat-liveness", range: 1...100) { configuration.heartbeatLiveness = v }
        let threads: Int
        if let value = try arguments.integer("threads", range: 1...256) {
            threads = value
        } else if let text = ProcessInfo.processInfo.environment["QUIRE_THREADS"] {
            guard let value = Int(text), (1...256).contains(value) else {
                throw UsageError(command: arguments.command, message: "QUIRE_THREADS=\(text): expected an integer in 1…256")
            }
            threads = value
        } else {
            threads = 1
        }
        configuration.curve = try CurveOptions.client(arguments)

        var services: [WorkerService] = []
        let service: WorkerService
        switch kind {
        case "echo":
            let delay = try arguments.integer("delay-ms", range: 1...3_600_000).map { Milliseconds(Int64($0)) }
            service = EchoService.make(name: arguments.string("service") ?? "echo", requiresJSONFrame: arguments.flag("json"), delay: delay)
        case "ocr":
            service = OCRService.make(configuration: try ocrConfiguration(arguments))
            ensureSingleThreadedOpenMP()
        case "token":
            services = try TokenWorker.services(arguments, logger: try makeLogger("quire.worker.token", arguments))
            service = services[0]
        default:
            throw UsageError(command: "quire worker", message: "unknown worker kind '\(kind)' (ocr, echo, token)")
        }
        let logger = try makeLogger("quire.worker.\(kind)", arguments)
        let context = try Context()
        var workers: [Worker] = []
        for _ in 0..<threads {
            workers.append(try Worker(configuration: configuration, service: service, context: context, logger: logger))
        }
        // The token worker also serves its public keys, on one connection of its own.
        for extra in services.dropFirst() {
            workers.append(try Worker(configuration: configuration, service: extra, context: context, logger: logger))
        }
        let signalCount = Atomic<Int>(0)
        let stopAll = workers
        let signals = SignalWatcher { number in
            if signalCount.add(1, ordering: .relaxed).newValue > 1 {
                logger.warning("second signal; exiting without draining", metadata: ["signal": String(number)])
                _exit(1)
            }
            logger.notice("signal received; draining", metadata: ["signal": String(number)])
            for worker in stopAll { worker.stop() }
        }
        defer { withExtendedLifetime(signals) {} }
        let status = runWorkers(workers, logger: logger)
        // Every worker has closed its socket: let the DISCONNECTs leave before the process exits.
        context.terminate()
        return status
    }

    /// Runs each worker on its own thread and waits for all of them. 1 if any failed.
    static func runWorkers(_ workers: [Worker], logger: Logger) -> Int32 {
        let failures = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        for (index, worker) in workers.enumerated() {
            let thread = Thread {
                do {
                    try worker.run()
                } catch {
                    logger.error("worker failed", metadata: ["error": String(describing: error)])
                    failures.add(1, ordering: .relaxed)
                    for other in workers { other.stop() }
                }
                done.signal()
            }
            thread.name = "quire-worker-\(index)"
            thread.start()
        }
        for _ in workers { done.wait() }
        return failures.load(ordering: .relaxed) == 0 ? 0 : 1
    }
}
