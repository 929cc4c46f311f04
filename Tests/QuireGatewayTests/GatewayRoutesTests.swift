import Foundation
import QuireGateway
import QuireHTTP
import QuireWire
import Synchronization
import Testing

/// The gateway's routes without sockets: requests in, responses out, with a recognizer that records
/// what it was asked and answers from the Quire result fixture of `QuireFormatsTests`.
@Suite("Gateway routes")
struct GatewayRoutesTests {
    static let fixture: OCRResult? = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("QuireFormatsTests/Fixtures/upright.json")
        return (try? Data(contentsOf: url)).flatMap { try? JSONDecoder().decode(OCRResult.self, from: $0) }
    }()

    final class Calls: Sendable {
        let seen = Mutex<[OCRCall]>([])
        var all: [OCRCall] { seen.withLock { $0 } }
    }

    func router(_ calls: Calls, answer: Result<OCRResult, GatewayFailure>? = nil) throws -> HTTPRouter {
        let result = try #require(Self.fixture)
        return Gateway.router { call in
            calls.seen.withLock { $0.append(call) }
            return answer ?? .success(result)
        }
    }

    func post(_ router: HTTPRouter, _ path: String, _ json: String, headers: HTTPHeaders = ["Content-Type": "application/json"]) throws
        -> (Int, [String: Any]) {
        let response = router.respond(to: HTTPRequest(method: "POST", path: path, headers: headers, body: Array(json.utf8)))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        return (response.status, object)
    }

    @Test("features pick the mode, hints the languages, a bearer token is passed on")
    func modes() throws {
        let calls = Calls()
        let r = try router(calls)
        let (status, body) = try post(r, "/v1/images:annotate", """
            {"requests":[{"image":{"content":"aGVsbG8="},"features":[{"type":"TEXT_DETECTION"}]},
                         {"image":{"content":"aGVsbG8"},"features":[{"type":"DOCUMENT_TEXT_DETECTION"}],"imageContext":{"languageHints":["de"]}}]}
            """, headers: ["Content-Type": "application/json", "Authorization": "Bearer abc.def"])
        #expect(status == 200)
        #expect((body["responses"] as? [Any])?.count == 2)
        #expect(calls.all.map(\.mode) == ["text", "document"])
        #expect(calls.all.map(\.languages) == [nil, ["de"]])
        #expect(calls.all.map(\.token) == ["abc.def", "abc.def"])
        #expect(calls.all.allSatisfy { $0.image == Array("hello".utf8) })
    }

    @Test("bad input is Google's 400 and reaches no worker", arguments: [
        "{", #"{"requests":[]}"#, #"{"requests":[{"image":{"content":"%%"},"features":[{"type":"TEXT_DETECTION"}]}]}"#,
        #"{"requests":[{"image":{"source":{"imageUri":"http://x"}},"features":[{"type":"TEXT_DETECTION"}]}]}"#,
    ])
    func badInput(_ json: String) throws {
        let calls = Calls()
        let (status, body) = try post(try router(calls), "/v1/images:annotate", json)
        #expect(status == 400)
        let error = try #require(body["error"] as? [String: Any])
        #expect(error["code"] as? Int == 400)
        #expect(error["status"] as? String == "INVALID_ARGUMENT")
        #expect(calls.all.isEmpty)
    }

    @Test("a refused token is 401 for the whole batch; an image error stays in its response")
    func failures() throws {
        let (status, body) = try post(try router(Calls(), answer: .failure(GatewayFailure(.unauthenticated, "no token"))), "/v1/images:annotate",
                                      #"{"requests":[{"image":{"content":"aGVsbG8="},"features":[{"type":"TEXT_DETECTION"}]}]}"#)
        #expect(status == 401)
        #expect((body["error"] as? [String: Any])?["status"] as? String == "UNAUTHENTICATED")
        let (okStatus, okBody) = try post(try router(Calls(), answer: .failure(GatewayFailure(.invalidImage, "not an image"))), "/v1/images:annotate",
                                          #"{"requests":[{"image":{"content":"aGVsbG8="},"features":[{"type":"TEXT_DETECTION"}]}]}"#)
        #expect(okStatus == 200)
        let first = try #require((okBody["responses"] as? [[String: Any]])?.first)
        #expect((first["error"] as? [String: Any])?["code"] as? Int == 3)
    }

    @Test("the callable envelope, with features as one object, at both paths")
    func callable() throws {
        let calls = Calls()
        let r = try router(calls)
        for path in ["/annotateImage", "/p/us-central1/annotateImage"] {
            let (status, body) = try post(r, path, #"{"data":{"image":{"content":"aGVsbG8="},"features":{"type":"TEXT_DETECTION"}}}"#)
            #expect(status == 200)
            #expect((body["result"] as? [String: Any])?["fullTextAnnotation"] != nil)
        }
        let (status, body) = try post(r, "/annotateImage", #"{"data":{"image":{"content":"aGVsbG8="},"features":{"type":"TEXT_DETECTION"}}}"#,
                                      headers: [:])
        #expect(status == 400)
        #expect((body["error"] as? [String: Any])?["status"] as? String == "INVALID_ARGUMENT")
        let (busy, busyBody) = try post(try router(Calls(), answer: .failure(GatewayFailure(.busy, "full"))), "/annotateImage",
                                        #"{"data":{"image":{"content":"aGVsbG8="},"features":[{"type":"TEXT_DETECTION"}]}}"#)
        #expect(busy == 429)
        #expect((busyBody["error"] as? [String: Any])?["status"] as? String == "RESOURCE_EXHAUSTED")
    }

    @Test("unknown routes and methods in Google's shape")
    func routes() throws {
        let r = try router(Calls())
        let missing = r.respond(to: HTTPRequest(method: "GET", path: "/nope"))
        #expect(missing.status == 404)
        let wrong = r.respond(to: HTTPRequest(method: "GET", path: "/v1/images:annotate"))
        #expect(wrong.status == 405)
        #expect(wrong.headers["Allow"] == "POST")
        #expect(String(decoding: wrong.body, as: UTF8.self).contains(#""status":"NOT_FOUND""#))
    }
}

/// The async Azure routes over a fake job store.
@Suite("Gateway Azure routes")
struct GatewayAzureTests {
    static let id = "0123456789abcdef0123456789abcdef"

    func router(_ state: JobState?) -> HTTPRouter {
        let jobs = JobBackend(submit: { _ in .success(Self.id) }, poll: { id, _ in .success(id == Self.id ? state : nil) })
        return Gateway.router(recognize: { _ in .failure(GatewayFailure(.internal, "unused")) }, jobs: jobs)
    }

    @Test("202 and Operation-Location on the request's host, for 3.2 and 2.0")
    func submit() {
        let r = router(nil)
        for (path, location) in [("/vision/v3.2/read/analyze", "/vision/v3.2/read/analyzeResults/"),
                                 ("/vision/v2.0/read/core/asyncBatchAnalyze", "/vision/v2.0/read/operations/")] {
            let response = r.respond(to: HTTPRequest(method: "POST", path: path,
                                                     headers: ["Host": "ocr.example:8080", "Content-Type": "application/octet-stream"], body: [1, 2, 3]))
            #expect(response.status == 202)
            #expect(response.headers["Operation-Location"] == "http://ocr.example:8080" + location + Self.id)
        }
    }

    @Test("the phases in each version's spelling; an unknown id is Azure's 404")
    func poll() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let r = router(JobState(phase: .queued, created: now, updated: now))
        let v3 = r.respond(to: HTTPRequest(method: "GET", path: "/vision/v3.2/read/analyzeResults/" + Self.id))
        #expect(String(decoding: v3.body, as: UTF8.self).contains(#""status":"notStarted""#))
        let v2 = r.respond(to: HTTPRequest(method: "GET", path: "/vision/v2.0/read/operations/" + Self.id))
        #expect(String(decoding: v2.body, as: UTF8.self) == #"{"status":"NotStarted"}"#)
        let missing = r.respond(to: HTTPRequest(method: "GET", path: "/vision/v3.2/read/analyzeResults/ffff"))
        #expect(missing.status == 404)
        #expect(String(decoding: missing.body, as: UTF8.self).contains(#""code":"NotFound""#))
    }
}
