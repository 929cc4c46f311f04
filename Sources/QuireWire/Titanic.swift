import Foundation

/// The Titanic Service Protocol (ZeroMQ RFC 9) as Quire serves it, and Quire's extensions.
///
/// Every reply starts with a status frame: `200` OK, `300` pending, `400` unknown or refused (do not
/// retry), `500` error (retry later), optionally followed by a space and a reason the client must not
/// rely on (`500 busy`). Quire adds, after the status, the typed error body for 400/500.
public enum Titanic {
    public static let request = "titanic.request"
    public static let reply = "titanic.reply"
    public static let close = "titanic.close"
    public static let status = "titanic.status"
    public static let cancel = "titanic.cancel"

    public enum Status: String, Sendable {
        case ok = "200", pending = "300", unknown = "400", error = "500"
    }

    /// Parses a status frame: the three digits, with or without a reason after a space.
    public static func status(of frame: [UInt8]) -> Status? {
        guard frame.count >= 3 else { return nil }
        guard frame.count == 3 || frame[3] == UInt8(ascii: " ") else { return nil }
        return Status(rawValue: String(decoding: frame.prefix(3), as: UTF8.self))
    }

    /// A `titanic.*` reply other than `200`: its status (nil when the first frame is none), that frame
    /// as text, and the typed error Quire's broker puts after it.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public var status: Status?
        public var statusText: String
        public var error: WireError?

        public init(status: Status?, statusText: String, error: WireError?) {
            self.status = status
            self.statusText = statusText
            self.error = error
        }

        public var description: String {
            if let error { return error.description }
            switch status {
            case .pending: return "not finished yet"
            case .unknown: return "unknown job"
            case .error: return "the broker failed; try again later"
            default: return "unexpected reply '\(statusText)'"
            }
        }
    }

    /// A `titanic.*` reply read: the frames after `200`, or the refusal. The CLI's verbs, the gateway's
    /// job routes and `ocr.document` all read replies so.
    public static func outcome(of frames: [[UInt8]]) -> Result<[[UInt8]], Refusal> {
        guard let first = frames.first else { return .failure(Refusal(status: nil, statusText: "", error: nil)) }
        let status = status(of: first)
        if status == .ok { return .success(Array(frames.dropFirst())) }
        return .failure(Refusal(status: status, statusText: String(decoding: first, as: UTF8.self),
                                error: frames.count > 1 ? WireError(jsonFrame: frames[1]) : nil))
    }

    /// The reply to a refused Titanic request: `500 <code>` when asking again later may help (busy, a
    /// failing disk), `400 <code>` when it will not, then the typed error.
    public static func refusal(_ error: WireError) -> [[UInt8]] {
        let status = error.retryable ? Status.error : Status.unknown
        return [Array("\(status.rawValue) \(error.code.rawValue)".utf8), error.jsonFrame]
    }

    /// Whether `text` is a job id as RFC 9 defines it: 32 hexadecimal characters.
    public static func isJobID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102) }
    }
}

/// Options for one durable job: the `job` member of the request's first JSON frame
/// (`proto-json/titanic-options.schema.json`). The broker removes it before the job reaches a worker.
public struct JobOptions: Sendable, Equatable, Codable {
    /// `high`, `normal` (default) or `low`.
    public var priority: String?
    /// Resubmitting with the same key (same submitter) returns the same job instead of a new one.
    public var idempotencyKey: String?
    /// Milliseconds from submission after which a job that has not finished expires.
    public var deadlineMs: Int64?
    /// Attempts before the job is dead (1…20; the broker's default otherwise).
    public var maxAttempts: Int?
    /// How long the result is kept after the job finishes, in seconds.
    public var resultTTLSeconds: Int64?

    public init(priority: String? = nil, idempotencyKey: String? = nil, deadlineMs: Int64? = nil, maxAttempts: Int? = nil, resultTTLSeconds: Int64? = nil) {
        self.priority = priority
        self.idempotencyKey = idempotencyKey
        self.deadlineMs = deadlineMs
        self.maxAttempts = maxAttempts
        self.resultTTLSeconds = resultTTLSeconds
    }

