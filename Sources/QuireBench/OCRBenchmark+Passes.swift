import Dispatch
import Foundation
import QuireBroker
import QuireClient
import QuireOCR
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
    /// The ways of reading, in the order of the first pass; `quireUnhinted` (Quire without languages,
    /// one in flight) only with `--detect`.
    enum Step: CaseIterable { case quireLoad, quireOne, cli, raw, quireUnhinted }

    /// One pass: each way's tally, and whether other processes used the machine meanwhile.
    struct PassResult {
        var tallies: [Step: Tally] = [:]
        var replies: [Reply] = []
        /// Quire's replies without languages (`--detect`).
        var unhintedReplies: [Reply] = []
        var noisy = false
    }

    /// One method's passes added up.
    struct Tally {
        /// Per image, nanoseconds.
        var samples: [UInt64] = []
        var seconds = 0.0
        /// CPU time of this process and its children (the CLI) meanwhile.
        var cpuSeconds = 0.0
        /// CPU time of everything else on the machine meanwhile (including time the hypervisor stole).
        var otherCPUSeconds = 0.0
        /// Quire: images each worker read in this pass.
        var perWorker: [Int]?
        /// The text read from each image (by index), where this way returns it.
        var texts: [Int: String] = [:]
        /// Each image's time (by index), nanoseconds; over several passes the shortest.
        var perImage: [Int: UInt64] = [:]

        init(samples: [UInt64] = [], seconds: Double = 0, cpu: CPUSnapshot.Usage? = nil) {
            self.samples = samples
            self.seconds = seconds
            cpuSeconds = cpu?.own ?? 0
            otherCPUSeconds = cpu?.others ?? 0
        }

        var rate: Double { Double(samples.count) / max(seconds, 1e-9) }

        mutating func add(_ other: Tally) {
            samples += other.samples
            seconds += other.seconds
            cpuSeconds += other.cpuSeconds
            otherCPUSeconds += other.otherCPUSeconds
            texts.merge(other.texts) { first, _ in first }
            perImage.merge(other.perImage) { min($0, $1) }
        }

        func row(name: String, setup: String, failures: Int, images: [BenchImage]) -> OCRBenchRow {
            let summary = LatencySummary(nanoseconds: samples)
            let wall = max(seconds, 1e-9)
            let recalls = texts.compactMap { index, text in images[index].truth.map { OCRBenchmark.recall(truth: $0, text: text) } }
            return OCRBenchRow(
                name: name, setup: setup, images: samples.count, failures: failures, seconds: round3(seconds),
                imagesPerSecond: round3(Double(samples.count) / wall), cpuCores: round2(cpuSeconds / wall),
                otherCores: round2(otherCPUSeconds / wall),
                vsCLI: nil, vsRawPercent: nil,
                p50Ms: round2(summary.p50 / 1_000), p90Ms: round2(summary.p90 / 1_000), p99Ms: round2(summary.p99 / 1_000),
                oneInFlightP50Ms: nil, oneInFlightP90Ms: nil, oneInFlightRequests: nil,
                emptyResults: texts.values.filter { $0.allSatisfy(\.isWhitespace) }.count,
                wordsFoundPercent: recalls.isEmpty ? nil : round2(recalls.reduce(0, +) / Double(recalls.count) * 100))
        }
    }

    /// CPU time so far: this process with its waited-for children, and the whole machine.
    struct CPUSnapshot {
        /// This process and its waited-for children, seconds.
        let own: Double
        /// All processors busy (or stolen by the hypervisor) since boot, seconds, from /proc/stat.
        let machine: Double

        struct Usage {
            let own: Double
            let others: Double
        }

        static func now() -> CPUSnapshot {
            var mine = rusage(), children = rusage()
            _ = getrusage(RUSAGE_SELF.rawValue, &mine)
            _ = getrusage(RUSAGE_CHILDREN.rawValue, &children)
            func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
            let own = seconds(mine.ru_utime) + seconds(mine.ru_stime) + seconds(children.ru_utime) + seconds(children.ru_stime)
            return CPUSnapshot(own: own, machine: machineBusy())
        }

        /// What was used from this snapshot until `later`.
        func until(_ later: CPUSnapshot) -> Usage {
            let own = later.own - self.own
            return Usage(own: own, others: max(0, later.machine - machine - own))
        }

        /// user + nice + system + irq + softirq + steal of the `cpu` line, in seconds.
        private static func machineBusy() -> Double {
            guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
                  let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return 0 }
            let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
            guard ticks.count >= 8 else { return 0 }
            let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]
            return busy / Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
        }
    }
}

/// A value behind a lock, shareable with closures and threads.
final class Locked<Value: Sendable>: Sendable {
    let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

func round2(_ value: Double) -> Double { (value * 100).rounded() / 100 }
func round3(_ value: Double) -> Double { (value * 1_000).rounded() / 1_000 }
