import Foundation
import QuireWire

/// Azure AI Document Intelligence's analyze result (`GET …/documentModels/{model}/analyzeResults/{id}`),
/// as the 2024-11-30 API (`/documentintelligence`) and the 2023-07-31 Form Recognizer API
/// (`/formrecognizer`) define `AnalyzeResultOperation` and `AnalyzeResult`, for the two prebuilt models
/// Quire can stand in for: `prebuilt-read` (text: pages, lines, words, paragraphs, each with spans into
/// `content`) and `prebuilt-receipt` (that, plus one `receipt` document per receipt with typed fields).
///
/// The result is a single string, `content`, with every element pointing into it by `spans`
/// (offset, length). Offsets count in the unit the caller asked for (`stringIndexType`): Python's SDKs
/// ask `unicodeCodePoint` (Python's `str` indices), .NET and JavaScript `utf16CodeUnit`, and the service's
/// default is `textElements` (grapheme clusters, Swift's `Character`); a `€` or an accented letter
/// written as two code points would otherwise put every later span off by one.
public enum DocumentIntelligence {
    /// The API versions answered: one per route family, each the version its SDK sends by default.
    public enum APIVersion: String, Codable, Sendable, CaseIterable {
        /// `/documentintelligence/…`, `azure-ai-documentintelligence` 1.0.
        case v2024_11_30 = "2024-11-30"
        /// `/formrecognizer/…`, `azure-ai-formrecognizer` 3.3.
        case v2023_07_31 = "2023-07-31"
    }

    /// The prebuilt models served. Any other model id is the service's `ModelNotFound`.
    public enum Model: String, Codable, Sendable, CaseIterable {
        case read = "prebuilt-read"
        case receipt = "prebuilt-receipt"

        /// The kinds of document a worker is asked to find fields of for this model.
        public var fields: [OCRRequest.Fields]? { self == .receipt ? [.receipt] : nil }
    }

    /// How span offsets and lengths count (`stringIndexType`).
    public enum StringIndexType: String, Codable, Sendable, CaseIterable {
        /// Grapheme clusters (user-perceived characters); the service's default.
        case textElements
        /// Unicode scalars: Python's string indices.
        case unicodeCodePoint
        /// UTF-16 code units: .NET's, Java's and JavaScript's string indices.
        case utf16CodeUnit

        /// `text`'s length in this unit.
        public func length(_ text: String) -> Int {
            switch self {
            case .textElements: text.count
            case .unicodeCodePoint: text.unicodeScalars.count
            case .utf16CodeUnit: text.utf16.count
            }
        }
    }

    /// An analysis's `status`: the values of every Azure long-running operation, Read 3.2's too.
    public typealias Status = AzureRead.Status

    /// `AnalyzeResultOperation` (2023-07-31) / `AnalyzeOperation` (2024-11-30): the body of a poll.
    public struct OperationResult: Codable, Sendable, Equatable {
        public var status: Status
        /// ISO 8601 with milliseconds, UTC.
        public var createdDateTime: String
        public var lastUpdatedDateTime: String
        /// Present when `status` is `failed`.
        public var error: ErrorDetail?
        /// Present when `status` is `succeeded`.
        public var analyzeResult: AnalyzeResult?
    }

    /// The service's error (`Error` with `InnerError`), in both versions the same members.
    public struct ErrorDetail: Codable, Sendable, Equatable {
        public struct Inner: Codable, Sendable, Equatable {
            public var code: String
            public var message: String
        }
        public var code: String
        public var message: String
        public var innererror: Inner?

        public init(code: String, message: String, inner: (code: String, message: String)? = nil) {
            self.code = code
            self.message = message
            self.innererror = inner.map { Inner(code: $0.code, message: $0.message) }
        }
    }

