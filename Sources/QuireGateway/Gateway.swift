import Dispatch
import Foundation
import QuireClient
import QuireHTTP
import QuireSupport
import QuireWire
import Synchronization

/// One image for the broker's `ocr` service, as a foreign API's request described it.
public struct OCRCall: Sendable, Equatable {
    public var image: [UInt8]
    /// Quire's `mode` (`text` or `document`; anything else is read as a document).
    public var mode: String
    /// BCP-47 tags; nil or empty: the worker's default.
    public var languages: [String]?
    /// The bearer token the HTTP client presented, passed to the broker as the request's `token`.
    public var token: String?
    /// The API key the HTTP client presented instead; exchanged for a token before the call goes out
    /// (``APIKeyTokens``), never sent to the broker itself.
    public var apiKey: String?
    /// 1-based pages of a PDF or TIFF to read (negative: from the end); nil: every page.
    public var pages: [Int]?
    /// Read at most this many of them (Cloud Vision's files: the first five).
    public var pageLimit: Int?
    /// The kinds of document to find fields of (Document Intelligence's `prebuilt-receipt`: `receipt`).
    public var fields: [OCRRequest.Fields]?

    public init(image: [UInt8], mode: String, languages: [String]? = nil, token: String? = nil, apiKey: String? = nil, pages: [Int]? = nil) {
        self.image = image
        self.mode = mode
        self.languages = languages
        self.token = token
        self.apiKey = apiKey
        self.pages = pages
    }

    public init(image: [UInt8], mode: String, languages: [String]? = nil, credential: Credential, pages: [Int]? = nil) {
        self.init(image: image, mode: mode, languages: languages, token: credential.token, apiKey: credential.apiKey, pages: pages)
    }

    public var credential: Credential { Credential(token: token, apiKey: apiKey) }

    /// The `ocr` request's JSON frame (`proto-json/ocr-request.schema.json`); a durable job's options
    /// travel in its submission (`QuireClient.jobs`).
    var requestFrame: [UInt8] {
        let hints = languages.flatMap { $0.isEmpty ? nil : $0 }
        return OCRRequest(languages: hints, mode: OCRRequest.Mode(rawValue: mode) ?? .document, pages: pages, pageLimit: pageLimit, fields: fields,
                          token: token).jsonBytes()
    }
}

/// Why an image was not read, in terms every imitated API can translate into its own error.
public struct GatewayFailure: Error, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The image itself (not an image, corrupt, too many pixels, unknown language).
        case invalidImage
        /// No token, or one the broker refused.
        case unauthenticated
        /// A token without the right to this.
        case forbidden
        /// Queues full or the client's rate limit hit.
        case busy
        /// No worker, broker unreachable, timed out.
        case unavailable
        case `internal`
    }

    public var kind: Kind
    public var message: String
    /// The failure is an unknown or revoked API key (kind ``Kind/unauthenticated``): each API has its
    /// own body for that.
    public var isInvalidAPIKey = false

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The failure a broker or worker error stands for.
    public init(_ error: WireError) {
        switch error.code {
        case .notAnImage, .unsupportedFormat, .corruptImage, .tooManyPixels, .tooManyPages, .passwordProtected, .unknownLanguage, .tooLarge, .badRequest,
             .invalidJSON:
            self.init(.invalidImage, error.message)
        case .unauthenticated, .tokenExpired:
            self.init(.unauthenticated, error.message)
        case .forbidden:
            self.init(.forbidden, error.message)
        case .busy, .rateLimited:
            self.init(.busy, error.message)
        case .serviceUnavailable, .timeout, .workerLost, .shuttingDown, .deadlineExceeded, .storageFailure:
            self.init(.unavailable, error.message)
        default:
            self.init(.internal, "\(error.code.rawValue): \(error.message)")
        }
    }

    public init(_ error: ClientError) {
        if let remote = error.remote {
            self.init(remote)
        } else {
            self.init(error.code == .timeout || error.code == .transport ? .unavailable : .internal, "the broker: \(error.message)")
        }
    }
}

/// Sends one image to the broker's `ocr` service and waits for its reading: the gateway's only way to
/// the workers (through the broker, in production; a stand-in in tests).
public typealias OCRCaller = @Sendable (OCRCall) -> Result<OCRResult, GatewayFailure>

