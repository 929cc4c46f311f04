import Foundation
import QuireJWT

/// A client allowed to ask `auth.token` for tokens. Its secret is kept only as an argon2id hash, its
/// API key (if it has one) only as a SHA-256 hash.
public struct RegisteredClient: Codable, Sendable, Equatable {
    /// `client_id`: public, random, `qc_…`.
    public var id: String
    /// A name for people (`quire clients list`).
    public var name: String
    /// The scopes tokens for this client may carry.
    public var scopes: [String]
    /// argon2id in libsodium's string form; never the secret itself.
    public var secretHash: String
    /// ``APIKey/hash(_:)`` of the client's API key (`sha256:` + base64url); nil: no key. Absent in
    /// registries written before API keys existed.
    public var apiKeyHash: String?
    public var created: Int64

    enum CodingKeys: String, CodingKey {
        case id, name, scopes, created
        case secretHash = "secret_hash"
        case apiKeyHash = "api_key_hash"
    }
}

/// The client registry: `DIR/auth/clients.json` (0600).
public struct ClientRegistry: Sendable {
    public let path: String

    /// - Parameter dataDirectory: the token worker's data folder (`--data`, `QUIRE_DATA`).
    public init(dataDirectory: String) {
        self.path = (dataDirectory as NSString).appendingPathComponent("auth/clients.json")
    }

    private struct File: Codable {
        var clients: [RegisteredClient]
    }

    private var lockPath: String { (path as NSString).deletingLastPathComponent + "/.clients.lock" }

    /// A change stamp of the file: reload when it changes.
    public var stamp: Int64 { PrivateFiles.modificationStamp(path) }

    public func load() throws(TokenStoreError) -> [RegisteredClient] {
        guard let bytes = try PrivateFiles.read(path) else { return [] }
        do { return try JSONDecoder().decode(File.self, from: Data(bytes)).clients } catch {
            throw TokenStoreError("'\(path)' is not a Quire client registry: \(error)")
        }
    }

    private func save(_ clients: [RegisteredClient]) throws(TokenStoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let bytes: [UInt8]
        do { bytes = Array(try encoder.encode(File(clients: clients))) } catch { throw TokenStoreError("cannot encode clients: \(error)") }
        try PrivateFiles.write(bytes, to: path)
    }

    /// Scope names: service names and the like; no spaces (scopes travel space-separated), no quotes.
    public static func isValidScope(_ scope: String) -> Bool {
        !scope.isEmpty && scope.utf8.count <= 128 && scope.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != "\"" && $0 != "\\" }
    }

    /// Registers a client with a fresh random secret. The secret is returned once and stored only hashed.
    public func add(name: String, scopes: [String], now: Int64) throws(TokenStoreError) -> (client: RegisteredClient, secret: String) {
        let added = try add(name: name, scopes: scopes, withAPIKey: false, now: now)
        return (added.client, added.secret)
    }

    /// Registers a client with a fresh random secret and, with `withAPIKey`, a fresh API key. Both are
    /// returned once and stored only hashed.
    public func add(name: String, scopes: [String], withAPIKey: Bool, now: Int64) throws(TokenStoreError)
        -> (client: RegisteredClient, secret: String, apiKey: String?) {
        for scope in scopes where !Self.isValidScope(scope) || scope == AccessClaims.readerScope {
            throw TokenStoreError("invalid scope '\(scope)'")
        }
        let secret = "qs_" + Base64URL.encode(Sodium.randomBytes(32))
        let hash = try Sodium.passwordHash(secret)
        let apiKey = withAPIKey ? APIKey.generate() : nil
        return try PrivateFiles.withLock(lockPath) { () throws(TokenStoreError) -> (client: RegisteredClient, secret: String, apiKey: String?) in
            var clients = try load()
            let client = RegisteredClient(id: "qc_" + Base64URL.encode(Sodium.randomBytes(12)), name: name,
                                          scopes: Array(Set(scopes)).sorted(), secretHash: hash, apiKeyHash: apiKey.map(APIKey.hash),
                                          created: now)
            clients.append(client)
            try save(clients)
            return (client, secret, apiKey)
        }
    }

    /// Removes a client; its tokens stop being renewed at once, exchanges for its tokens fail, and its
    /// API key is revoked (a gateway drops the token it cached for the key within 60 s).
    /// Returns whether it existed.
    @discardableResult
    public func remove(id: String) throws(TokenStoreError) -> Bool {
        try PrivateFiles.withLock(lockPath) { () throws(TokenStoreError) -> Bool in
            var clients = try load()
            let before = clients.count
            clients.removeAll { $0.id == id }
            guard clients.count != before else { return false }
            try save(clients)
            return true
        }
    }
}
