import Foundation

// The `auth.token` messages, shared by the token worker (QuireTokens), the clients that ask it
// (`quire token`, the gateway) and the tests: one type for each frame, one set of member names.

/// Frame 1 of an `auth.token` request (`proto-json/auth-token-request.schema.json`), with the field
/// names of RFC 6749 §4.4.2 and, for reader tokens, RFC 8693 §2.1.
public struct TokenRequest: Codable, Sendable, Equatable {
    /// The client-credentials grant (RFC 6749 §4.4).
    public static let clientCredentials = "client_credentials"
    /// The token-exchange grant (RFC 8693), used for reader tokens.
    public static let tokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
    public static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"
    public static let jwtTokenType = "urn:ietf:params:oauth:token-type:jwt"
    /// Quire's extension grant (RFC 6749 §4.5): an API key (`api_key`) for a short-lived token. The
    /// gateway sends it for the apps that authenticate with `Ocp-Apim-Subscription-Key` or `?key=`.
    public static let apiKeyGrant = "urn:quire:params:oauth:grant-type:api-key"

    public var grantType: String?
    public var clientID: String?
    public var clientSecret: String?
    /// Space-separated scopes; all the client's scopes when absent.
    public var scope: String?
    public var audience: String?
    /// Token exchange: the token to exchange, and its type.
    public var subjectToken: String?
    public var subjectTokenType: String?
    /// Token exchange: the job the reader token may read.
    public var job: String?
    /// Token exchange: a shorter lifetime than the default, in seconds.
    public var expiresIn: Int64?
    /// API-key grant: the key `quire clients add --api-key` printed.
    public var apiKey: String?

    public init(grantType: String?, clientID: String? = nil, clientSecret: String? = nil, scope: String? = nil, audience: String? = nil,
                subjectToken: String? = nil, subjectTokenType: String? = nil, job: String? = nil, expiresIn: Int64? = nil, apiKey: String? = nil) {
        self.grantType = grantType
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scope = scope
        self.audience = audience
        self.subjectToken = subjectToken
        self.subjectTokenType = subjectTokenType
        self.job = job
        self.expiresIn = expiresIn
        self.apiKey = apiKey
    }

    enum CodingKeys: String, CodingKey {
        case grantType = "grant_type"
        case clientID = "client_id"
        case clientSecret = "client_secret"
        case scope, audience, job
        case subjectToken = "subject_token"
        case subjectTokenType = "subject_token_type"
        case expiresIn = "expires_in"
        case apiKey = "api_key"
    }

    /// The members' names on the wire, in the order error messages look at them.
    package static let memberNames = ["grant_type", "client_id", "client_secret", "scope", "audience", "subject_token", "subject_token_type", "job", "expires_in",
                              "api_key"]

    /// The JSON frame to send.
    public var jsonFrame: [UInt8] { canonicalJSON(self) }

    /// An API-key grant.
    public static func apiKey(_ key: String, scope: String? = nil) -> TokenRequest {
        TokenRequest(grantType: apiKeyGrant, scope: scope, apiKey: key)
    }

    /// A reader-token exchange for `job`.
    public static func reader(subjectToken: String, job: String, expiresIn: Int64? = nil) -> TokenRequest {
        TokenRequest(grantType: tokenExchange, subjectToken: subjectToken, subjectTokenType: accessTokenType, job: job, expiresIn: expiresIn)
    }
}

/// Frame 1 of a successful `auth.token` reply (`proto-json/auth-token-response.schema.json`):
/// RFC 6749 §5.1, plus `issued_token_type` for exchanges (RFC 8693 §2.2.1).
public struct TokenResponse: Codable, Sendable, Equatable {
    public var accessToken: String
    /// Always "Bearer".
    public var tokenType: String
    /// Seconds until the token expires.
    public var expiresIn: Int64
    public var scope: String
    public var issuedTokenType: String?

    public init(accessToken: String, tokenType: String = "Bearer", expiresIn: Int64, scope: String, issuedTokenType: String? = nil) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.scope = scope
        self.issuedTokenType = issuedTokenType
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case scope
        case issuedTokenType = "issued_token_type"
    }

    public var jsonFrame: [UInt8] { canonicalJSON(self) }
}

/// Compact JSON with sorted keys and unescaped slashes: stable bytes for the same value.
package func canonicalJSON<T: Encodable>(_ value: T) -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Only plain strings, integers and arrays are encoded: this cannot fail.
    return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
}