/// Where the bytes of an image URL a client gave come from (``ImageFetcher/source``). The routes ask
/// ``refusal`` while they check the request (no network), and ``fetch`` when they read that image.
public struct ImageSource: Sendable {
    /// nil when the URL may be fetched; else why not.
    public var refusal: @Sendable (String) -> FetchFailure?
    public var fetch: @Sendable (String) -> Result<[UInt8], FetchFailure>

    public init(refusal: @escaping @Sendable (String) -> FetchFailure?, fetch: @escaping @Sendable (String) -> Result<[UInt8], FetchFailure>) {
        self.refusal = refusal
        self.fetch = fetch
    }

    /// No URL is fetched (no allow-list).
    public static var none: ImageSource { ImageFetcher.none.source }
}

/// `quire gateway`: an HTTP server that answers the calls apps make to Cloud Vision, the Firebase
/// callable `annotateImage`, Azure Image Analysis 4.0 (each image one `ocr` request, answered in the same HTTP exchange) and
/// Azure Read 3.2/2.0 (each image a durable Titanic job, polled at its `Operation-Location`), as one
/// more Majordomo client of the broker, plus the OAuth 2.0 token endpoint (``OAuthTokenEndpoint``,
/// answered by the token worker). The broker checks every request's token; the gateway passes
/// `Authorization: Bearer` on and never looks inside it, and turns API keys into tokens at the token
/// worker (``APIKeyTokens``) without checking them itself.
public final class Gateway: Sendable {
    public let listen: String
    public let client: ClientConfiguration
    public let tls: HTTPServerConfiguration.TLS?
    /// How long a client may take to send one whole request (head and body); slower ones are cut off.
    public let requestTimeout: Milliseconds
    /// How long a token got for an API key is kept (``APIKeyTokens/cacheSeconds``): the revocation window.
    public let apiKeyCacheSeconds: Int64
    /// Fetches the image URLs clients give, from the allow-list only (``ImageFetcher/none``: none).
    public let fetcher: ImageFetcher
    private let logger: Logger
    private let stopRequested = Atomic<Bool>(false)
    private let stopSignal = DispatchSemaphore(value: 0)

    /// The largest request body: a 10 MB image as base64 inside JSON, with room to spare.
    public static let maxBodyBytes = 16 << 20
    /// HTTP threads; each holds one request while its image is read.
    public static let threads = 16

    public init(listen: String, client: ClientConfiguration, tls: HTTPServerConfiguration.TLS? = nil, requestTimeout: Milliseconds = 60_000,
                apiKeyCacheSeconds: Int64 = APIKeyTokens.maxCacheSeconds, fetcher: ImageFetcher = .none, logger: Logger) {
        self.listen = listen
        self.client = client
        self.tls = tls
        self.requestTimeout = requestTimeout
        self.apiKeyCacheSeconds = apiKeyCacheSeconds
        self.fetcher = fetcher
        self.logger = logger
    }

    public func stop() {
        if !stopRequested.exchange(true, ordering: .acquiringAndReleasing) { stopSignal.signal() }
    }

    public static func serverConfiguration(listen: ListenAddress, tls: HTTPServerConfiguration.TLS?,
                                           requestTimeout: Milliseconds = 60_000) -> HTTPServerConfiguration {
        // Silence is cut off by the request timeout first (with 408); the idle timeout is for clients
        // that stop reading a response, or stay silent on a kept-alive connection.
        let seconds = max(60, Int((requestTimeout.value + 999) / 1000))
        return HTTPServerConfiguration(listen: listen, threads: threads, maxConnections: 256, idleTimeoutSeconds: seconds,
                                       requestTimeout: .milliseconds(requestTimeout.value), maxHeaderBytes: 16 * 1024, maxBodyBytes: maxBodyBytes,
                                       connectionMemoryBytes: 64 * 1024, tls: tls)
    }

    /// The API families the gateway answers (``APIDialect``), their routes added in this order. A path
    /// no route has, outside every family's prefix, gets the first's (Cloud Vision's) 404.
    static let families: [any APIDialect.Type] = [CloudVisionAPI.self, OAuthTokenEndpoint.self, FirebaseCallable.self, AzureAPI.self,
                                                  ImageAnalysisAPI.self, DocumentIntelligenceAPI.self, FormRecognizerAPI.self]

