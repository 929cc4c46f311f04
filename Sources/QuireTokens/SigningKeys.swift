import Foundation
import QuireJWT
import QuireWire

/// One Ed25519 signing key of the token worker.
public struct SigningKey: Sendable, Equatable {
    /// RFC 7638 thumbprint of the public key.
    public let kid: String
    public let publicKey: [UInt8]
    let seed: [UInt8]
    let secretKey: [UInt8]
    /// When it was made, seconds since the epoch.
    public let createdAt: Int64
    /// From when it signs. Until then it is only published, so verifiers learn it before they meet it.
    public let activatesAt: Int64

    /// Derives the key pair from its 32-byte seed.
    init(seed: [UInt8], createdAt: Int64, activatesAt: Int64) throws(TokenStoreError) {
        let pair = try Sodium.keyPair(seed: seed)
        self.seed = seed
        self.publicKey = pair.publicKey
        self.secretKey = pair.secretKey
        self.kid = JWK.thumbprint(ed25519PublicKey: pair.publicKey)
        self.createdAt = createdAt
        self.activatesAt = activatesAt
    }

    /// A fresh key from the CSPRNG.
    public static func generate(now: Int64, activatesAt: Int64? = nil) throws(TokenStoreError) -> SigningKey {
        try SigningKey(seed: Sodium.randomBytes(Sodium.seedBytes), createdAt: now, activatesAt: activatesAt ?? now)
    }

    /// What is stored on disk (0600): the seed, not the expanded secret key.
    struct File: Codable {
        var kid: String
        var seed: String
        var created: Int64
        var activates: Int64
    }

    var file: File { File(kid: kid, seed: Base64URL.encode(seed), created: createdAt, activates: activatesAt) }

    init(file: File) throws(TokenStoreError) {
        guard let seed = Base64URL.decode(file.seed) else { throw TokenStoreError("key '\(file.kid)': seed is not base64url") }
        try self.init(seed: seed, createdAt: file.created, activatesAt: file.activates)
        guard kid == file.kid else { throw TokenStoreError("key file '\(file.kid)' holds key '\(kid)'") }
    }
}

/// The signing keys and the rotation rules, pure (time passed in).
///
/// Rotation without downtime: a new key is published (in the JWKS) from the moment it exists but
/// signs only from ``SigningKey/activatesAt``; the key it replaces keeps being published until every
/// token it signed has expired (`retention` after the successor took over).
public struct KeySet: Sendable, Equatable {
    /// Oldest first by activation.
    public let keys: [SigningKey]

    public init(_ keys: [SigningKey]) {
        self.keys = keys.sorted { ($0.activatesAt, $0.createdAt, $0.kid) < ($1.activatesAt, $1.createdAt, $1.kid) }
    }

    /// The key that signs now: the most recently activated one. `nil` if none is active yet.
    public func signingKey(now: Int64) -> SigningKey? {
        keys.last { $0.activatesAt <= now }
    }

    /// When `key` stopped signing (its successor activated), if it has.
    func supersededAt(_ key: SigningKey, now: Int64) -> Int64? {
        guard let index = keys.firstIndex(of: key) else { return nil }
        return keys[(index + 1)...].first { $0.activatesAt <= now && $0.activatesAt > key.activatesAt }?.activatesAt
    }

    /// The keys verifiers should know now: the pending ones, the signing one, and retired ones whose
    /// tokens may still be valid (`retention` = the longest token lifetime plus leeway).
    public func published(now: Int64, retention: Int64) -> [SigningKey] {
        keys.filter { key in
            guard let end = supersededAt(key, now: now) else { return true }
            return now < end + retention
        }
    }

    /// The JWKS of ``published(now:retention:)``.
    public func jwks(now: Int64, retention: Int64) -> JWKS {
        JWKS(keys: published(now: now, retention: retention).map { JWK(ed25519PublicKey: $0.publicKey, kid: $0.kid) })
    }
}

/// The key files under `DIR/auth/keys/<kid>.json`.
public struct KeyStore: Sendable {
    public let directory: String

    /// Keys retired longer ago than this are deleted by ``rotate(now:activationDelay:)``: longer than
    /// any token lifetime the worker accepts (``TokenAuthorityConfiguration/maxTokenLifetime``).
    public static let pruneAfter: Int64 = TokenAuthorityConfiguration.maxTokenLifetime + 3_600

    /// - Parameter dataDirectory: the token worker's data folder (`--data`, `QUIRE_DATA`).
    public init(dataDirectory: String) {
        self.directory = (dataDirectory as NSString).appendingPathComponent("auth/keys")
    }

    private var lockPath: String { (directory as NSString).appendingPathComponent(".lock") }

    /// Every key on disk.
    public func load() throws(TokenStoreError) -> KeySet {
        guard FileManager.default.fileExists(atPath: directory) else { return KeySet([]) }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw TokenStoreError("cannot list '\(directory)': \(error.localizedDescription)")
        }
        var keys: [SigningKey] = []
        for name in names where name.hasSuffix(".json") {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let bytes = try PrivateFiles.read(path) else { continue }
            let file: SigningKey.File
            do { file = try JSONDecoder().decode(SigningKey.File.self, from: Data(bytes)) } catch {
                throw TokenStoreError("key file '\(path)' is not a Quire key: \(error)")
            }
            keys.append(try SigningKey(file: file))
        }
        return KeySet(keys)
    }

    /// A change stamp of the key folder: reload when it changes.
    public var stamp: Int64 { PrivateFiles.modificationStamp(directory) }

    func save(_ key: SigningKey) throws(TokenStoreError) {
        try PrivateFiles.write(canonicalJSON(key.file), to: (directory as NSString).appendingPathComponent("\(key.kid).json"))
    }

    /// Creates a signing key, active at once, if there is none. Returns the keys.
    @discardableResult
    public func ensureKey(now: Int64) throws(TokenStoreError) -> KeySet {
        try PrivateFiles.withLock(lockPath) { () throws(TokenStoreError) -> KeySet in
            let current = try load()
            if !current.keys.isEmpty { return current }
            try save(try SigningKey.generate(now: now))
            return try load()
        }
    }

    /// Adds a key that starts signing `activationDelay` seconds from now (published at once), and
    /// deletes keys retired for longer than ``pruneAfter``. Returns the new key.
    public func rotate(now: Int64, activationDelay: Int64) throws(TokenStoreError) -> SigningKey {
        try PrivateFiles.withLock(lockPath) { () throws(TokenStoreError) -> SigningKey in
            // Strictly after every existing key's activation (times are whole seconds): otherwise a key
            // rotated within the second of the last one would tie with it, and which one signs, and
            // whether the old one is ever retired, would depend on the kids' spelling.
            let latest = try load().keys.map(\.activatesAt).max() ?? Int64.min
            let key = try SigningKey.generate(now: now, activatesAt: max(now + max(0, activationDelay), latest &+ 1))
            try save(key)
            let all = try load()
            for old in all.keys where old != key {
                if let end = all.supersededAt(old, now: now), now >= end + Self.pruneAfter {
                    unlink((directory as NSString).appendingPathComponent("\(old.kid).json"))
                }
            }
            return key
        }
    }
}
