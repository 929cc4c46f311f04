import Foundation
import QuireSupport
import QuireWire
import Imaging
import QuireRecognition
import QuirePDF
import SceneText
import Tesseract

/// Reads images: decode, orient, scale, recognise, build the result. One per worker thread: it owns
/// that thread's engines, created on first use for each language set and reused afterwards.
public final class Recognizer {
    public let configuration: OCRConfiguration
    private var engines: [String: any TextRecognizer] = [:]
    /// This thread's scene engine once opened, or why it could not be (``sceneEngine(languages:)``).
    var scene: SceneEngine?
    var sceneUnavailable: String?
    private var engineUse: [String] = []
    private let installed: Set<String>

    public init(configuration: OCRConfiguration) {
        self.configuration = configuration
        installed = Set(Engine.installedLanguages(dataPath: configuration.dataPath))
    }

    /// The version of the Tesseract library loaded (Debian 12's 5.3.0; see docs/ocr.md).
    public static var engineVersion: String { Engine.version }

    /// The PDF library this process reads PDFs with (`pdfium chromium/8149`), or why PDF input is off.
    public static var pdfLibrary: String {
        PDFDocument.libraryVersion.map { "pdfium " + $0 } ?? "off, " + (PDFDocument.unavailableReason ?? "no library")
    }

    /// The runtime the scene engine runs on (`onnxruntime 1.32.0`), or why it is off.
    public static var sceneRuntime: String {
        SceneEngine.runtimeVersion.map { "onnxruntime " + $0 } ?? "off, " + (SceneEngine.unavailableReason ?? "no runtime")
    }

    /// Installed Tesseract packs.
    public var installedLanguages: [String] { installed.sorted() }

    /// The engine for a language set, made once and kept (least recently used ones are dropped).
    func engine(for languages: [String]) throws(WireError) -> any TextRecognizer {
        let key = languages.joined(separator: "+")
        if let engine = engines[key] {
            engineUse.removeAll { $0 == key }
            engineUse.append(key)
            return engine
        }
        do throws(RecognitionError) {
            let variables = configuration.engineVariables.sorted(by: { $0.key < $1.key })
            let engine = try Engine(dataPath: configuration.dataPath, languages: key, variables: variables.map { (name: $0.key, value: $0.value) })
            engine.rawLineImages = configuration.rawLineImages
            // Init ignores names it does not know; setting them again finds those.
            for (name, value) in variables where !engine.setVariable(name, value) {
                throw RecognitionError(.initFailed, "Tesseract does not take '\(name)=\(value)' (QUIRE_TESSERACT_VARIABLES)")
            }
            engines[key] = engine
            engineUse.append(key)
            if engineUse.count > configuration.enginesPerThread {
                engines[engineUse.removeFirst()] = nil
            }
            return engine
        } catch {
            throw WireError(.engineFailure, "Tesseract could not load the languages '\(key)': \(error.message)")
        }
    }

    /// Resolves requested names to installed packs, or `unknown_language` naming what is installed.
    func resolveLanguages(_ requested: [String]) throws(WireError) -> [String] {
        var packs: [String] = []
        for name in requested {
            guard let pack = Languages.resolve(name, installed: installed), pack != "osd" else {
                let list = installed.filter { $0 != "osd" }.sorted().joined(separator: ", ")
                throw WireError(.unknownLanguage, "no installed language pack for '\(name)'; installed: \(list)")
            }
            if !packs.contains(pack) { packs.append(pack) }
        }
        return packs
    }

