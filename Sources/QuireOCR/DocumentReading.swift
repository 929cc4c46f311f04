import Foundation
import Imaging
import QuirePDF
import QuireRecognition
import QuireSupport
import QuireWire

/// PDF input: each page read from its own text layer where it has a usable one, else rendered and read
/// like an image. A page that cannot be loaded or rendered gets an `error` in the result and the
/// others are still read; a file that cannot be opened at all is a typed error.
extension Recognizer {
    /// The resolution of a PDF page's coordinates when it is read from its text layer (nothing is rendered).
    static let textLayerDPI = 300.0
    /// Pictures rendered for OCR at their own resolution within these bounds: below, small print turns to
    /// mush before the glyph scaling can help; above, the pixels cost time without adding detail.
    static let renderDPI = 100.0...400.0

    func recognizePDF(_ request: OCRRequest, bytes: [UInt8]) throws(WireError) -> Recognition {
        let document: PDFDocument
        do { document = try PDFDocument(bytes) } catch { throw wire(error) }
        let pageNumbers = try request.pageNumbers(pageCount: document.pageCount, maxPages: configuration.maxPages, noun: "the PDF")
        let plan = try LanguagePlan(requested: request.languages, engines: engines, configuration: configuration)
        let mode = request.mode ?? .document
        let outputs = Set(request.outputs ?? [.result])
        let symbols = request.symbols ?? true
        // Engines are made for the first page that needs OCR: a born-digital document needs none.
        var session = EngineSession(engines, plan: plan)
        let policy = try EnginePolicy(request.engine, languages: session.pictureLanguages, engines: engines, configuration: configuration)
        var languages: [String] = []
        var missing: EngineRole?
        var engineNames: [String] = []
        var decodeSeconds = 0.0, recognizeSeconds = 0.0
        var pages: [OCRResult.Page] = []
        var steps: [OCRResult.Step] = []
        var failures: [WireError] = []

        for number in pageNumbers {
            let index = number - 1
            var pageSteps: [OCRResult.Step] = []
            do throws(WireError) {
                let t0 = Instant.now()
                // One load of the page: what it holds, and its text layer's characters where they will be read.
                let inspected: (size: (width: Double, height: Double), contents: PDFDocument.Contents, characters: [LayerCharacter]?)
                do {
                    inspected = try document.inspect(index, dpi: Self.textLayerDPI) { request.textLayer != .ignore && Self.layerIsUsable($0) }
                } catch { throw wire(error) }
                let contents = inspected.contents
                var parameters: [String: Double] = [
                    "visibleCharacters": Double(contents.visibleCharacters), "invisibleCharacters": Double(contents.invisibleCharacters),
                    "unmappedCharacters": Double(contents.unmappedCharacters), "imageCover": (contents.imageCover * 1_000).rounded() / 1_000,
                ]
                if let characters = inspected.characters {
                    // The layer's words are in the language its text is in, among the plan's.
                    let layerText = String(String.UnicodeScalarView(characters.map(\.scalar)))
                    let found = plan.identify(layerText, readWith: plan.initial).first.flatMap { Languages.resolve($0.language, installed: Set(plan.candidates)) }
                    let language = plan.hinted ? plan.initial.first : found ?? plan.initial.first
                    let recognized = TextLayer.page(characters, width: PDFDocument.pixels(inspected.size.width, dpi: Self.textLayerDPI),
                                                    height: PDFDocument.pixels(inspected.size.height, dpi: Self.textLayerDPI),
                                                    language: language, symbols: symbols)
                    parameters["ms"] = t0.millisecondsSince
                    pageSteps.append(.init(step: "textLayer", applied: true, parameters: parameters))
                    var page = ResultBuilder.page(recognized, number: number, size: (recognized.width, recognized.height), toPage: .identity, scale: 1,
                                                  quarterTurns: 0, mirrored: false, deskewAngle: 0, transform: .identity)
                    page.resolution = Int(Self.textLayerDPI)
                    if let language, !languages.contains(language) { languages.append(language) }
                    LanguageReport.annotate(&page, readWith: language.map { [$0] } ?? [])
                    page.renderings = Self.renderings(of: page, outputs)
                    pages.append(page)
                    decodeSeconds += Instant.now().seconds(since: t0)
                } else {
                    let dpi = Double(request.dpi ?? Int((contents.imageResolution ?? 300).clamped(to: Self.renderDPI).rounded()))
                    let image: Image
                    do {
                        image = try document.render(index, dpi: dpi, maxPixels: configuration.maxPixels,
                                                    seconds: Double(configuration.pdfRenderTimeoutMs) / 1_000)
                    } catch { throw wire(error) }
                    parameters["renderDPI"] = dpi
                    parameters["ms"] = t0.millisecondsSince
                    pageSteps.append(.init(step: "textLayer", applied: false, parameters: parameters))
                    decodeSeconds += Instant.now().seconds(since: t0)
                    var read = try readPage(.rendered(image), number: number, request: request, mode: mode, outputs: outputs, policy: policy,
                                            plan: plan, session: &session)
                    if !engineNames.contains(read.engine) { engineNames.append(read.engine) }
                    languages += read.languages.filter { !languages.contains($0) }
                    missing = missing ?? read.missing
                    read.page.resolution = Int(dpi)
                    decodeSeconds += read.prepareSeconds
                    recognizeSeconds += read.recognizeSeconds
                    pageSteps += read.steps
                    pages.append(read.page)
                }
            } catch {
                // The page is reported and skipped; the document's other pages are still read.
                failures.append(error)
                pages.append(Self.failedPage(number, document: document, error: error))
            }
            steps += pageSteps.map { var step = $0; step.page = number; return step }
        }
        // A document none of whose pages could be read is an error like an image that cannot be.
        if failures.count == pageNumbers.count, let first = failures.first { throw first }
        let result = ResultBuilder.result(pages: pages, engines: engineNames, noEngine: "pdfium " + (PDFDocument.libraryVersion ?? "unknown build"),
                                          languages: languages.isEmpty ? plan.initial : languages, mode: mode, format: "pdf", pageCount: document.pageCount,
                                          decodeSeconds: decodeSeconds, recognizeSeconds: recognizeSeconds, steps: steps)
        return Recognition(result: result, missing: missing)
    }

