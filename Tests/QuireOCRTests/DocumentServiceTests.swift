import Foundation
import QuireBroker
import QuireClient
import QuireStack
import QuireSupport
import QuireWire
import QuireWorker
import Synchronization
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

/// `ocr.document` against a broker with a job store and a stand-in `ocr` worker.
@Suite("A document's page jobs at the broker")
struct DocumentPageJobsTests {
    /// `ocr` answering a fixed result, each request held until the gate opens; counts what it served.
    final class GatedOCR: Sendable {
        let gate = DispatchSemaphore(value: 0)
        let entered = Atomic<Int>(0)
        let served = Atomic<Int>(0)
        let frame: [UInt8]

        init(text: String) throws {
            frame = try OCRResult(text: text, pages: [], metadata: .init(engine: "test", languages: ["en"], mode: "document", format: "png", pageCount: 1,
                                                                          timings: .init(decodeMs: 0, recognizeMs: 0, encodeMs: 0), steps: [])).jsonBytes()
        }

        var service: WorkerService {
            WorkerService(name: OCRService.name, requiresJSONFrame: true) { Handler(owner: self) }
        }

        final class Handler: RequestHandler {
            let owner: GatedOCR
            init(owner: GatedOCR) { self.owner = owner }
            func handle(_ request: WorkerRequest) throws -> [[UInt8]] {
                owner.entered.add(1, ordering: .relaxed)
                owner.gate.wait()
                owner.served.add(1, ordering: .relaxed)
                return [owner.frame]
            }
        }
    }

    @Test("a page job closed under the document (its twin finished first) is submitted again, and the document is read")
    func pageClosedByATwin() async throws {
        let folder = NSTemporaryDirectory() + "quire-document-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var broker = BrokerConfiguration(bind: "tcp://127.0.0.1:*")
        broker.jobs = JobConfiguration(directory: folder, services: [OCRService.name])
        let ocr = try GatedOCR(text: "read once more")
        let stack = try Stack.start(StackConfiguration(broker: broker, workers: [WorkerGroup(service: ocr.service)]), logger: Logger(label: "test", level: .error))
        defer { _ = stack.stop() }
        let plan = try DocumentService.plan(OCRRequest().jsonBytes(), document: Array("one page".utf8), maxPages: 10)
        try await withClient(configuration: ClientConfiguration(broker: stack.connectEndpoint, timeout: 10_000, retries: 0)) { client in
            let reading = Task { try await DocumentService.read(plan, client: client, token: { nil }, progress: { _ in }) }
            // Once the worker holds the document's page job:
            // A minute: with every suite running at once on 2 cores, the cooperative pool can stall for seconds.
            let deadline = Date().addingTimeInterval(60)
            while ocr.entered.load(ordering: .relaxed) == 0 {
                try #require(Date() < deadline, "the worker never got the document's page")
                try await Task.sleep(for: .milliseconds(10))
            }
            // The twin: the same key is the same job, which it closes once its own document is put together.
            let id = try await client.jobs.submit(service: OCRService.name, body: [plan.pageFrame, plan.files[0]],
                                                  options: JobOptions(idempotencyKey: plan.key + "/1"))
            try await client.jobs.close(id)
            ocr.gate.signal()
            ocr.gate.signal()
            let frames = try await reading.value
            #expect(frames == [ocr.frame])
            #expect(ocr.served.load(ordering: .relaxed) == 2)
        }
    }
}
