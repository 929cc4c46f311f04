import Foundation
import QuireClient
import QuireFormats
import QuireOCR
import QuireSupport
import QuireWire

/// The durable-job verbs: `submit`, `result`, `status`, `cancel`, `close` (Titanic, RFC 9).
enum JobCommands {
    static let priority = Option("priority", .word(["high", "normal", "low"], noun: "priority", placeholder: "P"), default: "normal",
                                 help: "the job's place in the queue")
    static let idempotencyKey = Option("idempotency-key", .string("K"),
                                       help: "resubmitting with the same key returns the same job (with several files, file N uses K/N)")
    static let deadline = Option("deadline-ms", .integer64(1...(86_400_000 * 365)), help: "the job expires if not finished N ms after submission")
    static let maxAttempts = Option("max-attempts", .integer(1...20), help: "attempts before the job is dead", defaultNote: "the broker's, 3")
    static let resultTTL = Option("result-ttl-s", .integer64(1...2_592_000), help: "keep the result this long after the job finishes",
                                  defaultNote: "the broker's, 1 day")
    static let service = Option("service", .string("S"), default: "ocr", help: "the target service")
    static let format = Option("format", .word(OCRRequestOptions.formats, noun: "format", placeholder: "F"), default: "json",
                               help: "the output")
    static let wait = Option("wait", .switch, default: false, help: "wait until the job finishes (the broker holds each ask up to 20 s)")
    static let waitTimeout = Option("wait-timeout-s", .integer(1...31_536_000), help: "give up waiting after N seconds (exit 3)",
                                    defaultNote: "wait for ever")

    static let submit = Command(
        "submit", listing: ("submit FILE…", "store durable OCR jobs with the broker; prints one job id per file"),
        usage: "quire submit FILE… [options]",
        discussion: """
            Stores one durable OCR job per image with the broker and prints one job id per line, in input
            order, as soon as each job is on the broker's disk. A PDF or TIFF is an ocr.document job
            (unless --service is given): its pages become 'ocr' jobs of their own, read by every OCR worker
            at once, and 'quire status ID' shows how many pages are done. The capture side can then go
            away; anyone with the id reads the result later with 'quire result ID'. '-' reads standard
            input.
            """,
        groups: [
            OptionGroup("Job options:", options: [priority.info, idempotencyKey.info, deadline.info, maxAttempts.info, resultTTL.info, service.info]),
            OCRRequestOptions.group, ClientOptions.group(), ClientAuth.group,
        ],
        epilogue: """
            The job's service needs no worker now: the job waits for one on the broker's disk. A broker that
            does not answer within 3 s (or --timeout-ms) is an error. With credentials but no token worker at
            the broker (a broker with --auth off), the job goes without a token.
            """,
        run: submit)

    static let result = Command(
        "result", listing: ("result ID", "print a durable job's result (--wait to wait for it)"),
        usage: "quire result ID [--wait] [--format F]",
        discussion: """
            Prints a durable job's result: the OCR result as JSON, or with --format text, hocr, alto or tsv
            its rendering (those other than text must have been asked for at submission), with --format
            pdf the searchable PDF (asked for at submission), or with --format cloud-vision, azure-read,
            azure-read-v2 or image-analysis the result in that service's shape. Without --wait, a job that
            has not finished yet exits with status 3. Each ask waits at least 30 s
            (--timeout-ms is raised to that): a held ask lasts 20 s. On a terminal, --wait draws a bar of
            a document's pages done.

            Exit status: 0 result printed; 1 the job failed, died, expired, was cancelled or is unknown
            (the reason on standard error); 2 usage error; 3 not finished yet.

            A broker that does not answer within 3 s (or --timeout-ms) is an error. A job is read with its
            submitter's token, or a reader token for it ('quire token --job ID'); with credentials but no
            token worker at the broker (auth off), without a token.
            """,
        groups: [OptionGroup(options: [wait.info, waitTimeout.info, format.info]), ClientOptions.group(), ClientAuth.group],
        run: result)

    static let statusDiscussion = """
        status  prints the job's state as JSON: queued, running, done, failed, dead, cancelled or
                expired, with attempts, times and the last error.
        cancel  cancels a queued or running job (a running attempt's result is discarded) and prints
                its state.
        close   deletes the job and its result (done with it; unknown ids are fine too).

        A broker that does not answer within 3 s, or --timeout-ms N when given, is an error.
        """

