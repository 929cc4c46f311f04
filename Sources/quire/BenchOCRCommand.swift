import Foundation
import QuireBench
import QuireOCR
import QuireSupport
import QuireWire

/// `quire bench ocr DIR…`: Quire end to end against the `tesseract` CLI and the raw engine on the same
/// images, one set per folder. `BenchCommand` routes `quire bench ocr …` here with the arguments after `ocr`.
enum BenchOCRCommand {
    static let settings: [Setting<OCRBenchOptions>] = [
        Setting(\.workers, flag: "workers", .integer(1...256), help: "OCR workers, CLI processes and engine threads"),
        Setting(\.repeats, flag: "repeat", .integer(1...10_000), help: "measured passes over the images"),
        Setting(\.noScaling, flag: "no-scaling", .switch,
                help: "switch the worker's scaling policy off (for Quire and the raw engine): read every image at its own size, as the CLI does, "
                    + "to see what the policy costs or saves"),
        Setting(\.detect, flag: "detect", .switch,
                help: "also read every image through Quire without languages (the worker detects them) and report CER with and "
                    + "without them, the page language's hits, English pages' time without a hint over with it, and detection's cost"),
        Setting(flag: "top-level", .switch, help: "only the images directly in DIR, not in its subfolders (a manifest lists its own)",
                set: { options, topLevel in options.recursive = !topLevel }, get: { !$0.recursive }),
        Setting(\.tesseract, flag: "tesseract", SettingValue.string("PATH").optional(none: "off"),
                help: "the CLI to compare with (skipped with a note when it is not installed)"),
        Setting(\.requestTimeout, flag: "request-timeout-ms", .milliseconds(1...86_400_000), help: "one image not read within this fails"),
        Setting(\.phaseTimeout, flag: "phase-timeout-ms", .milliseconds(1...604_800_000),
                help: "each run stops sending images after this long and reports what it measured; a warm-up fails"),
    ]
    static let noCLI = Option("no-cli", .switch, default: false, help: "do not measure the CLI")
    static let mode = Option("mode", .word(["document", "text", "line"], noun: "mode", placeholder: "M"),
                             help: "document (psm 3), text (psm 11), line (psm 7), for every set",
                             defaultNote: "line when every DIR is named 'lines', else document")

    static let engine = Option("engine", .word(["auto", "tesseract", "scene"], noun: "engine", placeholder: "E"),
                               help: "the engine Quire and the raw engine read with (the CLI is Tesseract)", defaultNote: "auto")

    static let command = Command(
        "bench ocr", listing: ("bench ocr DIR…", "measure OCR end to end vs the tesseract CLI and the raw engine"),
        usage: "quire bench ocr DIR [DIR…] [options]",
        discussion: """
            Reads the images of each DIR (one or more; each is a set named by its last path component,
            such as documents-dev or receipts-dev) three ways, with the same languages and page
            segmentation, N at a time, and prints Markdown for the docs; progress goes to standard
            error. Build with -c release before measuring.

              Quire          a broker on tcp://127.0.0.1:* and N OCR worker threads in this process, and
                             a client with 2N requests in flight: images/s and p50/p90/p99 under that
                             load after a warm-up that loads every engine; then one request in flight
                             (p50/p90 per image, the figure for one-line crops)
              tesseract CLI  'tesseract IMG stdout -l LANG --psm P', one process per image, N at a time,
                             with OMP_THREAD_LIMIT=1 in its environment (without it Debian's OpenMP
                             build is ~6× slower and the comparison would flatter Quire)
              raw engine     N threads, each its own Recognizer, no broker and no sockets: the ceiling

            Which images: a DIR with a manifest.tsv (tab-separated, a header row; columns image or
            file, and optionally id, lang and group or kind) reads only the images it lists, each in
            its group and with its own languages (lang, Tesseract names such as fra or chi_sim+eng:
            Quire's request, the raw engine's and the CLI's -l alike); an image whose languages are
            not installed is left out with the reason. Without a manifest, every image file in DIR
            and its subfolders (files are sniffed, not judged by name), each subfolder a group, read
            with --languages.

            Everything is set up once; then each pass reads the sets one after the other, each set's
            images each way, the order of the ways turning from pass to pass. With --repeat R, passes
            during which other processes kept the machine busy (from /proc/stat) are left out of that
            set's figures, and vs CLI / vs raw are medians of the ratios within each pass.

            Accuracy, when an image has its text next to it (NAME.gt.txt; receipts also NAME.key.json
            with the date and total): CER (reading order counts), the order-independent word error,
            and the datasets' bag error, of Quire's one-in-flight replies and of the CLI's stdout, per
            set pooled, per group, and for half A and half B (an image's document is its file name up
            to the first '.'; documents sorted by name go alternately to A and B: tune on one, confirm
            on the other). With several sets a summary of all comes first. The report lists every
            image whose Quire CER is more than 1 point above the CLI's in the same run; --json has
            every image's scores as well.

            --detect reads every image once more through Quire, one in flight, with no languages in
            the request (the worker detects them), in the same passes, and adds a table per set: CER
            with the languages and without and the difference in points, how often the page's
            reported language is the manifest's first lang (as BCP-47; only images whose manifest
            names one count), the median time ratio without/with over pages read with eng alone, and
            the detection's cost per page (the result's script and language steps, median and p90).

            An image that cannot be read is reported and left out; one that fails in a run is reported
            with its file name. Every wait has a deadline. scripts/bench-images DIR makes a test set
            (DIR/pages, DIR/lines, DIR/photos, DIR/degraded; for photos, --mode text is what apps
            would ask for).
            """,
        groups: [
            OptionGroup(options: OptionGroup(settings, defaults: OCRBenchOptions(directories: [])).options + [noCLI.info, mode.info, engine.info]),
            OptionGroup("The worker's settings:", OCRConfiguration.settings, defaults: OCRConfiguration()),
            BenchOptions.group,
        ],
        run: run)

