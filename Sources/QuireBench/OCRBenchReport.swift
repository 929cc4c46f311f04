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
    /// The set (folder) it belongs to.
    public var set: String
    /// The path relative to the set's folder (or `manifest.tsv:LINE` for a row that could not be used).
    public var file: String
    /// `scan` (left out before measuring), `quire`, `quire-latency`, `cli`, `raw`.
    public var phase: String
    public var message: String
}

/// An image Quire read more than 20% slower than the CLI: one in flight end to end against the CLI's
/// process (each the shortest over the passes), with the raw engine's time beside them.
public struct OCRBenchSlowImage: Sendable, Codable, Equatable {
    public var file: String
    public var quireMs: Double
    public var rawMs: Double?
    public var cliMs: Double
    /// The recognition scale the worker read it at (from the raw engine's result).
    public var scale: Double?

    /// How much longer Quire took than the CLI.
    public var ratio: Double { quireMs / max(cliMs, 1e-9) }

    /// Images whose Quire time exceeds the CLI's by more than `margin` (0.2: 20%), slowest first.
    static func find(quire: [Int: UInt64], cli: [Int: UInt64], raw: [Int: UInt64], names: [String], scales: [Int: Double],
                     margin: Double = 0.2) -> [OCRBenchSlowImage] {
        quire.compactMap { index, q -> OCRBenchSlowImage? in
            guard let c = cli[index], Double(q) > Double(c) * (1 + margin) else { return nil }
            return OCRBenchSlowImage(file: names[index], quireMs: (Double(q) / 1e4).rounded() / 100, rawMs: raw[index].map { (Double($0) / 1e4).rounded() / 100 },
                                     cliMs: (Double(c) / 1e4).rounded() / 100, scale: scales[index])
        }.sorted { $0.ratio > $1.ratio }
    }
}

/// An image whose Quire CER is more than 1 point above the CLI's in the same run: where Quire's
/// reading order (or reading) is worse than the bare engine's.
public struct OCRBenchWorseImage: Sendable, Codable, Equatable {
    public var file: String
    public var set: String
    public var quireCERPercent: Double
    public var cliCERPercent: Double

    /// Quire's CER minus the CLI's, in points.
    public var differencePoints: Double { ((quireCERPercent - cliCERPercent) * 100).rounded() / 100 }

    /// The images of `scores` (with their sets) whose Quire CER exceeds the CLI's by more than
    /// `margin` points, the largest difference first (then by set and file).
    static func find(_ scores: [(set: String, score: OCRBenchImageScore)], margin: Double = 1) -> [OCRBenchWorseImage] {
        scores.compactMap { set, score -> (OCRBenchWorseImage, Double)? in
            guard let q = score.quire?.cerPercent, let c = score.cli?.cerPercent, q - c > margin + 1e-9 else { return nil }
            return (OCRBenchWorseImage(file: score.file, set: set, quireCERPercent: q, cliCERPercent: c), q - c)
        }
        .sorted { ($0.1, $1.0.set, $1.0.file) > ($1.1, $0.0.set, $0.0.file) }
        .map(\.0)
    }
}

/// One image's scores, Quire's and the CLI's: to see which pages a change helps or hurts.
public struct OCRBenchImageScore: Sendable, Codable, Equatable {
    /// Percent, to two decimals (the pooled figures are means of the unrounded values).
    public struct Scores: Sendable, Codable, Equatable {
        public var cerPercent: Double
        public var wordErrorPercent: Double
        public var bagErrorPercent: Double
        public var dateFound: Bool?
        public var totalFound: Bool?

        init(cerPercent: Double, wordErrorPercent: Double, bagErrorPercent: Double, dateFound: Bool? = nil, totalFound: Bool? = nil) {
            self.cerPercent = cerPercent
            self.wordErrorPercent = wordErrorPercent
            self.bagErrorPercent = bagErrorPercent
            self.dateFound = dateFound
            self.totalFound = totalFound
        }

        init(_ accuracy: ImageAccuracy) {
            func percent(_ v: Double) -> Double { (v * 10_000).rounded() / 100 }
            self.init(cerPercent: percent(accuracy.cer), wordErrorPercent: percent(accuracy.wordError),
                      bagErrorPercent: percent(accuracy.bagError), dateFound: accuracy.dateFound, totalFound: accuracy.totalFound)
        }
    }

