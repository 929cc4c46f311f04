import Foundation
import QuireFormats
import QuireHTTP
import QuireWire

/// Azure Computer Vision Read, the async pair of calls over durable jobs: Read 3.2
/// (`POST /vision/v3.2/read/analyze` → `202` + `Operation-Location: …/read/analyzeResults/{id}`) and
/// Read 2.0, the iOS tutorial's (`POST /vision/v2.0/read/core/asyncBatchAnalyze` → `202` +
/// `Operation-Location: …/read/operations/{id}`). The image or PDF is the body (`application/octet-stream`,
/// `image/*` or `application/pdf`), or JSON `{"url"}`, fetched only from the allow-list (``FetchAllowList``);
/// `pages` (`1-3,5`) selects a document's pages. Errors are Azure's `{"error":{"code","message"}}`.
public enum AzureAPI: UploadDialect {
    static var prefix: String? { "/vision/" }

    static func addRoutes(to router: inout HTTPRouter, _ services: GatewayServices) {
        let (jobs, https, fetch) = (services.jobs, services.https, services.fetch)
        router.post("/vision/v3.2/read/analyze") { request, _ in
            analyze(request, jobs: jobs, fetch: fetch, location: { base(request, https: https) + "/vision/v3.2/read/analyzeResults/" + $0 })
        }
        router.get("/vision/v3.2/read/analyzeResults/{id}") { request, parameters in
            poll(request, id: parameters["id"] ?? "", jobs: jobs) { state in
                return Gateway.json(200, AzureRead.operationResult(status: state.phase.azureStatus, created: state.created, lastUpdated: state.updated,
                                                                   result: state.result))
            }
        }
        router.post("/vision/v2.0/read/core/asyncBatchAnalyze") { request, _ in
            analyze(request, jobs: jobs, fetch: fetch, location: { base(request, https: https) + "/vision/v2.0/read/operations/" + $0 })
        }
        router.get("/vision/v2.0/read/operations/{id}") { request, parameters in
            poll(request, id: parameters["id"] ?? "", jobs: jobs) { state in
                let status: AzureReadV2.Status = switch state.phase {
                case .queued: .notStarted
                case .running: .running
                case .succeeded: .succeeded
                case .failed: .failed
                }
                return Gateway.json(200, AzureReadV2.operationResult(status: status, result: state.result))
            }
        }
    }

    /// `scheme://Host` of the request, for `Operation-Location`.
    static func base(_ request: HTTPRequest, https: Bool) -> String {
        (https ? "https://" : "http://") + (request.headers["Host"] ?? "localhost")
    }

    static func analyze(_ request: HTTPRequest, jobs: JobBackend, fetch: ImageSource, location: (String) -> String) -> HTTPResponse {
        let image: [UInt8]
        switch Upload.read(request, fetch: fetch, accepts: Upload.imageOrPDF) {
        case .success(let bytes): image = bytes
        case .failure(let problem): return refusal(problem)
        }
        let languages = request.query("language").flatMap { $0.isEmpty || $0 == "unk" ? nil : [$0] }
        var pages: [Int]?
        if let selection = request.query("pages"), !selection.isEmpty {
            guard let parsed = PageRanges.parse(selection) else {
                return error(400, "InvalidParameter", "The 'pages' parameter must list pages and ranges such as 1-3,5, not '\(selection)'.")
            }
            pages = parsed
        }
        let call = OCRCall(image: image, mode: "document", languages: languages, credential: .azure(request), pages: pages)
        switch jobs.submit(call) {
        case .success(let id):
            return HTTPResponse(status: 202, headers: ["Operation-Location": location(id), "apim-request-id": id])
        case .failure(let failure):
            return Self.failure(failure)
        }
    }

    /// An upload refused, in Read's words.
    static func refusal(_ problem: UploadProblem) -> HTTPResponse {
        switch problem {
        case .unreadableJSON: error(400, "InvalidRequest", "The body is not valid JSON.")
        case .noURL: error(400, "InvalidImageUrl", "The JSON body has no \"url\".")
        case .notFetched(let failure): fetchRefusal(failure)
        case .mediaType(let type): error(415, "UnsupportedMediaType", "Send the image or PDF as application/octet-stream or JSON {\"url\"}, not '\(type)'.")
        case .empty: error(400, "InvalidImage", "The body is empty: send the image's bytes.")
        }
    }

    static func poll(_ request: HTTPRequest, id: String, jobs: JobBackend, render: (JobSnapshot) -> HTTPResponse) -> HTTPResponse {
        switch jobs.poll(id, .azure(request)) {
        case .success(let state?): return render(state)
        case .success(nil): return error(404, "NotFound", "Operation '\(id)' was not found (never submitted, or its result expired).")
        case .failure(let failure): return Self.failure(failure)
        }
    }

    /// A URL not fetched: `400 InvalidImageUrl` naming the reason (Azure answers a URL it cannot
    /// download so); every fetch slot taken: `429`.
    static func fetchRefusal(_ failure: FetchFailure) -> HTTPResponse {
        if failure.reason == .busy { return error(429, "TooManyRequests", failure.message) }
        return error(400, "InvalidImageUrl", sentence(failure.message))
    }

    /// "the URL is not…" → "The URL is not….": the gateway's messages as Azure writes them.
    static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst() + (text.hasSuffix(".") ? "" : ".")
    }

    static func failure(_ failure: GatewayFailure) -> HTTPResponse {
        if failure.isInvalidAPIKey { return invalidKey }
        let code = switch failure.kind {
        case .invalidImage: "InvalidImage"
        case .unauthenticated: "Unauthorized"
        case .forbidden: "Forbidden"
        case .busy: "TooManyRequests"
        case .unavailable: "ServiceUnavailable"
        case .internal: "InternalServerError"
        }
        return error(failure.kind.httpStatus, code, failure.message)
    }

    static func notFound(_ request: HTTPRequest) -> HTTPResponse {
        error(404, "NotFound", "Resource not found: \(request.path).")
    }

    static func methodNotAllowed(_ request: HTTPRequest, allowed: [String]) -> HTTPResponse {
        error(405, "MethodNotAllowed", wrongMethod(request, allowed: allowed))
    }

    static func rejection(_ status: Int, _ message: String) -> HTTPResponse {
        error(status, status == 413 ? "InvalidImageSize" : "InvalidRequest", message)
    }

    /// What Azure's API Management front answers an unknown or revoked `Ocp-Apim-Subscription-Key`:
    /// 401, the code as a string.
    public static let invalidKey = error(401, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key "
                                           + "for an active subscription and use a correct regional API endpoint for your resource.")

    /// Azure's error body: `{"error":{"code":"InvalidImageUrl","message":"…"}}`.
    public static func error(_ status: Int, _ code: String, _ message: String) -> HTTPResponse {
        error(status, code, message, inner: nil)
    }

    /// Azure Core's `ErrorResponse`, `innererror` only when there is a more specific code (Image Analysis's).
    static func error(_ status: Int, _ code: String, _ message: String, inner: String?) -> HTTPResponse {
        struct Body: Encodable {
            struct Inner: Encodable {
                var code: String
                var message: String
            }
            struct Outer: Encodable {
                var code: String
                var message: String
                var innererror: Inner?
            }
            var error: Outer
        }
        return Gateway.json(status, Body(error: .init(code: code, message: message, innererror: inner.map { .init(code: $0, message: message) })))
    }
}
