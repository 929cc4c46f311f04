import Foundation
import QuireBench
import QuireSupport

enum BenchCommand {
    static let help = """
        Usage: quire bench broker [options]

        Measures the broker in one process over TCP loopback: a broker on tcp://127.0.0.1:*, echo
        workers (each on its own thread) and a client. After a warm-up it sends pipelined requests
        (one small frame each) with many in flight for requests/s, then sequential requests with one
        in flight, on a client of its own, for the round-trip percentiles. Prints a Markdown table and
        the machine, for the README; progress goes to standard error. Build with -c release before
        measuring.

        With --majortomo PYTHON it also starts majortomo's own broker (PYTHON -m majortomo.broker) as
        a subprocess and measures it the same way, with Quire's workers and client speaking the
        majortomo dialect, and prints the ratio. The subprocess is always killed at the end.

        Options:
          --workers N              echo workers (default 2)
          --requests N             pipelined requests against Quire's broker (200000)
          --in-flight N            requests outstanding at once in the pipelined run (64)
          --latency-requests N     sequential requests for p50/p90/p99/max (5000)
          --warmup N               requests before measuring, repeated until every worker served (2000)
          --payload-bytes N        size of the request's one frame (16)
          --majortomo PYTHON       also measure majortomo's broker with this Python (majortomo 0.2.0, six)
          --majortomo-requests N   pipelined requests against majortomo's broker (20000)
          --request-timeout-ms N   one request unanswered this long fails the run (10000)
          --phase-timeout-ms N     the throughput and latency runs stop sending after this long and
                                   report what they measured; the warm-up fails (15000)
          --shared-context         one ZeroMQ context (I/O thread) for broker, workers and client
                                   instead of one each as in separate processes
          --stats                  publish stats from the broker (one snapshot a second, a subscriber
                                   draining them), to measure what monitoring costs
          --json                   print a JSON object instead of the table
          --quiet                  no progress lines on standard error
          --log-level LEVEL        for the broker and workers [QUIRE_LOG_LEVEL] (warning)
        """

    static func run(_ args: [String]) throws -> Int32 {
        guard let target = args.first, !target.hasPrefix("-") else {
            if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
            throw UsageError(command: "quire bench", message: "missing what to measure (broker, ocr, jobs, tokens)")
        }
        if target == "ocr" { return try BenchOCRCommand.run(Array(args.dropFirst())) }
        if target == "jobs" { return try BenchJobsCommand.run(Array(args.dropFirst())) }
        if target == "tokens" { return try BenchTokensCommand.run(Array(args.dropFirst())) }
        guard target == "broker" else {
            throw UsageError(command: "quire bench", message: "unknown benchmark '\(target)' (broker, ocr, jobs, tokens)")
        }
        let rest = Array(args.dropFirst())
        if rest.contains("--help") || rest.contains("-h") { printOut(help); return 0 }
        let command = "quire bench broker"
        let arguments = try Arguments(command: command, rest, valued: [
            "workers", "requests", "in-flight", "latency-requests", "warmup", "payload-bytes", "majortomo",
            "majortomo-requests", "request-timeout-ms", "phase-timeout-ms", "log-level",
        ], booleans: ["json", "quiet", "shared-context", "stats"])
        guard arguments.positionals.isEmpty else {
            throw UsageError(command: command, message: "unexpected argument '\(arguments.positionals[0])'")
        }
        var options = BrokerBenchOptions()
        if let v = try arguments.integer("workers", range: 1...256) { options.workers = v }
        if let v = try arguments.integer("requests", range: 1...100_000_000) { options.requests = v }
        if let v = try arguments.integer("in-flight", range: 1...4_096) { options.inFlight = v }
        if let v = try arguments.integer("latency-requests", range: 1...10_000_000) { options.latencyRequests = v }
        if let v = try arguments.integer("warmup", range: 1...10_000_000) { options.warmupRequests = v }
        if let v = try arguments.integer("payload-bytes", range: 0...(16 << 20)) { options.payloadBytes = v }
        if let v = try arguments.integer("majortomo-requests", range: 1...100_000_000) { options.majortomoRequests = v }
        if let v = try arguments.integer("request-timeout-ms", range: 1...3_600_000) { options.requestTimeout = Milliseconds(Int64(v)) }
        if let v = try arguments.integer("phase-timeout-ms", range: 1...86_400_000) { options.phaseTimeout = Milliseconds(Int64(v)) }
        options.sharedContext = arguments.flag("shared-context")
        options.stats = arguments.flag("stats")
        if let python = arguments.string("majortomo") {
            guard FileManager.default.isExecutableFile(atPath: python) else {
                throw UsageError(command: command, message: "'--majortomo \(python)': not an executable file")
            }
            options.majortomoPython = python
        }
        // Quieter than the other commands by default: a worker's 'ready' would clutter the output.
        let levelName = arguments.string("log-level") ?? ProcessInfo.processInfo.environment["QUIRE_LOG_LEVEL"] ?? "warning"
        guard let level = Logger.Level(name: levelName) else {
            throw UsageError(command: command, message: "unknown log level '\(levelName)'")
        }
        let logger = Logger(label: "quire.bench", level: level)
        let quiet = arguments.flag("quiet")

        let benchmark = BrokerBenchmark(options: options, logger: logger) { line in
            if !quiet { printError("bench: " + line) }
        }
        // Ctrl-C must not leave majortomo's broker running: kill it, then exit.
        let signals = SignalWatcher { number in
            benchmark.killSubprocesses()
            printError("quire bench: interrupted")
            _exit(128 + number)
        }
        defer { withExtendedLifetime(signals) {} }

        let report: BrokerBenchReport
        do {
            report = try benchmark.run()
        } catch {
            printError("quire bench broker: \(error)")
            return 1
        }
        printOut(arguments.flag("json") ? report.json() : report.markdown())
        return 0
    }
}

