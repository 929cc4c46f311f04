import Foundation
@testable import QuireFormats
import QuireWire
import Testing

/// Hand-made results: a receipt photo (pixels) with a document holding every field type, and a PDF
/// page (inches). Words with text that counts differently in each `stringIndexType`: `Cafe` + a
/// combining accent (one character, two code points), `€` (one of each), `🍰` (one code point, two
/// UTF-16 units).
enum Receipt {
    static func quad(_ b: OCRResult.Box) -> [OCRResult.Point] {
        [.init(x: b.x, y: b.y), .init(x: b.x + b.width, y: b.y), .init(x: b.x + b.width, y: b.y + b.height), .init(x: b.x, y: b.y + b.height)]
    }

    static func word(_ text: String, x: Int, y: Int, confidence: Double = 0.91) -> OCRResult.Word {
        let box = OCRResult.Box(x: x, y: y, width: 20 * text.count, height: 30)
        return OCRResult.Word(text: text, boundingBox: box, polygon: quad(box), confidence: confidence, languages: ["en"], break: "space", symbols: [])
    }

    static func line(_ words: [String], y: Int) -> OCRResult.Line {
        var x = 40
        let placed = words.map { text -> OCRResult.Word in
            defer { x += 20 * text.count + 15 }
            return word(text, x: x, y: y)
        }
        let box = OCRResult.Box(x: 40, y: y, width: max(1, x - 55), height: 30)
        return OCRResult.Line(text: words.joined(separator: " "), boundingBox: box, polygon: quad(box), confidence: 0.9, languages: ["en"],
                              baseline: nil, direction: "ltr", words: placed)
    }

    static func paragraph(_ lines: [OCRResult.Line]) -> OCRResult.Paragraph {
        let top = lines.map(\.boundingBox.y).min() ?? 0, bottom = lines.map { $0.boundingBox.y + $0.boundingBox.height }.max() ?? 0
        let box = OCRResult.Box(x: 40, y: top, width: 700, height: bottom - top)
        return OCRResult.Paragraph(text: lines.map(\.text).joined(separator: "\n"), boundingBox: box, polygon: quad(box), confidence: 0.9,
                                   languages: ["en"], lines: lines)
    }

    static let lines = [
        line(["Cafe\u{301}", "Lumière"], y: 40),
        line(["12", "Rue", "de", "Rivoli,", "Paris"], y: 80),
        line(["+33", "1", "42", "60", "00", "00"], y: 120),
        line(["2026-03-14", "12:34"], y: 160),
        line(["2", "Tarte", "🍰", "€9.00"], y: 220),
        line(["Subtotal", "€9.00"], y: 260),
        line(["Tax", "€0.90"], y: 300),
        line(["Tip", "€1.00"], y: 340),
        line(["Total", "€10.90"], y: 380),
    ]

    static func field(_ type: OCRResult.FieldType, _ content: String?, on line: Int? = nil, _ fill: (inout OCRResult.Field) -> Void = { _ in }) -> OCRResult.Field {
        let box = line.map { lines[$0].boundingBox }
        var field = OCRResult.Field(type: type, content: content, confidence: 0.876, boundingBox: box, polygon: box.map(quad))
        fill(&field)
        return field
    }

    static func money(_ amount: Double, _ content: String, on line: Int) -> OCRResult.Field {
        field(.currency, content, on: line) { $0.valueCurrency = .init(amount: amount, currencyCode: "EUR", currencySymbol: "€") }
    }

