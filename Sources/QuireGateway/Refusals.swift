import QuireHTTP

/// Which imitated API a path belongs to, so that what no route answers (404, 405) and what the
/// server refuses before a route sees it (400, 413, 431) come in that API's error shape: an app
/// decodes errors with the same types as the API's answers.
enum APIFamily {
    case cloudVision
    case firebaseCallable
    case azureRead
    case imageAnalysis
    case oauthToken

    init(path: String) {
        if path == "/oauth2/token" || path.hasSuffix("/oauth2/token") {
            self = .oauthToken
        } else if path.hasPrefix("/vision/") {
            self = .azureRead
        } else if path.hasPrefix("/computervision/") {
            self = .imageAnalysis
        } else if path.hasSuffix("/annotateImage") || path == "/annotateImage" {
            self = .firebaseCallable
        } else {
            self = .cloudVision
        }
    }

    /// No route has this path.
    func notFound(_ request: HTTPRequest) -> HTTPResponse {
        switch self {
        case .cloudVision, .firebaseCallable, .oauthToken:
            return CloudVisionAPI.error(404, "The requested URL \(request.path) was not found on this server.")
        case .azureRead:
            return AzureAPI.error(404, "NotFound", "Resource not found: \(request.path).")
        case .imageAnalysis:
            // The API Management front's answer to a path it does not know.
            return ImageAnalysisAPI.error(404, "404", "Resource not found: \(request.path).")
        }
    }

    /// The path exists with other methods (`allowed`).
    func methodNotAllowed(_ request: HTTPRequest, allowed: [String]) -> HTTPResponse {
        let message = "Method \(request.method) is not allowed for \(request.path); use \(allowed.joined(separator: ", "))."
        var response = switch self {
        case .cloudVision, .oauthToken: CloudVisionAPI.error(405, message)
        // A callable function answers another method as a bad request, in its own envelope.
        case .firebaseCallable: FirebaseCallable.error("INVALID_ARGUMENT", "Request has invalid method. \(message)")
        case .azureRead: AzureAPI.error(405, "MethodNotAllowed", message)
        case .imageAnalysis: ImageAnalysisAPI.error(405, "405", message)
        }
        response.headers.set("Allow", allowed.joined(separator: ", "))
        return response
    }

    /// The server's own refusal: a malformed head (400), a body over the limit (413), a head over the limit (431).
    func rejection(_ status: Int, _ message: String) -> HTTPResponse {
        switch self {
        case .cloudVision:
            return CloudVisionAPI.error(status, message)
        case .firebaseCallable:
            return FirebaseCallable.error(status == 413 ? "RESOURCE_EXHAUSTED" : "INVALID_ARGUMENT", message, http: status)
        case .azureRead:
            return AzureAPI.error(status, status == 413 ? "InvalidImageSize" : "InvalidRequest", message)
        case .imageAnalysis:
            return ImageAnalysisAPI.error(status, "InvalidRequest", message, inner: status == 413 ? "InvalidImageSize" : "BadArgument")
        case .oauthToken:
            return OAuthTokenEndpoint.error(status, "invalid_request", message)
        }
    }
}
