import Foundation
import QuireHTTP
import QuireWire

/// The OAuth 2.0 token endpoint over HTTP (RFC 6749 §3.2, the client-credentials grant of §4.4):
/// `POST /oauth2/token` and `POST /{tenant}/oauth2/token` (the Azure AD v1 URL the tutorials use; the
/// tenant is ignored). The gateway checks only the HTTP side (method, media type, the form, how the
/// client authenticated); the credentials go to the token worker as an `auth.token` request through
/// the broker, and its answer comes back as RFC 6749 §5.1 or §5.2.
///
/// - Client authentication: `client_secret_post` (`client_id`, `client_secret` in the form) or HTTP
///   Basic (§2.3.1: `base64(urlencode(id) ":" urlencode(secret))`), never both.
/// - `scope` is passed on; `audience` too (the token worker accepts only its own). `resource` (Azure
///   AD v1's, e.g. `https://cognitiveservices.azure.com/`) is accepted and ignored: it names Azure's
///   resource, and Quire's tokens are always for the token worker's audience. Other parameters are
///   ignored, as §3.2 says.
/// - `invalid_client` is 401 with `WWW-Authenticate: Basic` when the client used (or did not send)
///   the `Authorization` header, 400 for `client_secret_post`.
/// - Failures that are not the client's (no token worker, broker busy or gone) are 503
///   `temporarily_unavailable` and 500 `server_error` (RFC 6749 §4.1.2.1's codes, in the OAuth
///   Extensions Error Registry).
public enum OAuthTokenEndpoint: APIDialect {
    static let paths = ["/oauth2/token", "/{tenant}/oauth2/token"]
    /// A token request is a few hundred bytes; more is refused before it is parsed.
    public static let maxBodyBytes = 8 * 1024
    static let realm = "quire"

    static func addRoutes(to router: inout HTTPRouter, _ services: GatewayServices) {
        for path in paths {
            router.post(path) { request, _ in respond(to: request, tokens: services.tokens) }
        }
    }

    /// §3.2: "The client MUST use the HTTP POST method".
    static func methodNotAllowed(_ request: HTTPRequest, allowed: [String]) -> HTTPResponse {
        error(405, "invalid_request", "the token endpoint takes POST, not \(request.method)")
    }

    /// The endpoint has no path of its own (`/{tenant}/oauth2/token`): this is its word for one that is not there.
    static func notFound(_ request: HTTPRequest) -> HTTPResponse {
        error(404, "invalid_request", "no token endpoint at \(request.path)")
    }

    static func rejection(_ status: Int, _ message: String) -> HTTPResponse {
        error(status, "invalid_request", message)
    }

    /// A failure on the way to the token worker that is not its answer (§4.1.2.1's codes).
    static func failure(_ failure: GatewayFailure) -> HTTPResponse {
        response(refusal(.transport(failure), basic: false))
    }

    /// How the client authenticated.
    enum ClientAuthentication: Equatable {
        case none
        case post(id: String, secret: String?)
        case basic(id: String, secret: String)
    }

    /// A request the endpoint answers itself, without asking the token worker.
    struct Refusal: Error, Equatable {
        var status: Int
        var error: String
        var description: String
        /// Adds `WWW-Authenticate: Basic`.
        var challenge = false
    }

    static func respond(to request: HTTPRequest, tokens: TokenBackend) -> HTTPResponse {
        switch grant(request) {
        case .failure(let refusal):
            return response(refusal)
        case .success(let (grant, authentication)):
            switch tokens.request(grant) {
            case .success(let issued):
                struct Body: Encodable {
                    var access_token: String
                    var token_type: String
                    var expires_in: Int64
                    var scope: String?
                }
                return json(200, Body(access_token: issued.accessToken, token_type: issued.tokenType, expires_in: issued.expiresIn,
                                      scope: issued.scope.isEmpty ? nil : issued.scope))
            case .failure(let failure):
                if case .basic = authentication { return response(refusal(failure, basic: true)) }
                return response(refusal(failure, basic: false))
            }
        }
    }

