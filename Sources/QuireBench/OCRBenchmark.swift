import Dispatch
import Foundation
import QuireBroker
import QuireClient
import QuireOCR
import QuireSupport
import QuireWire
import QuireWorker
import Synchronization
import Tesseract
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// What `quire bench ocr` runs, with every default in one place.
public struct OCRBenchOptions: Sendable, Equatable {
    /// The folder of images.
    public var directory: String
    /// Look into subfolders too; only the top level when false.
    public var recursive = true
    /// OCR worker threads, `tesseract` processes at a time and raw engine threads alike.
    public var workers = 2
    /// Measured passes over the images (each run: Quire under load, one in flight, CLI, raw engine).
    public var repeats = 1
    /// Languages as given (BCP-47 or Tesseract names); resolved to installed packs for all three.
    public var languages: [String] = ["eng"]
    /// The page segmentation, the same for all three.
    public var mode: OCRRequest.Mode = .document
    /// The worker's limits and language packs (also the CLI's `--tessdata-dir`).
    public var configuration = OCRConfiguration()
    /// Switch the worker's scaling policy off (Quire and the raw engine alike): every image is read at
    /// its own size, as the CLI reads it. To see what the policy costs or saves.
    public var noScaling = false {
        didSet {
            guard noScaling else { return }
            configuration.textScaling = false
            configuration.maxRecognitionPixels = .max
        }
    }
    /// The `tesseract` executable; nil skips the CLI.
    public var tesseract: String? = "/usr/bin/tesseract"
    /// One image not answered (or one `tesseract` process not finished) within this fails that image.
    public var requestTimeout: Milliseconds = 300_000
    /// Every phase stops sending new images after this long and reports what it measured; the
    /// warm-ups fail past it.
    public var phaseTimeout: Milliseconds = 1_800_000

    public init(directory: String) { self.directory = directory }

    /// `line` for a folder named `lines`, else `document`.
    public static func defaultMode(for directory: String) -> OCRRequest.Mode {
        URL(fileURLWithPath: directory).standardizedFileURL.lastPathComponent == "lines" ? .line : .document
    }

    /// Tesseract's `--psm` for a mode, as the worker maps it.
    public static func psm(for mode: OCRRequest.Mode) -> Int {
        switch mode {
        case .document: 3
        case .text: 11
        case .line: 7
        }
    }
}

/// One way of reading the images: Quire, the `tesseract` CLI or the raw engine.
public struct OCRBenchRow: Sendable, Codable, Equatable {
    public var name: String
    /// What ran, in a few words (workers, in flight).
    public var setup: String
    /// Images read successfully in the measured run (all passes).
    public var images: Int
    /// Images that failed in the measured run (named in the report's failures).
    public var failures: Int
    public var seconds: Double
    public var imagesPerSecond: Double
    /// CPU time of this process and its children over wall time while measuring: about `workers`
    /// when nothing else competes for the cores (and there are that many).
    public var cpuCores: Double
    /// CPU time of everything else on the machine (and time the hypervisor stole) over wall time
    /// while measuring: near 0 on a quiet machine.
    public var otherCores: Double
    /// Images/s over the CLI's, when the CLI ran.
    public var vsCLI: Double?
    /// Images/s as a percentage of the raw engine's.
    public var vsRawPercent: Double?
    /// Quire: the round trip with 2 per worker in flight. CLI: one process's wall time; raw: one
    /// recognition; both with `workers` at a time and no queue.
    public var p50Ms: Double
    public var p90Ms: Double
    public var p99Ms: Double
    /// Quire only: the round trip with one request in flight.
    public var oneInFlightP50Ms: Double?
    public var oneInFlightP90Ms: Double?
    public var oneInFlightRequests: Int?
    /// Images for which this way found no text at all (Quire: in the one-in-flight run).
    public var emptyResults: Int
    /// When the images have their text next to them (NAME.gt.txt): the share of those words this way
    /// found, as a bag of words, averaged over the images. Speed at no accuracy is no speed.
    public var wordsFoundPercent: Double?
}

/// Where Quire's time goes with one request in flight (medians over the images).
public struct OCRBenchBreakdown: Sendable, Codable, Equatable {
    /// The round trip the client saw.
    public var endToEndMs: Double
    /// The worker's own `metadata.timings`: decoding and preparing the image, recognising it.
    public var decodeMs: Double
    public var recognizeMs: Double
    /// End to end minus decode and recognise: result building, JSON encoding, request parsing,
    /// the broker and two loopback hops, the client.
    public var restMs: Double
    /// Encoding one result to JSON as the worker does (sorted keys), measured apart on this thread.
    public var jsonEncodeMs: Double?
    /// The reply's size.
    public var replyBytes: Int
}

/// A file that was left out, or an image that failed in one run.
public struct OCRBenchProblem: Sendable, Codable, Equatable {
    public var file: String
    /// `scan` (left out before measuring), `quire`, `quire-latency`, `cli`, `raw`.
    public var phase: String
    public var message: String
}

/// Everything `quire bench ocr` measured.
public struct OCRBenchReport: Sendable, Codable, Equatable {
    public var machine: MachineInfo
    public var directory: String
    /// Images measured (after leaving out the ones that cannot be read) and their total size.
    public var images: Int
    public var imageBytes: Int
    /// Formats and the largest size among them, such as `png` / `2480×3508`.
    public var formats: [String]
    public var largestPixels: String
    public var mode: String
    public var psm: Int
    /// Tesseract packs, `+`-joined.
    public var languages: String
    public var workers: Int
    public var inFlight: Int
    public var repeats: Int
    public var tesseractVersion: String
    /// The CLI's version line, or why it did not run.
    public var cli: String
    /// OMP_THREAD_LIMIT in this process (the in-process engines); the CLI always gets 1.
    public var ompThreadLimit: String
    public var rows: [OCRBenchRow]
    public var breakdown: OCRBenchBreakdown?
    /// Passes measured; those during which other processes were busy (1-based); passes the figures
    /// come from (the quiet ones, or all when none was).
    public var passes: Int
    public var noisyPasses: [Int]
    public var passesUsed: Int
    /// The factors the worker's scaling policy read the images at (Quire and the raw engine read the
    /// same way; the CLI reads every image at its own size): smallest, median, largest; from the
    /// raw engine's results.
    public var recognitionScales: [Double]
    /// `--no-scaling`: the policy was switched off, every image read at its own size.
    public var scalingDisabled: Bool
    /// Accuracy against NAME.gt.txt (and NAME.key.json) of Quire (its one-in-flight replies) and the
    /// CLI: all images first ("all"), then per group when there is more than one.
    public var accuracy: [OCRAccuracyRow] = []
    /// Files left out before measuring and images that failed in a run (at most 50).
    public var problems: [OCRBenchProblem]
    /// Files in the folder that are not images (skipped without a word).
    public var nonImageFiles: Int
    /// 1-minute load average before and after: other processes compete for the same cores.
    public var loadAverageBefore: Double
    public var loadAverageAfter: Double

