import Foundation
import QuireClient
import QuireFormats
import QuireOCR
import QuireSupport
import QuireWire

/// The durable-job verbs: `submit`, `result`, `status`, `cancel`, `close` (Titanic, RFC 9).
enum JobCommands {
    static let submitHelp = """
        Usage: quire submit FILE… [options]

        Stores one durable OCR job per image with the broker and prints one job id per line, in input
        order, as soon as each job is on the broker's disk. The capture side can then go away; anyone
        with the id reads the result later with 'quire result ID'. '-' reads standard input.

        Job options:
          --priority P           high, normal (default) or low
          --idempotency-key K    resubmitting with the same key returns the same job (with several
                                 files, file N uses K/N)
          --deadline-ms N        the job expires if not finished N ms after submission
          --max-attempts N       attempts before the job is dead (1…20; the broker's default is 3)
          --result-ttl-s N       keep the result this long after the job finishes (default 1 day)
          --service S            the target service (default ocr)
        OCR options (as for quire recognize):
          --format F --languages L --mode M --auto-orientation --pages 1,3 --dpi N
        Connection:
          --broker ENDPOINT      [QUIRE_BROKER] (default tcp://127.0.0.1:5555)
          --timeout-ms N         per attempt [QUIRE_TIMEOUT_MS] (30000)
        """ + "\n" + ClientAuth.help + "\n\n" + """
        The job's service needs no worker now: the job waits for one on the broker's disk. A broker that
        does not answer within 3 s (or --timeout-ms) is an error. With credentials but no token worker at
        the broker (a broker with --auth off), the job goes without a token.
        """

    static let resultHelp = """
        Usage: quire result ID [--wait] [--format F]

        Prints a durable job's result: the OCR result as JSON, or with --format text, hocr, alto or tsv
        its rendering (those other than text must have been asked for at submission), or with
        --format cloud-vision, azure-read, azure-read-v2 or image-analysis the result in that shape. Without --wait,
        a job that has not finished yet exits with status 3.

        Options:
          --wait                 wait until the job finishes (the broker holds each ask up to 20 s)
          --wait-timeout-s N     give up waiting after N seconds (exit 3; default: wait for ever)
          --format F             json (default), text, hocr, alto, tsv, cloud-vision, azure-read,
                                 azure-read-v2, image-analysis
          --broker ENDPOINT      [QUIRE_BROKER] (default tcp://127.0.0.1:5555)
          --timeout-ms N         per ask [QUIRE_TIMEOUT_MS] (30000, and never less: a held ask lasts 20 s)

        Exit status: 0 result printed; 1 the job failed, died, expired, was cancelled or is unknown
        (the reason on standard error); 2 usage error; 3 not finished yet.

        A broker that does not answer within 3 s (or --timeout-ms) is an error. A job is read with its
        submitter's token, or a reader token for it ('quire token --job ID'); with credentials but no
        token worker at the broker (auth off), without a token:
        """ + "\n" + ClientAuth.help

    static let statusHelp = """
        Usage: quire status ID | quire cancel ID | quire close ID

        status  prints the job's state as JSON: queued, running, done, failed, dead, cancelled or
                expired, with attempts, times and the last error.
        cancel  cancels a queued or running job (a running attempt's result is discarded) and prints
                its state.
        close   deletes the job and its result (done with it; unknown ids are fine too).

        Options:
          --broker ENDPOINT      [QUIRE_BROKER] (default tcp://127.0.0.1:5555)
          --timeout-ms N         per attempt [QUIRE_TIMEOUT_MS] (30000; a broker that does not answer
                                 within 3 s, or N ms when given, is an error)
        """ + "\n" + ClientAuth.help

    // MARK: - submit

    static func submit(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(submitHelp); return 0 }
        let command = "quire submit"
        let arguments = try Arguments(command: command, args, valued: ocrOptionNames.union([
            "priority", "idempotency-key", "deadline-ms", "max-attempts", "result-ttl-s", "service",
            "broker", "timeout-ms", "log-level",
        ]).union(ClientAuth.options), booleans: ["auto-orientation"])
        let files = arguments.positionals
        guard !files.isEmpty else { throw UsageError(command: command, message: "no image files given") }
        let (request, _) = try ocrRequest(arguments)
        var options = JobOptions()
        if let priority = arguments.string("priority") {
            guard ["high", "normal", "low"].contains(priority) else {
                throw UsageError(command: command, message: "unknown priority '\(priority)' (high, normal, low)")
            }
            options.priority = priority
        }
        options.deadlineMs = try arguments.integer("deadline-ms", range: 1...(86_400_000 * 365)).map(Int64.init)
        options.maxAttempts = try arguments.integer("max-attempts", range: 1...20)
        options.resultTTLSeconds = try arguments.integer("result-ttl-s", range: 1...2_592_000).map(Int64.init)
        // Always a key: the client resends a submission whose 200 came too late, and the key makes the
        // resend return the same job instead of a second one. Without --idempotency-key, a random one.
        let key = arguments.string("idempotency-key") ?? "quire-submit-" + (0..<16).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
        let service = arguments.string("service") ?? "ocr"
        let configuration = try clientConfiguration(arguments)

