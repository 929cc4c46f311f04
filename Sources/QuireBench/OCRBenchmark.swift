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

/// `quire bench ocr DIR…`: the same images read three ways, `workers` at a time —
/// 1. Quire end to end: an in-process broker, OCR worker threads and a client over TCP loopback,
///    with 2 requests per worker in flight (images/s and latency under load), then one in flight;
/// 2. the `tesseract` CLI, one process per image, with `OMP_THREAD_LIMIT=1`;
/// 3. the raw engine: a `Recognizer` per thread, no broker, no sockets — the ceiling.
///
/// Each folder is a set with its own figures, measured side by side with the CLI in the same pass.
///
/// ``run()`` blocks the calling thread (not a pool thread).
public final class OCRBenchmark: Sendable {
    public let options: OCRBenchOptions
    let logger: Logger
    let progress: @Sendable (String) -> Void
    let cliProcesses = PIDRegistry()

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
        /// The set (folder) it belongs to, by name.
        var set: String = ""
        /// Its id (the manifest's, or the file name without extension) and the half its document is in.
        var id: String = ""
        var half: Half = .a
        /// Installed Tesseract packs to read it with (the manifest's `lang`, or `--languages`).
        var languages: [String] = []
        /// Whether they are the manifest's `lang` for it (not `--languages`): only then is the page's
        /// language known, for `--detect`.
        var languagesListed = false
        /// The languages as the CLI's `-l` takes them and as engines are keyed: `chi_sim+eng`.
        var languageKey: String { languages.joined(separator: "+") }
        let format: ImageFormat
        let width: Int
        let height: Int
    }

    /// Per-image failures collected across threads.
    final class Problems: Sendable {
        let list = Locked<[OCRBenchProblem]>([])
        func add(_ set: String, _ file: String, _ phase: String, _ message: String) {
            list.withLock { $0.append(OCRBenchProblem(set: set, file: file, phase: phase, message: message)) }
        }
        /// An image's failure in one way of reading it.
        func add(_ image: BenchImage, _ phase: String, _ message: String) { add(image.set, image.name, phase, message) }
        var all: [OCRBenchProblem] { list.withLock { $0 } }
        func count(_ phase: String, set: String) -> Int { list.withLock { $0.filter { $0.phase == phase && $0.set == set }.count } }
    }

    /// One folder's images, by their index in the run's list of all images.
    struct BenchSet {
        let name: String
        let directory: String
        let indices: [Int]
        let scanned: ScannedSet
    }

    /// Runs every measurement and tears everything down, also when one fails.
    ///
    /// Quire, the CLI and the raw engine are set up and warmed up once, with every language set the
    /// images ask for; then each pass takes the sets one after the other and reads each set's images
    /// once each way (Quire under load, Quire one in flight, CLI, raw), the order of the ways turning
    /// from pass to pass, so that whatever else runs on the machine meanwhile falls on all of them
    /// alike, and each set's ratios compare runs minutes apart at most.
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
        guard !options.directories.isEmpty else { throw BenchError("no folder of images") }

        // The sets.
        var images: [BenchImage] = []
        var sets: [BenchSet] = []
        for (directory, name) in zip(options.directories, OCRBenchOptions.setNames(options.directories)) {
            let scanned = try scan(directory, set: name, defaults: packs, installed: installed, problems: problems)
            guard !scanned.images.isEmpty else {
                let reasons = problems.all.filter { $0.set == name }.map { "\($0.file): \($0.message)" }
                throw BenchError("no readable images in \(directory)" + (reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; ")))
            }
            sets.append(BenchSet(name: name, directory: directory, indices: Array(images.count..<(images.count + scanned.images.count)), scanned: scanned))
            images += scanned.images
        }
        let psm = OCRBenchOptions.psm(for: options.mode)
        for set in sets {
            let other = set.scanned.hasManifest
                ? "listed in manifest.tsv, \(set.scanned.unlisted) other image file\(set.scanned.unlisted == 1 ? "" : "s") not listed"
                : "\(set.scanned.nonImages) other file\(set.scanned.nonImages == 1 ? "" : "s") skipped"
            progress("\(set.name): \(set.indices.count) images (\(other)), languages "
                + Self.languageCounts(set.indices.map { images[$0].languageKey })
                    .sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))
        }
        progress("mode \(options.mode.rawValue) (psm \(psm)), \(options.workers) workers, \(options.repeats) pass\(options.repeats == 1 ? "" : "es")")
        // One warm-up image per language set: the smallest that asks for it.
        var warmUps: [BenchImage] = []
        for image in images {
            if let index = warmUps.firstIndex(where: { $0.languageKey == image.languageKey }) {
                if image.width * image.height < warmUps[index].width * warmUps[index].height { warmUps[index] = image }
            } else {
                warmUps.append(image)
            }
        }
        let languageKeys = Set(images.map(\.languageKey))

        // Set everything up.
        let quire = QuireRig(logger: logger)
        defer { quire.tearDown() }
        try startQuire(quire, images: images, warmUps: warmUps)
        let raw = RawPool(configuration: options.configuration, mode: options.mode, engine: options.engine, images: images, problems: problems)
        defer { raw.stop(timeout: options.requestTimeout) }
        progress("raw engine: warm-up of \(options.workers) recognisers with " + warmUps.map(\.name).joined(separator: ", "))
        try raw.start(threads: options.workers, warmUps: warmUps, timeout: options.phaseTimeout)
        var cli: CLIRunner?
        var cliLine = "not measured (--no-cli)."
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("quire-bench-ocr-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        if let tesseract = options.tesseract {
            do {
                let version = try cliVersion(tesseract)
                cli = try startCLI(tesseract, warmUps: warmUps, scratch: scratch)
                let languages = languageKeys.count == 1 ? images[0].languageKey : "LANG"
                cliLine = "`\(URL(fileURLWithPath: tesseract).lastPathComponent) IMG stdout -l \(languages) --psm \(psm) "
                    + "--tessdata-dir \(options.configuration.dataPath)` (\(version))"
                    + (languageKeys.count == 1 ? "" : " with each image's languages as LANG (Quire and the raw engine are asked for the same)")
                    + ", one process per image, \(options.workers) at a time, with OMP_THREAD_LIMIT=1 in its environment "
                    + "(without it Debian's OpenMP build is about 6× slower and the comparison would flatter Quire)."
            } catch let error as CLIUnavailable {
                cliLine = "not measured: \(error.message)"
                progress("tesseract CLI: skipped: \(error.message)")
            }
        }

        // Measure, pass by pass, set by set.
        var passes = [[PassResult]](repeating: [], count: sets.count)
        // Without languages is read in the same sweep as with them (quireSequentialPass).
        let steps = Step.allCases.filter { $0 != .quireUnhinted }
        for pass in 0..<options.repeats {
            let order = steps.indices.map { steps[($0 + pass) % steps.count] }
            for (number, set) in sets.enumerated() {
                let label = (options.repeats > 1 ? "pass \(pass + 1)/\(options.repeats)" : "") + (sets.count > 1 ? (options.repeats > 1 ? ", " : "") + set.name : "")
                let prefix = label.isEmpty ? "" : label + ": "
                var result = PassResult()
                for step in order {
                    let tally: Tally
                    let name: String
                    switch step {
                    case .quireLoad:
                        name = "Quire, \(quire.inFlight) in flight"
                        tally = try quirePass(quire, images: images, indices: set.indices, problems: problems)
                    case .quireOne:
                        name = "Quire, one in flight" + (options.detect ? " (each image with and without languages in turn)" : "")
                        let (hinted, unhinted) = try quireSequentialPass(quire, images: images, indices: set.indices, problems: problems,
                                                                         detect: options.detect)
                        (tally, result.replies) = hinted
                        if let unhinted {
                            (result.tallies[.quireUnhinted], result.unhintedReplies) = unhinted
                        }
                    case .quireUnhinted:
                        continue
                    case .cli:
                        guard let cli else { continue }
                        name = "tesseract CLI, \(options.workers) at a time"
                        tally = try cliPass(cli, images: images, indices: set.indices, scratch: scratch, problems: problems)
                    case .raw:
                        name = "raw engine, \(options.workers) threads"
                        tally = try raw.pass(indices: set.indices, deadline: options.phaseTimeout,
                                             hardLimit: Milliseconds(options.phaseTimeout.value + options.requestTimeout.value + 10_000))
                    }
                    result.tallies[step] = tally
                    let p50 = LatencySummary(nanoseconds: tally.samples).p50 / 1_000
                    progress(prefix + name + ": \(tally.samples.count) images in " + String(format: "%.2f s, %.3g/s, p50 %.1f ms", tally.seconds, tally.rate, p50)
                        + String(format: ", %.2f cores, others %.2f", tally.cpuSeconds / max(tally.seconds, 1e-9), tally.otherCPUSeconds / max(tally.seconds, 1e-9))
                        + (tally.perWorker.map { ", per worker " + $0.map(String.init).joined(separator: "/") } ?? ""))
                }
                // Other processes busy on a sizeable share of the processors: the pass is not comparable.
                let limit = 0.125 * Double(machine.processors)
                result.noisy = result.tallies.values.contains { $0.otherCPUSeconds / max($0.seconds, 1e-9) > limit }
                if result.noisy {
                    progress(prefix + String(format: "other processes used more than %.2f cores meanwhile; ", limit)
                        + "the pass is left out of this set's figures unless all are like it")
                }
                passes[number].append(result)
            }
        }

        // Report.
        var setReports: [OCRBenchSet] = []
        var detection: [OCRDetectionRow]?
        var allSamples: [OCRDetectionSample] = []
        for (number, set) in sets.enumerated() {
            let (setReport, samples) = report(set, passes: passes[number], images: images, quire: quire, raw: raw, cliRan: cli != nil,
                                              problems: problems)
            setReports.append(setReport)
            allSamples += samples
            if options.detect, sets.count > 1 {
                detection = (detection ?? []) + [OCRDetectionRow(group: set.name, scope: .all, samples: samples)]
            }
        }
        if options.detect, sets.count > 1 {
            detection = (detection ?? []) + [OCRDetectionRow(group: "all sets", scope: .all, samples: allSamples)]
        }
        let worse = cli == nil ? nil : OCRBenchWorseImage.find(setReports.flatMap { set in set.scores.map { (set.name, $0) } })
        for index in setReports.indices where worse != nil {
            setReports[index].worseThanCLI = worse?.filter { $0.set == setReports[index].name }.count
        }
        return OCRBenchReport(
            machine: machine, mode: options.mode.rawValue, psm: psm, languages: packs.joined(separator: "+"), workers: options.workers,
            inFlight: quire.inFlight, repeats: options.repeats, tesseractVersion: Engine.version, cli: cliLine,
            ompThreadLimit: ProcessInfo.processInfo.environment["OMP_THREAD_LIMIT"] ?? "unset",
            passes: options.repeats, scalingDisabled: options.noScaling,
            summary: setReports.map(OCRBenchSetSummary.init), sets: setReports, worseThanCLI: worse, detection: detection,
            loadAverageBefore: loadBefore, loadAverageAfter: Self.loadAverage())
    }

    /// One set's figures from its passes, and with `--detect` each image's reading without languages
    /// beside its reading with them.
    func report(_ set: BenchSet, passes: [PassResult], images: [BenchImage], quire: QuireRig, raw: RawPool, cliRan: Bool,
                problems: Problems) -> (OCRBenchSet, [OCRDetectionSample]) {
        let clean = passes.filter { !$0.noisy }
        let used = clean.isEmpty ? passes : clean
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
                                             failures: problems.count("quire", set: set.name), images: images)
        let sequential = total(.quireOne)
        let single = LatencySummary(nanoseconds: sequential.samples)
        quireRow.oneInFlightP50Ms = round2(single.p50 / 1_000)
        quireRow.oneInFlightP90Ms = round2(single.p90 / 1_000)
        quireRow.oneInFlightRequests = sequential.samples.count
        let fromReplies = sequential.row(name: "", setup: "", failures: 0, images: images)
        quireRow.emptyResults = fromReplies.emptyResults
        quireRow.wordsFoundPercent = fromReplies.wordsFoundPercent
        rows.append((.quireLoad, quireRow))
        if cliRan {
            rows.append((.cli, total(.cli).row(name: "tesseract CLI", setup: "\(options.workers) process\(options.workers == 1 ? "" : "es") at a time",
                                               failures: problems.count("cli", set: set.name), images: images)))
        }
        rows.append((.raw, total(.raw).row(name: "raw engine", setup: "\(options.workers) thread\(workerWord), a Recognizer each",
                                           failures: problems.count("raw", set: set.name), images: images)))
        for index in rows.indices {
            let step = rows[index].0
            if cliRan, let ratio = step == .cli ? 1 : medianRatio(step, over: .cli) {
                rows[index].1.vsCLI = (ratio * 100).rounded() / 100
            }
            if let ratio = step == .raw ? 1 : medianRatio(step, over: .raw) {
                rows[index].1.vsRawPercent = (ratio * 1_000).rounded() / 10
            }
        }
        var breakdown = Self.breakdown(used.flatMap(\.replies))
        breakdown?.jsonEncodeMs = raw.medianEncodeMilliseconds(indices: set.indices)

        // Accuracy: Quire's one-in-flight replies (the full result's text) and the CLI's stdout; an
        // image a way failed to read counts as read as no text.
        let quireTexts = sequential.texts, cliTexts = total(.cli).texts
        var quireScores: [Int: ImageAccuracy] = [:], cliScores: [Int: ImageAccuracy] = [:]
        var scores: [OCRBenchImageScore] = []
        for (position, index) in set.indices.enumerated() {
            let image = images[index]
            guard let truth = image.truthText else { continue }
            let q = ImageAccuracy(truth: truth, keyFields: image.keyFields, text: quireTexts[index] ?? "")
            let c = cliRan ? ImageAccuracy(truth: truth, keyFields: image.keyFields, text: cliTexts[index] ?? "") : nil
            quireScores[position] = q
            cliScores[position] = c
            scores.append(OCRBenchImageScore(file: image.name, group: image.group, half: image.half, languages: image.languageKey,
                                             quire: OCRBenchImageScore.Scores(q), cli: c.map(OCRBenchImageScore.Scores.init)))
        }
        var samples: [OCRDetectionSample] = []
        if options.detect {
            let unhinted = total(.quireUnhinted)
            // The first reply for each image (the readings are the same from pass to pass).
            var detections: [Int: DetectionSummary] = [:]
            for reply in used.flatMap(\.unhintedReplies) where detections[reply.image] == nil {
                if let detection = reply.detection { detections[reply.image] = detection }
            }
            for index in set.indices {
                let image = images[index]
                let hintedCER = image.truthText.map { truth in
                    ImageAccuracy(truth: truth, keyFields: [:], text: quireTexts[index] ?? "").cer
                }
                let unhintedCER = image.truthText.map { truth in
                    ImageAccuracy(truth: truth, keyFields: [:], text: unhinted.texts[index] ?? "").cer
                }
                samples.append(OCRDetectionSample(
                    group: image.group, half: image.half,
                    expected: OCRDetectionSample.expectedLanguage(packs: image.languages, listed: image.languagesListed),
                    reported: detections[index]?.reportedLanguage,
                    englishOnly: image.languagesListed && image.languages == ["eng"],
                    hintedCER: hintedCER, unhintedCER: unhintedCER,
                    hintedNanoseconds: sequential.perImage[index], unhintedNanoseconds: unhinted.perImage[index],
                    detectionMs: detections[index]?.detectionMs ?? []))
            }
            for (position, index) in set.indices.enumerated() {
                guard let scoreIndex = scores.firstIndex(where: { $0.file == images[index].name }) else { continue }
                let sample = samples[position]
                scores[scoreIndex].expectedLanguage = sample.expected
                scores[scoreIndex].reportedLanguage = sample.reported
                if let truth = images[index].truthText {
                    scores[scoreIndex].withoutLanguages = OCRBenchImageScore.Scores(
                        ImageAccuracy(truth: truth, keyFields: images[index].keyFields, text: unhinted.texts[index] ?? ""))
                }
            }
        }
        let accuracy = OCRAccuracyRow.rows(groups: set.indices.map { images[$0].group }, halves: set.indices.map { images[$0].half },
                                           quire: quireScores, cli: cliRan ? cliScores : nil)

        let names = images.map(\.name)
        let slow = cliRan ? OCRBenchSlowImage.find(quire: sequential.perImage, cli: total(.cli).perImage, raw: total(.raw).perImage,
                                                   names: names, scales: raw.recognitionScalesByImage()) : nil
        let members = set.indices.map { images[$0] }
        let largest = members.max { $0.width * $0.height < $1.width * $1.height }
        var formats: [String] = []
        for image in members where !formats.contains(image.format.rawValue) { formats.append(image.format.rawValue) }
        let mine = problems.all.filter { $0.set == set.name }
        let report = OCRBenchSet(
            name: set.name, directory: set.directory, manifest: set.scanned.hasManifest, images: members.count,
            imageBytes: members.reduce(0) { $0 + $1.bytes.count }, formats: formats,
            largestPixels: largest.map { "\($0.width)×\($0.height)" } ?? "–",
            languages: Self.languageCounts(members.map(\.languageKey)),
            rows: rows.map(\.1), breakdown: breakdown,
            noisyPasses: passes.indices.filter { passes[$0].noisy }.map { $0 + 1 }, passesUsed: used.count,
            recognitionScales: raw.recognitionScales(indices: set.indices),
            accuracy: accuracy, slowerThanCLI: slow, worseThanCLI: nil, scores: scores,
            problems: mine.filter { $0.phase == "scan" } + mine.filter { $0.phase != "scan" }.prefix(50),
            nonImageFiles: set.scanned.nonImages, unlistedImageFiles: set.scanned.unlisted, unscoredImages: set.scanned.unscored,
            detection: options.detect ? OCRDetectionRow.rows(samples) : nil)
        return (report, samples)
    }

    /// How many images ask for each language set.
    static func languageCounts(_ keys: [String]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for key in keys { counts[key, default: 0] += 1 }
        return counts
    }

    /// The 1-minute load average, for the report.
    static func loadAverage() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
              let first = text.split(separator: " ").first, let value = Double(first) else { return 0 }
        return value
    }
}
