import Foundation
import QuireBench
import QuireSupport

enum BenchSoakCommand {
    static let settings: [Setting<SoakBenchOptions>] = [
        Setting(\.minutes, flag: "minutes", .number(0.1...10_080), help: "how long the load runs"),
        Setting(\.clients, flag: "clients", .integer(1...64), help: "clients sending one request at a time each"),
        Setting(\.paths, flag: "paths", SettingValue<[SoakPath]>(
                    placeholder: "P,…", expectation: "paths separated by ','",
                    parse: { text in
                        let paths = text.split(separator: ",").map { SoakPath(rawValue: String($0)) }
                        return paths.isEmpty || paths.contains(nil) ? nil : paths.compactMap { $0 }
                    },
                    format: { $0.map(\.rawValue).joined(separator: ",") }),
                help: "the paths the requests take in turn: " + SoakPath.allCases.map(\.rawValue).joined(separator: ", ")),
        Setting(\.workers, flag: "workers", .integer(1...32), help: "OCR worker processes (one engine each)"),
        Setting(\.restarts, flag: "restarts", .integer(0...100),
                help: "restarts of the first worker, spread over the run: SIGTERM (it drains), then SIGKILL, in turn"),
        Setting(\.sampleSeconds, flag: "sample-s", .number(1...3_600), help: "seconds between rows of latencies and of every process's last reading"),
        Setting(\.probeSeconds, flag: "probe-s", .number(1...3_600),
                help: "seconds between readings of every process (RSS, CPU, open files, threads) and of the machine's CPU; at most --sample-s"),
        Setting(\.warmupMinutes, flag: "warmup-minutes", SettingValue.number(0...10_080).optional(none: "a sixth of the run, at most 10"),
                help: "growth is measured from this long after each process started"),
        Setting(\.requestTimeout, flag: "request-timeout-ms", .milliseconds(1_000...86_400_000), help: "a request unanswered this long is lost"),
        Setting(\.restSeconds, flag: "rest-s", .number(0...600),
                help: "after the warm-up and at the end, every process is read after this long with nothing in flight (0: no pause)"),
    ]

    static let command = Command(
        "bench soak", listing: ("bench soak FILE|DIR…", "run mixed load for minutes: lost or wrong answers, latency, memory, files, threads"),
        usage: "quire bench soak FILE|DIR… [options]",
        discussion: """
            Runs the stack as separate processes of this executable on 127.0.0.1 (a broker with a job
            store in a temporary folder and auth off, --workers OCR workers of one engine each, the
            gateway) and --clients clients, each sending one request at a time for --minutes: the
            images, PDFs and TIFFs given (folders are searched), in turn over four paths: a Majordomo
            request, a durable job (ocr.document for a PDF or TIFF), Cloud Vision images:annotate and
            Azure Read 3.2 (analyze, then its Operation-Location polled). Every answer must have the
            text of the first answer for the same file on the same path; a request without one is
            lost. The first worker is restarted --restarts times on the way (SIGTERM, then SIGKILL, in
            turn). Every --probe-s seconds it reads each process's RSS, CPU time, open files and
            threads and the machine's CPU time (busy, and stolen by its hypervisor); every --sample-s
            seconds it prints a row: the answers' p50/p99, each process's last reading, the CPU
            shares. Then the run by ten minutes (answers, p50/p99, the workers' CPU seconds per
            answer) and each process's growth after its warm-up, its RSS floor the lowest reading of
            its first and of its last ten minutes. After the warm-up the load pauses until nothing is
            in flight, and every process is read after --rest-s seconds; again once the load is over:
            its RSS at rest, the two compared. Prints the tables for docs/benchmarks.md; exits 1
            when an answer was lost or wrong. Build with -c release before measuring.
            """,
        groups: [OptionGroup(settings, defaults: SoakBenchOptions()), BenchOptions.group],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        guard !invocation.positionals.isEmpty else {
            throw UsageError(command: command, message: "missing FILE or DIR: the images, PDFs and TIFFs to send")
        }
        var options = try invocation.configured(SoakBenchOptions(), settings)
        options.inputs = invocation.positionals
        let logger = try BenchOptions.logger(invocation)
        let quiet = try invocation.value(BenchOptions.quiet, or: false)
        let benchmark = SoakBenchmark(options: options, logger: logger) { line in
            if !quiet { printError("bench: " + line) }
        }
        let signals = interrupted(command, kill: benchmark.killSubprocesses)
        defer { withExtendedLifetime(signals) {} }
        let report: SoakBenchReport
        do {
            report = try benchmark.run()
        } catch {
            printError("\(command): \(error)")
            return 1
        }
        printOut(try invocation.value(BenchOptions.json, or: false) ? report.json() : report.markdown())
        if report.lost > 0 || report.wrong > 0 {
            printError("\(command): \(report.lost) requests lost, \(report.wrong) answers wrong")
            return 1
        }
        return 0
    }
}

enum BenchHostileCommand {
    static let settings: [Setting<HostileBenchOptions>] = [
        Setting(\.passes, flag: "passes", .integer(1...1_000), help: "times every hostile file is sent"),
        Setting(\.threads, flag: "threads", .integer(1...64), help: "engines (threads) in the one OCR worker process"),
        Setting(\.requestTimeout, flag: "request-timeout-ms", .milliseconds(1_000...3_600_000), help: "a request unanswered this long fails the run"),
    ]

    static let command = Command(
        "bench hostile", listing: ("bench hostile DIR", "measure hostile input: how each file is answered, how fast, and the worker's RSS"),
        usage: "quire bench hostile DIR [options]",
        discussion: """
            DIR is what scripts/hostile-images makes: valid/ (one page in six formats) and hostile/
            (cut, corrupted, lying and odd files, noise, a TIFF of 300 pages, random bytes). Runs a
            broker and one OCR worker process of --threads engines on 127.0.0.1, warms both engines
            of every thread on the valid renderings, then sends every hostile file once a pass, one
            at a time: how each is answered (a result, or the typed error's code), the slowest
            answers and the steps that explain them, and the worker's RSS after the warm-up and
            after each pass. Build with -c release before measuring.
            """,
        groups: [OptionGroup(settings, defaults: HostileBenchOptions()), BenchOptions.group],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        guard invocation.positionals.count == 1 else {
            throw UsageError(command: command, message: invocation.positionals.isEmpty ? "missing DIR (scripts/hostile-images makes one)"
                                                                                      : "unexpected argument '\(invocation.positionals[1])'")
        }
        var options = try invocation.configured(HostileBenchOptions(), settings)
        options.directory = invocation.positionals[0]
        let quiet = try invocation.value(BenchOptions.quiet, or: false)
        let benchmark = HostileBenchmark(options: options) { line in
            if !quiet { printError("bench: " + line) }
        }
        let signals = interrupted(command, kill: benchmark.killSubprocesses)
        defer { withExtendedLifetime(signals) {} }
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
