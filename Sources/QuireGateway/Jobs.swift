import Foundation
import QuireClient
import QuireFormats
import QuireSupport
import QuireWire

/// A durable job's state as the async APIs report it.
public struct JobSnapshot: Sendable, Equatable {
    public enum Phase: Sendable, Equatable {
        case queued, running, succeeded, failed

        /// The phase as Azure's long-running operations say it (Read 3.2, Document Intelligence).
        var azureStatus: AzureRead.Status {
            switch self {
            case .queued: .notStarted
            case .running: .running
            case .succeeded: .succeeded
            case .failed: .failed
            }
        }
    }
    public var phase: Phase
    public var created: Date
    public var updated: Date
    /// Set when `phase` is `succeeded`.
    public var result: OCRResult?
    /// Why it failed, when it did.
    public var error: String?
    /// What kind of failure it was, where the worker or the broker said (a file no worker could read is
    /// the client's fault; a job that died with its workers is not): for APIs whose failed operations
    /// carry an error code (Document Intelligence's).
    public var failure: GatewayFailure?

    public init(phase: Phase, created: Date, updated: Date, result: OCRResult? = nil, error: String? = nil, failure: GatewayFailure? = nil) {
        self.phase = phase
        self.created = created
        self.updated = updated
        self.result = result
        self.error = error
        self.failure = failure
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
        let jobs = client.jobs
        return JobBackend(submit: { call in
            var call = call
            if let keys {
                switch keys.token(for: call.credential) {
                case .success(let token): (call.token, call.apiKey) = (token, nil)
                case .failure(let failure): return .failure(failure)
                }
            }
            let submitted = call
            return blockingAwait {
                do {
                    // The client resends after a timeout (Lazy Pirate); the key makes a resend the same job.
                    let job = JobOptions(idempotencyKey: "quire-gateway-" + UUID().uuidString.lowercased())
                    // A PDF's pages are read by every OCR worker at once (ocr.document), the status
                    // "running" until the last is done.
                    return .success(try await jobs.submit(service: OCRServiceName.forJob(submitted.image), body: [submitted.requestFrame, submitted.image],
                                                          options: job))
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
            let id = id.lowercased()
            return blockingAwait {
                do {
                    let status = try await jobs.status(of: id, token: token)
                    let created = date(status.createdAt)
                    let updated = date(status.updatedAt)
                    switch status.state {
                    case "queued":
                        return .success(JobSnapshot(phase: .queued, created: created, updated: updated))
                    case "running":
                        return .success(JobSnapshot(phase: .running, created: created, updated: updated))
                    case "done":
                        switch try await jobs.ocrResult(of: id, token: token) {
                        case .done(let result):
                            return .success(JobSnapshot(phase: .succeeded, created: created, updated: updated, result: result))
                        case .failed(let error):
                            return .success(JobSnapshot(phase: .failed, created: created, updated: updated, error: error.message,
                                                        failure: GatewayFailure(error)))
                        case .pending:
                            return .success(JobSnapshot(phase: .running, created: created, updated: updated))
                        case .unknown:
                            return .success(nil)
                        case .ended(let error):
                            return .failure(GatewayFailure(error))
                        }
                    default:
                        return .success(JobSnapshot(phase: .failed, created: created, updated: updated,
                                                 error: status.error?.message ?? "the job is \(status.state)",
                                                 failure: status.error.flatMap { WireError.Code(rawValue: $0.code) }.map {
                                                     GatewayFailure(WireError($0, status.error?.message ?? ""))
                                                 }))
                    }
                } catch let refusal as Titanic.Refusal where refusal.isUnknownJob {
                    return .success(nil)
                } catch {
                    return .failure(failure(error))
                }
            }.mapError(failure).flatMap { $0 }
        })
    }

    /// The failure a client error or the broker's refusal stands for.
    static func failure(_ error: any Error) -> GatewayFailure {
        switch error {
        case let error as ClientError:
            return GatewayFailure(error)
        case let refusal as Titanic.Refusal:
            return refusal.error.map(GatewayFailure.init) ?? GatewayFailure(
                refusal.status == .error ? .unavailable : .internal,
                "the broker answered \(refusal.statusText.isEmpty ? "nothing" : refusal.statusText)")
        case let error as WireError:
            return GatewayFailure(error)
        default:
            return GatewayFailure(.internal, String(describing: error))
        }
    }

    static func date(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text) ?? Date()
    }
}