    /// The directories given (each must be one; `missing` says what one holds) and the worker's
    /// settings, with the languages of images whose manifest names none: the worker's, English where
    /// it detects (`auto`); the workers keep `auto` for `--detect`. `bench ocr` and `bench fields`.
    static func options(_ invocation: Invocation, missing: String) throws -> OCRBenchOptions {
        let directories = invocation.positionals
        guard !directories.isEmpty else { throw UsageError(command: invocation.command, message: "missing DIR, " + missing) }
        for directory in directories {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw UsageError(command: invocation.command, message: "'\(directory)' is not a directory")
            }
        }
        var options = OCRBenchOptions(directories: directories)
        options.configuration = try invocation.configured(OCRConfiguration(), OCRConfiguration.settings)
        let configured = options.configuration.defaultLanguages.filter { $0 != "auto" }
        options.languages = configured.isEmpty ? ["eng"] : configured
        return options
    }

    static func run(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        var options = try Self.options(invocation, missing: "a folder of images (scripts/bench-images makes one)")
        let directories = options.directories
        options.engine = try invocation.value(engine).flatMap { OCRRequest.Engine(rawValue: $0) }
        guard !options.languages.isEmpty, !options.languages.contains(where: \.isEmpty) else {
            throw UsageError(command: command, message: "'--languages': name at least one language, e.g. eng or eng+deu")
        }
        options = try invocation.configured(options, settings)
        options.mode = try invocation.value(mode).flatMap { OCRRequest.Mode(rawValue: $0) } ?? OCRBenchOptions.defaultMode(for: directories)
        if try invocation.value(noCLI, or: false) {
            guard !invocation.isGiven(flag: "tesseract") else {
                throw UsageError(command: command, message: "--no-cli and --tesseract contradict each other")
            }
            options.tesseract = nil
        }
        let logger = try BenchOptions.logger(invocation)
        let quiet = try invocation.value(BenchOptions.quiet, or: false)

        // Before anything loads Tesseract: re-executes this command with OMP_THREAD_LIMIT=1 (the
        // arguments have been checked, so a usage error is not printed twice), and sets the allocator
        // up as a worker process does: the workers here read as `quire up`'s.
        prepareForEngines(engineThreads: options.workers, environment: invocation.environment)

        let benchmark = OCRBenchmark(options: options, logger: logger) { line in
            if !quiet { printError("bench: " + line) }
        }
        // Ctrl-C must not leave tesseract processes running.
        let signals = interrupted(command, kill: benchmark.killSubprocesses)
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
