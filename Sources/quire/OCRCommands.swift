import Foundation
import QuireBroker
import QuireClient
import QuireFormats
import QuireJWT
import QuireOCR
import QuireStack
import QuireSupport
import QuireTokens
import QuireWire
import QuireWorker
import Synchronization
import ZeroMQ

/// Debian's Tesseract is built with OpenMP and runs ~6× slower unless `OMP_THREAD_LIMIT=1` is in the
/// environment when the process starts (setting it later is too late). Commands that load Tesseract
/// call this first: it re-executes the binary with the variable set.
func ensureSingleThreadedOpenMP() {
    guard getenv("OMP_THREAD_LIMIT") == nil else { return }
    setenv("OMP_THREAD_LIMIT", "1", 1)
    let args = CommandLine.arguments
    var argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) }
    argv.append(nil)
    execv("/proc/self/exe", &argv)
    // execv only returns on failure: carry on, slower but correct.
    printError("quire: warning: could not re-execute with OMP_THREAD_LIMIT=1 (errno \(errno)); OCR will be slower")
}

/// What a process that serves OCR with `engineThreads` engine threads (`quire up`, `quire worker ocr`)
/// sets before they start: OpenMP single-threaded; on jemalloc (the `quire` binary), freed pages under
/// 8 MiB kept for reuse until the worker is idle, up to ``ProcessMemory/keptPagesPerEngine`` of them
/// per engine thread (``ProcessMemory/keepFreedPagesWhileBusy(upTo:)``); on glibc's malloc, one arena per engine thread
/// (``ProcessMemory/arenaLimit(engineThreads:environment:)``).
func prepareForEngines(engineThreads: Int, environment: [String: String]) {
    ensureSingleThreadedOpenMP()
    if ProcessMemory.runsOnJemalloc {
        ProcessMemory.keepFreedPagesWhileBusy(upTo: ProcessMemory.keptPagesPerEngine * max(1, engineThreads))
    } else if let arenas = ProcessMemory.arenaLimit(engineThreads: engineThreads, environment: environment) {
        ProcessMemory.limitArenas(arenas)
    }
}

enum UpCommand {
    /// The broker's defaults in `quire up`: this machine only, stats on.
    static let brokerDefaults: BrokerConfiguration = {
        var configuration = BrokerConfiguration()
        configuration.bind = "tcp://127.0.0.1:5555"
        configuration.statsBind = "tcp://127.0.0.1:5556"
        return configuration
    }()
    static let threads = WorkerCommand.threads.defaulting(to: nil, note: "one per core")

    static var threadsInfo: OptionInfo {
        var info = threads.info
        info.help = "OCR worker threads"
        return info
    }