    public struct AnalyzeResult: Codable, Sendable, Equatable {
        public var apiVersion: String
        public var modelId: String
        public var stringIndexType: StringIndexType
        /// `text`; a member of 2024-11-30 only (2023-07-31 has no markdown output to tell apart).
        public var contentFormat: String?
        public var content: String
        public var pages: [Page]
        public var paragraphs: [Paragraph]
        /// `prebuilt-receipt` only: one per receipt found.
        public var documents: [AnalyzedDocument]?
        /// 2024-11-30 only: pages that could not be read, which the result still lists (empty).
        public var warnings: [Warning]?
    }

    public struct Span: Codable, Sendable, Equatable, Hashable {
        public var offset: Int
        public var length: Int

        public init(offset: Int, length: Int) {
            self.offset = offset
            self.length = length
        }
    }

    public struct Page: Codable, Sendable, Equatable {
        public var pageNumber: Int
        /// The text's clockwise angle, degrees in (-180, 180].
        public var angle: Double
        public var width: Double
        public var height: Double
        /// `pixel` for images, `inch` for PDF pages.
        public var unit: String
        public var spans: [Span]
        public var words: [Word]
        public var lines: [Line]
    }

    public struct Word: Codable, Sendable, Equatable {
        public var content: String
        /// x1, y1, … x4, y4 clockwise from the text's top-left, in the page's `unit`.
        public var polygon: [Double]
        public var span: Span
        public var confidence: Double
    }

    public struct Line: Codable, Sendable, Equatable {
        public var content: String
        public var polygon: [Double]
        public var spans: [Span]
    }

    public struct Paragraph: Codable, Sendable, Equatable {
        /// Exactly `content` at its span: the paragraph's lines separated by newlines.
        public var content: String
        public var boundingRegions: [BoundingRegion]
        public var spans: [Span]
    }

    public struct BoundingRegion: Codable, Sendable, Equatable {
        public var pageNumber: Int
        public var polygon: [Double]
    }

    public struct Warning: Codable, Sendable, Equatable {
        public var code: String
        public var message: String
        public var target: String?
    }

    public struct AnalyzedDocument: Codable, Sendable, Equatable {
        public var docType: String
        public var boundingRegions: [BoundingRegion]
        public var spans: [Span]
        public var fields: [String: Field]
        public var confidence: Double
    }

    /// `DocumentField`: the member named by `type` holds the value (`valueCurrency` for `currency`…).
    public struct Field: Codable, Sendable, Equatable {
        public var type: String
        public var valueString: String?
        public var valueDate: String?
        public var valueTime: String?
        public var valuePhoneNumber: String?
        public var valueNumber: Double?
        public var valueInteger: Int?
        public var valueArray: [Field]?
        public var valueObject: [String: Field]?
        public var valueCurrency: Currency?
        public var valueAddress: Address?
        public var content: String?
        public var boundingRegions: [BoundingRegion]?
        public var spans: [Span]?
        public var confidence: Double?
    }

    public struct Currency: Codable, Sendable, Equatable {
        public var amount: Double
        public var currencySymbol: String?
        public var currencyCode: String?
    }

    public struct Address: Codable, Sendable, Equatable {
        public var houseNumber: String?
        public var road: String?
        public var postalCode: String?
        public var city: String?
        public var state: String?
        public var countryRegion: String?
        public var streetAddress: String?
    }

    /// What every receipt is called. The service names the kind of receipt (`receipt.retailMeal`,
    /// `receipt.creditCard`, `receipt.gas`, `receipt.parking`, `receipt.hotel`); Quire's extraction
    /// reads the fields every kind shares and does not classify, so it says `receipt`, the prefix all
    /// of them start with, rather than claim a kind it did not establish. Apps that test
    /// `docType.startsWith("receipt")` work unchanged; one that requires `receipt.retailMeal` would
    /// not, and should not be told that of a parking ticket.
    public static let receiptDocType = "receipt"