    /// A Markdown table with the setup and the machine underneath, ready for the README.
    public func markdown() -> String {
        var lines = [
            "| \(images) image\(images == 1 ? "" : "s"), \(workers) worker\(workers == 1 ? "" : "s") | images/s | vs CLI | vs raw "
                + "| p50 ms | p90 ms | p99 ms | p50 ms, 1 in flight | p90 ms, 1 in flight | words found | cores used | others' cores |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in rows {
            let vsCLI: String = r.vsCLI.map { twoDecimals($0) + "×" } ?? "–"
            let vsRaw: String = r.vsRawPercent.map { oneDecimal($0) + " %" } ?? "–"
            let single50: String = r.oneInFlightP50Ms.map { milliseconds($0) } ?? "–"
            let single90: String = r.oneInFlightP90Ms.map { milliseconds($0) } ?? "–"
            var cells: [String] = [r.name + " (" + r.setup + ")", significant(r.imagesPerSecond), vsCLI, vsRaw]
            cells += [milliseconds(r.p50Ms), milliseconds(r.p90Ms), milliseconds(r.p99Ms), single50, single90]
            var found = r.wordsFoundPercent.map { oneDecimal($0) + " %" } ?? "–"
            if r.emptyResults > 0 { found += " (\(r.emptyResults) empty)" }
            cells += [found, twoDecimals(r.cpuCores), twoDecimals(r.otherCores)]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        if !accuracy.isEmpty {
            lines.append("")
            lines.append("| group | images | CER Quire | CER CLI | word error Quire | word error CLI | date found Quire / CLI | total found Quire / CLI |")
            lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
            func percent(_ v: Double?) -> String { v.map { oneDecimal($0) + " %" } ?? "–" }
            for row in accuracy {
                let n = row.quire?.images ?? row.cli?.images ?? 0
                lines.append("| \(row.group) | \(n) | \(percent(row.quire?.cerPercent)) | \(percent(row.cli?.cerPercent)) | "
                    + "\(percent(row.quire?.wordErrorPercent)) | \(percent(row.cli?.wordErrorPercent)) | "
                    + "\(percent(row.quire?.datePercent)) / \(percent(row.cli?.datePercent)) | "
                    + "\(percent(row.quire?.totalPercent)) / \(percent(row.cli?.totalPercent)) |")
            }
        }
        lines.append("")
        let megabytes = Double(imageBytes) / 1_000_000
        lines.append("Images: \(images) (\(formats.joined(separator: ", ")), up to \(largestPixels) px, "
            + "\(oneDecimal(megabytes)) MB) from \(directory); mode \(mode) (psm \(psm)), languages \(languages), Tesseract \(tesseractVersion).")
        var passLine = "\(passes) measured pass\(passes == 1 ? "" : "es") after a warm-up, each reading every image each way, "
            + "in an order that turns from pass to pass"
        if !noisyPasses.isEmpty {
            passLine += "; other processes were busy during pass\(noisyPasses.count == 1 ? "" : "es") "
                + noisyPasses.map(String.init).joined(separator: ", ")
                + (passesUsed < passes ? ", left out: the figures are from the other \(passesUsed)" : ", but so during all: the figures are not to be trusted")
        }
        if passes > 1 {
            passLine += ". vs CLI and vs raw are medians over the passes of the ratio within each pass"
        }
        lines.append(passLine + ".")
        if scalingDisabled {
            lines.append("Scaling: off (--no-scaling): Quire and the raw engine read every image at its own size, as the CLI does.")
        } else if recognitionScales.count == 3, recognitionScales.contains(where: { abs($0 - 1) > 0.005 }) {
            let range = recognitionScales[0] == recognitionScales[2] ? "×\(twoDecimals(recognitionScales[0]))"
                : "×\(twoDecimals(recognitionScales[0]))–×\(twoDecimals(recognitionScales[2])) (median ×\(twoDecimals(recognitionScales[1])))"
            lines.append("Scaling: the worker's policy had Quire and the raw engine read these images at \(range) of their size; "
                + "the CLI reads them as they are.")
        }
        if let quire = rows.first(where: { $0.name == "Quire" }) {
            lines.append("Quire: a broker on tcp://127.0.0.1:* and \(workers) OCR worker threads in this process (one ZeroMQ "
                + "context, as `quire up`), a client with its own context and \(inFlight) requests in flight over TCP "
                + "loopback; p50/p90/p99 are round trips under that load (about 2 per worker queued or running), then "
                + "\(quire.oneInFlightRequests ?? 0) requests one at a time. The reply is the full JSON result.")
        }
        if let b = breakdown {
            var line = "One in flight, medians: end to end \(milliseconds(b.endToEndMs)) ms = decode \(milliseconds(b.decodeMs)) "
                + "+ recognise \(milliseconds(b.recognizeMs)) + the rest \(milliseconds(b.restMs)) ms (result building, "
                + "JSON encoding, broker, loopback, client); reply \(groupedThousands(Double(b.replyBytes))) bytes"
            if let encode = b.jsonEncodeMs { line += ", of which encoding takes \(milliseconds(encode)) ms" }
            lines.append(line + ".")
        }
        lines.append("tesseract CLI: \(cli)")
        if rows.contains(where: { $0.name == "raw engine" }) {
            lines.append("Raw engine: \(workers) thread\(workers == 1 ? "" : "s"), each its own `Recognizer` (decode, scale, "
                + "recognise, build the result), no broker, no sockets, no JSON: the ceiling. CLI and raw p50/p90/p99 are "
                + "one image's time with \(workers) at a time.")
        }
        let failed = problems.filter { $0.phase != "scan" }
        let skipped = problems.filter { $0.phase == "scan" }
        if !skipped.isEmpty {
            lines.append("Left out (cannot be read): " + skipped.map { "\($0.file): \($0.message)" }.joined(separator: "; ") + ".")
        }
        if !failed.isEmpty {
            lines.append("Failed: " + failed.prefix(10).map { "\($0.file) (\($0.phase)): \($0.message)" }.joined(separator: "; ")
                + (failed.count > 10 ? "; …" : "") + ".")
        }
        lines.append("")
        if rows.contains(where: { $0.wordsFoundPercent != nil || $0.emptyResults > 0 }) {
            lines.append("Words found: the share of the words of each image's NAME.gt.txt found in the text read (as a bag of "
                + "words, averaged over the images); (n empty): images read as no text at all. Images/s at no accuracy mean little.")
        }
        if !accuracy.isEmpty {
            lines.append("Accuracy (means over the images, lower is better for the errors): CER is the edit distance to NAME.gt.txt "
                + "with white space folded, over its length (reading order counts); word error is order-independent: the "
                + "words as case-folded bags, max(missing, extra) over the truth's words; date and total found: NAME.key.json's "
                + "values appear in the text (white space ignored, case-folded). Quire from its one-in-flight replies, the CLI "
                + "from its stdout.")
        }
        lines.append("Cores used: CPU time of this process (and of the tesseract processes) over wall time while "
            + "measuring; others' cores: the rest of the machine's busy (and stolen) CPU time meanwhile, from /proc/stat. "
            + "Figures taken while others used a sizeable share of the \(machine.processors) processors are not to be trusted.")
        lines.append("Machine: \(machine.summary); OMP_THREAD_LIMIT=\(ompThreadLimit) in process; load average "
            + "\(twoDecimals(loadAverageBefore)) before, \(twoDecimals(loadAverageAfter)) after.")
        return lines.joined(separator: "\n")
    }

    /// The report as one JSON object (snake_case keys).
    public func json() -> String { benchJSON(self) }


    /// Three significant digits: 0.712, 7.12, 71.2, 712, 7,123.
    private func significant(_ value: Double) -> String {
        if value >= 1_000 { return groupedThousands(value) }
        if value >= 100 { return String(Int(value.rounded())) }
        if value >= 10 { return oneDecimal(value) }
        if value >= 1 { return twoDecimals(value) }
        return String(format: "%.3f", value)
    }

    private func milliseconds(_ value: Double) -> String {
        value < 10 ? oneDecimal(value) : groupedThousands(value)
    }

    private func oneDecimal(_ value: Double) -> String { String(format: "%.1f", value) }
    private func twoDecimals(_ value: Double) -> String { String(format: "%.2f", value) }
}

/// `quire bench ocr DIR`: the same images read three ways, `workers` at a time —
/// 1. Quire end to end: an in-process broker, OCR worker threads and a client over TCP loopback,
///    with 2 requests per worker in flight (images/s and latency under load), then one in flight;
/// 2. the `tesseract` CLI, one process per image, with `OMP_THREAD_LIMIT=1`;
/// 3. the raw engine: a `Recognizer` per thread, no broker, no sockets — the ceiling.
///
/// ``run()`` blocks the calling thread (not a pool thread).
public final class OCRBenchmark: Sendable {
    public let options: OCRBenchOptions
    private let logger: Logger
    private let progress: @Sendable (String) -> Void
    private let cliProcesses = PIDRegistry()
    private let manifestCache = Locked<[String: String]?>(nil)

