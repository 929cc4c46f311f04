import Foundation
import QuireGateway
import QuireHTTP
import QuireSupport

enum GatewayCommand {
    static let listen = Option("listen", variable: "QUIRE_GATEWAY_LISTEN", .listenAddress, default: ":8080",
                               help: "where to serve HTTP (every interface when HOST is left out)")
    static let tlsCert = Option("tls-cert", variable: "QUIRE_GATEWAY_TLS_CERT", .string("FILE"),
                                help: "serve HTTPS with this PEM certificate (chain); needs --tls-key")
    static let tlsKey = Option("tls-key", variable: "QUIRE_GATEWAY_TLS_KEY", .string("FILE"), help: "the PEM private key of --tls-cert")
    static let requestTimeout = Option("request-timeout-ms", variable: "QUIRE_GATEWAY_REQUEST_TIMEOUT_MS", .milliseconds(100...3_600_000),
                                       default: Milliseconds(60_000), help: "a client that takes longer to send one whole request is cut off (408)")
    static let apiKeyCache = Option("api-key-cache-s", variable: "QUIRE_GATEWAY_API_KEY_CACHE_S", .integer(0...Int(APIKeyTokens.maxCacheSeconds)),
                                    default: Int(APIKeyTokens.maxCacheSeconds),
                                    help: "how long the token got for an API key is reused, seconds (a removed key works at most this long; 0: ask every time)")
    static let fetchAllow = Option("fetch-allow", variable: "QUIRE_GATEWAY_FETCH_ALLOW", .fetchAllowList,
                                   help: "fetch image URLs that clients give only under these comma-separated URL prefixes "
                                       + "(https://images.example.com/scans/,http://10.0.0.5:9000/bucket/); none: no URL is fetched",
                                   defaultNote: "none")
    static let fetchTimeout = Option("fetch-timeout-ms", variable: "QUIRE_GATEWAY_FETCH_TIMEOUT_MS", .milliseconds(100...60_000),
                                     default: Milliseconds(10_000), help: "the longest one image URL may take to fetch, redirects included")

    static let command = Command(
        "gateway", listing: ("gateway", "answer Cloud Vision, Firebase annotateImage, Azure Read and Image Analysis calls over HTTP"),
        usage: "quire gateway [options]",
        discussion: """
            An HTTP front for apps written against Google Cloud Vision (POST /v1/images:annotate), the
            Firebase callable annotateImage (POST /annotateImage, /{project}/{region}/annotateImage),
            Azure Image Analysis 4.0 (POST /computervision/imageanalysis:analyze?features=read)
            and Azure Read 3.2 and 2.0 (POST /vision/v3.2/read/analyze or
            /vision/v2.0/read/core/asyncBatchAnalyze, then GET the Operation-Location; these are
            durable jobs, so the broker needs --data), and an OAuth 2.0 token endpoint (POST
            /oauth2/token, /{tenant}/oauth2/token: client_credentials, answered by the token worker).
            Each image goes to the broker's 'ocr' service as one more client; an 'Authorization:
            Bearer TOKEN' header is passed on as the request's token, which the broker checks. An
            API key (Ocp-Apim-Subscription-Key, ?key=, x-goog-api-key; quire clients add --api-key)
            is exchanged at the token worker for a token, reused for --api-key-cache-s. Image URLs
            are fetched only under the --fetch-allow prefixes (none by default). Stops on SIGTERM or
            SIGINT. See docs/gateway.md.
            """,
        groups: [OptionGroup(options: [listen.info, tlsCert.info, tlsKey.info, requestTimeout.info, apiKeyCache.info, fetchAllow.info,
                                       fetchTimeout.info]), ClientOptions.group(), OptionGroup(options: CurveOptions.clientGroup.options)],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        guard invocation.positionals.isEmpty else {
            throw UsageError(command: command, message: "unexpected argument '\(invocation.positionals[0])'")
        }
        let listen = try invocation.value(Self.listen, or: ":8080")
        let certificate = try invocation.value(tlsCert)
        let key = try invocation.value(tlsKey)
        var tls: HTTPServerConfiguration.TLS?
        switch (certificate, key) {
        case (nil, nil): tls = nil
        case (let certificate?, let key?): tls = try HTTPServerConfiguration.TLS(certificateFile: certificate, keyFile: key)
        default: throw UsageError(command: command, message: "--tls-cert and --tls-key go together")
        }
        let configuration = try ClientOptions.configuration(invocation)
        let logger = try CommonOptions.logger("quire.gateway", invocation)
        let timeout = try invocation.value(requestTimeout, or: Milliseconds(60_000))
        let cacheSeconds = try invocation.value(apiKeyCache, or: Int(APIKeyTokens.maxCacheSeconds))
        let allow = try allowList(invocation)
        let fetchMilliseconds = try invocation.value(fetchTimeout, or: Milliseconds(10_000))
        let fetcher = ImageFetcher(allow: allow, timeout: .milliseconds(fetchMilliseconds.value))
        let gateway = Gateway(listen: listen, client: configuration, tls: tls, requestTimeout: timeout, apiKeyCacheSeconds: Int64(cacheSeconds),
                              fetcher: fetcher, logger: logger)
        let signals = SignalWatcher { number in
            logger.notice("signal received; stopping", metadata: ["signal": String(number)])
            gateway.stop()
        }
        defer { withExtendedLifetime(signals) {} }
        do {
            try gateway.run()
        } catch {
            logger.error("gateway failed", metadata: ["error": String(describing: error)])
            printError("quire gateway: \(error)")
            return 1
        }
        return 0
    }
}

extension GatewayCommand {
    /// `--fetch-allow`, else `QUIRE_GATEWAY_FETCH_ALLOW`; a prefix that is not valid stops the gateway
    /// before it listens, with the prefix and the reason.
    static func allowList(_ invocation: Invocation) throws(UsageError) -> FetchAllowList {
        do {
            return try invocation.value(fetchAllow) ?? .none
        } catch {
            let given = fetchAllow.flag.flatMap { flag in invocation.arguments.string(flag).map { ("--\(flag)", $0) } }
                ?? fetchAllow.variable.flatMap { variable in invocation.environment[variable].map { (variable, $0) } }
            if let (source, text) = given {
                do {
                    _ = try FetchAllowList(parsing: text)
                } catch let invalid {
                    throw UsageError(command: invocation.command, message: "\(source): \(invalid)")
                }
            }
            throw error
        }
    }
}

extension SettingValue where Value == FetchAllowList {
    /// Comma-separated http(s) URL prefixes, each checked at start-up: a bad one is a usage error naming it.
    static var fetchAllowList: Self {
        Self(placeholder: "PREFIXES", expectation: "http(s) URL prefixes separated by commas, without user info, query or fragment",
             parse: { try? FetchAllowList(parsing: $0) }, format: { $0.prefixes.map(\.description).joined(separator: ",") })
    }
}
