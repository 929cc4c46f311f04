import Foundation

/// The `ocr` service's result (`proto-json/ocr-result.schema.json`). Swift types and schema change
/// together. Coordinates are pixels of the upright image at the uploaded resolution (EXIF orientation
/// and any detected rotation applied, Quire's own scaling undone); `transform` maps them back to the
/// stored pixel grid of the uploaded file. It is a wire type (no C, no engine): clients and the
/// converters in `QuireFormats` read it without linking Tesseract.
public struct OCRResult: Codable, Sendable, Equatable {
    public var text: String
    public var pages: [Page]
    public var metadata: Metadata
    /// Binary outputs (`pdf`) sent as frames after this one, never inside the JSON; absent when none.
    public var attachments: [Attachment]?

    public init(text: String, pages: [Page], metadata: Metadata, attachments: [Attachment]? = nil) {
        self.text = text
        self.pages = pages
        self.metadata = metadata
        self.attachments = attachments
    }

    /// One binary output and the reply frame that carries it.
    public struct Attachment: Codable, Sendable, Equatable {
        /// The requested output (`pdf`).
        public var output: String
        /// 1-based frame of the reply body: 2 for the first attachment (frame 1 is this JSON).
        public var frame: Int
        public var mediaType: String
        /// The frame's length in bytes.
        public var size: Int

        public init(output: String, frame: Int, mediaType: String, size: Int) {
            self.output = output
            self.frame = frame
            self.mediaType = mediaType
            self.size = size
        }
    }

    public struct Box: Codable, Sendable, Equatable {
        public var x: Int, y: Int, width: Int, height: Int
        public init(x: Int, y: Int, width: Int, height: Int) { self.x = x; self.y = y; self.width = width; self.height = height }
    }

    public struct Point: Codable, Sendable, Equatable {
        public var x: Int, y: Int
        public init(x: Int, y: Int) { self.x = x; self.y = y }
    }

    public struct Baseline: Codable, Sendable, Equatable {
        public var start: Point
        public var end: Point
        public init(start: Point, end: Point) { self.start = start; self.end = end }
    }

    public struct Symbol: Codable, Sendable, Equatable {
        public var text: String
        public var boundingBox: Box
        public var polygon: [Point]
        @NullWhenAbsent public var confidence: Double?

        public init(text: String, boundingBox: Box, polygon: [Point], confidence: Double?) {
            self.text = text
            self.boundingBox = boundingBox
            self.polygon = polygon
            self.confidence = confidence
        }
    }

    /// One language identified in a text: a BCP-47 tag (`it`, `zh-Hant`) and how sure the identifier
    /// is, 0…1 (the share of the text in that language, lowered where the identification is unreliable).
    public struct DetectedLanguage: Codable, Sendable, Equatable, Hashable {
        public var language: String
        public var confidence: Double

        public init(language: String, confidence: Double) {
            self.language = language
            self.confidence = confidence
        }
    }

    public struct Word: Codable, Sendable, Equatable {
        public var text: String
        public var boundingBox: Box
        public var polygon: [Point]
        @NullWhenAbsent public var confidence: Double?
        public var languages: [String]
        /// What follows the word: `space`, `line` (end of a line inside a paragraph), `paragraph`
        /// (end of a paragraph), `hyphen` (a word broken across lines) — Cloud Vision's detectedBreak.
        public var `break`: String
        public var symbols: [Symbol]

        public init(text: String, boundingBox: Box, polygon: [Point], confidence: Double?, languages: [String], break: String, symbols: [Symbol]) {
            self.text = text
            self.boundingBox = boundingBox
            self.polygon = polygon
            self.confidence = confidence
            self.languages = languages
            self.break = `break`
            self.symbols = symbols
        }
    }

    public struct Line: Codable, Sendable, Equatable {
        public var text: String
        public var boundingBox: Box
        public var polygon: [Point]
        @NullWhenAbsent public var confidence: Double?
        public var languages: [String]
        /// The languages identified in this text, most likely first, each with a confidence (0…1);
        /// nil where nothing was identified (too little text). See docs/ocr.md "Languages".
        public var detectedLanguages: [DetectedLanguage]?
        public var baseline: Baseline?
        /// `ltr`, `rtl` or `ttb`.
        public var direction: String
        public var words: [Word]

        public init(text: String, boundingBox: Box, polygon: [Point], confidence: Double?, languages: [String], baseline: Baseline?, direction: String, words: [Word]) {
            self.text = text
            self.boundingBox = boundingBox
            self.polygon = polygon
            self.confidence = confidence
            self.languages = languages
            self.baseline = baseline
            self.direction = direction
            self.words = words
        }
    }

    public struct Paragraph: Codable, Sendable, Equatable {
        public var text: String
        public var boundingBox: Box
        public var polygon: [Point]
        @NullWhenAbsent public var confidence: Double?
        public var languages: [String]
        /// The languages identified in this text, most likely first, each with a confidence (0…1);
        /// nil where nothing was identified (too little text). See docs/ocr.md "Languages".
        public var detectedLanguages: [DetectedLanguage]?
        public var lines: [Line]

        public init(text: String, boundingBox: Box, polygon: [Point], confidence: Double?, languages: [String], lines: [Line]) {
            self.text = text
            self.boundingBox = boundingBox
            self.polygon = polygon
            self.confidence = confidence
            self.languages = languages
            self.lines = lines
        }
    }

    public struct Block: Codable, Sendable, Equatable {
        public var text: String
        public var boundingBox: Box
        public var polygon: [Point]
        @NullWhenAbsent public var confidence: Double?
        public var languages: [String]
        /// The languages identified in this text, most likely first, each with a confidence (0…1);
        /// nil where nothing was identified (too little text). See docs/ocr.md "Languages".
        public var detectedLanguages: [DetectedLanguage]?
        public var paragraphs: [Paragraph]

