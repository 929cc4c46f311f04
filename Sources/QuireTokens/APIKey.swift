import QuireJWT
import QuireWire

/// API keys: what an app written for Azure (`Ocp-Apim-Subscription-Key`) or Google (`?key=`,
/// `x-goog-api-key`) sends instead of a token. `quire clients add --api-key` makes one; the gateway
/// exchanges it for a short-lived token at `auth.token` (grant ``TokenRequest/apiKeyGrant``).
///
/// A key is `qk_` + 32 bytes from the CSPRNG (256 bits), so it is stored as a plain SHA-256 hash, not
/// argon2id: a slow, salted hash exists to make guessing a *low-entropy* password expensive, and no
/// amount of hashing speed makes 2^256 guesses feasible. A fast unsalted hash also lets the key be
/// found by its hash, with no client id sent alongside, and costs microseconds instead of argon2id's
/// tens of milliseconds and 64 MiB per request.
public enum APIKey {
    public static let prefix = "qk_"
    static let hashPrefix = "sha256:"
    /// Longer keys are refused unhashed.
    static let maxBytes = 256

    /// A fresh key.
    static func generate() -> String {
        prefix + Base64URL.encode(Sodium.randomBytes(32))
    }

    /// The stored form of `key`: `sha256:` + base64url of its SHA-256.
    public static func hash(_ key: String) -> String {
        hashPrefix + Base64URL.encode(digest(key))
    }

    static func digest(_ key: String) -> [UInt8] {
        Sodium.sha256(Array(key.utf8))
    }

    /// The 32-byte digest inside a stored hash; nil when it is not one.
    static func digest(stored: String) -> [UInt8]? {
        guard stored.hasPrefix(hashPrefix), let bytes = Base64URL.decode(stored.dropFirst(hashPrefix.count)), bytes.count == 32 else { return nil }
        return bytes
    }

    /// The entry whose digest is `key`'s. Every entry is compared, in constant time, and the scan does not
    /// stop at a match: how long it takes says nothing about which stored hash came close.
    static func find<T>(_ key: String, in entries: [(digest: [UInt8], value: T)]) -> T? {
        guard key.utf8.count <= maxBytes else { return nil }
        let wanted = digest(key)
        var found: T?
        for entry in entries where Sodium.equal(entry.digest, wanted) {
            found = entry.value
        }
        return found
    }
}