    /// The analyze result of a Quire result for `model`. Pages follow each other in `content`, each
    /// page's lines separated by newlines, as the service lays out `prebuilt-read`'s content; a page's
    /// span covers its lines. Words are found in their line's text in order, so that each word's span
    /// is exactly its text in `content`. Coordinates are the uploaded file's (``PageGeometry``):
    /// pixels of an image, inches of a PDF page (its pixels over its `resolution`, to four decimals).
    public static func analyzeResult(_ result: OCRResult, model: Model, apiVersion: APIVersion,
                                     stringIndexType: StringIndexType = .textElements) -> AnalyzeResult {
        var text = ContentBuilder(unit: stringIndexType)
        var pages: [Page] = []
        var paragraphs: [Paragraph] = []
        var documents: [AnalyzedDocument] = []
        var warnings: [Warning] = []
        for page in result.pages {
            let geometry = PageGeometry(page)
            let perInch = page.resolution.flatMap { $0 > 0 ? Double($0) : nil }
            let measure: (Int) -> Double = { pixels in perInch.map { (Double(pixels) / $0 * 10_000).rounded() / 10_000 } ?? Double(pixels) }
            func polygon(_ points: [OCRResult.Point], _ box: OCRResult.Box) -> [Double] { geometry.flat(points, box: box).map(measure) }

            var pageStart: Int?
            var words: [Word] = []
            var lines: [Line] = []
            var placed: [PlacedLine] = []
            for block in page.blocks {
                for paragraph in block.paragraphs {
                    let paragraphStart = placed.count
                    for line in paragraph.lines {
                        let lineText = line.text.isEmpty ? line.words.map(\.text).joined(separator: " ") : line.text
                        text.startLine()
                        let lineOffset = text.position
                        if pageStart == nil { pageStart = lineOffset }
                        let located = locate(line.words.map(\.text), in: lineText)
                        let content = located.content
                        for (word, range) in zip(line.words, located.ranges) {
                            let prefix = String(content[content.startIndex..<range.lowerBound])
                            let offset = lineOffset + stringIndexType.length(prefix)
                            words.append(Word(content: word.text, polygon: polygon(word.polygon, word.boundingBox),
                                              span: Span(offset: offset, length: stringIndexType.length(word.text)),
                                              confidence: AzureRead.rounded(word.confidence ?? 0)))
                        }
                        text.append(content)
                        let span = Span(offset: lineOffset, length: text.position - lineOffset)
                        lines.append(Line(content: content, polygon: polygon(line.polygon, line.boundingBox), spans: [span]))
                        placed.append(PlacedLine(box: line.boundingBox, span: span, words: Array(words.suffix(line.words.count)), source: line))
                    }
                    if placed.count > paragraphStart {
                        let first = placed[paragraphStart].span, last = placed[placed.count - 1].span
                        let span = Span(offset: first.offset, length: last.offset + last.length - first.offset)
                        paragraphs.append(Paragraph(content: text.slice(span), boundingRegions: [
                            BoundingRegion(pageNumber: page.pageNumber, polygon: polygon(paragraph.polygon, paragraph.boundingBox)),
                        ], spans: [span]))
                    }
                }
            }
            let pageSpan = Span(offset: pageStart ?? text.position, length: text.position - (pageStart ?? text.position))
            pages.append(Page(pageNumber: page.pageNumber, angle: geometry.textAngle, width: measure(geometry.width), height: measure(geometry.height),
                              unit: perInch == nil ? "pixel" : "inch", spans: [pageSpan], words: words, lines: lines))
            if let error = page.error {
                warnings.append(Warning(code: "PageNotRead", message: "Page \(page.pageNumber) could not be read: \(error.message)",
                                        target: String(page.pageNumber)))
            }
            guard model == .receipt else { continue }
            let fields = FieldMapper(pageNumber: page.pageNumber, lines: placed, text: text, polygon: polygon)
            for document in page.documents ?? [] {
                let mapped = document.fields.mapValues(fields.map)
                // The document's text: from the first to the last line it covers.
                let covered = placed.filter { $0.box.overlaps(document.boundingBox) }
                let spans = covered.first.flatMap { first in covered.last.map { last in
                    [Span(offset: first.span.offset, length: last.span.offset + last.span.length - first.span.offset)]
                } } ?? [pageSpan]
                documents.append(AnalyzedDocument(
                    docType: document.kind == "receipt" ? receiptDocType : document.kind,
                    boundingRegions: [BoundingRegion(pageNumber: page.pageNumber, polygon: polygon(document.polygon, document.boundingBox))],
                    spans: spans, fields: mapped, confidence: AzureRead.rounded(document.confidence)))
            }
        }
        return AnalyzeResult(apiVersion: apiVersion.rawValue, modelId: model.rawValue, stringIndexType: stringIndexType,
                             contentFormat: apiVersion == .v2024_11_30 ? "text" : nil, content: text.content, pages: pages,
                             paragraphs: paragraphs, documents: model == .receipt ? documents : nil,
                             warnings: apiVersion == .v2024_11_30 && !warnings.isEmpty ? warnings : nil)
    }

