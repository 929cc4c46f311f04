import Foundation
import QuireBroker
import QuireStack
import QuireSupport
import QuireWire
import QuireWorker
import Testing

@testable import QuireClient

/// The typed Titanic calls: their frames and the reading of replies without sockets, then each call
/// against a broker with a job store in this process.
@Suite struct TitanicTests {
    static let logger = Logger(label: "test.titanic", level: .warning)

    static func object(_ frame: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(frame)) as? [String: Any])
    }

    @Test("the options and the token go into the first frame; without either it is left as it is")
    func jobFrame() throws {
        let frame = Array(#"{"languages":["eng"],"job":{"priority":"low"}}"#.utf8)
        #expect(try TitanicFrames.jobFrame(frame, options: JobOptions(), token: nil) == frame)
        let options = JobOptions(priority: "high", idempotencyKey: "k/1", deadlineMs: 60_000, maxAttempts: 2, resultTTLSeconds: 30)
        let object = try Self.object(try TitanicFrames.jobFrame(frame, options: options, token: "t0k"))
        #expect(object["languages"] as? [String] == ["eng"] && object["token"] as? String == "t0k")
        let job = try #require(object["job"] as? [String: Any])
        #expect(job["priority"] as? String == "high" && job["idempotencyKey"] as? String == "k/1" && job["deadlineMs"] as? Int == 60_000)
        #expect(job["maxAttempts"] as? Int == 2 && job["resultTtlSeconds"] as? Int == 30)
        // What the broker reads back is what was given.
        guard case .success(let (envelope, _)) = BrokerEnvelope.split(try TitanicFrames.jobFrame(frame, options: options, token: "t0k")) else {
            Issue.record("the broker could not read the frame"); return
        }
        #expect(envelope.job == options && envelope.token == "t0k")
        #expect(throws: WireError.self) { try TitanicFrames.jobFrame(Array("raw bytes".utf8), options: options, token: nil) }
    }

    @Test("the frame after a job id holds only what is set")
    func envelope() {
        #expect(TitanicFrames.envelope(token: nil, wait: nil) == nil)
        #expect(TitanicFrames.envelope(token: nil, wait: 20_000) == Array(#"{"waitMs":20000}"#.utf8))
        #expect(TitanicFrames.envelope(token: "a/b", wait: 5) == Array(#"{"token":"a/b","waitMs":5}"#.utf8))
        #expect(TitanicFrames.about("0f", token: nil, wait: nil) == [Array("0f".utf8)])
    }

    static func frames(_ status: String, _ rest: [UInt8]...) -> [[UInt8]] { [Array(status.utf8)] + rest }

    @Test("titanic.reply read: 200, an error answered, 300, 400 unknown, a job's end; other refusals thrown")
    func replies() throws {
        let unknown = WireError(.unknownJob, "no job")
        let dead = WireError(.workerLost, "the worker went away")
        let failed = WireError(.corruptImage, "not a PNG")
        #expect(try TitanicFrames.reply(Self.frames("200", [1], [2])) == .done([[1], [2]]))
        #expect(try TitanicFrames.reply(Self.frames("200", failed.jsonFrame)) == .failed(failed))
        #expect(try TitanicFrames.reply(Self.frames("300")) == .pending)
        #expect(try TitanicFrames.reply(Self.frames("400")) == .unknown(nil))
        #expect(try TitanicFrames.reply(Titanic.refusal(unknown)) == .unknown(unknown))
        for ending in ["dead", "expired", "cancelled"] {
            #expect(try TitanicFrames.reply(Self.frames("400 \(ending)", dead.jsonFrame)) == .ended(dead))
        }
        let refused = WireError(.unauthenticated, "no token")
        #expect(throws: Titanic.Refusal(status: .unknown, statusText: "400 unauthenticated", error: refused)) {
            try TitanicFrames.reply(Titanic.refusal(refused))
        }
        #expect(throws: Titanic.Refusal.self) { try TitanicFrames.reply(Titanic.refusal(WireError(.busy, "full"))) }
        #expect(throws: Titanic.Refusal.self) { try TitanicFrames.reply([]) }
        #expect(try TitanicFrames.jobID(Self.frames("200", Array(String(repeating: "ab", count: 16).utf8))) == String(repeating: "ab", count: 16))
        #expect(throws: ClientError.self) { try TitanicFrames.jobID(Self.frames("200", Array("17".utf8))) }
    }

    @Test("an OCR result is read from a reply frame; anything else is not one")
    func ocrReplyFrame() throws {
        let result = Self.ocrResult("hello")
        #expect(OCRResult(replyFrame: try result.jsonBytes()) == result)
        #expect(OCRResult(replyFrame: WireError(.corruptImage, "no").jsonFrame) == nil)
        #expect(OCRResult(replyFrame: Array("page".utf8)) == nil)
    }

    static func ocrResult(_ text: String) -> OCRResult {
        OCRResult(text: text, pages: [], metadata: .init(engine: "test", languages: ["en"], mode: "document", format: "png", pageCount: 1,
                                                           timings: .init(decodeMs: 0, recognizeMs: 0, encodeMs: 0), steps: []))
    }

    /// A fresh folder, removed afterwards.
    final class Folder {
        let path = NSTemporaryDirectory() + "quire-titanic-\(UUID().uuidString)"
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test("submit, result, status, cancel and close against a broker with a job store")
    func roundTrip() async throws {
        let folder = Folder()
        var broker = BrokerConfiguration(bind: "tcp://127.0.0.1:*")
        // `parked` has no worker: its jobs stay queued.
        broker.jobs = JobConfiguration(directory: folder.path, services: ["echo", "parked"])
        let stack = try Stack.start(StackConfiguration(broker: broker, workers: [WorkerGroup(service: EchoService.make(name: "echo"))]), logger: Self.logger)
        defer { stack.stop() }
        try await withClient(configuration: ClientConfiguration(broker: stack.connectEndpoint, timeout: 10_000, retries: 0)) { client in
            let jobs = client.jobs
            let id = try await jobs.submit(service: "echo", body: [Array("page".utf8)])
            #expect(Titanic.isJobID(id))
            #expect(try await jobs.result(of: id, wait: 5_000) == .done([Array("page".utf8)]))
            #expect(try await jobs.status(of: id).state == "done")
            try await jobs.close(id)
            guard case .unknown(let error) = try await jobs.result(of: id) else { Issue.record("a closed job is known"); return }
            #expect(error?.code == .unknownJob)
            await #expect(throws: Titanic.Refusal.self) { _ = try await jobs.status(of: id) }

            // An OCR result, as an `ocr` worker would answer it (echoed here), is read as one.
            let ocr = try await jobs.submit(service: "echo", body: [try Self.ocrResult("hello").jsonBytes()])
            #expect(try await jobs.ocrResult(of: ocr, wait: 5_000) == .done(Self.ocrResult("hello")))
            let plain = try await jobs.submit(service: "echo", body: [Array("page".utf8)])
            await #expect(throws: ClientError.self) { _ = try await jobs.ocrResult(of: plain, wait: 5_000) }

            // The same key is the same job; its options reach the broker.
            let options = JobOptions(priority: "low", idempotencyKey: "titanic-test")
            let parked = try await jobs.submit(service: "parked", body: [Array(#"{"n":1}"#.utf8)], options: options)
            #expect(try await jobs.submit(service: "parked", body: [Array(#"{"n":1}"#.utf8)], options: options) == parked)
            let status = try await jobs.status(of: parked)
            #expect(status.state == "queued" && status.priority == "low" && status.idempotencyKey == "titanic-test")
            #expect(try await jobs.result(of: parked) == .pending)
            #expect(try await jobs.cancel(parked).state == "cancelled")
            guard case .ended(let reason) = try await jobs.result(of: parked) else { Issue.record("a cancelled job has no end"); return }
            #expect(!reason.message.isEmpty)
            await #expect(throws: WireError.self) { _ = try await jobs.submit(service: "parked", body: [Array("raw".utf8)], options: options) }
        }
    }
}
