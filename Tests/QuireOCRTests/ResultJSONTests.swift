import Foundation
import QuireOCR
import QuireWire
import Testing
import QuireTestSupport

/// The OCR worker writes its result with `OCRResult.jsonBytes()`; on a real page (every level, symbols,
/// steps with parameters, confidences Tesseract gives) it must write the bytes `JSONEncoder` wrote before.
@Suite("OCR result JSON: a real page's result, written directly, is JSONEncoder's")
struct ResultJSONTests {
    @Test("samples/hello.png, with and without symbols", arguments: [true, false])
    func realPage(_ symbols: Bool) throws {
        let bytes = try TestImages.sample()
        let recognizer = Recognizer(configuration: OCRConfiguration())
        let result = try recognizer.recognize(OCRRequest(symbols: symbols), image: bytes).result
        let words = result.pages.flatMap(\.blocks).flatMap(\.paragraphs).flatMap(\.lines).flatMap(\.words)
        #expect(words.count >= 2)
        #expect(words.allSatisfy { symbols ? !$0.symbols.isEmpty : $0.symbols.isEmpty })
        #expect(!result.metadata.steps.isEmpty)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(try result.jsonBytes() == Array(try encoder.encode(result)))
    }
}