    public init(options: OCRBenchOptions, logger: Logger, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.options = options
        self.logger = logger
        self.progress = progress
    }

    /// Kills running `tesseract` processes at once, from any thread (for a signal handler; exit afterwards).
    public func killSubprocesses() {
        cliProcesses.killAll()
    }

    struct BenchImage: Sendable {
        let path: String
        /// The path relative to the folder, for messages.
        let name: String
        let bytes: [UInt8]
        /// The words of NAME.gt.txt (or FILE.gt.txt) next to the image, normalised, when there is one.
        let truth: [String]?
        /// NAME.gt.txt as it is.
        var truthText: String? = nil
        /// NAME.key.json's string members (`date`, `total`, …), for receipts.
        var keyFields: [String: String] = [:]
        /// The subfolder it is in, or its group in the folder's manifest.tsv, or "" for none.
        var group: String = ""
        let format: ImageFormat
        let width: Int
        let height: Int
    }

    /// Per-image failures collected across threads.
    final class Problems: Sendable {
        private let list = Locked<[OCRBenchProblem]>([])
        func add(_ file: String, _ phase: String, _ message: String) {
            list.withLock { $0.append(OCRBenchProblem(file: file, phase: phase, message: message)) }
        }
        var all: [OCRBenchProblem] { list.withLock { $0 } }
        func count(_ phase: String) -> Int { list.withLock { $0.filter { $0.phase == phase }.count } }
    }

