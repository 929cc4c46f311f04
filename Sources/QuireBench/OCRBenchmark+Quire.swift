import Dispatch
import Foundation
import QuireBroker
import QuireClient
import QuireOCR
import QuireStack
import QuireSupport
import QuireWire
import QuireWorker
import Synchronization
import Imaging
import QuireRecognition
import Tesseract
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif


extension OCRBenchmark {
    /// The request's JSON frame: the languages and the mode, the rest as the worker defaults it
    /// (nil languages: none named, the worker detects them).
    func requestFrame(languages: [String]?, fields: [OCRRequest.Fields]? = nil) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(OCRRequest(languages: languages, mode: options.mode, engine: options.engine, fields: fields)))
    }

    // MARK: - Quire

    /// One reply with one request in flight, for the breakdown.
    struct Reply: Sendable {
        let image: Int
        let nanoseconds: UInt64
        let bytes: Int
        let summary: ReplySummary?
        /// The page languages and detection steps, from a reply to a request without languages.
        var detection: DetectionSummary? = nil
        /// The other way's reply as it came (`bench fields` reads its documents).
        var frame: [UInt8]? = nil
    }

    /// The broker, the OCR workers and the client: broker and workers share one context, as in
    /// `quire up`; the client has its own, as a separate process would. Then a warm-up for each
    /// language set, until every worker has loaded its engine for it; with `--detect`, the same
    /// images again without languages, so that whatever engines detection picks for them are loaded too.
    func startQuire(_ rig: QuireRig, images: [BenchImage], warmUps: [BenchImage]) throws {
        var frames: [String: [UInt8]] = [:]
        for image in warmUps { frames[image.languageKey] = try requestFrame(languages: image.languages) }
        rig.bodies = images.map { [frames[$0.languageKey] ?? [], $0.bytes] }
        let unhinted = try requestFrame(languages: nil)
        if options.detect { rig.unhintedBodies = images.map { [unhinted, $0.bytes] } }
        rig.inFlight = 2 * options.workers
        let brokerConfiguration = BrokerConfiguration(bind: "tcp://127.0.0.1:*", requestTimeout: options.requestTimeout)
        let ocr = WorkerGroup(service: OCRService.make(configuration: options.configuration), count: options.workers, threadName: "bench-ocr-worker")
        progress("Quire: starting the broker and \(options.workers) OCR workers")
        // A minute for each OCR worker to finish the image in hand when the run ends.
        let stack: Stack
        do {
            stack = try Stack.start(StackConfiguration(broker: brokerConfiguration, workers: [ocr], workerStopTimeout: 60_000,
                                                       brokerStopTimeout: 5_000), logger: logger)
        } catch let error as StackError {
            throw BenchError("the Quire \(error)")
        }
        rig.stack = stack
        rig.stopBroker = { stack.stop() }
        let endpoint = stack.endpoint

        let clientContext = try Context()
        rig.contexts.append(clientContext)
        let client = try QuireClient(
            configuration: ClientConfiguration(broker: endpoint, timeout: options.requestTimeout, retries: 0, maxInFlight: rig.inFlight),
            context: clientContext)
        rig.clients.append(client)

        let workers = stack.workers
        let inFlight = rig.inFlight
        let rounds = warmUps.map { ($0, [frames[$0.languageKey] ?? [], $0.bytes], $0.languageKey) }
            + (options.detect ? warmUps.map { ($0, [unhinted, $0.bytes], "no languages") } : [])
        for (warmUp, warmBody, asked) in rounds {
            let warmName = warmUp.name
            let servedBefore = workers.map(\.requestsServed)
            progress("Quire: warm-up with \(warmUp.name) (\(asked)) until all \(workers.count) workers have loaded their engines")
            try awaitBlocking("Quire: the warm-up", timeout: options.phaseTimeout) {
                repeat {
                    if let ended = stack.endedWorker {
                        throw BenchError("an OCR worker stopped: \(ended.error.map { String(describing: $0) } ?? "it returned")")
                    }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for _ in 0..<inFlight {
                            group.addTask {
                                do {
                                    _ = try await client.request(service: OCRService.name, body: warmBody)
                                } catch {
                                    throw BenchError("\(warmName): \(error)")
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                } while zip(workers, servedBefore).contains(where: { $0.requestsServed == $1 })
            }
        }
    }

    /// Every image of `indices` once with 2 per worker in flight; no new one after the phase deadline.
    func quirePass(_ rig: QuireRig, images: [BenchImage], indices: [Int], problems: Problems) throws -> Tally {
        guard let client = rig.client else { throw BenchError("Quire: no client") }
        let bodies = indices.map { rig.bodies[$0] }
        let members = indices.map { images[$0] }
        let inFlight = rig.inFlight
        let stopAt = Instant.now() + options.phaseTimeout
        let hardLimit = Milliseconds(options.phaseTimeout.value + options.requestTimeout.value + 10_000)
        let servedBefore = rig.ocrWorkers.map(\.requestsServed)
        let cpu0 = CPUSnapshot.now()
        let (samples, seconds) = try awaitBlocking("Quire: the run under load", timeout: hardLimit) {
            () async throws -> ([UInt64], Double) in
            let tickets = TicketCounter()
            let samples = Locked<[UInt64]>([])
            let start = Instant.now()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<min(inFlight, bodies.count) {
                    group.addTask {
                        while true {
                            let ticket = tickets.take()
                            guard ticket < bodies.count, Instant.now() < stopAt else { return }
                            let t0 = Instant.now()
                            do {
                                _ = try await client.request(service: OCRService.name, body: bodies[ticket])
                                let elapsed = Instant.now().nanoseconds &- t0.nanoseconds
                                samples.withLock { $0.append(elapsed) }
                            } catch let error as ClientError where error.code == .cancelled {
                                throw error
                            } catch {
                                problems.add(members[ticket], "quire", String(describing: error))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            return (samples.withLock { $0 }, max(Instant.now().seconds(since: start), 1e-9))
        }
        let cpu = cpu0.until(CPUSnapshot.now())
        if samples.count < indices.count, Instant.now() >= stopAt {
            progress("Quire: stopped at the \(options.phaseTimeout.value) ms phase limit after \(samples.count) images")
        }
        var tally = Tally(samples: samples, seconds: seconds, cpu: cpu)
        tally.perWorker = zip(rig.ocrWorkers.map(\.requestsServed), servedBefore).map { $0 - $1 }
        return tally
    }

    /// Every image of `indices` once, one request in flight; the worker's timings are read from each
    /// reply off the clock. Replies and tallies are by the image's index in `images`. With `--detect`
    /// each image is also read without languages (each reply's detection is read too), right before or
    /// after its reading with them, which first alternating image by image: a page's two times are taken
    /// moments apart, so the machine's drift between two sweeps minutes apart (a shared host's other
    /// tenants; it once showed clean English pages, whose detection costs 0.2 ms, at 1.21× their time)
    /// does not pass for the detection's cost.
    func quireSequentialPass(_ rig: QuireRig, images: [BenchImage], indices: [Int], problems: Problems,
                             detect: Bool = false) throws -> (hinted: (Tally, [Reply]), unhinted: (Tally, [Reply])?) {
        guard let client = rig.client else { throw BenchError("Quire: no client") }
        let ways = detect ? [false, true] : [false]
        for way in ways {
            let source = way ? rig.unhintedBodies : rig.bodies
            guard indices.allSatisfy({ source.indices.contains($0) }) else { throw BenchError("Quire: no request for some images") }
        }
        let members = indices.map { images[$0] }
        let hinted = indices.map { rig.bodies[$0] }, unhinted = detect ? indices.map { rig.unhintedBodies[$0] } : []
        let stopAt = Instant.now() + options.phaseTimeout
        let hardLimit = Milliseconds(options.phaseTimeout.value + options.requestTimeout.value + 10_000)
        struct Timed: Sendable {
            var reply: Reply
            var withoutLanguages: Bool
            var cpu: CPUSnapshot.Usage
        }
        let timed = try awaitBlocking(detect ? "Quire: the run with and without languages" : "Quire: the run with one in flight",
                                      timeout: hardLimit) { () async throws -> [Timed] in
            var out: [Timed] = []
            let decoder = JSONDecoder()
            for ticket in indices.indices {
                for step in ways.indices {
                    let withoutLanguages = ways[(step + ticket) % ways.count]
                    let t0 = Instant.now()
                    if t0 >= stopAt { return out }
                    let cpu0 = CPUSnapshot.now()
                    let body = (withoutLanguages ? unhinted : hinted)[ticket]
                    do {
                        let reply = try await client.request(service: OCRService.name, body: body)
                        let elapsed = Instant.now().nanoseconds &- t0.nanoseconds
                        let summary = reply.first.flatMap { try? decoder.decode(ReplySummary.self, from: Data($0)) }
                        var answer = Reply(image: indices[ticket], nanoseconds: elapsed, bytes: reply.first?.count ?? 0, summary: summary)
                        if withoutLanguages {
                            answer.frame = reply.first
                            answer.detection = reply.first.flatMap { try? decoder.decode(DetectionSummary.self, from: Data($0)) }
                        }
                        out.append(Timed(reply: answer, withoutLanguages: withoutLanguages, cpu: cpu0.until(CPUSnapshot.now())))
                    } catch let error as ClientError where error.code == .cancelled {
                        throw error
                    } catch {
                        problems.add(members[ticket], withoutLanguages ? "quire-detect" : "quire-latency", String(describing: error))
                    }
                }
            }
            return out
        }
        func tally(withoutLanguages: Bool) -> (Tally, [Reply]) {
            let mine = timed.filter { $0.withoutLanguages == withoutLanguages }
            let replies = mine.map(\.reply)
            var tally = Tally(samples: replies.map(\.nanoseconds), seconds: Double(replies.reduce(0) { $0 + $1.nanoseconds }) / 1e9)
            tally.cpuSeconds = mine.reduce(0) { $0 + $1.cpu.own }
            tally.otherCPUSeconds = mine.reduce(0) { $0 + $1.cpu.others }
            for reply in replies {
                tally.texts[reply.image] = reply.summary?.text ?? ""
                tally.perImage[reply.image] = reply.nanoseconds
            }
            return (tally, replies)
        }
        return (tally(withoutLanguages: false), detect ? tally(withoutLanguages: true) : nil)
    }

    /// Medians of the one-in-flight replies: the round trip, the worker's decode and recognise times, the rest.
    static func breakdown(_ replies: [Reply]) -> OCRBenchBreakdown? {
        let timed = replies.compactMap { reply in reply.summary.map { (reply, $0) } }
        guard !timed.isEmpty else { return nil }
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        let e2e = timed.map { Double($0.0.nanoseconds) / 1e6 }
        let decode = timed.map { $0.1.metadata.timings.decodeMs }
        let recognize = timed.map { $0.1.metadata.timings.recognizeMs }
        let rest = timed.map { Double($0.0.nanoseconds) / 1e6 - $0.1.metadata.timings.decodeMs - $0.1.metadata.timings.recognizeMs }
        return OCRBenchBreakdown(
            endToEndMs: round2(median(e2e)), decodeMs: round2(median(decode)), recognizeMs: round2(median(recognize)),
            restMs: round2(median(rest)), jsonEncodeMs: nil, replyBytes: Int(median(timed.map { Double($0.0.bytes) })))
    }

    /// The parts of a reply the breakdown needs (decoding only these is cheaper than the whole result).
    struct ReplySummary: Decodable, Sendable {
        struct Metadata: Decodable, Sendable {
            struct Timings: Decodable, Sendable {
                var decodeMs: Double
                var recognizeMs: Double
            }
            var timings: Timings
        }
        var text: String
        var metadata: Metadata
    }
}

/// The Quire side of the benchmark: the client rig with the stack it measures, and the requests and
/// concurrency of its passes.
final class QuireRig: Rig {
    /// Each image's request (its languages' JSON frame, then the image), by its index in the run.
    var bodies: [[[UInt8]]] = []
    /// The same without languages (`--detect`; empty otherwise).
    var unhintedBodies: [[[UInt8]]] = []
    var inFlight = 2
    var stack: Stack?
    var client: QuireClient? { clients.first }
    var ocrWorkers: [Worker] { stack?.workers ?? [] }
}
