import Foundation
import QuireBroker
import QuireClient
import QuireFormats
import QuireOCR
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

func ocrConfiguration(_ arguments: Arguments) throws -> OCRConfiguration {
    var configuration: OCRConfiguration
    do {
        configuration = try OCRConfiguration(environment: ProcessInfo.processInfo.environment)
    } catch {
        throw UsageError(command: arguments.command, message: error.description)
    }
    if let v = arguments.string("tessdata") { configuration.dataPath = v }
    if let v = arguments.string("languages") { configuration.defaultLanguages = v.split(separator: "+").map(String.init) }
    return configuration
}

enum UpCommand {
    static let help = """
        Usage: quire up [options]

        Runs the whole stack on one machine in one process: the broker and OCR worker threads (one
        Tesseract engine each). Clients (quire recognize, apps) connect to the broker endpoint.
        Stops cleanly on SIGTERM or SIGINT (workers drain first).

        Options:
          --bind ENDPOINT        the broker endpoint [QUIRE_BIND] (default tcp://127.0.0.1:5555: this machine only)
          --threads N            OCR worker threads [QUIRE_THREADS] (default: one per core)
          --tessdata DIR         language packs [QUIRE_TESSDATA] (default /usr/share/tesseract-ocr/5/tessdata)
          --languages L          default languages, e.g. eng+deu [QUIRE_LANGUAGES] (default eng)
          --data DIR             the data folder: durable jobs, signing keys, the local client [QUIRE_DATA]
                                 (default $XDG_DATA_HOME/quire, else ~/.local/share/quire)
          --stats ENDPOINT       the stats PUB socket [QUIRE_STATS_BIND] (default tcp://127.0.0.1:5556; 'off': none)
          --log-level LEVEL      [QUIRE_LOG_LEVEL] (info)
          --auth on|off          [QUIRE_AUTH] (on: a signing key and a local client are created in the data
                                 folder on first start; the CLI on this machine uses them by itself)
        The durable-job and auth options of 'quire broker' apply too (--max-jobs, --rate-limit, …).
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let arguments = try Arguments(command: "quire up", args,
                                      valued: Set(["bind", "threads", "tessdata", "languages", "log-level", "stats"]).union(jobOptionNames)
                                          .union(authOptionNames))
        guard arguments.positionals.isEmpty else {
            throw UsageError(command: "quire up", message: "unexpected argument '\(arguments.positionals[0])'")
        }
        let environment = ProcessInfo.processInfo.environment
        var brokerConfiguration: BrokerConfiguration
        do { brokerConfiguration = try BrokerConfiguration(environment: environment) } catch {
            throw UsageError(command: "quire up", message: error.description)
        }
        brokerConfiguration.bind = arguments.string("bind") ?? environment["QUIRE_BIND"] ?? "tcp://127.0.0.1:5555"
        brokerConfiguration.jobs = try jobConfiguration(arguments, base: brokerConfiguration.jobs, defaultDirectory: defaultDataDirectory(environment))
        brokerConfiguration.auth = try authConfiguration(arguments)
        let dataDirectory = brokerConfiguration.jobs?.directory ?? defaultDataDirectory(environment)
        let stats = arguments.string("stats") ?? brokerConfiguration.statsBind ?? "tcp://127.0.0.1:5556"
        brokerConfiguration.statsBind = stats == "off" ? nil : stats
        let threads = try arguments.integer("threads", range: 1...256)
            ?? Int(environment["QUIRE_THREADS"] ?? "") ?? ProcessInfo.processInfo.activeProcessorCount
        let ocr = try ocrConfiguration(arguments)
        ensureSingleThreadedOpenMP()
        let logger = try makeLogger("quire.up", arguments)

        let context = try Context()
        let broker = try Broker(configuration: brokerConfiguration, context: context, logger: logger)
        let bound = Mutex<String?>(nil)
        let brokerDone = DispatchSemaphore(value: 0)
        let brokerFailure = Mutex<String?>(nil)
        let boundSignal = DispatchSemaphore(value: 0)
        let brokerThread = Thread {
            do {
                try broker.run { endpoint in bound.withLock { $0 = endpoint }; boundSignal.signal() }
            } catch {
                brokerFailure.withLock { $0 = String(describing: error) }
                boundSignal.signal()
            }
            brokerDone.signal()
        }
        brokerThread.name = "quire-broker"
        brokerThread.start()
        boundSignal.wait()
        if let failure = brokerFailure.withLock({ $0 }) {
            printError("quire up: \(failure)")
            return 1
        }
        let endpoint = bound.withLock { $0 }!.replacingOccurrences(of: "0.0.0.0", with: "127.0.0.1")
        var workerConfiguration = try WorkerConfiguration(environment: environment)
        workerConfiguration.broker = endpoint
        workerConfiguration.heartbeatInterval = brokerConfiguration.heartbeatInterval
        workerConfiguration.heartbeatLiveness = brokerConfiguration.heartbeatLiveness
        let service = OCRService.make(configuration: ocr)
        var workers: [Worker] = []
        for _ in 0..<threads {
            workers.append(try Worker(configuration: workerConfiguration, service: service, context: context, logger: logger))
        }
        if let auth = brokerConfiguration.auth {
            // Auth on, with nothing to set up: a signing key and a local client on first start, in the
            // data folder (0600), which the CLI on this machine finds by itself; the token worker in here.
            let credentials = try LocalAuthority.bootstrap(directory: dataDirectory)
            let tokens = try TokenWorker.services(dataDirectory: dataDirectory,
                                                  configuration: TokenAuthorityConfiguration(issuer: auth.issuer, audience: auth.audience),
                                                  logger: logger)
            for tokenService in tokens {
                workers.append(try Worker(configuration: workerConfiguration, service: tokenService, context: context, logger: logger))
            }
            logger.notice("auth on", metadata: ["credentials": LocalAuthority.credentialsPath(dataDirectory: dataDirectory), "client": credentials.clientID])
        } else {
            logger.warning("auth is off: any client that reaches the broker may use every service (--auth off)")
        }
        logger.notice("quire up: broker and OCR workers running", metadata: ["endpoint": endpoint, "threads": String(threads)])
        let stopping = Atomic<Int>(0)
        let all = workers
        let signals = SignalWatcher { number in
            if stopping.add(1, ordering: .relaxed).newValue > 1 { _exit(1) }
            logger.notice("signal received; draining workers, then stopping the broker", metadata: ["signal": String(number)])
            for worker in all { worker.stop() }
        }
        defer { withExtendedLifetime(signals) {} }
        let status = WorkerCommand.runWorkers(workers, logger: logger)
        broker.stop()
        brokerDone.wait()
        context.terminate()
        return status
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
let ocrOptionNames: Set<String> = ["format", "languages", "mode", "pages", "dpi"]

func ocrRequest(_ arguments: Arguments) throws(UsageError) -> (OCRRequest, String) {
    let format = arguments.string("format") ?? "json"
    guard outputFormats.contains(format) else {
        throw UsageError(command: arguments.command, message: "unknown format '\(format)' (\(outputFormats.joined(separator: ", ")))")
    }
    var request = OCRRequest()
    request.languages = arguments.string("languages").map { $0.split(separator: "+").map(String.init) }
    if let mode = arguments.string("mode") {
        guard let m = OCRRequest.Mode(rawValue: mode) else {
            throw UsageError(command: arguments.command, message: "unknown mode '\(mode)' (document, text, line)")
        }
        request.mode = m
    }
    if arguments.flag("auto-orientation") { request.autoOrientation = true }
    if let pages = arguments.string("pages") {
        let numbers = pages.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.allSatisfy({ ($0 ?? 0) >= 1 }) else {
            throw UsageError(command: arguments.command, message: "'--pages \(pages)': expected page numbers like 1,3")
        }
        request.pages = numbers.compactMap { $0 }
    }
    request.dpi = try arguments.integer("dpi", range: 30...2_400)
    if format != "json", let output = OCRRequest.Output(rawValue: format) { request.outputs = [output] }
    return (request, format)
}

enum RecognizeCommand {
    static let help = """
        Usage: quire recognize FILE… [options]

