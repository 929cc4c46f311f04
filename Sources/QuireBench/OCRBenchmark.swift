import Dispatch
import Foundation
import QuireBroker
import QuireClient
import QuireOCR
import QuireSupport
import QuireWire
import QuireWorker
import Synchronization
import Imaging
import QuireRecognition
import Tesseract
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// `quire bench ocr DIR`: the same images read three ways, `workers` at a time —
/// 1. Quire end to end: an in-process broker, OCR worker threads and a client over TCP loopback,
///    with 2 requests per worker in flight (images/s and latency under load), then one in flight;
/// 2. the `tesseract` CLI, one process per image, with `OMP_THREAD_LIMIT=1`;
/// 3. the raw engine: a `Recognizer` per thread, no broker, no sockets — the ceiling.
///
/// ``run()`` blocks the calling thread (not a pool thread).
public final class OCRBenchmark: Sendable {
    public let options: OCRBenchOptions
    let logger: Logger
    let progress: @Sendable (String) -> Void
    let cliProcesses = PIDRegistry()
    let manifestCache = Locked<[String: String]?>(nil)

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
        let list = Locked<[OCRBenchProblem]>([])
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

        let slow = cli == nil ? nil : OCRBenchSlowImage.find(quire: total(.quireOne).perImage, cli: total(.cli).perImage,
                                                             raw: total(.raw).perImage, names: images.map(\.name),
                                                             scales: raw.recognitionScalesByImage())

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
            accuracy: accuracy, slowerThanCLI: slow, problems: all.filter { $0.phase == "scan" } + all.filter { $0.phase != "scan" }.prefix(50),
            nonImageFiles: nonImages, loadAverageBefore: loadBefore, loadAverageAfter: Self.loadAverage())
    }

    /// The 1-minute load average, for the report.
    static func loadAverage() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
              let first = text.split(separator: " ").first, let value = Double(first) else { return 0 }
        return value
    }
}
