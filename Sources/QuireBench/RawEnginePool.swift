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


/// `workers` threads, each with its own `Recognizer`, kept across passes and started together for
/// each one (a pass reads one set's images). Owned by the benchmark's thread; the threads share only
/// ``RawShared``.
final class RawPool {
    let shared: RawShared
    var threads: [LoopThread] = []

    /// `images` are all the run's images; each is read in `mode` with its own languages.
    init(configuration: OCRConfiguration, mode: OCRRequest.Mode, engine: OCRRequest.Engine?, images: [OCRBenchmark.BenchImage], problems: OCRBenchmark.Problems) {
        shared = RawShared(configuration: configuration, mode: mode, engine: engine, images: images, problems: problems)
    }

    /// Starts the threads; each makes its recogniser and reads each of `warmUps` once (one per
    /// language set, so that every engine is loaded before measuring).
    func start(threads count: Int, warmUps: [OCRBenchmark.BenchImage], timeout: Milliseconds) throws {
        let shared = self.shared
        for index in 0..<count {
            let go = DispatchSemaphore(value: 0)
            shared.go.append(go)
            threads.append(LoopThread(name: "bench-raw-\(index)") { shared.body(go: go, warmUps: warmUps) })
        }
        let deadline = Instant.now() + timeout
        for _ in 0..<count {
            let left = max(1, Instant.now().milliseconds(until: deadline))
            guard shared.ready.wait(timeout: .now() + .milliseconds(Int(left))) == .success else {
                throw BenchError("raw engine: the warm-up did not finish within \(timeout.value) ms")
            }
        }
        if let failure = shared.warmFailure.withLock({ $0 }) { throw BenchError("raw engine: the warm-up failed: \(failure)") }
    }

    /// Every image of `indices` once across the threads; no new one after `deadline`. Texts and
    /// times are by the image's index in the run.
    func pass(indices: [Int], deadline: Milliseconds, hardLimit: Milliseconds) throws -> OCRBenchmark.Tally {
        let start = Instant.now()
        shared.state.withLock {
            $0.indices = indices
            $0.nextTicket = 0
            $0.stopAt = start + deadline
            $0.samples = []
            $0.texts = [:]
            $0.perImage = [:]
            $0.finished = start
        }
        let cpu0 = OCRBenchmark.CPUSnapshot.now()
        for go in shared.go { go.signal() }
        let limit = start + hardLimit
        for _ in shared.go {
            let left = max(1, Instant.now().milliseconds(until: limit))
            guard shared.done.wait(timeout: .now() + .milliseconds(Int(left))) == .success else {
                throw BenchError("raw engine: a pass did not finish within \(hardLimit.value) ms")
            }
        }
        let cpu = cpu0.until(OCRBenchmark.CPUSnapshot.now())
        let (samples, texts, perImage, finished) = shared.state.withLock { ($0.samples, $0.texts, $0.perImage, $0.finished) }
        var tally = OCRBenchmark.Tally(samples: samples, seconds: max(finished.seconds(since: start), 1e-9), cpu: cpu)
        tally.texts = texts
        tally.perImage = perImage
        return tally
    }

    /// Each image's recognition scale (its first page's), by index.
    func recognitionScalesByImage() -> [Int: Double] {
        shared.results.withLock { $0 }.compactMapValues { $0.pages.first.map { ($0.recognitionScale * 100).rounded() / 100 } }
    }

    /// Smallest, median and largest recognition scale over the first results of the images of `indices`.
    func recognitionScales(indices: [Int]) -> [Double] {
        let results = shared.results.withLock { $0 }
        let scales = indices.compactMap { results[$0] }.flatMap { $0.pages.map(\.recognitionScale) }.sorted()
        guard !scales.isEmpty else { return [] }
        return [scales[0], scales[scales.count / 2], scales[scales.count - 1]].map { ($0 * 100).rounded() / 100 }
    }