        Sends each image to the 'ocr' service through the broker and prints the results in input
        order. Many files are sent at once so every worker stays busy. '-' reads standard input.
        A progress bar is drawn on standard error when it is a terminal. Exits 1 if any file failed,
        naming each failure on standard error.

        Options:
          --format F             json (default), text, hocr, alto, tsv; pdf (searchable PDF, one file:
                                 quire recognize scan.png --format pdf > scan.pdf); or the result in
                                 another service's shape: cloud-vision, azure-read (3.2),
                                 azure-read-v2, image-analysis (4.0)
          --overlay OUT.png      also write the image with the line and word boxes drawn on it
                                 (low-confidence words in red; one file)
          --languages L          e.g. en, eng+deu, zh-Hans (default: the worker's)
          --mode M               document (default: dense pages), text (sparse text in photos), line
          --auto-orientation     detect and fix page rotation (OSD)
          --pages 1,3            pages of a multi-page TIFF
          --dpi N                the scan's resolution when the file does not say
          --broker ENDPOINT      [QUIRE_BROKER] (default tcp://127.0.0.1:5555)
          --in-flight N          requests in flight at once (default 16)
          --timeout-ms N         per attempt [QUIRE_TIMEOUT_MS] (30000); given, also wait for an OCR
                                 worker to appear instead of failing after 3 s (see below)
        """ + "\n" + ClientAuth.help + "\n\n" + Preflight.help

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let arguments = try Arguments(command: "quire recognize", args, valued: ocrOptionNames.union(ClientAuth.options).union([
            "broker", "in-flight", "timeout-ms", "log-level", "overlay",
        ]), booleans: ["auto-orientation"])
        let files = arguments.positionals
        guard !files.isEmpty else { throw UsageError(command: "quire recognize", message: "no image files given") }
        let (request, format) = try ocrRequest(arguments)
        let overlay = arguments.string("overlay")
        try checkOneFileOutputs(files: files, format: format, overlay: overlay)
        var configuration = try clientConfiguration(arguments)
        configuration.maxInFlight = try arguments.integer("in-flight", range: 1...1_024) ?? 16

        // Read every input first: a missing file is reported before anything is sent.
        let (inputs, readFailures) = readInputs(files, command: "quire recognize")
        var encodedRequest = Array(try JSONEncoder().encode(request))
        guard let preflight = try Preflight.run(arguments, configuration: configuration, service: "ocr") else { return 1 }
        if let token = preflight.token { encodedRequest = ClientAuth.insert(token, into: encodedRequest) }
        let requestFrame = encodedRequest
        let settings = configuration
        let jobs = inputs
        let progress = ProgressBar(total: jobs.count, enabled: isatty(2) == 1)
        let outcome = blockingAwait { () async throws -> Int in
            try await withClient(configuration: settings) { client in
                try await withThrowingTaskGroup(of: (Int, Result<[[UInt8]], ClientError>).self) { group in
                    for (index, job) in jobs.enumerated() {
                        group.addTask {
                            do {
                                let reply = try await client.request(service: "ocr", body: [requestFrame, job.bytes])
                                return (index, .success(reply))
                            } catch let error as ClientError {
                                return (index, .failure(preflight.explain(error)))
                            }
                        }
                    }
                    // Print in input order as soon as each next result is in.
                    var results: [Int: Result<[[UInt8]], ClientError>] = [:]
                    var next = 0
                    var failures = 0
                    for try await (index, result) in group {
                        results[index] = result
                        progress.advance()
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
            guard let result = try? JSONDecoder().decode(OCRResult.self, from: Data(frame)) else {
                printError("quire recognize: \(name): the reply is not an OCR result")
                return false
            }
            if format == "pdf" { return writePDF(result, attachments: attachments, name: name) }
            if let shape = ResultFormat(rawValue: format) { return printShape(shape, result, name: name, many: many) }
            if many { printOut("==> \(name) <==") }
            let pages = result.pages.map { $0.renderings?[format] ?? "" }.joined()
            FileHandle.standardOutput.write(Data(document(format, pages, name: name, engine: result.metadata.engine).utf8))
            return true
        }
    }

    /// The worker returns each page's fragment; a file on standard output is a whole document, as
    /// the tesseract CLI writes it (TSV header line, hOCR html, ALTO root).
    static func document(_ format: String, _ pages: String, name: String, engine: String) -> String {
        let escaped = name.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        switch format {
        case "tsv":
            return "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n" + pages
        case "hocr":
            return """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
                <html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
                 <head>
                  <title>\(escaped)</title>
                  <meta http-equiv="Content-Type" content="text/html;charset=utf-8"/>
                  <meta name='ocr-system' content='\(engine)' />
                  <meta name='ocr-capabilities' content='ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf'/>
                 </head>
                 <body>

                """ + pages + " </body>\n</html>\n"
        case "alto":
            return """
                <?xml version="1.0" encoding="UTF-8"?>
                <alto xmlns="http://www.loc.gov/standards/alto/ns-v3#" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.loc.gov/standards/alto/ns-v3# http://www.loc.gov/alto/v3/alto-3-0.xsd">
                \t<Description>
                \t\t<MeasurementUnit>pixel</MeasurementUnit>
                \t\t<sourceImageInformation>
                \t\t\t<fileName>\(escaped)</fileName>
                \t\t</sourceImageInformation>
                \t\t<OCRProcessing ID="OCR_0">
                \t\t\t<ocrProcessingStep>
                \t\t\t\t<processingSoftware>
                \t\t\t\t\t<softwareName>\(engine)</softwareName>
                \t\t\t\t</processingSoftware>
                \t\t\t</ocrProcessingStep>
                \t\t</OCRProcessing>
                \t</Description>
                \t<Layout>

                """ + pages + "\t</Layout>\n</alto>\n"
        default:
            return pages
        }
    }

    static func jsonString(_ s: String) -> String {
        String(decoding: (try? JSONEncoder().encode(s)) ?? Data("\"?\"".utf8), as: UTF8.self)
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

    func advance() {
        guard enabled else { return }
        let n = done.withLock { $0 += 1; return $0 }
        let width = 30
        let filled = total == 0 ? width : n * width / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        FileHandle.standardError.write(Data("\r\(bar) \(n)/\(total)".utf8))
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
