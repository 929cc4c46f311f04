import Foundation
import QuireBench
import QuireOCR
import QuireSupport

/// `quire bench ocr DIR`: Quire end to end against the `tesseract` CLI and the raw engine on the same
/// images. `BenchCommand` routes `quire bench ocr …` here with the arguments after `ocr`.
enum BenchOCRCommand {
    static let help = """
        Usage: quire bench ocr DIR [options]

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

        Options:
          --workers N              OCR workers, CLI processes and engine threads (default 2)
          --repeat R               measured passes over the images (default 1)
          --mode M                 document (psm 3), text (psm 11), line (psm 7); default: line when
                                   DIR is named 'lines', else document
          --languages L            e.g. eng, eng+deu, en [QUIRE_LANGUAGES] (default eng)
          --tessdata DIR           language packs [QUIRE_TESSDATA] (default /usr/share/tesseract-ocr/5/tessdata)
          --no-scaling             switch the worker's scaling policy off (for Quire and the raw
                                   engine): read every image at its own size, as the CLI does, to
                                   see what the policy costs or saves
          --top-level              only the images directly in DIR, not in its subfolders
          --tesseract PATH         the CLI to compare with (default /usr/bin/tesseract; skipped with a
                                   note when it is not installed)
          --no-cli                 do not measure the CLI
          --request-timeout-ms N   one image not read within this fails (300000)
          --phase-timeout-ms N     each run stops sending images after this long and reports what
                                   it measured; a warm-up fails (1800000)
          --json                   print a JSON object instead of the table
          --quiet                  no progress lines on standard error
          --log-level LEVEL        for the broker and workers [QUIRE_LOG_LEVEL] (warning)
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let command = "quire bench ocr"
        let arguments = try Arguments(command: command, args, valued: [
            "workers", "repeat", "mode", "languages", "tessdata", "tesseract", "request-timeout-ms", "phase-timeout-ms",
            "log-level",
        ], booleans: ["json", "quiet", "no-cli", "top-level", "no-scaling"])
        guard let directory = arguments.positionals.first else {
            throw UsageError(command: command, message: "missing DIR, the folder of images (scripts/bench-images makes one)")
        }
        guard arguments.positionals.count == 1 else {
            throw UsageError(command: command, message: "unexpected argument '\(arguments.positionals[1])'")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw UsageError(command: command, message: "'\(directory)' is not a directory")
        }
        var options = OCRBenchOptions(directory: directory)
        options.configuration = try ocrConfiguration(arguments)
        options.languages = options.configuration.defaultLanguages
        guard !options.languages.isEmpty, !options.languages.contains(where: \.isEmpty) else {
            throw UsageError(command: command, message: "'--languages': name at least one language, e.g. eng or eng+deu")
        }
        options.noScaling = arguments.flag("no-scaling")
        if let v = try arguments.integer("workers", range: 1...256) { options.workers = v }
        if let v = try arguments.integer("repeat", range: 1...10_000) { options.repeats = v }
        if let mode = arguments.string("mode") {
            guard let m = OCRRequest.Mode(rawValue: mode) else {
                throw UsageError(command: command, message: "unknown mode '\(mode)' (document, text, line)")
            }
            options.mode = m
        } else {
            options.mode = OCRBenchOptions.defaultMode(for: directory)
        }
        options.recursive = !arguments.flag("top-level")
        if arguments.flag("no-cli") {
            guard arguments.string("tesseract") == nil else {
                throw UsageError(command: command, message: "--no-cli and --tesseract contradict each other")
            }
            options.tesseract = nil
        } else if let path = arguments.string("tesseract") {
            options.tesseract = path
        }
        if let v = try arguments.integer("request-timeout-ms", range: 1...86_400_000) { options.requestTimeout = Milliseconds(Int64(v)) }
        if let v = try arguments.integer("phase-timeout-ms", range: 1...604_800_000) { options.phaseTimeout = Milliseconds(Int64(v)) }
        // Quieter than the other commands by default: a worker's 'ready' would clutter the output.
        let levelName = arguments.string("log-level") ?? ProcessInfo.processInfo.environment["QUIRE_LOG_LEVEL"] ?? "warning"
        guard let level = Logger.Level(name: levelName) else {
            throw UsageError(command: command, message: "unknown log level '\(levelName)'")
        }
        let quiet = arguments.flag("quiet")

        // Before anything loads Tesseract: re-executes this command with OMP_THREAD_LIMIT=1 (the
        // arguments have been checked, so a usage error is not printed twice).
        ensureSingleThreadedOpenMP()

        let logger = Logger(label: "quire.bench", level: level)
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
        printOut(arguments.flag("json") ? report.json() : report.markdown())
        return 0
    }
}
