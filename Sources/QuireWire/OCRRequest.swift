import Foundation

/// The `ocr` request's JSON frame (`proto-json/ocr-request.schema.json`); the image is frame 2. The
/// worker reads it; the CLI, the client library and the gateway write it.
public struct OCRRequest: Codable, Sendable, Equatable {
    /// What kind of picture it is, as Cloud Vision's feature types say it.
    public enum Mode: String, Codable, Sendable {
        /// Sparse text in a photo: signs, labels, whiteboards (Cloud Vision `TEXT_DETECTION`).
        case text
        /// Dense pages: documents, screenshots, books (Cloud Vision `DOCUMENT_TEXT_DETECTION`).
        case document
        /// One line of text: a crop around a single line.
        case line
    }

    /// What to do with a PDF page's own text (its text layer).
    public enum TextLayer: String, Codable, Sendable {
        /// Take a page's text from its layer where the page draws visible text that maps to Unicode and
        /// pictures cover less than a quarter of it; read every other page by OCR.
        case auto
        /// Read every page by OCR, whatever text it holds (as `ocrmypdf --force-ocr` does).
        case ignore
    }

    /// Which engine reads the picture.
    public enum Engine: String, Codable, Sendable, CaseIterable {
        /// Tesseract: pages, documents, receipts, screenshots.
        case tesseract
        /// The scene engine (PP-OCR's detector and line recognizer): signs, photos of screens,
        /// whiteboards, handwriting. Workers without its models answer `engine_failure`.
        case scene
        /// Chosen by the picture (the default): Tesseract, and the scene engine where Tesseract reads
        /// a photo badly and the scene engine reads it better (`metadata.steps` says why).
        case auto
    }

    /// Kinds of document whose fields a page is read for (``OCRResult/Page/documents``).
    public enum Fields: String, Codable, Sendable, CaseIterable {
        /// A receipt's merchant, address, phone, date, time, items, subtotal, tax, tip and total.
        case receipt
    }

    public enum Output: String, Codable, Sendable, CaseIterable {
        case result, text, hocr, alto, tsv
        /// A searchable PDF, in the reply's second frame (see ``OCRResult/attachments``).
        case pdf
    }

    /// BCP-47 tags (`en`, `zh-Hans`) or Tesseract pack names (`eng`, `chi_sim`); `eng+deu` also works.
    public var languages: [String]?
    public var mode: Mode?
    /// 1-based page numbers to read (a PDF's or a multi-page TIFF's), negative ones counted from the
    /// end (-1: the last page); all pages when absent.
    public var pages: [Int]?
    /// Read at most this many pages: the first ones of `pages`, or of the file (Cloud Vision's
    /// `files:annotate` reads a file's first five when it names none).
    public var pageLimit: Int?
    /// What to return; the Quire result by default.
    public var outputs: [Output]?
    /// Detect the page orientation (OSD) and turn the image upright before reading.
    public var autoOrientation: Bool?
    /// The scan's resolution when the file does not say (or says wrongly); for a PDF, the resolution
    /// its pages are rendered at for OCR.
    public var dpi: Int?
    /// A PDF page's own text: used where it can be (`auto`, the default) or ignored for OCR.
    public var textLayer: TextLayer?
    /// Return each word's symbols (characters with boxes); true by default.
    public var symbols: Bool?
    /// The engine; `auto` (chosen by the picture) by default.
    public var engine: Engine?
    /// The kinds of document to find fields of on each page (`receipt`); none by default.
    public var fields: [Fields]?
    /// The access token for the broker's check (`docs/auth.md`); the worker never sees a use for it.
    public var token: String?
    /// Durable-job options when the frame goes to `titanic.request` (`proto-json/titanic-options.schema.json`);
    /// the broker reads and checks them, the worker ignores them.
    public var job: JobOptions?

    public init(languages: [String]? = nil, mode: Mode? = nil, pages: [Int]? = nil, outputs: [Output]? = nil, autoOrientation: Bool? = nil, dpi: Int? = nil,
                symbols: Bool? = nil, textLayer: TextLayer? = nil, pageLimit: Int? = nil, engine: Engine? = nil, fields: [Fields]? = nil, token: String? = nil,
                job: JobOptions? = nil) {
        self.languages = languages
        self.mode = mode
        self.pages = pages
        self.outputs = outputs
        self.autoOrientation = autoOrientation
        self.dpi = dpi
        self.symbols = symbols
        self.textLayer = textLayer
        self.pageLimit = pageLimit
        self.engine = engine
        self.fields = fields
        self.token = token
        self.job = job
    }