    static let command = Command(
        "up", listing: ("up", "run the whole stack on this machine: broker + OCR workers"),
        usage: "quire up [options]",
        discussion: """
            Runs the whole stack on one machine in one process: the broker, OCR worker threads (one
            Tesseract engine each) and ocr.document connections that split documents into page jobs.
            Clients (quire recognize, apps) connect to the broker endpoint. Stops cleanly on SIGTERM or
            SIGINT (workers drain first). With auth on, a signing key and a local client are created in the
            data folder on first start; the CLI on this machine and the document connections use them by
            themselves.
            """,
        groups: [
            OptionGroup(options: OptionGroup(BrokerConfiguration.settings, defaults: brokerDefaults).options + [threadsInfo]),
            OptionGroup("OCR workers:", options: OptionGroup(OCRConfiguration.settings, defaults: OCRConfiguration()).options
                        + [WorkerCommand.documents.info]),
            AuthOptions.group,
            DurableJobOptions.group(defaults: brokerDefaults, dataNote: "$XDG_DATA_HOME/quire, else ~/.local/share/quire"),
        ],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        guard invocation.positionals.isEmpty else {
            throw UsageError(command: invocation.command, message: "unexpected argument '\(invocation.positionals[0])'")
        }
        let environment = invocation.environment
        var brokerConfiguration = try invocation.configured(brokerDefaults, BrokerConfiguration.settings)
        brokerConfiguration.jobs = try DurableJobOptions.configuration(invocation, defaultDirectory: defaultDataDirectory(environment))
        brokerConfiguration.auth = try AuthOptions.configuration(invocation)
        let dataDirectory = brokerConfiguration.jobs?.directory ?? defaultDataDirectory(environment)
        let threads = try invocation.value(Self.threads) ?? ProcessInfo.processInfo.activeProcessorCount
        let ocr = try invocation.configured(OCRConfiguration(), OCRConfiguration.settings)
        prepareForEngines(engineThreads: threads, environment: environment)
        let logger = try CommonOptions.logger("quire.up", invocation)

        let workerConfiguration: WorkerConfiguration
        do { workerConfiguration = try WorkerConfiguration(environment: environment) } catch {
            throw UsageError(command: invocation.command, message: error.description)
        }
        var groups = [WorkerGroup(service: OCRService.make(configuration: ocr), count: threads,
                                  configuration: workerConfiguration, threadName: "quire-ocr")]
        var credentials: Credentials?
        if let auth = brokerConfiguration.auth {
            // Auth on, with nothing to set up: a signing key and a local client on first start, in the
            // data folder (0600), which the CLI on this machine finds by itself; the token worker in here.
            credentials = try LocalAuthority.bootstrap(directory: dataDirectory)
            let tokens = try TokenWorker.services(dataDirectory: dataDirectory,
                                                  configuration: TokenAuthorityConfiguration(issuer: auth.issuer, audience: auth.audience),
                                                  logger: logger)
            groups += tokens.map { WorkerGroup(service: $0, configuration: groups[0].configuration, threadName: "quire-" + $0.name.dropFirst(ServiceClass.authPrefix.count)) }
        }
        // Documents (ocr.document): split into page jobs that every OCR thread reads, with the local
        // client's token when auth is on.
        let documents = try invocation.value(WorkerCommand.documents, or: 2)
        if documents > 0 {
            groups.append(WorkerGroup(service: DocumentService.make(fontPath: Outputs.fontPath(dataPath: ocr.dataPath),
                                                                    tokens: ClientAuth.tokenSource(credentials), logger: logger), count: documents,
                                      configuration: workerConfiguration, threadName: "quire-document"))
        }
        let stack: Stack
        do {
            stack = try Stack.start(StackConfiguration(broker: brokerConfiguration, workers: groups), logger: logger)
        } catch {
            printError("quire up: \(error)")
            return 1
        }
        if let credentials {
            logger.notice("auth on", metadata: ["credentials": LocalAuthority.credentialsPath(dataDirectory: dataDirectory), "client": credentials.clientID])
        } else {
            logger.warning("auth is off: any client that reaches the broker may use every service (--auth off)")
        }
        logger.notice("quire up: broker and OCR workers running", metadata: ["endpoint": stack.connectEndpoint, "threads": String(threads)])
        let stopping = Atomic<Int>(0)
        let signals = SignalWatcher { number in
            if stopping.add(1, ordering: .relaxed).newValue > 1 { _exit(1) }
            logger.notice("signal received; draining workers, then stopping the broker", metadata: ["signal": String(number)])
            stack.stopWorkers()
        }
        defer { withExtendedLifetime(signals) {} }
        let workersOK = stack.waitForWorkers()
        stack.stop()
        return workersOK ? 0 : 1
    }
}

/// Reads every named file (`-`: standard input), saying on standard error which could not be read.
func readInputs(_ files: [String], command: String) -> (inputs: [(name: String, bytes: [UInt8])], failures: Int) {
    var inputs: [(name: String, bytes: [UInt8])] = []
    var failures = 0
    for file in files {
        if file == "-" {
            inputs.append(("-", Array(FileHandle.standardInput.readDataToEndOfFile())))
        } else if let data = FileManager.default.contents(atPath: file) {
            inputs.append((file, Array(data)))
        } else {
            printError("\(command): \(file): cannot read the file")
            failures += 1
        }
    }
    return (inputs, failures)
}

/// The OCR options `quire recognize` and `quire submit` share, and the output format they imply.
enum OCRRequestOptions {
    static let formats = outputFormats
    static let format = Option("format", .word(formats, noun: "format", placeholder: "F"), default: "json",
                               help: "the output: json, text, hocr, alto, tsv; pdf (a searchable PDF, one file); or the result in another service's shape: cloud-vision, azure-read (3.2), azure-read-v2, image-analysis (4.0)")
    static let languages = Option("languages", .list(separator: "+", placeholder: "L"),
                                  help: "e.g. en, eng+deu, zh-Hans", defaultNote: "the worker's")
    static let mode = Option("mode", .word(["document", "text", "line"], noun: "mode", placeholder: "M"), default: "document",
                             help: "document: dense pages; text: sparse text in photos; line: one line")
    static let autoOrientation = Option("auto-orientation", .switch, default: false, help: "detect and fix page rotation (OSD)")
    static let pages = Option("pages", .pageNumbers, help: "pages of a PDF or a multi-page TIFF, e.g. 1-3,5")
    static let dpi = Option("dpi", .integer(30...2_400), help: "the scan's resolution when the file does not say; a PDF's rendering resolution for OCR")
    static let textLayer = Option("text-layer", .word(["auto", "ignore"], noun: "choice", placeholder: "T"), default: "auto",
                                  help: "a PDF page's own text: auto (used where the page draws it), ignore (OCR every page)")