    /// The operation result for a poll: `analyzeResult` only when `succeeded`, `error` only when `failed`.
    public static func operationResult(status: Status, created: Date, lastUpdated: Date, result: OCRResult?, error: ErrorDetail? = nil,
                                       model: Model, apiVersion: APIVersion, stringIndexType: StringIndexType = .textElements) -> OperationResult {
        OperationResult(status: status, createdDateTime: AzureRead.timestamp(created), lastUpdatedDateTime: AzureRead.timestamp(lastUpdated),
                        error: status == .failed ? error ?? ErrorDetail(code: "InternalServerError", message: "An unexpected error occurred.") : nil,
                        analyzeResult: status == .succeeded ? result.map { analyzeResult($0, model: model, apiVersion: apiVersion,
                                                                                          stringIndexType: stringIndexType) } : nil)
    }

    /// Each word's range in the line's text, found in order; when a word is not there as written (a
    /// line whose text is not its words'), the line's text becomes its words joined by spaces, so that
    /// every span still points at its word.
    static func locate(_ words: [String], in line: String) -> (content: String, ranges: [Range<String.Index>]) {
        var ranges: [Range<String.Index>] = []
        var from = line.startIndex
        for word in words {
            guard !word.isEmpty, let range = line.range(of: word, range: from..<line.endIndex) else {
                let joined = words.joined(separator: " ")
                return joined == line ? (line, []) : locate(words, in: joined)
            }
            ranges.append(range)
            from = range.upperBound
        }
        return (line, ranges)
    }
}

/// `content` as it grows, with its length in the result's unit.
struct ContentBuilder {
    let unit: DocumentIntelligence.StringIndexType
    private(set) var content = ""
    private(set) var position = 0
    private var lines = 0

    init(unit: DocumentIntelligence.StringIndexType) { self.unit = unit }

    /// Separates a line from the one before it (on this page or the last), as the service does: by a newline.
    mutating func startLine() {
        if lines > 0 { append("\n") }
        lines += 1
    }

    mutating func append(_ text: String) {
        content += text
        position += unit.length(text)
    }

    /// The text at `span` (spans always start and end at appended lines, which every unit counts alike).
    func slice(_ span: DocumentIntelligence.Span) -> String {
        switch unit {
        case .textElements:
            let start = content.index(content.startIndex, offsetBy: span.offset, limitedBy: content.endIndex) ?? content.endIndex
            let end = content.index(start, offsetBy: span.length, limitedBy: content.endIndex) ?? content.endIndex
            return String(content[start..<end])
        case .unicodeCodePoint:
            let scalars = content.unicodeScalars
            let start = scalars.index(scalars.startIndex, offsetBy: span.offset, limitedBy: scalars.endIndex) ?? scalars.endIndex
            let end = scalars.index(start, offsetBy: span.length, limitedBy: scalars.endIndex) ?? scalars.endIndex
            return String(scalars[start..<end])
        case .utf16CodeUnit:
            let units = content.utf16
            let start = units.index(units.startIndex, offsetBy: span.offset, limitedBy: units.endIndex) ?? units.endIndex
            let end = units.index(start, offsetBy: span.length, limitedBy: units.endIndex) ?? units.endIndex
            return String(content[start..<end])
        }
    }
}