    enum CodingKeys: String, CodingKey { case languages, mode, pages, pageLimit, outputs, autoOrientation, dpi, symbols, textLayer, engine, fields, token, job }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // "languages" may be a list or one "eng+deu" string.
        if let list = try? c.decodeIfPresent([String].self, forKey: .languages) {
            languages = list
        } else if let one = try c.decodeIfPresent(String.self, forKey: .languages) {
            languages = one.split(separator: "+").map(String.init)
        } else {
            languages = nil
        }
        mode = try c.decodeIfPresent(Mode.self, forKey: .mode)
        pages = try c.decodeIfPresent([Int].self, forKey: .pages)
        pageLimit = try c.decodeIfPresent(Int.self, forKey: .pageLimit)
        outputs = try c.decodeIfPresent([Output].self, forKey: .outputs)
        autoOrientation = try c.decodeIfPresent(Bool.self, forKey: .autoOrientation)
        dpi = try c.decodeIfPresent(Int.self, forKey: .dpi)
        symbols = try c.decodeIfPresent(Bool.self, forKey: .symbols)
        textLayer = try c.decodeIfPresent(TextLayer.self, forKey: .textLayer)
        engine = try c.decodeIfPresent(Engine.self, forKey: .engine)
        fields = try c.decodeIfPresent([Fields].self, forKey: .fields)
        // The broker has checked these before the worker sees the frame; the worker does not need them.
        token = try? c.decodeIfPresent(String.self, forKey: .token)
        job = try? c.decodeIfPresent(JobOptions.self, forKey: .job)
    }

    /// The frame's bytes: keys sorted, slashes as they are.
    public func jsonBytes() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every member is a string, number, list or an object of those: encoding cannot fail.
        return (try? Array(encoder.encode(self))) ?? Array("{}".utf8)
    }

    /// The pages to read of a file of `pageCount` pages, in the order asked: `pages` with the negative
    /// ones counted from the end, or every page, cut to `pageLimit` and checked against `maxPages`
    /// (the worker's limit). A page the file does not have is `bad_request`.
    public func pageNumbers(pageCount: Int, maxPages: Int, noun: String) throws(WireError) -> [Int] {
        var numbers = pages.map { $0.map { $0 < 0 ? pageCount + 1 + $0 : $0 } } ?? Array(1...max(1, pageCount))
        if let pageLimit, numbers.count > pageLimit { numbers = Array(numbers.prefix(pageLimit)) }
        guard numbers.count <= maxPages else {
            throw WireError(.tooManyPages, "\(numbers.count) pages requested; the limit is \(maxPages)", limit: maxPages)
        }
        if let index = numbers.firstIndex(where: { $0 < 1 || $0 > max(1, pageCount) }) {
            throw WireError(.badRequest, "page \(pages?[index] ?? numbers[index]) requested; \(noun) has \(max(1, pageCount))")
        }
        return numbers
    }

    /// Parses and validates the JSON frame; every problem becomes a typed `bad_request`.
    public static func parse(_ frame: [UInt8]) throws(WireError) -> OCRRequest {
        // Not JSON (or not an object) is invalid_json; JSON that does not fit the schema — an unknown
        // enum value, a fraction where an integer belongs — is bad_request.
        guard let object = (try? JSONSerialization.jsonObject(with: Data(frame))) as? [String: Any] else {
            throw WireError(.invalidJSON, "the request frame is not a JSON object")
        }
        let request: OCRRequest
        do {
            request = try JSONDecoder().decode(OCRRequest.self, from: Data(frame))
        } catch let DecodingError.dataCorrupted(context), let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            // Say it in the schema's words (`'outputs[0]' must be one of …`), not the decoder's.
            var path = ""
            for key in context.codingPath {
                if let index = key.intValue { path += "[\(index)]" } else { path += path.isEmpty ? key.stringValue : "." + key.stringValue }
            }
            var field = context.codingPath.first.flatMap { CodingKeys(stringValue: $0.stringValue) }
            if field == nil {
                // Foundation on Linux reports some failures (a fraction for an integer) without a
                // path: the field is the first one that does not decode on its own.
                field = [CodingKeys.languages, .mode, .pages, .pageLimit, .outputs, .autoOrientation, .dpi, .symbols, .textLayer, .engine, .fields].first { key in
                    guard let value = object[key.stringValue], JSONSerialization.isValidJSONObject([key.stringValue: value]),
                          let alone = try? JSONSerialization.data(withJSONObject: [key.stringValue: value]) else { return false }
                    return (try? JSONDecoder().decode(OCRRequest.self, from: alone)) == nil
                }
                path = field?.stringValue ?? ""
            }
            let element = context.codingPath.count > 1
            let rule: String
            switch field {
            case .mode?: rule = "must be one of document, text, line"
            case .textLayer?: rule = "must be one of auto, ignore"
            case .engine?: rule = "must be one of auto, tesseract, scene"
            case .fields?: rule = element ? "must be one of receipt" : "must be a list of receipt"
            case .outputs?: rule = element ? "must be one of result, text, hocr, alto, tsv, pdf" : "must be a list of result, text, hocr, alto, tsv, pdf"
            case .languages?: rule = element ? "must be a language name (eng, de, zh-Hans)"
                : "must be a list of language names (eng, de, zh-Hans) or one string like eng+deu"
            case .pages?: rule = element ? "must be a page number (an integer from 1, or from -1 counting from the end)"
                : "must be a list of page numbers (integers from 1, or from -1 counting from the end)"
            case .pageLimit?: rule = "must be an integer from 1"
            case .autoOrientation?, .symbols?: rule = "must be true or false"
            case .token?: rule = "must be a string"
            case .job?: rule = "must be the durable job's options"
            case .dpi?: rule = "must be an integer within 30…2400"
            case nil: throw WireError(.badRequest, "the request does not match the ocr request schema")
            }
            throw WireError(.badRequest, "'\(path)' \(rule)")
        } catch {
            throw WireError(.badRequest, "the request does not match the ocr request schema")
        }
        if let pages = request.pages, pages.contains(0) {
            throw WireError(.badRequest, "'pages' are 1-based page numbers (or negative, from the end); there is no page 0")
        }
        if let limit = request.pageLimit, limit < 1 {
            throw WireError(.badRequest, "'pageLimit' must be an integer from 1")
        }
        if let dpi = request.dpi, !(30...2_400).contains(dpi) {
            throw WireError(.badRequest, "'dpi' must be within 30…2400")
        }
        if let languages = request.languages, languages.isEmpty || languages.contains(where: \.isEmpty) {
            throw WireError(.badRequest, "'languages' must name at least one language")
        }
        return request
    }
}
