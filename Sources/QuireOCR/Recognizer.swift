import Foundation
import QuireSupport
import QuireWire
import Imaging
import QuireRecognition
import QuirePDF
import QuireFields

/// The result of one request, and what the pipeline could not do here.
public struct Recognition: Sendable {
    public var result: OCRResult
    /// A reader the engine policy wanted for some page and this worker does not have (the scene
    /// engine): the pages keep the reading it has, and a worker that can hand the request to one with
    /// that reader does (``SceneHandOff``).
    public var missing: EngineRole?
}

/// Reads images: decode, orient, scale, recognise, build the result, on the engines ``EngineFactory``
/// makes. One per worker thread, as the engines it reads with.
public final class Recognizer {
    public let configuration: OCRConfiguration
    let engines: any EngineFactory

    /// A pipeline on `engines` (nil: the engines installed here, ``InstalledEngines``).
    public init(configuration: OCRConfiguration, engines: (any EngineFactory)? = nil) {
        self.configuration = configuration
        self.engines = engines ?? InstalledEngines(configuration: configuration)
    }

    /// The PDF library this process reads PDFs with (`pdfium chromium/8149`), or why PDF input is off.
    public static var pdfLibrary: String {
        PDFDocument.libraryVersion.map { "pdfium " + $0 } ?? "off, " + (PDFDocument.unavailableReason ?? "no library")
    }

    /// Reads `image` as `request` asks. Every failure is a typed `WireError`.
    public func recognize(_ request: OCRRequest, image bytes: [UInt8]) throws(WireError) -> Recognition {
        var recognition = try read(request, image: bytes)
        if let kinds = request.fields, !kinds.isEmpty { Self.findFields(kinds, in: &recognition.result, locale: request.languages?.first) }
        return recognition
    }

    /// The documents (`[]` where none was found) and `fields` step of each page read without them:
    /// those whose reading did not find them (a PDF page's text layer); a page an engine read found its
    /// own (``findReceipt(in:source:number:request:mode:outputs:session:)``). Costs a few milliseconds
    /// a page (the step's `ms`), against the second its reading takes.
    static func findFields(_ kinds: [OCRRequest.Fields], in result: inout OCRResult, locale: String?) {
        for index in result.pages.indices where result.pages[index].error == nil && result.pages[index].documents == nil {
            let t0 = Instant.now()
            var documents: [OCRResult.Document] = []
            var steps: [OCRResult.Step] = []
            for kind in Set(kinds) {
                switch kind {
                case .receipt:
                    let reading = ReceiptFields.read(result.pages[index], locale: locale)
                    if let document = reading.document { documents.append(document) }
                    steps.append(reading.step)
                }
            }
            result.pages[index].documents = documents
            let ms = (t0.millisecondsSince * 1_000).rounded() / 1_000
            result.metadata.steps += steps.map { step in
                var step = step
                step.page = result.pages[index].pageNumber
                step.parameters["ms"] = ms
                return step
            }
        }
    }

    /// Refuses, before decoding, a page of more than ``OCRConfiguration/maxPixels``, and one so long
    /// and thin that reduced to the longest side Tesseract reads it would be under a pixel across.
    func checkSize(_ header: Image.Header, _ what: String) throws(WireError) {
        guard header.width * header.height <= configuration.maxPixels else {
            throw WireError(.tooManyPixels, "\(what) is \(header.width)×\(header.height) pixels; the limit is \(configuration.maxPixels) pixels",
                            limit: configuration.maxPixels)
        }
        let (long, short) = (max(header.width, header.height), min(header.width, header.height))
        guard short * Self.maxEngineSide >= long else {
            throw WireError(.tooManyPixels, "\(what) is \(header.width)×\(header.height) pixels: reduced to the longest side the engine reads, "
                            + "\(Self.maxEngineSide) pixels, it would be less than a pixel across")
        }
    }

    func read(_ request: OCRRequest, image bytes: [UInt8]) throws(WireError) -> Recognition {
        let start = Instant.now()
        guard !bytes.isEmpty else { throw WireError(.notAnImage, "the image frame is empty") }
        guard bytes.count <= configuration.maxImageBytes else {
            throw WireError(.tooLarge, "the image has \(bytes.count) bytes; the limit is \(configuration.maxImageBytes)", limit: configuration.maxImageBytes)
        }
        if PDFDocument.sniff(bytes) { return try recognizePDF(request, bytes: bytes) }
        let header: Image.Header
        do { header = try Image.header(bytes) } catch { throw Self.wire(error) }
        try checkSize(header, "the image")
        let pageNumbers = try request.pageNumbers(pageCount: header.pages, maxPages: configuration.maxPages, noun: "the image")
        // TIFF pages may differ in size: size (and limit) each page by its own header, not page 1's.
        var pageHeaders: [Int: Image.Header] = [:]
        if header.format == .tiff {
            for number in Set(pageNumbers) {
                var pageHeader = header
                do { (pageHeader.width, pageHeader.height) = try Image.tiffPageSize(bytes, page: number - 1) } catch { throw Self.wire(error) }
                try checkSize(pageHeader, "page \(number)")
                pageHeaders[number] = pageHeader
            }
        }
        let plan = try LanguagePlan(requested: request.languages, engines: engines, configuration: configuration)
        let mode = request.mode ?? .document
        let outputs = Set(request.outputs ?? [.result])
        var session = EngineSession(engines, plan: plan)
        let policy = try EnginePolicy(request.engine, languages: session.pictureLanguages, engines: engines, configuration: configuration)
        // The first reader is made before decoding (a language set's first use on this thread), and
        // making it is not decoding.
        let firstEngine = try session.reader(policy.first).engineName
        let exif = header.format == .jpeg ? EXIFOrientation.read(jpeg: bytes) : 1
        var recognizeSeconds = 0.0
        var pages: [OCRResult.Page] = []
        var steps: [OCRResult.Step] = []
        var engineNames: [String] = []
        var languages: [String] = []
        var missing: EngineRole?
        var decodeSeconds = Instant.now().seconds(since: start) - session.loadSeconds
        for number in pageNumbers {
            let source = PageSource.file(bytes, header: pageHeaders[number] ?? header, page: number - 1, exif: exif)
            let read = try readPage(source, number: number, request: request, mode: mode, outputs: outputs, policy: policy, plan: plan, session: &session)
            if !engineNames.contains(read.engine) { engineNames.append(read.engine) }
            languages += read.languages.filter { !languages.contains($0) }
            missing = missing ?? read.missing
            decodeSeconds += read.prepareSeconds
            recognizeSeconds += read.recognizeSeconds
            pages.append(read.page)
            steps += read.steps.map { var step = $0; step.page = number; return step }
        }
        let result = ResultBuilder.result(pages: pages, engines: engineNames, noEngine: firstEngine, languages: languages.isEmpty ? plan.initial : languages, mode: mode,
                                          format: header.format.rawValue, pageCount: max(1, header.pages),
                                          decodeSeconds: decodeSeconds, recognizeSeconds: recognizeSeconds, steps: steps)
        return Recognition(result: result, missing: missing)
    }

    static func wire(_ error: ImageError) -> WireError {
        switch error.code {
        case .notAnImage: WireError(.notAnImage, error.message)
        case .unsupportedFormat: WireError(.unsupportedFormat, error.message)
        case .corrupt: WireError(.corruptImage, error.message)
        case .tooManyPixels: WireError(.tooManyPixels, error.message)
        case .tooManyPages: WireError(.tooManyPages, error.message)
        case .internalFailure: WireError(.internal, error.message)
        }
    }
}
