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
    /// Images Quire read more than 20% slower than the CLI (nil: the CLI did not run).
    public var slowerThanCLI: [OCRBenchSlowImage]? = nil
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
        if let slow = slowerThanCLI {
            let shown = slow.prefix(12).map { image in
                "\(image.file) \(milliseconds(image.quireMs)) ms against \(milliseconds(image.cliMs)) ms (×\(twoDecimals(image.ratio))"
                    + (image.rawMs.map { "; raw engine \(milliseconds($0)) ms" } ?? "")
                    + (image.scale.map { "; read at ×\(twoDecimals($0))" } ?? "") + ")"
            }
            lines.append("Slower than the CLI by more than 20% (Quire one in flight, end to end, against the CLI's process for the "
                + "same image; the shortest of the passes): " + (slow.isEmpty ? "none." : "\(slow.count) of \(images): "
                + shown.joined(separator: ", ") + (slow.count > shown.count ? ", …" : "") + "."))
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
