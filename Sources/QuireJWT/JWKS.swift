import Foundation
import QuireWire

/// A JSON Web Key Set (RFC 7517 §5): what `auth.jwks` answers and what the broker verifies tokens with.
public struct JWKS: Codable, Sendable, Equatable {
    public var keys: [JWK]

    public init(keys: [JWK]) { self.keys = keys }

    /// Parses the `auth.jwks` reply frame. Keys of other types stay in ``keys`` but are never used.
    public init(jsonFrame: [UInt8]) throws(TokenStoreError) {
        do {
            self = try JSONDecoder().decode(JWKS.self, from: Data(jsonFrame))
        } catch {
            throw TokenStoreError("not a JWKS: \(error)")
        }
    }

    /// The JSON frame `auth.jwks` sends.
    public var jsonFrame: [UInt8] { canonicalJSON(self) }

    /// Ed25519 public keys by `kid`; keys that are not usable OKP/Ed25519 signing keys are skipped.
    public var ed25519Keys: [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for key in keys where key.kty == "OKP" && key.crv == "Ed25519" && (key.use ?? "sig") == "sig" && (key.alg ?? "EdDSA") == "EdDSA" {
            guard let kid = key.kid, let x = key.x.flatMap(Base64URL.decode), x.count == 32 else { continue }
            out[kid] = x
        }
        return out
    }
}

/// One JSON Web Key. Quire publishes Octet Key Pair keys (RFC 8037 §2): `kty` "OKP", `crv` "Ed25519",
/// `x` = the public key, `kid` = its RFC 7638 thumbprint.
public struct JWK: Codable, Sendable, Equatable {
    public var kty: String
    public var crv: String?
    public var x: String?
    public var kid: String?
    public var use: String?
    public var alg: String?

    public init(kty: String, crv: String?, x: String?, kid: String?, use: String?, alg: String?) {
        self.kty = kty
        self.crv = crv
        self.x = x
        self.kid = kid
        self.use = use
        self.alg = alg
    }

    /// The public JWK of an Ed25519 key.
    public init(ed25519PublicKey publicKey: [UInt8], kid: String) {
        self.init(kty: "OKP", crv: "Ed25519", x: Base64URL.encode(publicKey), kid: kid, use: "sig", alg: "EdDSA")
    }

    /// The RFC 7638 thumbprint of an Ed25519 public key: SHA-256 of the required members in
    /// lexicographic order, base64url. Used as the `kid`, so a key names itself.
    public static func thumbprint(ed25519PublicKey publicKey: [UInt8]) -> String {
        let canonical = #"{"crv":"Ed25519","kty":"OKP","x":""# + Base64URL.encode(publicKey) + #""}"#
        return Base64URL.encode(Sodium.sha256(Array(canonical.utf8)))
    }
}
