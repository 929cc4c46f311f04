import Foundation

/// A typed error as it travels on the wire: `{"error":{"code","message","retryable",…}}`
/// (`proto-json/error.schema.json`). Brokers and workers send it as the one frame of a FINAL reply.
public struct WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable, machine-readable codes. Keep in step with the `enum` in `error.schema.json`.
    public enum Code: String, Sendable, Codable, CaseIterable {
        case badRequest = "bad_request"
        case invalidJSON = "invalid_json"
        case tooLarge = "too_large"
        case busy
        case serviceUnavailable = "service_unavailable"
        case timeout
        case workerLost = "worker_lost"
        case shuttingDown = "shutting_down"
        case notAnImage = "not_an_image"
        case unsupportedFormat = "unsupported_format"
        case corruptImage = "corrupt_image"
        case tooManyPixels = "too_many_pixels"
        case tooManyPages = "too_many_pages"
        case passwordProtected = "password_protected"
        case unknownLanguage = "unknown_language"
        case engineFailure = "engine_failure"
        case `internal`
        case unknownJob = "unknown_job"
        case unknownService = "unknown_service"
        case storageFailure = "storage_failure"
        case jobDead = "job_dead"
        case jobCancelled = "job_cancelled"
        case deadlineExceeded = "deadline_exceeded"
        // OAuth 2.0 token endpoint errors (RFC 6749 §5.2), answered by `auth.token`.
        case invalidRequest = "invalid_request"
        case invalidClient = "invalid_client"
        case invalidGrant = "invalid_grant"
        case unauthorizedClient = "unauthorized_client"
        case unsupportedGrantType = "unsupported_grant_type"
        case invalidScope = "invalid_scope"
        // Authorization at the broker: no or bad token, an expired one, a token without the scope,
        // too many requests from one client (`retry_after_ms` says when to come back).
        case unauthenticated
        case tokenExpired = "token_expired"
        case forbidden
        case rateLimited = "rate_limited"

        /// Whether a request failing with this code may succeed when sent again later.
        public var isRetryableByDefault: Bool {
            switch self {
            case .busy, .serviceUnavailable, .timeout, .workerLost, .shuttingDown, .storageFailure, .rateLimited: true
            case .badRequest, .invalidJSON, .tooLarge, .internal, .notAnImage, .unsupportedFormat, .corruptImage,
                 .tooManyPixels, .tooManyPages, .passwordProtected, .unknownLanguage, .engineFailure, .unknownJob, .unknownService,
                 .jobDead, .jobCancelled, .deadlineExceeded,
                 .invalidRequest, .invalidClient, .invalidGrant, .unauthorizedClient, .unsupportedGrantType, .invalidScope,
                 .unauthenticated, .tokenExpired, .forbidden: false
            }
        }
    }

    public var code: Code
    public var message: String
    public var retryable: Bool
    public var service: String?
    public var attempts: Int?
    public var limit: Int?
    /// How long to wait before trying again (`rate_limited`), in milliseconds.
    public var retryAfterMilliseconds: Int?

    public init(_ code: Code, _ message: String, retryable: Bool? = nil, service: String? = nil, attempts: Int? = nil, limit: Int? = nil,
                retryAfterMilliseconds: Int? = nil) {
        self.code = code
        self.message = message
        self.retryable = retryable ?? code.isRetryableByDefault
        self.service = service
        self.attempts = attempts
        self.limit = limit
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    public var description: String { "\(code.rawValue): \(message)" }

    private struct Envelope: Codable {
        var error: Body
    }

    /// The error object inside the envelope, as it appears embedded in other bodies (a job's status).
    public struct Body: Codable, Sendable, Equatable {
        public var code: String
        public var message: String
        public var retryable: Bool
        public var service: String?
        public var attempts: Int?
        public var limit: Int?
        public var retryAfterMilliseconds: Int?

        enum CodingKeys: String, CodingKey {
            case code, message, retryable, service, attempts, limit
            case retryAfterMilliseconds = "retry_after_ms"
        }
    }

    public var body: Body {
        Body(code: code.rawValue, message: message, retryable: retryable, service: service, attempts: attempts, limit: limit,
             retryAfterMilliseconds: retryAfterMilliseconds)
    }

    /// The JSON frame for this error.
    public var jsonFrame: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = Body(code: code.rawValue, message: message, retryable: retryable, service: service, attempts: attempts, limit: limit,
                        retryAfterMilliseconds: retryAfterMilliseconds)
        // Encoding plain strings, integers and booleans cannot fail.
        return (try? Array(encoder.encode(Envelope(error: body)))) ?? Array(#"{"error":{"code":"internal","message":"error encoding failed","retryable":false}}"#.utf8)
    }

    /// Reads an error reply; `nil` when the frame is not an error body. Unknown codes (from newer peers)
    /// map to `internal` with the original code kept in the message.
    public init?(jsonFrame: [UInt8]) {
        guard jsonFrame.first == UInt8(ascii: "{"),
              let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(jsonFrame)) else { return nil }
        let body = envelope.error
        if let code = Code(rawValue: body.code) {
            self.init(code, body.message, retryable: body.retryable, service: body.service, attempts: body.attempts, limit: body.limit,
                      retryAfterMilliseconds: body.retryAfterMilliseconds)
        } else {
            self.init(.internal, "\(body.code): \(body.message)", retryable: body.retryable, service: body.service,
                      attempts: body.attempts, limit: body.limit, retryAfterMilliseconds: body.retryAfterMilliseconds)
        }
    }
}
