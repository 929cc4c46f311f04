import QuireWire
import Foundation

/// What a verified access token says: who holds it and what it may do.
public struct AccessClaims: Sendable, Equatable {
    /// `sub`: the client the token was issued to. Jobs are owned by it.
    public var subject: String
    /// `scope`, split on spaces: service names (`ocr`, `echo`), or `job:read` for a reader token.
    public var scopes: Set<String>
    /// `job`: the one job a reader token may read; `nil` for ordinary tokens.
    public var job: String?
    /// `exp`, seconds since the epoch.
    public var expiresAt: Int64
    /// `jti`: unique per token (for logs and revocation lists).
    public var tokenID: String
    /// The `kid` of the key that signed it.
    public var keyID: String

    /// The scope of reader tokens (RFC 8693 exchange, one job, read only).
    public static let readerScope = "job:read"

    /// Whether this is a reader token, bound to ``job``.
    public var isReader: Bool { scopes.contains(Self.readerScope) }

    public init(subject: String, scopes: Set<String>, job: String?, expiresAt: Int64, tokenID: String, keyID: String) {
        self.subject = subject
        self.scopes = scopes
        self.job = job
        self.expiresAt = expiresAt
        self.tokenID = tokenID
        self.keyID = keyID
    }

    /// Scope check for one request; `nil` when allowed, else a `forbidden` error.
    ///
    /// - A reader token may call only `titanic.reply` and `titanic.status`, for its own `job`.
    /// - `titanic.request` needs the scope of the service it targets (`targetService`).
    /// - The other `titanic.*` services need no scope: the broker checks that the job's owner is ``subject``.
    /// - Any other service `S` needs scope `S`, or the scope of a service it belongs to (``covers(_:)``).
    public func authorize(service: String, targetService: String? = nil, job: String? = nil) -> TokenError? {
        if isReader {
            guard service == Titanic.reply || service == Titanic.status else { return .missingScope(service) }
            guard let mine = self.job, job == mine else { return .wrongJob }
            return nil
        }
        if service == Titanic.request {
            guard let target = targetService else { return .missingScope(service) }
            return covers(target) ? nil : .missingScope(target)
        }
        if ServiceClass(service) == .jobs { return nil }
        return covers(service) ? nil : .missingScope(service)
    }

    /// Whether the scopes allow `service`: its own name, or a name it extends after a dot (`ocr`
    /// covers `ocr.document`, the same reading by other means), never the other way round.
    public func covers(_ service: String) -> Bool {
        if scopes.contains(service) { return true }
        var name = Substring(service)
        while let dot = name.lastIndex(of: ".") {
            name = name[..<dot]
            if scopes.contains(String(name)) { return true }
        }
        return false
    }
}

/// Why a token was refused. ``code`` is what the client hears; ``unknownKeyID(_:)`` is separate so
/// the broker knows to refetch the JWKS (throttled) before refusing.
public enum TokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not three base64url parts of JSON, a required claim missing, too long, …
    case malformed(String)
    /// `alg` is not "EdDSA" (`none` and HMAC included), or the header has `crit` members.
    case unsupportedAlgorithm(String)
    /// Signed by a key not in the JWKS: refetch the JWKS, then refuse if still unknown.
    case unknownKeyID(String)
    case badSignature
    case wrongIssuer(String)
    case wrongAudience
    /// `nbf` is later than now + leeway.
    case notYetValid(notBefore: Int64)
    /// `exp` is earlier than now − leeway.
    case expired(expiresAt: Int64)
    /// A valid token without the scope for this service.
    case missingScope(String)
    /// A reader token used for another job.
    case wrongJob

    /// The wire error code: `token_expired`, `forbidden` or `unauthenticated`.
    public var code: WireError.Code {
        switch self {
        case .expired: .tokenExpired
        case .missingScope, .wrongJob: .forbidden
        case .malformed, .unsupportedAlgorithm, .unknownKeyID, .badSignature, .wrongIssuer, .wrongAudience, .notYetValid: .unauthenticated
        }
    }

    public var message: String {
        switch self {
        case .malformed(let why): "malformed token: \(why)"
        case .unsupportedAlgorithm(let alg): "unsupported token algorithm '\(alg)'; Quire tokens are EdDSA"
        case .unknownKeyID(let kid): "token signed by unknown key '\(kid)'"
        case .badSignature: "token signature does not verify"
        case .wrongIssuer(let iss): "token issued by '\(iss)', not this deployment's issuer"
        case .wrongAudience: "token is not for this audience"
        case .notYetValid(let nbf): "token not valid before \(nbf)"
        case .expired(let exp): "token expired at \(exp)"
        case .missingScope(let scope): "token lacks scope '\(scope)'"
        case .wrongJob: "reader token is for another job"
        }
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The error reply for the client.
    public func wireError(service: String? = nil) -> WireError { WireError(code, message, service: service) }
}

