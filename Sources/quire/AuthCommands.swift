import Foundation
import QuireClient
import QuireJWT
import QuireSupport
import QuireTokens
import QuireWire
import QuireWorker
import ZeroMQ

/// `quire clients add|list|remove`: the token worker's client registry, edited in its data folder.
enum ClientsCommand {
    static let scope = Option("scope", .string("\"S …\""), help: "the services the client may call, space-separated (add)")
    static let json = Option("json", .switch, default: false, help: "machine-readable output")
    static let apiKey = Option("api-key", .switch, default: false, help: "also give the client an API key for the HTTP gateway (add)")

    static let command = Command(
        "clients", listing: ("clients add|list|remove", "manage the clients that may get tokens (secrets stored as argon2id hashes)"),
        usage: """
            quire clients add NAME --scope "ocr echo" [--api-key] [--json]
                   quire clients list [--json]
                   quire clients remove CLIENT_ID
            """,
        discussion: """
            Manages the clients allowed to get tokens from the token worker. Secrets are stored only as
            argon2id hashes: 'add' shows the new secret once, so store it then. With --api-key the
            client also gets an API key (qk_…, stored as a SHA-256 hash, shown once) that apps send to
            the HTTP gateway as Ocp-Apim-Subscription-Key, ?key= or x-goog-api-key. 'remove' revokes
            the client, its secret and its key. A running token worker sees changes at once; a
            gateway stops accepting a removed key within its --api-key-cache-s (60 s at most).
            """,
        groups: [OptionGroup(options: [dataOption, scope.info, apiKey.info, json.info])],
        run: run)

    /// The token worker's data folder.
    static var dataOption: OptionInfo {
        var data = DataDirectory.option.info
        data.help = "the token worker's data folder"
        data.defaultText = "quire up's"
        return data
    }

    static func run(_ invocation: Invocation) throws -> Int32 {
        let registry = ClientRegistry(dataDirectory: try DataDirectory.resolve(invocation))
        let json = try invocation.value(Self.json, or: false)
        switch invocation.positionals.first {
        case "add":
            guard invocation.positionals.count == 2 else { throw UsageError(command: "quire clients", message: "add needs one NAME") }
            guard let scope = try invocation.value(scope) else { throw UsageError(command: "quire clients", message: "add needs --scope \"ocr …\"") }
            let scopes = scope.split(separator: " ").map(String.init)
            guard !scopes.isEmpty else { throw UsageError(command: "quire clients", message: "--scope is empty") }
            let withKey = try invocation.value(Self.apiKey, or: false)
            let (client, secret, key) = try registry.add(name: invocation.positionals[1], scopes: scopes, withAPIKey: withKey, now: epochSeconds())
            if json {
                var fields = ["client_id": client.id, "client_secret": secret, "name": client.name, "scope": client.scopes.joined(separator: " ")]
                if let key { fields["api_key"] = key }
                printOut(jsonText(fields))
            } else {
                printOut("client_id:     \(client.id)\nclient_secret: \(secret)\nscope:         \(client.scopes.joined(separator: " "))"
                         + (key.map { "\napi_key:       \($0)" } ?? ""))
                printError(key == nil ? "The secret is shown only this once; Quire keeps only its hash."
                                      : "The secret and the API key are shown only this once; Quire keeps only their hashes.")
            }
            return 0
        case "list":
            let clients = try registry.load()
            if json {
                let rows: [[String: Any]] = clients.map {
                    ["client_id": $0.id, "name": $0.name, "scope": $0.scopes.joined(separator: " "), "created": String($0.created), "api_key": $0.apiKeyHash != nil]
                }
                printOut(jsonText(rows))
            } else {
                for client in clients {
                    printOut("\(client.id)  \(client.name)  scope=\"\(client.scopes.joined(separator: " "))\"  api_key=\(client.apiKeyHash == nil ? "no" : "yes")  created=\(isoDate(client.created))")
                }
            }
            return 0
        case "remove":
            guard invocation.positionals.count == 2 else { throw UsageError(command: "quire clients", message: "remove needs one CLIENT_ID") }
            guard try registry.remove(id: invocation.positionals[1]) else {
                printError("quire clients: no client '\(invocation.positionals[1])'")
                return 1
            }
            return 0
        default:
            throw UsageError(command: "quire clients", message: "expected add, list or remove")
        }
    }
}