        // Nothing is submitted unless every file can be read.
        let (inputs, readFailures) = readInputs(files, command: command)
        guard readFailures == 0 else { return 1 }
        // The target service needs no worker now: the job waits for one on the broker's disk.
        guard let preflight = try Preflight.run(arguments, configuration: configuration, service: nil) else { return 1 }
        var frames: [[[UInt8]]] = []
        for (index, input) in inputs.enumerated() {
            var perFile = options
            perFile.idempotencyKey = inputs.count == 1 ? key : "\(key)/\(index + 1)"
            var frame = try requestFrame(request, job: perFile)
            if let token = preflight.token { frame = ClientAuth.insert(token, into: frame) }
            frames.append([Array(service.utf8), frame, input.bytes])
        }
        let bodies = frames
        let outcome = blockingAwait { () async throws -> [Result<String, TitanicFailure>] in
            try await withClient(configuration: configuration) { client in
                // One at a time keeps the printed ids in input order; the broker commits each batch
                // of submissions in one fsync anyway.
                var results: [Result<String, TitanicFailure>] = []
                for body in bodies {
                    let reply = try await titanic(client, Titanic.request, body)
                    switch reply {
                    case .success(let frames): results.append(.success(String(decoding: frames.first ?? [], as: UTF8.self)))
                    case .failure(let failure): results.append(.failure(failure))
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

    /// The OCR options frame with the job options in its `job` member.
    static func requestFrame(_ request: OCRRequest, job: JobOptions) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard var object = try JSONSerialization.jsonObject(with: encoder.encode(request)) as? [String: Any] else { return [] }
        let options = try JSONSerialization.jsonObject(with: encoder.encode(job))
        if let options = options as? [String: Any], !options.isEmpty { object["job"] = options }
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    // MARK: - result

    static func result(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(resultHelp); return 0 }
        let command = "quire result"
        let arguments = try Arguments(command: command, args, valued: ClientAuth.options.union(["format", "wait-timeout-s", "broker", "timeout-ms", "log-level"]),
                                      booleans: ["wait"])
        let id = try jobID(arguments)
        let format = arguments.string("format") ?? "json"
        guard outputFormats.contains(format) else {
            throw UsageError(command: command, message: "unknown format '\(format)' (\(outputFormats.joined(separator: ", ")))")
        }
        let wait = arguments.flag("wait")
        let waitLimit = try arguments.integer("wait-timeout-s", range: 1...31_536_000)
        var configuration = try clientConfiguration(arguments)
        // A held ask lasts up to 20 s: the client must wait longer than that for the answer.
        configuration.timeout = Milliseconds(max(configuration.timeout.value, 30_000))
        guard let preflight = try Preflight.run(arguments, configuration: configuration, service: nil) else { return 1 }
        let envelope = envelopeFrame(token: preflight.token, waitMs: wait ? 20_000 : nil)
        let settings = configuration
        let outcome = blockingAwait { () async throws -> Result<[[UInt8]], TitanicFailure>? in
            try await withClient(configuration: settings) { client in
                let start = Date()
                while true {
                    var body = [Array(id.utf8)]
                    if let envelope { body.append(envelope) }
                    switch try await titanic(client, Titanic.reply, body) {
                    case .failure(let failure) where failure.status == .pending:
                        guard wait else { return nil }
                        if let waitLimit, Date().timeIntervalSince(start) >= Double(waitLimit) { return nil }
                    case let other:
                        return other
                    }
                }
            }
        }
        switch outcome {
        case .success(nil):
            printError("\(command): job \(id) has not finished yet")
            return 3
        case .success(.success(let frames)?):
            if let first = frames.first, frames.count == 1, let error = WireError(jsonFrame: first) {
                printError("\(command): job \(id) failed: \(error)")
                return 1
            }
            guard let first = frames.first else { return 0 }
            if format == "json" {
                printOut(String(decoding: first, as: UTF8.self))
                return 0
            }
            guard let result = try? JSONDecoder().decode(OCRResult.self, from: Data(first)) else {
                printError("\(command): job \(id): the result is not an OCR result; use --format json")
                return 1
            }
            if ResultFormat(rawValue: format) == nil, format != "pdf", result.pages.contains(where: { $0.renderings?[format] == nil }) {
                // Plain text is always in the result; the other renderings only when asked for.
                if format == "text" {
                    FileHandle.standardOutput.write(Data(result.text.utf8))
                    if !result.text.hasSuffix("\n") { printOut("") }
                    return 0
                }
                printError("\(command): job \(id) has no \(format) rendering: submit it with --format \(format)")
                return 1
            }
            return RecognizeCommand.output(.success(first), name: id, format: format, many: false, attachments: Array(frames.dropFirst())) ? 0 : 1
        case .success(.failure(let failure)?):
            printError("\(command): job \(id): \(preflight.explain(failure))")
            return 1
        case .failure(let error):
            printError("\(command): \(preflight.describe(error))")
            return 1
        }
    }

    // MARK: - status, cancel, close

    static func status(_ args: [String], service: String) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(statusHelp); return 0 }
        let command = "quire " + service.dropFirst("titanic.".count)
        let arguments = try Arguments(command: command, args, valued: ClientAuth.options.union(["broker", "timeout-ms", "log-level"]))
        let id = try jobID(arguments)
        let configuration = try clientConfiguration(arguments)
        guard let preflight = try Preflight.run(arguments, configuration: configuration, service: nil) else { return 1 }
        var body = [Array(id.utf8)]
        if let envelope = envelopeFrame(token: preflight.token, waitMs: nil) { body.append(envelope) }
        let request = body
        let outcome = blockingAwait {
            try await withClient(configuration: configuration) { client in
                try await titanic(client, service, request)
            }
        }
        switch outcome {
        case .success(.success(let frames)):
            if let first = frames.first { printOut(String(decoding: first, as: UTF8.self)) }
            return 0
        case .success(.failure(let failure)):
            printError("\(command): job \(id): \(preflight.explain(failure))")
            return 1
        case .failure(let error):
            printError("\(command): \(preflight.describe(error))")
            return 1
        }
    }

    // MARK: - Helpers

    static func jobID(_ arguments: Arguments) throws(UsageError) -> String {
        guard arguments.positionals.count == 1, let id = arguments.positionals.first else {
            throw UsageError(command: arguments.command, message: "expected one job id")
        }
        guard Titanic.isJobID(id) else {
            throw UsageError(command: arguments.command, message: "'\(id)' is not a job id (32 hexadecimal characters)")
        }
        return id.lowercased()
    }

    /// The JSON frame after a job id: the token and the long-poll wait, when there are any.
    static func envelopeFrame(token: String?, waitMs: Int?) -> [UInt8]? {
        var object: [String: Any] = [:]
        if let token { object["token"] = token }
        if let waitMs { object["waitMs"] = waitMs }
        guard !object.isEmpty, let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return nil }
        return Array(data)
    }
}

