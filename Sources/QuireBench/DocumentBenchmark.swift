import Foundation
import QuireBroker
import QuireClient
import QuireOCR
import QuireStack
import QuireSupport
import QuireWire
import QuireWorker
import Synchronization
import ZeroMQ

/// What `quire bench documents DIR` runs.
public struct DocumentBenchOptions: Sendable {
    /// A documents-dev-like folder: `manifest.tsv` listing pages `DOC.pNNN` with their `lang`,
    /// `DOC.pNNN.gt.txt`, and per document `DOC.pdf`, `DOC.scanned.pdf` and `DOC.tiff` (the last two
    /// holding the listed pages only, in order).
    public var directory: String
    /// OCR worker threads; as many documents are in flight, and OCRmyPDF gets `--jobs` this many.
    public var workers = 2
    public var configuration = OCRConfiguration()
    /// One document not read within this fails.
    public var requestTimeout: Milliseconds = 1_800_000
    /// OCRmyPDF to compare with on the scanned PDFs (looked up on PATH); nil: not measured.
    public var ocrmypdf: String? = "ocrmypdf"

    public init(directory: String) { self.directory = directory }
}

/// `quire bench documents DIR`: each document of a folder read as a whole through a broker and N OCR
/// workers, four ways (the original PDFs from their text layers, the same by OCR, the scanned PDFs, the
/// multi-page TIFFs), the scanned PDFs again with each page a request of its own (``DocumentPages``),
/// and OCRmyPDF on the scanned PDFs when it is installed: pages per second, worker
/// time per page, and CER and order-independent word error against each page's text, pooled over
/// characters. Markdown on standard output.
public final class DocumentBenchmark {
    struct Document {
        var name: String
        /// The listed pages' ids (`fedreg.p002`) and their page numbers in the original PDF.
        var ids: [String]
        var pages: [Int]
        var languages: [String]
        /// The manifest's `group` of its first listed page (what the layout is).
        var group: String = ""
    }

    struct Row {
        var label: String
        var pages = 0
        var seconds = 0.0
        var workerMs = 0.0
        var texts: [String: String] = [:]
        var failures: [String] = []

        /// A document's reply (its JSON frame), or why there is none, `file` naming it.
        mutating func add(_ reply: Result<[UInt8], WireError>, of document: Document, file: String) {
            switch reply {
            case .success(let frame):
                if let result = OCRResult(replyFrame: frame) {
                    add(result, of: document)
                } else {
                    failures.append("\(file): the reply is not an OCR result")
                }
            case .failure(let error): failures.append("\(file): \(error.code.rawValue): \(error.message)")
            }
        }

        /// A document's result: each listed page's text, its pages and its worker time.
        mutating func add(_ result: OCRResult, of document: Document) {
            for (id, page) in zip(document.ids, result.pages) { texts[id] = page.text }
            pages += result.pages.count
            workerMs += result.metadata.timings.decodeMs + result.metadata.timings.recognizeMs
        }
    }

    let options: DocumentBenchOptions
    let logger: Logger
    let progress: @Sendable (String) -> Void

    public init(options: DocumentBenchOptions, logger: Logger, progress: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.logger = logger
        self.progress = progress
    }

