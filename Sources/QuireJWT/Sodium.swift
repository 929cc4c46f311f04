internal import CSodium
import Foundation

/// The few libsodium primitives Quire uses, behind Swift types. Nothing cryptographic is written by
/// hand: Ed25519 signatures, argon2id password hashes, SHA-256, keyed BLAKE2b and the system CSPRNG
/// all come from libsodium. This side holds what verifying needs (Ed25519 verification, SHA-256 for
/// key thumbprints); signing, hashing secrets and randomness are `QuireTokens`' extension.
package enum Sodium {
    /// `sodium_init` once per process; it is safe to call from many threads, and cheap after the first.
    package static let ready: Bool = sodium_init() >= 0

    package static func ensureReady() throws(TokenStoreError) {
        guard ready else { throw TokenStoreError("sodium_init failed") }
    }

    package static let publicKeyBytes = Int(crypto_sign_ed25519_publickeybytes())
    package static let signatureBytes = Int(crypto_sign_ed25519_bytes())

    /// Whether `signature` is `message` signed by the holder of `publicKey`.
    package static func verify(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        _ = ready
        guard signature.count == signatureBytes, publicKey.count == publicKeyBytes else { return false }
        return crypto_sign_ed25519_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    /// SHA-256 (for RFC 7638 JWK thumbprints).
    package static func sha256(_ message: [UInt8]) -> [UInt8] {
        _ = ready
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_bytes()))
        _ = crypto_hash_sha256(&out, message, UInt64(message.count))
        return out
    }
}

/// A failure of the token worker's own storage or crypto setup (files, keys): an operator's problem,
/// never a client's.
public struct TokenStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
