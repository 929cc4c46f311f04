import Foundation
import QuireClient
import QuireJWT
import QuireSupport
import QuireTokens
import QuireWire
import ZeroMQ

/// The data folder: `--data DIR`, else `QUIRE_DATA`, else `quire up`'s default
/// (`$XDG_DATA_HOME/quire`, else `~/.local/share/quire`). `quire up` keeps the broker's and the token
/// worker's files there, and the local client's `credentials.json`.
enum DataDirectory {
    static func resolve(_ arguments: Arguments) -> String {
        let environment = ProcessInfo.processInfo.environment
        return arguments.string("data") ?? EnvironmentReader(environment).string("QUIRE_DATA") ?? defaultDataDirectory(environment)
    }
}

/// The client configuration every client verb starts from: the environment, then `--broker`,
/// `--timeout-ms` and the CURVE options.
func clientConfiguration(_ arguments: Arguments) throws -> ClientConfiguration {
    var configuration: ClientConfiguration
    do { configuration = try ClientConfiguration(environment: ProcessInfo.processInfo.environment) } catch {
        throw UsageError(command: arguments.command, message: error.description)
    }
    if let v = arguments.string("broker") { configuration.broker = v }
    if let v = try arguments.integer("timeout-ms", range: 1...86_400_000) { configuration.timeout = Milliseconds(Int64(v)) }
    configuration.curve = try CurveOptions.client(arguments)
    return configuration
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
    /// The options every client verb accepts for this.
    static let options: Set<String> = ["token", "credentials", "data", "curve-server-key", "curve-key"]

    static let help = """
          --token TOKEN          present this token [QUIRE_TOKEN]
          --credentials FILE     get a token with these client credentials (JSON: client_id, client_secret)
                                 [QUIRE_CLIENT_ID, QUIRE_CLIENT_SECRET]
          --data DIR             else use DIR/credentials.json, written by 'quire up' [QUIRE_DATA]
                                 (default $XDG_DATA_HOME/quire, else ~/.local/share/quire)
          --curve-server-key K   the broker's CURVE public key (Z85, or a .pub file) [QUIRE_CURVE_SERVER_KEY]
          --curve-key FILE       this client's CURVE key pair file (quire keys curve) [QUIRE_CURVE_KEY]
        """

    /// The credentials to fetch a token with, if any are configured.
    static func credentials(_ arguments: Arguments) throws -> Credentials? {
        let environment = EnvironmentReader(ProcessInfo.processInfo.environment)
        if let file = arguments.string("credentials") { return try Credentials.load(path: file) }
        if let id = environment.string("QUIRE_CLIENT_ID") {
            guard let secret = environment.string("QUIRE_CLIENT_SECRET") else {
                throw UsageError(command: arguments.command, message: "QUIRE_CLIENT_ID is set but QUIRE_CLIENT_SECRET is not")
            }
            return Credentials(clientID: id, clientSecret: secret)
        }
        let path = LocalAuthority.credentialsPath(dataDirectory: DataDirectory.resolve(arguments))
        if FileManager.default.fileExists(atPath: path) { return try Credentials.load(path: path) }
        return nil
    }

    /// The token given with `--token` / `QUIRE_TOKEN`, if any.
    static func givenToken(_ arguments: Arguments) -> String? {
        arguments.string("token") ?? EnvironmentReader(ProcessInfo.processInfo.environment).string("QUIRE_TOKEN")
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

/// CURVE options of clients and workers.
enum CurveOptions {
    static func client(_ arguments: Arguments) throws -> CurveClientSettings? {
        let environment = EnvironmentReader(ProcessInfo.processInfo.environment)
        let server = arguments.string("curve-server-key") ?? environment.string("QUIRE_CURVE_SERVER_KEY")
        let keyFile = arguments.string("curve-key") ?? environment.string("QUIRE_CURVE_KEY")
        switch (server, keyFile) {
        case (nil, nil):
            return nil
        case (let server?, let keyFile?):
            do {
                return CurveClientSettings(serverKey: try CurveKeyFiles.loadPublicKey(server), keyPair: try CurveKeyFiles.loadKeyPair(path: keyFile))
            } catch {
                throw UsageError(command: arguments.command, message: error.description)
            }
        default:
            throw UsageError(command: arguments.command, message: "CURVE needs both --curve-server-key and --curve-key")
        }
    }

    static func server(_ arguments: Arguments) throws -> CurveServerSettingsInput? {
        let environment = EnvironmentReader(ProcessInfo.processInfo.environment)
        guard let secretFile = arguments.string("curve-secret-key") ?? environment.string("QUIRE_CURVE_SECRET_KEY") else {
            if arguments.string("curve-allow") != nil {
                throw UsageError(command: arguments.command, message: "--curve-allow needs --curve-secret-key")
            }
            return nil
        }
        let allow = arguments.string("curve-allow") ?? environment.string("QUIRE_CURVE_ALLOW")
        do {
            let pair = try CurveKeyFiles.loadKeyPair(path: secretFile)
            return CurveServerSettingsInput(secretKey: pair.secretKey, publicKey: pair.publicKey,
                                            allowedKeys: try allow.map { path throws(CurveKeyError) in try CurveKeyFiles.loadAllowList(path: path) })
        } catch {
            throw UsageError(command: arguments.command, message: error.description)
        }
    }

    struct CurveServerSettingsInput {
        var secretKey: [UInt8]
        var publicKey: [UInt8]
        var allowedKeys: Set<[UInt8]>?
    }
}
