internal import CSodium
import QuireJWT

/// The libsodium primitives only the issuing side uses: key pairs and signatures, argon2id hashes of
/// client secrets, keyed hashes and the system CSPRNG.
extension Sodium {
    /// `count` bytes from the system CSPRNG.
    static func randomBytes(_ count: Int) -> [UInt8] {
        _ = ready
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
        return bytes
    }

    static let seedBytes = Int(crypto_sign_ed25519_seedbytes())
    static let secretKeyBytes = Int(crypto_sign_ed25519_secretkeybytes())

    /// The Ed25519 key pair for a 32-byte seed (the seed is what Quire stores).
    static func keyPair(seed: [UInt8]) throws(TokenStoreError) -> (publicKey: [UInt8], secretKey: [UInt8]) {
        try ensureReady()
        guard seed.count == seedBytes else { throw TokenStoreError("an Ed25519 seed is \(seedBytes) bytes, not \(seed.count)") }
        var publicKey = [UInt8](repeating: 0, count: publicKeyBytes)
        var secretKey = [UInt8](repeating: 0, count: secretKeyBytes)
        guard crypto_sign_ed25519_seed_keypair(&publicKey, &secretKey, seed) == 0 else {
            throw TokenStoreError("crypto_sign_ed25519_seed_keypair failed")
        }
        return (publicKey, secretKey)
    }

    /// A detached Ed25519 signature (RFC 8032) of `message`.
    static func sign(_ message: [UInt8], secretKey: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: signatureBytes)
        guard secretKey.count == secretKeyBytes else { return signature }
        _ = crypto_sign_ed25519_detached(&signature, nil, message, UInt64(message.count), secretKey)
        return signature
    }

    /// An argon2id hash in libsodium's self-describing string form (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`).
    static func passwordHash(_ secret: String) throws(TokenStoreError) -> String {
        try ensureReady()
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        let status = crypto_pwhash_str_alg(&out, secret, UInt64(secret.utf8.count),
                                           UInt64(crypto_pwhash_opslimit_interactive()), crypto_pwhash_memlimit_interactive(),
                                           crypto_pwhash_alg_argon2id13())
        guard status == 0 else { throw TokenStoreError("crypto_pwhash_str_alg failed (out of memory?)") }
        return String(decoding: out.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `secret` matches an argon2id string from ``passwordHash(_:)``. Constant-time inside libsodium.
    static func passwordMatches(_ secret: String, hash: String) -> Bool {
        _ = ready
        guard hash.hasPrefix("$argon2id$") else { return false }
        return crypto_pwhash_str_verify(hash, secret, UInt64(secret.utf8.count)) == 0
    }

    /// Keyed BLAKE2b-256: a per-process fingerprint of a secret, safe to keep in memory as a cache key.
    static func keyedHash(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        _ = ready
        var out = [UInt8](repeating: 0, count: 32)
        _ = crypto_generichash(&out, out.count, message, UInt64(message.count), key, key.count)
        return out
    }

    /// Constant-time comparison of two equal-length byte strings.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return sodium_memcmp(a, b, a.count) == 0
    }
}