    /// The median time to encode one result of the images of `indices` to JSON as the OCR handler
    /// does, on this thread.
    func medianEncodeMilliseconds(indices: [Int]) -> Double? {
        var times: [Double] = []
        let results = shared.results.withLock { $0 }
        for result in indices.compactMap({ results[$0] }) {
            let t0 = Instant.now()
            _ = try? result.jsonBytes()
            times.append(Instant.now().seconds(since: t0) * 1_000)
        }
        times.sort()
        return times.isEmpty ? nil : (times[times.count / 2] * 100).rounded() / 100
    }

    /// Lets the threads end (each after the image in hand) and waits for them.
    func stop(timeout: Milliseconds) {
        shared.state.withLock { $0.quit = true }
        for go in shared.go { go.signal() }
        for thread in threads where !thread.join(timeout: timeout) {
            shared.problems.add("", "-", "raw", "a raw engine thread did not stop within \(timeout.value) ms")
        }
        threads = []
    }
}

/// What the raw engine threads share with the benchmark's thread.
final class RawShared: @unchecked Sendable {
    // `go` is filled before the threads start and only read afterwards; everything else is Sendable.
    var go: [DispatchSemaphore] = []
    let ready = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    let configuration: OCRConfiguration
    let mode: OCRRequest.Mode
    let engine: OCRRequest.Engine?
    let images: [OCRBenchmark.BenchImage]
    let problems: OCRBenchmark.Problems
    let warmFailure = Locked<String?>(nil)
    /// The first result for each image, for timing the JSON encoding.
    let results = Locked<[Int: OCRResult]>([:])

    struct State: Sendable {
        /// The images this pass reads, by index in `images`; tickets count through them.
        var indices: [Int] = []
        var nextTicket = 0
        var stopAt = Instant(nanoseconds: 0)
        var samples: [UInt64] = []
        var texts: [Int: String] = [:]
        var perImage: [Int: UInt64] = [:]
        var finished = Instant(nanoseconds: 0)
        var quit = false
    }
    let state = Locked<State>(State())

    init(configuration: OCRConfiguration, mode: OCRRequest.Mode, engine: OCRRequest.Engine?, images: [OCRBenchmark.BenchImage], problems: OCRBenchmark.Problems) {
        self.configuration = configuration
        self.mode = mode
        self.engine = engine
        self.images = images
        self.problems = problems
    }

    /// One thread: make the recogniser, warm up, then one round of tickets per `go`.
    func body(go: DispatchSemaphore, warmUps: [OCRBenchmark.BenchImage]) {
        let recognizer = Recognizer(configuration: configuration)
        for warmUp in warmUps {
            do {
                _ = try recognizer.recognize(OCRRequest(languages: warmUp.languages, mode: mode, engine: engine), image: warmUp.bytes)
            } catch {
                warmFailure.withLock { $0 = "\(warmUp.name): \(error)" }
            }
        }
        ready.signal()
        while true {
            go.wait()
            if state.withLock({ $0.quit }) { return }
            while true {
                let (ticket, stopAt) = state.withLock { state -> (Int?, Instant) in
                    defer { state.nextTicket += 1 }
                    return (state.nextTicket < state.indices.count ? state.indices[state.nextTicket] : nil, state.stopAt)
                }
                guard let ticket, Instant.now() < stopAt else { break }
                let image = images[ticket]
                let t0 = Instant.now()
                do {
                    let result = try recognizer.recognize(OCRRequest(languages: image.languages, mode: mode, engine: engine), image: image.bytes).result
                    let elapsed = Instant.now().nanoseconds &- t0.nanoseconds
                    state.withLock {
                        $0.samples.append(elapsed)
                        $0.texts[ticket] = result.text
                        $0.perImage[ticket] = elapsed
                    }
                    results.withLock { if $0[ticket] == nil { $0[ticket] = result } }
                } catch {
                    problems.add(image, "raw", String(describing: error))
                }
            }
            let end = Instant.now()
            state.withLock { $0.finished = max($0.finished, end) }
            done.signal()
        }
    }
}