    /// The `auth.token` request for an HTTP request, or why there is none.
    static func grant(_ request: HTTPRequest) -> Result<(TokenRequest, ClientAuthentication), Refusal> {
        guard request.body.count <= maxBodyBytes else {
            return .failure(Refusal(status: 413, error: "invalid_request", description: "the body is larger than \(maxBodyBytes / 1024) KiB"))
        }
        let type = Gateway.mediaType(request)
        guard type == "application/x-www-form-urlencoded" else {
            return .failure(Refusal(status: 400, error: "invalid_request",
                                    description: "the body must be application/x-www-form-urlencoded, not '\(type.isEmpty ? "nothing" : type)'"))
        }
        let form: [String: String]
        switch parseForm(request.body) {
        case .success(let fields): form = fields
        case .failure(let refusal): return .failure(refusal)
        }
        let authentication: ClientAuthentication
        switch clientAuthentication(header: request.headers["Authorization"], form: form) {
        case .success(let found): authentication = found
        case .failure(let refusal): return .failure(refusal)
        }
        guard let grantType = form["grant_type"] else {
            return .failure(Refusal(status: 400, error: "invalid_request", description: "grant_type is required"))
        }
        guard grantType == TokenRequest.clientCredentials else {
            return .failure(Refusal(status: 400, error: "unsupported_grant_type",
                                    description: "grant_type '\(grantType)' is not supported here; use client_credentials"))
        }
        let id: String, secret: String?
        switch authentication {
        case .none:
            return .failure(Refusal(status: 401, error: "invalid_client",
                                    description: "no client authentication: send HTTP Basic or client_id and client_secret", challenge: true))
        case .post(let postID, let postSecret): (id, secret) = (postID, postSecret)
        case .basic(let basicID, let basicSecret): (id, secret) = (basicID, basicSecret)
        }
        guard let secret else {
            return .failure(Refusal(status: 400, error: "invalid_client", description: "client_secret is required: this server has no public clients"))
        }
        return .success((TokenRequest(grantType: grantType, clientID: id, clientSecret: secret, scope: form["scope"], audience: form["audience"]),
                         authentication))
    }