/// `quire keys rotate|list|curve`.
enum KeysCommand {
    static let activateIn = Option("activate-in-s", .integer(0...86_400), default: 60, help: "seconds before a new key starts signing (rotate)")
    static let out = Option("out", .string("PATH"), help: "write PATH.key and PATH.pub (curve)", defaultNote: "print both")

    static let command = Command(
        "keys", listing: ("keys rotate|list|curve", "rotate token signing keys; make CURVE key pairs"),
        usage: """
            quire keys rotate [--activate-in-s N]
                   quire keys list
                   quire keys curve [--out PATH]
            """,
        discussion: """
            rotate   adds a new token signing key. It is published in the JWKS at once and starts signing
                     N seconds later, so every broker learns it before meeting a token it signed; the old
                     key stays published until its tokens have expired.
            list     the signing keys: kid, state (pending, signing, retired), dates.
            curve    makes a CURVE key pair in Z85: PATH.key (secret, 0600) and PATH.pub, or prints both.
                     Give the broker's .pub to clients (--curve-server-key) and put clients' .pub files
                     in the broker's allow-list (--curve-allow).
            """,
        groups: [OptionGroup(options: [ClientsCommand.dataOption, activateIn.info, out.info])],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        switch invocation.positionals.first {
        case "rotate":
            let store = KeyStore(dataDirectory: try DataDirectory.resolve(invocation))
            let delay = try invocation.value(activateIn, or: 60)
            let key = try store.rotate(now: epochSeconds(), activationDelay: Int64(delay))
            printOut("kid \(key.kid) published; signs from \(isoDate(key.activatesAt))")
            return 0
        case "list":
            let store = KeyStore(dataDirectory: try DataDirectory.resolve(invocation))
            let keys = try store.load()
            let now = epochSeconds()
            let signing = keys.signingKey(now: now)
            for key in keys.keys {
                let state = key.activatesAt > now ? "pending" : key == signing ? "signing" : "retired"
                printOut("\(key.kid)  \(state)  created=\(isoDate(key.createdAt))  activates=\(isoDate(key.activatesAt))")
            }
            return 0
        case "curve":
            let pair = try CurveKeyPair.generate()
            let files = try CurveKeyFiles.render(pair)
            if let out = try invocation.value(out) {
                let keyPath = out + ".key"
                for path in [keyPath, out + ".pub"] where FileManager.default.fileExists(atPath: path) {
                    printError("quire keys: '\(path)' exists; not overwriting a key")
                    return 1
                }
                guard FileManager.default.createFile(atPath: keyPath, contents: nil, attributes: [.posixPermissions: 0o600]),
                      let handle = FileHandle(forWritingAtPath: keyPath) else {
                    printError("quire keys: cannot write '\(keyPath)'")
                    return 1
                }
                handle.write(Data(files.keyFile.utf8))
                try handle.close()
                guard FileManager.default.createFile(atPath: out + ".pub", contents: Data(files.publicFile.utf8), attributes: [.posixPermissions: 0o644]) else {
                    printError("quire keys: cannot write '\(out).pub'")
                    return 1
                }
                printOut("wrote \(keyPath) (secret) and \(out).pub")
            } else {
                FileHandle.standardOutput.write(Data(files.keyFile.utf8))
            }
            return 0
        default:
            throw UsageError(command: "quire keys", message: "expected rotate, list or curve")
        }
    }
}

/// `quire token`: prints an access token for scripts, or a reader token for one job.
enum TokenCommand {
    static let scope = Option("scope", .string("\"S …\""), help: "ask for fewer scopes than the client has")
    static let audience = Option("audience", .string("A"), help: "the audience", defaultNote: "the token worker's")
    static let job = Option("job", .string("ID"), help: "a reader token for this job")
    static let expiresIn = Option("expires-in-s", .integer64(1...86_400), help: "a shorter reader token lifetime")
    static let json = Option("json", .switch, default: false, help: "print the whole token response")

