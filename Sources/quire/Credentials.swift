import Foundation
import QuireClient
import QuireJWT
import QuireSupport
import QuireTokens
import QuireWire
import Synchronization
import ZeroMQ

/// The data folder: `--data DIR`, else `QUIRE_DATA`, else `quire up`'s default
/// (`$XDG_DATA_HOME/quire`, else `~/.local/share/quire`). `quire up` keeps the broker's and the token
/// worker's files there, and the local client's `credentials.json`.
enum DataDirectory {
    static let option = Option("data", variable: "QUIRE_DATA", .string("DIR"),
                               help: "the data folder: the broker's job store, the token worker's keys and clients, the local client's credentials.json",
                               defaultNote: "broker: none (durable jobs off); others: $XDG_DATA_HOME/quire, else ~/.local/share/quire")

    static func resolve(_ invocation: Invocation) throws(UsageError) -> String {
        try invocation.value(option) ?? defaultDataDirectory(invocation.environment)
    }
}

/// The client configuration every client verb starts from: ``ClientConfiguration/settings`` (those
/// not in `hiding` also as flags), then the CURVE options.
enum ClientOptions {
    static func group(hiding: Set<String> = ["retries", "dialect"], defaults: ClientConfiguration = ClientConfiguration()) -> OptionGroup {
        OptionGroup("Connection:", ClientConfiguration.settings, defaults: defaults, hiding: hiding)
    }

    static func configuration(_ invocation: Invocation) throws -> ClientConfiguration {
        var configuration = try invocation.configured(ClientConfiguration(), ClientConfiguration.settings)
        configuration.curve = try CurveOptions.client(invocation)
        return configuration
    }
}

/// How a client verb gets its token. In order:
/// 1. `--token TOKEN` or `QUIRE_TOKEN`: a token got elsewhere, presented as is;
/// 2. `--credentials FILE`, or `QUIRE_CLIENT_ID` + `QUIRE_CLIENT_SECRET`: fetched from `auth.token`;
/// 3. `DIR/credentials.json` in the data folder (`--data`, `QUIRE_DATA`, `quire up`'s default): the
///    local client `quire up` made;
/// 4. none: requests go without a token (a broker with `--auth off`).
/// With 2 or 3, a broker that has no `auth.token` service (MMI says 404: auth off, or no token
/// worker) means no token either; see ``Preflight``.
enum ClientAuth {
    static let token = Option("token", variable: "QUIRE_TOKEN", .string("TOKEN"), help: "present this token")
    static let credentialsFile = Option("credentials", .string("FILE"),
                                        help: "get a token with these client credentials (JSON: client_id, client_secret)")
    static let clientID = Option(nil, variable: "QUIRE_CLIENT_ID", .string("ID"), help: "get a token as this client (with QUIRE_CLIENT_SECRET)")
    static let clientSecret = Option(nil, variable: "QUIRE_CLIENT_SECRET", .string("SECRET"), help: "the secret of QUIRE_CLIENT_ID")

    /// The options every client verb accepts for this.
    static var group: OptionGroup {
        var data = DataDirectory.option.info
        data.help = "else use DIR/credentials.json, written by 'quire up'"
        data.defaultText = "$XDG_DATA_HOME/quire, else ~/.local/share/quire"
        return OptionGroup("Token and encryption:", options: [token.info, credentialsFile.info, clientID.info, clientSecret.info, data]
                           + CurveOptions.clientGroup.options)
    }

    /// The credentials to fetch a token with, if any are configured.
    static func credentials(_ invocation: Invocation) throws -> Credentials? {
        if let file = try invocation.value(credentialsFile) { return try Credentials.load(path: file) }
        if let id = try invocation.value(clientID) {
            guard let secret = try invocation.value(clientSecret) else {
                throw UsageError(command: invocation.command, message: "QUIRE_CLIENT_ID is set but QUIRE_CLIENT_SECRET is not")
            }
            return Credentials(clientID: id, clientSecret: secret)
        }
        let path = LocalAuthority.credentialsPath(dataDirectory: try DataDirectory.resolve(invocation))
        if FileManager.default.fileExists(atPath: path) { return try Credentials.load(path: path) }
        return nil
    }

    /// The token given with `--token` / `QUIRE_TOKEN`, if any.
    static func givenToken(_ invocation: Invocation) throws(UsageError) -> String? {
        try invocation.value(token)
    }

    /// Sends one `auth.token` request on its own connection.
    static func fetch(_ request: TokenRequest, configuration: ClientConfiguration) throws -> TokenResponse {
        let result = blockingAwait {
            try await withClient(configuration: configuration) { client in
                try await fetch(request, client: client)
            }
        }
        return try result.get()
    }