    /// The form's parameters. §3.2: a parameter sent without a value is as if omitted, one sent twice
    /// is `invalid_request`.
    static func parseForm(_ body: [UInt8]) -> Result<[String: String], Refusal> {
        var fields: [String: String] = [:]
        var seen: Set<String> = []
        for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = formDecode(parts[0]), let value = formDecode(parts.count > 1 ? parts[1] : []) else {
                return .failure(Refusal(status: 400, error: "invalid_request", description: "the form is not valid percent-encoded UTF-8"))
            }
            if name.isEmpty { continue }
            guard seen.insert(name).inserted else {
                return .failure(Refusal(status: 400, error: "invalid_request", description: "parameter '\(name)' is repeated"))
            }
            if !value.isEmpty { fields[name] = value }
        }
        return .success(fields)
    }

    /// `application/x-www-form-urlencoded` decoding of one name or value: `+` is a space, `%XX` a byte;
    /// nil for a broken escape or bytes that are not UTF-8.
    static func formDecode<Bytes: Collection<UInt8>>(_ encoded: Bytes) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count)
        var iterator = encoded.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next()?.asciiHexValue, let low = iterator.next()?.asciiHexValue else { return nil }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The client's credentials from `Authorization: Basic` or the form, never both (§2.3).
    static func clientAuthentication(header: String?, form: [String: String]) -> Result<ClientAuthentication, Refusal> {
        guard let header else {
            guard let id = form["client_id"] else {
                if form["client_secret"] != nil {
                    return .failure(Refusal(status: 400, error: "invalid_request", description: "client_secret without client_id"))
                }
                return .success(.none)
            }
            return .success(.post(id: id, secret: form["client_secret"]))
        }
        let (id, secret): (String, String)
        switch basicCredentials(header) {
        case .success(let pair): (id, secret) = pair
        case .failure(let refusal): return .failure(refusal)
        }
        if form["client_secret"] != nil {
            return .failure(Refusal(status: 400, error: "invalid_request",
                                    description: "the client authenticated twice (HTTP Basic and client_secret in the body); use one"))
        }
        // Some clients repeat client_id in the body next to Basic; it must then be the same client.
        if let bodyID = form["client_id"], bodyID != id {
            return .failure(Refusal(status: 400, error: "invalid_request", description: "client_id in the body is not the client of the Authorization header"))
        }
        return .success(.basic(id: id, secret: secret))
    }

    /// RFC 6749 §2.3.1 with RFC 7617: `Basic base64(urlencode(id) ":" urlencode(secret))`. The id
    /// ends at the first colon (an encoded id has none); the secret may hold colons, encoded or not.
    static func basicCredentials(_ header: String) -> Result<(String, String), Refusal> {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic" else {
            return .failure(Refusal(status: 401, error: "invalid_client",
                                    description: "unsupported client authentication: use HTTP Basic or client_secret_post", challenge: true))
        }
        let malformed = Refusal(status: 400, error: "invalid_request", description: "the Authorization header is not Basic base64(client_id:client_secret)")
        guard let decoded = Data(base64Encoded: parts[1].trimmingCharacters(in: .whitespaces)).map(Array.init),
              let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
              let id = formDecode(decoded[..<colon]), let secret = formDecode(decoded[(colon + 1)...]), !id.isEmpty else {
            return .failure(malformed)
        }
        return .success((id, secret))
    }

    /// The §5.2 error for a token worker's or broker's refusal. `basic`: the client authenticated
    /// with the `Authorization` header, so `invalid_client` is 401 with a challenge.
    static func refusal(_ failure: TokenFailure, basic: Bool) -> Refusal {
        switch failure {
        case .noTokenWorker:
            return Refusal(status: 503, error: "temporarily_unavailable", description: "no token worker (auth.token) is connected to the broker")
        case .transport(let failure):
            return failure.kind == .internal
                ? Refusal(status: 500, error: "server_error", description: failure.message)
                : Refusal(status: 503, error: "temporarily_unavailable", description: failure.message)
        case .refused(let error):
            switch error.code {
            case .invalidClient:
                return Refusal(status: basic ? 401 : 400, error: error.code.rawValue, description: error.message, challenge: basic)
            case .invalidRequest, .invalidGrant, .unauthorizedClient, .unsupportedGrantType, .invalidScope:
                return Refusal(status: 400, error: error.code.rawValue, description: error.message)
            case .busy, .rateLimited, .serviceUnavailable, .timeout, .workerLost, .shuttingDown:
                return Refusal(status: 503, error: "temporarily_unavailable", description: error.message)
            default:
                return Refusal(status: 500, error: "server_error", description: error.message)
            }
        }
    }

    static func response(_ refusal: Refusal) -> HTTPResponse {
        var response = error(refusal.status, refusal.error, refusal.description)
        if refusal.challenge { response.headers.set("WWW-Authenticate", "Basic realm=\"\(realm)\", charset=\"UTF-8\"") }
        return response
    }

    /// §5.2's body: `{"error","error_description"}`, the description in the ASCII §5.2 allows.
    static func error(_ status: Int, _ code: String, _ description: String) -> HTTPResponse {
        struct Body: Encodable {
            var error: String
            var error_description: String
        }
        return json(status, Body(error: code, error_description: asciiDescription(description)))
    }

    /// §5.2: `error_description` is `%x20-21 / %x23-5B / %x5D-7E` (no quote, no backslash).
    static func asciiDescription(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            (0x20...0x7E).contains(scalar.value) && scalar != "\"" && scalar != "\\" ? scalar : "?"
        }))
    }

    /// JSON with §5.1's headers: `application/json;charset=UTF-8`, and no caching of tokens or of
    /// answers about them.
    static func json<T: Encodable>(_ status: Int, _ value: T) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let body = (try? encoder.encode(value)).map(Array.init) ?? Array(#"{"error":"server_error"}"#.utf8)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json;charset=UTF-8", "Cache-Control": "no-store", "Pragma": "no-cache"],
                            body: body)
    }
}