    /// Runs every measurement and tears everything down, also when one fails.
    ///
    /// Quire, the CLI and the raw engine are set up and warmed up first; then each pass reads every
    /// image once each way (Quire under load, Quire one in flight, CLI, raw), the order turning from
    /// pass to pass, so that whatever else runs on the machine meanwhile falls on all of them alike.
    public func run() throws -> OCRBenchReport {
        let machine = MachineInfo.current()
        let loadBefore = Self.loadAverage()
        let problems = Problems()
        let installed = Set(Engine.installedLanguages(dataPath: options.configuration.dataPath))
        guard !installed.isEmpty else {
            throw BenchError("no Tesseract language packs in \(options.configuration.dataPath) (--tessdata, QUIRE_TESSDATA)")
        }
        var packs: [String] = []
        for name in options.languages {
            guard let pack = Languages.resolve(name, installed: installed), pack != "osd" else {
                throw BenchError("no installed language pack for '\(name)' in \(options.configuration.dataPath); installed: "
                    + installed.filter { $0 != "osd" }.sorted().joined(separator: ", "))
            }
            if !packs.contains(pack) { packs.append(pack) }
        }
        let (images, nonImages) = try scan(problems: problems)
        guard !images.isEmpty else {
            throw BenchError("no readable images in \(options.directory)"
                + (problems.all.isEmpty ? "" : ": " + problems.all.map { "\($0.file): \($0.message)" }.joined(separator: "; ")))
        }
        let psm = OCRBenchOptions.psm(for: options.mode)
        progress("\(images.count) images (\(nonImages) other files skipped), mode \(options.mode.rawValue) "
            + "(psm \(psm)), languages \(packs.joined(separator: "+")), \(options.workers) workers, \(options.repeats) pass\(options.repeats == 1 ? "" : "es")")
        let smallest = images.min { $0.width * $0.height < $1.width * $1.height }!

        // Set everything up.
        let quire = QuireRig(logger: logger)
        defer { quire.tearDown() }
        try startQuire(quire, frame: try requestFrame(languages: packs), smallest: smallest)
        let raw = RawPool(configuration: options.configuration, request: OCRRequest(languages: packs, mode: options.mode),
                          images: images, problems: problems)
        defer { raw.stop(timeout: options.requestTimeout) }
        progress("raw engine: warm-up of \(options.workers) recognisers with \(smallest.name)")
        try raw.start(threads: options.workers, warmUp: smallest, timeout: options.phaseTimeout)
        var cli: CLIRunner?
        var cliLine = "not measured (--no-cli)."
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("quire-bench-ocr-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        if let tesseract = options.tesseract {
            do {
                let version = try cliVersion(tesseract)
                cli = try startCLI(tesseract, languages: packs, smallest: smallest, scratch: scratch)
                cliLine = "`\(URL(fileURLWithPath: tesseract).lastPathComponent) IMG stdout -l \(packs.joined(separator: "+")) --psm \(psm) "
                    + "--tessdata-dir \(options.configuration.dataPath)` (\(version)), one process per image, \(options.workers) "
                    + "at a time, with OMP_THREAD_LIMIT=1 in its environment (without it Debian's OpenMP build is about 6× "
                    + "slower and the comparison would flatter Quire)."
            } catch let error as CLIUnavailable {
                cliLine = "not measured: \(error.message)"
                progress("tesseract CLI: skipped: \(error.message)")
            }
        }

        // Measure, pass by pass.
        var passes: [PassResult] = []
        for pass in 0..<options.repeats {
            let order = Step.allCases.indices.map { Step.allCases[($0 + pass) % Step.allCases.count] }
            let label = options.repeats > 1 ? "pass \(pass + 1)/\(options.repeats): " : ""
            var result = PassResult()
            for step in order {
                let tally: Tally
                let name: String
                switch step {
                case .quireLoad:
                    name = "Quire, \(quire.inFlight) in flight"
                    tally = try quirePass(quire, images: images, problems: problems)
                case .quireOne:
                    name = "Quire, one in flight"
                    (tally, result.replies) = try quireSequentialPass(quire, images: images, problems: problems)
                case .cli:
                    guard let cli else { continue }
                    name = "tesseract CLI, \(options.workers) at a time"
                    tally = try cliPass(cli, images: images, scratch: scratch, problems: problems)
                case .raw:
                    name = "raw engine, \(options.workers) threads"
                    tally = try raw.pass(deadline: options.phaseTimeout,
                                         hardLimit: Milliseconds(options.phaseTimeout.value + options.requestTimeout.value + 10_000))
                }
                result.tallies[step] = tally
                let p50 = LatencySummary(nanoseconds: tally.samples).p50 / 1_000
                progress(label + name + ": \(tally.samples.count) images in " + String(format: "%.2f s, %.3g/s, p50 %.1f ms", tally.seconds, tally.rate, p50)
                    + String(format: ", %.2f cores, others %.2f", tally.cpuSeconds / max(tally.seconds, 1e-9), tally.otherCPUSeconds / max(tally.seconds, 1e-9))
                    + (tally.perWorker.map { ", per worker " + $0.map(String.init).joined(separator: "/") } ?? ""))
            }
            // Other processes busy on a sizeable share of the processors: the pass is not comparable.
            let limit = 0.125 * Double(machine.processors)
            result.noisy = result.tallies.values.contains { $0.otherCPUSeconds / max($0.seconds, 1e-9) > limit }
            if result.noisy {
                progress(label + String(format: "other processes used more than %.2f cores meanwhile; ", limit)
                    + "the pass is left out unless all are like it")
            }
            passes.append(result)
        }
        let clean = passes.filter { !$0.noisy }
        let used = clean.isEmpty ? passes : clean

        // Report.
        func total(_ step: Step) -> Tally {
            var sum = Tally()
            for pass in used { if let tally = pass.tallies[step] { sum.add(tally) } }
            return sum
        }
        /// The median over the passes of one step's images/s over another's in the same pass.
        func medianRatio(_ step: Step, over base: Step) -> Double? {
            let ratios = used.compactMap { pass -> Double? in
                guard let a = pass.tallies[step], let b = pass.tallies[base], b.rate > 0 else { return nil }
                return a.rate / b.rate
            }.sorted()
            guard !ratios.isEmpty else { return nil }
            return ratios.count % 2 == 1 ? ratios[ratios.count / 2] : (ratios[ratios.count / 2 - 1] + ratios[ratios.count / 2]) / 2
        }
        let workerWord = options.workers == 1 ? "" : "s"
        var rows: [(Step, OCRBenchRow)] = []
        var quireRow = total(.quireLoad).row(name: "Quire", setup: "broker + \(options.workers) worker\(workerWord), \(quire.inFlight) in flight",
                                             failures: problems.count("quire"), images: images)
        let sequential = total(.quireOne)
        let single = LatencySummary(nanoseconds: sequential.samples)
        quireRow.oneInFlightP50Ms = round2(single.p50 / 1_000)
        quireRow.oneInFlightP90Ms = round2(single.p90 / 1_000)
        quireRow.oneInFlightRequests = sequential.samples.count
        let fromReplies = sequential.row(name: "", setup: "", failures: 0, images: images)
        quireRow.emptyResults = fromReplies.emptyResults
        quireRow.wordsFoundPercent = fromReplies.wordsFoundPercent
        rows.append((.quireLoad, quireRow))
        if cli != nil {
            rows.append((.cli, total(.cli).row(name: "tesseract CLI", setup: "\(options.workers) process\(options.workers == 1 ? "" : "es") at a time",
                                               failures: problems.count("cli"), images: images)))
        }
        rows.append((.raw, total(.raw).row(name: "raw engine", setup: "\(options.workers) thread\(workerWord), a Recognizer each",
                                           failures: problems.count("raw"), images: images)))
        for index in rows.indices {
            let step = rows[index].0
            if cli != nil, let ratio = step == .cli ? 1 : medianRatio(step, over: .cli) {
                rows[index].1.vsCLI = (ratio * 100).rounded() / 100
            }
            if let ratio = step == .raw ? 1 : medianRatio(step, over: .raw) {
                rows[index].1.vsRawPercent = (ratio * 1_000).rounded() / 10
            }
        }
        let replies = used.flatMap(\.replies)
        var breakdown = Self.breakdown(replies)
        breakdown?.jsonEncodeMs = raw.medianEncodeMilliseconds()

        // Accuracy: Quire's one-in-flight replies (the full result's text) and the CLI's stdout.
        let quireTexts = total(.quireOne).texts, cliTexts = total(.cli).texts
        var groups: [String] = []
        for image in images where !groups.contains(image.group) { groups.append(image.group) }
        var accuracy: [OCRAccuracyRow] = []
        for group in (groups.count > 1 ? ["all"] : []) + groups {
            let indices = images.indices.filter { group == "all" || images[$0].group == group }
            let quireScore = AccuracyScore.score(quireTexts, images: images, indices: indices)
            let cliScore = cli == nil ? nil : AccuracyScore.score(cliTexts, images: images, indices: indices)
            if quireScore != nil || cliScore != nil {
                accuracy.append(OCRAccuracyRow(group: group.isEmpty ? "all" : group, quire: quireScore, cli: cliScore))
            }
        }

        let largest = images.max { $0.width * $0.height < $1.width * $1.height }!
        var formats: [String] = []
        for image in images where !formats.contains(image.format.rawValue) { formats.append(image.format.rawValue) }
        let all = problems.all
        return OCRBenchReport(
            machine: machine, directory: options.directory, images: images.count,
            imageBytes: images.reduce(0) { $0 + $1.bytes.count }, formats: formats,
            largestPixels: "\(largest.width)×\(largest.height)", mode: options.mode.rawValue,
            psm: psm, languages: packs.joined(separator: "+"), workers: options.workers,
            inFlight: quire.inFlight, repeats: options.repeats, tesseractVersion: Engine.version, cli: cliLine,
            ompThreadLimit: ProcessInfo.processInfo.environment["OMP_THREAD_LIMIT"] ?? "unset",
            rows: rows.map(\.1), breakdown: breakdown,
            passes: passes.count, noisyPasses: passes.indices.filter { passes[$0].noisy }.map { $0 + 1 },
            passesUsed: used.count, recognitionScales: raw.recognitionScales(), scalingDisabled: options.noScaling,
            accuracy: accuracy, problems: all.filter { $0.phase == "scan" } + all.filter { $0.phase != "scan" }.prefix(50),
            nonImageFiles: nonImages, loadAverageBefore: loadBefore, loadAverageAfter: Self.loadAverage())
    }

    enum Step: CaseIterable { case quireLoad, quireOne, cli, raw }

    /// One pass: each way's tally, and whether other processes used the machine meanwhile.
    struct PassResult {
        var tallies: [Step: Tally] = [:]
        var replies: [Reply] = []
        var noisy = false
    }

    /// One method's passes added up.
    struct Tally {
        /// Per image, nanoseconds.
        var samples: [UInt64] = []
        var seconds = 0.0
        /// CPU time of this process and its children (the CLI) meanwhile.
        var cpuSeconds = 0.0
        /// CPU time of everything else on the machine meanwhile (including time the hypervisor stole).
        var otherCPUSeconds = 0.0
        /// Quire: images each worker read in this pass.
        var perWorker: [Int]?
        /// The text read from each image (by index), where this way returns it.
        var texts: [Int: String] = [:]

        init(samples: [UInt64] = [], seconds: Double = 0, cpu: CPUSnapshot.Usage? = nil) {
            self.samples = samples
            self.seconds = seconds
            cpuSeconds = cpu?.own ?? 0
            otherCPUSeconds = cpu?.others ?? 0
        }

        var rate: Double { Double(samples.count) / max(seconds, 1e-9) }

        mutating func add(_ other: Tally) {
            samples += other.samples
            seconds += other.seconds
            cpuSeconds += other.cpuSeconds
            otherCPUSeconds += other.otherCPUSeconds
            texts.merge(other.texts) { first, _ in first }
        }

