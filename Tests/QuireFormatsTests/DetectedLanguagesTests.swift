import Foundation
import QuireWire
import Testing
@testable import QuireFormats

/// Results built by hand as a worker answers a request without a language hint: every level read with
/// the default model (`languages: ["en"]`), the identifier's findings in `detectedLanguages`.
///
/// `italian` is an Italian page with one English line: block 1 holds a paragraph with no identification
/// of its own (its lines': "La città sorge sulla riva del lago" it 1.0, 28 letters; "Welcome to the
/// lake" en 0.9, 16; "ed è nota per il suo porto antico" it 1.0, 26) whose English line's words were
/// read with the Italian model, and a paragraph identified as Italian whose one line is too short to
/// identify. `chinese` is a Traditional Chinese page of one line.
enum LanguageSample {
    typealias Detected = OCRResult.DetectedLanguage

    static func box(_ y: Int) -> OCRResult.Box { .init(x: 20, y: y, width: 500, height: 30) }

    static func line(_ text: String, y: Int, detected: [Detected]?, wordLanguages: [String] = ["en"]) -> OCRResult.Line {
        let words = text.split(separator: " ").enumerated().map { index, word in
            OCRResult.Word(text: String(word), boundingBox: .init(x: 20 + 60 * index, y: y, width: 50, height: 30), polygon: [],
                           confidence: 0.9, languages: wordLanguages, break: "space", symbols: [])
        }
        var line = OCRResult.Line(text: text, boundingBox: box(y), polygon: [], confidence: 0.9, languages: ["en"], baseline: nil,
                                  direction: "ltr", words: words)
        line.detectedLanguages = detected
        return line
    }

    static func paragraph(_ lines: [OCRResult.Line], y: Int, detected: [Detected]?) -> OCRResult.Paragraph {
        var paragraph = OCRResult.Paragraph(text: lines.map(\.text).joined(separator: "\n"), boundingBox: box(y), polygon: [],
                                            confidence: 0.9, languages: ["en"], lines: lines)
        paragraph.detectedLanguages = detected
        return paragraph
    }

    static func page(_ paragraphs: [OCRResult.Paragraph], detected: [Detected]) -> OCRResult.Page {
        var block = OCRResult.Block(text: "", boundingBox: box(0), polygon: [], confidence: 0.9, languages: ["en"], paragraphs: paragraphs)
        block.detectedLanguages = detected
        var page = OCRResult.Page(pageNumber: 1, width: 600, height: 400, unit: "pixel", rotation: 0, mirrored: false, deskewAngle: 0,
                                  transform: [1, 0, 0, 0, 1, 0], recognitionScale: 1, text: "", confidence: 0.9, languages: ["en"],
                                  blocks: [block], renderings: nil)
        page.detectedLanguages = detected
        return page
    }

    static func result(_ page: OCRResult.Page) -> OCRResult {
        OCRResult(text: "", pages: [page], metadata: .init(engine: "tesseract 5.5.0", languages: ["en"], mode: "document", format: "png",
                                                           pageCount: 1, timings: .init(decodeMs: 0, recognizeMs: 0, encodeMs: 0), steps: []))
    }

    static let italian = result(page([
        paragraph([
            line("La città sorge sulla riva del lago", y: 20, detected: [Detected(language: "it", confidence: 1)]),
            line("Welcome to the lake", y: 60, detected: [Detected(language: "en", confidence: 0.9)], wordLanguages: ["it"]),
            line("ed è nota per il suo porto antico", y: 100, detected: [Detected(language: "it", confidence: 1)]),
        ], y: 20, detected: nil),
        paragraph([line("Il museo apre", y: 160, detected: nil, wordLanguages: ["it"])], y: 160,
                  detected: [Detected(language: "it", confidence: 0.99)]),
    ], detected: [Detected(language: "it", confidence: 0.93), Detected(language: "en", confidence: 0.07)]))

    static let chinese = result(page([
        paragraph([line("臺北 是 臺灣 的 首都", y: 20, detected: [Detected(language: "zh-Hant", confidence: 0.99)])], y: 20,
                  detected: [Detected(language: "zh-Hant", confidence: 0.99)]),
    ], detected: [Detected(language: "zh-Hant", confidence: 0.99)]))
}

