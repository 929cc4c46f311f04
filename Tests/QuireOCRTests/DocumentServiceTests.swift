import Foundation
import QuireWire
import Testing

@testable import QuireOCR

/// `ocr.document`'s plan for a document, without a broker: the page jobs' keys and frames.
@Suite("A document's page jobs")
struct DocumentServiceTests {
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 32)

    @Test("the key is the same for the same request and file, and differs when either does")
    func keys() throws {
        let frame = Array(#"{"languages":["eng"]}"#.utf8)
        let one = try DocumentService.plan(frame, document: png, maxPages: 10)
        #expect(one.key == (try DocumentService.plan(frame, document: png, maxPages: 10)).key)
        #expect(one.key.hasPrefix("doc-") && one.key.count == 4 + 32)
        #expect(one.key != (try DocumentService.plan(Array(#"{"languages":["deu"]}"#.utf8), document: png, maxPages: 10)).key)
        #expect(one.key != (try DocumentService.plan(frame, document: png + [1], maxPages: 10)).key)
    }

    @Test("a file that is not a PDF is one job with the request as it came")
    func notAPDF() throws {
        let frame = Array(#"{"pages":[2]}"#.utf8)
        let plan = try DocumentService.plan(frame, document: png, maxPages: 10)
        #expect(plan.numbers.isEmpty && plan.files == [png] && plan.pageFrame == frame)
    }

    @Test("a request that is not JSON is refused in the protocol's words")
    func refusals() {
        do {
            _ = try DocumentService.plan(Array("[]".utf8), document: png, maxPages: 10)
            Issue.record("a JSON array was taken for a request")
        } catch {
            #expect(error.code == .invalidJSON)
        }
    }
}