    /// Every route the gateway answers, each family's refusing in its own shape (``APIDialect``); the
    /// router's ``HTTPRouter/rejection(_:_:_:)`` is the server's. Image URLs go to `fetch` (by default:
    /// refused, no allow-list).
    public static func router(recognize: @escaping OCRCaller, jobs: JobBackend = .none, tokens: TokenBackend = .none, https: Bool = false,
                              fetch: ImageSource = .none) -> HTTPRouter {
        let services = GatewayServices(ocr: recognize, jobs: jobs, tokens: tokens, https: https, fetch: fetch)
        var router = HTTPRouter()
        for family in families {
            router.group(family.refusals, prefix: family.prefix) { family.addRoutes(to: &$0, services) }
        }
        router.refusals = families[0].refusals
        return router
    }

    /// Serves until ``stop()``; `onListening` is told the bound port.
    public func run(onListening: (Int) -> Void = { _ in }) throws {
        guard let address = ListenAddress(listen) else {
            throw HTTPServerError(.invalidAddress, "expected [HOST]:PORT such as :8080", address: listen)
        }
        let client = try QuireClient(configuration: self.client)
        defer { _ = blockingAwait { await client.close() } }
        let logger = self.logger
        let fetcher = self.fetcher
        let tokens = TokenBackend.broker(client)
        let keys = APIKeyTokens(backend: tokens, cacheSeconds: apiKeyCacheSeconds)
        let recognize: OCRCaller = { call in
            var call = call
            switch keys.token(for: call.credential) {
            case .success(let token): (call.token, call.apiKey) = (token, nil)
            case .failure(let failure): return .failure(failure)
            }
            let request = call
            return blockingAwait { () async throws -> Result<OCRResult, GatewayFailure> in
                let reply = try await client.request(service: "ocr", body: [request.requestFrame, request.image])
                let frame = reply.first ?? []
                if let error = WireError(jsonFrame: frame) { return .failure(GatewayFailure(error)) }
                guard let result = OCRResult(replyFrame: frame) else {
                    return .failure(GatewayFailure(.internal, "the worker's reply is not an OCR result"))
                }
                return .success(result)
            }.mapError(JobBackend.failure).flatMap { $0 }
        }
        let router = Self.router(recognize: recognize, jobs: .titanic(client, keys: keys), tokens: tokens, https: tls != nil, fetch: fetcher.source)
        let routes = router.handler
        let server = try HTTPServer(configuration: Self.serverConfiguration(listen: address, tls: tls, requestTimeout: requestTimeout),
                                    log: { logger.debug("http", metadata: ["detail": $0]) },
                                    rejection: router.rejection) { request in
            // Once no request has come for a while, the allocator hands back what the last ones freed
            // (their bodies: base64 images, documents, results), as an OCR worker's does.
            ProcessMemory.requests.started()
            defer { ProcessMemory.requests.finished() }
            return routes(request)
        }
        logger.notice("gateway listening", metadata: ["listen": listen, "port": String(server.port), "broker": self.client.broker,
                                                      "tls": tls == nil ? "off" : "on",
                                                      "fetch": fetcher.allow.isEmpty ? "off" : fetcher.allow.prefixes.map(\.description).joined(separator: ",")])
        onListening(server.port)
        while !stopRequested.load(ordering: .acquiring) { stopSignal.wait() }
        server.stop()
        logger.notice("gateway stopped")
    }

    /// The token of `Authorization: Bearer TOKEN`, nil without one.
    static func bearerToken(_ request: HTTPRequest) -> String? {
        guard let value = request.headers["Authorization"] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// The media type of `Content-Type`, lower-cased, its parameters (`; charset=…`) dropped; empty without one.
    static func mediaType(_ request: HTTPRequest) -> String {
        (request.headers["Content-Type"] ?? "").lowercased().split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
    }

    /// JSON as Google's and Firebase's servers write it.
    static func json<T: Encodable>(_ status: Int, _ value: T) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)).map(Array.init) ?? Array(#"{"error":{"code":500,"message":"encoding failed","status":"INTERNAL"}}"#.utf8)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=UTF-8"], body: body)
    }
}