    static let engine = Option("engine", .word(["auto", "tesseract", "scene"], noun: "engine", placeholder: "E"), default: "auto",
                               help: "tesseract (pages), scene (signs, screens, whiteboards, handwriting), or auto: chosen by the picture")
    static let fields = Option("fields", .list(separator: ",", placeholder: "KIND"),
                               help: "also find these documents' fields on each page: receipt (merchant, date, items, total; in each page's documents; --format text prints them after the page's text)")
    static let group = OptionGroup("OCR options:", options: [format.info, languages.info, mode.info, engine.info, autoOrientation.info, pages.info, dpi.info, textLayer.info,
                                                             fields.info])

    static func request(_ invocation: Invocation) throws(UsageError) -> (OCRRequest, String) {
        let format = try invocation.value(Self.format, or: "json")
        var request = OCRRequest()
        request.languages = try invocation.value(languages)
        if invocation.isGiven(mode), let mode = try invocation.value(mode) { request.mode = OCRRequest.Mode(rawValue: mode) }
        if try invocation.value(autoOrientation, or: false) { request.autoOrientation = true }
        request.pages = try invocation.value(pages)
        request.dpi = try invocation.value(dpi)
        if invocation.isGiven(textLayer), let choice = try invocation.value(textLayer) { request.textLayer = OCRRequest.TextLayer(rawValue: choice) }
        if invocation.isGiven(engine), let choice = try invocation.value(engine) { request.engine = OCRRequest.Engine(rawValue: choice) }
        if let kinds = try invocation.value(fields) {
            request.fields = try kinds.map { kind throws(UsageError) in
                guard let known = OCRRequest.Fields(rawValue: kind) else {
                    throw UsageError(command: "quire recognize", message: "--fields: '\(kind)' is not a kind of document (receipt)")
                }
                return known
            }
        }
        // The text documents are rendered here from the result; only the PDF is the worker's to make.
        if format == "pdf" { request.outputs = [.pdf] }
        return (request, format)
    }
}

extension SettingValue where Value == [Int] {
    /// Page numbers from 1 and ranges of them, separated by commas (`1-3,5`).
    static var pageNumbers: Self {
        Self(placeholder: "1-3,5", expectation: "page numbers and ranges like 1-3,5",
             parse: { PageRanges.parse($0) },
             format: { $0.map(String.init).joined(separator: ",") })
    }
}

enum RecognizeCommand {
    static let inFlight = Option("in-flight", .integer(1...1_024), default: 16, help: "requests in flight at once")
    static let overlay = Option("overlay", .string("OUT.png"),
                                help: "also write the image with the line and word boxes drawn on it (low-confidence words in red; one file)")

