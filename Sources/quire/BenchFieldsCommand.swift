import Foundation
import QuireBench
import QuireOCR
import QuireSupport

/// `quire bench fields DIR…`: receipts read with and without `fields: ["receipt"]`, the fields scored
/// against NAME.key.json.
enum BenchFieldsCommand {
    static let command = Command(
        "bench fields", listing: ("bench fields DIR…", "measure receipts as fields: merchant, address, date, total against NAME.key.json"),
        usage: "quire bench fields DIR [DIR…] [options]",
        discussion: """
            Reads every image of each DIR that has a NAME.key.json (company, date, address, total; the
            manifest.tsv's list where there is one, as bench ocr) through a broker and OCR worker threads
            in this process, one in flight: once with fields: ["receipt"] and once without, one right
            after the other, which first alternating. Prints a Markdown table per field, pooled and for
            half A and half B: found, exact (case and spaces normalised), right (merchant and address
            within 20% character error with case, spaces and punctuation ignored; date the same day;
            total the same amount), beside the text baseline (the key's date or total appears in the
            text), and the time with fields over without (the median of the per-receipt ratios).
            --json prints every receipt's row instead. Build with -c release before measuring.
            """,
        groups: [
            OptionGroup("The worker's settings:", OCRConfiguration.settings, defaults: OCRConfiguration()),
            BenchOptions.group,
        ],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        var options = try BenchOCRCommand.options(invocation, missing: "a folder of receipts with NAME.key.json")
        options.mode = OCRBenchOptions.defaultMode(for: options.directories)
        let logger = try BenchOptions.logger(invocation)
        let quiet = try invocation.value(BenchOptions.quiet, or: false)
        // Before anything loads Tesseract (as `quire bench ocr`).
        prepareForEngines(engineThreads: options.workers, environment: invocation.environment)
        let benchmark = OCRBenchmark(options: options, logger: logger) { line in
            if !quiet { printError("bench: " + line) }
        }
        do {
            let report = try benchmark.runFields()
            printOut(try invocation.value(BenchOptions.json, or: false) ? try report.json() : report.markdown())
        } catch {
            printError("quire bench fields: \(error)")
            return 1
        }
        return 0
    }
}