    enum CodingKeys: String, CodingKey {
        case priority, idempotencyKey, deadlineMs, maxAttempts
        case resultTTLSeconds = "resultTtlSeconds"
    }

    /// What each member must be, in the words of `proto-json/titanic-options.schema.json`, for error messages.
    static let memberRules: [(key: String, rule: String)] = [
        ("priority", "one of high, normal, low"),
        ("idempotencyKey", "a string of 1 to 256 bytes"),
        ("deadlineMs", "an integer number of milliseconds"),
        ("maxAttempts", "an integer within 1…20"),
        ("resultTtlSeconds", "an integer number of seconds"),
    ]
}

/// What `titanic.status` (and `titanic.cancel`) answer after `200` (`proto-json/titanic-status.schema.json`).
public struct JobStatus: Sendable, Equatable, Codable {
    public var id: String
    public var service: String
    /// queued, running, done, failed, dead, cancelled, expired.
    public var state: String
    public var priority: String
    public var attempts: Int
    public var maxAttempts: Int
    /// RFC 3339 times, UTC.
    public var createdAt: String
    public var updatedAt: String
    public var startedAt: String?
    public var finishedAt: String?
    public var deadline: String?
    public var expiresAt: String?
    public var idempotencyKey: String?
    /// The last error (the reason a job failed, died, expired or was retried).
    public var error: WireError.Body?
    /// How far the running attempt has got, as its worker last said (``JobProgress``); only while running.
    public var progress: JobProgress?

    public init(id: String, service: String, state: String, priority: String, attempts: Int, maxAttempts: Int, createdAt: String, updatedAt: String,
                startedAt: String? = nil, finishedAt: String? = nil, deadline: String? = nil, expiresAt: String? = nil,
                idempotencyKey: String? = nil, error: WireError.Body? = nil, progress: JobProgress? = nil) {
        self.id = id
        self.service = service
        self.state = state
        self.priority = priority
        self.attempts = attempts
        self.maxAttempts = maxAttempts
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.deadline = deadline
        self.expiresAt = expiresAt
        self.idempotencyKey = idempotencyKey
        self.error = error
        self.progress = progress
    }

    public var jsonFrame: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? Array(encoder.encode(self))) ?? []
    }

    public init?(jsonFrame: [UInt8]) {
        guard let value = try? JSONDecoder().decode(JobStatus.self, from: Data(jsonFrame)) else { return nil }
        self = value
    }
}

/// The members of a request's first JSON frame that are meant for the broker, not the worker: `token`
/// (auth) and `job` (Titanic options). ``split(_:)`` takes them out and gives back the frame without them.
public struct BrokerEnvelope: Sendable, Equatable {
    public var token: String?
    public var job: JobOptions?
    /// Milliseconds `titanic.reply` may hold the request until the job finishes (long polling).
    public var waitMs: Int64?

    public init(token: String? = nil, job: JobOptions? = nil, waitMs: Int64? = nil) {
        self.token = token
        self.job = job
        self.waitMs = waitMs
    }

    public static let reservedKeys: Set<String> = ["token", "job", "waitMs"]