        func row(name: String, setup: String, failures: Int, images: [BenchImage]) -> OCRBenchRow {
            let summary = LatencySummary(nanoseconds: samples)
            let wall = max(seconds, 1e-9)
            let recalls = texts.compactMap { index, text in images[index].truth.map { OCRBenchmark.recall(truth: $0, text: text) } }
            return OCRBenchRow(
                name: name, setup: setup, images: samples.count, failures: failures, seconds: round3(seconds),
                imagesPerSecond: round3(Double(samples.count) / wall), cpuCores: round2(cpuSeconds / wall),
                otherCores: round2(otherCPUSeconds / wall),
                vsCLI: nil, vsRawPercent: nil,
                p50Ms: round2(summary.p50 / 1_000), p90Ms: round2(summary.p90 / 1_000), p99Ms: round2(summary.p99 / 1_000),
                oneInFlightP50Ms: nil, oneInFlightP90Ms: nil, oneInFlightRequests: nil,
                emptyResults: texts.values.filter { $0.allSatisfy(\.isWhitespace) }.count,
                wordsFoundPercent: recalls.isEmpty ? nil : round2(recalls.reduce(0, +) / Double(recalls.count) * 100))
        }
    }

    /// CPU time so far: this process with its waited-for children, and the whole machine.
    struct CPUSnapshot {
        /// This process and its waited-for children, seconds.
        let own: Double
        /// All processors busy (or stolen by the hypervisor) since boot, seconds, from /proc/stat.
        let machine: Double

        struct Usage {
            let own: Double
            let others: Double
        }

        static func now() -> CPUSnapshot {
            var mine = rusage(), children = rusage()
            _ = getrusage(RUSAGE_SELF.rawValue, &mine)
            _ = getrusage(RUSAGE_CHILDREN.rawValue, &children)
            func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
            let own = seconds(mine.ru_utime) + seconds(mine.ru_stime) + seconds(children.ru_utime) + seconds(children.ru_stime)
            return CPUSnapshot(own: own, machine: machineBusy())
        }

        /// What was used from this snapshot until `later`.
        func until(_ later: CPUSnapshot) -> Usage {
            let own = later.own - self.own
            return Usage(own: own, others: max(0, later.machine - machine - own))
        }

