import Foundation
import QuireJWT
import QuireWire

extension TokenRequest {
    /// A client-credentials request.
    public static func credentials(_ credentials: Credentials, scope: String? = nil, audience: String? = nil) -> TokenRequest {
        TokenRequest(grantType: clientCredentials, clientID: credentials.clientID, clientSecret: credentials.clientSecret, scope: scope, audience: audience)
    }
}

extension TokenResponse {
    /// Decodes a reply's first frame.
    public init(jsonFrame: [UInt8]) throws(TokenStoreError) {
        do { self = try JSONDecoder().decode(TokenResponse.self, from: Data(jsonFrame)) } catch {
            throw TokenStoreError("not a token response: \(error)")
        }
    }
}

/// A client's credentials: what `DIR/credentials.json` holds (0600) and what `--credentials FILE`
/// points to.
public struct Credentials: Codable, Sendable, Equatable {
    public var clientID: String
    public var clientSecret: String

    public init(clientID: String, clientSecret: String) {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    enum CodingKeys: String, CodingKey {
        case clientID = "client_id"
        case clientSecret = "client_secret"
    }

    /// Reads a credentials file.
    public static func load(path: String) throws(TokenStoreError) -> Credentials {
        guard let bytes = try PrivateFiles.read(path) else { throw TokenStoreError("no credentials file at '\(path)'") }
        do { return try JSONDecoder().decode(Credentials.self, from: Data(bytes)) } catch {
            throw TokenStoreError("'\(path)' is not a credentials file (client_id, client_secret)")
        }
    }

    /// Writes a credentials file, mode 0600.
    public func save(path: String) throws(TokenStoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { throw TokenStoreError("cannot encode credentials") }
        try PrivateFiles.write(Array(data) + [0x0A], to: path)
    }
}
