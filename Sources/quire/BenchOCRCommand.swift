import Foundation
import QuireBench
import QuireOCR
import QuireSupport
import QuireWire

/// `quire bench ocr DIR`: Quire end to end against the `tesseract` CLI and the raw engine on the same
/// images. `BenchCommand` routes `quire bench ocr …` here with the arguments after `ocr`.
enum BenchOCRCommand {
    static let settings: [Setting<OCRBenchOptions>] = [
        Setting(\.workers, flag: "workers", .integer(1...256), help: "OCR workers, CLI processes and engine threads"),
        Setting(\.repeats, flag: "repeat", .integer(1...10_000), help: "measured passes over the images"),
        Setting(\.noScaling, flag: "no-scaling", .switch,
                help: "switch the worker's scaling policy off (for Quire and the raw engine): read every image at its own size, as the CLI does, "
                    + "to see what the policy costs or saves"),
        Setting(flag: "top-level", .switch, help: "only the images directly in DIR, not in its subfolders",
                set: { options, topLevel in options.recursive = !topLevel }, get: { !$0.recursive }),
        Setting(\.tesseract, flag: "tesseract", SettingValue.string("PATH").optional(none: "off"),
                help: "the CLI to compare with (skipped with a note when it is not installed)"),
        Setting(\.requestTimeout, flag: "request-timeout-ms", .milliseconds(1...86_400_000), help: "one image not read within this fails"),
        Setting(\.phaseTimeout, flag: "phase-timeout-ms", .milliseconds(1...604_800_000),
                help: "each run stops sending images after this long and reports what it measured; a warm-up fails"),
    ]
    static let noCLI = Option("no-cli", .switch, default: false, help: "do not measure the CLI")
    static let mode = Option("mode", .word(["document", "text", "line"], noun: "mode", placeholder: "M"),
                             help: "document (psm 3), text (psm 11), line (psm 7)", defaultNote: "line when DIR is named 'lines', else document")

    static let command = Command(
        "bench ocr", listing: ("bench ocr DIR", "measure OCR end to end vs the tesseract CLI and the raw engine"),
        usage: "quire bench ocr DIR [options]",
        discussion: """
            Reads every image in DIR (and its subfolders; files are sniffed, not judged by name) three
            ways, with the same languages and page segmentation, N at a time, and prints a Markdown table
            for the README; progress goes to standard error. Build with -c release before measuring.

              Quire          a broker on tcp://127.0.0.1:* and N OCR worker threads in this process, and
                             a client with 2N requests in flight: images/s and p50/p90/p99 under that
                             load after a warm-up that loads every engine; then one request in flight
                             (p50/p90 per image, the figure for one-line crops)
              tesseract CLI  'tesseract IMG stdout -l LANG --psm P', one process per image, N at a time,
                             with OMP_THREAD_LIMIT=1 in its environment (without it Debian's OpenMP
                             build is ~6× slower and the comparison would flatter Quire)
              raw engine     N threads, each its own Recognizer, no broker and no sockets: the ceiling

            With --repeat R each pass reads every image each way, the order turning from pass to pass;
            passes during which other processes kept the machine busy (from /proc/stat) are left out,
            and vs CLI / vs raw are medians of the ratios within each pass. When an image has its text
            next to it (NAME.gt.txt), the table says how many of those words each way found.

            An image that cannot be read is reported and left out; one that fails in a run is reported
            with its file name. Every wait has a deadline. scripts/bench-images DIR makes a test set
            (DIR/pages, DIR/lines, DIR/photos; for photos, --mode text is what apps would ask for).
            """,
        groups: [
            OptionGroup(options: OptionGroup(settings, defaults: OCRBenchOptions(directory: "")).options + [noCLI.info, mode.info]),
            OptionGroup("The worker's settings:", OCRConfiguration.settings, defaults: OCRConfiguration()),
            BenchOptions.group,
        ],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        guard let directory = invocation.positionals.first else {
            throw UsageError(command: command, message: "missing DIR, the folder of images (scripts/bench-images makes one)")
        }
        guard invocation.positionals.count == 1 else {
            throw UsageError(command: command, message: "unexpected argument '\(invocation.positionals[1])'")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw UsageError(command: command, message: "'\(directory)' is not a directory")
        }
        var options = OCRBenchOptions(directory: directory)
        options.configuration = try invocation.configured(OCRConfiguration(), OCRConfiguration.settings)
        options.languages = options.configuration.defaultLanguages
        guard !options.languages.isEmpty, !options.languages.contains(where: \.isEmpty) else {
            throw UsageError(command: command, message: "'--languages': name at least one language, e.g. eng or eng+deu")
        }
        options = try invocation.configured(options, settings)
        options.mode = try invocation.value(mode).flatMap { OCRRequest.Mode(rawValue: $0) } ?? OCRBenchOptions.defaultMode(for: directory)
        if try invocation.value(noCLI, or: false) {
            guard !invocation.isGiven(flag: "tesseract") else {
                throw UsageError(command: command, message: "--no-cli and --tesseract contradict each other")
            }
            options.tesseract = nil
        }
        let logger = try BenchOptions.logger(invocation)
        let quiet = try invocation.value(BenchOptions.quiet, or: false)

        // Before anything loads Tesseract: re-executes this command with OMP_THREAD_LIMIT=1 (the
        // arguments have been checked, so a usage error is not printed twice).
        ensureSingleThreadedOpenMP()

        let benchmark = OCRBenchmark(options: options, logger: logger) { line in
            if !quiet { printError("bench: " + line) }
        }
        // Ctrl-C must not leave tesseract processes running: kill them, then exit.
        let signals = SignalWatcher { number in
            benchmark.killSubprocesses()
            printError("quire bench ocr: interrupted")
            _exit(128 + number)
        }
        defer { withExtendedLifetime(signals) {} }

        let report: OCRBenchReport
        do {
            report = try benchmark.run()
        } catch {
            printError("quire bench ocr: \(error)")
            return 1
        }
        printOut(try invocation.value(BenchOptions.json, or: false) ? report.json() : report.markdown())
        return 0
    }
}
