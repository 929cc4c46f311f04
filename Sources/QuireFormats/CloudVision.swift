import QuireWire

/// Google Cloud Vision v1 `AnnotateImageResponse` for text detection (`google/cloud/vision/v1/
/// image_annotator.proto`, `text_annotation.proto`), in the proto3 JSON mapping Google's REST API
/// answers with: lowerCamelCase names, enums as their names, and fields at their default value left
/// out — a vertex at x = 0 is `{"y": 12}`, a confidence of 0 is absent, a response without text is `{}`.
public enum CloudVision {
    /// The two text features, and the Quire mode each reads with.
    public enum Feature: String, Codable, Sendable, CaseIterable {
        /// Sparse text in photos; no confidences in `fullTextAnnotation` unless asked for with
        /// `imageContext.textDetectionParams.enableTextDetectionConfidenceScore`.
        case textDetection = "TEXT_DETECTION"
        /// Dense documents; confidences at every level.
        case documentTextDetection = "DOCUMENT_TEXT_DETECTION"

        /// The Quire `ocr` request's `mode` for this feature.
        public var mode: String { self == .textDetection ? "text" : "document" }
    }

    public struct Response: Codable, Sendable, Equatable {
        public var textAnnotations: [EntityAnnotation]?
        public var fullTextAnnotation: TextAnnotation?
        /// Set instead of the annotations when this image failed (the batch still answers 200).
        public var error: Status?

        public init(textAnnotations: [EntityAnnotation]? = nil, fullTextAnnotation: TextAnnotation? = nil, error: Status? = nil) {
            self.textAnnotations = textAnnotations
            self.fullTextAnnotation = fullTextAnnotation
            self.error = error
        }
    }

    /// `images:annotate`'s body: one response per request, in order.
    public struct BatchResponse: Codable, Sendable, Equatable {
        public var responses: [Response]

        public init(responses: [Response]) { self.responses = responses }
    }

    /// `google.rpc.Status`: a gRPC code (3 INVALID_ARGUMENT, 8 RESOURCE_EXHAUSTED, 13 INTERNAL, 14
    /// UNAVAILABLE, …) and a message.
    public struct Status: Codable, Sendable, Equatable {
        public var code: Int
        public var message: String

        public init(code: Int, message: String) {
            self.code = code
            self.message = message
        }
    }

    public struct EntityAnnotation: Codable, Sendable, Equatable {
        /// Only on the first annotation (the whole text): its language.
        public var locale: String?
        public var description: String
        public var boundingPoly: BoundingPoly
    }

    /// Pixels of an image in `vertices`; a PDF page's in `normalizedVertices`, fractions of the page's
    /// width and height (Google answers `files:annotate` on a PDF so).
    public struct BoundingPoly: Codable, Sendable, Equatable {
        public var vertices: [Vertex]?
        public var normalizedVertices: [NormalizedVertex]?
    }

    /// proto3 `int32 x, y` (pixels): a zero is left out.
    public typealias Vertex = ProtoPoint<Int>
    /// proto3 `float x, y` in 0…1: a zero is left out.
    public typealias NormalizedVertex = ProtoPoint<Double>

    /// A point in proto3's JSON mapping, which leaves out a coordinate at its default, zero.
    public struct ProtoPoint<Value: Codable & Numeric & Sendable>: Codable, Sendable, Equatable {
        public var x: Value
        public var y: Value

        public init(x: Value, y: Value) { self.x = x; self.y = y }