    public var file: String
    public var group: String
    public var half: Half
    /// The Tesseract packs it was read with, `+`-joined.
    public var languages: String
    public var quire: Scores?
    /// Nil when the CLI did not run.
    public var cli: Scores?
    /// `--detect`: Quire's scores without languages in the request, the page language the manifest
    /// names (BCP-47; nil without `lang`) and the one that reply reported (nil: none).
    public var withoutLanguages: Scores? = nil
    public var expectedLanguage: String? = nil
    public var reportedLanguage: String? = nil
}

/// One folder's figures: its speed table, its accuracy table and what was left out.
public struct OCRBenchSet: Sendable, Codable, Equatable {
    /// The folder's last path component.
    public var name: String
    public var directory: String
    /// Whether the folder's manifest.tsv chose the images (and their languages and groups).
    public var manifest: Bool
    /// Images measured (after leaving out the ones that cannot be read) and their total size.
    public var images: Int
    public var imageBytes: Int
    /// Formats and the largest size among them, such as `png` / `2480×3508`.
    public var formats: [String]
    public var largestPixels: String
    /// Images per language set (`eng`, `chi_sim+eng`).
    public var languages: [String: Int]
    public var rows: [OCRBenchRow]
    public var breakdown: OCRBenchBreakdown?
    /// Passes during which other processes were busy while this set was read (1-based), and the
    /// passes its figures come from (the quiet ones, or all when none was).
    public var noisyPasses: [Int]
    public var passesUsed: Int
    /// The factors the worker's scaling policy read the images at (Quire and the raw engine read the
    /// same way; the CLI reads every image at its own size): smallest, median, largest; from the
    /// raw engine's results.
    public var recognitionScales: [Double]
    /// Accuracy against NAME.gt.txt (and NAME.key.json) of Quire (its one-in-flight replies) and the
    /// CLI: pooled, per group when there is more than one, then half A and half B.
    public var accuracy: [OCRAccuracyRow]
    /// Images Quire read more than 20% slower than the CLI (nil: the CLI did not run).
    public var slowerThanCLI: [OCRBenchSlowImage]?
    /// How many of its images Quire read with a CER more than 1 point above the CLI's (nil: the CLI did not run).
    public var worseThanCLI: Int?
    /// Each image with a truth, scored.
    public var scores: [OCRBenchImageScore]
    /// Files left out before measuring and images that failed in a run (at most 50 of those).
    public var problems: [OCRBenchProblem]
    /// Without a manifest: files in the folder that are not images (skipped without a word).
    public var nonImageFiles: Int
    /// With a manifest: image files in the folder that it does not list.
    public var unlistedImageFiles: Int
    /// With a manifest: images it lists as not to be scored (`order` `mirrored`).
    public var unscoredImages: Int = 0
    /// `--detect`: reading without languages against reading with them, cut as `accuracy` is (nil:
    /// not measured).
    public var detection: [OCRDetectionRow]? = nil

    /// The pooled accuracy row.
    var pooled: OCRAccuracyRow? { accuracy.first { $0.scope == .all } }
    var hasKeyFields: Bool { accuracy.contains { ($0.quire?.keyFieldImages ?? 0) > 0 || ($0.cli?.keyFieldImages ?? 0) > 0 } }
}

/// One set in the summary at the top of the report.
public struct OCRBenchSetSummary: Sendable, Codable, Equatable {
    public var set: String
    public var images: Int
    /// Quire's images/s under load over the CLI's (median of the passes' ratios).
    public var quireVsCLI: Double?
    /// The pooled accuracy of each.
    public var quire: AccuracyScore?
    public var cli: AccuracyScore?
    public var worseThanCLI: Int?

    public init(_ set: OCRBenchSet) {
        self.set = set.name
        images = set.images
        quireVsCLI = set.rows.first { $0.name == "Quire" }?.vsCLI
        quire = set.pooled?.quire
        cli = set.pooled?.cli
        worseThanCLI = set.worseThanCLI
    }
}

