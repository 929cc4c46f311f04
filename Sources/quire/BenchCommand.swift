import Foundation
import QuireBench
import QuireBroker
import QuireSupport

/// Options every benchmark takes: quieter logs than the other commands by default (a worker's
/// 'ready' would clutter the output), and the output's shape.
enum BenchOptions {
    static let logLevel = CommonOptions.logLevel.defaulting(to: "warning")
    static let json = Option("json", .switch, default: false, help: "print a JSON object instead of the table")
    static let quiet = Option("quiet", .switch, default: false, help: "no progress lines on standard error")

    static let group = OptionGroup("Output:", options: [json.info, quiet.info, logLevel.info])

    static func logger(_ invocation: Invocation) throws(UsageError) -> Logger {
        try CommonOptions.logger("quire.bench", invocation, option: logLevel)
    }

    /// `quire bench` with no benchmark named, or an unknown one.
    static func missing(_ positionals: [String]) throws -> Int32 {
        guard let target = positionals.first else {
            throw UsageError(command: "quire bench", message: "missing what to measure (broker, ocr, documents, fields, jobs, tokens, gateway, soak, hostile)")
        }
        throw UsageError(command: "quire bench", message: "unknown benchmark '\(target)' (broker, ocr, documents, fields, jobs, tokens, gateway, soak, hostile)")
    }
}

enum BenchCommand {
    static let settings: [Setting<BrokerBenchOptions>] = [
        Setting(\.workers, flag: "workers", .integer(1...256), help: "echo workers"),
        Setting(\.requests, flag: "requests", .integer(1...100_000_000), help: "pipelined requests against Quire's broker"),
        Setting(\.inFlight, flag: "in-flight", .integer(1...4_096), help: "requests outstanding at once in the pipelined run"),
        Setting(\.latencyRequests, flag: "latency-requests", .integer(1...10_000_000), help: "sequential requests for p50/p90/p99/max"),
        Setting(\.warmupRequests, flag: "warmup", .integer(1...10_000_000), help: "requests before measuring, repeated until every worker served"),
        Setting(\.payloadBytes, flag: "payload-bytes", .integer(0...(16 << 20)), help: "size of the request's one frame"),
        Setting(\.majortomoPython, flag: "majortomo", SettingValue.string("PYTHON").optional(none: "off"),
                help: "also measure majortomo's broker with this Python (majortomo 0.2.0, six)"),
        Setting(\.majortomoRequests, flag: "majortomo-requests", .integer(1...100_000_000), help: "pipelined requests against majortomo's broker"),
        Setting(\.requestTimeout, flag: "request-timeout-ms", .milliseconds(1...3_600_000), help: "one request unanswered this long fails the run"),
        Setting(\.phaseTimeout, flag: "phase-timeout-ms", .milliseconds(1...86_400_000),
                help: "the throughput and latency runs stop sending after this long and report what they measured; the warm-up fails"),
        Setting(\.sharedContext, flag: "shared-context", .switch,
                help: "one ZeroMQ context (I/O thread) for broker, workers and client instead of one each as in separate processes"),
        Setting(\.auth, flag: "auth", .switch,
                help: "tokens on: every request carries one, which the broker checks (a token worker's keys in a temporary folder; no rate limit)"),
        Setting(\.stats, flag: "stats", .switch,
                help: "publish stats from the broker (one snapshot a second, a subscriber draining them), to measure what monitoring costs"),
    ]

