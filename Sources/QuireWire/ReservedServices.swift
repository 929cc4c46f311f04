/// The service names Quire reserves, classified in one place.
///
/// Three prefixes are not ordinary services: `mmi.` (service discovery, RFC 8) and `titanic.`
/// (durable jobs, RFC 9) are answered by the broker itself, so no worker may register for them;
/// `auth.` is the token worker's, which every client may call without a token (it is how a client
/// gets one). The broker, the token verifier, the client library and the CLI ask here rather than
/// testing prefixes of their own.
public enum ServiceClass: Sendable, Equatable {
    /// `mmi.*`: the broker's Majordomo Management Interface.
    case management
    /// `titanic.*`: the broker's durable jobs.
    case jobs
    /// `auth.*`: the token worker's services.
    case auth
    /// Any other name: served by workers, behind a token when auth is on.
    case ordinary

    public static let managementPrefix = "mmi."
    public static let jobsPrefix = "titanic."
    public static let authPrefix = "auth."

    public init(_ service: String) {
        if service.hasPrefix(Self.managementPrefix) {
            self = .management
        } else if service.hasPrefix(Self.jobsPrefix) {
            self = .jobs
        } else if service.hasPrefix(Self.authPrefix) {
            self = .auth
        } else {
            self = .ordinary
        }
    }

    /// The broker answers these itself; a worker that offers one is disconnected.
    public var isServedByBroker: Bool { self == .management || self == .jobs }

    /// Whether a request needs a token when auth is on: everything but discovery and the token
    /// endpoint itself.
    public var needsToken: Bool { self == .jobs || self == .ordinary }
}

/// The reserved services Quire implements, by name.
public enum ReservedService {
    /// RFC 8: is there a worker for the service named in the body? `200` or `404`.
    public static let mmiService = "mmi.service"
    /// Quire's own MMI question: does this broker want a token on requests? `200` (auth on) or
    /// `404` (off). Brokers before it answer `501`, as RFC 8 has them answer any `mmi.*` they lack.
    public static let mmiAuth = "mmi.auth"
    /// The token worker's OAuth 2.0 client-credentials grant.
    public static let authToken = "auth.token"
    /// The token worker's public keys (JWKS), which the broker fetches to verify tokens.
    public static let authJWKS = "auth.jwks"
}

/// The OCR services' names, for the clients that pick one (the CLI, the gateway).
public enum OCRServiceName {
    /// One image or file, read by one worker.
    public static let page = "ocr"
    /// A document whose pages become `ocr` jobs of their own, read by every worker at once.
    public static let document = "ocr.document"
    /// Pictures read by workers that have the scene engine, as `ocr` reads them, for `ocr` workers
    /// that do not (a deployment's photo workers apart from its page workers).
    public static let scene = "ocr.scene"

    /// The service for a file sent as a durable job: a PDF's or TIFF's pages are spread (a one-page TIFF
    /// becomes one page job), anything else is one job.
    public static func forJob(_ bytes: [UInt8]) -> String {
        let tiff = bytes.starts(with: [0x49, 0x49, 0x2A, 0x00]) || bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2A])
        return PDFSniff.isPDF(bytes) || tiff ? document : page
    }
}
