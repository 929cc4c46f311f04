import Foundation
import QuireClient
import QuireSupport
import QuireWire

/// A durable job as one poll found it, for the async APIs to report.
public struct JobSnapshot: Sendable, Equatable {
    public enum Phase: Sendable, Equatable { case queued, running, succeeded, failed }
    public var phase: Phase
    public var created: Date
    public var updated: Date
    /// Set when `phase` is `succeeded`.
    public var result: OCRResult?
    /// Why it failed, when it did.
    public var error: String?

    public init(phase: Phase, created: Date, updated: Date, result: OCRResult? = nil, error: String? = nil) {
        self.phase = phase
        self.created = created
        self.updated = updated
        self.result = result
        self.error = error
    }
}

/// The async routes' way to the broker: Titanic durable jobs (RFC 9) over the `ocr` service, so a
/// phone that polls later, or another app with the operation URL and a token, gets the result.
public struct JobBackend: Sendable {
    /// Submits one image; the job id (32 hex digits).
    public var submit: @Sendable (OCRCall) -> Result<String, GatewayFailure>
    /// The job's state; nil when the broker knows no such job.
    public var poll: @Sendable (_ id: String, _ credential: Credential) -> Result<JobSnapshot?, GatewayFailure>

    public init(submit: @escaping @Sendable (OCRCall) -> Result<String, GatewayFailure>,
                poll: @escaping @Sendable (_ id: String, _ credential: Credential) -> Result<JobSnapshot?, GatewayFailure>) {
        self.submit = submit
        self.poll = poll
    }

    /// No job store: every async call answers 503.
    public static let none = JobBackend(submit: { _ in .failure(GatewayFailure(.unavailable, "durable jobs are not available")) },
                                        poll: { _, _ in .failure(GatewayFailure(.unavailable, "durable jobs are not available")) })

    /// Jobs through `client`'s broker (`titanic.request`, `titanic.status`, `titanic.reply`); API keys
    /// are exchanged for tokens by `keys` first.
    public static func titanic(_ client: QuireClient, keys: APIKeyTokens? = nil) -> JobBackend {
        JobBackend(submit: { call in
            var call = call
            if let keys {
                switch keys.token(for: call.credential) {
                case .success(let token): (call.token, call.apiKey) = (token, nil)
                case .failure(let failure): return .failure(failure)
                }
            }
            let submitted = call
            return blockingAwait {
                let call = submitted
                do {
                    // The client resends after a timeout (Lazy Pirate); the key makes a resend the same job.
                    let job = JobOptions(idempotencyKey: "quire-gateway-" + UUID().uuidString.lowercased())
                    // A PDF's pages are read by every OCR worker at once (ocr.document), the status
                    // "running" until the last is done.
                    let service = OCRServiceName.forJob(call.image)
                    let frames = try await client.request(service: Titanic.request, body: [Array(service.utf8), call.requestFrame(job: job), call.image])
                    switch reply(frames) {
                    case .success(let rest):
                        guard let id = rest.first.map({ String(decoding: $0, as: UTF8.self) }), Titanic.isJobID(id) else {
                            return .failure(GatewayFailure(.internal, "titanic.request answered without a job id"))
                        }
                        return .success(id)
                    case .failure(let refusal): return .failure(refusal.failure)
                    }
                } catch {
                    return .failure(failure(error))
                }
            }.mapError(failure).flatMap { $0 }
        }, poll: { id, credential in
            let token: String?
            switch keys?.token(for: credential) ?? .success(credential.token) {
            case .success(let resolved): token = resolved
            case .failure(let failure): return .failure(failure)
            }
            guard Titanic.isJobID(id) else { return .success(nil) }
            var body = [Array(id.lowercased().utf8)]
            if let token, let envelope = try? JSONSerialization.data(withJSONObject: ["token": token]) { body.append(Array(envelope)) }
            let request = body
            return blockingAwait {
                do {
                    let status: JobStatus
                    switch reply(try await client.request(service: Titanic.status, body: request)) {
                    case .success(let rest):
                        guard let frame = rest.first, let decoded = JobStatus(jsonFrame: frame) else {
                            return .failure(GatewayFailure(.internal, "titanic.status answered without a status"))
                        }
                        status = decoded
                    case .failure(let refusal):
                        if refusal.isUnknownJob { return .success(nil) }
                        return .failure(refusal.failure)
                    }
                    let created = date(status.createdAt)
                    let updated = date(status.updatedAt)
                    switch status.state {
                    case "queued":
                        return .success(JobSnapshot(phase: .queued, created: created, updated: updated))
                    case "running":
                        return .success(JobSnapshot(phase: .running, created: created, updated: updated))
                    case "done":
                        switch reply(try await client.request(service: Titanic.reply, body: request)) {
                        case .success(let rest):
                            let frame = rest.first ?? []
                            if let error = WireError(jsonFrame: frame) {
                                return .success(JobSnapshot(phase: .failed, created: created, updated: updated, error: error.message))
                            }
                            guard let result = try? JSONDecoder().decode(OCRResult.self, from: Data(frame)) else {
                                return .failure(GatewayFailure(.internal, "the job's result is not an OCR result"))
                            }
                            return .success(JobSnapshot(phase: .succeeded, created: created, updated: updated, result: result))
                        case .failure(let refusal):
                            if refusal.code == .pending { return .success(JobSnapshot(phase: .running, created: created, updated: updated)) }
                            if refusal.isUnknownJob { return .success(nil) }
                            return .failure(refusal.failure)
                        }
                    default:
                        return .success(JobSnapshot(phase: .failed, created: created, updated: updated,
                                                 error: status.error?.message ?? "the job is \(status.state)"))
                    }
                } catch {
                    return .failure(failure(error))
                }
            }.mapError(failure).flatMap { $0 }
        })
    }

    /// The frames after `200`, or the status and the failure it stands for.
    static func reply(_ frames: [[UInt8]]) -> Result<[[UInt8]], TitanicRefusal> {
        Titanic.outcome(of: frames).mapError { refusal in
            let failure = refusal.error.map(GatewayFailure.init) ?? GatewayFailure(
                refusal.status == .error ? .unavailable : .internal,
                "the broker answered \(frames.isEmpty ? "nothing" : refusal.statusText)")
            return TitanicRefusal(code: refusal.status, wire: refusal.error, failure: failure)
        }
    }

    static func failure(_ error: any Error) -> GatewayFailure {
        if let error = error as? ClientError { return GatewayFailure(error) }
        return GatewayFailure(.internal, String(describing: error))
    }

    static func date(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text) ?? Date()
    }
}

/// A Titanic status other than 200 with the failure it stands for.
struct TitanicRefusal: Error {
    var code: Titanic.Status?
    var wire: WireError?
    var failure: GatewayFailure

    /// `400` for an id the broker does not know (never submitted, closed, or its result expired).
    var isUnknownJob: Bool { wire?.code == .unknownJob || (code == .unknown && wire == nil) }
}