/// `[[languageCode, confidence]]` of a Cloud Vision `property` (confidence nil where absent).
private func languages(_ element: [String: Any]) throws -> [[String?]] {
    guard let property = element["property"] as? [String: Any], let detected = property["detectedLanguages"] as? [[String: Any]] else { return [] }
    return detected.map { [$0["languageCode"] as? String, ($0["confidence"] as? Double).map { String($0) }] }
}

@Suite("Detected languages in Cloud Vision")
struct CloudVisionLanguageTests {
    @Test("page, block, paragraph and word carry languageCode and confidence; locale is the page's language")
    func italianPage() throws {
        let response = try json(.cloudVision, LanguageSample.italian)
        let annotations = try list(response["textAnnotations"])
        #expect(try object(annotations.first)["locale"] as? String == "it")
        #expect(try annotations.dropFirst().allSatisfy { try object($0)["locale"] == nil })

        let page = try object(list(object(response["fullTextAnnotation"])["pages"]).first)
        #expect(try languages(page) == [["it", "0.93"], ["en", "0.07"]])
        let block = try object(list(page["blocks"]).first)
        #expect(try languages(block) == [["it", "0.93"], ["en", "0.07"]])
        let paragraphs = try list(block["paragraphs"]).map(object)
        // The first paragraph has no identification of its own: its lines', by their share of its letters
        // (it: 28 + 26 of 70 at 1.0 → 0.771; en: 16 of 70 at 0.9 → 0.206).
        #expect(try languages(paragraphs[0]) == [["it", "0.771"], ["en", "0.206"]])
        #expect(try languages(paragraphs[1]) == [["it", "0.99"]])

        let words = try paragraphs[0]["words"].map(list)?.map(object) ?? []
        #expect(words.count == 7 + 4 + 8)
        // Words take their line's identification, over the model that read them.
        #expect(try words[0 ..< 7].map(languages) == Array(repeating: [["it", "1.0"]], count: 7))
        #expect(try words[7 ..< 11].map(languages) == Array(repeating: [["en", "0.9"]], count: 4))
        // A line too short to identify: its words keep the model that read them, without a confidence.
        let shortLineWords = try list(paragraphs[1]["words"]).map(object)
        #expect(try shortLineWords.map(languages) == Array(repeating: [["it", nil]], count: 3))
    }

    @Test("a Traditional Chinese page is zh-Hant everywhere, locale included")
    func traditionalChinese() throws {
        let response = try json(.cloudVision, LanguageSample.chinese)
        #expect(try object(list(response["textAnnotations"]).first)["locale"] as? String == "zh-Hant")
        let page = try object(list(object(response["fullTextAnnotation"])["pages"]).first)
        #expect(try languages(page) == [["zh-Hant", "0.99"]])
        let paragraph = try object(list(object(list(page["blocks"]).first)["paragraphs"]).first)
        #expect(try languages(paragraph) == [["zh-Hant", "0.99"]])
        #expect(try list(paragraph["words"]).map { try languages(object($0)) } == Array(repeating: [["zh-Hant", "0.99"]], count: 5))
    }

    @Test("decodes into the response type, and without identification keeps the models, unscored")
    func withoutIdentification() throws {
        var plain = LanguageSample.italian
        plain.pages[0].detectedLanguages = nil
        plain.pages[0].blocks[0].detectedLanguages = nil
        for p in plain.pages[0].blocks[0].paragraphs.indices {
            plain.pages[0].blocks[0].paragraphs[p].detectedLanguages = nil
            for l in plain.pages[0].blocks[0].paragraphs[p].lines.indices { plain.pages[0].blocks[0].paragraphs[p].lines[l].detectedLanguages = nil }
        }
        let response = CloudVision.response(plain, feature: .documentTextDetection)
        #expect(response.textAnnotations?.first?.locale == "en")
        #expect(response.fullTextAnnotation?.pages.first?.property?.detectedLanguages == [.init(languageCode: "en", confidence: nil)])
        let decoded = try JSONDecoder().decode(CloudVision.Response.self, from: ResultFormat.cloudVision.render(LanguageSample.italian))
        #expect(decoded.fullTextAnnotation?.pages.first?.property?.detectedLanguages?.first == .init(languageCode: "it", confidence: 0.93))
    }
}

