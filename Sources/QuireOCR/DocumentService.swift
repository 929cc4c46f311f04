import Foundation
import QuireClient
import QuireJWT
import QuireSupport
import QuireWire
import QuireWorker

/// `ocr.document`: a document read by every OCR worker at once, durably. Frames as `ocr`'s (the JSON
/// request, the file); the reply is the whole document's result, as one `ocr` worker would give it.
///
/// The worker that takes a document splits it into pages (``DocumentPages``: one-page PDFs, a TIFF's
/// pages as PNGs) and submits each page as a durable `ocr` job (`titanic.request`) with the idempotency
/// key `doc-<digest>/<page>`, the digest taken over the request and the file. It then waits for the pages in order, says after each
/// how many are done (a PARTIAL `{"progress":{"done":N,"total":M}}`, which the broker shows in
/// `titanic.status` when the document is itself a job), puts them together in page order and closes
/// the page jobs. The broker stays a broker: it never opens a PDF.
///
/// What a failure costs: an OCR worker killed mid-page costs that page's retry (the broker hands the
/// page job on). A document worker killed mid-document has its document taken up again by another
/// (a durable document job is leased; a plain request is handed on), which submits the same keys,
/// gets the same page jobs back, finished ones included, and waits only for the rest. The same
/// document sent twice at once shares its page jobs the same way; the first to finish closes them, and
/// the other submits a page gone under it again.
///
/// With auth on at the broker, the page jobs need a token: `tokens` gives one (the worker's own client
/// credentials), or nil with auth off.
public enum DocumentService {
    public static let name = OCRServiceName.document

    /// - Parameters:
    ///   - maxPages: the most pages one document may have read (Azure Read's limit is 2,000).
    ///   - fontPath: the glyphless font of searchable PDFs (``Outputs/fontPath(dataPath:)``).
    ///   - tokens: the token to present on the page jobs, fetched through the given client; nil: none.
    ///   - logger: where a page read again is told (its job was closed under this reading by another).
    public static func make(maxPages: Int = 2_000, fontPath: String = Outputs.fontPath(dataPath: OCRConfiguration().dataPath),
                            tokens: @escaping @Sendable (QuireClient) async throws -> String? = { _ in nil }, logger: Logger? = nil) -> WorkerService {
        WorkerService(name: name, requiresJSONFrame: true) { DocumentHandler(maxPages: maxPages, fontPath: fontPath, tokens: tokens, logger: logger) }
    }

    /// What one document becomes: the pages to read, each with the frames of its `ocr` job.
    struct Plan {
        var key: String
        var numbers: [Int]
        var pageCount: Int
        var pageFrame: [UInt8]
        var files: [[UInt8]]
        /// The whole file's format, for the merged result.
        var format: String? = nil
        /// A searchable PDF of the whole document was asked for: the pages are read for their results,
        /// and the text laid over the original file once they are all in.
        var searchablePDF = false
    }

    static func plan(_ frame: [UInt8], document: [UInt8], maxPages: Int) throws(WireError) -> Plan {
        let request = try OCRRequest.parse(frame)
        let digest = Sodium.sha256(frame + [0] + document)
        let key = "doc-" + digest.prefix(16).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        var single = DocumentPages.pageRequest(request)
        let searchable = single.outputs?.contains(.pdf) == true
        single.outputs = single.outputs?.filter { $0 != .pdf }
        if single.outputs?.isEmpty == true { single.outputs = nil }
        if let split = try DocumentPages.split(document, request: request, maxPages: maxPages) {
            return Plan(key: key, numbers: split.numbers, pageCount: split.pageCount, pageFrame: single.jsonBytes(), files: split.files,
                        format: split.format, searchablePDF: searchable)
        }
        // Not a document (an image, a one-page TIFF), or one that cannot be opened: one job for the
        // whole file, with the request as it came, so that its worker reads it (or says why not) as
        // `ocr` would.
        return Plan(key: key, numbers: [], pageCount: 0, pageFrame: frame, files: [document])
    }

    final class DocumentHandler: RequestHandler {
        let maxPages: Int
        let fontPath: String
        let tokens: @Sendable (QuireClient) async throws -> String?
        let logger: Logger?
        /// To the worker's own broker, made on the first document.
        private let broker = BrokerConnection(timeout: 30_000, retries: 3, maxInFlight: 8)

        init(maxPages: Int, fontPath: String, tokens: @escaping @Sendable (QuireClient) async throws -> String?, logger: Logger?) {
            self.maxPages = maxPages
            self.fontPath = fontPath
            self.tokens = tokens
            self.logger = logger
        }

