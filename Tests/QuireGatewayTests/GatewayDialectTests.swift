import Foundation
import QuireHTTP
import QuireWire
import Testing
@testable import QuireGateway

/// Each API family's refusals and error mapping, through the gateway's router: the family whose route
/// (or prefix) a request addresses answers it, in its own body, with its own status.
@Suite("Gateway dialects")
struct GatewayDialectTests {
    static let jobID = "0123456789abcdef0123456789abcdef"

    /// A router whose OCR calls, jobs and token requests all fail with `failure` (nil: the OCR call is
    /// never expected, jobs are submitted).
    func router(failing failure: GatewayFailure? = nil) -> HTTPRouter {
        let answer = failure ?? GatewayFailure(.internal, "unused")
        let jobs = JobBackend(submit: { _ in failure.map { .failure($0) } ?? .success(Self.jobID) }, poll: { _, _ in .success(nil) })
        let tokens = TokenBackend { _ in .failure(.transport(answer)) }
        return Gateway.router(recognize: { _ in .failure(answer) }, jobs: jobs, tokens: tokens)
    }

    func request(_ method: String, _ path: String, type: String? = nil, body: String = "", query: [(name: String, value: String)] = []) -> HTTPRequest {
        HTTPRequest(method: method, path: path, query: query, headers: type.map { ["Content-Type": $0] } ?? [:], body: Array(body.utf8))
    }