/// Everything `quire bench ocr` measured.
public struct OCRBenchReport: Sendable, Codable, Equatable {
    public var machine: MachineInfo
    public var mode: String
    public var psm: Int
    /// `--languages` as Tesseract packs, `+`-joined: for folders without a manifest and rows without `lang`.
    public var languages: String
    public var workers: Int
    public var inFlight: Int
    public var repeats: Int
    public var tesseractVersion: String
    /// The CLI's version line, or why it did not run.
    public var cli: String
    /// OMP_THREAD_LIMIT in this process (the in-process engines); the CLI always gets 1.
    public var ompThreadLimit: String
    /// Passes measured.
    public var passes: Int
    /// `--no-scaling`: the policy was switched off, every image read at its own size.
    public var scalingDisabled: Bool
    /// One line per set.
    public var summary: [OCRBenchSetSummary]
    public var sets: [OCRBenchSet]
    /// Every image Quire read with a CER more than 1 point above the CLI's, the largest difference
    /// first (nil: the CLI did not run).
    public var worseThanCLI: [OCRBenchWorseImage]?
    /// `--detect` with several sets: each set's pooled detection row (named by the set), then all
    /// sets' images pooled (`all sets`); nil otherwise.
    public var detection: [OCRDetectionRow]? = nil
    /// 1-minute load average before and after: other processes compete for the same cores.
    public var loadAverageBefore: Double
    public var loadAverageAfter: Double

    /// Markdown for the docs: with several sets a summary first, then each set's speed and accuracy
    /// tables, the pages read worse than the CLI, and the setup and the machine underneath.
    public func markdown() -> String {
        var lines: [String] = []
        let several = sets.count > 1
        if several {
            lines += summaryTable()
            lines.append("")
            if let detection {
                lines += detectionTable(detection, first: "set")
                lines.append("")
            }
        }
        for set in sets {
            if several {
                lines.append("**\(set.name)**")
                lines.append("")
            }
            lines += speedTable(set)
            if !set.accuracy.isEmpty {
                lines.append("")
                lines += accuracyTable(set)
            }
            if let detection = set.detection, !detection.isEmpty {
                lines.append("")
                lines += detectionTable(detection, first: "group")
            }
            lines.append("")
            lines += notes(set)
            if several { lines.append("") }
        }
        if !several { lines.append("") }
        if let worse = worseThanCLI {
            lines += worseLines(worse)
            lines.append("")
        }
        lines += setupLines()
        lines.append("")
        lines += footnotes()
        return lines.joined(separator: "\n")
    }

    /// The report as one JSON object (snake_case keys).
    public func json() -> String { benchJSON(self) }

    // MARK: - The parts