    /// A verb about one job, named after its `titanic.*` service: `ask` answers the job's state to
    /// print, or nil.
    static func statusCommand(_ service: String, listing: (String, String)?,
                              ask: @escaping @Sendable (TitanicClient, _ id: String, _ token: String?) async throws -> JobStatus?) -> Command {
        Command(String(service.dropFirst(ServiceClass.jobsPrefix.count)), listing: listing, usage: "quire status ID | quire cancel ID | quire close ID",
                discussion: statusDiscussion, groups: [ClientOptions.group(), ClientAuth.group]) { invocation in
            try status(invocation, ask: ask)
        }
    }

    static let status = statusCommand(Titanic.status, listing: ("status ID", "a durable job's state; cancel ID, close ID")) { jobs, id, token in
        try await jobs.status(of: id, token: token)
    }
    static let cancel = statusCommand(Titanic.cancel, listing: nil) { jobs, id, token in try await jobs.cancel(id, token: token) }
    static let close = statusCommand(Titanic.close, listing: nil) { jobs, id, token in
        try await jobs.close(id, token: token)
        return nil
    }

    // MARK: - submit

    static func submit(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        let files = invocation.positionals
        guard !files.isEmpty else { throw UsageError(command: command, message: "no image files given") }
        let (request, _) = try OCRRequestOptions.request(invocation)
        var options = JobOptions()
        if invocation.isGiven(priority) { options.priority = try invocation.value(priority) }
        options.deadlineMs = try invocation.value(deadline)
        options.maxAttempts = try invocation.value(maxAttempts)
        options.resultTTLSeconds = try invocation.value(resultTTL)
        // Always a key: the client resends a submission whose 200 came too late, and the key makes the
        // resend return the same job instead of a second one. Without --idempotency-key, a random one.
        let key = try invocation.value(idempotencyKey) ?? "quire-submit-" + (0..<16).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
        let service = try invocation.value(Self.service, or: "ocr")
        var configuration = try ClientOptions.configuration(invocation)

        // Nothing is submitted unless every file can be read.
        let (inputs, readFailures) = readInputs(files, command: command)
        guard readFailures == 0 else { return 1 }
        // The target service needs no worker now: the job waits for one on the broker's disk.
        guard let preflight = try Preflight.run(invocation, configuration: &configuration, service: nil) else { return 1 }
        var submissions: [(service: String, body: [[UInt8]], options: JobOptions)] = []
        for (index, input) in inputs.enumerated() {
            var perFile = options
            perFile.idempotencyKey = inputs.count == 1 ? key : "\(key)/\(index + 1)"
            // A PDF or TIFF goes to ocr.document unless told otherwise: its pages become jobs of their own, read
            // by every OCR worker at once, and the document's status shows how many are done.
            let target = invocation.isGiven(flag: "service") ? service : OCRServiceName.forJob(input.bytes)
            submissions.append((target, [request.jsonBytes(), input.bytes], perFile))
        }
        let jobs = submissions
        let token = preflight.token
        let outcome = blockingAwait { [configuration] () async throws -> [Result<String, TitanicFailure>] in
            try await withClient(configuration: configuration) { client in
                // One at a time keeps the printed ids in input order; the broker commits each batch
                // of submissions in one fsync anyway.
                var results: [Result<String, TitanicFailure>] = []
                for job in jobs {
                    do {
                        results.append(.success(try await client.jobs.submit(service: job.service, body: job.body, options: job.options, token: token)))
                    } catch let refusal as TitanicFailure {
                        results.append(.failure(refusal))
                    }
                }
                return results
            }
        }
        switch outcome {
        case .success(let results):
            var failures = 0
            for (index, result) in results.enumerated() {
                switch result {
                case .success(let id): printOut(id)
                case .failure(let failure):
                    printError("\(command): \(inputs[index].name): \(preflight.explain(failure))")
                    failures += 1
                }
            }
            return failures == 0 ? 0 : 1
        case .failure(let error):
            printError("\(command): \(preflight.describe(error))")
            return 1
        }
    }

    // MARK: - result

