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
    static let help = """
        Usage: quire clients add NAME --scope "ocr echo" [--json]
               quire clients list [--json]
               quire clients remove CLIENT_ID

        Manages the clients allowed to get tokens from the token worker. Secrets are stored only as
        argon2id hashes: 'add' shows the new secret once, so store it then. A running token worker
        sees changes at once.

        Options:
          --data DIR        the token worker's data folder [QUIRE_DATA] (default: quire up's)
          --scope "S …"     the services the client may call, space-separated (add)
          --json            machine-readable output
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let arguments = try Arguments(command: "quire clients", args, valued: ["data", "scope", "log-level"], booleans: ["json"])
        let registry = ClientRegistry(dataDirectory: DataDirectory.resolve(arguments))
        let json = arguments.flag("json")
        switch arguments.positionals.first {
        case "add":
            guard arguments.positionals.count == 2 else { throw UsageError(command: "quire clients", message: "add needs one NAME") }
            guard let scope = arguments.string("scope") else { throw UsageError(command: "quire clients", message: "add needs --scope \"ocr …\"") }
            let scopes = scope.split(separator: " ").map(String.init)
            guard !scopes.isEmpty else { throw UsageError(command: "quire clients", message: "--scope is empty") }
            let (client, secret) = try registry.add(name: arguments.positionals[1], scopes: scopes, now: epochSeconds())
            if json {
                printOut(jsonText(["client_id": client.id, "client_secret": secret, "name": client.name, "scope": client.scopes.joined(separator: " ")]))
            } else {
                printOut("client_id:     \(client.id)\nclient_secret: \(secret)\nscope:         \(client.scopes.joined(separator: " "))")
                printError("The secret is shown only this once; Quire keeps only its hash.")
            }
            return 0
        case "list":
            let clients = try registry.load()
            if json {
                let rows = clients.map { ["client_id": $0.id, "name": $0.name, "scope": $0.scopes.joined(separator: " "), "created": String($0.created)] }
                printOut(jsonText(rows))
            } else {
                for client in clients {
                    printOut("\(client.id)  \(client.name)  scope=\"\(client.scopes.joined(separator: " "))\"  created=\(isoDate(client.created))")
                }
            }
            return 0
        case "remove":
            guard arguments.positionals.count == 2 else { throw UsageError(command: "quire clients", message: "remove needs one CLIENT_ID") }
            guard try registry.remove(id: arguments.positionals[1]) else {
                printError("quire clients: no client '\(arguments.positionals[1])'")
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
    static let help = """
        Usage: quire keys rotate [--activate-in-s N]
               quire keys list
               quire keys curve [--out PATH]

        rotate   adds a new token signing key. It is published in the JWKS at once and starts signing
                 N seconds later (default 60), so every broker learns it before meeting a token it
                 signed; the old key stays published until its tokens have expired.
        list     the signing keys: kid, state (pending, signing, retired), dates.
        curve    makes a CURVE key pair in Z85: PATH.key (secret, 0600) and PATH.pub, or prints both.
                 Give the broker's .pub to clients (--curve-server-key) and put clients' .pub files
                 in the broker's allow-list (--curve-allow).

        Options:
          --data DIR          the token worker's data folder [QUIRE_DATA] (default: quire up's) (rotate, list)
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let arguments = try Arguments(command: "quire keys", args, valued: ["data", "activate-in-s", "out", "log-level"])
        switch arguments.positionals.first {
        case "rotate":
            let store = KeyStore(dataDirectory: DataDirectory.resolve(arguments))
            let delay = try arguments.integer("activate-in-s", range: 0...86_400) ?? 60
            let key = try store.rotate(now: epochSeconds(), activationDelay: Int64(delay))
            printOut("kid \(key.kid) published; signs from \(isoDate(key.activatesAt))")
            return 0
        case "list":
            let store = KeyStore(dataDirectory: DataDirectory.resolve(arguments))
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
            if let out = arguments.string("out") {
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
    static let help = """
        Usage: quire token [--scope "S …"] [--audience A] [--job ID [--expires-in-s N]] [options]

        Gets a token from 'auth.token' and prints it. With --job, exchanges a token (--token, or one
        got with the credentials) for a reader token that can only read that job (RFC 8693), to hand
        to a reader app.

        Options:
          --scope "S …"          ask for fewer scopes than the client has
          --audience A           the audience (default: the token worker's)
          --job ID               a reader token for this job
          --expires-in-s N       a shorter reader token lifetime
          --json                 print the whole token response
          --broker ENDPOINT      [QUIRE_BROKER] (default tcp://127.0.0.1:5555)
          --timeout-ms N         [QUIRE_TIMEOUT_MS] (30000)
        """ + "\n" + ClientAuth.help + "\n\n" + """
        With no token worker (auth.token) at the broker, fails within 3 s with service_unavailable,
        unless --timeout-ms or QUIRE_TIMEOUT_MS is given: then it waits for one up to that long per attempt.
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let arguments = try Arguments(command: "quire token", args,
                                      valued: ClientAuth.options.union(["scope", "audience", "job", "expires-in-s", "broker", "timeout-ms", "log-level"]),
                                      booleans: ["json"])
        guard arguments.positionals.isEmpty else { throw UsageError(command: "quire token", message: "unexpected argument '\(arguments.positionals[0])'") }
        let configuration = try clientConfiguration(arguments)
        // A broker without a token worker says so at once (MMI) instead of after the timeouts.
        guard try Preflight.run(arguments, configuration: configuration, service: ReservedService.authToken, wantsToken: false) != nil else { return 1 }
        let response: TokenResponse
        do {
            if let job = arguments.string("job") {
                let subject: String
                if let given = ClientAuth.givenToken(arguments) {
                    subject = given
                } else {
                    guard let credentials = try ClientAuth.credentials(arguments) else {
                        throw UsageError(command: "quire token", message: "no token or credentials to exchange (see --help)")
                    }
                    subject = try ClientAuth.fetch(.credentials(credentials, audience: arguments.string("audience")), configuration: configuration).accessToken
                }
                let expires = try arguments.integer("expires-in-s", range: 1...86_400).map(Int64.init)
                response = try ClientAuth.fetch(.reader(subjectToken: subject, job: job, expiresIn: expires), configuration: configuration)
            } else {
                guard let credentials = try ClientAuth.credentials(arguments) else {
                    throw UsageError(command: "quire token", message: "no credentials: give --credentials FILE, QUIRE_CLIENT_ID/QUIRE_CLIENT_SECRET or --data DIR")
                }
                response = try ClientAuth.fetch(.credentials(credentials, scope: arguments.string("scope"), audience: arguments.string("audience")),
                                                configuration: configuration)
            }
        } catch let error as ClientError {
            if let remote = error.remote { printError(String(decoding: remote.jsonFrame, as: UTF8.self)) } else { printError("quire token: \(error)") }
            return 1
        }
        printOut(arguments.flag("json") ? String(decoding: response.jsonFrame, as: UTF8.self) : response.accessToken)
        return 0
    }
}

/// The token worker's settings: ``TokenService``'s `auth.token` and `auth.jwks` over one data folder.
enum TokenWorker {
    static func services(_ arguments: Arguments, logger: Logger) throws -> [WorkerService] {
        let directory = DataDirectory.resolve(arguments)
        let environment = EnvironmentReader(ProcessInfo.processInfo.environment)
        var configuration = TokenAuthorityConfiguration()
        if let v = arguments.string("issuer") ?? environment.string("QUIRE_ISSUER") { configuration.issuer = v }
        if let v = arguments.string("audience") ?? environment.string("QUIRE_AUDIENCE") { configuration.audience = v }
        let ttl: Int?
        do { ttl = try environment.integer("QUIRE_TOKEN_TTL_S", range: 1...86_400) } catch {
            throw UsageError(command: arguments.command, message: error.description)
        }
        if let v = try arguments.integer("token-ttl-s", range: 1...86_400) ?? ttl {
            configuration = TokenAuthorityConfiguration(issuer: configuration.issuer, audience: configuration.audience, tokenLifetime: Int64(v))
        }
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