        /// user + nice + system + irq + softirq + steal of the `cpu` line, in seconds.
        private static func machineBusy() -> Double {
            guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
                  let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return 0 }
            let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
            guard ticks.count >= 8 else { return 0 }
            let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]
            return busy / Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
        }
    }

    // MARK: - The images

    /// Every file in the folder that sniffs as an image and decodes, sorted by path. Files that are no
    /// image are counted; images that cannot be read (or that the worker would refuse) are reported
    /// in `problems` and left out, so that all three runs read the same set.
    func scan(problems: Problems) throws -> (images: [BenchImage], nonImages: Int) {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: options.directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BenchError("\(options.directory): not a directory")
        }
        let root = URL(fileURLWithPath: options.directory).standardizedFileURL.path
        var relative: [String] = []
        if options.recursive {
            guard let walker = fm.enumerator(atPath: root) else { throw BenchError("\(root): cannot list the directory") }
            while let entry = walker.nextObject() as? String {
                if entry.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
                relative.append(entry)
            }
        } else {
            do {
                relative = try fm.contentsOfDirectory(atPath: root).filter { !$0.hasPrefix(".") }
            } catch {
                throw BenchError("\(root): cannot list the directory: \(error.localizedDescription)")
            }
        }
        relative.sort()
        var images: [BenchImage] = []
        var nonImages = 0
        for name in relative {
            let path = root + "/" + name
            var directory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &directory), !directory.boolValue else { continue }
            guard let handle = FileHandle(forReadingAtPath: path) else {
                problems.add(name, "scan", "cannot open the file")
                continue
            }
            let head = ((try? handle.read(upToCount: 16)) ?? nil).map { Array($0) } ?? []
            try? handle.close()
            // Padded: the BMP test wants more than 26 bytes, and a tiny file is no image anyway.
            guard ImageFormat.sniff(head + [UInt8](repeating: 0, count: 32)) != nil else {
                nonImages += 1
                continue
            }
            guard let data = fm.contents(atPath: path) else {
                problems.add(name, "scan", "cannot read the file")
                continue
            }
            let bytes = Array(data)
            guard let format = ImageFormat.sniff(bytes) else { nonImages += 1; continue }
            guard bytes.count <= options.configuration.maxImageBytes else {
                problems.add(name, "scan", "\(bytes.count) bytes; the worker's limit is \(options.configuration.maxImageBytes)")
                continue
            }
            do {
                let header = try Image.header(bytes)
                guard header.width * header.height <= options.configuration.maxPixels else {
                    problems.add(name, "scan", "\(header.width)×\(header.height) pixels; the worker's limit is \(options.configuration.maxPixels)")
                    continue
                }
                // Decode it once: a damaged file is reported here, not as a failure in one run only.
                _ = try Image.decode(bytes, format: header.format, page: 0, jpegReduction: header.format == .jpeg ? 8 : 1)
                let stem = (path as NSString).deletingPathExtension
                let truthText = [stem + ".gt.txt", path + ".gt.txt"].lazy
                    .compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }.first
                var image = BenchImage(path: path, name: name, bytes: bytes, truth: truthText.map(Self.words), format: format,
                                       width: header.width, height: header.height)
                image.truthText = truthText
                if let data = fm.contents(atPath: stem + ".key.json"),
                   let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
                    image.keyFields = object.compactMapValues { $0 as? String }.filter { !$0.value.isEmpty }
                }
                let folder = (name as NSString).deletingLastPathComponent
                image.group = folder.isEmpty ? (manifestGroups(root)[(name as NSString).lastPathComponent] ?? "") : folder
                images.append(image)
            } catch {
                problems.add(name, "scan", String(describing: error))
            }
        }
        for problem in problems.all { progress("left out \(problem.file): \(problem.message)") }
        return (images, nonImages)
    }

    /// The `group` column of DIR/manifest.tsv by image file name (a header row names the columns
    /// `image` and `group`), empty when there is none.
    func manifestGroups(_ root: String) -> [String: String] {
        if let cached = manifestCache.withLock({ $0 }) { return cached }
        var groups: [String: String] = [:]
        if let text = try? String(contentsOfFile: root + "/manifest.tsv", encoding: .utf8) {
            let rows = text.split(whereSeparator: \.isNewline).map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
            if let header = rows.first, let imageColumn = header.firstIndex(of: "image"), let groupColumn = header.firstIndex(of: "group") {
                for row in rows.dropFirst() where row.count > max(imageColumn, groupColumn) { groups[row[imageColumn]] = row[groupColumn] }
            }
        }
        manifestCache.withLock { $0 = groups }
        return groups
    }

    /// Lower-case words of letters and digits: what "found the word" compares.
    static func words(_ text: String) -> [String] {
        text.lowercased().split(whereSeparator: \.isWhitespace)
            .map { String($0.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(Character.init)) }
            .filter { !$0.isEmpty }
    }

    /// The share of `truth`'s words (with repeats) that `text` has, 0…1.
    static func recall(truth: [String], text: String) -> Double {
        guard !truth.isEmpty else { return 1 }
        var found: [String: Int] = [:]
        for word in words(text) { found[word, default: 0] += 1 }
        var hits = 0
        for word in truth where (found[word] ?? 0) > 0 {
            found[word]! -= 1
            hits += 1
        }
        return Double(hits) / Double(truth.count)
    }

    /// The request's JSON frame: the languages and the mode, the rest as the worker defaults it.
    private func requestFrame(languages: [String]) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(OCRRequest(languages: languages, mode: options.mode)))
    }

    // MARK: - Quire

    /// One reply with one request in flight, for the breakdown.
    struct Reply: Sendable {
        let image: Int
        let nanoseconds: UInt64
        let bytes: Int
        let summary: ReplySummary?
    }

    /// The broker, the OCR workers and the client: broker and workers share one context, as in
    /// `quire up`; the client has its own, as a separate process would. Then a warm-up until every
    /// worker has loaded its engine.
    private func startQuire(_ rig: QuireRig, frame: [UInt8], smallest: BenchImage) throws {
        rig.frame = frame
        rig.inFlight = 2 * options.workers
        let serverContext = try Context()
        rig.contexts.append(serverContext)
        let brokerConfiguration = BrokerConfiguration(bind: "tcp://127.0.0.1:*", requestTimeout: options.requestTimeout)
        let broker = try Broker(configuration: brokerConfiguration, context: serverContext, logger: logger)
        let bound = DispatchSemaphore(value: 0)
        progress("Quire: starting the broker and \(options.workers) OCR workers")
        let brokerThread = BenchThread(name: "bench-broker") { try broker.run(onBound: { _ in bound.signal() }) }
        rig.stopBroker = { [logger] in
            broker.stop()
            if brokerThread.join(timeout: 5_000) { return true }
            logger.warning("the broker did not stop within 5 s")
            return false
        }
        let bindDeadline = Instant.now() + Milliseconds(10_000)
        while bound.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
            if brokerThread.hasFinished {
                throw BenchError("the Quire broker failed to start: \(brokerThread.error.map { String(describing: $0) } ?? "it returned")")
            }
            if Instant.now() >= bindDeadline { throw BenchError("the Quire broker did not bind within 10 s") }
        }
        guard let endpoint = broker.boundEndpoint else { throw BenchError("the Quire broker has no bound endpoint") }

        var workerConfiguration = WorkerConfiguration(broker: endpoint)
        workerConfiguration.heartbeatInterval = brokerConfiguration.heartbeatInterval
        workerConfiguration.heartbeatLiveness = brokerConfiguration.heartbeatLiveness
        let service = OCRService.make(configuration: options.configuration)
        for index in 0..<options.workers {
            let worker = try Worker(configuration: workerConfiguration, service: service, context: serverContext, logger: logger)
            rig.workers.append(worker)
            rig.workerThreads.append(BenchThread(name: "bench-ocr-worker-\(index)") { try worker.run() })
        }
        let clientContext = try Context()
        rig.contexts.append(clientContext)
        let client = try QuireClient(
            configuration: ClientConfiguration(broker: endpoint, timeout: options.requestTimeout, retries: 0, maxInFlight: rig.inFlight),
            context: clientContext)
        rig.clients.append(client)

        let workers = rig.workers
        let threads = rig.workerThreads
        let warmBody = [frame, smallest.bytes]
        let warmName = smallest.name
        let inFlight = rig.inFlight
        progress("Quire: warm-up with \(smallest.name) until all \(workers.count) workers have loaded their engines")
        try awaitBlocking("Quire: the warm-up", timeout: options.phaseTimeout) {
            repeat {
                if let failed = threads.first(where: { $0.hasFinished }) {
                    throw BenchError("an OCR worker stopped: \(failed.error.map { String(describing: $0) } ?? "it returned")")
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<inFlight {
                        group.addTask {
                            do {
                                _ = try await client.request(service: OCRService.name, body: warmBody)
                            } catch {
                                throw BenchError("\(warmName): \(error)")
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            } while workers.contains(where: { $0.requestsServed == 0 })
        }
    }

    /// Every image once with 2 per worker in flight; no new one after the phase deadline.
    private func quirePass(_ rig: QuireRig, images: [BenchImage], problems: Problems) throws -> Tally {
        guard let client = rig.client else { throw BenchError("Quire: no client") }
        let bodies = images.map { [rig.frame, $0.bytes] }
        let names = images.map(\.name)
        let inFlight = rig.inFlight
        let stopAt = Instant.now() + options.phaseTimeout
        let hardLimit = Milliseconds(options.phaseTimeout.value + options.requestTimeout.value + 10_000)
        let servedBefore = rig.workers.map(\.requestsServed)
        let cpu0 = CPUSnapshot.now()
        let (samples, seconds) = try awaitBlocking("Quire: the run under load", timeout: hardLimit) {
            () async throws -> ([UInt64], Double) in
            let tickets = TicketCounter()
            let samples = Locked<[UInt64]>([])
            let start = Instant.now()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<min(inFlight, bodies.count) {
                    group.addTask {
                        while true {
                            let ticket = tickets.take()
                            guard ticket < bodies.count, Instant.now() < stopAt else { return }
                            let t0 = Instant.now()
                            do {
                                _ = try await client.request(service: OCRService.name, body: bodies[ticket])
                                let elapsed = Instant.now().nanoseconds &- t0.nanoseconds
                                samples.withLock { $0.append(elapsed) }
                            } catch let error as ClientError where error.code == .cancelled {
                                throw error
                            } catch {
                                problems.add(names[ticket], "quire", String(describing: error))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            return (samples.withLock { $0 }, max(Instant.now().seconds(since: start), 1e-9))
        }
        let cpu = cpu0.until(CPUSnapshot.now())
        if samples.count < images.count, Instant.now() >= stopAt {
            progress("Quire: stopped at the \(options.phaseTimeout.value) ms phase limit after \(samples.count) images")
        }
        var tally = Tally(samples: samples, seconds: seconds, cpu: cpu)
        tally.perWorker = zip(rig.workers.map(\.requestsServed), servedBefore).map { $0 - $1 }
        return tally
    }

    /// Every image once, one request in flight; the worker's timings are read from each reply off the clock.
    private func quireSequentialPass(_ rig: QuireRig, images: [BenchImage], problems: Problems) throws -> (Tally, [Reply]) {
        guard let client = rig.client else { throw BenchError("Quire: no client") }
        let bodies = images.map { [rig.frame, $0.bytes] }
        let names = images.map(\.name)
        let stopAt = Instant.now() + options.phaseTimeout
        let hardLimit = Milliseconds(options.phaseTimeout.value + options.requestTimeout.value + 10_000)
        let start = Instant.now()
        let cpu0 = CPUSnapshot.now()
        let replies = try awaitBlocking("Quire: the run with one in flight", timeout: hardLimit) { () async throws -> [Reply] in
            var out: [Reply] = []
            let decoder = JSONDecoder()
            for ticket in bodies.indices {
                let t0 = Instant.now()
                if t0 >= stopAt { break }
                do {
                    let reply = try await client.request(service: OCRService.name, body: bodies[ticket])
                    let elapsed = Instant.now().nanoseconds &- t0.nanoseconds
                    let summary = reply.first.flatMap { try? decoder.decode(ReplySummary.self, from: Data($0)) }
                    out.append(Reply(image: ticket, nanoseconds: elapsed, bytes: reply.first?.count ?? 0, summary: summary))
                } catch let error as ClientError where error.code == .cancelled {
                    throw error
                } catch {
                    problems.add(names[ticket], "quire-latency", String(describing: error))
                }
            }
            return out
        }
        let samples = replies.map(\.nanoseconds)
        var tally = Tally(samples: samples, seconds: Instant.now().seconds(since: start), cpu: cpu0.until(CPUSnapshot.now()))
        for reply in replies { tally.texts[reply.image] = reply.summary?.text ?? "" }
        return (tally, replies)
    }

    /// Medians of the one-in-flight replies: the round trip, the worker's decode and recognise times, the rest.
    static func breakdown(_ replies: [Reply]) -> OCRBenchBreakdown? {
        let timed = replies.compactMap { reply in reply.summary.map { (reply, $0) } }
        guard !timed.isEmpty else { return nil }
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        let e2e = timed.map { Double($0.0.nanoseconds) / 1e6 }
        let decode = timed.map { $0.1.metadata.timings.decodeMs }
        let recognize = timed.map { $0.1.metadata.timings.recognizeMs }
        let rest = timed.map { Double($0.0.nanoseconds) / 1e6 - $0.1.metadata.timings.decodeMs - $0.1.metadata.timings.recognizeMs }
        return OCRBenchBreakdown(
            endToEndMs: round2(median(e2e)), decodeMs: round2(median(decode)), recognizeMs: round2(median(recognize)),
            restMs: round2(median(rest)), jsonEncodeMs: nil, replyBytes: Int(median(timed.map { Double($0.0.bytes) })))
    }

    /// The parts of a reply the breakdown needs (decoding only these is cheaper than the whole result).
    struct ReplySummary: Decodable, Sendable {
        struct Metadata: Decodable, Sendable {
            struct Timings: Decodable, Sendable {
                var decodeMs: Double
                var recognizeMs: Double
            }
            var timings: Timings
        }
        var text: String
        var metadata: Metadata
    }

    // MARK: - tesseract CLI

    struct CLIUnavailable: Error { let message: String }

    private func cliVersion(_ tesseract: String) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: tesseract) else {
            throw CLIUnavailable(message: "\(tesseract) is not installed (Debian: apt-get install tesseract-ocr)")
        }
        let probe: (status: Int32, output: String)
        do {
            probe = try runBriefly(tesseract, ["--version"], timeout: 20_000)
        } catch {
            throw CLIUnavailable(message: "'\(tesseract) --version' failed: \(error)")
        }
        guard probe.status == 0, let first = probe.output.split(separator: "\n").first(where: { $0.hasPrefix("tesseract") }) else {
            throw CLIUnavailable(message: "'\(tesseract) --version' exited with status \(probe.status): \(probe.output)")
        }
        return String(first)
    }

    /// The runner, after one warm-up process (so that the traineddata is in the page cache for all).
    private func startCLI(_ tesseract: String, languages: [String], smallest: BenchImage, scratch: String) throws -> CLIRunner {
        var environment = ProcessInfo.processInfo.environment
        environment["OMP_THREAD_LIMIT"] = "1"
        let arguments = ["stdout", "-l", languages.joined(separator: "+"), "--psm", String(OCRBenchOptions.psm(for: options.mode)),
                         "--tessdata-dir", options.configuration.dataPath]
        let runner = CLIRunner(executable: tesseract, arguments: arguments, environment: environment,
                               timeout: options.requestTimeout, registry: cliProcesses)
        progress("tesseract CLI: warm-up with \(smallest.name)")
        do {
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        } catch {
            throw CLIUnavailable(message: "cannot create \(scratch): \(error.localizedDescription)")
        }
        if case .failure(let message) = runner.run(image: smallest.path, output: scratch + "/warm") {
            throw CLIUnavailable(message: "\(smallest.name): \(message)")
        }
        return runner
    }

    /// Every image once, one `tesseract` process each, `workers` at a time.
    private func cliPass(_ runner: CLIRunner, images: [BenchImage], scratch: String, problems: Problems) throws -> Tally {
        let tickets = TicketCounter()
        let samples = Locked<[UInt64]>([])
        let texts = Locked<[Int: String]>([:])
        let stopAt = Instant.now() + options.phaseTimeout
        let cpu0 = CPUSnapshot.now()
        let start = Instant.now()
        var threads: [BenchThread] = []
        for index in 0..<options.workers {
            let output = scratch + "/slot-\(index)"
            threads.append(BenchThread(name: "bench-cli-\(index)") {
                while true {
                    let ticket = tickets.take()
                    guard ticket < images.count, Instant.now() < stopAt else { return }
                    let t0 = Instant.now()
                    switch runner.run(image: images[ticket].path, output: output) {
                    case .success:
                        let elapsed = Instant.now().nanoseconds &- t0.nanoseconds
                        samples.withLock { $0.append(elapsed) }
                        let text = FileManager.default.contents(atPath: output + ".txt").map { String(decoding: $0, as: UTF8.self) } ?? ""
                        texts.withLock { $0[ticket] = text }
                    case .failure(let message):
                        problems.add(images[ticket].name, "cli", message)
                    }
                }
            })
        }
        let hardLimit = start + Milliseconds(options.phaseTimeout.value + options.requestTimeout.value + 10_000)
        for thread in threads {
            guard thread.join(timeout: Milliseconds(max(1, Instant.now().milliseconds(until: hardLimit)))) else {
                killSubprocesses()
                throw BenchError("tesseract CLI: a pass did not finish within \(options.phaseTimeout.value + options.requestTimeout.value) ms")
            }
        }
        let seconds = max(Instant.now().seconds(since: start), 1e-9)
        var tally = Tally(samples: samples.withLock { $0 }, seconds: seconds, cpu: cpu0.until(CPUSnapshot.now()))
        tally.texts = texts.withLock { $0 }
        return tally
    }

    // MARK: - Helpers

    static func loadAverage() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
              let first = text.split(separator: " ").first, let value = Double(first) else { return 0 }
        return value
    }
}

/// A value behind a lock, shareable with closures and threads.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

private func round2(_ value: Double) -> Double { (value * 100).rounded() / 100 }
private func round3(_ value: Double) -> Double { (value * 1_000).rounded() / 1_000 }

/// The Quire side of the benchmark: the shared rig, with a minute for each OCR worker to finish the
/// image in hand, and the request frame and concurrency of its passes.
private final class QuireRig: Rig {
    var frame: [UInt8] = []
    var inFlight = 2
    var client: QuireClient? { clients.first }

    init(logger: Logger) { super.init(logger: logger, workerStopTimeout: 60_000) }
}

/// `workers` threads, each with its own `Recognizer`, kept across passes and started together for
/// each one. Owned by the benchmark's thread; the threads share only ``RawShared``.
private final class RawPool {
    let shared: RawShared
    private var threads: [BenchThread] = []

    init(configuration: OCRConfiguration, request: OCRRequest, images: [OCRBenchmark.BenchImage], problems: OCRBenchmark.Problems) {
        shared = RawShared(configuration: configuration, request: request, images: images, problems: problems)
    }

    /// Starts the threads; each makes its recogniser and reads `warmUp` once.
    func start(threads count: Int, warmUp: OCRBenchmark.BenchImage, timeout: Milliseconds) throws {
        let shared = self.shared
        for index in 0..<count {
            let go = DispatchSemaphore(value: 0)
            shared.go.append(go)
            threads.append(BenchThread(name: "bench-raw-\(index)") { shared.body(go: go, warmUp: warmUp) })
        }
        let deadline = Instant.now() + timeout
        for _ in 0..<count {
            let left = max(1, Instant.now().milliseconds(until: deadline))
            guard shared.ready.wait(timeout: .now() + .milliseconds(Int(left))) == .success else {
                throw BenchError("raw engine: the warm-up did not finish within \(timeout.value) ms")
            }
        }
        if let failure = shared.warmFailure.withLock({ $0 }) { throw BenchError("raw engine: the warm-up failed: \(failure)") }
    }

    /// Every image once across the threads; no new one after `deadline`.
    func pass(deadline: Milliseconds, hardLimit: Milliseconds) throws -> OCRBenchmark.Tally {
        let start = Instant.now()
        shared.state.withLock {
            $0.nextTicket = 0
            $0.stopAt = start + deadline
            $0.samples = []
            $0.texts = [:]
            $0.finished = start
        }
        let cpu0 = OCRBenchmark.CPUSnapshot.now()
        for go in shared.go { go.signal() }
        let limit = start + hardLimit
        for _ in shared.go {
            let left = max(1, Instant.now().milliseconds(until: limit))
            guard shared.done.wait(timeout: .now() + .milliseconds(Int(left))) == .success else {
                throw BenchError("raw engine: a pass did not finish within \(hardLimit.value) ms")
            }
        }
        let cpu = cpu0.until(OCRBenchmark.CPUSnapshot.now())
        let (samples, texts, finished) = shared.state.withLock { ($0.samples, $0.texts, $0.finished) }
        var tally = OCRBenchmark.Tally(samples: samples, seconds: max(finished.seconds(since: start), 1e-9), cpu: cpu)
        tally.texts = texts
        return tally
    }

    /// Smallest, median and largest recognition scale over the images' first results.
    func recognitionScales() -> [Double] {
        let scales = shared.results.withLock { $0 }.values.flatMap { $0.pages.map(\.recognitionScale) }.sorted()
        guard !scales.isEmpty else { return [] }
        return [scales[0], scales[scales.count / 2], scales[scales.count - 1]].map { ($0 * 100).rounded() / 100 }
    }

    /// The median time to encode one image's result to JSON as the OCR handler does, on this thread.
    func medianEncodeMilliseconds() -> Double? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var times: [Double] = []
        for (_, result) in shared.results.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            let t0 = Instant.now()
            _ = try? encoder.encode(result)
            times.append(Instant.now().seconds(since: t0) * 1_000)
        }
        times.sort()
        return times.isEmpty ? nil : (times[times.count / 2] * 100).rounded() / 100
    }

    /// Lets the threads end (each after the image in hand) and waits for them.
    func stop(timeout: Milliseconds) {
        shared.state.withLock { $0.quit = true }
        for go in shared.go { go.signal() }
        for thread in threads where !thread.join(timeout: timeout) {
            shared.problems.add("-", "raw", "a raw engine thread did not stop within \(timeout.value) ms")
        }
        threads = []
    }
}

/// What the raw engine threads share with the benchmark's thread.
private final class RawShared: @unchecked Sendable {
    // `go` is filled before the threads start and only read afterwards; everything else is Sendable.
    var go: [DispatchSemaphore] = []
    let ready = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    let configuration: OCRConfiguration
    let request: OCRRequest
    let images: [OCRBenchmark.BenchImage]
    let problems: OCRBenchmark.Problems
    let warmFailure = Locked<String?>(nil)
    /// The first result for each image, for timing the JSON encoding.
    let results = Locked<[Int: OCRResult]>([:])

    struct State: Sendable {
        var nextTicket = 0
        var stopAt = Instant(nanoseconds: 0)
        var samples: [UInt64] = []
        var texts: [Int: String] = [:]
        var finished = Instant(nanoseconds: 0)
        var quit = false
    }
    let state = Locked<State>(State())

    init(configuration: OCRConfiguration, request: OCRRequest, images: [OCRBenchmark.BenchImage], problems: OCRBenchmark.Problems) {
        self.configuration = configuration
        self.request = request
        self.images = images
        self.problems = problems
    }

    /// One thread: make the recogniser, warm up, then one round of tickets per `go`.
    func body(go: DispatchSemaphore, warmUp: OCRBenchmark.BenchImage) {
        let recognizer = Recognizer(configuration: configuration)
        do {
            _ = try recognizer.recognize(request, image: warmUp.bytes)
        } catch {
            warmFailure.withLock { $0 = "\(warmUp.name): \(error)" }
        }
        ready.signal()
        while true {
            go.wait()
            if state.withLock({ $0.quit }) { return }
            while true {
                let (ticket, stopAt) = state.withLock { state -> (Int, Instant) in
                    defer { state.nextTicket += 1 }
                    return (state.nextTicket, state.stopAt)
                }
                guard ticket < images.count, Instant.now() < stopAt else { break }
                let t0 = Instant.now()
                do {
                    let (result, _) = try recognizer.recognize(request, image: images[ticket].bytes)
                    let elapsed = Instant.now().nanoseconds &- t0.nanoseconds
                    state.withLock {
                        $0.samples.append(elapsed)
                        $0.texts[ticket] = result.text
                    }
                    results.withLock { if $0[ticket] == nil { $0[ticket] = result } }
                } catch {
                    problems.add(images[ticket].name, "raw", String(describing: error))
                }
            }
            let end = Instant.now()
            state.withLock { $0.finished = max($0.finished, end) }
            done.signal()
        }
    }
}

/// Running `tesseract` processes, so that a signal handler on another thread can kill them.
final class PIDRegistry: Sendable {
    private let pids = Locked<Set<Int32>>([])
    func add(_ pid: Int32) { pids.withLock { _ = $0.insert(pid) } }
    func remove(_ pid: Int32) { pids.withLock { _ = $0.remove(pid) } }
    func killAll() { for pid in pids.withLock({ $0 }) { kill(pid, SIGKILL) } }
}

/// Starts `tesseract` for one image and waits for it, at most `timeout` (then it is killed). Standard
/// output (the text) and error go to files next to `output`, rewritten for every image.
private final class CLIRunner: Sendable {
    let executable: String
    let arguments: [String]
    let environment: [String: String]
    let timeout: Milliseconds
    let registry: PIDRegistry

    enum Outcome { case success, failure(String) }

    init(executable: String, arguments: [String], environment: [String: String], timeout: Milliseconds, registry: PIDRegistry) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.timeout = timeout
        self.registry = registry
    }

    func run(image: String, output: String) -> Outcome {
        let fm = FileManager.default
        let outPath = output + ".txt", errPath = output + ".err"
        guard fm.createFile(atPath: outPath, contents: nil), fm.createFile(atPath: errPath, contents: nil),
              let out = FileHandle(forWritingAtPath: outPath), let err = FileHandle(forWritingAtPath: errPath) else {
            return .failure("cannot create \(outPath)")
        }
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [image] + arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        do {
            try process.run()
        } catch {
            return .failure("cannot start \(executable): \(error.localizedDescription)")
        }
        let pid = process.processIdentifier
        registry.add(pid)
        defer { registry.remove(pid) }
        if done.wait(timeout: .now() + .milliseconds(Int(timeout.value))) == .timedOut {
            kill(pid, SIGKILL)
            _ = done.wait(timeout: .now() + .seconds(5))
            return .failure("tesseract did not finish within \(timeout.value) ms and was killed")
        }
        let status = process.terminationStatus
        if process.terminationReason == .uncaughtSignal {
            return .failure("tesseract was killed by signal \(status)")
        }
        guard status == 0 else {
            let text = fm.contents(atPath: errPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
            let tail = text.split(separator: "\n").suffix(3).joined(separator: " / ")
            return .failure("tesseract exited with status \(status)\(tail.isEmpty ? "" : ": " + tail)")
        }
        return .success
    }
}