    /// Reads `image` as `request` asks. Every failure is a typed `WireError`.
    public func recognize(_ request: OCRRequest, image bytes: [UInt8]) throws(WireError) -> (result: OCRResult, renderings: [[UInt8]]) {
        let start = Instant.now()
        guard !bytes.isEmpty else { throw WireError(.notAnImage, "the image frame is empty") }
        guard bytes.count <= configuration.maxImageBytes else {
            throw WireError(.tooLarge, "the image has \(bytes.count) bytes; the limit is \(configuration.maxImageBytes)", limit: configuration.maxImageBytes)
        }
        if PDFDocument.sniff(bytes) { return (try recognizePDF(request, bytes: bytes), []) }
        let header: Image.Header
        do { header = try Image.header(bytes) } catch { throw Self.wire(error) }
        guard header.width * header.height <= configuration.maxPixels else {
            throw WireError(.tooManyPixels, "the image is \(header.width)×\(header.height) pixels; the limit is \(configuration.maxPixels) pixels",
                            limit: configuration.maxPixels)
        }
        let pageNumbers = try request.pageNumbers(pageCount: header.pages, maxPages: configuration.maxPages, noun: "the image")
        // TIFF pages may differ in size: size (and limit) each page by its own header, not page 1's.
        var pageHeaders: [Int: Image.Header] = [:]
        if header.format == .tiff {
            for number in Set(pageNumbers) {
                var pageHeader = header
                do { (pageHeader.width, pageHeader.height) = try Image.tiffPageSize(bytes, page: number - 1) } catch { throw Self.wire(error) }
                guard pageHeader.width * pageHeader.height <= configuration.maxPixels else {
                    throw WireError(.tooManyPixels, "page \(number) is \(pageHeader.width)×\(pageHeader.height) pixels; the limit is \(configuration.maxPixels) pixels",
                                    limit: configuration.maxPixels)
                }
                pageHeaders[number] = pageHeader
            }
        }
        let languages = try resolveLanguages(request.languages ?? configuration.defaultLanguages)
        let mode = request.mode ?? .document
        let outputs = Set(request.outputs ?? [.result])
        let engineStart = Instant.now()
        let engine = try engine(for: languages)
        // Loading an engine (first use of a language set on this thread) is not decoding.
        let engineSeconds = Instant.now().seconds(since: engineStart)
        let exif = header.format == .jpeg ? EXIFOrientation.read(jpeg: bytes) : 1
        var decodeSeconds = Instant.now().seconds(since: start) - engineSeconds
        var recognizeSeconds = 0.0
        var pages: [OCRResult.Page] = []
        var allSteps: [OCRResult.Step] = []

        let choice = try engineChoice(request, languages: languages)
        var engineNames: [String] = []
        for number in pageNumbers {
            let pageHeader = pageHeaders[number] ?? header
            let source = PageSource.file(bytes, header: pageHeader, page: number - 1, exif: exif)
            let read = try readPage(source, number: number, request: request, mode: mode, outputs: outputs, engine: engine, choice: choice,
                                    languages: languages)
            if !engineNames.contains(read.engine) { engineNames.append(read.engine) }
            decodeSeconds += read.prepareSeconds
            recognizeSeconds += read.recognizeSeconds
            pages.append(read.page)
            allSteps += read.steps.map { var step = $0; step.page = number; return step }
        }
        let encodeStart = Instant.now()
        var result = OCRResult(
            text: pages.map(\.text).joined(separator: "\u{0C}"),
            pages: pages,
            metadata: .init(engine: engineNames.isEmpty ? engine.engineName : engineNames.joined(separator: " + "), languages: languages.map(Languages.bcp47(forTesseract:)),
                            mode: mode.rawValue, format: header.format.rawValue, pageCount: max(1, header.pages),
                            timings: .init(decodeMs: decodeSeconds * 1_000, recognizeMs: recognizeSeconds * 1_000, encodeMs: 0),
                            steps: allSteps))
        result.metadata.timings.encodeMs = Instant.now().seconds(since: encodeStart) * 1_000
        return (result, [])
    }

    private var osdEngine: (any OrientationDetector)?
    private var osdUnavailable = false

    func orientationEngine() -> (any OrientationDetector)? {
        if osdUnavailable { return nil }
        if let osdEngine { return osdEngine }
        guard installed.contains("osd") else { osdUnavailable = true; return nil }
        do {
            osdEngine = try Engine(dataPath: configuration.dataPath, languages: "osd")
        } catch {
            osdUnavailable = true
        }
        return osdEngine
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
