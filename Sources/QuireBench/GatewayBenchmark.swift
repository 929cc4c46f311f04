import Dispatch
import Foundation
import QuireBroker
import QuireClient
import QuireGateway
import QuireOCR
import QuireStack
import QuireSupport
import QuireWire
import QuireWorker
import Synchronization
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// What `quire bench gateway` runs, with every default in one place.
public struct GatewayBenchOptions: Sendable, Equatable {
    /// Requests in each throughput run (one per path).
    public var requests = 2_000
    /// HTTP connections (one thread each, keep-alive) in the gateway's throughput run, and requests in
    /// flight on the direct client's.
    public var connections = 16
    /// Requests one at a time on each path, interleaved, for the percentiles.
    public var latencyRequests = 500
    public var warmupRequests = 50
    /// The image sent every time; nil: `imageBytes` of filler (the canned worker never reads it).
    public var imagePath: String?
    /// The filler's size without `imagePath`: a phone photo after JPEG compression.
    public var imageBytes = 100_000
    /// Real OCR workers (Tesseract) instead of the canned one: the numbers then include reading the
    /// image, so `imagePath` should be an image with text.
    public var ocr = false
    /// Worker threads serving `ocr`.
    public var workers = 2
    public var requestTimeout: Milliseconds = 60_000
    public var phaseTimeout: Milliseconds = 300_000

    public init() {}
}

/// One path's numbers.
public struct GatewayPathReport: Sendable, Codable, Equatable {
    public var path: String
    /// `direct`, `cloud-vision`, `image-analysis`.
    public var name: String
    public var requests: Int
    public var requestsPerSecond: Double
    public var p50Microseconds: Double
    public var p90Microseconds: Double
    public var p99Microseconds: Double
}

/// The numbers of one `quire bench gateway` run: the direct ZeroMQ path and the gateway's, side by side.
public struct GatewayBenchReport: Sendable, Codable, Equatable {
    public var machine: MachineInfo
    public var worker: String
    public var workers: Int
    public var imageBytes: Int
    public var resultBytes: Int
    public var connections: Int
    public var latencyRequests: Int
    public var paths: [GatewayPathReport]

    public func markdown() -> String {
        func us(_ value: Double) -> String { String(format: "%.0f µs", value) }
        var lines = [
            "| \(worker) worker ×\(workers), \(imageBytes / 1_000) KB image, \(resultBytes / 1_000) KB result | requests/s (\(connections) at once) | p50 | p90 | p99 |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for path in paths {
            lines.append("| \(path.path) | \(groupedThousands(path.requestsPerSecond)) | \(us(path.p50Microseconds)) | \(us(path.p90Microseconds)) | \(us(path.p99Microseconds)) |")
        }
        if let direct = paths.first {
            for path in paths.dropFirst() {
                lines.append("| added by the gateway, \(path.name) | "
                             + String(format: "%.0f%% of direct", 100 * path.requestsPerSecond / max(direct.requestsPerSecond, 1e-9))
                             + " | +\(us(path.p50Microseconds - direct.p50Microseconds)) | +\(us(path.p90Microseconds - direct.p90Microseconds)) | "
                             + "+\(us(path.p99Microseconds - direct.p99Microseconds)) |")
            }
        }
        lines.append("")
        lines.append("Percentiles: \(latencyRequests) requests one at a time on each path, interleaved. Machine: \(machine.summary).")
        return lines.joined(separator: "\n")
    }

    public func json() -> String { benchJSON(self) }
}

/// `quire bench gateway`: a broker, `ocr` workers and `quire gateway` in one process over TCP loopback
/// (the gateway with a ZeroMQ context of its own, as its own process would have). The same image goes
/// to the same workers three ways: a Majordomo client straight to the broker (the direct ZeroMQ
/// path, decoding the result as a Swift client would), Cloud Vision `images:annotate` through the
/// gateway (base64 in JSON, the result converted), and Image Analysis (raw bytes). It measures
/// requests per second with many at once, then the latency of one at a time, interleaved.
///
/// The default worker answers every image with the same canned result at once, so that what is
/// measured is the gateway (HTTP, base64, JSON, the conversion, one more client hop) and not
/// Tesseract; `ocr` puts real workers behind both paths.
public final class GatewayBenchmark: Sendable {
    public let options: GatewayBenchOptions
    private let logger: Logger
    private let progress: @Sendable (String) -> Void

    public init(options: GatewayBenchOptions, logger: Logger, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.options = options
        self.logger = logger
        self.progress = progress
    }

    static let cloudVisionPath = "/v1/images:annotate"
    static let imageAnalysisPath = "/computervision/imageanalysis:analyze?api-version=2023-10-01&features=read"

