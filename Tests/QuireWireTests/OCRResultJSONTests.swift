import Foundation
import QuireWire
import Testing

/// `OCRResult.jsonBytes()` writes the result without Foundation's encoder; it must write the very bytes
/// `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` writes, so that nothing a client sees changes.
@Suite("OCR result JSON: the direct writer gives JSONEncoder's bytes")
struct OCRResultJSONTests {
    static func foundation(_ result: OCRResult) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(result))
    }

    typealias R = OCRResult

    static func box(_ x: Int) -> R.Box { R.Box(x: x, y: -x, width: x * 3, height: 0) }
    static func polygon(_ x: Int) -> [R.Point] { [R.Point(x: x, y: 0), R.Point(x: -x, y: Int.max), R.Point(x: Int.min, y: 7)] }

    /// Every member type, every optional both ways, strings that need every escape, and numbers whose
    /// text is not obvious (whole Doubles, negative zero, exponents, the ends of Int).
    static func hostile(attachments: Bool, baseline: Bool, renderings: Bool) -> OCRResult {
        let texts = ["plain", "quote \" and back\\slash", "a/b http://x/y", "\u{01}\u{08}\u{09}\u{0A}\u{0B}\u{0C}\u{0D}\u{1F} \u{7F}",
                     "é ñ ß 漢字 👍🏽 \u{200F}", "", "\u{00}end"]
        let numbers: [Double?] = [0, -0.0, 3, 0.1, 1e-7, 1e21, -2.5, 0.93000000000000005, nil, 123456789.125, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude]
        func symbol(_ i: Int) -> R.Symbol { R.Symbol(text: texts[i % texts.count], boundingBox: box(i), polygon: polygon(i), confidence: numbers[i % numbers.count]) }
        func word(_ i: Int) -> R.Word {
            R.Word(text: texts[(i + 1) % texts.count], boundingBox: box(i), polygon: polygon(i), confidence: numbers[(i + 3) % numbers.count],
                   languages: i % 2 == 0 ? [] : ["en", "de-CH"], break: ["space", "line", "none"][i % 3], symbols: (0..<(i % 4)).map(symbol))
        }
        // Detected languages where the baseline is (both ways), with an odd tag and awkward numbers.
        let detected: [R.DetectedLanguage]? = baseline ? [.init(language: "zh-Hant", confidence: 0.97), .init(language: "x\"/", confidence: -0.0)] : nil
        func line(_ i: Int) -> R.Line {
            var line = R.Line(text: texts[(i + 2) % texts.count], boundingBox: box(i), polygon: polygon(i), confidence: numbers[(i + 5) % numbers.count],
                              languages: ["en"], baseline: baseline ? R.Baseline(start: R.Point(x: 1, y: 2), end: R.Point(x: -3, y: 4)) : nil,
                              direction: "ltr", words: (0..<3).map { word(i * 3 + $0) })
            line.detectedLanguages = i % 2 == 0 ? detected : []
            return line
        }
        var paragraph = R.Paragraph(text: texts[3], boundingBox: box(5), polygon: polygon(5), confidence: nil, languages: [], lines: (0..<3).map(line))
        paragraph.detectedLanguages = detected
        var block = R.Block(text: texts[4], boundingBox: box(6), polygon: [], confidence: 0.5, languages: ["fr"], paragraphs: [paragraph, paragraph])
        block.detectedLanguages = detected.map { Array($0.prefix(1)) }
        let keys = ["b", "A", "a", "a10", "a2", "é", "_x", "Z", "aa", "a ", "\"q\""]
        var page = R.Page(pageNumber: 1, width: 2100, height: -1, unit: "pixel", rotation: 270, mirrored: true, deskewAngle: -0.0,
                          transform: [1, 0, -0.25, 1e-9, 3.5, 0], recognitionScale: 2.8, text: texts[1], confidence: 0.871,
                          languages: ["en"], blocks: [block, R.Block(text: "", boundingBox: box(0), polygon: [], confidence: nil, languages: [], paragraphs: [])],
                          renderings: renderings ? Dictionary(uniqueKeysWithValues: keys.map { ($0, "v/\($0)") }) : nil)
        page.detectedLanguages = detected
        // A PDF page's members: its resolution, and an error where it could not be read.
        if renderings {
            // A receipt's fields: every value type, nested, with escapes in names and text.
            var total = R.Field(type: .currency, content: "RM 60.30", confidence: 0.93, boundingBox: box(3), polygon: polygon(3))
            total.valueCurrency = R.Currency(amount: 60.3, currencyCode: "MYR", currencySymbol: "RM")
            var date = R.Field(type: .date, content: texts[2], confidence: 1)
            date.valueDate = "2018-10-19"
            var address = R.Field(type: .address, content: texts[1], confidence: -0.0)
            address.valueAddress = R.Address(streetAddress: "27, Jalan/Dedap 13", postalCode: "81100", city: "Johor Bahru")
            var quantity = R.Field(type: .number, confidence: 0.5)
            quantity.valueNumber = 1e21
            var item = R.Field(type: .object, confidence: 0.7)
            item.valueObject = ["Description": date, "Quantity": quantity, "\"q\"": total]
            var items = R.Field(type: .array, confidence: 0.7)
            items.valueArray = [item, item]
            page.documents = [R.Document(kind: "receipt", boundingBox: box(2), polygon: polygon(2), confidence: 0.8,
                                         fields: ["Total": total, "TransactionDate": date, "MerchantAddress": address, "Items": items])]
            page.resolution = 300
            page.error = R.PageError(code: .tooManyPixels, message: "page 2: \"200\" inches/wide")
        }
        var steps = [R.Step(page: 2, step: "scale", applied: true, parameters: Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, Double($0) / 3) }))]
        steps.append(R.Step(step: "deskew", applied: false, parameters: [:]))
        let metadata = R.Metadata(engine: "tesseract 5.5.0", languages: ["en"], mode: "document", format: "png", pageCount: 1,
                                  timings: R.Timings(decodeMs: 12.5, recognizeMs: 1000, encodeMs: 0.001), steps: steps)
        return R(text: texts.joined(separator: "\u{0C}"), pages: [page, page], metadata: metadata,
                 attachments: attachments ? [R.Attachment(output: "pdf", frame: 2, mediaType: "application/pdf", size: 0)] : nil)
    }

    @Test("every member, optional and escape as JSONEncoder writes it", arguments: [false, true])
    func hostileResults(_ present: Bool) throws {
        for (a, b, r) in [(present, present, present), (present, !present, present), (!present, present, !present)] {
            let result = Self.hostile(attachments: a, baseline: b, renderings: r)
            let direct = try result.jsonBytes()
            #expect(direct == (try Self.foundation(result)), "attachments \(a), baseline \(b), renderings \(r)")
            #expect(try JSONDecoder().decode(OCRResult.self, from: Data(direct)) == result)
        }
    }

    @Test("a result with nothing read: empty pages, empty text")
    func emptyResult() throws {
        let result = OCRResult(text: "", pages: [], metadata: .init(engine: "", languages: [], mode: "", format: "", pageCount: 0,
                                                                   timings: .init(decodeMs: 0, recognizeMs: 0, encodeMs: 0), steps: []))
        #expect(try result.jsonBytes() == (try Self.foundation(result)))
    }

    @Test("NaN and infinities are refused, as JSONEncoder refuses them", arguments: [Double.nan, .infinity, -.infinity])
    func nonConforming(_ value: Double) throws {
        var result = Self.hostile(attachments: false, baseline: false, renderings: false)
        result.pages[0].deskewAngle = value
        #expect(throws: NonConformingNumber.self) { try result.jsonBytes() }
        #expect(throws: EncodingError.self) { try Self.foundation(result) }
        result = Self.hostile(attachments: false, baseline: false, renderings: false)
        result.pages[1].blocks[0].paragraphs[0].lines[2].words[1].symbols[0].confidence = value
        #expect(throws: NonConformingNumber.self) { try result.jsonBytes() }
    }
}