        func handle(_ request: WorkerRequest) throws -> [[UInt8]] {
            guard request.body.count == 2 else {
                throw WireError(.badRequest, "an ocr.document request has 2 frames (JSON options, document bytes); got \(request.body.count)")
            }
            let plan = try DocumentService.plan(request.body[0], document: request.body[1], maxPages: maxPages)
            let client = try broker.client(request)
            let tokens = self.tokens, logger = self.logger
            let outcome = blockingAwait { () async throws -> [[UInt8]] in
                try await DocumentService.read(plan, client: client, token: { try await tokens(client) }, progress: { done in
                    request.sendPartial([JobProgress(done: done, total: max(1, plan.files.count)).partialFrame])
                }, readAgain: { page in
                    logger?.info("a page job was closed under this document by another reading of it; the page is read again",
                                 metadata: ["document": plan.key, "page": String(page)])
                })
            }
            switch outcome {
            case .success(let frames):
                guard plan.searchablePDF, let first = frames.first, let result = OCRResult(replyFrame: first) else {
                    return frames
                }
                return try Outputs.replyFrames(result, pdf: (request.body[1], fontPath))
            case .failure(let error as WireError): throw error
            case .failure(let refusal as Titanic.Refusal):
                throw refusal.error ?? WireError(.internal, "the broker answered the document's page jobs \(refusal.statusText.isEmpty ? "nothing" : "'\(refusal.statusText)'")")
            case .failure(let error as ClientError):
                throw error.remote ?? WireError(.serviceUnavailable, "the document's pages could not be sent through the broker: \(error)")
            case .failure(let error): throw WireError(.internal, "the document failed: \(error)")
            }
        }

    }

    /// Submits the plan's pages (their jobs may exist already: same keys, same jobs), waits for them in
    /// page order, reporting each one done, and answers the merged result. Page jobs are closed once
    /// the result is put together.
    /// `token` is asked before each request (a long document may outlive one token).
    /// `readAgain` is told each page submitted again after its job was gone.
    static func read(_ plan: Plan, client: QuireClient, token: () async throws -> String?, progress: @Sendable (Int) -> Void,
                     readAgain: (Int) -> Void = { _ in }) async throws -> [[UInt8]] {
        let jobs = client.jobs
        // Submitting a page again gives the same job while it exists: same key, same job.
        func submit(_ index: Int) async throws -> String {
            let page = plan.numbers.isEmpty ? 1 : plan.numbers[index]
            let presented = try await token()
            do {
                return try await jobs.submit(service: OCRService.name, body: [plan.pageFrame, plan.files[index]],
                                             options: JobOptions(idempotencyKey: "\(plan.key)/\(page)"), token: presented)
            } catch let refusal as Titanic.Refusal where BrokerConnection.refusesWorker(refusal.error) {
                // The client's own token was fine: it is this worker that may not submit jobs.
                let error = refusal.error.map { "\($0.code.rawValue): \($0.message)" } ?? refusal.statusText
                throw WireError(.serviceUnavailable, "the ocr.document worker may not submit the document's pages as jobs (\(error)); "
                                + (presented == nil ? BrokerConnection.credentialsHint : "its client needs the ocr scope"), service: DocumentService.name)
            }
        }
        var ids: [String] = []
        for index in plan.files.indices { ids.append(try await submit(index)) }
        progress(0)
        var replies: [Result<[UInt8], WireError>] = []
        var whole: [[UInt8]]?
        for index in ids.indices {
            // The same document read twice at once (the same file and request, twice) shares its page jobs,
            // and the first to finish closes them: a page gone while this one waits is submitted again.
            var finished: Result<[[UInt8]], WireError>?
            var resubmitted = 0
            while finished == nil {
                switch try await result(of: ids[index], jobs: jobs, token: try await token()) {
                case .finished(let outcome): finished = outcome
                case .gone(let error):
                    guard resubmitted < 3 else { throw error ?? WireError(.internal, "titanic.reply for page job \(ids[index]) answered 400") }
                    resubmitted += 1
                    readAgain(plan.numbers.isEmpty ? 1 : plan.numbers[index])
                    ids[index] = try await submit(index)
                }
            }
            switch finished ?? .failure(WireError(.internal, "page job \(ids[index]) ended without an outcome")) {
            case .success(let frames):
                replies.append(.success(frames.first ?? []))
                whole = frames
            case .failure(let error):
                replies.append(.failure(error))
            }
            progress(index + 1)
        }
        let closing = (try? await token()) ?? nil
        for id in ids {
            // Best effort: a page job left behind expires with its result TTL.
            try? await jobs.close(id, token: closing)
        }
        if plan.numbers.isEmpty {
            // The whole file was one job: its reply is the answer, an error included.
            if case .failure(let error) = replies[0] { throw error }
            return whole ?? []
        }
        guard let merged = DocumentPages.merge(replies, numbers: plan.numbers, pageCount: plan.pageCount, format: plan.format) else {
            if case .failure(let error)? = replies.first { throw error }
            throw WireError(.internal, "no page of the document was read")
        }
        return try Outputs.replyFrames(merged)
    }

    /// How a page job ended: its reply frames, or the error it ended with (the service's, or the job's
    /// last when it ended without a result: the other pages still count); or gone (closed, expired),
    /// with the broker's `400` error.
    enum PageOutcome {
        case finished(Result<[[UInt8]], WireError>)
        case gone(WireError?)
    }

    /// A page job's outcome, asked with the broker holding each ask up to 20 s.
    static func result(of id: String, jobs: TitanicClient, token: String?) async throws -> PageOutcome {
        while true {
            switch try await jobs.result(of: id, token: token, wait: 20_000) {
            case .done(let frames): return .finished(.success(frames))
            case .failed(let error), .ended(let error): return .finished(.failure(error))
            case .pending: continue
            case .unknown(let error): return .gone(error)
            }
        }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
