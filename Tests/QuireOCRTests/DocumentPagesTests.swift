import Foundation
import QuireOCR
import QuireWire
import Testing

/// A document's pages read one request each and put back together: no engine, results made here.
@Suite("A document's pages put back together")
struct DocumentPagesTests {
    static func result(_ text: String, engine: String = "tesseract 5.5.0", decodeMs: Double = 10) -> OCRResult {
        let page = OCRResult.Page(pageNumber: 1, width: 100, height: 50, unit: "pixel", rotation: 0, mirrored: false, deskewAngle: 0,
                                  transform: [1, 0, 0, 0, 1, 0], recognitionScale: 1, text: text, confidence: 0.9, languages: ["en"], blocks: [],
                                  renderings: nil)
        return OCRResult(text: text, pages: [page], metadata: .init(
            engine: engine, languages: ["en"], mode: "document", format: "pdf", pageCount: 1,
            timings: .init(decodeMs: decodeMs, recognizeMs: 100, encodeMs: 1), steps: [.init(page: 1, step: "scale", applied: false, parameters: [:])]))
    }

    @Test("pages numbered as in the file, steps with them, timings added, text with form feeds, a failed page as its error")
    func merge() throws {
        let replies: [Result<[UInt8], WireError>] = [
            .success(try Self.result("first\n", engine: "pdfium chromium/8149").jsonBytes()),
            .failure(WireError(.tooManyPixels, "page 1 is 60000×3300 pixels at 300 dpi")),
            .success(try Self.result("fifth\n", decodeMs: 30).jsonBytes()),
        ]
        let merged = try #require(DocumentPages.merge(replies, numbers: [2, 4, 5], pageCount: 9))
        #expect(merged.pages.map(\.pageNumber) == [2, 4, 5])
        #expect(merged.pages[1].error == .init(code: .tooManyPixels, message: "page 4 is 60000×3300 pixels at 300 dpi"), "its number in the file")
        #expect(merged.pages[1].text.isEmpty && merged.pages[1].blocks.isEmpty)
        #expect(merged.text == "first\n\u{0C}\u{0C}fifth\n")
        #expect(merged.metadata.pageCount == 9)
        #expect(merged.metadata.steps.map(\.page) == [2, 5])
        #expect(merged.metadata.timings.decodeMs == 40 && merged.metadata.timings.recognizeMs == 200)
        #expect(merged.metadata.engine == "tesseract 5.5.0", "Tesseract, since one page needed OCR")
        // Its JSON is a result like any other.
        _ = try JSONDecoder().decode(OCRResult.self, from: Data(merged.jsonBytes()))
    }

    @Test("an error that names no page gets the page's number before it")
    func otherErrors() throws {
        let merged = try #require(DocumentPages.merge([.success(try Self.result("a\n").jsonBytes()), .failure(WireError(.timeout, "no reply"))],
                                                      numbers: [1, 2], pageCount: 2))
        #expect(merged.pages[1].error?.message == "page 2: no reply")
    }

    @Test("no page read: no result")
    func allFailed() {
        #expect(DocumentPages.merge([.failure(WireError(.corruptImage, "damaged")), .success(Array("{}".utf8))], numbers: [1, 2], pageCount: 2) == nil)
    }

    @Test("one page alone asks for no selection")
    func pageRequest() {
        let single = DocumentPages.pageRequest(OCRRequest(languages: ["fra"], pages: [2, 3], textLayer: .ignore, pageLimit: 5))
        #expect(single.pages == nil && single.pageLimit == nil && single.languages == ["fra"] && single.textLayer == .ignore)
    }
}