@Suite("Detected languages in Azure Read 3.2")
struct AzureReadLanguageTests {
    @Test("the page's language is the one identified; a line says its own only where it differs")
    func italianPage() throws {
        let read = AzureRead.analyzeResult(LanguageSample.italian).readResults[0]
        #expect(read.language == "it")
        #expect(read.lines.map(\.language) == [nil, "en", nil, nil])
        let page = try object(list(object(json(.azureRead, LanguageSample.italian)["analyzeResult"])["readResults"]).first)
        #expect(page["language"] as? String == "it")
        #expect(try list(page["lines"]).map { try object($0)["language"] as? String } == [nil, "en", nil, nil])
    }

    @Test("a Traditional Chinese page is zh-Hant, as Azure's language codes spell it")
    func traditionalChinese() {
        let read = AzureRead.analyzeResult(LanguageSample.chinese).readResults[0]
        #expect(read.language == "zh-Hant")
        #expect(read.lines.map(\.language) == [nil])
    }
}

@Suite("Detected languages in hOCR and ALTO")
struct MarkupLanguageTests {
    @Test("hOCR: lang where a level differs from what it is in, and on every paragraph")
    func hocr() throws {
        let xml = try ParsedXML(HOCR.document(LanguageSample.italian))
        #expect(xml.elements.first?.attributes["lang"] == "en")
        #expect(xml.classed("ocr_page").map { $0.attributes["lang"] } == ["it"])
        #expect(xml.classed("ocr_carea").map { $0.attributes["lang"] } == [nil])
        #expect(xml.classed("ocr_par").map { $0.attributes["lang"] } == ["it", "it"])
        #expect(xml.classed("ocr_line").map { $0.attributes["lang"] } == [nil, "en", nil, nil])
        #expect(xml.classed("ocrx_word").allSatisfy { $0.attributes["lang"] == nil })

        let chinese = try ParsedXML(HOCR.document(LanguageSample.chinese))
        #expect(chinese.classed("ocr_page").map { $0.attributes["lang"] } == ["zh-Hant"])
        #expect(chinese.classed("ocr_par").map { $0.attributes["lang"] } == ["zh-Hant"])
        #expect(chinese.classed("ocr_line").map { $0.attributes["lang"] } == [nil])
    }

    @Test("ALTO: Page LANG and OTHERLANGS, LANG on every TextBlock, on TextLine and String where they differ")
    func alto() throws {
        let xml = try ParsedXML(ALTO.document(LanguageSample.italian))
        let page = try #require(xml.named("Page").first)
        #expect(page.attributes["LANG"] == "it")
        #expect(page.attributes["OTHERLANGS"] == "en")
        #expect(xml.named("ComposedBlock").allSatisfy { $0.attributes["LANG"] == nil })
        #expect(xml.named("TextBlock").map { $0.attributes["LANG"] } == ["it", "it"])
        #expect(xml.named("TextLine").map { $0.attributes["LANG"] } == [nil, "en", nil, nil])
        #expect(xml.named("String").allSatisfy { $0.attributes["LANG"] == nil })

        let chinese = try ParsedXML(ALTO.document(LanguageSample.chinese))
        #expect(chinese.named("Page").first?.attributes["LANG"] == "zh-Hant")
        #expect(chinese.named("Page").first?.attributes["OTHERLANGS"] == nil)
        #expect(chinese.named("TextBlock").map { $0.attributes["LANG"] } == ["zh-Hant"])
    }
}

@Suite("Combining lines' languages")
struct CombinedLanguagesTests {
    @Test("weighted by letters, most likely first; nothing identified is nil")
    func weighted() throws {
        let combined = try #require(DetectedLanguages.combined([
            ([.init(language: "en", confidence: 1)], 10), ([.init(language: "it", confidence: 1)], 30), (nil, 100),
        ]))
        #expect(combined.map(\.language) == ["it", "en"])
        #expect(combined.map(\.confidence) == [0.75, 0.25])
        #expect(DetectedLanguages.combined([(nil, 5), ([], 5)]) == nil)
    }
}