/// Verifies Quire access tokens against a JWKS. Pure: no I/O, time passed in; cheap to copy and share.
public struct TokenVerifier: Sendable {
    public let audience: String
    public let issuer: String
    /// Clock skew tolerated on `exp` and `nbf`, in seconds.
    public let leeway: Int64
    private let keys: [String: [UInt8]]

    /// Tokens longer than this are refused unparsed (a Quire token is about 400 bytes).
    public static let maxTokenBytes = 8_192

    public init(jwks: JWKS, audience: String = "quire", issuer: String = "quire", leeway: Int64 = 30) {
        self.keys = jwks.ed25519Keys
        self.audience = audience
        self.issuer = issuer
        self.leeway = leeway
    }

    /// The key IDs this verifier knows.
    public var keyIDs: Set<String> { Set(keys.keys) }

    /// Checks structure, algorithm, key, signature, issuer, audience, `nbf` and `exp` (with leeway),
    /// in that order, so the cheapest refusals come first and nothing is believed before the
    /// signature is checked. `now` is seconds since the epoch.
    public func verify(_ token: String, now: Int64) -> Result<AccessClaims, TokenError> {
        guard token.utf8.count <= Self.maxTokenBytes else { return .failure(.malformed("longer than \(Self.maxTokenBytes) bytes")) }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(.malformed("expected three dot-separated parts")) }
        guard let headerBytes = Base64URL.decode(parts[0]),
              let header = try? JSONDecoder().decode(JOSEHeader.self, from: Data(headerBytes)) else {
            return .failure(.malformed("header is not base64url JSON"))
        }
        guard header.alg == "EdDSA" else { return .failure(.unsupportedAlgorithm(header.alg)) }
        if let crit = header.crit, !crit.isEmpty { return .failure(.unsupportedAlgorithm("crit: \(crit.joined(separator: ","))")) }
        guard let kid = header.kid else { return .failure(.malformed("no kid in the header")) }
        guard let publicKey = keys[kid] else { return .failure(.unknownKeyID(kid)) }
        guard let signature = Base64URL.decode(parts[2]) else { return .failure(.malformed("signature is not base64url")) }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard Sodium.verify(signature, of: signingInput, publicKey: publicKey) else { return .failure(.badSignature) }
        guard let payload = Base64URL.decode(parts[1]),
              let claims = try? JSONDecoder().decode(TokenClaims.self, from: Data(payload)) else {
            return .failure(.malformed("claims are not base64url JSON with iss, sub, aud, scope, iat, nbf, exp, jti"))
        }
        guard claims.iss == issuer else { return .failure(.wrongIssuer(claims.iss)) }
        guard claims.aud.contains(audience) else { return .failure(.wrongAudience) }
        guard claims.nbf <= now + leeway else { return .failure(.notYetValid(notBefore: claims.nbf)) }
        guard now - leeway < claims.exp else { return .failure(.expired(expiresAt: claims.exp)) }
        let scopes = Set(claims.scope.split(separator: " ").map(String.init))
        return .success(AccessClaims(subject: claims.sub, scopes: scopes, job: claims.job, expiresAt: claims.exp, tokenID: claims.jti, keyID: kid))
    }
}