    func summaryTable() -> [String] {
        let keys = sets.contains(where: \.hasKeyFields)
        var lines = [
            "| set | images | Quire vs CLI | CER Quire / CLI | word error Quire / CLI | bag error Quire / CLI |"
                + (keys ? " date found Quire / CLI | total found Quire / CLI |" : "") + " worse than CLI |",
            "|---|---:|---:|---:|---:|---:|" + (keys ? "---:|---:|" : "") + "---:|",
        ]
        for row in summary {
            let set = sets.first { $0.name == row.set }
            var cells = [row.set, String(row.images), row.quireVsCLI.map { twoDecimals($0) + "×" } ?? "–",
                         pair(row.quire?.cerPercent, row.cli?.cerPercent), pair(row.quire?.wordErrorPercent, row.cli?.wordErrorPercent),
                         pair(row.quire?.bagErrorPercent, row.cli?.bagErrorPercent)]
            if keys {
                let has = set?.hasKeyFields ?? false
                cells += has ? [pair(row.quire?.datePercent, row.cli?.datePercent), pair(row.quire?.totalPercent, row.cli?.totalPercent)] : ["–", "–"]
            }
            cells.append(row.worseThanCLI.map { "\($0) of \(set?.scores.count ?? row.images)" } ?? "–")
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines
    }

    func speedTable(_ set: OCRBenchSet) -> [String] {
        var lines = [
            "| \(set.images) image\(set.images == 1 ? "" : "s"), \(workers) worker\(workers == 1 ? "" : "s") | images/s | vs CLI | vs raw "
                + "| p50 ms | p90 ms | p99 ms | p50 ms, 1 in flight | p90 ms, 1 in flight | words found | cores used | others' cores |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in set.rows {
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
        return lines
    }

    func accuracyTable(_ set: OCRBenchSet) -> [String] {
        let keys = set.hasKeyFields
        var lines = [
            "| group | images | CER Quire | CER CLI | word error Quire | word error CLI | bag error Quire | bag error CLI |"
                + (keys ? " date found Quire / CLI | total found Quire / CLI |" : ""),
            "|---|---:|---:|---:|---:|---:|---:|---:|" + (keys ? "---:|---:|" : ""),
        ]
        for row in set.accuracy {
            let n = row.quire?.images ?? row.cli?.images ?? 0
            var cells = [row.group, String(n), percent(row.quire?.cerPercent), percent(row.cli?.cerPercent),
                         percent(row.quire?.wordErrorPercent), percent(row.cli?.wordErrorPercent),
                         percent(row.quire?.bagErrorPercent), percent(row.cli?.bagErrorPercent)]
            if keys {
                cells += [pair(row.quire?.datePercent, row.cli?.datePercent), pair(row.quire?.totalPercent, row.cli?.totalPercent)]
            }
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines
    }

    /// Reading without languages against reading with them (`--detect`): one row per group, half or set.
    func detectionTable(_ rows: [OCRDetectionRow], first: String) -> [String] {
        var lines = [
            "| \(first) | images | CER with languages | CER without | difference | page language right "
                + "| English time without / with | detection ms p50 | detection ms p90 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for row in rows {
            let difference = row.cerDifferencePoints.map { ($0 >= 0 ? "+" : "−") + oneDecimal(abs($0)) } ?? "–"
            let right = row.languageRightPercent.map { "\(row.languageRight) of \(row.languageImages) (\(oneDecimal($0)) %)" } ?? "–"
            let english = row.englishTimeRatio.map { "\(twoDecimals($0))× (\(row.englishImages) page\(row.englishImages == 1 ? "" : "s"))" } ?? "–"
            let cells = [row.group, String(row.images), percent(row.cerHintedPercent), percent(row.cerUnhintedPercent), difference, right,
                         english, row.detectionP50Ms.map(milliseconds) ?? "–", row.detectionP90Ms.map(milliseconds) ?? "–"]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines
    }

    /// What one set was and what happened to it: its images, busy passes, scaling, where Quire's time
    /// went, the images slower than with the CLI, and what was left out or failed.
    func notes(_ set: OCRBenchSet) -> [String] {
        var lines: [String] = []
        let megabytes = Double(set.imageBytes) / 1_000_000
        let languages = set.languages.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .map { set.languages.count == 1 ? $0.key : "\($0.key) ×\($0.value)" }.joined(separator: ", ")
        let chosen = set.manifest
            ? ", as its manifest.tsv lists them (its lang and group columns; \(set.unlistedImageFiles) other image file\(set.unlistedImageFiles == 1 ? "" : "s") not listed"
                + (set.unscoredImages > 0 ? ", \(set.unscoredImages) listed as not scored: order mirrored)" : ")")
            : ""
        lines.append("Images: \(set.images) (\(set.formats.joined(separator: ", ")), up to \(set.largestPixels) px, "
            + "\(oneDecimal(megabytes)) MB) from \(set.directory)\(chosen); languages \(languages).")
        if !set.noisyPasses.isEmpty {
            lines.append("Other processes were busy while this set was read in pass\(set.noisyPasses.count == 1 ? "" : "es") "
                + set.noisyPasses.map(String.init).joined(separator: ", ")
                + (set.passesUsed < passes ? "; left out: its figures are from the other \(set.passesUsed)." : ", but so in all: its figures are not to be trusted."))
        }
        if scalingDisabled {
            lines.append("Scaling: off (--no-scaling): Quire and the raw engine read every image at its own size, as the CLI does.")
        } else if set.recognitionScales.count == 3, set.recognitionScales.contains(where: { abs($0 - 1) > 0.005 }) {
            let s = set.recognitionScales
            let range = s[0] == s[2] ? "×\(twoDecimals(s[0]))" : "×\(twoDecimals(s[0]))–×\(twoDecimals(s[2])) (median ×\(twoDecimals(s[1])))"
            lines.append("Scaling: the worker's policy had Quire and the raw engine read these images at \(range) of their size; "
                + "the CLI reads them as they are.")
        }
        if let b = set.breakdown {
            var line = "One in flight, medians: end to end \(milliseconds(b.endToEndMs)) ms = decode \(milliseconds(b.decodeMs)) "
                + "+ recognise \(milliseconds(b.recognizeMs)) + the rest \(milliseconds(b.restMs)) ms (result building, "
                + "JSON encoding, broker, loopback, client); reply \(groupedThousands(Double(b.replyBytes))) bytes"
            if let encode = b.jsonEncodeMs { line += ", of which encoding takes \(milliseconds(encode)) ms" }
            lines.append(line + ".")
        }
        if let slow = set.slowerThanCLI {
            let shown = slow.prefix(12).map { image in
                "\(image.file) \(milliseconds(image.quireMs)) ms against \(milliseconds(image.cliMs)) ms (×\(twoDecimals(image.ratio))"
                    + (image.rawMs.map { "; raw engine \(milliseconds($0)) ms" } ?? "")
                    + (image.scale.map { "; read at ×\(twoDecimals($0))" } ?? "") + ")"
            }
            lines.append("Slower than the CLI by more than 20% (Quire one in flight, end to end, against the CLI's process for the "
                + "same image; the shortest of the passes): " + (slow.isEmpty ? "none." : "\(slow.count) of \(set.images): "
                + shown.joined(separator: ", ") + (slow.count > shown.count ? ", …" : "") + "."))
        }
        let failed = set.problems.filter { $0.phase != "scan" }
        let skipped = set.problems.filter { $0.phase == "scan" }
        if !skipped.isEmpty {
            lines.append("Left out: " + skipped.map { "\($0.file): \($0.message)" }.joined(separator: "; ") + ".")
        }
        if !failed.isEmpty {
            lines.append("Failed: " + failed.prefix(10).map { "\($0.file) (\($0.phase)): \($0.message)" }.joined(separator: "; ")
                + (failed.count > 10 ? "; …" : "") + ".")
        }
        return lines
    }

    /// Every image Quire read worse than the CLI, as a table, after how many there are per set.
    func worseLines(_ worse: [OCRBenchWorseImage]) -> [String] {
        let several = sets.count > 1
        let counts = sets.map { set in
            "\(several ? set.name + " " : "")\(worse.filter { $0.set == set.name }.count) of \(set.scores.count)"
        }
        var lines = ["Read worse than the CLI (Quire's CER more than 1 point above the CLI's on the same image, this run): "
            + counts.joined(separator: ", ") + (worse.isEmpty ? "." : ":")]
        guard !worse.isEmpty else { return lines }
        lines.append("")
        lines.append("| image |" + (several ? " set |" : "") + " CER Quire | CER CLI | difference |")
        lines.append("|---|" + (several ? "---|" : "") + "---:|---:|---:|")
        for image in worse {
            lines.append("| \(image.file) |" + (several ? " \(image.set) |" : "") + " \(percent(image.quireCERPercent)) | "
                + "\(percent(image.cliCERPercent)) | +\(oneDecimal(image.differencePoints)) |")
        }
        return lines
    }

    /// How the run was made: passes, mode, Quire's setup, the CLI, the raw engine.
    func setupLines() -> [String] {
        var lines: [String] = []
        var passLine = "\(passes) measured pass\(passes == 1 ? "" : "es") after a warm-up, each reading every image each way"
            + (sets.count > 1 ? " (set after set, each set's images each way before the next set's)" : "")
            + ", in an order that turns from pass to pass"
        if passes > 1 {
            passLine += "; vs CLI and vs raw are medians over the passes of the ratio within each pass"
        }
        lines.append(passLine + ".")
        let manifests = sets.contains(where: \.manifest)
        lines.append("Mode \(mode) (psm \(psm)); languages "
            + (manifests ? "each image's own from its set's manifest.tsv (lang), else \(languages)" : languages)
            + ", the same for Quire, the raw engine and the CLI; Tesseract \(tesseractVersion) in process.")
        let oneAtATime = sets.compactMap { $0.rows.first { $0.name == "Quire" }?.oneInFlightRequests }.reduce(0, +)
        if sets.contains(where: { $0.rows.contains { $0.name == "Quire" } }) {
            lines.append("Quire: a broker on tcp://127.0.0.1:* and \(workers) OCR worker threads in this process (one ZeroMQ "
                + "context, as `quire up`), a client with its own context and \(inFlight) requests in flight over TCP "
                + "loopback; p50/p90/p99 are round trips under that load (about 2 per worker queued or running), then "
                + "\(oneAtATime) requests one at a time. The reply is the full JSON result.")
        }
        lines.append("tesseract CLI: \(cli)")
        if sets.contains(where: { $0.rows.contains { $0.name == "raw engine" } }) {
            lines.append("Raw engine: \(workers) thread\(workers == 1 ? "" : "s"), each its own `Recognizer` (decode, scale, "
                + "recognise, build the result), no broker, no sockets, no JSON: the ceiling. CLI and raw p50/p90/p99 are "
                + "one image's time with \(workers) at a time.")
        }
        return lines
    }

    /// What the columns mean, and the machine.
    func footnotes() -> [String] {
        var lines: [String] = []
        if sets.contains(where: { $0.rows.contains { $0.wordsFoundPercent != nil || $0.emptyResults > 0 } }) {
            lines.append("Words found: the share of the words of each image's NAME.gt.txt found in the text read (as a bag of "
                + "words, averaged over the images); (n empty): images read as no text at all. Images/s at no accuracy mean little.")
        }
        if sets.contains(where: { !$0.accuracy.isEmpty }) {
            lines.append("Accuracy (means over the images, lower is better for the errors): CER is the edit distance to NAME.gt.txt "
                + "with white space folded, over its length (reading order counts); word error is order-independent: the "
                + "words as case-folded bags, max(missing, extra) over the truth's words; bag error is the datasets' own "
                + "measure: (truth words not matched + words read not matched) over the truth's words, case-folded, each "
                + "Chinese or Japanese character a word; date and total found: NAME.key.json's values appear in the text "
                + "(white space ignored, case-folded). Half A and half B: an image's document is its id (the file name "
                + "without extension) up to the first '.', and the documents, sorted by name, go alternately to A and B "
                + "(tune on one half, confirm on the other). Quire from its one-in-flight replies, the CLI from its stdout; "
                + "an image a way failed to read counts as read as no text.")
        }
        if detection != nil || sets.contains(where: { $0.detection != nil }) {
            lines.append("Without languages (--detect): every image read once more by Quire, one in flight, with no languages in the "
                + "request (the worker detects them), right before or after its one-in-flight reading with them (which first alternates "
                + "image by image), so that a page's two times are taken moments apart. CER with languages is Quire's one-in-flight "
                + "reading above; difference: without minus with, points. Page language right: the page's first detected language "
                + "(else the first language of its words) is the manifest's first lang as BCP-47 (chi_sim → zh-Hans, chi_tra → zh-Hant, "
                + "distinct), over the images whose manifest names a lang. English time: the median over pages read with eng alone "
                + "of each page's end-to-end time without languages over its time with them. Detection ms: per page, the result's "
                + "script and language steps' ms summed (0 where absent). Issue 35's bars: difference at most +2.0, language right "
                + "at least 90 %, English time at most 1.10×.")
        }
        lines.append("Cores used: CPU time of this process (and of the tesseract processes) over wall time while "
            + "measuring; others' cores: the rest of the machine's busy (and stolen) CPU time meanwhile, from /proc/stat. "
            + "Figures taken while others used a sizeable share of the \(machine.processors) processors are not to be trusted.")
        lines.append("Machine: \(machine.summary); OMP_THREAD_LIMIT=\(ompThreadLimit) in process; load average "
            + "\(twoDecimals(loadAverageBefore)) before, \(twoDecimals(loadAverageAfter)) after.")
        return lines
    }

    // MARK: - Numbers

    private func percent(_ value: Double?) -> String { value.map { oneDecimal($0) + " %" } ?? "–" }

    /// Quire's figure and the CLI's: `35.0 % / 38.9 %`.
    private func pair(_ quire: Double?, _ cli: Double?) -> String { percent(quire) + " / " + percent(cli) }

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