        enum CodingKeys: String, CodingKey { case x, y }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            x = try c.decodeIfPresent(Value.self, forKey: .x) ?? 0
            y = try c.decodeIfPresent(Value.self, forKey: .y) ?? 0
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            if x != 0 { try c.encode(x, forKey: .x) }
            if y != 0 { try c.encode(y, forKey: .y) }
        }
    }

    public struct TextAnnotation: Codable, Sendable, Equatable {
        public var pages: [Page]
        public var text: String
    }

    /// `TextAnnotation.DetectedLanguage`: a BCP-47 code and the confidence of the identification,
    /// 0…1 (proto3 `float`). A language known only as the model that read the text has no confidence:
    /// absent, proto3's default 0.
    public struct DetectedLanguage: Codable, Sendable, Equatable {
        public var languageCode: String
        public var confidence: Double?
    }

    public enum BreakType: String, Codable, Sendable {
        case space = "SPACE", sureSpace = "SURE_SPACE", eolSureSpace = "EOL_SURE_SPACE", hyphen = "HYPHEN", lineBreak = "LINE_BREAK"
    }

    public struct DetectedBreak: Codable, Sendable, Equatable {
        public var type: BreakType
    }

    public struct TextProperty: Codable, Sendable, Equatable {
        public var detectedLanguages: [DetectedLanguage]?
        public var detectedBreak: DetectedBreak?

        /// nil when it would be empty (proto3 JSON leaves an empty message's field out only when unset;
        /// Google does not set it).
        static func make(languages: [String], break brk: BreakType? = nil) -> TextProperty? {
            make(detected: nil, languages: languages, break: brk)
        }

        /// The languages identified in the text, with their confidences, most likely first; where none
        /// were identified, the models that read it, without a confidence.
        static func make(detected: [OCRResult.DetectedLanguage]?, languages: [String], break brk: BreakType? = nil) -> TextProperty? {
            let found: [DetectedLanguage]
            if let detected, !detected.isEmpty {
                found = detected.map { DetectedLanguage(languageCode: $0.language, confidence: $0.confidence > 0 ? AzureRead.rounded($0.confidence) : nil) }
            } else {
                found = languages.map { DetectedLanguage(languageCode: $0, confidence: nil) }
            }
            guard !found.isEmpty || brk != nil else { return nil }
            return TextProperty(detectedLanguages: found.isEmpty ? nil : found, detectedBreak: brk.map(DetectedBreak.init))
        }
    }

    public struct Page: Codable, Sendable, Equatable {
        public var property: TextProperty?
        public var width: Int
        public var height: Int
        public var blocks: [Block]
        public var confidence: Double?
    }

    public struct Block: Codable, Sendable, Equatable {
        public var property: TextProperty?
        public var boundingBox: BoundingPoly
        public var paragraphs: [Paragraph]
        /// Always `TEXT`: Tesseract's text blocks are the only ones Quire returns.
        public var blockType: String
        public var confidence: Double?
    }

    public struct Paragraph: Codable, Sendable, Equatable {
        public var property: TextProperty?
        public var boundingBox: BoundingPoly
        public var words: [Word]
        public var confidence: Double?
    }

    public struct Word: Codable, Sendable, Equatable {
        public var property: TextProperty?
        public var boundingBox: BoundingPoly
        public var symbols: [Symbol]
        public var confidence: Double?
    }

    public struct Symbol: Codable, Sendable, Equatable {
        public var property: TextProperty?
        public var boundingBox: BoundingPoly
        public var text: String
        public var confidence: Double?
    }

    /// The response for `feature`. With `TEXT_DETECTION` the `fullTextAnnotation` carries no
    /// confidences unless `confidenceScores` (Google's `enableTextDetectionConfidenceScore`) is set.
    /// A PDF page (one with a `resolution`) is measured as `files:annotate` measures one: its width and
    /// height in points, its polygons normalized.
    public static func response(_ result: OCRResult, feature: Feature, confidenceScores: Bool = false) -> Response {
        let withConfidence = feature == .documentTextDetection || confidenceScores
        func confidence(_ c: Double?) -> Double? {
            guard withConfidence, let c, c > 0 else { return nil }
            return AzureRead.rounded(c)
        }
        var words: [EntityAnnotation] = []
        var allPoints: [Vertex] = []
        var lines: [String] = []
        var pages: [Page] = []
        for page in result.pages {
            let geometry = PageGeometry(page)
            let perInch = page.resolution.flatMap { $0 > 0 ? Double($0) : nil }
            func poly(_ polygon: [OCRResult.Point], _ box: OCRResult.Box) -> BoundingPoly {
                let quad = geometry.quad(polygon, box: box)
                guard perInch != nil else { return BoundingPoly(vertices: quad.map { Vertex(x: $0.x, y: $0.y) }) }
                func fraction(_ v: Int, _ of: Int) -> Double { (Double(v) / Double(max(1, of)) * 1_000_000).rounded() / 1_000_000 }
                return BoundingPoly(normalizedVertices: quad.map { NormalizedVertex(x: fraction($0.x, geometry.width), y: fraction($0.y, geometry.height)) })
            }
            var blocks: [Block] = []
            for block in page.blocks {
                var paragraphs: [Paragraph] = []
                for paragraph in block.paragraphs {
                    var paragraphWords: [Word] = []
                    for line in paragraph.lines {
                        lines.append(line.words.map(\.text).joined(separator: " "))
                        for word in line.words where !word.text.isEmpty {
                            let wordPoly = poly(word.polygon, word.boundingBox)
                            words.append(EntityAnnotation(locale: nil, description: word.text, boundingPoly: wordPoly))
                            allPoints += wordPoly.vertices ?? []
                            let brk: BreakType = switch word.break {
                            case "space": .space
                            case "line", "hyphen": .eolSureSpace
                            default: .lineBreak
                            }
                            // A word read without symbols (`symbols: false`) is one symbol: its text still
                            // joins up the same way.
                            let source = word.symbols.isEmpty
                                ? [OCRResult.Symbol(text: word.text, boundingBox: word.boundingBox, polygon: word.polygon, confidence: word.confidence)]
                                : word.symbols
                            let symbols = source.enumerated().map { index, symbol in
                                Symbol(property: index == source.count - 1 ? TextProperty.make(languages: [], break: brk) : nil,
                                       boundingBox: poly(symbol.polygon, symbol.boundingBox), text: symbol.text,
                                       confidence: confidence(symbol.confidence))
                            }
                            // The identifier reads lines, so a word's language is its line's; a word
                            // of a line too short to identify keeps the model that read it.
                            paragraphWords.append(Word(property: TextProperty.make(detected: line.detectedLanguages, languages: word.languages), boundingBox: wordPoly,
                                                       symbols: symbols, confidence: confidence(word.confidence)))
                        }
                    }
                    guard !paragraphWords.isEmpty else { continue }
                    paragraphs.append(Paragraph(property: TextProperty.make(detected: DetectedLanguages.of(paragraph), languages: paragraph.languages),
                                                boundingBox: poly(paragraph.polygon, paragraph.boundingBox), words: paragraphWords,
                                                confidence: confidence(paragraph.confidence)))
                }
                guard !paragraphs.isEmpty else { continue }
                blocks.append(Block(property: TextProperty.make(detected: block.detectedLanguages, languages: block.languages), boundingBox: poly(block.polygon, block.boundingBox),
                                    paragraphs: paragraphs, blockType: "TEXT", confidence: confidence(block.confidence)))
            }
            let points = { (pixels: Int) in perInch.map { Int((Double(pixels) * 72 / $0).rounded()) } ?? pixels }
            pages.append(Page(property: TextProperty.make(detected: page.detectedLanguages, languages: page.languages), width: points(geometry.width), height: points(geometry.height),
                              blocks: blocks, confidence: confidence(page.confidence)))
        }
        guard !words.isEmpty else { return Response() }
        // Each line ends with a newline, the last one too, as in Google's `text`.
        let text = lines.filter { !$0.isEmpty }.map { $0 + "\n" }.joined()
        // The whole text's box is in pixels; a PDF page's words have normalized polygons only, and
        // Google's file responses carry no `textAnnotations`.
        guard !allPoints.isEmpty else { return Response(fullTextAnnotation: TextAnnotation(pages: pages, text: text)) }
        let xs = allPoints.map(\.x), ys = allPoints.map(\.y)
        let (x0, y0, x1, y1) = (xs.min() ?? 0, ys.min() ?? 0, xs.max() ?? 0, ys.max() ?? 0)
        // `locale` is the language of the whole text: the first page's most likely one.
        let whole = EntityAnnotation(locale: result.pages.first.flatMap { DetectedLanguages.main($0) } ?? result.metadata.languages.first, description: text,
                                     boundingPoly: BoundingPoly(vertices: [Vertex(x: x0, y: y0), Vertex(x: x1, y: y0), Vertex(x: x1, y: y1), Vertex(x: x0, y: y1)]))
        return Response(textAnnotations: [whole] + words, fullTextAnnotation: TextAnnotation(pages: pages, text: text))
    }
}