    static func result(_ invocation: Invocation) throws -> Int32 {
        let command = invocation.command
        let id = try jobID(invocation)
        let format = try invocation.value(Self.format, or: "json")
        let wait = try invocation.value(Self.wait, or: false)
        let waitLimit = try invocation.value(waitTimeout)
        var configuration = try ClientOptions.configuration(invocation)
        // A held ask lasts up to 20 s: the client must wait longer than that for the answer.
        configuration.timeout = Milliseconds(max(configuration.timeout.value, 30_000))
        guard let preflight = try Preflight.run(invocation, configuration: &configuration, service: nil) else { return 1 }
        // On a terminal, a job that reports progress (a document's pages) draws a bar: the broker is
        // asked every 2 s instead of holding the ask 20 s, and the job's status between asks.
        let showsProgress = wait && isatty(2) == 1
        let held: Milliseconds? = wait ? (showsProgress ? 2_000 : 20_000) : nil
        let token = preflight.token
        let settings = configuration
        let outcome = blockingAwait { () async throws -> JobReply<[[UInt8]]> in
            try await withClient(configuration: settings) { client in
                let start = Date()
                var bar: ProgressBar?
                defer { bar?.finish() }
                while true {
                    let reply = try await client.jobs.result(of: id, token: token, wait: held)
                    guard case .pending = reply, wait else { return reply }
                    if let waitLimit, Date().timeIntervalSince(start) >= Double(waitLimit) { return reply }
                    if showsProgress, let progress = try await progress(of: id, jobs: client.jobs, token: token) {
                        bar = bar ?? ProgressBar(total: progress.total, enabled: true)
                        bar?.show(progress.done)
                    }
                }
            }
        }
        switch outcome {
        case .success(.pending):
            printError("\(command): job \(id) has not finished yet")
            return 3
        case .success(.done(let frames)):
            guard let first = frames.first else { return 0 }
            if format == "json" {
                printOut(String(decoding: first, as: UTF8.self))
                return 0
            }
            // The text documents (text, hOCR, ALTO, TSV) are rendered from the result itself; the PDF
            // only exists when the job asked the worker for it.
            if format == "pdf", frames.count < 2 {
                printError("\(command): job \(id) has no PDF: submit it with --format pdf")
                return 1
            }
            return RecognizeCommand.output(.success(first), name: id, format: format, many: false, attachments: Array(frames.dropFirst())) ? 0 : 1
        case .success(.failed(let error)):
            printError("\(command): job \(id) failed: \(error)")
            return 1
        case .success(.unknown(let error)):
            printError("\(command): job \(id): \(error.map { preflight.explain($0).description } ?? "unknown job")")
            return 1
        case .success(.ended(let error)):
            printError("\(command): job \(id): \(preflight.explain(error))")
            return 1
        case .failure(let failure as TitanicFailure):
            printError("\(command): job \(id): \(preflight.explain(failure))")
            return 1
        case .failure(let error):
            printError("\(command): \(preflight.describe(error))")
            return 1
        }
    }

    /// How far the job has got, as its worker last said; nil when it does not say or the broker will not.
    static func progress(of id: String, jobs: TitanicClient, token: String?) async throws -> JobProgress? {
        do {
            return try await jobs.status(of: id, token: token).progress
        } catch is TitanicFailure {
            return nil
        }
    }

    // MARK: - status, cancel, close

    static func status(_ invocation: Invocation, ask: @escaping @Sendable (TitanicClient, String, String?) async throws -> JobStatus?) throws -> Int32 {
        let command = invocation.command
        let id = try jobID(invocation)
        var configuration = try ClientOptions.configuration(invocation)
        guard let preflight = try Preflight.run(invocation, configuration: &configuration, service: nil) else { return 1 }
        let token = preflight.token
        let outcome = blockingAwait { [configuration] in
            try await withClient(configuration: configuration) { client in
                try await ask(client.jobs, id, token)
            }
        }
        switch outcome {
        case .success(let status):
            if let status { printOut(String(decoding: status.jsonFrame, as: UTF8.self)) }
            return 0
        case .failure(let failure as TitanicFailure):
            printError("\(command): job \(id): \(preflight.explain(failure))")
            return 1
        case .failure(let error):
            printError("\(command): \(preflight.describe(error))")
            return 1
        }
    }

    // MARK: - Helpers

    static func jobID(_ invocation: Invocation) throws(UsageError) -> String {
        guard invocation.positionals.count == 1, let id = invocation.positionals.first else {
            throw UsageError(command: invocation.command, message: "expected one job id")
        }
        guard Titanic.isJobID(id) else {
            throw UsageError(command: invocation.command, message: "'\(id)' is not a job id (32 hexadecimal characters)")
        }
        return id.lowercased()
    }
}

/// A Titanic reply other than `200`: its status and, from Quire's broker, the typed error.
typealias TitanicFailure = Titanic.Refusal

extension Preflight {
    func explain(_ failure: TitanicFailure) -> TitanicFailure {
        var explained = failure
        explained.error = failure.error.map(explain)
        return explained
    }
}

