import Foundation
import QuireFormats
import QuireHTTP

/// The Firebase callable function `annotateImage` (the Firebase ML "recognize text" tutorial's
/// call), in the callable protocol: `POST` JSON `{"data": AnnotateImageRequest}` → `200
/// {"result": AnnotateImageResponse}`; errors `{"error":{"status","message"}}` with the protocol's
/// HTTP codes (INVALID_ARGUMENT 400, UNAUTHENTICATED 401, PERMISSION_DENIED 403, RESOURCE_EXHAUSTED
/// 429, INTERNAL 500, UNAVAILABLE 503). Served at `/annotateImage` and
/// `/{project}/{region}/annotateImage` (the Cloud Functions URL shape the SDK's emulator setting builds).
public enum FirebaseCallable: APIDialect {
    struct Envelope: Decodable {
        var data: CloudVisionAPI.ImageRequest?
    }

    static func addRoutes(to router: inout HTTPRouter, _ services: GatewayServices) {
        for path in ["/annotateImage", "/{project}/{region}/annotateImage"] {
            router.post(path) { request, _ in annotateImage(request, recognize: services.ocr, fetch: services.fetch) }
        }
    }

    static func annotateImage(_ request: HTTPRequest, recognize: OCRCaller, fetch: ImageSource) -> HTTPResponse {
        // The media type exactly (parameters such as charset aside): `application/jsonx` is not JSON.
        guard Gateway.mediaType(request) == "application/json" else {
            return error(.invalidArgument, "Request has incorrect Content-Type: callable functions take application/json.")
        }
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: Data(request.body))
        } catch {
            return Self.error(.invalidArgument, "Bad Request: \(CloudVisionAPI.describe(error))")
        }
        guard let item = envelope.data else { return error(.invalidArgument, "Bad Request: the body has no \"data\".") }
        switch CloudVisionAPI.call(item, field: "data", credential: .google(request), fetch: fetch) {
        case .failure(let refusal):
            return error(.invalidArgument, refusal.message)
        case .success(let item):
            let feature = item.feature
            let call: OCRCall
            switch item.resolved(fetch) {
            case .success(let resolved): call = resolved
            case .failure(let failure):
                // The status of the code Cloud Vision gives that image (UNAVAILABLE, PERMISSION_DENIED, …).
                return error(GRPCStatus(failure.reason), CloudVisionAPI.message(failure))
            }
            switch recognize(call) {
            case .success(let result):
                struct Reply: Encodable { var result: CloudVision.Response }
                return Gateway.json(200, Reply(result: CloudVision.response(result, feature: feature)))
            case .failure(let failure):
                return Self.failure(failure)
            }
        }
    }

    /// Any failure in the envelope, an unknown API key too (UNAUTHENTICATED).
    static func failure(_ failure: GatewayFailure) -> HTTPResponse {
        error(GRPCStatus(failure.kind), failure.message)
    }

    /// The callable protocol has no path of its own: this is its word for a function that is not there.
    static func notFound(_ request: HTTPRequest) -> HTTPResponse {
        error(.notFound, "The function \(request.path) does not exist.")
    }

    /// A callable function answers another method as a bad request, in its own envelope.
    static func methodNotAllowed(_ request: HTTPRequest, allowed: [String]) -> HTTPResponse {
        error(.invalidArgument, "Request has invalid method. \(wrongMethod(request, allowed: allowed))")
    }

    /// The envelope with the server's own status (413 is RESOURCE_EXHAUSTED, the rest INVALID_ARGUMENT).
    static func rejection(_ status: Int, _ message: String) -> HTTPResponse {
        error(status == 413 ? .resourceExhausted : .invalidArgument, message, http: status)
    }

    /// The envelope, with the status's HTTP code.
    static func error(_ status: GRPCStatus, _ message: String) -> HTTPResponse {
        error(status, message, http: status.httpStatus)
    }

    /// The envelope with an HTTP code of the server's choosing (the server's own refusals: 413, 431).
    static func error(_ status: GRPCStatus, _ message: String, http: Int) -> HTTPResponse {
        struct Body: Encodable {
            struct Inner: Encodable {
                var status: String
                var message: String
            }
            var error: Inner
        }
        return Gateway.json(http, Body(error: .init(status: status.name, message: message)))
    }
}