    static let command = Command(
        "recognize", listing: ("recognize FILE…", "OCR images through the broker and print the results"),
        usage: "quire recognize FILE… [options]",
        discussion: """
            Sends each image to the 'ocr' service through the broker and prints the results in input
            order. Many files are sent at once so every worker stays busy; a PDF's pages each go as a
            PDF of their own (every worker reads some) and come back as the one document's result.
            '-' reads standard input.
            A progress bar is drawn on standard error when it is a terminal. Exits 1 if any file failed,
            naming each failure on standard error. Given --timeout-ms, it also waits for an OCR worker to
            appear instead of failing after 3 s (see below).
            """,
        groups: [OCRRequestOptions.group, OptionGroup(options: ClientOptions.group().options + [inFlight.info, overlay.info]), ClientAuth.group],
        epilogue: Preflight.help,
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        let files = invocation.positionals
        guard !files.isEmpty else { throw UsageError(command: invocation.command, message: "no image files given") }
        let (request, format) = try OCRRequestOptions.request(invocation)
        let overlay = try invocation.value(Self.overlay)
        try checkOneFileOutputs(files: files, format: format, overlay: overlay)
        var configuration = try ClientOptions.configuration(invocation)
        configuration.maxInFlight = try invocation.value(inFlight, or: 16)

        // Read every input first: a missing file is reported before anything is sent.
        let (inputs, readFailures) = readInputs(files, command: "quire recognize")
        guard let preflight = try Preflight.run(invocation, configuration: &configuration, service: "ocr") else { return 1 }
        func frame(_ request: OCRRequest) throws -> [UInt8] {
            let encoded = Array(try JSONEncoder().encode(request))
            return preflight.token.map { ClientAuth.insert($0, into: encoded) } ?? encoded
        }
        let requestFrame = try frame(request)
        let pageFrame = try frame(DocumentPages.pageRequest(request))
        // A PDF of several pages goes as one request a page, so that every worker reads some of it. A
        // searchable PDF of one wants the text laid over the whole file: it goes to ocr.document, which
        // spreads the pages as jobs and says how many are done (else, on a broker without it, whole to
        // one worker). An overlay wants the file whole (and is refused for a PDF).
        var units: [(file: Int, body: [[UInt8]], weight: Int)] = []
        var splits: [Int: DocumentPages.Split] = [:]
        for (index, input) in inputs.enumerated() {
            if overlay == nil, format == "pdf", let pages = DocumentPages.selectedPages(of: input.bytes, request: request), pages > 1 {
                units.append((index, [requestFrame, input.bytes], pages))
            } else if overlay == nil, format != "pdf", let split = DocumentPages.pages(of: input.bytes, request: request) {
                splits[index] = split
                units += split.files.map { (index, [pageFrame, $0], 1) }
            } else {
                units.append((index, [requestFrame, input.bytes], 1))
            }
        }
        let settings = configuration
        let jobs = inputs
        let work = units
        let documents = splits
        let unitsPerFile = Dictionary(grouping: work, by: \.file).mapValues(\.count)
        let progress = ProgressBar(total: work.reduce(0) { $0 + $1.weight }, enabled: isatty(2) == 1)
        let outcome = blockingAwait { () async throws -> Int in
            try await withClient(configuration: settings) { client in
                var documentsServed = false
                if work.contains(where: { $0.weight > 1 }) {
                    documentsServed = (try? await client.availability(of: OCRServiceName.document, timeout: Preflight.patience)) == .available
                }
                let spreadsDocuments = documentsServed
                return try await withThrowingTaskGroup(of: (Int, Result<[[UInt8]], ClientError>).self) { group in
                    for (index, unit) in work.enumerated() {
                        group.addTask {
                            do {
                                guard unit.weight > 1, spreadsDocuments else {
                                    let reply = try await client.request(service: OCRServiceName.page, body: unit.body)
                                    progress.advance(by: unit.weight)
                                    return (index, .success(reply))
                                }
                                // The document's pages done, as ocr.document says after each one.
                                let told = Mutex(0)
                                do {
                                    let reply = try await client.request(service: OCRServiceName.document, body: unit.body) { partial in
                                        guard let done = JobProgress(partial: partial)?.done else { return }
                                        let step = told.withLock { before in defer { before = max(before, done) }; return max(0, done - before) }
                                        progress.advance(by: step)
                                    }
                                    progress.advance(by: unit.weight - told.withLock { $0 })
                                    return (index, .success(reply))
                                } catch let error as ClientError where error.remote?.code == .serviceUnavailable {
                                    // A broker without durable jobs: the whole file to one worker.
                                    let reply = try await client.request(service: OCRServiceName.page, body: unit.body)
                                    progress.advance(by: unit.weight - told.withLock { $0 })
                                    return (index, .success(reply))
                                }
                            } catch let error as ClientError {
                                return (index, .failure(preflight.explain(error)))
                            }
                        }
                    }
                    // Each file's replies (one, or one a page), put together once all are in.
                    var replies: [Int: [Int: Result<[[UInt8]], ClientError>]] = [:]
                    var results: [Int: Result<[[UInt8]], ClientError>] = [:]
                    var next = 0
                    var failures = 0
                    for try await (index, result) in group {
                        let file = work[index].file
                        replies[file, default: [:]][index] = result
                        if replies[file]?.count == unitsPerFile[file], let parts = replies.removeValue(forKey: file) {
                            let ordered = parts.keys.sorted().map { parts[$0]! }
                            if let document = documents[file] {
                                let pages = ordered.map { reply in
                                    reply.map { $0.first ?? [] }.mapError { $0.remote ?? WireError(.internal, $0.message) }
                                }
                                // Every page failed: the file's failure is its first page's, as the client saw it.
                                if let merged = DocumentPages.merge(pages, numbers: document.numbers, pageCount: document.pageCount, format: document.format),
                                   let bytes = try? merged.jsonBytes() {
                                    results[file] = .success([bytes])
                                } else {
                                    results[file] = ordered.first { if case .failure = $0 { true } else { false } } ?? ordered[0]
                                }
                            } else {
                                results[file] = ordered[0]
                            }
                        }
                        // Print in input order as soon as each next result is in.
                        while let ready = results.removeValue(forKey: next) {
                            progress.clear()
                            if !output(ready.map { $0.first ?? [] }, name: jobs[next].name, format: format, many: jobs.count > 1,
                                       attachments: (try? ready.get().dropFirst()).map(Array.init) ?? []) { failures += 1 }
                            if let overlay, case .success(let frames) = ready,
                               !writeOverlay(frames.first ?? [], image: jobs[next].bytes, to: overlay, name: jobs[next].name) { failures += 1 }
                            next += 1
                        }
                    }
                    progress.finish()
                    return failures
                }
            }
        }
        switch outcome {
        case .success(let failures):
            return failures + readFailures == 0 ? 0 : 1
        case .failure(let error):
            printError("quire recognize: \(preflight.describe(error))")
            return 1
        }
    }