extension CloudVision {
    /// `ImageAnnotationContext`: which page of which file a response is for.
    public struct ImageAnnotationContext: Codable, Sendable, Equatable {
        public var uri: String?
        public var pageNumber: Int
    }

    /// One page's `AnnotateImageResponse` inside a file's response, with its `context`.
    public struct FilePageResponse: Codable, Sendable, Equatable {
        public var textAnnotations: [EntityAnnotation]?
        public var fullTextAnnotation: TextAnnotation?
        public var error: Status?
        public var context: ImageAnnotationContext
    }

    public struct InputConfigEcho: Codable, Sendable, Equatable {
        public var mimeType: String?
    }

    /// `AnnotateFileResponse`: one response per page read, in the order asked, and the file's page count.
    public struct FileResponse: Codable, Sendable, Equatable {
        public var inputConfig: InputConfigEcho?
        public var responses: [FilePageResponse]?
        public var totalPages: Int?
        /// Set instead when the file could not be read at all.
        public var error: Status?

        public init(inputConfig: InputConfigEcho? = nil, responses: [FilePageResponse]? = nil, totalPages: Int? = nil, error: Status? = nil) {
            self.inputConfig = inputConfig
            self.responses = responses
            self.totalPages = totalPages
            self.error = error
        }
    }

    /// `files:annotate`'s body: one response per file, in order.
    public struct BatchFileResponse: Codable, Sendable, Equatable {
        public var responses: [FileResponse]

        public init(responses: [FileResponse]) { self.responses = responses }
    }

    /// A file's response from a Quire result: each page its own response (a page that could not be
    /// read has its error, code 3 for what is wrong with it).
    public static func fileResponse(_ result: OCRResult, feature: Feature, mimeType: String?, confidenceScores: Bool = false) -> FileResponse {
        let pages = result.pages.map { page -> FilePageResponse in
            let context = ImageAnnotationContext(uri: nil, pageNumber: page.pageNumber)
            if let error = page.error {
                return FilePageResponse(textAnnotations: nil, fullTextAnnotation: nil,
                                        error: Status(code: error.code == .internal ? 13 : 3, message: error.message), context: context)
            }
            var single = result
            single.pages = [page]
            let response = Self.response(single, feature: feature, confidenceScores: confidenceScores)
            return FilePageResponse(textAnnotations: response.textAnnotations, fullTextAnnotation: response.fullTextAnnotation, error: nil, context: context)
        }
        return FileResponse(inputConfig: mimeType.map { InputConfigEcho(mimeType: $0) }, responses: pages, totalPages: result.metadata.pageCount)
    }
}
