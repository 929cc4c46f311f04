import QuireJWT
import QuireWire

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