    /// Whether a page's own text can stand for it: visible text, nearly all of it mapped to Unicode,
    /// and pictures (which may hold text the layer lacks) covering less than a quarter of the page.
    static func layerIsUsable(_ contents: PDFDocument.Contents) -> Bool {
        contents.visibleCharacters > 0
            && Double(contents.unmappedCharacters) <= 0.05 * Double(contents.visibleCharacters + contents.invisibleCharacters)
            && contents.imageCover < 0.25
    }

    /// An empty page that says why it could not be read, sized as the PDF page at the text layer's resolution.
    static func failedPage(_ number: Int, document: PDFDocument, error: WireError) -> OCRResult.Page {
        let size = (try? document.pageSize(number - 1)) ?? (0, 0)
        var page = OCRResult.Page(pageNumber: number, width: PDFDocument.pixels(size.0, dpi: textLayerDPI), height: PDFDocument.pixels(size.1, dpi: textLayerDPI),
                                  unit: "pixel", rotation: 0, mirrored: false, deskewAngle: 0, transform: Affine.identity.array,
                                  recognitionScale: 1, text: "", confidence: nil, languages: [], blocks: [], renderings: nil)
        page.resolution = Int(textLayerDPI)
        page.error = .init(code: error.code, message: "page \(number): \(error.message)")
        return page
    }

    func wire(_ error: PDFError) -> WireError {
        switch error.code {
        case .unavailable: WireError(.unsupportedFormat, error.message)
        case .corrupt, .noPages, .pageFailed: WireError(.corruptImage, error.message)
        case .passwordProtected: WireError(.passwordProtected, error.message)
        case .unsupportedSecurity: WireError(.unsupportedFormat, error.message)
        case .tooManyPixels: WireError(.tooManyPixels, error.message, limit: configuration.maxPixels)
        }
    }
}

extension Comparable {
    func clamped(to range: ClosedRange<Self>) -> Self { min(max(self, range.lowerBound), range.upperBound) }
}
