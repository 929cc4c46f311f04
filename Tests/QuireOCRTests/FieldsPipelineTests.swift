import Foundation
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

    func read(_ request: OCRRequest) throws -> OCRResult {
        let engines = FakeEngines(page: FakeRecognizer("fake", words: Self.receipt), installed: ["eng"])
        let image = try TestImages.page(width: 1_200, height: 900, glyphHeight: 24)
        return try Recognizer(configuration: OCRConfiguration(), engines: engines).recognize(request, image: image).result
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
}
