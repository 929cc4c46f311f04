import Foundation
import QuireSupport
import QuireWire

/// What `titanic.reply` answered for a job: RFC 9's `200` (``done(_:)``, or ``failed(_:)`` when the
/// service answered with an error), `300` (``pending``) and `400` (``unknown(_:)``, or with the job's
/// end as Quire's reason, ``ended(_:)``). Anything else (`500`, a `400` for want of a token) is thrown
/// as a `Titanic.Refusal`.
public enum JobReply<Value: Sendable>: Sendable {
    /// `200`: the job finished and its service answered this.
    case done(Value)
    /// `200` and an error body: the service answered the job with an error (the job `failed`).
    case failed(WireError)
    /// `300`: not finished yet.
    case pending
    /// `400 unknown_job`, or a `400` without a reason: no such job (never submitted, closed, or its
    /// result expired).
    case unknown(WireError?)
    /// `400 dead`, `400 expired`, `400 cancelled`: the job ended without a result; its last error.
    case ended(WireError)

    /// The same outcome with the finished job's answer read by `transform`.
    public func map<Other: Sendable, Failure: Error>(_ transform: (Value) throws(Failure) -> Other) throws(Failure) -> JobReply<Other> {
        switch self {
        case .done(let value): .done(try transform(value))
        case .failed(let error): .failed(error)
        case .pending: .pending
        case .unknown(let error): .unknown(error)
        case .ended(let error): .ended(error)
        }
    }
}

extension JobReply: Equatable where Value: Equatable {}

/// The frames of `titanic.*` requests and the reading of their replies: the one place outside the broker
/// and QuireWire's codecs where they are written (``TitanicClient`` sends them).
public enum TitanicFrames {
    /// A request's first JSON frame with the job's options in `job` and the token in `token`; unchanged
    /// when there are neither. Throws `invalid_json` when the frame is not a JSON object (options and
    /// tokens travel only in one).
    public static func jobFrame(_ frame: [UInt8], options: JobOptions, token: String?) throws(WireError) -> [UInt8] {
        if options == JobOptions(), token == nil { return frame }
        guard var object = (try? JSONSerialization.jsonObject(with: Data(frame))) as? [String: Any] else {
            throw WireError(.invalidJSON, "the request frame is not a JSON object")
        }
        if options != JobOptions() {
            guard let encoded = try? JSONEncoder().encode(options), let job = try? JSONSerialization.jsonObject(with: encoded) else {
                throw WireError(.internal, "the job options could not be written")
            }
            object["job"] = job
        }
        if let token { object["token"] = token }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            throw WireError(.internal, "the request frame could not be written")
        }
        return Array(data)
    }

    /// A `titanic.request` body: the target service, then `body` with the options and the token in its
    /// first frame (``jobFrame(_:options:token:)``).
    static func submission(service: String, body: [[UInt8]], options: JobOptions, token: String?) throws(WireError) -> [[UInt8]] {
        var frames = [Array(service.utf8)] + body
        if options == JobOptions(), token == nil { return frames }
        guard body.count > 0 else {
            throw WireError(.invalidJSON, "job options and tokens travel in the body's first frame, a JSON object; the body is empty")
        }
        frames[1] = try jobFrame(body[0], options: options, token: token)
        return frames
    }

    /// The JSON frame after a job id: the token and the long-poll wait, nil when there are neither.
    public static func envelope(token: String?, wait: Milliseconds?) -> [UInt8]? {
        struct Envelope: Encodable {
            var token: String?
            var waitMs: Int64?
        }
        guard token != nil || wait != nil else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(Envelope(token: token, waitMs: wait?.value))).map(Array.init)
    }

    /// The body of a request about job `id`: the id, then the envelope.
    static func about(_ id: String, token: String?, wait: Milliseconds?) -> [[UInt8]] {
        [Array(id.utf8)] + (envelope(token: token, wait: wait).map { [$0] } ?? [])
    }

    /// The frames after `200`; any other status thrown with the broker's typed error.
    static func accepted(_ frames: [[UInt8]]) throws(Titanic.Refusal) -> [[UInt8]] {
        try Titanic.outcome(of: frames).get()
    }

    /// A `titanic.request` reply: the job id.
    static func jobID(_ frames: [[UInt8]]) throws -> String {
        let id = try accepted(frames).first.map { String(decoding: $0, as: UTF8.self) } ?? ""
        guard Titanic.isJobID(id) else { throw ClientError(.protocolError, "titanic.request answered 200 without a job id") }
        return id
    }

    /// A `titanic.status` or `titanic.cancel` reply: the job's state.
    static func jobStatus(_ frames: [[UInt8]], service: String) throws -> JobStatus {
        guard let status = try accepted(frames).first.flatMap(JobStatus.init(jsonFrame:)) else {
            throw ClientError(.protocolError, "\(service) answered 200 without a job status")
        }
        return status
    }

    /// A `titanic.reply` reply read.
    static func reply(_ frames: [[UInt8]]) throws(Titanic.Refusal) -> JobReply<[[UInt8]]> {
        switch Titanic.outcome(of: frames) {
        case .success(let reply):
            if reply.count == 1, let error = WireError(jsonFrame: reply[0]) { return .failed(error) }
            return .done(reply)
        case .failure(let refusal) where refusal.status == .pending:
            return .pending
        case .failure(let refusal) where refusal.status == .unknown:
            if let error = refusal.error, endings.contains(String(refusal.statusText.dropFirst(4))) { return .ended(error) }
            if refusal.isUnknownJob { return .unknown(refusal.error) }
            throw refusal   // refused for another reason (a token): not an answer about the job
        case .failure(let refusal):
            throw refusal
        }
    }

    /// The reasons after `400` of a job that ended without a result (its state).
    static let endings: Set<String> = ["dead", "expired", "cancelled"]
}

extension Titanic.Refusal {
    /// `400` for an id the broker does not know (never submitted, closed, or its result expired).
    public var isUnknownJob: Bool { status == .unknown && (error == nil || error?.code == .unknownJob) }
}
