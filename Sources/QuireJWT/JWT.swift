import Foundation

/// The JOSE header of a Quire token (RFC 7515 §4, RFC 8037 §3.1).
package struct JOSEHeader: Codable, Equatable {
    package var alg: String
    package var kid: String?
    package var typ: String?
    /// Extensions the reader must understand (RFC 7515 §4.1.11). Quire understands none, so a token
    /// that lists any is rejected.
    package var crit: [String]?

    package init(alg: String, kid: String?, typ: String?, crit: [String]?) {
        self.alg = alg
        self.kid = kid
        self.typ = typ
        self.crit = crit
    }
}

/// The claims of a Quire access token as they are encoded (RFC 7519 §4.1 names; `scope` as in
/// RFC 8693 §4.2; `job` Quire's own, for reader tokens).
package struct TokenClaims: Codable, Equatable {
    package var iss: String
    package var sub: String
    package var aud: Audience
    package var scope: String
    package var iat: Int64
    package var nbf: Int64
    package var exp: Int64
    package var jti: String
    package var job: String?

    package init(iss: String, sub: String, aud: Audience, scope: String, iat: Int64, nbf: Int64, exp: Int64, jti: String, job: String?) {
        self.iss = iss
        self.sub = sub
        self.aud = aud
        self.scope = scope
        self.iat = iat
        self.nbf = nbf
        self.exp = exp
        self.jti = jti
        self.job = job
    }

    /// `aud` is a string or an array of strings (RFC 7519 §4.1.3). Quire emits a string.
    package enum Audience: Codable, Equatable {
        case one(String)
        case many([String])

        package init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let one = try? container.decode(String.self) { self = .one(one) } else { self = .many(try container.decode([String].self)) }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .one(let value): try container.encode(value)
            case .many(let values): try container.encode(values)
            }
        }

        package func contains(_ audience: String) -> Bool {
            switch self {
            case .one(let value): value == audience
            case .many(let values): values.contains(audience)
            }
        }
    }
}
