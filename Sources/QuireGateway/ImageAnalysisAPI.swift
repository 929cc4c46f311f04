import Foundation
import QuireFormats
import QuireHTTP
import QuireWire

/// Azure AI Vision Image Analysis 4.0: `POST /computervision/imageanalysis:analyze?api-version=2023-10-01&features=read`,
/// synchronous (one `ocr` request, answered in the same exchange) and shaped as the 2023-10-01
/// swagger's `ImageAnalysisResult` by ``ImageAnalysis/result(_:)``.
///
/// The body is the image (`application/octet-stream`, what `ImageAnalysisClient.analyze(image_data:)`
/// sends, or `image/*`), or JSON `{"url"}` (`analyze_from_url`), fetched only from the allow-list (``FetchAllowList``).
/// Only the `read` feature is served; any other gets `NotSupportedVisualFeature`. Errors are
/// Azure Core's `ErrorResponse` as the service fills it: `{"error":{"code":"InvalidRequest","message",
/// "innererror":{"code":"InvalidImageFormat","message"}}}` with the code also in `x-ms-error-code`;
/// refusals of the key or token and throttling are the API Management front's `{"error":{"code":"401","message"}}`.
/// `Ocp-Apim-Subscription-Key` (what `AzureKeyCredential` sends) is an API key, exchanged for a token
/// as on the Read routes (``APIKeyTokens``); `Authorization: Bearer` goes to the broker.
public enum ImageAnalysisAPI: UploadDialect {
    static var prefix: String? { "/computervision/" }

    /// The `api-version`s answered (both define the same `ImageAnalysisResult` for `read`).
    public static let apiVersions = ["2023-10-01", "2024-02-01"]
    /// Every visual feature of the 4.0 API; only `read` is served.
    static let features = ["tags", "caption", "densecaptions", "objects", "read", "smartcrops", "people"]

    static func addRoutes(to router: inout HTTPRouter, _ services: GatewayServices) {
        router.post("/computervision/imageanalysis:analyze") { request, _ in analyze(request, recognize: services.ocr, fetch: services.fetch) }
    }

    static func analyze(_ request: HTTPRequest, recognize: OCRCaller, fetch: ImageSource) -> HTTPResponse {
        guard let version = request.query("api-version"), !version.isEmpty else {
            return invalid("BadArgument", "The api-version query parameter is required: use \(apiVersions.joined(separator: " or ")).")
        }
        guard apiVersions.contains(version) else {
            return invalid("BadArgument", "The api-version '\(version)' is not supported: use \(apiVersions.joined(separator: " or ")).")
        }
        let requested = request.query.filter { $0.name == "features" }.flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !requested.isEmpty else {
            return invalid("BadArgument", "The features query parameter is required: this server serves features=read.")
        }
        if let unknown = requested.first(where: { !features.contains($0.lowercased()) }) {
            return invalid("NotSupportedVisualFeature", "The visual feature '\(unknown)' is not valid.")
        }
        if let other = requested.first(where: { $0.lowercased() != "read" }) {
            return invalid("NotSupportedVisualFeature", "The visual feature '\(other)' is not supported by this server: it serves read (OCR) only.")
        }
        let image: [UInt8]
        switch Upload.read(request, fetch: fetch, accepts: Upload.image) {
        case .success(let bytes): image = bytes
        case .failure(let problem): return refusal(problem)
        }
        // Image Analysis reads images only: a PDF goes to Read, as Azure answers it.
        if PDFSniff.isPDF(image) {
            return invalid("InvalidImageFormat", "The input data is a PDF, which Image Analysis does not read; send it to Read (/vision/v3.2/read/analyze).")
        }
        // `language` is the language of captions and tags, not of the text read: the worker's default reads.
        let call = OCRCall(image: image, mode: "document", languages: nil, credential: .azure(request))
        switch recognize(call) {
        case .success(let result):
            var response = Gateway.json(200, ImageAnalysis.result(result))
            response.headers.set("apim-request-id", UUID().uuidString.lowercased())
            return response
        case .failure(let failure):
            return Self.failure(failure)
        }
    }

    /// An upload refused, in Image Analysis's words.
    static func refusal(_ problem: UploadProblem) -> HTTPResponse {
        switch problem {
        case .unreadableJSON: invalid("BadArgument", "The body is not JSON of the shape {\"url\": \"…\"}.")
        case .noURL: invalid("InvalidImageUrl", "The JSON body has no \"url\".")
        case .notFetched(let failure) where failure.reason == .busy: error(429, "429", failure.message)
        case .notFetched(let failure): invalid("InvalidImageUrl", AzureAPI.sentence(failure.message))
        case .mediaType(let type):
            error(415, "InvalidRequest", "Send the image as application/octet-stream or JSON {\"url\"}, not '\(type)'.", inner: "UnsupportedMediaType")
        case .empty: invalid("InvalidImageSize", "The body is empty: send the image's bytes.")
        }
    }

    /// Bad input as the service answers it; refused keys, tokens and throttling as the API Management
    /// front does (the status as the code, no `innererror`).
    static func failure(_ failure: GatewayFailure) -> HTTPResponse {
        if failure.isInvalidAPIKey { return invalidKey }
        let (code, inner): (String, String?) = switch failure.kind {
        case .invalidImage: ("InvalidRequest", "InvalidImageFormat")
        case .unauthenticated, .forbidden, .busy: (String(failure.kind.httpStatus), nil)
        case .unavailable: ("ServiceUnavailable", nil)
        case .internal: ("InternalServerError", "InternalServerError")
        }
        return error(failure.kind.httpStatus, code, failure.message, inner: inner)
    }

    /// The API Management front's answer to a path it does not know.
    static func notFound(_ request: HTTPRequest) -> HTTPResponse {
        error(404, "404", "Resource not found: \(request.path).")
    }

    static func methodNotAllowed(_ request: HTTPRequest, allowed: [String]) -> HTTPResponse {
        error(405, "405", wrongMethod(request, allowed: allowed))
    }

    static func rejection(_ status: Int, _ message: String) -> HTTPResponse {
        error(status, "InvalidRequest", message, inner: status == 413 ? "InvalidImageSize" : "BadArgument")
    }

    /// An unknown or revoked `Ocp-Apim-Subscription-Key`: the API Management front's 401, as on the Read routes.
    static var invalidKey: HTTPResponse {
        var response = AzureAPI.invalidKey
        response.headers.set("x-ms-error-code", "401")
        return response
    }

    /// `400 InvalidRequest` with the specific reason in `innererror`, as the service answers bad input.
    static func invalid(_ inner: String, _ message: String) -> HTTPResponse {
        error(400, "InvalidRequest", message, inner: inner)
    }

    /// Azure Core's error body (``AzureAPI/error(_:_:_:inner:)``), with the code also in `x-ms-error-code`.
    public static func error(_ status: Int, _ code: String, _ message: String, inner: String? = nil) -> HTTPResponse {
        var response = AzureAPI.error(status, code, message, inner: inner)
        response.headers.set("x-ms-error-code", code)
        return response
    }
}
