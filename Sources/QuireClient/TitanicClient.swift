import QuireSupport
import QuireWire

/// Durable jobs through the broker (the Titanic Service Protocol, ZeroMQ RFC 9, and Quire's
/// extensions): typed calls instead of frames. Each call is one request of the client's, with its
/// timeout and Lazy Pirate resends; a resent submission is the same job when it has an idempotency key.
///
/// Every call throws ``ClientError`` when the broker cannot be reached or breaks the protocol, and a
/// `Titanic.Refusal` (its status and typed error) when the broker refuses the request: `500 busy`,
/// `400 unauthenticated`, an unknown job's `400` for ``status(of:token:)`` and ``cancel(_:token:)``.
public struct TitanicClient: Sendable {
    public let client: QuireClient

    public init(client: QuireClient) {
        self.client = client
    }

    /// Stores a job for `service` with `body` (its frames as the service takes them) and returns the
    /// job id once the broker has it on disk. `options` and `token` go into the body's first frame,
    /// which must then be a JSON object (`invalid_json` is thrown otherwise).
    public func submit(service: String, body: [[UInt8]], options: JobOptions = JobOptions(), token: String? = nil) async throws -> String {
        let request = try TitanicFrames.submission(service: service, body: body, options: options, token: token)
        return try TitanicFrames.jobID(try await client.request(service: Titanic.request, body: request))
    }

    /// The job's state (`titanic.status`), with its progress while it runs.
    public func status(of id: String, token: String? = nil) async throws -> JobStatus {
        try TitanicFrames.jobStatus(try await ask(Titanic.status, id, token: token), service: Titanic.status)
    }

    /// Cancels a queued or running job (`titanic.cancel`); its state afterwards.
    public func cancel(_ id: String, token: String? = nil) async throws -> JobStatus {
        try TitanicFrames.jobStatus(try await ask(Titanic.cancel, id, token: token), service: Titanic.cancel)
    }

    /// Deletes the job and its result (`titanic.close`); an unknown id is fine too.
    public func close(_ id: String, token: String? = nil) async throws {
        _ = try TitanicFrames.accepted(try await ask(Titanic.close, id, token: token))
    }

    /// The job's result as its service answered it (`titanic.reply`). With `wait`, the broker holds the
    /// ask until the job finishes or that long passes (then ``JobReply/pending``): the client's timeout
    /// must be longer.
    public func result(of id: String, token: String? = nil, wait: Milliseconds? = nil) async throws -> JobReply<[[UInt8]]> {
        try TitanicFrames.reply(try await ask(Titanic.reply, id, token: token, wait: wait))
    }

    /// The result of an `ocr` job, decoded (its attachments, such as a searchable PDF, are left out: ask
    /// ``result(of:token:wait:)`` for those). Throws `protocol_error` when the result is no OCR result.
    public func ocrResult(of id: String, token: String? = nil, wait: Milliseconds? = nil) async throws -> JobReply<OCRResult> {
        try await result(of: id, token: token, wait: wait).map { (frames: [[UInt8]]) throws(ClientError) -> OCRResult in
            guard let result = frames.first.flatMap(OCRResult.init(replyFrame:)) else {
                throw ClientError(.protocolError, "the result of job \(id) is not an OCR result")
            }
            return result
        }
    }

    private func ask(_ service: String, _ id: String, token: String?, wait: Milliseconds? = nil) async throws -> [[UInt8]] {
        try await client.request(service: service, body: TitanicFrames.about(id, token: token, wait: wait))
    }
}

extension QuireClient {
    /// Durable jobs through this client's broker.
    public var jobs: TitanicClient { TitanicClient(client: self) }
}
