import Foundation
import QuireFormats
import QuireHTTP

/// The Firebase callable function `annotateImage` (the Firebase ML "recognize text" tutorial's
/// call), in the callable protocol: `POST` JSON `{"data": AnnotateImageRequest}` → `200
/// {"result": AnnotateImageResponse}`; errors `{"error":{"status","message"}}` with the protocol's
/// HTTP codes (INVALID_ARGUMENT 400, UNAUTHENTICATED 401, PERMISSION_DENIED 403, RESOURCE_EXHAUSTED
/// 429, INTERNAL 500, UNAVAILABLE 503). Served at `/annotateImage` and
/// `/{project}/{region}/annotateImage` (the Cloud Functions URL shape the SDK's emulator setting builds).
public enum FirebaseCallable {
    struct Envelope: Decodable {
        var data: CloudVisionAPI.ImageRequest?
    }

    static func add(to router: inout HTTPRouter, recognize: @escaping OCRCaller, fetch: ImageSource) {
        router.post("/annotateImage") { request, _ in annotateImage(request, recognize: recognize, fetch: fetch) }
        router.post("/{project}/{region}/annotateImage") { request, _ in annotateImage(request, recognize: recognize, fetch: fetch) }
    }

    static func annotateImage(_ request: HTTPRequest, recognize: OCRCaller, fetch: ImageSource) -> HTTPResponse {
        // The media type exactly (parameters such as charset aside): `application/jsonx` is not JSON.
        let contentType = (request.headers["Content-Type"] ?? "").lowercased().split(separator: ";").first
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard contentType == "application/json" else {
            return error("INVALID_ARGUMENT", "Request has incorrect Content-Type: callable functions take application/json.")
        }
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: Data(request.body))
        } catch {
            return Self.error("INVALID_ARGUMENT", "Bad Request: \(CloudVisionAPI.describe(error))")
        }
        guard let item = envelope.data else { return error("INVALID_ARGUMENT", "Bad Request: the body has no \"data\".") }
        switch CloudVisionAPI.call(item, field: "data", credential: .google(request), fetch: fetch) {
        case .failure(let refusal):
            return error("INVALID_ARGUMENT", refusal.message)
        case .success(let item):
            let feature = item.feature
            let call: OCRCall
            switch item.resolved(fetch) {
            case .success(let resolved): call = resolved
            case .failure(let failure):
                // The status of the code Cloud Vision gives that image (UNAVAILABLE, PERMISSION_DENIED, …).
                return error(status(grpc: CloudVisionAPI.grpcCode(failure.reason)), CloudVisionAPI.message(failure))
            }
            switch recognize(call) {
            case .success(let result):
                struct Reply: Encodable { var result: CloudVision.Response }
                return Gateway.json(200, Reply(result: CloudVision.response(result, feature: feature)))
            case .failure(let failure):
                return error(status(failure.kind), failure.message)
            }
        }
    }

    static func status(_ kind: GatewayFailure.Kind) -> String {
        switch kind {
        case .invalidImage: "INVALID_ARGUMENT"
        case .unauthenticated: "UNAUTHENTICATED"
        case .forbidden: "PERMISSION_DENIED"
        case .busy: "RESOURCE_EXHAUSTED"
        case .unavailable: "UNAVAILABLE"
        case .internal: "INTERNAL"
        }
    }

    static func status(grpc code: Int) -> String {
        switch code {
        case 3: "INVALID_ARGUMENT"
        case 7: "PERMISSION_DENIED"
        case 8: "RESOURCE_EXHAUSTED"
        case 14: "UNAVAILABLE"
        default: "INTERNAL"
        }
    }

    /// The callable protocol's HTTP code for each status.
    static func httpCode(_ status: String) -> Int {
        switch status {
        case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE": 400
        case "UNAUTHENTICATED": 401
        case "PERMISSION_DENIED": 403
        case "NOT_FOUND": 404
        case "ALREADY_EXISTS", "ABORTED": 409
        case "RESOURCE_EXHAUSTED": 429
        case "CANCELLED": 499
        case "UNIMPLEMENTED": 501
        case "UNAVAILABLE": 503
        case "DEADLINE_EXCEEDED": 504
        default: 500
        }
    }

    static func error(_ status: String, _ message: String) -> HTTPResponse {
        error(status, message, http: httpCode(status))
    }

    /// The envelope with an HTTP code of the server's choosing (the server's own refusals: 413, 431).
    static func error(_ status: String, _ message: String, http: Int) -> HTTPResponse {
        struct Body: Encodable {
            struct Inner: Encodable {
                var status: String
                var message: String
            }
            var error: Inner
        }
        return Gateway.json(http, Body(error: .init(status: status, message: message)))
    }
}
