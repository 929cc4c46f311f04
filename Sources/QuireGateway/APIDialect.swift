import QuireHTTP

/// One imitated API family, written once: its routes, and how it says no. The gateway adds each
/// family's routes as one group of its router (``HTTPRouter/group(_:prefix:_:)``) with the family's
/// refusals, so whatever refuses a request to one of them (another method, a body over the limit, a
/// malformed or oversized head, and a path under the family's ``prefix`` that no route has) answers in
/// that family's error body, the one its apps decode. Its handlers answer Quire's failures with
/// ``failure(_:)`` and their own problems with the family's error body.
///
/// A new family is one file: a type that implements this protocol, added to ``Gateway/families``.
protocol APIDialect: Sendable {
    /// The part of the URL space the family owns (`/vision/`): a path under it that no route has gets
    /// the family's ``notFound(_:)``. nil (the default): its paths sit among others' (`/annotateImage`,
    /// `/{tenant}/oauth2/token`), and a path no route has is the default family's (Cloud Vision's).
    static var prefix: String? { get }

    /// Adds the family's routes, which reach the broker through `services`.
    static func addRoutes(to router: inout HTTPRouter, _ services: GatewayServices)

    /// A path under ``prefix`` that no route has.
    static func notFound(_ request: HTTPRequest) -> HTTPResponse

    /// A method the path does not take; `allowed` are those it does (the `Allow` header is added after).
    static func methodNotAllowed(_ request: HTTPRequest, allowed: [String]) -> HTTPResponse

    /// The server's own refusal of a request to the family: a malformed head (400), a body over the
    /// limit (413), a head over the limit (431).
    static func rejection(_ status: Int, _ message: String) -> HTTPResponse

    /// A call the broker, the token worker or an OCR worker failed as a whole (an unknown API key, a
    /// refused token, busy, no worker, not an image), in the family's status and body.
    static func failure(_ failure: GatewayFailure) -> HTTPResponse
}

extension APIDialect {
    static var prefix: String? { nil }

    /// The family's refusals, for its routes' group.
    static var refusals: HTTPRouter.Refusals {
        HTTPRouter.Refusals(notFound: { notFound($0) }, methodNotAllowed: { request, allowed in
            var response = methodNotAllowed(request, allowed: allowed)
            response.headers.set("Allow", allowed.joined(separator: ", "))
            return response
        }, rejection: { status, message, _ in rejection(status, message) })
    }

    /// The sentence most families say a wrong method with.
    static func wrongMethod(_ request: HTTPRequest, allowed: [String]) -> String {
        "Method \(request.method) is not allowed for \(request.path); use \(allowed.joined(separator: ", "))."
    }
}

/// What the families' routes reach the broker and the outside world through.
struct GatewayServices: Sendable {
    /// One image through the `ocr` service, answered in the same exchange.
    var ocr: OCRCaller
    /// Durable jobs (Azure Read's operations).
    var jobs: JobBackend
    /// The token worker (the OAuth token endpoint).
    var tokens: TokenBackend
    /// Whether the gateway serves HTTPS (for the URLs it hands out).
    var https: Bool
    /// The image URLs clients give.
    var fetch: ImageSource
}
