import Foundation
import QuireOCR
import QuireSupport
import QuireWire
import QuireWorker
import Synchronization
import ZeroMQ

enum WorkerCommand {
    static let threads = Option("threads", variable: "QUIRE_THREADS", .integer(1...256), default: 1,
                                help: "worker connections (and OCR engines) in this process")
    static let service = Option("service", .string("NAME"),
                                help: "serve under another service name (echo: any; ocr: ocr.scene, photos for the workers without the scene engine)",
                                defaultNote: "echo, ocr")
    static let json = Option("json", .switch, default: false, help: "require a JSON object as the first frame (echo only)")
    static let documents = Option("documents", variable: "QUIRE_DOCUMENTS", .integer(0...64), default: 2,
                                  help: "ocr.document connections: documents this process splits into page jobs and waits for at once (0: none)")
    static let delay = Option("delay-ms", SettingValue.milliseconds(1...3_600_000),
                              help: "hold each request N ms, sending a PARTIAL first (echo only; tests)")

    static let command = Command(
        "worker", listing: ("worker <kind>", "run a worker; kinds: ocr, echo, token"),
        usage: "quire worker <kind> [options]",
        discussion: """
            Runs a worker that connects to the broker, registers its service and serves requests.
            Kinds:
              ocr         service 'ocr': images in, the JSON text hierarchy out (Tesseract, an engine a thread),
                          and 'ocr.document': a PDF's or TIFF's pages as durable 'ocr' jobs, read by every
                          OCR worker at once and put back together (--documents at a time; with auth on
                          the page jobs need this worker's client credentials: --credentials or
                          QUIRE_CLIENT_ID/QUIRE_CLIENT_SECRET, else DIR/credentials.json of --data).
                          A worker without the scene engine hands the photos it cannot read to
                          'ocr.scene' (with the same credentials); --service ocr.scene runs a worker
                          that reads them (it needs the scene engine)
              echo        service 'echo': replies with the request's own frames (tests, benchmarks)
              token       services 'auth.token' and 'auth.jwks': signed access tokens and their public keys

            On SIGTERM or SIGINT the worker drains: it finishes the request in hand, sends DISCONNECT and
            exits 0. A second signal exits at once.
            """,
        groups: [
            OptionGroup(options: OptionGroup(WorkerConfiguration.settings, defaults: WorkerConfiguration()).options + [threads.info]
                        + CurveOptions.clientGroup.options),
            OptionGroup("OCR workers (ocr):", options: OptionGroup(OCRConfiguration.settings, defaults: OCRConfiguration()).options
                        + [documents.info, ClientAuth.credentialsFile.info, ClientAuth.clientID.info, ClientAuth.clientSecret.info]),
            OptionGroup("Echo workers (echo):", options: [service.info, json.info, delay.info]),
            TokenWorker.group,
        ],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        guard let kind = invocation.positionals.first else {
            throw UsageError(command: invocation.command, message: "missing the worker kind (ocr, echo, token)")
        }
        guard invocation.positionals.count == 1 else {
            throw UsageError(command: invocation.command, message: "unexpected argument '\(invocation.positionals[1])'")
        }
        var configuration = try invocation.configured(WorkerConfiguration(), WorkerConfiguration.settings)
        let threads = try invocation.value(Self.threads, or: 1)
        configuration.curve = try CurveOptions.client(invocation)
        let logger = try CommonOptions.logger("quire.worker.\(kind)", invocation)

        var services: [WorkerService] = []
        let service: WorkerService
        var ocrConfiguration: OCRConfiguration?
        switch kind {
        case "echo":
            service = EchoService.make(name: try invocation.value(Self.service) ?? "echo", requiresJSONFrame: try invocation.value(json, or: false),
                                       delay: try invocation.value(delay))
        case "ocr":
            let ocr = try invocation.configured(OCRConfiguration(), OCRConfiguration.settings)
            ocrConfiguration = ocr
            prepareForEngines(engineThreads: threads, environment: invocation.environment)
            let credentials = try ClientAuth.credentials(invocation)
            let tokens = ClientAuth.tokenSource(credentials)
            let name = try invocation.value(Self.service) ?? OCRServiceName.page
            switch name {
            case OCRServiceName.page:
                // Without the scene engine, the photos go to the workers that have it.
                let handOff = InstalledEngines.sceneAvailable(ocr) ? nil : SceneHandOff(localReason: InstalledEngines.sceneStatus(ocr), tokens: tokens)
                service = OCRService.make(configuration: ocr, handOff: handOff)
                let document = DocumentService.make(fontPath: Outputs.fontPath(dataPath: ocr.dataPath), tokens: tokens, logger: logger)
                services = [service] + Array(repeating: document, count: try invocation.value(documents, or: 2))
            case OCRServiceName.scene:
                guard InstalledEngines.sceneAvailable(ocr) else {
                    throw UsageError(command: invocation.command, message: "--service \(name) reads photos with the scene engine, which this worker "
                                     + "does not have: \(InstalledEngines.sceneStatus(ocr))")
                }
                service = OCRService.make(configuration: ocr, name: name)
                services = [service]
            default:
                throw UsageError(command: invocation.command, message: "an ocr worker serves ocr or ocr.scene, not '\(name)'")
            }
        case "token":
            services = try TokenWorker.services(invocation, logger: logger)
            service = services[0]
        default:
            throw UsageError(command: invocation.command, message: "unknown worker kind '\(kind)' (ocr, echo, token)")
        }
        if let ocr = ocrConfiguration {
            // What this worker reads with: a worker without the scene models serves Tesseract alone.
            logger.info("engines", metadata: ["tesseract": InstalledEngines.tesseractVersion, "pdf": Recognizer.pdfLibrary,
                                              "scene": InstalledEngines.sceneStatus(ocr), "default": ocr.defaultEngine.rawValue,
                                              "languages": InstalledEngines.languageStatus(ocr)])
        }
        let context = try Context()
        var workers: [Worker] = []
        for _ in 0..<threads {
            workers.append(try Worker(configuration: configuration, service: service, context: context, logger: logger))
        }
        // The token worker also serves its public keys, on one connection of its own; the OCR worker
        // splits documents on connections of their own.
        for extra in services.dropFirst() {
            workers.append(try Worker(configuration: configuration, service: extra, context: context, logger: logger))
        }
        let signalCount = Atomic<Int>(0)
        let stopAll = workers
        let signals = SignalWatcher { number in
            if signalCount.add(1, ordering: .relaxed).newValue > 1 {
                logger.warning("second signal; exiting without draining", metadata: ["signal": String(number)])
                _exit(1)
            }
            logger.notice("signal received; draining", metadata: ["signal": String(number)])
            for worker in stopAll { worker.stop() }
        }
        defer { withExtendedLifetime(signals) {} }
        let status = runWorkers(workers, logger: logger)
        // Every worker has closed its socket: let the DISCONNECTs leave before the process exits.
        context.terminate()
        return status
    }

    /// Runs each worker on its own thread and waits for all of them. 1 if any failed.
    static func runWorkers(_ workers: [Worker], logger: Logger) -> Int32 {
        let failures = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        for (index, worker) in workers.enumerated() {
            let thread = Thread {
                do {
                    try worker.run()
                } catch {
                    logger.error("worker failed", metadata: ["error": String(describing: error)])
                    failures.add(1, ordering: .relaxed)
                    for other in workers { other.stop() }
                }
                done.signal()
            }
            thread.name = "quire-worker-\(index)"
            thread.start()
        }
        for _ in workers { done.wait() }
        return failures.load(ordering: .relaxed) == 0 ? 0 : 1
    }
}
