import Foundation

/// The JOSE header of a Quire token (RFC 7515 §4, RFC 8037 §3.1).
struct JOSEHeader: Codable, Equatable {
    var alg: String
    var kid: String?
    var typ: String?
    /// Extensions the reader must understand (RFC 7515 §4.1.11). Quire understands none, so a token
    /// that lists any is rejected.
    var crit: [String]?
}

/// The claims of a Quire access token as they are encoded (RFC 7519 §4.1 names; `scope` as in
/// RFC 8693 §4.2; `job` Quire's own, for reader tokens).
struct TokenClaims: Codable, Equatable {
    var iss: String
    var sub: String
    var aud: Audience
    var scope: String
    var iat: Int64
    var nbf: Int64
    var exp: Int64
    var jti: String
    var job: String?

    /// `aud` is a string or an array of strings (RFC 7519 §4.1.3). Quire emits a string.
    enum Audience: Codable, Equatable {
        case one(String)
        case many([String])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let one = try? container.decode(String.self) { self = .one(one) } else { self = .many(try container.decode([String].self)) }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .one(let value): try container.encode(value)
            case .many(let values): try container.encode(values)
            }
        }

        func contains(_ audience: String) -> Bool {
            switch self {
            case .one(let value): value == audience
            case .many(let values): values.contains(audience)
            }
        }
    }
}

/// Signs JWS compact serialisations with one Ed25519 key (`alg` "EdDSA").
struct JWTSigner {
    let key: SigningKey

    func sign(_ claims: TokenClaims) -> String {
        let header = JOSEHeader(alg: "EdDSA", kid: key.kid, typ: "JWT", crit: nil)
        let input = Base64URL.encode(canonicalJSON(header)) + "." + Base64URL.encode(canonicalJSON(claims))
        let signature = Sodium.sign(Array(input.utf8), secretKey: key.secretKey)
        return input + "." + Base64URL.encode(signature)
    }
}
