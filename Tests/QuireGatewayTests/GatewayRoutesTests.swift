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

    func router(_ state: JobSnapshot?) -> HTTPRouter {
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
        let r = router(JobSnapshot(phase: .queued, created: now, updated: now))
        let v3 = r.respond(to: HTTPRequest(method: "GET", path: "/vision/v3.2/read/analyzeResults/" + Self.id))
        #expect(String(decoding: v3.body, as: UTF8.self).contains(#""status":"notStarted""#))
        let v2 = r.respond(to: HTTPRequest(method: "GET", path: "/vision/v2.0/read/operations/" + Self.id))
        #expect(String(decoding: v2.body, as: UTF8.self) == #"{"status":"NotStarted"}"#)
        let missing = r.respond(to: HTTPRequest(method: "GET", path: "/vision/v3.2/read/analyzeResults/ffff"))
        #expect(missing.status == 404)
        #expect(String(decoding: missing.body, as: UTF8.self).contains(#""code":"NotFound""#))
    }
}

/// Image Analysis 4.0: synchronous, query-driven, Azure Core's error body.
@Suite("Gateway Image Analysis route")
struct GatewayImageAnalysisTests {
    static let path = "/computervision/imageanalysis:analyze"

    func respond(_ router: HTTPRouter, query: [(String, String)], body: [UInt8] = [1, 2, 3],
                 headers: HTTPHeaders = ["Content-Type": "application/octet-stream"]) throws -> (HTTPResponse, [String: Any]) {
        let response = router.respond(to: HTTPRequest(method: "POST", path: Self.path, query: query.map { (name: $0.0, value: $0.1) },
                                                      headers: headers, body: body))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        return (response, object)
    }

    @Test("features=read reads the bytes in document mode, passes the bearer token on, answers the result shape", arguments: ImageAnalysisAPI.apiVersions)
    func reads(_ version: String) throws {
        let calls = GatewayRoutesTests.Calls()
        let r = try GatewayRoutesTests().router(calls)
        let (response, body) = try respond(r, query: [("api-version", version), ("features", "read")],
                                           headers: ["Content-Type": "application/octet-stream", "Authorization": "Bearer t.k",
                                                     "Ocp-Apim-Subscription-Key": "ignored"])
        #expect(response.status == 200)
        #expect(response.headers["apim-request-id"] != nil)
        #expect(calls.all.map(\.mode) == ["document"])
        #expect(calls.all.map(\.token) == ["t.k"])
        #expect(calls.all.first?.image == [1, 2, 3])
        #expect(body["modelVersion"] as? String == "2023-10-01")
        let metadata = try #require(body["metadata"] as? [String: Any])
        #expect((metadata["width"] as? Int ?? 0) > 0)
        let blocks = try #require((body["readResult"] as? [String: Any])?["blocks"] as? [[String: Any]])
        let line = try #require((blocks.first?["lines"] as? [[String: Any]])?.first)
        #expect((line["boundingPolygon"] as? [Any])?.count == 4)
    }

    @Test("bad queries and bodies get InvalidRequest with the reason in innererror, and reach no worker", arguments: [
        ([("features", "read")], "application/octet-stream", "x", 400, "BadArgument"),
        ([("api-version", "2022-01-01"), ("features", "read")], "application/octet-stream", "x", 400, "BadArgument"),
        ([("api-version", "2023-10-01")], "application/octet-stream", "x", 400, "BadArgument"),
        ([("api-version", "2023-10-01"), ("features", "read,tags")], "application/octet-stream", "x", 400, "NotSupportedVisualFeature"),
        ([("api-version", "2023-10-01"), ("features", "colour")], "application/octet-stream", "x", 400, "NotSupportedVisualFeature"),
        ([("api-version", "2023-10-01"), ("features", "read")], "application/json", #"{"url":"https://e.com/a.png"}"#, 400, "InvalidImageUrl"),
        ([("api-version", "2023-10-01"), ("features", "read")], "application/json", "{", 400, "BadArgument"),
        ([("api-version", "2023-10-01"), ("features", "read")], "application/octet-stream", "", 400, "InvalidImageSize"),
        ([("api-version", "2023-10-01"), ("features", "read")], "text/plain", "x", 415, "UnsupportedMediaType"),
    ] as [([(String, String)], String, String, Int, String)])
    func refusals(_ query: [(String, String)], _ type: String, _ body: String, _ status: Int, _ inner: String) throws {
        let calls = GatewayRoutesTests.Calls()
        let (response, object) = try respond(try GatewayRoutesTests().router(calls), query: query, body: Array(body.utf8), headers: ["Content-Type": type])
        #expect(response.status == status)
        #expect(response.headers["x-ms-error-code"] == "InvalidRequest")
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["code"] as? String == "InvalidRequest")
        #expect((error["innererror"] as? [String: Any])?["code"] as? String == inner)
        #expect(calls.all.isEmpty)
    }

    @Test("worker and broker failures in the service's codes", arguments: [
        (GatewayFailure.Kind.invalidImage, 400, "InvalidRequest"), (.unauthenticated, 401, "401"), (.forbidden, 403, "403"),
        (.busy, 429, "429"), (.unavailable, 503, "ServiceUnavailable"), (.internal, 500, "InternalServerError"),
    ])
    func failures(_ kind: GatewayFailure.Kind, _ status: Int, _ code: String) throws {
        let r = try GatewayRoutesTests().router(GatewayRoutesTests.Calls(), answer: .failure(GatewayFailure(kind, "why")))
        let (response, object) = try respond(r, query: [("api-version", "2023-10-01"), ("features", "read")])
        #expect(response.status == status)
        #expect((object["error"] as? [String: Any])?["code"] as? String == code)
        #expect((object["error"] as? [String: Any])?["message"] as? String == "why")
    }

    @Test("misses and server refusals come in the shape of the API the path belongs to")
    func shapes() throws {
        let r = try GatewayRoutesTests().router(GatewayRoutesTests.Calls())
        let missing = r.respond(to: HTTPRequest(method: "POST", path: "/computervision/nothing"))
        #expect(missing.status == 404)
        #expect(String(decoding: missing.body, as: UTF8.self).contains(#""code":"404""#))
        let wrong = r.respond(to: HTTPRequest(method: "GET", path: Self.path))
        #expect(wrong.status == 405)
        #expect(wrong.headers["Allow"] == "POST")
        let callable = r.respond(to: HTTPRequest(method: "GET", path: "/annotateImage"))
        #expect(callable.status == 400)
        #expect(String(decoding: callable.body, as: UTF8.self).contains(#""status":"INVALID_ARGUMENT""#))
        for (path, needle) in [("/v1/images:annotate", #""status":"INVALID_ARGUMENT""#), ("/annotateImage", #""status":"RESOURCE_EXHAUSTED""#),
                               ("/vision/v3.2/read/analyze", #""code":"InvalidImageSize""#), (Self.path, #""code":"InvalidImageSize""#)] {
            let refused = r.rejection(413, "too large", HTTPRequest(method: "POST", path: path))
            #expect(refused.status == 413)
            #expect(String(decoding: refused.body, as: UTF8.self).contains(needle), "\(path)")
        }
    }
}