    public func run() throws -> GatewayBenchReport {
        let image: [UInt8]
        if let path = options.imagePath {
            guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { throw BenchError("cannot read the image '\(path)'") }
            image = Array(data)
        } else {
            image = (0..<options.imageBytes).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        }
        let canned = Self.cannedResult()
        let service: WorkerService
        if options.ocr {
            let configuration = try OCRConfiguration(environment: ProcessInfo.processInfo.environment)
            service = OCRService.make(configuration: configuration)
        } else {
            service = CannedOCRService.make(reply: canned)
        }
        let rig = Rig(logger: logger)
        defer { rig.tearDown() }
        let workers = WorkerGroup(service: service, count: options.workers, keepsHeartbeat: true, context: .own, threadName: "bench-ocr")
        progress("starting the broker, \(options.workers) \(options.ocr ? "OCR" : "canned") workers and the gateway")
        let stack: Stack
        do {
            stack = try Stack.start(StackConfiguration(broker: BrokerConfiguration(bind: "tcp://127.0.0.1:*", requestTimeout: options.requestTimeout),
                                                       workers: [workers]), logger: logger)
        } catch let error as StackError {
            throw BenchError(error.description)
        }
        rig.stopBroker = { stack.stop() }

        let gateway = Gateway(listen: "127.0.0.1:0", client: ClientConfiguration(broker: stack.endpoint, timeout: options.requestTimeout, retries: 0),
                              requestTimeout: options.requestTimeout, logger: logger)
        let port = try Self.start(gateway)
        defer { gateway.stop() }

        let clientContext = try Context()
        rig.contexts.append(clientContext)
        let direct = try QuireClient(configuration: ClientConfiguration(broker: stack.endpoint, timeout: options.requestTimeout, retries: 0,
                                                                        maxInFlight: options.connections), context: clientContext)
        rig.clients.append(direct)
        let frame = Array(#"{"mode":"document"}"#.utf8)
        let body: [[UInt8]] = [frame, image]
        let directCall: @Sendable () async throws -> Int = {
            let reply = try await direct.request(service: "ocr", body: body)
            let first = reply.first ?? []
            guard OCRResult(replyFrame: first) != nil else {
                throw BenchError("the direct reply is not an OCR result: \(String(decoding: first.prefix(200), as: UTF8.self))")
            }
            return first.count
        }
        let annotate = Array(#"{"requests":[{"image":{"content":""#.utf8) + Array(Data(image).base64EncodedString().utf8)
            + Array(#""},"features":[{"type":"DOCUMENT_TEXT_DETECTION"}]}]}"#.utf8)
        let cloudVision = HTTPCall(method: "POST", path: Self.cloudVisionPath, contentType: "application/json", body: annotate, expect: "fullTextAnnotation")
        let imageAnalysis = HTTPCall(method: "POST", path: Self.imageAnalysisPath, contentType: "application/octet-stream", body: image, expect: "readResult")

        progress("warm-up: \(options.warmupRequests) requests on each path")
        let resultBytes = try awaitBlocking("the warm-up", timeout: options.phaseTimeout) {
            var bytes = 0
            for _ in 0..<self.options.warmupRequests { bytes = try await directCall() }
            return bytes
        }
        let warm = try BlockingHTTPClient(port: port, timeout: options.requestTimeout)
        for _ in 0..<options.warmupRequests {
            try warm.check(cloudVision)
            try warm.check(imageAnalysis)
        }
        warm.close()

        let total = options.requests
        let connections = options.connections
        progress("throughput: \(total) requests, \(connections) at once, direct")
        let directSeconds = try awaitBlocking("the direct throughput run", timeout: options.phaseTimeout) {
            let tickets = TicketCounter()
            let start = Instant.now()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<min(connections, total) {
                    group.addTask { while tickets.take() < total { _ = try await directCall() } }
                }
                try await group.waitForAll()
            }
            return max(Instant.now().seconds(since: start), 1e-9)
        }
        var seconds: [Double] = [directSeconds]
        for call in [cloudVision, imageAnalysis] {
            progress("throughput: \(total) requests, \(connections) connections, gateway \(call.path)")
            seconds.append(try Self.httpThroughput(port: port, call: call, total: total, connections: connections, timeout: options.requestTimeout))
        }

        let count = options.latencyRequests
        progress("latency: \(count) requests one at a time on each path, interleaved")
        let http = try BlockingHTTPClient(port: port, timeout: options.requestTimeout)
        defer { http.close() }
        var samples: [[UInt64]] = [[], [], []]
        for _ in 0..<count {
            samples[0].append(try awaitBlocking("a direct request", timeout: options.requestTimeout) {
                let start = Instant.now()
                _ = try await directCall()
                return Instant.now().nanoseconds - start.nanoseconds
            })
            for (index, call) in [cloudVision, imageAnalysis].enumerated() {
                let start = Instant.now()
                try http.check(call)
                samples[index + 1].append(Instant.now().nanoseconds - start.nanoseconds)
            }
        }
        let names = ["direct ZeroMQ (QuireClient → broker → worker)", "gateway: Cloud Vision images:annotate (base64 JSON)",
                     "gateway: Image Analysis 4.0 (raw bytes)"]
        let paths = (0..<3).map { index -> GatewayPathReport in
            let summary = LatencySummary(nanoseconds: samples[index])
            return GatewayPathReport(path: names[index], name: ["direct", "Cloud Vision", "Image Analysis"][index], requests: total, requestsPerSecond: (Double(total) / seconds[index]).rounded(),
                                     p50Microseconds: summary.p50.rounded(), p90Microseconds: summary.p90.rounded(), p99Microseconds: summary.p99.rounded())
        }
        return GatewayBenchReport(machine: MachineInfo.current(), worker: options.ocr ? "OCR (Tesseract)" : "canned", workers: options.workers,
                                  imageBytes: image.count, resultBytes: resultBytes, connections: connections, latencyRequests: count, paths: paths)
    }

    /// Runs the gateway on a thread of its own; its port once it listens.
    static func start(_ gateway: Gateway) throws -> Int {
        let port = Mutex<Result<Int, BenchError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread {
            do {
                try gateway.run { bound in
                    port.withLock { $0 = .success(bound) }
                    ready.signal()
                }
            } catch {
                port.withLock { $0 = .failure(BenchError("the gateway did not start: \(error)")) }
                ready.signal()
            }
        }
        thread.name = "bench-gateway"
        thread.start()
        guard ready.wait(timeout: .now() + .seconds(30)) == .success, let result = port.withLock({ $0 }) else {
            throw BenchError("the gateway did not start within 30 s")
        }
        return try result.get()
    }

    /// `total` requests over `connections` keep-alive connections, one thread each; the seconds taken.
    static func httpThroughput(port: Int, call: HTTPCall, total: Int, connections: Int, timeout: Milliseconds) throws -> Double {
        let tickets = TicketCounter()
        let failure = Mutex<String?>(nil)
        let group = DispatchGroup()
        let start = Instant.now()
        for index in 0..<min(connections, total) {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                do {
                    let client = try BlockingHTTPClient(port: port, timeout: timeout)
                    defer { client.close() }
                    while failure.withLock({ $0 == nil }) && tickets.take() < total { try client.check(call) }
                } catch {
                    failure.withLock { $0 = $0 ?? String(describing: error) }
                }
            }
            thread.name = "bench-http-\(index)"
            thread.start()
        }
        group.wait()
        if let message = failure.withLock({ $0 }) { throw BenchError(message) }
        return max(Instant.now().seconds(since: start), 1e-9)
    }

    /// A result the size of a receipt's: one page, 3 blocks of 4 lines of 6 words, with symbols.
    static func cannedResult() -> OCRResult {
        var blocks: [OCRResult.Block] = []
        var y = 20
        for b in 0..<3 {
            var lines: [OCRResult.Line] = []
            for l in 0..<4 {
                var x = 20
                var words: [OCRResult.Word] = []
                for w in 0..<6 {
                    let text = "w\(b)\(l)\(w)x"
                    var symbols: [OCRResult.Symbol] = []
                    for (i, c) in text.enumerated() {
                        let box = OCRResult.Box(x: x + i * 10, y: y, width: 9, height: 20)
                        symbols.append(OCRResult.Symbol(text: String(c), boundingBox: box, polygon: Self.polygon(box), confidence: 0.97))
                    }
                    let box = OCRResult.Box(x: x, y: y, width: text.count * 10, height: 20)
                    words.append(OCRResult.Word(text: text, boundingBox: box, polygon: Self.polygon(box), confidence: 0.95, languages: ["en"],
                                                break: w == 5 ? "line" : "space", symbols: symbols))
                    x += text.count * 10 + 12
                }
                let box = OCRResult.Box(x: 20, y: y, width: x - 32, height: 20)
                lines.append(OCRResult.Line(text: words.map(\.text).joined(separator: " "), boundingBox: box, polygon: Self.polygon(box),
                                            confidence: 0.95, languages: ["en"],
                                            baseline: OCRResult.Baseline(start: .init(x: 20, y: y + 18), end: .init(x: x - 12, y: y + 18)),
                                            direction: "ltr", words: words))
                y += 30
            }
            let box = OCRResult.Box(x: 20, y: lines[0].boundingBox.y, width: 500, height: y - lines[0].boundingBox.y)
            let paragraph = OCRResult.Paragraph(text: lines.map(\.text).joined(separator: "\n"), boundingBox: box, polygon: Self.polygon(box),
                                                confidence: 0.95, languages: ["en"], lines: lines)
            blocks.append(OCRResult.Block(text: paragraph.text, boundingBox: box, polygon: Self.polygon(box), confidence: 0.95, languages: ["en"],
                                          paragraphs: [paragraph]))
            y += 20
        }
        let text = blocks.map(\.text).joined(separator: "\n\n")
        let page = OCRResult.Page(pageNumber: 1, width: 640, height: max(480, y + 20), unit: "pixel", rotation: 0, mirrored: false, deskewAngle: 0,
                                  transform: [1, 0, 0, 0, 1, 0], recognitionScale: 1, text: text, confidence: 0.95, languages: ["en"],
                                  blocks: blocks, renderings: nil)
        return OCRResult(text: text, pages: [page], metadata: OCRResult.Metadata(
            engine: "canned", languages: ["en"], mode: "document", format: "png", pageCount: 1,
            timings: OCRResult.Timings(decodeMs: 0, recognizeMs: 0, encodeMs: 0), steps: []))
    }

    static func polygon(_ box: OCRResult.Box) -> [OCRResult.Point] {
        [.init(x: box.x, y: box.y), .init(x: box.x + box.width, y: box.y), .init(x: box.x + box.width, y: box.y + box.height),
         .init(x: box.x, y: box.y + box.height)]
    }
}

/// `ocr` answered at once with the same result, whatever the image: the gateway's cost without Tesseract's.
enum CannedOCRService {
    static func make(reply result: OCRResult) -> WorkerService {
        // The frame the OCR worker writes for this result (OCRService writes it with jsonBytes too).
        let frame = (try? result.jsonBytes()) ?? []
        return WorkerService(name: OCRService.name, requiresJSONFrame: true, runsInline: true) { Handler(frame: frame) }
    }