    func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    func object(_ response: HTTPResponse) throws -> [String: String] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String])
    }

    static let imageAnalysisQuery = [(name: "api-version", value: "2023-10-01"), (name: "features", value: "read")]

    // MARK: 404

    @Test("a path no route has: Azure's under /vision/, Image Analysis's under /computervision/, Google's anywhere else", arguments: [
        ("/vision/v9/read", #"{"error":{"code":"NotFound","message":"Resource not found: /vision/v9/read."}}"#),
        ("/computervision/retrieval", #"{"error":{"code":"404","message":"Resource not found: /computervision/retrieval."}}"#),
        ("/v1/nothing", #"{"error":{"code":404,"message":"The requested URL /v1/nothing was not found on this server.","status":"NOT_FOUND"}}"#),
        // The callable and the token endpoint have no prefix of their own.
        ("/a/b/c/annotateImage", #"{"error":{"code":404,"message":"The requested URL /a/b/c/annotateImage was not found on this server.","status":"NOT_FOUND"}}"#),
        ("/a/b/oauth2/token", #"{"error":{"code":404,"message":"The requested URL /a/b/oauth2/token was not found on this server.","status":"NOT_FOUND"}}"#),
    ])
    func notFound(_ path: String, _ body: String) {
        let response = router().respond(to: request("POST", path))
        #expect(response.status == 404)
        #expect(text(response) == body)
        #expect(response.headers["Content-Type"] == "application/json; charset=UTF-8")
    }

    // MARK: 405

    @Test("another method on a family's route: its own answer, with Allow", arguments: [
        ("/v1/files:annotate", 405, #"{"error":{"code":405,"message":"Method GET is not allowed for /v1/files:annotate; use POST.","status":"NOT_FOUND"}}"#),
        ("/p/r/annotateImage", 400,
         #"{"error":{"message":"Request has invalid method. Method GET is not allowed for /p/r/annotateImage; use POST.","status":"INVALID_ARGUMENT"}}"#),
        // The route's family, not the prefix the path is under: /{project}/{region}/annotateImage serves it.
        ("/vision/x/annotateImage", 400,
         #"{"error":{"message":"Request has invalid method. Method GET is not allowed for /vision/x/annotateImage; use POST.","status":"INVALID_ARGUMENT"}}"#),
        ("/vision/v3.2/read/analyze", 405,
         #"{"error":{"code":"MethodNotAllowed","message":"Method GET is not allowed for /vision/v3.2/read/analyze; use POST."}}"#),
        ("/computervision/imageanalysis:analyze", 405,
         #"{"error":{"code":"405","message":"Method GET is not allowed for /computervision/imageanalysis:analyze; use POST."}}"#),
    ])
    func methodNotAllowed(_ path: String, _ status: Int, _ body: String) {
        let response = router().respond(to: request("GET", path))
        #expect(response.status == status)
        #expect(response.headers["Allow"] == "POST")
        #expect(text(response) == body)
    }

    @Test("the token endpoint refuses every other method in RFC 6749's body, TRACE too", arguments: ["GET", "HEAD", "PUT", "TRACE", "BREW"])
    func tokenEndpointMethods(_ method: String) throws {
        for path in ["/oauth2/token", "/contoso/oauth2/token"] {
            let response = router().respond(to: request(method, path))
            #expect(response.status == 405)
            #expect(response.headers["Allow"] == "POST")
            #expect(response.headers["Cache-Control"] == "no-store")
            #expect(try object(response) == ["error": "invalid_request", "error_description": "the token endpoint takes POST, not \(method)"])
        }
    }

    @Test("the Azure read poll: another method is Azure's 405 with GET and HEAD allowed")
    func pollMethod() {
        let response = router().respond(to: request("DELETE", "/vision/v3.2/read/analyzeResults/" + Self.jobID))
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, HEAD")
        #expect(text(response).hasPrefix(#"{"error":{"code":"MethodNotAllowed","message":"Method DELETE is not allowed"#))
    }

    // MARK: The server's own refusals

    @Test("a body over the limit (413) and a head over it (431), in the shape of the family whose route it is", arguments: [
        ("/v1/images:annotate", 413, #"{"error":{"code":413,"message":"too large","status":"INVALID_ARGUMENT"}}"#),
        ("/v1/images:annotate", 431, #"{"error":{"code":431,"message":"too large","status":"INVALID_ARGUMENT"}}"#),
        ("/annotateImage", 413, #"{"error":{"message":"too large","status":"RESOURCE_EXHAUSTED"}}"#),
        ("/annotateImage", 431, #"{"error":{"message":"too large","status":"INVALID_ARGUMENT"}}"#),
        ("/annotateImage/", 413, #"{"error":{"message":"too large","status":"RESOURCE_EXHAUSTED"}}"#),
        ("/vision/v2.0/read/core/asyncBatchAnalyze", 413, #"{"error":{"code":"InvalidImageSize","message":"too large"}}"#),
        ("/vision/v3.2/read/analyze", 400, #"{"error":{"code":"InvalidRequest","message":"too large"}}"#),
        ("/vision/unknown", 431, #"{"error":{"code":"InvalidRequest","message":"too large"}}"#),
        ("/computervision/imageanalysis:analyze", 413,
         #"{"error":{"code":"InvalidRequest","innererror":{"code":"InvalidImageSize","message":"too large"},"message":"too large"}}"#),
        ("/computervision/imageanalysis:analyze", 431,
         #"{"error":{"code":"InvalidRequest","innererror":{"code":"BadArgument","message":"too large"},"message":"too large"}}"#),
        ("/elsewhere", 413, #"{"error":{"code":413,"message":"too large","status":"INVALID_ARGUMENT"}}"#),
    ])
    func rejections(_ path: String, _ status: Int, _ body: String) {
        let response = router().rejection(status, "too large", request("POST", path))
        #expect(response.status == status)
        #expect(text(response) == body)
        #expect(response.headers["x-ms-error-code"] == (path.hasPrefix("/computervision/") ? "InvalidRequest" : nil))
    }

    @Test("the token endpoint's 413 and 400 are RFC 6749's invalid_request")
    func tokenEndpointRejection() throws {
        for (status, path) in [(413, "/oauth2/token"), (400, "/t/oauth2/token")] {
            let response = router().rejection(status, "too large", request("POST", path))
            #expect(response.status == status)
            #expect(response.headers["Pragma"] == "no-cache")
            #expect(try object(response) == ["error": "invalid_request", "error_description": "too large"])
        }
    }

    // MARK: Media types

    @Test("a media type the family does not take", arguments: [
        ("/annotateImage", 400, #"{"error":{"message":"Request has incorrect Content-Type: callable functions take application/json.","status":"INVALID_ARGUMENT"}}"#),
        ("/vision/v3.2/read/analyze", 415,
         #"{"error":{"code":"UnsupportedMediaType","message":"Send the image or PDF as application/octet-stream or JSON {\"url\"}, not 'text/plain'."}}"#),
        ("/computervision/imageanalysis:analyze", 415,
         #"{"error":{"code":"InvalidRequest","innererror":{"code":"UnsupportedMediaType","message":"Send the image as application/octet-stream or JSON {\"url\"}, not 'text/plain'."},"message":"Send the image as application/octet-stream or JSON {\"url\"}, not 'text/plain'."}}"#),
    ])
    func mediaTypes(_ path: String, _ status: Int, _ body: String) {
        let query = path.hasPrefix("/computervision/") ? Self.imageAnalysisQuery : []
        let response = router().respond(to: request("POST", path, type: "Text/Plain; charset=utf-8", body: "{}", query: query))
        #expect(response.status == status)
        #expect(text(response) == body)
    }

    @Test("the token endpoint's media type, parsed as the others: case and parameters aside")
    func tokenEndpointMediaType() throws {
        let refused = router().respond(to: request("POST", "/oauth2/token", type: "application/json", body: "{}"))
        #expect(refused.status == 400)
        #expect(try object(refused) == ["error": "invalid_request",
                                        "error_description": "the body must be application/x-www-form-urlencoded, not 'application/json'"])
        let accepted = router().respond(to: request("POST", "/oauth2/token", type: " Application/X-WWW-Form-Urlencoded ; charset=UTF-8",
                                                    body: "grant_type=client_credentials&client_id=a&client_secret=b"))
        // The form was read and went to the token worker, whose (failed) answer this is.
        #expect(accepted.status == 500)
        #expect(try object(accepted) == ["error": "server_error", "error_description": "unused"])
    }

    @Test("the media type: lower case, parameters and blanks dropped, empty without one", arguments: [
        ("application/json", "application/json"), ("Application/JSON; charset=UTF-8", "application/json"), (" image/png ;q=1", "image/png"),
        ("", ""), ("IMAGE/PNG", "image/png"),
    ])
    func mediaType(_ header: String, _ expected: String) {
        #expect(Gateway.mediaType(HTTPRequest(method: "POST", path: "/", headers: ["Content-Type": header])) == expected)
    }

    // MARK: Failures

    static let kinds: [GatewayFailure.Kind] = [.invalidImage, .unauthenticated, .forbidden, .busy, .unavailable, .internal]

    @Test("Cloud Vision: auth fails the whole call with its status; the rest is the image's gRPC code in a 200", arguments: kinds)
    func cloudVisionFailures(_ kind: GatewayFailure.Kind) {
        let response = router(failing: GatewayFailure(kind, "why")).respond(to: request(
            "POST", "/v1/images:annotate", type: "application/json",
            body: #"{"requests":[{"image":{"content":"aGVsbG8="},"features":[{"type":"TEXT_DETECTION"}]}]}"#))
        let expected: (Int, String) = switch kind {
        case .unauthenticated: (401, #"{"error":{"code":401,"message":"why","status":"UNAUTHENTICATED"}}"#)
        case .forbidden: (403, #"{"error":{"code":403,"message":"why","status":"PERMISSION_DENIED"}}"#)
        case .invalidImage: (200, #"{"responses":[{"error":{"code":3,"message":"why"}}]}"#)
        case .busy: (200, #"{"responses":[{"error":{"code":8,"message":"why"}}]}"#)
        case .unavailable: (200, #"{"responses":[{"error":{"code":14,"message":"why"}}]}"#)
        case .internal: (200, #"{"responses":[{"error":{"code":13,"message":"why"}}]}"#)
        }
        #expect(response.status == expected.0)
        #expect(text(response) == expected.1)
    }

    @Test("files:annotate maps failures as images:annotate does")
    func cloudVisionFileFailures() {
        let body = #"{"requests":[{"inputConfig":{"content":"JVBERg==","mimeType":"application/pdf"},"features":[{"type":"TEXT_DETECTION"}]}]}"#
        let busy = router(failing: GatewayFailure(.busy, "full")).respond(to: request("POST", "/v1/files:annotate", type: "application/json", body: body))
        #expect(busy.status == 200)
        #expect(text(busy) == #"{"responses":[{"error":{"code":8,"message":"full"}}]}"#)
        let key = router(failing: .invalidAPIKey).respond(to: request("POST", "/v1/files:annotate", type: "application/json", body: body))
        #expect(key.status == 400)
        #expect(text(key).contains(#""reason":"API_KEY_INVALID""#))
    }

    @Test("the callable: the failure's gRPC status name with the protocol's HTTP code", arguments: zip(kinds, [
        (400, "INVALID_ARGUMENT"), (401, "UNAUTHENTICATED"), (403, "PERMISSION_DENIED"), (429, "RESOURCE_EXHAUSTED"), (503, "UNAVAILABLE"), (500, "INTERNAL"),
    ]))
    func callableFailures(_ kind: GatewayFailure.Kind, _ expected: (Int, String)) {
        let response = router(failing: GatewayFailure(kind, "why")).respond(to: request(
            "POST", "/annotateImage", type: "application/json", body: #"{"data":{"image":{"content":"aGVsbG8="},"features":{"type":"TEXT_DETECTION"}}}"#))
        #expect(response.status == expected.0)
        #expect(text(response) == #"{"error":{"message":"why","status":"\#(expected.1)"}}"#)
    }

    @Test("Azure Read: each failure's status and code, submitting a job", arguments: zip(kinds, [
        (400, "InvalidImage"), (401, "Unauthorized"), (403, "Forbidden"), (429, "TooManyRequests"), (503, "ServiceUnavailable"), (500, "InternalServerError"),
    ]))
    func azureReadFailures(_ kind: GatewayFailure.Kind, _ expected: (Int, String)) {
        let response = router(failing: GatewayFailure(kind, "why")).respond(to: request(
            "POST", "/vision/v3.2/read/analyze", type: "application/octet-stream", body: "png"))
        #expect(response.status == expected.0)
        #expect(text(response) == #"{"error":{"code":"\#(expected.1)","message":"why"}}"#)
    }

    @Test("an unknown API key: each family's own answer", arguments: [
        ("/vision/v3.2/read/analyze", "application/octet-stream", "png", 401, nil as String?),
        ("/computervision/imageanalysis:analyze", "application/octet-stream", "png", 401, "401"),
        ("/annotateImage", "application/json", #"{"data":{"image":{"content":"aGVsbG8="},"features":{"type":"TEXT_DETECTION"}}}"#, 401, nil),
        ("/v1/images:annotate", "application/json", #"{"requests":[{"image":{"content":"aGVsbG8="},"features":[{"type":"TEXT_DETECTION"}]}]}"#, 400, nil),
    ])
    func invalidKey(_ path: String, _ type: String, _ body: String, _ status: Int, _ header: String?) {
        let query = path.hasPrefix("/computervision/") ? Self.imageAnalysisQuery : []
        let response = router(failing: .invalidAPIKey).respond(to: request("POST", path, type: type, body: body, query: query))
        #expect(response.status == status)
        #expect(response.headers["x-ms-error-code"] == header)
        let expected = switch path {
        case "/annotateImage": #"{"error":{"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}"#
        case "/v1/images:annotate": text(CloudVisionAPI.invalidKey)
        default: text(AzureAPI.invalidKey)
        }
        #expect(text(response) == expected)
    }

    @Test("the token endpoint: the broker unavailable is 503 temporarily_unavailable, anything else 500 server_error")
    func tokenEndpointFailures() throws {
        let form = "grant_type=client_credentials&client_id=a&client_secret=b"
        for (kind, status, code) in [(GatewayFailure.Kind.unavailable, 503, "temporarily_unavailable"), (.internal, 500, "server_error")] {
            let response = router(failing: GatewayFailure(kind, "why")).respond(to: request("POST", "/oauth2/token",
                                                                                          type: "application/x-www-form-urlencoded", body: form))
            #expect(response.status == status)
            #expect(try object(response) == ["error": code, "error_description": "why"])
            #expect(OAuthTokenEndpoint.failure(GatewayFailure(kind, "why")).status == status)
        }
    }

    // MARK: The shared gRPC table

    @Test("google.rpc.Code: numbers, names and HTTP statuses as Google publishes them")
    func grpcTable() {
        #expect(GRPCStatus.allCases.count == 17)
        #expect(GRPCStatus.allCases.map(\.rawValue) == Array(0...16))
        #expect(GRPCStatus.invalidArgument.name == "INVALID_ARGUMENT" && GRPCStatus.invalidArgument.rawValue == 3)
        #expect(GRPCStatus.unauthenticated.name == "UNAUTHENTICATED" && GRPCStatus.unauthenticated.rawValue == 16)
        #expect(GRPCStatus.allCases.map(\.httpStatus) == [200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401])
        #expect(GRPCStatus(.notAllowed) == .permissionDenied && GRPCStatus(.couldNotDownload) == .unavailable && GRPCStatus(FetchFailure.Reason.busy) == .resourceExhausted)
    }

    @Test("the status Google's front names its own HTTP answers with", arguments: [
        (400, "INVALID_ARGUMENT"), (401, "UNAUTHENTICATED"), (403, "PERMISSION_DENIED"), (404, "NOT_FOUND"), (405, "NOT_FOUND"),
        (413, "INVALID_ARGUMENT"), (429, "RESOURCE_EXHAUSTED"), (431, "INVALID_ARGUMENT"), (500, "INTERNAL"), (501, "INTERNAL"),
        (503, "UNAVAILABLE"), (504, "DEADLINE_EXCEEDED"),
    ])
    func answering(_ http: Int, _ name: String) {
        #expect(GRPCStatus(answering: http).name == name)
    }
}