    /// Reads the broker's members from `frame` when it is a JSON object. Returns the envelope and the
    /// frame to forward (unchanged when there was nothing to remove), or an error when a member is malformed.
    /// Frames that are not JSON objects pass through untouched.
    public static func split(_ frame: [UInt8], removing keys: Set<String> = reservedKeys) -> Result<(BrokerEnvelope, [UInt8]), WireError> {
        guard frame.first(where: { $0 != 0x20 && $0 != 0x0a && $0 != 0x0d && $0 != 0x09 }) == UInt8(ascii: "{") else {
            return .success((BrokerEnvelope(), frame))
        }
        // The broker's hot path (auth on: a token in every request): take the member out with a scan
        // of the top level instead of decoding and re-encoding the whole object.
        if keys == ["token"] {
            switch JSONScan.removeStringMember("token", from: frame) {
            case .found(let value, let rest): return .success((BrokerEnvelope(token: value), rest))
            case .absent: return .success((BrokerEnvelope(), frame))
            case .unsure: break
            }
        }
        // Cheap test first: most frames carry none of the reserved keys.
        let text = String(decoding: frame, as: UTF8.self)
        guard keys.contains(where: { text.contains("\"\($0)\"") }) else { return .success((BrokerEnvelope(), frame)) }
        guard var object = (try? JSONSerialization.jsonObject(with: Data(frame))) as? [String: Any] else {
            return .failure(WireError(.invalidJSON, "the first frame is not valid JSON"))
        }
        var envelope = BrokerEnvelope()
        if keys.contains("token"), let token = object.removeValue(forKey: "token") {
            guard let token = token as? String else { return .failure(WireError(.badRequest, "'token' must be a string")) }
            envelope.token = token
        }
        if keys.contains("waitMs"), let wait = object.removeValue(forKey: "waitMs") {
            guard let number = wait as? NSNumber, let value = Int64(exactly: number.doubleValue), value >= 0 else {
                return .failure(WireError(.badRequest, "'waitMs' must be a non-negative integer"))
            }
            envelope.waitMs = value
        }
        if keys.contains("job"), let job = object.removeValue(forKey: "job") {
            let known: Set<String> = ["priority", "idempotencyKey", "deadlineMs", "maxAttempts", "resultTtlSeconds"]
            if let members = job as? [String: Any], let unknown = members.keys.sorted().first(where: { !known.contains($0) }) {
                return .failure(WireError(.badRequest, "unknown job option '\(unknown)'"))
            }
            // `JSONSerialization.data` traps on anything but an array or object: test the type first.
            guard job is [String: Any], JSONSerialization.isValidJSONObject(job),
                  let data = try? JSONSerialization.data(withJSONObject: job),
                  let options = try? JSONDecoder().decode(JobOptions.self, from: data) else {
                if let members = job as? [String: Any],
                   let member = SchemaMessages.firstUndecodable(JobOptions.self, in: members, keys: JobOptions.memberRules.map(\.key)),
                   let rule = JobOptions.memberRules.first(where: { $0.key == member })?.rule {
                    return .failure(WireError(.badRequest, "'job.\(member)' must be \(rule)"))
                }
                return .failure(WireError(.badRequest, "'job' must be an object with priority, idempotencyKey, deadlineMs, maxAttempts, resultTtlSeconds"))
            }
            envelope.job = options
        }
        guard JSONSerialization.isValidJSONObject(object), let rest = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return .failure(WireError(.invalidJSON, "the first frame could not be re-encoded"))
        }
        return .success((envelope, Array(rest)))
    }
}

/// A scan of a JSON object's top level, for taking one member out without decoding the rest.
enum JSONScan {
    enum Outcome: Equatable {
        /// The member, a string without escapes, and the object without it.
        case found(String, [UInt8])
        /// A well-formed top level without the member.
        case absent
        /// Anything else (escapes in the value, another type, odd syntax): decode properly instead.
        case unsure
    }