    /// Sends one `auth.token` request with `client`.
    static func fetch(_ request: TokenRequest, client: QuireClient) async throws -> TokenResponse {
        let frames = try await client.request(service: ReservedService.authToken, body: [request.jsonFrame])
        guard let first = frames.first else { throw ClientError(.protocolError, "auth.token sent an empty reply") }
        if let error = WireError(jsonFrame: first) { throw ClientError(.remote, error.message, remote: error) }
        return try TokenResponse(jsonFrame: first)
    }

    /// The token a worker presents on requests of its own (`ocr.document`'s page jobs): none without
    /// credentials or at a broker that wants no tokens (`mmi.auth`), else one fetched from `auth.token`
    /// and reused until a minute before it expires.
    static func tokenSource(_ credentials: Credentials?) -> @Sendable (QuireClient) async throws -> String? {
        guard let credentials else { return { _ in nil } }
        let cached = Mutex<(token: String, until: Date)?>(nil)
        return { client in
            if let hit = cached.withLock({ $0 }), hit.until > Date() { return hit.token }
            guard try await client.wantsTokens(timeout: 5_000) != false else { return nil }
            let issued = try await fetch(.credentials(credentials), client: client)
            cached.withLock { $0 = (issued.accessToken, Date().addingTimeInterval(Double(max(0, issued.expiresIn - 60)))) }
            return issued.accessToken
        }
    }

    /// The request's first frame with `"token"` set, when it is a JSON object; otherwise unchanged.
    static func insert(_ token: String, into frame: [UInt8]) -> [UInt8] {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(frame))) as? [String: Any] else { return frame }
        object["token"] = token
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return frame }
        return Array(data)
    }

    /// Whether requests to `service` carry a token (`auth.*` and `mmi.*` never do).
    static func isProtected(_ service: String) -> Bool {
        ServiceClass(service).needsToken
    }
}

/// CURVE options of clients, workers and the broker.
enum CurveOptions {
    static let serverKey = Option("curve-server-key", variable: "QUIRE_CURVE_SERVER_KEY", .string("K"),
                                  help: "the broker's CURVE public key (Z85, or a .pub file)", defaultNote: "off")
    static let keyPair = Option("curve-key", variable: "QUIRE_CURVE_KEY", .string("FILE"),
                                help: "this peer's CURVE key pair file (quire keys curve)", defaultNote: "off")
    static let secretKey = Option("curve-secret-key", variable: "QUIRE_CURVE_SECRET_KEY", .string("FILE"),
                                  help: "turn CURVE on with this key pair file (quire keys curve)", defaultNote: "off")
    static let allow = Option("curve-allow", variable: "QUIRE_CURVE_ALLOW", .string("FILE|DIR"),
                              help: "client and worker public keys let in: a file with one Z85 key per line, or a folder of .pub files. "
                                  + "Without it a broker with CURVE on refuses to start.")

    static let clientGroup = OptionGroup(options: [serverKey.info, keyPair.info])
    static let serverGroup = OptionGroup("CURVE (encryption and an allow-list of keys):", options: [secretKey.info, allow.info])

    static func client(_ invocation: Invocation) throws -> CurveClientSettings? {
        let server = try invocation.value(serverKey)
        let keyFile = try invocation.value(keyPair)
        switch (server, keyFile) {
        case (nil, nil):
            return nil
        case (let server?, let keyFile?):
            do {
                return CurveClientSettings(serverKey: try CurveKeyFiles.loadPublicKey(server), keyPair: try CurveKeyFiles.loadKeyPair(path: keyFile))
            } catch {
                throw UsageError(command: invocation.command, message: error.description)
            }
        default:
            throw UsageError(command: invocation.command, message: "CURVE needs both --curve-server-key and --curve-key")
        }
    }

    static func server(_ invocation: Invocation) throws -> CurveServerSettingsInput? {
        guard let secretFile = try invocation.value(secretKey) else {
            if invocation.isGiven(allow) {
                throw UsageError(command: invocation.command, message: "--curve-allow needs --curve-secret-key")
            }
            return nil
        }
        let allow = try invocation.value(Self.allow)
        do {
            let pair = try CurveKeyFiles.loadKeyPair(path: secretFile)
            return CurveServerSettingsInput(secretKey: pair.secretKey, publicKey: pair.publicKey,
                                            allowedKeys: try allow.map { path throws(CurveKeyError) in try CurveKeyFiles.loadAllowList(path: path) })
        } catch {
            throw UsageError(command: invocation.command, message: error.description)
        }
    }

    struct CurveServerSettingsInput {
        var secretKey: [UInt8]
        var publicKey: [UInt8]
        var allowedKeys: Set<[UInt8]>?
    }
}