    public func run() throws -> String {
        let folder = URL(fileURLWithPath: options.directory)
        guard let text = try? String(contentsOf: folder.appendingPathComponent("manifest.tsv"), encoding: .utf8) else {
            throw BenchError("\(options.directory) has no manifest.tsv")
        }
        let documents = try Self.documents(OCRBenchManifest.parse(text).entries)
        guard !documents.isEmpty else { throw BenchError("manifest.tsv lists no pages named DOC.pNNN") }
        var truths: [String: String] = [:]
        for document in documents {
            for id in document.ids {
                guard let truth = try? String(contentsOf: folder.appendingPathComponent(id + ".gt.txt"), encoding: .utf8) else {
                    throw BenchError("\(id).gt.txt is missing")
                }
                truths[id] = truth
            }
        }
        let pageCount = documents.reduce(0) { $0 + $1.ids.count }
        progress("documents: \(documents.count) documents, \(pageCount) pages, \(options.workers) OCR workers")

        let rig = Rig(logger: logger, workerStopTimeout: 60_000)
        defer { rig.tearDown() }
        // Durable jobs in a folder of their own, for ocr.document's page jobs.
        let jobs = FileManager.default.temporaryDirectory.appendingPathComponent("quire-bench-documents-jobs-\(getpid())")
        defer { try? FileManager.default.removeItem(at: jobs) }
        let stack: Stack
        do {
            stack = try Stack.start(StackConfiguration(
                broker: BrokerConfiguration(bind: "tcp://127.0.0.1:*", requestTimeout: options.requestTimeout,
                                            jobs: JobConfiguration(directory: jobs.path, lease: options.requestTimeout)),
                workers: [WorkerGroup(service: OCRService.make(configuration: options.configuration), count: options.workers, threadName: "bench-ocr-worker"),
                          WorkerGroup(service: DocumentService.make(fontPath: Outputs.fontPath(dataPath: options.configuration.dataPath)),
                                      count: Self.documentsInFlight(options.workers), threadName: "bench-document")],
                workerStopTimeout: 60_000, brokerStopTimeout: 5_000), logger: logger)
        } catch let error as StackError {
            throw BenchError("the Quire \(error)")
        }
        rig.stopBroker = { stack.stop() }
        let context = try Context()
        rig.contexts.append(context)
        let client = try QuireClient(configuration: ClientConfiguration(broker: stack.endpoint, timeout: options.requestTimeout, retries: 0,
                                                                        maxInFlight: Self.documentsInFlight(options.workers)), context: context)
        rig.clients.append(client)

        // Warm-up: every worker loads its engine for each language set, on a scanned page.
        for languages in Set(documents.map(\.languages)) {
            guard let document = documents.first(where: { $0.languages == languages }),
                  let bytes = FileManager.default.contents(atPath: folder.appendingPathComponent(document.name + ".scanned.pdf").path) else { continue }
            let body = [OCRRequest(languages: languages, pages: [1]).jsonBytes(), Array(bytes)]
            progress("documents: warm-up in \(languages.joined(separator: "+"))")
            let workers = options.workers
            _ = try awaitBlocking("the warm-up", timeout: options.requestTimeout) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<workers { group.addTask { _ = try await client.request(service: OCRService.name, body: body) } }
                    try await group.waitForAll()
                }
            }
        }

        var rows: [Row] = []
        let ways: [(String, String, Bool, OCRRequest.TextLayer?)] = [
            ("the original PDFs, from their text layers", ".pdf", true, .auto),
            ("the original PDFs by OCR (textLayer: ignore)", ".pdf", true, .ignore),
            ("the scanned PDFs", ".scanned.pdf", false, nil),
            ("the multi-page TIFFs", ".tiff", false, nil),
        ]
        for (label, suffix, originalPages, textLayer) in ways {
            progress("documents: \(label)")
            rows.append(try read(label, documents: documents, folder: folder, suffix: suffix, originalPages: originalPages,
                                 textLayer: textLayer, client: client))
        }
        let spreadLabel = "the scanned PDFs, each page a request of its own (as quire recognize sends them)"
        progress("documents: \(spreadLabel)")
        rows.append(try readSpread(spreadLabel, documents: documents, folder: folder, client: client))
        let documentLabel = "the scanned PDFs as ocr.document jobs, searchable PDF included (as quire recognize --format pdf sends them)"
        progress("documents: \(documentLabel)")
        rows.append(try readDocuments(documentLabel, documents: documents, folder: folder, client: client))
        if let ocrmypdf = options.ocrmypdf.flatMap(Self.executable) {
            progress("documents: OCRmyPDF (\(ocrmypdf)) on the scanned PDFs, --jobs \(options.workers)")
            rows.append(runOCRmyPDF(ocrmypdf, documents: documents, folder: folder))
        }
        return report(rows, documents: documents, truths: truths, ocrmypdf: options.ocrmypdf.flatMap(Self.executable))
    }

    /// The manifest's pages by document, in the order listed; a page's number is its id's `.pNNN`.
    static func documents(_ entries: [OCRBenchManifest.Entry]) throws(BenchError) -> [Document] {
        var documents: [Document] = []
        for entry in entries {
            let name = Half.document(of: entry.id)
            guard let suffix = entry.id.split(separator: ".").last, suffix.first == "p", let page = Int(suffix.dropFirst()), page >= 1 else {
                throw BenchError("\(entry.id): not a page id of the form DOC.pNNN")
            }
            if let index = documents.firstIndex(where: { $0.name == name }) {
                documents[index].ids.append(entry.id)
                documents[index].pages.append(page)
            } else {
                documents.append(Document(name: name, ids: [entry.id], pages: [page], languages: entry.languages.isEmpty ? ["eng"] : entry.languages,
                                          group: entry.group))
            }
        }
        return documents
    }

    /// Every document once, as many in flight as there are workers: one request each for its listed pages.
    func read(_ label: String, documents: [Document], folder: URL, suffix: String, originalPages: Bool, textLayer: OCRRequest.TextLayer?,
              client: QuireClient) throws -> Row {
        var bodies: [[[UInt8]]] = []
        for document in documents {
            guard let bytes = FileManager.default.contents(atPath: folder.appendingPathComponent(document.name + suffix).path) else {
                throw BenchError("\(document.name)\(suffix) is missing")
            }
            let pages = originalPages ? document.pages : Array(1...document.ids.count)
            bodies.append([OCRRequest(languages: document.languages, pages: pages, textLayer: textLayer).jsonBytes(), Array(bytes)])
        }
        let (replies, seconds) = try send(bodies, label: label, documents: documents.count, client: client)
        var row = Row(label: label, seconds: seconds)
        for (reply, document) in zip(replies, documents) { row.add(reply, of: document, file: document.name + suffix) }
        return row
    }

    /// The scanned PDFs' pages, each sent as a PDF of its own (``DocumentPages``), as many in flight as
    /// there are workers across all documents; each document's pages put back together.
    func readSpread(_ label: String, documents: [Document], folder: URL, client: QuireClient) throws -> Row {
        var units: [(document: Int, body: [[UInt8]])] = []
        var numbers: [[Int]] = []
        var pageCounts: [Int] = []
        for (index, document) in documents.enumerated() {
            guard let bytes = FileManager.default.contents(atPath: folder.appendingPathComponent(document.name + ".scanned.pdf").path) else {
                throw BenchError("\(document.name).scanned.pdf is missing")
            }
            let request = OCRRequest(languages: document.languages, pages: Array(1...document.ids.count))
            guard let parts = DocumentPages.pages(of: Array(bytes), request: request) else {
                // One page: the file whole.
                units.append((index, [request.jsonBytes(), Array(bytes)]))
                numbers.append([1])
                pageCounts.append(1)
                continue
            }
            let frame = DocumentPages.pageRequest(request).jsonBytes()
            units += parts.files.map { (index, [frame, $0]) }
            numbers.append(parts.numbers)
            pageCounts.append(parts.pageCount)
        }
        let (replies, seconds) = try send(units.map(\.body), label: label, documents: documents.count, client: client)
        var row = Row(label: label, seconds: seconds)
        for (index, document) in documents.enumerated() {
            let pages = units.indices.filter { units[$0].document == index }.map { replies[$0] }
            guard let result = DocumentPages.merge(pages, numbers: numbers[index], pageCount: pageCounts[index]) else {
                row.failures.append("\(document.name).scanned.pdf: no page was read")
                continue
            }
            row.add(result, of: document)
        }
        return row
    }

    /// Documents sent to `ocr.document` at once: enough that the workers always have a page queued
    /// while a document waits for its last one (a document's pages are read in parallel, documents
    /// one after another would leave a worker idle at each one's end).
    static func documentsInFlight(_ workers: Int) -> Int { 4 * workers }

    /// The scanned PDFs sent whole to `ocr.document` with `outputs: ["pdf"]`: their pages become durable
    /// jobs that every worker reads, and each reply carries the searchable PDF (checked to be one).
    func readDocuments(_ label: String, documents: [Document], folder: URL, client: QuireClient) throws -> Row {
        var bodies: [[[UInt8]]] = []
        for document in documents {
            guard let bytes = FileManager.default.contents(atPath: folder.appendingPathComponent(document.name + ".scanned.pdf").path) else {
                throw BenchError("\(document.name).scanned.pdf is missing")
            }
            bodies.append([OCRRequest(languages: document.languages, pages: Array(1...document.ids.count), outputs: [.pdf]).jsonBytes(), Array(bytes)])
        }
        let (replies, seconds) = try send(bodies, label: label, documents: documents.count, client: client, service: DocumentService.name,
                                          inFlight: Self.documentsInFlight(options.workers),
                                          check: { frames in frames.count == 2 && frames[1].starts(with: Array("%PDF-".utf8)) })
        var row = Row(label: label, seconds: seconds)
        for (reply, document) in zip(replies, documents) { row.add(reply, of: document, file: document.name + ".scanned.pdf") }
        return row
    }

    /// Sends `requests` to `service` (`ocr`), as many in flight as there are workers, each one's reply
    /// (its JSON frame) or error in the order sent, and the seconds it took. A reply that fails `check`
    /// is an error.
    func send(_ requests: [[[UInt8]]], label: String, documents: Int, client: QuireClient, service: String = OCRService.name,
              inFlight: Int? = nil, check: @escaping @Sendable ([[UInt8]]) -> Bool = { _ in true })
        throws -> (replies: [Result<[UInt8], WireError>], seconds: Double) {
        let workers = inFlight ?? options.workers
        let replies = Locked<[Int: Result<[UInt8], WireError>]>([:])
        let start = Instant.now()
        _ = try awaitBlocking(label, timeout: Milliseconds(options.requestTimeout.value * Int64(max(1, documents)))) {
            let tickets = TicketCounter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<min(workers, requests.count) {
                    group.addTask {
                        while true {
                            let ticket = tickets.take()
                            guard ticket < requests.count else { return }
                            do {
                                let reply = try await client.request(service: service, body: requests[ticket])
                                replies.withLock {
                                    $0[ticket] = check(reply) ? .success(reply.first ?? []) : .failure(WireError(.internal, "the reply lacks what was asked for"))
                                }
                            } catch {
                                let failure = (error as? ClientError).map { $0.remote ?? WireError(.internal, $0.message) }
                                replies.withLock { $0[ticket] = .failure(failure ?? WireError(.internal, String(describing: error))) }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let seconds = Instant.now().seconds(since: start)
        let all = replies.withLock { $0 }
        return (requests.indices.map { all[$0] ?? .failure(WireError(.internal, "no reply")) }, seconds)
    }

    /// OCRmyPDF on each scanned PDF, one after another with `--jobs N`, its text from `--sidecar`
    /// (pages apart by form feeds); the searchable PDF it writes is part of what it is timed for.
    func runOCRmyPDF(_ executable: String, documents: [Document], folder: URL) -> Row {
        var row = Row(label: "OCRmyPDF on the scanned PDFs (--jobs \(options.workers), searchable PDF and sidecar text)")
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("quire-bench-documents-\(getpid())")
        try? FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        for document in documents {
            let sidecar = work.appendingPathComponent(document.name + ".txt").path
            let arguments = ["--jobs", String(options.workers), "-l", document.languages.joined(separator: "+"), "--force-ocr", "--output-type", "pdf",
                             "--optimize", "0", "--quiet", "--sidecar", sidecar,
                             folder.appendingPathComponent(document.name + ".scanned.pdf").path, work.appendingPathComponent(document.name + ".pdf").path]
            let start = Instant.now()
            do {
                let process = try ChildProcess(executable: executable, arguments: arguments)
                guard process.waitForExit(timeout: options.requestTimeout) else {
                    process.stop()
                    row.failures.append("\(document.name): OCRmyPDF did not finish within \(options.requestTimeout.value) ms")
                    continue
                }
                row.seconds += Instant.now().seconds(since: start)
                guard process.process.terminationStatus == 0, let text = try? String(contentsOfFile: sidecar, encoding: .utf8) else {
                    row.failures.append("\(document.name): OCRmyPDF exited \(process.process.terminationStatus): \(process.outputTail(lines: 3))")
                    continue
                }
                let pages = text.split(separator: "\u{0C}", omittingEmptySubsequences: false).map(String.init)
                for (id, page) in zip(document.ids, pages) { row.texts[id] = page }
                row.pages += document.ids.count
            } catch {
                row.failures.append("\(document.name): \(error)")
            }
        }
        return row
    }

    func report(_ rows: [Row], documents: [Document], truths: [String: String], ocrmypdf: String?) -> String {
        func percent(_ value: Double) -> String { String(format: "%.1f %%", value * 100) }
        var lines = [
            "| read as | pages | CER | word error | pages/s | worker ms per page |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        /// CER and word error of `row` over the pages `ids`, pooled over their characters.
        func scores(_ row: Row, _ ids: [String]) -> (cer: Double, words: Double) {
            var characters = 0.0, cer = 0.0, words = 0.0
            for id in ids {
                guard let truth = truths[id] else { continue }
                let length = Double(Accuracy.folded(truth).unicodeScalars.count)
                let text = row.texts[id] ?? ""
                characters += length
                cer += Accuracy.characterErrorRate(truth: truth, text: text) * length
                words += Accuracy.wordError(truth: truth, text: text).error * length
            }
            return (cer / max(1, characters), words / max(1, characters))
        }
        for row in rows {
            let (cer, words) = scores(row, Array(truths.keys))
            let perSecond = row.seconds > 0 ? String(format: "%.2f", Double(row.pages) / row.seconds) : "–"
            let worker = row.pages > 0 && row.workerMs > 0 ? String(format: "%.0f", row.workerMs / Double(row.pages)) : "–"
            lines.append("| \(row.label) | \(row.pages) | \(percent(cer)) | \(percent(words)) | \(perSecond) | \(worker) |")
        }
        // Per group (what the layout is): CER counts the reading order, which on tables is one valid
        // order among several (the word error does not); a step that helps one group and hurts another shows here.
        var groups: [String: [String]] = [:]
        for document in documents { groups[document.group, default: []] += document.ids }
        lines.append("")
        lines.append("| group | pages | " + rows.indices.map { "\($0 + 1): CER / word error" }.joined(separator: " | ") + " |")
        lines.append("|---|---:|" + String(repeating: "---:|", count: rows.count))
        for group in groups.keys.sorted() {
            let ids = groups[group]!
            let cells = rows.map { row -> String in
                let (cer, words) = scores(row, ids)
                return "\(percent(cer)) / \(percent(words))"
            }
            lines.append("| \(group.isEmpty ? "–" : group) | \(ids.count) | " + cells.joined(separator: " | ") + " |")
        }
        lines.append("")
        lines.append("Columns 1–\(rows.count): " + rows.enumerated().map { "\($0.offset + 1) \($0.element.label)" }.joined(separator: "; ") + ".")
        lines.append("")
        lines.append("\(documents.count) documents, \(truths.count) pages from \(options.directory); each document one request for its listed pages, "
            + "\(options.workers) in flight to \(options.workers) OCR worker threads in this process (a broker on tcp://127.0.0.1:*). "
            + "CER and word error pooled over the pages' characters; a page not read counts as read as nothing. Worker ms: the results' decode and recognise time. "
            + (ocrmypdf == nil ? "OCRmyPDF: not installed (pip install ocrmypdf), not measured." : "OCRmyPDF: \(ocrmypdf!), one document after another."))
        for row in rows where !row.failures.isEmpty {
            lines.append("")
            lines.append("Failures, \(row.label): " + row.failures.joined(separator: "; "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `name` when it is a path to an executable, else the first executable of that name on PATH.
    static func executable(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let path = folder + "/" + name
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }
}