        public init(text: String, boundingBox: Box, polygon: [Point], confidence: Double?, languages: [String], paragraphs: [Paragraph]) {
            self.text = text
            self.boundingBox = boundingBox
            self.polygon = polygon
            self.confidence = confidence
            self.languages = languages
            self.paragraphs = paragraphs
        }
    }

    public struct Page: Codable, Sendable, Equatable {
        /// 1-based, in the uploaded file.
        public var pageNumber: Int
        public var width: Int
        public var height: Int
        public var unit: String
        /// Degrees the stored image was turned clockwise to be upright (EXIF and detection together).
        public var rotation: Int
        /// Whether the stored image was mirrored (EXIF orientations 2, 4, 5, 7).
        public var mirrored: Bool
        /// The skew of the text lines, degrees: the page was turned clockwise by this much before
        /// reading (see the `deskew` step), plus what was left, measured from the baselines.
        public var deskewAngle: Double
        /// Maps page coordinates (x, y) to the stored pixel grid: `[a, b, c, d, e, f]` with
        /// x' = a·x + b·y + c and y' = d·x + e·y + f.
        public var transform: [Double]
        /// The factor the image was scaled by for recognition (1: not scaled).
        public var recognitionScale: Double
        public var text: String
        @NullWhenAbsent public var confidence: Double?
        public var languages: [String]
        /// The languages identified in this text, most likely first, each with a confidence (0…1);
        /// nil where nothing was identified (too little text). See docs/ocr.md "Languages".
        public var detectedLanguages: [DetectedLanguage]?
        public var blocks: [Block]
        /// The documents whose fields the request asked for (`fields`) found on this page; nil where
        /// none was asked for, empty where none was found.
        public var documents: [Document]?
        /// This page rendered from its result when requested (`text`, `hocr`, `alto`, `tsv`; QuireFormats).
        public var renderings: [String: String]?
        /// Pixels per inch of this page's coordinates where the file has no pixels of its own: a PDF
        /// page's, at the resolution it was rendered (or its text layer placed) at. Nil for images.
        public var resolution: Int?
        /// Why this page could not be read (its text is then empty); the file's other pages were read.
        public var error: PageError?

        public init(pageNumber: Int, width: Int, height: Int, unit: String, rotation: Int, mirrored: Bool, deskewAngle: Double, transform: [Double],
                    recognitionScale: Double, text: String, confidence: Double?, languages: [String], blocks: [Block], renderings: [String: String]?) {
            self.pageNumber = pageNumber
            self.width = width
            self.height = height
            self.unit = unit
            self.rotation = rotation
            self.mirrored = mirrored
            self.deskewAngle = deskewAngle
            self.transform = transform
            self.recognitionScale = recognitionScale
            self.text = text
            self.confidence = confidence
            self.languages = languages
            self.blocks = blocks
            self.renderings = renderings
        }
    }

    /// A page that could not be read, in the words of the protocol's errors (`code` is a `WireError` code).
    public struct PageError: Codable, Sendable, Equatable {
        public var code: WireError.Code
        public var message: String

        public init(code: WireError.Code, message: String) {
            self.code = code
            self.message = message
        }
    }

    public struct Timings: Codable, Sendable, Equatable {
        public var decodeMs: Double
        public var recognizeMs: Double
        public var encodeMs: Double

        public init(decodeMs: Double, recognizeMs: Double, encodeMs: Double) {
            self.decodeMs = decodeMs
            self.recognizeMs = recognizeMs
            self.encodeMs = encodeMs
        }
    }

    /// One step of the pipeline on one page, so that a result can be explained: what was measured,
    /// whether it was applied, with its parameters (`scale`, `orientation`, `deskew`, `light`,
    /// `layout`, in the order they ran).
    public struct Step: Codable, Sendable, Equatable {
        /// 1-based page number.
        public var page: Int
        public var step: String
        public var applied: Bool
        public var parameters: [String: Double]

        public init(page: Int = 1, step: String, applied: Bool, parameters: [String: Double]) {
            self.page = page
            self.step = step
            self.applied = applied
            self.parameters = parameters
        }
    }

    public struct Metadata: Codable, Sendable, Equatable {
        public var engine: String
        public var languages: [String]
        public var mode: String
        public var format: String
        public var pageCount: Int
        public var timings: Timings
        public var steps: [Step]

        public init(engine: String, languages: [String], mode: String, format: String, pageCount: Int, timings: Timings, steps: [Step]) {
            self.engine = engine
            self.languages = languages
            self.mode = mode
            self.format = format
            self.pageCount = pageCount
            self.timings = timings
            self.steps = steps
        }
    }
}

/// Encodes `nil` as an explicit JSON `null` (the schema says "confidence: null where Tesseract gives
/// none"), where synthesized Codable would leave the member out. Decodes a missing member as `nil`.
@propertyWrapper
public struct NullWhenAbsent<Value: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension KeyedDecodingContainer {
    public func decode<V>(_ type: NullWhenAbsent<V>.Type, forKey key: Key) throws -> NullWhenAbsent<V> {
        try decodeIfPresent(type, forKey: key) ?? NullWhenAbsent(wrappedValue: nil)
    }
}

extension OCRResult {
    /// The result an `ocr` reply's first frame holds; nil when it holds anything else (an error body,
    /// another service's answer). Every reader of `ocr` replies decodes them here.
    public init?(replyFrame frame: [UInt8]) {
        guard let result = try? JSONDecoder().decode(OCRResult.self, from: Data(frame)) else { return nil }
        self = result
    }
}