    static func removeStringMember(_ key: String, from frame: [UInt8]) -> Outcome {
        let keyBytes = Array(key.utf8)
        var i = 0
        let n = frame.count
        func skipSpace() { while i < n, frame[i] == 0x20 || frame[i] == 0x0a || frame[i] == 0x0d || frame[i] == 0x09 { i += 1 } }
        /// Moves past a string starting at `i` (a quote); false when it does not end.
        func skipString() -> Bool {
            i += 1
            while i < n {
                if frame[i] == UInt8(ascii: "\\") { i += 2; continue }
                if frame[i] == UInt8(ascii: "\"") { i += 1; return true }
                i += 1
            }
            return false
        }
        /// Moves past any value starting at `i`.
        func skipValue() -> Bool {
            guard i < n else { return false }
            switch frame[i] {
            case UInt8(ascii: "\""):
                return skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while i < n {
                    switch frame[i] {
                    case UInt8(ascii: "\""): if !skipString() { return false }; continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { i += 1; return true }
                    default: break
                    }
                    i += 1
                }
                return false
            default:
                let start = i
                while i < n, frame[i] != UInt8(ascii: ","), frame[i] != UInt8(ascii: "}"), frame[i] != 0x20, frame[i] != 0x0a,
                      frame[i] != 0x0d, frame[i] != 0x09 { i += 1 }
                return i > start
            }
        }
        skipSpace()
        guard i < n, frame[i] == UInt8(ascii: "{") else { return .unsure }
        i += 1
        var found: (memberStart: Int, memberEnd: Int, value: String)?
        var previousComma: Int?
        while true {
            skipSpace()
            guard i < n else { return .unsure }
            if frame[i] == UInt8(ascii: "}") { break }
            guard frame[i] == UInt8(ascii: "\"") else { return .unsure }
            let memberStart = i
            let keyStart = i + 1
            guard skipString() else { return .unsure }
            let keyEnd = i - 1
            skipSpace()
            guard i < n, frame[i] == UInt8(ascii: ":") else { return .unsure }
            i += 1
            skipSpace()
            let valueStart = i
            guard skipValue() else { return .unsure }
            let memberEnd = i
            if frame[keyStart..<keyEnd].elementsEqual(keyBytes) {
                guard found == nil else { return .unsure }  // a duplicate member: let the decoder decide
                guard frame[valueStart] == UInt8(ascii: "\""), !frame[valueStart..<memberEnd].contains(UInt8(ascii: "\\")) else { return .unsure }
                let value = String(decoding: frame[(valueStart + 1)..<(memberEnd - 1)], as: UTF8.self)
                found = (previousComma ?? memberStart, memberEnd, value)
                if previousComma != nil { found?.memberStart = previousComma! }
            }
            skipSpace()
            guard i < n else { return .unsure }
            if frame[i] == UInt8(ascii: ",") {
                if let f = found, f.memberEnd == memberEnd, previousComma == nil {
                    // The first member: take the comma after it instead of one before it.
                    i += 1
                    found = (memberStart, i, f.value)
                    continue
                }
                previousComma = i
                i += 1
                continue
            }
            guard frame[i] == UInt8(ascii: "}") else { return .unsure }
            break
        }
        i += 1
        skipSpace()
        guard i == n else { return .unsure }
        guard let found else { return .absent }
        return .found(found.value, Array(frame[..<found.memberStart]) + Array(frame[found.memberEnd...]))
    }
}

/// How far a job's running attempt has got: `done` of `total` units (a document's pages). A worker
/// says so in a PARTIAL reply whose first frame is `{"progress":{"done":N,"total":M}}`; the broker keeps
/// the last one of a durable job's attempt for `titanic.status` and takes it as a sign of life that
/// renews the attempt's lease. Other partials are passed on or ignored as before.
public struct JobProgress: Sendable, Equatable, Codable {
    public var done: Int
    public var total: Int

    public init(done: Int, total: Int) {
        self.done = done
        self.total = total
    }

    /// The partial frame that carries it.
    public var partialFrame: [UInt8] {
        Array(#"{"progress":{"done":\#(done),"total":\#(total)}}"#.utf8)
    }

    /// The progress a partial reply's first frame carries; nil for any other partial. Bounded: a
    /// frame over 1 KiB, negative counts or `done` past `total` are not progress.
    public init?(partial frames: [[UInt8]]) {
        struct Envelope: Decodable { var progress: JobProgress }
        guard let first = frames.first, first.count <= 1_024, first.first == UInt8(ascii: "{"),
              let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(first)),
              envelope.progress.done >= 0, envelope.progress.total >= 0, envelope.progress.done <= envelope.progress.total else {
            return nil
        }
        self = envelope.progress
    }
}