    static let fields: [String: OCRResult.Field] = [
        "MerchantName": field(.string, "Cafe\u{301} Lumière", on: 0) { $0.valueString = "Cafe\u{301} Lumière" },
        "MerchantAddress": field(.address, "12 Rue de Rivoli, Paris", on: 1) {
            $0.valueAddress = .init(houseNumber: "12", road: "Rue de Rivoli", streetAddress: "12 Rue de Rivoli", city: "Paris", countryRegion: "FRA")
        },
        "MerchantPhoneNumber": field(.phoneNumber, "+33 1 42 60 00 00", on: 2) { $0.valuePhoneNumber = "+33142600000" },
        "TransactionDate": field(.date, "2026-03-14", on: 3) { $0.valueDate = "2026-03-14" },
        "TransactionTime": field(.time, "12:34", on: 3) { $0.valueTime = "12:34:00" },
        "Items": field(.array, nil) {
            var item = field(.object, "2 Tarte 🍰 €9.00", on: 4)
            item.valueObject = [
                "Description": field(.string, "Tarte 🍰", on: 4) { $0.valueString = "Tarte 🍰" },
                "Quantity": field(.number, "2", on: 4) { $0.valueNumber = 2 },
                "TotalPrice": money(9, "€9.00", on: 4),
            ]
            $0.valueArray = [item]
        },
        "ItemCount": field(.integer, "2", on: 4) { $0.valueInteger = 2 },
        "Subtotal": money(9, "€9.00", on: 5),
        "TotalTax": money(0.9, "€0.90", on: 6),
        "Tip": money(1, "€1.00", on: 7),
        "Total": money(10.9, "€10.90", on: 8),
        // Printed nowhere on the page: no span may be invented for it.
        "Nowhere": field(.string, "Not on the page") { $0.valueString = "Not on the page" },
    ]

    static func page(number: Int = 1, resolution: Int? = nil, documents: [OCRResult.Document]?) -> OCRResult.Page {
        let blocks = [
            OCRResult.Block(text: "", boundingBox: .init(x: 40, y: 40, width: 700, height: 150), polygon: [], confidence: 0.9, languages: ["en"],
                            paragraphs: [paragraph(Array(lines[0..<4]))]),
            OCRResult.Block(text: "", boundingBox: .init(x: 40, y: 220, width: 700, height: 190), polygon: [], confidence: 0.9, languages: ["en"],
                            paragraphs: [paragraph(Array(lines[4...]))]),
        ]
        var page = OCRResult.Page(pageNumber: number, width: 800, height: 1000, unit: "pixel", rotation: 0, mirrored: false, deskewAngle: 0,
                                  transform: [1, 0, 0, 0, 1, 0], recognitionScale: 1, text: "", confidence: 0.9, languages: ["en"],
                                  blocks: blocks, renderings: nil)
        page.documents = documents
        page.resolution = resolution
        return page
    }

    static let document = OCRResult.Document(kind: "receipt", boundingBox: .init(x: 30, y: 30, width: 720, height: 390),
                                             polygon: quad(.init(x: 30, y: 30, width: 720, height: 390)), confidence: 0.8, fields: fields)

    static func result(pages: [OCRResult.Page]) -> OCRResult {
        OCRResult(text: "", pages: pages, metadata: .init(engine: "tesseract", languages: ["en"], mode: "document", format: "png",
                                                        pageCount: pages.count, timings: .init(decodeMs: 0, recognizeMs: 0, encodeMs: 0), steps: []))
    }
}

/// `content` cut at a span, counting as the test's own reading of each unit (not the code under test's).
func cut(_ content: String, _ span: DocumentIntelligence.Span, _ unit: DocumentIntelligence.StringIndexType) -> String {
    switch unit {
    case .textElements: return String(Array(content)[span.offset..<span.offset + span.length])
    case .unicodeCodePoint:
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: Array(content.unicodeScalars)[span.offset..<span.offset + span.length])
        return String(scalars)
    case .utf16CodeUnit: return String(decoding: Array(content.utf16)[span.offset..<span.offset + span.length], as: UTF16.self)
    }
}

