import QuireOCR
import QuireWire
import Testing

/// The messages of `bad_request` speak the request schema's words (proto-json/ocr-request.schema.json),
/// never JSONDecoder's ("Cannot initialize Mode from invalid String value", "outputs.Index 0").
@Suite("OCR request error messages")
struct OCRRequestMessageTests {
    @Test("each field's problem is named with its path and what the schema allows", arguments: [
        (#"{"mode":"weird"}"#, "'mode' must be one of document, text, line"),
        (#"{"mode":3}"#, "'mode' must be one of document, text, line"),
        (#"{"outputs":["docx"]}"#, "'outputs[0]' must be one of result, text, hocr, alto, tsv, pdf"),
        (#"{"outputs":["text","png"]}"#, "'outputs[1]' must be one of result, text, hocr, alto, tsv, pdf"),
        (#"{"outputs":"text"}"#, "'outputs' must be a list of result, text, hocr, alto, tsv, pdf"),
        (#"{"languages":42}"#, "'languages' must be a list of language names (eng, de, zh-Hans) or one string like eng+deu"),
        (#"{"pages":[1,"2"]}"#, "'pages[1]' must be a page number (an integer from 1, or from -1 counting from the end)"),
        (#"{"pages":3}"#, "'pages' must be a list of page numbers (integers from 1, or from -1 counting from the end)"),
        (#"{"pages":[2,0]}"#, "'pages' are 1-based page numbers (or negative, from the end); there is no page 0"),
        (#"{"pageLimit":0}"#, "'pageLimit' must be an integer from 1"),
        (#"{"pageLimit":"5"}"#, "'pageLimit' must be an integer from 1"),
        (#"{"autoOrientation":"yes"}"#, "'autoOrientation' must be true or false"),
        (#"{"dpi":300.5}"#, "'dpi' must be an integer within 30…2400"),
        (#"{"dpi":"x"}"#, "'dpi' must be an integer within 30…2400"),
        (#"{"textLayer":"never"}"#, "'textLayer' must be one of auto, ignore"),
        (#"{"textLayer":false}"#, "'textLayer' must be one of auto, ignore"),
    ])
    func message(json: String, expected: String) {
        do {
            _ = try OCRRequest.parse(Array(json.utf8))
            Issue.record("\(json) was accepted")
        } catch {
            #expect(error.code == .badRequest)
            #expect(error.message == expected)
            #expect(!error.message.contains("Cannot initialize") && !error.message.contains("Index "))
        }
    }

    @Test("a PDF's text layer is used or ignored as asked")
    func textLayer() throws {
        #expect(try OCRRequest.parse(Array(#"{"textLayer":"ignore"}"#.utf8)).textLayer == .ignore)
        #expect(try OCRRequest.parse(Array(#"{"textLayer":"auto"}"#.utf8)).textLayer == .auto)
        #expect(try OCRRequest.parse(Array(#"{}"#.utf8)).textLayer == nil)
        #expect(String(decoding: OCRRequest(textLayer: .ignore).jsonBytes(), as: UTF8.self) == #"{"textLayer":"ignore"}"#)
    }

    @Test("pages counted from the end, cut to the limit, checked against the file and the worker's limit")
    func pageNumbers() throws {
        func numbers(_ json: String, count: Int, max: Int = 100) throws(WireError) -> [Int] {
            try OCRRequest.parse(Array(json.utf8)).pageNumbers(pageCount: count, maxPages: max, noun: "the PDF")
        }
        #expect(try numbers("{}", count: 3) == [1, 2, 3])
        #expect(try numbers(#"{"pages":[-1,1,-2]}"#, count: 7) == [7, 1, 6])
        #expect(try numbers(#"{"pageLimit":5}"#, count: 3) == [1, 2, 3])
        #expect(try numbers(#"{"pageLimit":5}"#, count: 40) == [1, 2, 3, 4, 5])
        #expect(try numbers(#"{"pages":[4,2,9],"pageLimit":2}"#, count: 9) == [4, 2])
        #expect(try numbers("{}", count: 0) == [1], "a file without pages of its own (an image) has one")
        #expect(throws: WireError.self) { try numbers(#"{"pages":[4]}"#, count: 3) }
        do { _ = try numbers(#"{"pages":[1,-4]}"#, count: 3) } catch {
            #expect(error.code == .badRequest && error.message == "page -4 requested; the PDF has 3")
        }
        do { _ = try numbers("{}", count: 120) } catch {
            #expect(error.code == .tooManyPages && error.limit == 100)
        }
    }

    @Test("pdf is an output")
    func pdfOutput() throws {
        #expect(try OCRRequest.parse(Array(#"{"outputs":["result","pdf"]}"#.utf8)).outputs == [.result, .pdf])
    }
}
