import Foundation
import QuireJWT

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
    static let memberNames = ["grant_type", "client_id", "client_secret", "scope", "audience", "subject_token", "subject_token_type", "job", "expires_in",
                              "api_key"]

    /// The JSON frame to send.
    public var jsonFrame: [UInt8] { canonicalJSON(self) }

    /// A client-credentials request.
    public static func credentials(_ credentials: Credentials, scope: String? = nil, audience: String? = nil) -> TokenRequest {
        TokenRequest(grantType: clientCredentials, clientID: credentials.clientID, clientSecret: credentials.clientSecret, scope: scope, audience: audience)
    }

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

    public init(jsonFrame: [UInt8]) throws(TokenStoreError) {
        do { self = try JSONDecoder().decode(TokenResponse.self, from: Data(jsonFrame)) } catch {
            throw TokenStoreError("not a token response: \(error)")
        }
    }
}

/// A client's credentials: what `DIR/credentials.json` holds (0600) and what `--credentials FILE`
/// points to.
public struct Credentials: Codable, Sendable, Equatable {
    public var clientID: String
    public var clientSecret: String

    public init(clientID: String, clientSecret: String) {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    enum CodingKeys: String, CodingKey {
        case clientID = "client_id"
        case clientSecret = "client_secret"
    }

    /// Reads a credentials file.
    public static func load(path: String) throws(TokenStoreError) -> Credentials {
        guard let bytes = try PrivateFiles.read(path) else { throw TokenStoreError("no credentials file at '\(path)'") }
        do { return try JSONDecoder().decode(Credentials.self, from: Data(bytes)) } catch {
            throw TokenStoreError("'\(path)' is not a credentials file (client_id, client_secret)")
        }
    }

    /// Writes a credentials file, mode 0600.
    public func save(path: String) throws(TokenStoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { throw TokenStoreError("cannot encode credentials") }
        try PrivateFiles.write(Array(data) + [0x0A], to: path)
    }
}
