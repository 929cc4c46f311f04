import Foundation
@testable import QuireGateway
import QuireHTTP
import QuireWire
import Synchronization
import Testing

/// Document Intelligence's routes (2024-11-30 under `/documentintelligence`, 2023-07-31 under
/// `/formrecognizer`) without sockets: what reaches the job store, and what each answer looks like.
@Suite("Document Intelligence routes")
struct DocumentIntelligenceRoutesTests {
    static let id = "0123456789abcdef0123456789abcdef"
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 32)
    static let pdf: [UInt8] = Array("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n".utf8)

    final class Submitted: Sendable {
        let calls = Mutex<[OCRCall]>([])
        var all: [OCRCall] { calls.withLock { $0 } }
    }

    func router(_ submitted: Submitted, state: JobSnapshot? = nil, failure: GatewayFailure? = nil) -> HTTPRouter {
        let jobs = JobBackend(submit: { call in
            submitted.calls.withLock { $0.append(call) }
            return failure.map { .failure($0) } ?? .success(Self.id)
        }, poll: { id, _ in
            if let failure { return .failure(failure) }
            return .success(id == Self.id ? state : nil)
        })
        return Gateway.router(recognize: { _ in .failure(GatewayFailure(.internal, "unused")) }, jobs: jobs)
    }

    /// `target` is a path with its query, as a client sends it.
    func send(_ router: HTTPRouter, _ method: String, _ target: String, body: [UInt8] = [], headers: HTTPHeaders = ["Content-Type": "image/png"])
        -> HTTPResponse {
        let parts = target.split(separator: "?", maxSplits: 1).map(String.init)
        let query = parts.count > 1 ? parts[1].split(separator: "&").map { pair -> (name: String, value: String) in
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            return (kv[0], (kv.count > 1 ? kv[1] : "").removingPercentEncoding ?? "")
        } : []
        var headers = headers
        headers.set("Host", "gateway.test")
        return router.respond(to: HTTPRequest(method: method, path: parts[0], query: query, headers: headers, body: body))
    }

    func json(_ response: HTTPResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    /// The error's code, inner code and message; checks the shape on the way.
    func error(_ response: HTTPResponse) throws -> (code: String, inner: String?, message: String) {
        let body = try json(response)
        #expect(Set(body.keys) == ["error"])
        let error = try #require(body["error"] as? [String: Any])
        let inner = error["innererror"] as? [String: Any]
        #expect(response.headers["x-ms-error-code"] == (inner?["code"] as? String ?? error["code"] as? String))
        return (try #require(error["code"] as? String), inner?["code"] as? String, try #require(error["message"] as? String))
    }

    @Test("prebuilt-receipt asks for a receipt's fields, with the pages, the locale as a hint and the key; 202 with where to poll")
    func receipt() throws {
        let submitted = Submitted()
        let response = send(router(submitted), "POST",
                            "/documentintelligence/documentModels/prebuilt-receipt:analyze?api-version=2024-11-30&pages=1-3,5&locale=en-US"
                                + "&stringIndexType=unicodeCodePoint&features=barcodes&_overload=analyzeDocument",
                            body: Self.pdf, headers: ["Content-Type": "application/pdf", "Ocp-Apim-Subscription-Key": "qk_key"])
        #expect(response.status == 202)
        #expect(response.headers["Operation-Location"] == "http://gateway.test/documentintelligence/documentModels/prebuilt-receipt/analyzeResults/"
                + Self.id + "?api-version=2024-11-30&stringIndexType=unicodeCodePoint")
        let call = try #require(submitted.all.first)
        #expect(call.fields == [.receipt] && call.pages == [1, 2, 3, 5] && call.languages == ["en-US"] && call.mode == "document")
        #expect(call.apiKey == "qk_key" && call.image == Self.pdf)
        // What the worker receives: the fields in the request frame.
        let frame = try OCRRequest.parse(call.requestFrame)
        #expect(frame.fields == [.receipt])
    }

    @Test("prebuilt-read asks for no fields; the Form Recognizer route answers 2023-07-31 the same way")
    func read() throws {
        let submitted = Submitted()
        let r = router(submitted)
        let new = send(r, "POST", "/documentintelligence/documentModels/prebuilt-read:analyze?api-version=2024-11-30", body: Self.png)
        let old = send(r, "POST", "/formrecognizer/documentModels/prebuilt-read:analyze?api-version=2023-07-31", body: Self.png,
                       headers: ["Content-Type": "application/octet-stream"])
        #expect(new.status == 202 && old.status == 202)
        #expect(old.headers["Operation-Location"]?.hasPrefix("http://gateway.test/formrecognizer/documentModels/prebuilt-read/analyzeResults/") == true)
        #expect(submitted.all.count == 2 && submitted.all.allSatisfy { $0.fields == nil && $0.languages == nil && $0.pages == nil })
    }

    @Test("JSON bodies: base64Source is the document; urlSource goes to the allow-list (none here); neither or both is refused")
    func jsonBodies() throws {
        let submitted = Submitted()
        let r = router(submitted)
        let path = "/documentintelligence/documentModels/prebuilt-read:analyze?api-version=2024-11-30"
        let base64 = #"{"base64Source":"\#(Data(Self.png).base64EncodedString())"}"#
        #expect(send(r, "POST", path, body: Array(base64.utf8), headers: ["Content-Type": "application/json"]).status == 202)
        #expect(submitted.all.first?.image == Self.png)
        for body in [#"{"urlSource":"https://example.com/receipt.jpg"}"#, "{}", #"{"urlSource":"https://a/b","base64Source":"AAAA"}"#, "{nope",
                     #"{"base64Source":"%%%"}"#] {
            let response = send(r, "POST", path, body: Array(body.utf8), headers: ["Content-Type": "application/json"])
            #expect(response.status == 400, "\(body)")
            let e = try error(response)
            #expect(e.code == "InvalidRequest" && e.inner == "InvalidContentSourceFormat", "\(body)")
        }
        #expect(submitted.all.count == 1)
    }

    @Test("bad input gets the service's error and reaches no job")
    func badInput() throws {
        let submitted = Submitted()
        let r = router(submitted)
        let path = "/documentintelligence/documentModels/prebuilt-receipt:analyze?api-version=2024-11-30"
        let cases: [(String, [UInt8], String, Int, String, String?)] = [
            (path, Array("not a picture".utf8), "image/jpeg", 400, "InvalidRequest", "InvalidContent"),
            (path, [], "image/png", 400, "InvalidRequest", "InvalidContentLength"),
            (path, Self.png, "text/plain", 415, "InvalidRequest", "UnsupportedMediaType"),
            (path + "&pages=3-1", Self.pdf, "application/pdf", 400, "InvalidRequest", "InvalidParameter"),
            (path + "&stringIndexType=bytes", Self.pdf, "application/pdf", 400, "InvalidRequest", "InvalidParameter"),
            ("/documentintelligence/documentModels/prebuilt-invoice:analyze?api-version=2024-11-30", Self.png, "image/png", 404, "NotFound", "ModelNotFound"),
            ("/formrecognizer/documentModels/my-custom-model:analyze?api-version=2023-07-31", Self.png, "image/png", 404, "NotFound", "ModelNotFound"),
            ("/documentintelligence/documentModels/prebuilt-read:analyze?api-version=2023-07-31", Self.png, "image/png", 404, "404", nil),
            ("/documentintelligence/documentModels/prebuilt-read:analyze", Self.png, "image/png", 404, "404", nil),
            ("/documentintelligence/documentModels/prebuilt-read:classify?api-version=2024-11-30", Self.png, "image/png", 404, "404", nil),
            ("/documentintelligence/nothing/here?api-version=2024-11-30", Self.png, "image/png", 404, "404", nil),
        ]
        for (target, body, type, status, code, inner) in cases {
            let response = send(r, "POST", target, body: body, headers: ["Content-Type": type])
            #expect(response.status == status, "\(target)")
            let e = try error(response)
            #expect(e.code == code && e.inner == inner && !e.message.isEmpty, "\(target)")
        }
        let invalid = try error(send(r, "POST", path, body: Array("GIF8 nope".utf8)))
        #expect(invalid.message == "Invalid request.")
        #expect(submitted.all.isEmpty)
        // Another method on a route: the front's 405, with Allow.
        let get = send(r, "GET", path)
        #expect(get.status == 405 && get.headers["Allow"] == "POST")
        #expect(try error(get).code == "405")
    }

    @Test("the signatures of every format the service takes pass the check; others do not")
    func sniff() {
        let heic: [UInt8] = [0, 0, 0, 24] + Array("ftypheic".utf8) + Array(repeating: 0, count: 12)
        let webp: [UInt8] = Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8 ".utf8)
        for good in [Self.png, Self.pdf, [0xFF, 0xD8, 0xFF, 0xE0], [0x49, 0x49, 0x2A, 0x00], [0x4D, 0x4D, 0x00, 0x2A], Array("GIF89a".utf8), heic, webp,
                     Array("BM".utf8) + Array(repeating: 0, count: 30)] {
            #expect(DocumentSniff.isSupported(good), "\(good.prefix(12))")
        }
        let mp4: [UInt8] = [0, 0, 0, 24] + Array("ftypisom".utf8) + Array(repeating: 0, count: 12)
        for bad in [[], Array("hello".utf8), mp4, Array("BM".utf8), Array("<html>".utf8)] as [[UInt8]] {
            #expect(!DocumentSniff.isSupported(bad), "\(bad.prefix(12))")
        }
    }

    @Test("a poll says notStarted and running with Retry-After, then the analyze result in the model's and version's shape")
    func poll() throws {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let queued = send(router(Submitted(), state: JobSnapshot(phase: .queued, created: date, updated: date)), "GET",
                          "/documentintelligence/documentModels/prebuilt-read/analyzeResults/\(Self.id)?api-version=2024-11-30")
        #expect(queued.status == 200 && queued.headers["Retry-After"] == "1")
        #expect(try json(queued)["status"] as? String == "notStarted")
        let result = try #require(GatewayRoutesTests.fixture)
        let done = JobSnapshot(phase: .succeeded, created: date, updated: date, result: result)
        let response = send(router(Submitted(), state: done), "GET",
                            "/formrecognizer/documentModels/prebuilt-receipt/analyzeResults/\(Self.id)?api-version=2023-07-31&stringIndexType=utf16CodeUnit")
        #expect(response.status == 200 && response.headers["Retry-After"] == nil)
        let body = try json(response)
        #expect(body["status"] as? String == "succeeded" && body["error"] == nil)
        let analyze = try #require(body["analyzeResult"] as? [String: Any])
        #expect(analyze["modelId"] as? String == "prebuilt-receipt" && analyze["apiVersion"] as? String == "2023-07-31")
        #expect(analyze["stringIndexType"] as? String == "utf16CodeUnit" && analyze["contentFormat"] == nil)
        #expect(analyze["documents"] as? [Any] != nil)
        let words = try #require((analyze["pages"] as? [[String: Any]])?.first?["words"] as? [[String: Any]])
        #expect(words.map { $0["content"] as? String } == result.pages[0].blocks.flatMap { $0.paragraphs.flatMap { $0.lines.flatMap { $0.words.map(\.text) } } })
    }

    @Test("a failed job carries the service's error: InvalidContent for a file no worker could read, an internal error otherwise")
    func failed() throws {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let path = "/documentintelligence/documentModels/prebuilt-read/analyzeResults/\(Self.id)?api-version=2024-11-30"
        let unreadable = JobSnapshot(phase: .failed, created: date, updated: date, error: "not an image",
                                     failure: GatewayFailure(WireError(.notAnImage, "not an image")))
        let body = try json(send(router(Submitted(), state: unreadable), "GET", path))
        let detail = try #require(body["error"] as? [String: Any])
        #expect(body["status"] as? String == "failed" && body["analyzeResult"] == nil)
        #expect(detail["code"] as? String == "InvalidRequest" && (detail["innererror"] as? [String: Any])?["code"] as? String == "InvalidContent")
        let lost = JobSnapshot(phase: .failed, created: date, updated: date, error: "the worker died", failure: GatewayFailure(WireError(.workerLost, "lost")))
        let lostError = try #require(try json(send(router(Submitted(), state: lost), "GET", path))["error"] as? [String: Any])
        #expect(lostError["code"] as? String == "InternalServerError")
        // An id never issued, and a model the service does not have.
        let missing = send(router(Submitted()), "GET", "/documentintelligence/documentModels/prebuilt-read/analyzeResults/ffff?api-version=2024-11-30")
        let missingError = try error(missing)
        #expect(missing.status == 404 && missingError.code == "NotFound")
        let unknownModel = send(router(Submitted()), "GET", "/documentintelligence/documentModels/prebuilt-layout/analyzeResults/\(Self.id)?api-version=2024-11-30")
        let unknownError = try error(unknownModel)
        #expect(unknownModel.status == 404 && unknownError.inner == "ModelNotFound")
    }

    @Test("refused keys and tokens are the front's 401; busy 429; no worker 503", arguments: [
        (GatewayFailure.invalidAPIKey, ["Ocp-Apim-Subscription-Key": "qk_bad"], 401, "401", "invalid subscription key"),
        (GatewayFailure(.unauthenticated, "a token is required"), [:], 401, "401", "missing subscription key"),
        (GatewayFailure(.unauthenticated, "the token has expired"), ["Authorization": "Bearer x.y.z"], 401, "401", "expired"),
        (GatewayFailure(.busy, "queues are full"), [:], 429, "429", "full"),
        (GatewayFailure(.unavailable, "no worker"), [:], 503, "ServiceUnavailable", "worker"),
    ] as [(GatewayFailure, [String: String], Int, String, String)])
    func refusals(failure: GatewayFailure, headers: [String: String], status: Int, code: String, words: String) throws {
        var all: HTTPHeaders = ["Content-Type": "image/png"]
        for (name, value) in headers { all.set(name, value) }
        let r = router(Submitted(), failure: failure)
        for response in [send(r, "POST", "/documentintelligence/documentModels/prebuilt-read:analyze?api-version=2024-11-30", body: Self.png, headers: all),
                         send(r, "GET", "/formrecognizer/documentModels/prebuilt-read/analyzeResults/\(Self.id)?api-version=2023-07-31", headers: all)] {
            #expect(response.status == status)
            let e = try error(response)
            #expect(e.code == code && e.message.contains(words), "\(e.message)")
        }
    }
}