    static let command = Command(
        "bench broker", listing: ("bench broker", "measure the broker: requests/s and round-trip latency"),
        usage: "quire bench broker [options]",
        discussion: """
            Measures the broker in one process over TCP loopback: a broker on tcp://127.0.0.1:*, echo
            workers (each on its own thread) and a client. After a warm-up it sends pipelined requests
            (one small frame each) with many in flight for requests/s, then sequential requests with one
            in flight, on a client of its own, for the round-trip percentiles. Prints a Markdown table and
            the machine, for the README; progress goes to standard error. Build with -c release before
            measuring.

            With --majortomo PYTHON it also starts majortomo's own broker (PYTHON -m majortomo.broker) as
            a subprocess and measures it the same way, with Quire's workers and client speaking the
            majortomo dialect, and prints the ratio. The subprocess is always killed at the end.
            """,
        groups: [OptionGroup(settings, defaults: BrokerBenchOptions()), BenchOptions.group],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        guard invocation.positionals.isEmpty else {
            throw UsageError(command: command, message: "unexpected argument '\(invocation.positionals[0])'")
        }
        let options = try invocation.configured(BrokerBenchOptions(), settings)
        if let python = options.majortomoPython, !FileManager.default.isExecutableFile(atPath: python) {
            throw UsageError(command: command, message: "'--majortomo \(python)': not an executable file")
        }
        let logger = try BenchOptions.logger(invocation)
        let quiet = try invocation.value(BenchOptions.quiet, or: false)

        let benchmark = BrokerBenchmark(options: options, logger: logger) { line in
            if !quiet { printError("bench: " + line) }
        }
        // Ctrl-C must not leave majortomo's broker running.
        let signals = interrupted(command, kill: benchmark.killSubprocesses)
        defer { withExtendedLifetime(signals) {} }

        let report: BrokerBenchReport
        do {
            report = try benchmark.run()
        } catch {
            printError("quire bench broker: \(error)")
            return 1
        }
        printOut(try invocation.value(BenchOptions.json, or: false) ? report.json() : report.markdown())
        return 0
    }
}

enum BenchJobsCommand {
    static let settings: [Setting<JobsBenchOptions>] = [
        Setting(\.submits, flag: "submits", .integer(1...10_000_000), help: "submissions in the throughput run"),
        Setting(\.payloadBytes, flag: "payload-bytes", .integer(1...(16 << 20)), help: "bytes of each job's body"),
        Setting(\.inFlight, flag: "in-flight", .integer(1...4_096), help: "submissions outstanding at once"),
        Setting(\.workers, flag: "workers", .integer(1...256), help: "echo workers for the latency run"),
        Setting(\.drain, flag: "drain", .switch,
                help: "let the workers drain the throughput run's jobs as they come (their replies are stored too); by default those "
                    + "jobs go to a service with no worker, so the run measures submissions alone"),
        Setting(\.latencyJobs, flag: "latency-jobs", .integer(1...1_000_000), help: "jobs for the submit-to-result percentiles"),
        Setting(\.directory, flag: "data", SettingValue.string("DIR").optional(none: "a temporary folder, deleted after"),
                help: "keep the store in DIR"),
        Setting(\.postgres, flag: "store", JobConfiguration.storeValue.optional(none: "SQLite only"),
                help: "also measure PostgreSQL, in one run with SQLite: a fresh schema in URI's database, dropped after"),
        Setting(\.brokers, flag: "brokers", .integer(1...16),
                help: "with --store, also measure this many brokers serving the PostgreSQL store together (each with its own workers)"),
    ]

    static let command = Command(
        "bench jobs", listing: ("bench jobs", "measure durable jobs: submissions/s and submit-to-result time"),
        usage: "quire bench jobs [options]",
        discussion: """
            Measures durable jobs in one process over TCP loopback: a broker with its SQLite job store (in
            a temporary folder unless --data is given), echo workers draining the jobs, and a client;
            with --store, the same again on PostgreSQL (a fresh schema, dropped after), with one broker
            and then with --brokers brokers serving the store together (2 by default), the
            submissions spread over them.
            First pipelined submissions (each acknowledged only once committed with fsync) for
            submits/s, then jobs one at a time for the time from submission to result. Prints a Markdown
            table for the README. Build with -c release before measuring.
            """,
        groups: [OptionGroup(settings, defaults: JobsBenchOptions()), BenchOptions.group],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        guard invocation.positionals.isEmpty else {
            throw UsageError(command: command, message: "unexpected argument '\(invocation.positionals[0])'")
        }
        let options = try invocation.configured(JobsBenchOptions(), settings)
        let logger = try BenchOptions.logger(invocation)
        let quiet = try invocation.value(BenchOptions.quiet, or: false)
        let progress: @Sendable (String) -> Void = { line in
            if !quiet { printError("bench: " + line) }
        }
        do {
            // With a PostgreSQL server: SQLite first, then PostgreSQL with one broker and with several,
            // the same runs in one go.
            var sqlite = options
            sqlite.postgres = nil
            var reports = [try JobsBenchmark(options: sqlite, logger: logger, progress: progress).run()]
            if options.postgres != nil {
                var one = options
                one.brokers = 1
                reports.append(try JobsBenchmark(options: one, logger: logger, progress: progress).run())
                if options.brokers > 1 { reports.append(try JobsBenchmark(options: options, logger: logger, progress: progress).run()) }
            }
            let json = try invocation.value(BenchOptions.json, or: false)
            if json {
                printOut(reports.count == 1 ? reports[0].json() : "[" + reports.map { $0.json() }.joined(separator: ",") + "]")
            } else {
                printOut(reports.map { $0.markdown() }.joined(separator: "\n\n"))
            }
            return 0
        } catch {
            printError("\(command): \(error)")
            return 1
        }
    }
}

