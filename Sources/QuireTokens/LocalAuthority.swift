import Foundation
import QuireJWT

/// First-start setup for a single machine (`quire up`): a signing key and a local client whose
/// credentials the CLI on the same machine finds in the data folder without flags.
public enum LocalAuthority {
    /// The scopes of the local client: every service Quire ships.
    public static let defaultScopes = ["echo", "ocr"]

    /// Where the local client's credentials live: `DIR/credentials.json` (0600).
    public static func credentialsPath(dataDirectory: String) -> String {
        (dataDirectory as NSString).appendingPathComponent("credentials.json")
    }

    /// Creates the signing key and the local client on first start; afterwards returns the existing
    /// credentials. Idempotent. A credentials file whose client was removed is replaced by a new client.
    @discardableResult
    public static func bootstrap(directory: String, scopes: [String] = defaultScopes, now: Int64 = epochSeconds()) throws(TokenStoreError) -> Credentials {
        try Sodium.ensureReady()
        try PrivateFiles.makeDirectory(directory)
        try KeyStore(dataDirectory: directory).ensureKey(now: now)
        let registry = ClientRegistry(dataDirectory: directory)
        let path = credentialsPath(dataDirectory: directory)
        if FileManager.default.fileExists(atPath: path) {
            let existing = try Credentials.load(path: path)
            if let client = try registry.load().first(where: { $0.id == existing.clientID }),
               Sodium.passwordMatches(existing.clientSecret, hash: client.secretHash) {
                return existing
            }
        }
        let (client, secret) = try registry.add(name: "local", scopes: scopes, now: now)
        let credentials = Credentials(clientID: client.id, clientSecret: secret)
        try credentials.save(path: path)
        return credentials
    }
}