    static let command = Command(
        "token", listing: ("token", "print an access token (or, with --job, a reader token for one job)"),
        usage: "quire token [--scope \"S …\"] [--audience A] [--job ID [--expires-in-s N]] [options]",
        discussion: """
            Gets a token from 'auth.token' and prints it. With --job, exchanges a token (--token, or one
            got with the credentials) for a reader token that can only read that job (RFC 8693), to hand
            to a reader app.
            """,
        groups: [OptionGroup(options: [scope.info, audience.info, job.info, expiresIn.info, json.info]), ClientOptions.group(), ClientAuth.group],
        epilogue: """
            With no token worker (auth.token) at the broker, fails within 3 s with service_unavailable,
            unless --timeout-ms or QUIRE_TIMEOUT_MS is given: then it waits for one up to that long per attempt.
            """,
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        guard invocation.positionals.isEmpty else { throw UsageError(command: "quire token", message: "unexpected argument '\(invocation.positionals[0])'") }
        var configuration = try ClientOptions.configuration(invocation)
        // A broker without a token worker says so at once (MMI) instead of after the timeouts.
        guard try Preflight.run(invocation, configuration: &configuration, service: ReservedService.authToken, wantsToken: false) != nil else { return 1 }
        let response: TokenResponse
        do {
            if let job = try invocation.value(job) {
                let subject: String
                if let given = try ClientAuth.givenToken(invocation) {
                    subject = given
                } else {
                    guard let credentials = try ClientAuth.credentials(invocation) else {
                        throw UsageError(command: "quire token", message: "no token or credentials to exchange (see --help)")
                    }
                    subject = try ClientAuth.fetch(.credentials(credentials, audience: try invocation.value(audience)), configuration: configuration).accessToken
                }
                let expires = try invocation.value(expiresIn)
                response = try ClientAuth.fetch(.reader(subjectToken: subject, job: job, expiresIn: expires), configuration: configuration)
            } else {
                guard let credentials = try ClientAuth.credentials(invocation) else {
                    throw UsageError(command: "quire token", message: "no credentials: give --credentials FILE, QUIRE_CLIENT_ID/QUIRE_CLIENT_SECRET or --data DIR")
                }
                response = try ClientAuth.fetch(.credentials(credentials, scope: try invocation.value(scope), audience: try invocation.value(audience)),
                                                configuration: configuration)
            }
        } catch let error as ClientError {
            if let remote = error.remote { printError(String(decoding: remote.jsonFrame, as: UTF8.self)) } else { printError("quire token: \(error)") }
            return 1
        }
        printOut(try invocation.value(json, or: false) ? String(decoding: response.jsonFrame, as: UTF8.self) : response.accessToken)
        return 0
    }
}

/// The token worker's settings: ``TokenService``'s `auth.token` and `auth.jwks` over one data folder.
enum TokenWorker {
    /// The token worker's options: its data folder and ``TokenAuthorityConfiguration/settings``.
    static var group: OptionGroup {
        var data = DataDirectory.option.info
        data.help = "keys and clients (token)"
        data.defaultText = "quire up's: $XDG_DATA_HOME/quire, else ~/.local/share/quire"
        return OptionGroup("Token worker (token):", options: [data]
                           + OptionGroup(TokenAuthorityConfiguration.settings, defaults: TokenAuthorityConfiguration()).options)
    }

    static func services(_ invocation: Invocation, logger: Logger) throws -> [WorkerService] {
        let directory = try DataDirectory.resolve(invocation)
        let configuration = try invocation.configured(TokenAuthorityConfiguration(), TokenAuthorityConfiguration.settings)
        return try services(dataDirectory: directory, configuration: configuration, logger: logger)
    }

    /// The token worker's two services over one data folder (`quire up` runs them in process).
    static func services(dataDirectory directory: String, configuration: TokenAuthorityConfiguration, logger: Logger) throws -> [WorkerService] {
        let authority = try TokenAuthority(dataDirectory: directory, configuration: configuration)
        logger.notice("token worker ready", metadata: [
            "data": directory, "issuer": configuration.issuer, "audience": configuration.audience,
            "token_ttl_s": String(configuration.tokenLifetime), "kids": (try? authority.jwks().keys.compactMap(\.kid).joined(separator: ",")) ?? "",
        ])
        return TokenService.make(authority: authority, logger: logger)
    }
}

func jsonText(_ value: Any) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
}

func isoDate(_ seconds: Int64) -> String {
    ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
}