enum BenchGatewayCommand {
    static let settings: [Setting<GatewayBenchOptions>] = [
        Setting(\.requests, flag: "requests", .integer(1...10_000_000), help: "requests in each throughput run (one per path)"),
        Setting(\.connections, flag: "connections", .integer(1...256),
                help: "HTTP connections at once through the gateway (one thread each), and requests in flight on the direct client"),
        Setting(\.latencyRequests, flag: "latency-requests", .integer(1...1_000_000), help: "requests one at a time on each path, for p50/p90/p99"),
        Setting(\.warmupRequests, flag: "warmup", .integer(1...1_000_000), help: "requests on each path before measuring"),
        Setting(\.imagePath, flag: "image", SettingValue.string("FILE").optional(none: "100 KB of filler"), help: "the image sent every time"),
        Setting(\.imageBytes, flag: "image-bytes", .integer(1...(10 << 20)), help: "the filler's size without --image"),
        Setting(\.ocr, flag: "ocr", .switch,
                help: "real OCR workers (Tesseract; give --image with text) instead of the canned worker that answers at once"),
        Setting(\.workers, flag: "workers", .integer(1...64), help: "worker threads serving ocr"),
        Setting(\.requestTimeout, flag: "request-timeout-ms", .milliseconds(1...3_600_000), help: "one request unanswered this long fails the run"),
        Setting(\.phaseTimeout, flag: "phase-timeout-ms", .milliseconds(1...86_400_000), help: "a run that takes longer fails"),
    ]

    static let command = Command(
        "bench gateway", listing: ("bench gateway", "measure the HTTP gateway: requests/s and the latency it adds over ZeroMQ"),
        usage: "quire bench gateway [options]",
        discussion: """
            Measures the gateway in one process over TCP loopback: a broker, workers serving 'ocr' and
            the gateway (with a ZeroMQ context of its own). The same image goes to the same workers
            three ways: a Majordomo client straight to the broker, Cloud Vision images:annotate through
            the gateway (base64 in JSON) and Image Analysis 4.0 (raw bytes). First requests/s with many
            at once on each path, then requests one at a time on the three paths interleaved, for the
            percentiles and what the gateway adds. By default the worker answers every image at once
            with the same canned result, so that the gateway is measured and not Tesseract; --ocr
            puts real workers behind both paths. Prints a Markdown table and the machine. Build with
            -c release before measuring.
            """,
        groups: [OptionGroup(settings, defaults: GatewayBenchOptions()), BenchOptions.group],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        guard invocation.positionals.isEmpty else {
            throw UsageError(command: command, message: "unexpected argument '\(invocation.positionals[0])'")
        }
        let options = try invocation.configured(GatewayBenchOptions(), settings)
        let logger = try BenchOptions.logger(invocation)
        let quiet = try invocation.value(BenchOptions.quiet, or: false)
        // Real workers load Tesseract: first re-execute with OMP_THREAD_LIMIT=1, as `quire bench ocr` does.
        if options.ocr { ensureSingleThreadedOpenMP() }
        let benchmark = GatewayBenchmark(options: options, logger: logger) { line in
            if !quiet { printError("bench: " + line) }
        }
        do {
            let report = try benchmark.run()
            printOut(try invocation.value(BenchOptions.json, or: false) ? report.json() : report.markdown())
            return 0
        } catch {
            printError("\(command): \(error)")
            return 1
        }
    }
}

/// Ctrl-C must not leave a benchmark's processes running (a stack, majortomo's broker, tesseract
/// CLI processes): they are killed, then this exits.
func interrupted(_ command: String, kill: @escaping @Sendable () -> Void) -> SignalWatcher {
    SignalWatcher { number in
        kill()
        printError("\(command): interrupted")
        _exit(128 + number)
    }
}
