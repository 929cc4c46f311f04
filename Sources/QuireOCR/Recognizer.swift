import Foundation
import QuireSupport
import QuireWire
import Tesseract

/// Reads images: decode, orient, scale, recognise, build the result. One per worker thread: it owns
/// that thread's engines, created on first use for each language set and reused afterwards.
public final class Recognizer {
    public let configuration: OCRConfiguration
    private var engines: [String: Engine] = [:]
    private var engineUse: [String] = []
    private let installed: Set<String>

    public init(configuration: OCRConfiguration) {
        self.configuration = configuration
        installed = Set(Engine.installedLanguages(dataPath: configuration.dataPath))
    }

    /// Installed Tesseract packs.
    public var installedLanguages: [String] { installed.sorted() }

    /// The engine for a language set, made once and kept (least recently used ones are dropped).
    func engine(for languages: [String]) throws(WireError) -> Engine {
        let key = languages.joined(separator: "+")
        if let engine = engines[key] {
            engineUse.removeAll { $0 == key }
            engineUse.append(key)
            return engine
        }
        do {
            let engine = try Engine(dataPath: configuration.dataPath, languages: key)
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
        let header: Image.Header
        do { header = try Image.header(bytes) } catch { throw Self.wire(error) }
        guard header.width * header.height <= configuration.maxPixels else {
            throw WireError(.tooManyPixels, "the image is \(header.width)×\(header.height) pixels; the limit is \(configuration.maxPixels) pixels",
                            limit: configuration.maxPixels)
        }
        let pageNumbers = request.pages ?? Array(1...max(1, header.pages))
        guard pageNumbers.count <= configuration.maxPages else {
            throw WireError(.tooManyPages, "\(pageNumbers.count) pages requested; the limit is \(configuration.maxPages)", limit: configuration.maxPages)
        }
        if let missing = pageNumbers.first(where: { $0 > max(1, header.pages) }) {
            throw WireError(.badRequest, "page \(missing) requested; the image has \(max(1, header.pages))")
        }
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
        let segmentation: PageSegmentation = switch mode {
        case .document: .auto
        case .text: .sparse
        case .line: .singleLine
        }

        for number in pageNumbers {
            let t0 = Instant.now()
            let prepared = try prepare(bytes, header: pageHeaders[number] ?? header, page: number - 1, exif: exif, request: request, engine: engine)
            let t1 = Instant.now()
            var quarterTurns = prepared.quarterTurns
            var upright = prepared.image
            var transform = prepared.toStored
            if request.autoOrientation == true, let osd = try orientationEngine()?.detectOrientation(upright), osd.rotation != 0, osd.confidence > 1.5 {
                let turns = osd.rotation / 90
                do {
                    // The page as EXIF left it, at the uploaded resolution (exact, not from scaled pixels).
                    let pageHeader = pageHeaders[number] ?? header
                    let sideways = prepared.quarterTurns % 2 == 1
                    let before = Affine.rotation(quarterTurns: turns,
                                                 width: Double(sideways ? pageHeader.height : pageHeader.width),
                                                 height: Double(sideways ? pageHeader.width : pageHeader.height))
                    let dpi = upright.resolution
                    upright = try upright.rotated(quarterTurns: turns)
                    upright.setResolution(dpi)
                    transform = before.inverse.then(transform)
                    quarterTurns += turns
                } catch { throw Self.wire(error) }
            }
            let recognized: RecognizedPage
            do { recognized = try engine.recognize(upright, segmentation: segmentation) } catch {
                throw WireError(.engineFailure, error.message)
            }
            var renderings: [String: String] = [:]
            for output in outputs where output != .result {
                if let rendering = Engine.Rendering(rawValue: output.rawValue) {
                    renderings[output.rawValue] = Renderings.rescale(engine.render(rendering, pageNumber: number - 1), rendering,
                                                                     scale: prepared.scale)
                }
            }
            engine.clear()
            let t2 = Instant.now()
            decodeSeconds += t1.seconds(since: t0)
            recognizeSeconds += t2.seconds(since: t1)
            // The upright page at the uploaded resolution, exactly (not scaled back from recognition pixels).
            let pageHeader = pageHeaders[number] ?? header
            let sideways = quarterTurns % 2 == 1
            let size = (width: sideways ? pageHeader.height : pageHeader.width, height: sideways ? pageHeader.width : pageHeader.height)
            pages.append(ResultBuilder.page(recognized, number: number, size: size, scale: prepared.scale, quarterTurns: quarterTurns,
                                            mirrored: prepared.mirrored, transform: transform,
                                            renderings: renderings.isEmpty ? nil : renderings))
        }
        let encodeStart = Instant.now()
        var result = OCRResult(
            text: pages.map(\.text).joined(separator: "\u{0C}"),
            pages: pages,
            metadata: .init(engine: "tesseract \(Engine.version)", languages: languages.map(Languages.bcp47(forTesseract:)),
                            mode: mode.rawValue, format: header.format.rawValue, pageCount: max(1, header.pages),
                            timings: .init(decodeMs: decodeSeconds * 1_000, recognizeMs: recognizeSeconds * 1_000, encodeMs: 0)))
        result.metadata.timings.encodeMs = Instant.now().seconds(since: encodeStart) * 1_000
        return (result, [])
    }

    private var osdEngine: Engine?
    private var osdUnavailable = false

    private func orientationEngine() throws(WireError) -> Engine? {
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

    struct Prepared {
        var image: Image
        /// Recognition pixels per uploaded pixel.
        var scale: Double
        var quarterTurns: Int
        var mirrored: Bool
        /// Upright page coordinates (uploaded resolution) → stored pixel grid.
        var toStored: Affine
    }

    /// Decodes one page, turns it upright (EXIF), scales it for recognition and sets its resolution.
    /// The median text-line height of a large page, in uploaded pixels, measured by layout analysis
    /// on a copy of about 1.5 MP; nil when no text line is found at that size (then small text is
    /// likely and the page is not reduced) or when the file declares a scan's resolution. Returns the full decode too when it had to make one
    /// (not for JPEG, which is probed from a cheap reduced decode).
    func medianLineHeight(_ bytes: [UInt8], header: Image.Header, page: Int, exif: Int, engine: Engine) throws(ImageError) -> (Double?, Image?) {
        let pixels = Double(header.width * header.height)
        let probeScale = min(1, (1_500_000 / pixels).squareRoot())
        var full: Image?
        var probe: Image
        if header.format == .jpeg {
            var reduction = 1
            while reduction < 8 && 1.0 / Double(reduction * 2) >= probeScale { reduction *= 2 }
            probe = try Image.decode(bytes, format: .jpeg, page: page, jpegReduction: reduction)
        } else {
            full = try Image.decode(bytes, format: header.format, page: page)
            probe = full!
        }
        // A file that declares a scanner's resolution is a scanned document: its text is page-sized and
        // probing would only cost time. Phone photos and screenshots declare none, or 72 dpi.
        if probe.resolution >= 150 { return (nil, full) }
        let factor = probeScale * Double(header.width) / Double(probe.width)
        if abs(factor - 1) > 0.01 { probe = try probe.scaled(by: factor) }
        // Lines are found on the upright page: turned text would look like columns.
        let turns = EXIFOrientation.correction(for: exif).quarterTurns
        let probeToUploaded = Double(header.width) / Double(probe.width)
        if turns != 0 { probe = try probe.rotated(quarterTurns: turns) }
        probe.setResolution(300)
        let heights = engine.textLineHeights(probe).filter { $0 >= 4 }.sorted()
        guard !heights.isEmpty else { return (nil, full) }
        return (Double(heights[heights.count / 2]) * probeToUploaded, full)
    }

    func prepare(_ bytes: [UInt8], header: Image.Header, page: Int, exif: Int, request: OCRRequest, engine: Engine) throws(WireError) -> Prepared {
        do throws(ImageError) {
            let pixels = header.width * header.height
            var scale = 1.0
            var decoded: Image?
            if pixels > configuration.textSizeProbePixels {
                let (lineHeight, full) = try medianLineHeight(bytes, header: header, page: page, exif: exif, engine: engine)
                decoded = full
                if let lineHeight, lineHeight > configuration.targetLineHeight {
                    let floor = request.mode == .text ? configuration.minimumSparseTextScale : 0.2
                    scale = max(floor, configuration.targetLineHeight / lineHeight)
                }
            }
            if Double(pixels) * scale * scale > Double(configuration.maxRecognitionPixels) {
                scale = (Double(configuration.maxRecognitionPixels) / Double(pixels)).squareRoot()
            }
            // A JPEG can be decoded at 1/2, 1/4 or 1/8 size for a fraction of the cost.
            var reduction = 1
            if header.format == .jpeg {
                while reduction < 8 && 1.0 / Double(reduction * 2) >= scale { reduction *= 2 }
            }
            var image: Image
            if let decoded { image = decoded } else {
                image = try Image.decode(bytes, format: header.format, page: page, jpegReduction: reduction)
            }
            var declared = image.resolution
            // No usable resolution in the file (phone photos, screenshots) and none in the request.
            let guessed = request.dpi == nil && (declared < 70 || declared > 2_400)
            if let dpi = request.dpi { declared = dpi } else if guessed { declared = configuration.fallbackDPI }
            declared = max(1, declared / reduction)
            // Low-resolution scans read better at about 300 dpi.
            let uploadedWidth = Double(header.width)
            let stillToScale = scale * uploadedWidth / Double(image.width)
            var factor = stillToScale
            if scale == 1, declared < 200, pixels * 4 <= configuration.maxRecognitionPixels {
                factor = min(3, 300 / Double(declared))
                scale = factor
            }
            if abs(factor - 1) > 0.01 {
                image = try image.scaled(by: factor)
            }
            let actualScale = Double(image.width) / uploadedWidth
            let (turns, mirror) = EXIFOrientation.correction(for: exif)
            // Transform from stored (at uploaded resolution) to upright, then invert.
            let storedWidth = uploadedWidth, storedHeight = Double(header.height)
            var toUpright = Affine.rotation(quarterTurns: turns, width: storedWidth, height: storedHeight)
            if turns != 0 { image = try image.rotated(quarterTurns: turns) }
            if mirror {
                let uprightWidth = turns % 2 == 1 ? storedHeight : storedWidth
                toUpright = toUpright.then(.mirror(width: uprightWidth))
                image = try image.flippedHorizontally()
            }
            // The fallback only decides the scaling above. Told 300 dpi, Tesseract takes sign-sized letters
            // for non-text and reads nothing; left unset, it estimates the resolution from the text, as
            // the CLI does.
            image.setResolution(guessed ? 0 : Int((Double(declared) * factor).rounded()))
            return Prepared(image: image, scale: actualScale, quarterTurns: turns, mirrored: mirror, toStored: toUpright.inverse)
        } catch {
            throw Self.wire(error)
        }
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