    final class Handler: RequestHandler {
        let frame: [UInt8]
        init(frame: [UInt8]) { self.frame = frame }
        func handle(_ request: WorkerRequest) throws -> [[UInt8]] { [frame] }
    }
}

/// One HTTP request the benchmark repeats, and a word its answer must contain.
struct HTTPCall: Sendable {
    var method: String
    var path: String
    var contentType: String
    var body: [UInt8]
    var expect: String
}

/// A minimal blocking HTTP/1.1 client on one keep-alive connection: enough to measure a server that
/// answers with `Content-Length` (libmicrohttpd always does for these responses). Used by one thread.
final class BlockingHTTPClient {
    private var fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, timeout: Milliseconds) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var limit = timeval(tv_sec: Int(timeout.value / 1_000), tv_usec: Int(timeout.value % 1_000) * 1_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let message = String(cString: strerror(errno))
            Glibc.close(fd)
            throw BenchError("connect to 127.0.0.1:\(port): \(message)")
        }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }

    /// Sends `call`, reads the answer; throws unless it is 200 and contains `call.expect`.
    func check(_ call: HTTPCall) throws {
        let (status, body) = try send(call)
        guard status == 200, body.count >= call.expect.utf8.count,
              String(decoding: body, as: UTF8.self).contains("\"\(call.expect)\"") else {
            throw BenchError("\(call.path) answered \(status): \(String(decoding: body.prefix(300), as: UTF8.self))")
        }
    }

    func send(_ call: HTTPCall) throws -> (Int, [UInt8]) {
        let answer = try exchange(call)
        return (answer.status, answer.body)
    }

    /// Sends `call` and reads the whole answer: status, header fields (names in lower case) and body.
    func exchange(_ call: HTTPCall) throws -> (status: Int, headers: [String: String], body: [UInt8]) {
        let head = "\(call.method) \(call.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: \(call.contentType)\r\nContent-Length: \(call.body.count)\r\n\r\n"
        try write(Array(head.utf8))
        try write(call.body)
        // Head.
        var end: Int?
        while end == nil {
            end = Self.find(buffer, Array("\r\n\r\n".utf8))
            if end == nil { try fill() }
        }
        guard let headEnd = end else { throw BenchError("no response head") }
        let text = String(decoding: buffer[0..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        let lines = text.components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw BenchError("bad status line: \(lines.first ?? "")") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        let length = headers["content-length"].flatMap { Int($0) } ?? 0
        while buffer.count < length { try fill() }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return (status, headers, body)
    }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw BenchError("send: \(String(cString: strerror(errno)))") }
            sent += n
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw BenchError(n == 0 ? "the gateway closed the connection" : "recv: \(String(cString: strerror(errno)))") }
            buffer += chunk[0..<n]
            return
        }
    }

    static func find(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle {
            return i
        }
        return nil
    }
}