/// A Titanic reply other than `200`: its status and, from Quire's broker, the typed error.
struct TitanicFailure: Error, CustomStringConvertible {
    var status: Titanic.Status?
    var statusText: String
    var error: WireError?

    var description: String {
        if let error { return error.description }
        switch status {
        case .pending: return "not finished yet"
        case .unknown: return "unknown job"
        case .error: return "the broker failed; try again later"
        default: return "unexpected reply '\(statusText)'"
        }
    }
}

extension Preflight {
    func explain(_ failure: TitanicFailure) -> TitanicFailure {
        var explained = failure
        explained.error = failure.error.map(explain)
        return explained
    }
}

/// Sends one request to a `titanic.*` service: the frames after `200`, or the failure.
func titanic(_ client: QuireClient, _ service: String, _ body: [[UInt8]]) async throws -> Result<[[UInt8]], TitanicFailure> {
    let frames = try await client.request(service: service, body: body)
    guard let first = frames.first else {
        return .failure(TitanicFailure(status: nil, statusText: "", error: nil))
    }
    let status = Titanic.status(of: first)
    if status == .ok { return .success(Array(frames.dropFirst())) }
    let error = frames.count > 1 ? WireError(jsonFrame: frames[1]) : nil
    return .failure(TitanicFailure(status: status, statusText: String(decoding: first, as: UTF8.self), error: error))
}
