import Foundation
import QuireBench
import QuireOCR
import QuireSupport

/// `quire bench documents DIR`: whole documents through a broker and N OCR workers, four ways, and
/// OCRmyPDF on the scanned PDFs when it is installed.
enum BenchDocumentsCommand {
    static let settings: [Setting<DocumentBenchOptions>] = [
        Setting(\.workers, flag: "workers", .integer(1...256), help: "OCR workers, documents in flight, and OCRmyPDF's --jobs"),
        Setting(\.ocrmypdf, flag: "ocrmypdf", SettingValue.string("PATH").optional(none: "off"),
                help: "OCRmyPDF to compare with on the scanned PDFs (skipped with a note when it is not installed)"),
        Setting(\.requestTimeout, flag: "request-timeout-ms", .milliseconds(1...86_400_000), help: "one document not read within this fails"),
    ]

    static let command = Command(
        "bench documents", listing: ("bench documents DIR", "measure documents: text layers, OCR, scanned PDFs, TIFFs, pages spread, OCRmyPDF"),
        usage: "quire bench documents DIR [options]",
        discussion: """
            Reads the documents of DIR, a folder laid out as ../shared/datasets/documents-dev is
            (manifest.tsv listing pages DOC.pNNN with their lang, DOC.pNNN.gt.txt, and per document
            DOC.pdf, DOC.scanned.pdf and DOC.tiff, the last two holding the listed pages only), each
            document one request for its listed pages, N in flight to N OCR worker threads in this
            process, four ways:

              the original PDFs from their text layers (textLayer: auto)
              the original PDFs by OCR (textLayer: ignore)
              the scanned PDFs (pages that are pictures)
              the multi-page TIFFs
              the scanned PDFs again, each page a request of its own, as quire recognize
              sends a PDF (N pages in flight across the documents)

            and, when OCRmyPDF is installed (pip install ocrmypdf), OCRmyPDF on the scanned PDFs, one
            document after another with --jobs N, writing its searchable PDF and its text (--sidecar).
            Prints a Markdown table: pages, CER and order-independent word error against each page's
            text pooled over characters, pages per second, worker time per page. Build with -c release
            before measuring; progress goes to standard error.
            """,
        groups: [
            OptionGroup(options: OptionGroup(settings, defaults: DocumentBenchOptions(directory: "")).options),
            OptionGroup("The worker's settings:", OCRConfiguration.settings, defaults: OCRConfiguration()),
            BenchOptions.group,
        ],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        guard let directory = invocation.positionals.first, invocation.positionals.count == 1 else {
            throw UsageError(command: command, message: "give one DIR, a folder laid out as documents-dev is")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw UsageError(command: command, message: "'\(directory)' is not a directory")
        }
        var options = DocumentBenchOptions(directory: directory)
        options.configuration = try invocation.configured(OCRConfiguration(), OCRConfiguration.settings)
        options = try invocation.configured(options, settings)
        let logger = try BenchOptions.logger(invocation)
        let quiet = try invocation.value(BenchOptions.quiet, or: false)
        // Before anything loads Tesseract (as `quire bench ocr`).
        prepareForEngines(engineThreads: options.workers, environment: invocation.environment)
        let benchmark = DocumentBenchmark(options: options, logger: logger) { line in
            if !quiet { printError("bench: " + line) }
        }
        do {
            printOut(try benchmark.run())
        } catch {
            printError("quire bench documents: \(error)")
            return 1
        }
        return 0
    }
}