    /// Prints one result; false when it is a failure.
    static func output(_ result: Result<[UInt8], ClientError>, name: String, format: String, many: Bool, attachments: [[UInt8]] = []) -> Bool {
        switch result {
        case .failure(let error):
            printError("quire recognize: \(name): \(error)")
            return false
        case .success(let frame):
            if format == "json" {
                if many {
                    printOut("{\"file\":\(jsonString(name)),\"result\":\(String(decoding: frame, as: UTF8.self))}")
                } else {
                    printOut(String(decoding: frame, as: UTF8.self))
                }
                return true
            }
            guard let result = OCRResult(replyFrame: frame) else {
                printError("quire recognize: \(name): the reply is not an OCR result")
                return false
            }
            if format == "pdf" { return writePDF(result, attachments: attachments, name: name) }
            if let shape = ResultFormat(rawValue: format) { return printShape(shape, result, name: name, many: many) }
            if many { printOut("==> \(name) <==") }
            FileHandle.standardOutput.write(Data((document(format, result, name: name) ?? "").utf8))
            return true
        }
    }

    /// A result as one of the text documents a file on standard output is, as the tesseract CLI
    /// writes them (the TSV header line, hOCR's html, ALTO's root), rendered from the result itself.
    static func document(_ format: String, _ result: OCRResult, name: String) -> String? {
        switch format {
        // Pages apart by a form feed, as the tesseract CLI writes them.
        case "text": result.pages.map { ($0.text.isEmpty || $0.text.hasSuffix("\n") ? $0.text : $0.text + "\n") + fieldsText($0) }.joined(separator: "\u{0C}")
        case "tsv": TSV.document(result)
        case "hocr": HOCR.document(result, imageName: name)
        case "alto": ALTO.document(result, imageName: name)
        default: nil
        }
    }

    /// `s` as a JSON string, its slashes as they are (a file's path, as the results write theirs).
    static func jsonString(_ s: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(s)) ?? Data("\"?\"".utf8), as: UTF8.self)
    }
}

/// A one-line progress bar on standard error, only on a terminal.
final class ProgressBar: Sendable {
    let total: Int
    let enabled: Bool
    private let done = Mutex(0)

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled && total > 1
    }

    func advance(by count: Int = 1) {
        guard enabled, count > 0 else { return }
        let n = done.withLock { $0 = min(total, $0 + count); return $0 }
        let width = 30
        let filled = total == 0 ? width : n * width / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        FileHandle.standardError.write(Data("\r\(bar) \(n)/\(total)".utf8))
    }

    /// Shows `done` of the total, as a job's progress says it.
    func show(_ reached: Int) {
        guard enabled else { return }
        advance(by: done.withLock { max(0, min(total, reached) - $0) })
    }

    func clear() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }

    func finish() { clear() }
}

/// Where `quire up` keeps its data when told nothing: the XDG data folder, as desktop tools do.
func defaultDataDirectory(_ environment: [String: String]) -> String {
    if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty { return xdg + "/quire" }
    let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
    return home + "/.local/share/quire"
}
