import Foundation
import QuireRecognition
import QuireTestSupport
import QuireWire
import Testing

@testable import QuireOCR

/// A request's `fields` through the whole pipeline, on fake engines: each read page gets its documents
/// and a `fields` step; a request without them gets neither.
@Suite struct FieldsInThePipelineTests {
    static let receipt = ["CORNER CAFE SDN BHD", "12, JALAN SS 2/24,", "47300 PETALING JAYA", "DATE: 23/03/2018 14:32",
                          "NASI LEMAK 2 7.50 15.00", "SUBTOTAL 15.00", "GST 0.90", "TOTAL 15.90", "CASH 20.00", "CHANGE 4.10"]
        .enumerated().flatMap { row, line in
            // One fake word a word, left to right on the row.
            line.split(separator: " ").enumerated().map { column, word in
                FakeWord(String(word), at: (0.05 + 0.15 * Double(column), 0.04 + 0.09 * Double(row), 0.12, 0.05), confidence: 0.93)
            }
        }

    func read(_ request: OCRRequest, words: [FakeWord] = receipt, lines: FakeLineReader? = nil) throws -> OCRResult {
        let engines = FakeEngines(page: FakeRecognizer("fake", words: words), installed: ["eng"])
        engines.lines = lines
        let image = try TestImages.page(width: 1_200, height: 900, glyphHeight: 24)
        return try Recognizer(configuration: OCRConfiguration(), engines: engines).recognize(request, image: image).result
    }

    /// The receipt with its total misread: `15.70`, where cash − change and subtotal + tax say 15.90.
    static let misread = receipt.map { word in
        var word = word
        if word.text == "15.90" { word.text = "15.70" }
        return word
    }

    @Test func aTotalNoCheckAgreesWithIsReadAgainAndTheNewReadingTaken() throws {
        // The date's crop, then the total's, the cash's, the change's, the subtotal's and the tax's.
        let lines = FakeLineReader(["23/03/2018", "15.90", "20.00", "4.10", "15.00", "0.90"].map { ReadLine(text: $0, confidence: 0.99) })
        let result = try read(OCRRequest(languages: ["eng"], engine: .tesseract, fields: [.receipt]), words: Self.misread, lines: lines)
        #expect(lines.shown.count == 6)
        let step = try #require(result.metadata.steps.first { $0.step == "reread" })
        #expect(step.applied && step.parameters["spans"] == 6 && step.parameters["changed"] == 1 && step.parameters["amounts"] == 1)
        let page = try #require(result.pages.first)
        #expect(page.documents?.first?.fields["Total"]?.valueCurrency?.amount == 15.90)
        // The page's text says it too (the fake engine reads each word as a line of its own).
        #expect(page.text.contains("15.90") && !page.text.contains("15.70"))
        // The second look comes before the fields are found.
        let order = result.metadata.steps.map(\.step)
        #expect(try #require(order.firstIndex(of: "reread")) < #require(order.firstIndex(of: "fields")))
    }

    @Test func aTotalTheReceiptAgreesWithIsNotReadAgainAndNoLineReaderMeansNone() throws {
        let lines = FakeLineReader([ReadLine(text: "23/08/2018", confidence: 0.5)])
        let agreed = try read(OCRRequest(languages: ["eng"], engine: .tesseract, fields: [.receipt]), lines: lines)
        // Only the date was read again, and its unsure reading not taken.
        #expect(lines.shown.count == 1)
        #expect(agreed.metadata.steps.first { $0.step == "reread" }?.applied == false)
        #expect(agreed.pages.first?.documents?.first?.fields["TransactionDate"]?.valueDate == "2018-03-23")

        let without = try read(OCRRequest(languages: ["eng"], engine: .tesseract, fields: [.receipt]), words: Self.misread)
        let step = try #require(without.metadata.steps.first { $0.step == "reread" })
        #expect(!step.applied && step.parameters["lineReader"] == 0)
        #expect(without.pages.first?.documents?.first?.fields["Total"]?.valueCurrency?.amount == 15.70)
        // Without fields, nothing is read again.
        let plain = try read(OCRRequest(languages: ["eng"], engine: .tesseract), words: Self.misread, lines: lines)
        #expect(lines.shown.count == 1 && !plain.metadata.steps.contains { $0.step == "reread" })
    }

    @Test func aTotalTheLineReaderReadsAlikeIsConfirmedAndItsChecksAreNotRead() throws {
        // The date's crop, then the total's: read as the page reader read it, the total stands, and
        // cash, change, subtotal and tax are not read.
        let lines = FakeLineReader(["23/03/2018", "15.70", "20.00", "4.10"].map { ReadLine(text: $0, confidence: 0.99) })
        let result = try read(OCRRequest(languages: ["eng"], engine: .tesseract, fields: [.receipt]), words: Self.misread, lines: lines)
        #expect(lines.shown.count == 2)
        let step = try #require(result.metadata.steps.first { $0.step == "reread" })
        #expect(!step.applied && step.parameters["confirmed"] == 1 && step.parameters["crops"] == 2 && step.parameters["spans"] == 2)
        #expect(result.pages.first?.documents?.first?.fields["Total"]?.valueCurrency?.amount == 15.70)
    }

    @Test func aReceiptsFieldsAreOnItsPage() throws {
        let result = try read(OCRRequest(languages: ["eng"], engine: .tesseract, fields: [.receipt]))
        let document = try #require(result.pages.first?.documents?.first)
        #expect(document.kind == "receipt")
        #expect(document.fields["Total"]?.valueCurrency?.amount == 15.90)
        #expect(document.fields["TransactionDate"]?.valueDate == "2018-03-23")
        #expect(document.fields["MerchantName"]?.valueString == "CORNER CAFE SDN BHD")
        let step = try #require(result.metadata.steps.first { $0.step == "fields" })
        #expect(step.applied && step.page == 1 && step.parameters["ms"] != nil)
        // The direct JSON writer carries them.
        let decoded = try JSONDecoder().decode(OCRResult.self, from: Data(try result.jsonBytes()))
        #expect(decoded.pages.first?.documents == result.pages.first?.documents)
    }

    @Test func withoutFieldsThereAreNone() throws {
        let result = try read(OCRRequest(languages: ["eng"], engine: .tesseract))
        #expect(result.pages.first?.documents == nil)
        #expect(!result.metadata.steps.contains { $0.step == "fields" })
    }

    @Test func aReadingsTallLinesAreCountedInTheLowerHalfOfItsText() throws {
        // Each fake word is a line of its own, 0.05 of the image high: the total made twice as tall.
        var words = Self.receipt
        let total = try #require(words.firstIndex { $0.text == "15.90" })
        words[total].box.height = 0.1
        let result = try read(OCRRequest(languages: ["eng"], engine: .tesseract, fields: [.receipt]), words: words)
        let page = try #require(result.pages.first)
        #expect(Recognizer.tallLines(page) == 1)
        #expect(Recognizer.tallLines(try read(OCRRequest(languages: ["eng"], engine: .tesseract)).pages[0]) == 0)
    }
}