/// A line of a page as placed in `content`, for finding the text a field was read from.
struct PlacedLine {
    var box: OCRResult.Box
    var span: DocumentIntelligence.Span
    var words: [DocumentIntelligence.Word]
    var source: OCRResult.Line
}

/// Quire's typed fields as `DocumentField`s: the value member of the field's type, its content, its
/// region on the page, and its spans where its text can be found among the words it stands over.
struct FieldMapper {
    var pageNumber: Int
    var lines: [PlacedLine]
    var text: ContentBuilder
    var polygon: ([OCRResult.Point], OCRResult.Box) -> [Double]

    func map(_ field: OCRResult.Field) -> DocumentIntelligence.Field {
        let region = field.boundingBox.map { box in
            [DocumentIntelligence.BoundingRegion(pageNumber: pageNumber, polygon: polygon(field.polygon ?? [], box))]
        }
        return DocumentIntelligence.Field(
            type: field.type.rawValue, valueString: field.valueString, valueDate: field.valueDate, valueTime: field.valueTime,
            valuePhoneNumber: field.valuePhoneNumber, valueNumber: field.valueNumber, valueInteger: field.valueInteger,
            valueArray: field.valueArray.map { $0.map(map) }, valueObject: field.valueObject.map { $0.mapValues(map) },
            valueCurrency: field.valueCurrency.map { .init(amount: $0.amount, currencySymbol: $0.currencySymbol, currencyCode: $0.currencyCode) },
            valueAddress: field.valueAddress.map {
                .init(houseNumber: $0.houseNumber, road: $0.road, postalCode: $0.postalCode, city: $0.city, state: $0.state,
                      countryRegion: $0.countryRegion, streetAddress: $0.streetAddress)
            },
            content: field.content, boundingRegions: region, spans: spans(field), confidence: AzureRead.rounded(field.confidence))
    }

    /// The field's text as runs of consecutive words (in reading order) whose texts are the content's
    /// tokens, among the lines its box overlaps (every line when it has none): one span per line it
    /// covers. nil when the content is not found so: a span is never guessed.
    func spans(_ field: OCRResult.Field) -> [DocumentIntelligence.Span]? {
        guard let content = field.content else { return nil }
        let tokens = content.split(whereSeparator: \.isWhitespace).map(String.init)
        guard !tokens.isEmpty else { return nil }
        let candidates = lines.filter { line in field.boundingBox.map { line.box.overlaps($0) } ?? true }
        let words = candidates.flatMap { line in line.words.map { (word: $0, line: line.span.offset) } }
        guard words.count >= tokens.count else { return nil }
        for start in 0...(words.count - tokens.count) where zip(words[start..<start + tokens.count], tokens).allSatisfy({ $0.word.content == $1 }) {
            var spans: [DocumentIntelligence.Span] = []
            var currentLine = -1
            for (word, line) in words[start..<start + tokens.count] {
                if line == currentLine, let last = spans.last {
                    spans[spans.count - 1] = .init(offset: last.offset, length: word.span.offset + word.span.length - last.offset)
                } else {
                    spans.append(word.span)
                    currentLine = line
                }
            }
            return spans
        }
        return nil
    }
}

extension OCRResult.Box {
    /// Whether the two boxes share any area.
    func overlaps(_ other: OCRResult.Box) -> Bool {
        x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
    }
}