enum BenchJobsCommand {
    static let help = """
        Usage: quire bench jobs [options]

        Measures durable jobs in one process over TCP loopback: a broker with its SQLite job store (in
        a temporary folder unless --data is given), echo workers draining the jobs, and a client.
        First pipelined submissions (each acknowledged only once committed with fsync) for
        submits/s, then jobs one at a time for the time from submission to result. Prints a Markdown
        table for the README. Build with -c release before measuring.

        Options:
          --submits N            submissions in the throughput run (3000)
          --payload-bytes N      bytes of each job's body (100000)
          --in-flight N          submissions outstanding at once (64)
          --workers N            echo workers for the latency run (2)
          --drain                let the workers drain the throughput run's jobs as they come (their
                                 replies are stored too); by default those jobs go to a service with
                                 no worker, so the run measures submissions alone
          --latency-jobs N       jobs for the submit-to-result percentiles (200)
          --data DIR             keep the store in DIR (default: a temporary folder, deleted after)
          --json                 print JSON instead of the table
          --quiet                no progress lines on standard error
          --log-level LEVEL      [QUIRE_LOG_LEVEL] (warning)
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let command = "quire bench jobs"
        let arguments = try Arguments(command: command, args, valued: [
            "submits", "payload-bytes", "in-flight", "workers", "latency-jobs", "data", "log-level",
        ], booleans: ["json", "quiet", "drain"])
        guard arguments.positionals.isEmpty else {
            throw UsageError(command: command, message: "unexpected argument '\(arguments.positionals[0])'")
        }
        var options = JobsBenchOptions()
        options.drain = arguments.flag("drain")
        if let v = try arguments.integer("submits", range: 1...10_000_000) { options.submits = v }
        if let v = try arguments.integer("payload-bytes", range: 1...(16 << 20)) { options.payloadBytes = v }
        if let v = try arguments.integer("in-flight", range: 1...4_096) { options.inFlight = v }
        if let v = try arguments.integer("workers", range: 1...256) { options.workers = v }
        if let v = try arguments.integer("latency-jobs", range: 1...1_000_000) { options.latencyJobs = v }
        options.directory = arguments.string("data")
        let levelName = arguments.string("log-level") ?? ProcessInfo.processInfo.environment["QUIRE_LOG_LEVEL"] ?? "warning"
        guard let level = Logger.Level(name: levelName) else {
            throw UsageError(command: command, message: "unknown log level '\(levelName)'")
        }
        let quiet = arguments.flag("quiet")
        let benchmark = JobsBenchmark(options: options, logger: Logger(label: "quire.bench", level: level)) { line in
            if !quiet { printError("bench: " + line) }
        }
        do {
            let report = try benchmark.run()
            printOut(arguments.flag("json") ? report.json() : report.markdown())
            return 0
        } catch {
            printError("\(command): \(error)")
            return 1
        }
    }
}