@Suite("Document Intelligence")
struct DocumentIntelligenceTests {
    @Test("content is the lines in reading order, one per line, pages one after another")
    func content() {
        let two = Receipt.result(pages: [Receipt.page(documents: nil), Receipt.page(number: 2, documents: nil)])
        let result = DocumentIntelligence.analyzeResult(two, model: .read, apiVersion: .v2024_11_30)
        let lines = Receipt.lines.map(\.text)
        #expect(result.content == (lines + lines).joined(separator: "\n"))
        #expect(result.pages.map(\.pageNumber) == [1, 2])
        #expect(result.pages[0].lines.map(\.content) == lines)
        #expect(result.pages[1].words.map(\.content) == Receipt.lines.flatMap { $0.words.map(\.text) })
        #expect(result.paragraphs.count == 4)
        #expect((result.modelId, result.apiVersion, result.contentFormat) == ("prebuilt-read", "2024-11-30", "text"))
        #expect(result.documents == nil)
    }

    @Test("every word's, line's, paragraph's and page's span is its text in content, in each unit", arguments: DocumentIntelligence.StringIndexType.allCases)
    func spans(unit: DocumentIntelligence.StringIndexType) throws {
        let two = Receipt.result(pages: [Receipt.page(documents: [Receipt.document]), Receipt.page(number: 2, documents: nil)])
        let result = DocumentIntelligence.analyzeResult(two, model: .receipt, apiVersion: .v2023_07_31, stringIndexType: unit)
        #expect(result.stringIndexType == unit)
        for page in result.pages {
            for word in page.words { #expect(cut(result.content, word.span, unit) == word.content) }
            for line in page.lines { #expect(cut(result.content, try #require(line.spans.first), unit) == line.content) }
            let span = try #require(page.spans.first)
            #expect(cut(result.content, span, unit) == page.lines.map(\.content).joined(separator: "\n"))
        }
        for paragraph in result.paragraphs { #expect(cut(result.content, try #require(paragraph.spans.first), unit) == paragraph.content) }
        // The second page starts after the first's last line and a newline.
        let first = try #require(result.pages[0].spans.first), second = try #require(result.pages[1].spans.first)
        #expect(second.offset == first.offset + first.length + 1)
        // The units differ where they must: the cake is two UTF-16 units, the accent one more code point.
        let cake = try #require(result.pages[0].words.first { $0.content == "🍰" })
        #expect(cake.span.length == (unit == .utf16CodeUnit ? 2 : 1))
        let cafe = try #require(result.pages[0].words.first)
        #expect(cafe.span.length == (unit == .textElements ? 4 : 5))
    }

    @Test("fields keep their type's value member, content, region, confidence and the spans of their words")
    func fields() throws {
        let result = DocumentIntelligence.analyzeResult(Receipt.result(pages: [Receipt.page(documents: [Receipt.document])]), model: .receipt,
                                                        apiVersion: .v2024_11_30, stringIndexType: .utf16CodeUnit)
        let document = try #require(result.documents?.first)
        #expect(document.docType == "receipt")
        #expect(document.boundingRegions == [.init(pageNumber: 1, polygon: [30, 30, 750, 30, 750, 420, 30, 420])])
        #expect(document.confidence == 0.8)
        // The document covers every line of the page.
        #expect(document.spans == result.pages[0].spans)
        let f = document.fields
        #expect(f["MerchantName"]?.type == "string" && f["MerchantName"]?.valueString == "Cafe\u{301} Lumière")
        #expect(f["MerchantAddress"]?.valueAddress == .init(houseNumber: "12", road: "Rue de Rivoli", city: "Paris", countryRegion: "FRA",
                                                              streetAddress: "12 Rue de Rivoli"))
        #expect(f["MerchantPhoneNumber"]?.type == "phoneNumber" && f["MerchantPhoneNumber"]?.valuePhoneNumber == "+33142600000")
        #expect(f["TransactionDate"]?.valueDate == "2026-03-14" && f["TransactionTime"]?.valueTime == "12:34:00")
        #expect(f["Total"]?.valueCurrency == .init(amount: 10.9, currencySymbol: "€", currencyCode: "EUR"))
        #expect(f["ItemCount"]?.type == "integer" && f["ItemCount"]?.valueInteger == 2)
        let item = try #require(f["Items"]?.valueArray?.first)
        #expect(f["Items"]?.type == "array" && item.type == "object")
        #expect(item.valueObject?["Quantity"]?.valueNumber == 2 && item.valueObject?["Quantity"]?.type == "number")
        #expect(item.valueObject?["Description"]?.valueString == "Tarte 🍰")
        #expect(f["Total"]?.confidence == 0.876)
        #expect(f["Total"]?.boundingRegions == [.init(pageNumber: 1, polygon: Receipt.quad(Receipt.lines[8].boundingBox).flatMap { [Double($0.x), Double($0.y)] })])
        // Each field's spans are its content; the address, on one line, is one span.
        for name in ["MerchantName", "MerchantAddress", "MerchantPhoneNumber", "TransactionDate", "TransactionTime", "Total", "Subtotal"] {
            let field = try #require(f[name])
            let spans = try #require(field.spans, "\(name) has spans")
            #expect(spans.map { cut(result.content, $0, .utf16CodeUnit) }.joined(separator: " ") == field.content, "\(name)")
        }
        // "€9.00" is printed twice; the subtotal's is the one on its own line, not the item's.
        let subtotal = try #require(f["Subtotal"]?.spans?.first)
        let subtotalLine = try #require(result.pages[0].lines[5].spans.first)
        #expect(subtotal.offset > subtotalLine.offset && subtotal.offset < subtotalLine.offset + subtotalLine.length)
        #expect(f["Nowhere"]?.spans == nil && f["Nowhere"]?.boundingRegions == nil)
        #expect(f["Items"]?.spans == nil && f["Items"]?.content == nil)
    }

    @Test("a field over two lines gets one span per line")
    func twoLines() throws {
        var fields = Receipt.fields
        var address = Receipt.field(.address, "Cafe\u{301} Lumière 12 Rue de Rivoli, Paris")
        address.boundingBox = .init(x: 40, y: 40, width: 700, height: 70)
        fields["MerchantAddress"] = address
        var document = Receipt.document
        document.fields = fields
        let result = DocumentIntelligence.analyzeResult(Receipt.result(pages: [Receipt.page(documents: [document])]), model: .receipt,
                                                        apiVersion: .v2024_11_30)
        let spans = try #require(result.documents?.first?.fields["MerchantAddress"]?.spans)
        #expect(spans.map { cut(result.content, $0, .textElements) } == ["Cafe\u{301} Lumière", "12 Rue de Rivoli, Paris"])
    }

    @Test("a PDF page is measured in inches (its pixels over its resolution)")
    func inches() throws {
        let result = DocumentIntelligence.analyzeResult(Receipt.result(pages: [Receipt.page(resolution: 200, documents: [Receipt.document])]),
                                                        model: .receipt, apiVersion: .v2024_11_30)
        let page = try #require(result.pages.first)
        #expect((page.unit, page.width, page.height) == ("inch", 4, 5))
        #expect(page.words[0].polygon == [0.2, 0.2, 0.6, 0.2, 0.6, 0.35, 0.2, 0.35])
        #expect(result.documents?.first?.boundingRegions.first?.polygon == [0.15, 0.15, 3.75, 0.15, 3.75, 2.1, 0.15, 2.1])
        let image = DocumentIntelligence.analyzeResult(Receipt.result(pages: [Receipt.page(documents: nil)]), model: .read, apiVersion: .v2024_11_30)
        #expect((image.pages[0].unit, image.pages[0].width) == ("pixel", 800))
        #expect(image.pages[0].words[0].polygon == [40, 40, 120, 40, 120, 70, 40, 70])
    }

    @Test("the JSON is the API's: value members by type, no members for absent values, 2023-07-31 without 2024's")
    func json() throws {
        let result = Receipt.result(pages: [Receipt.page(documents: [Receipt.document])])
        let encoder = JSONEncoder()
        let new = try #require(try JSONSerialization.jsonObject(with: encoder.encode(
            DocumentIntelligence.analyzeResult(result, model: .receipt, apiVersion: .v2024_11_30))) as? [String: Any])
        let old = try #require(try JSONSerialization.jsonObject(with: encoder.encode(
            DocumentIntelligence.analyzeResult(result, model: .receipt, apiVersion: .v2023_07_31))) as? [String: Any])
        #expect(new["contentFormat"] as? String == "text" && old["contentFormat"] == nil)
        #expect(old["apiVersion"] as? String == "2023-07-31" && old["stringIndexType"] as? String == "textElements")
        let documents = try #require(old["documents"] as? [[String: Any]])
        let fields = try #require(documents.first?["fields"] as? [String: [String: Any]])
        let total = try #require(fields["Total"])
        #expect(Set(total.keys) == ["type", "valueCurrency", "content", "boundingRegions", "spans", "confidence"])
        #expect((total["valueCurrency"] as? [String: Any])?["amount"] as? Double == 10.9)
        #expect(fields["TransactionDate"]?["valueDate"] as? String == "2026-03-14")
        let read = try #require(try JSONSerialization.jsonObject(with: encoder.encode(
            DocumentIntelligence.analyzeResult(result, model: .read, apiVersion: .v2024_11_30))) as? [String: Any])
        #expect(read["documents"] == nil)
    }

    @Test("a poll carries the result only when succeeded and the error only when failed")
    func operation() throws {
        let result = Receipt.result(pages: [Receipt.page(documents: nil)])
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let running = DocumentIntelligence.operationResult(status: .running, created: date, lastUpdated: date, result: result, model: .read,
                                                           apiVersion: .v2024_11_30)
        #expect(running.analyzeResult == nil && running.error == nil && running.createdDateTime == "2023-11-14T22:13:20.250Z")
        let done = DocumentIntelligence.operationResult(status: .succeeded, created: date, lastUpdated: date, result: result, model: .read,
                                                        apiVersion: .v2024_11_30)
        #expect(done.analyzeResult?.pages.count == 1 && done.error == nil)
        let failed = DocumentIntelligence.operationResult(status: .failed, created: date, lastUpdated: date, result: nil,
                                                          error: .init(code: "InvalidRequest", message: "Invalid request.",
                                                                       inner: ("InvalidContent", "The file is corrupted.")),
                                                          model: .receipt, apiVersion: .v2023_07_31)
        #expect(failed.analyzeResult == nil && failed.error?.innererror?.code == "InvalidContent")
    }

    @Test("a page that could not be read stays in the result, empty, with a warning (2024-11-30)")
    func unreadPage() throws {
        var page = Receipt.page(documents: nil)
        page.blocks = []
        page.error = .init(code: .corruptImage, message: "the page is damaged")
        let result = DocumentIntelligence.analyzeResult(Receipt.result(pages: [page]), model: .read, apiVersion: .v2024_11_30)
        #expect(result.pages.first?.words.isEmpty == true && result.pages.first?.spans == [.init(offset: 0, length: 0)])
        #expect(result.warnings?.first?.target == "1")
        #expect(DocumentIntelligence.analyzeResult(Receipt.result(pages: [page]), model: .read, apiVersion: .v2023_07_31).warnings == nil)
    }

    @Test("a line whose text is not its words' gets its words joined, so spans still hold")
    func mismatchedLine() throws {
        var page = Receipt.page(documents: nil)
        page.blocks[0].paragraphs[0].lines[0].text = "something else"
        let result = DocumentIntelligence.analyzeResult(Receipt.result(pages: [page]), model: .read, apiVersion: .v2024_11_30)
        #expect(result.pages[0].lines[0].content == "Cafe\u{301} Lumière")
        for word in result.pages[0].words { #expect(cut(result.content, word.span, .textElements) == word.content) }
    }
}
