import Foundation
import QuireClient
import QuireSupport
import QuireWire
import Synchronization
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// What `quire bench soak` runs, with every default in one place.
public struct SoakBenchOptions: Sendable, Equatable {
    /// How long the load runs.
    public var minutes: Double = 60
    /// Images, PDFs and TIFFs (files, or folders searched for them).
    public var inputs: [String] = []
    /// Clients sending one request at a time each, in turn over the four paths.
    public var clients = 3
    /// The paths the requests take, in turn.
    public var paths: [SoakPath] = SoakPath.allCases
    /// OCR worker processes (one engine each).
    public var workers = 2
    /// Restarts of the first worker, spread evenly over the run: the first with SIGTERM (it drains),
    /// the next with SIGKILL (its work in hand is lost to it and must be done again), and so on.
    public var restarts = 2
    /// One row of latencies, and of every process's last reading, this often.
    public var sampleSeconds: Double = 60
    /// One reading of every process (RSS, CPU time, open files, threads) and of the machine's CPU this
    /// often (at most `sampleSeconds`): the RSS floors and the CPU figures come from all of them.
    public var probeSeconds: Double = 10
    /// Growth is measured from this long after a process started; `nil`: a sixth of the run, at most 10 minutes.
    public var warmupMinutes: Double?
    /// The `quire` executable the processes run; `nil`: this one.
    public var executable: String?
    /// One request unanswered this long is lost.
    public var requestTimeout: Milliseconds = 600_000
    /// At the end of the warm-up, and once the load is over, every process is read after this long
    /// with nothing in flight (the load pauses for it after the warm-up): what a process holds at rest,
    /// with no request's memory in it, is what a leak raises. Past jemalloc's decay (10 s), so that what
    /// a process freed last has gone back. 0: no pause.
    public var restSeconds: Double = 20

    public init() {}

    var warmupSeconds: Double { (warmupMinutes ?? min(10, minutes / 6)) * 60 }
    var probeInterval: Double { min(probeSeconds, sampleSeconds) }
    /// The windows the run is summed up in: ten minutes, or a sixth of a shorter run.
    var windowSeconds: Double { max(sampleSeconds, min(600, minutes * 60 / 6)) }
}

/// The ways a request reaches the workers in a soak run.
public enum SoakPath: String, Sendable, Codable, CaseIterable {
    /// A Majordomo request to `ocr`, answered while the client waits.
    case zeromq
    /// A durable job (`titanic.request`; `ocr.document` for a PDF or TIFF), then its result awaited.
    case job
    /// The gateway's Cloud Vision `images:annotate` (base64 in JSON).
    case cloudVision = "cloud-vision"
    /// The gateway's Azure Read 3.2: `analyze`, then its `Operation-Location` polled (a durable job).
    case azureRead = "azure-read"

    /// The path a document (PDF, TIFF) takes instead: the synchronous paths read one page.
    func forDocument() -> SoakPath {
        switch self {
        case .zeromq, .job: .job
        case .cloudVision, .azureRead: .azureRead
        }
    }
}

/// The numbers of one `quire bench soak` run.
public struct SoakBenchReport: Sendable, Codable, Equatable {
    public var machine: MachineInfo
    public var minutes: Double
    public var clients: Int
    public var workers: Int
    public var files: Int
    public var documents: Int
    public var sampleSeconds: Double
    public var probeSeconds: Double
    public var warmupSeconds: Double
    public var restSeconds: Double
    public var paths: [PathTotals]
    public var restarts: [Restart]
    public var intervals: [Interval]
    public var windows: [Window]
    public var processes: [ProcessSummary]
    public var samples: [ProcessSample]
    public var machineSamples: [MachineSample]
    /// Every process read at rest: after the warm-up, and at the end.
    public var restSamples: [ProcessSample]
    /// The first failures and wrong answers, for the reader.
    public var problems: [String]

    /// Requests without a result: failed, timed out, or a process of the stack died.
    public var lost: Int { paths.reduce(0) { $0 + $1.failed } }
    /// Answers whose text differs from the first answer for the same file on the same path.
    public var wrong: Int { paths.reduce(0) { $0 + $1.wrong } }

    public struct PathTotals: Sendable, Codable, Equatable {
        public var path: String
        public var answered: Int
        public var wrong: Int
        public var failed: Int
        public var p50Milliseconds: Double
        public var p99Milliseconds: Double
    }

    public struct Restart: Sendable, Codable, Equatable {
        public var second: Double
        public var role: String
        public var signal: String
        /// Time until the new process served (`ocr` available with it among the workers).
        public var secondsToReplace: Double
    }

    /// Answers finished in one sampling interval (a row), or in one window of the run (ten minutes),
    /// and the CPU time spent meanwhile: a slower stretch is either more work per answer (the workers'
    /// CPU seconds per answer up) or less CPU to do it with (the machine busy with others, or its
    /// hypervisor's steal).
    public struct Interval: Sendable, Codable, Equatable {
        /// The interval's end, in seconds from the start of the load.
        public var second: Double
        public var answers: Int
        public var failed: Int
        public var p50Milliseconds: Double
        public var p99Milliseconds: Double
        /// The OCR workers' CPU time (all their processes) over the interval's length.
        public var workersCPUPercent: Double
        /// All processes of the machine, and the time its hypervisor ran others on its CPUs, as a share
        /// of all its CPUs' time.
        public var machineBusyPercent: Double
        public var stealPercent: Double
    }

    public struct Window: Sendable, Codable, Equatable {
        public var fromSecond: Double
        public var toSecond: Double
        public var answers: Int
        public var failed: Int
        public var p50Milliseconds: Double
        public var p99Milliseconds: Double
        /// The OCR workers' CPU seconds over the answers finished in the window.
        public var workerCPUSecondsPerAnswer: Double
        public var machineBusyPercent: Double
        public var stealPercent: Double
        /// Of the workers' CPU time per answer, the kernel's, and their minor page faults per answer: an
        /// allocator that hands pages back and takes them again costs here.
        public var workerSystemCPUSecondsPerAnswer: Double?
        public var workerMinorFaultsPerAnswer: Double?
        /// The median of the speed probe's readings in the window, and of the memory probe's.
        public var probeMilliseconds: Double?
        public var memoryProbeMilliseconds: Double?
    }

    /// The machine's CPU time so far (`/proc/stat`, clock ticks of all CPUs).
    public struct MachineSample: Sendable, Codable, Equatable {
        public var second: Double
        /// user, nice, system, irq and softirq.
        public var busyTicks: Int
        public var stealTicks: Int
        /// Every column but guest time (already in user).
        public var totalTicks: Int
        /// The CPU time one fixed piece of work took (``SoakBenchReport/MachineSample/speedProbe()``): a
        /// CPU slowed by what the hypervisor does beside it takes longer, where steal may show nothing.
        public var probeMilliseconds: Double?
        /// The CPU time of reads at random from memory (``SoakBenchReport/MachineSample/memoryProbe()``):
        /// slower when the host's other tenants load its memory, which neither steal nor the speed
        /// probe shows.
        public var memoryProbeMilliseconds: Double?
    }

    public struct ProcessSample: Sendable, Codable, Equatable {
        public var second: Double
        public var role: String
        /// 1 for a role's first process, 2 after its first restart, …
        public var instance: Int
        public var pid: Int32
        public var rssBytes: Int
        /// User and system CPU time since the process started.
        public var cpuSeconds: Double
        public var openFiles: Int
        public var threads: Int
        /// Of the CPU time, the kernel's (page faults, madvise, sockets); and the minor page faults so far
        /// (each a page the process touched that the kernel had to map).
        public var systemCPUSeconds: Double?
        public var minorFaults: Int?
    }

    /// One process's growth from the end of its warm-up to its last sample. A process that lived
    /// through the pause at rest is read from a row's time after the load resumed: idle, a worker
    /// hands its freed pages back, and a reading then is no floor of the process under load.
    ///
    /// A worker's RSS at one moment depends on the page it is reading (an 8 MP page holds 200–250 MB
    /// more while it is read), so one sample against another says more about the pages than about
    /// drift. The floor is what a leak raises: the lowest sample of the first window after the warm-up
    /// against the lowest of the last window (each a fifth of the samples after the warm-up, at least 2
    /// and at most ten minutes' worth).
    public struct ProcessSummary: Sendable, Codable, Equatable {
        public var role: String
        public var instance: Int
        public var fromSecond: Double
        public var toSecond: Double
        public var rssWarmBytes: Int
        public var rssEndBytes: Int
        public var rssMaxBytes: Int
        /// The last sample against the first after the warm-up.
        public var rssGrowthPercent: Double
        /// The lowest sample of the first window after the warm-up, and of the last window.
        public var rssFloorWarmBytes: Int
        public var rssFloorEndBytes: Int
        public var rssFloorGrowthPercent: Double
        /// Samples in each of the two windows.
        public var floorWindow: Int
        /// CPU time after the warm-up over the time it took.
        public var cpuPercent: Double
        public var openFilesWarm: Int
        public var openFilesEnd: Int
        public var threadsWarm: Int
        public var threadsEnd: Int
    }

    public func markdown() -> String {
        func ms(_ value: Double) -> String { value >= 10_000 ? String(format: "%.1f s", value / 1_000) : String(format: "%.0f ms", value) }
        func mb(_ bytes: Int) -> String { String(format: "%.0f", Double(bytes) / 1_048_576) }
        func clock(_ second: Double) -> String { String(format: "%d:%02d", Int(second) / 60, Int(second) % 60) }
        var lines = [
            "| soak, \(String(format: "%g", minutes)) min, \(clients) clients, \(workers) OCR workers, \(files) files (\(documents) documents) | answered | wrong | lost | p50 | p99 |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for path in paths {
            lines.append("| \(path.path) | \(path.answered) | \(path.wrong) | \(path.failed) | \(ms(path.p50Milliseconds)) | \(ms(path.p99Milliseconds)) |")
        }
        lines.append("")
        lines.append("Restarts: " + (restarts.isEmpty ? "none" : restarts.map { "\($0.role) by \($0.signal) at \(clock($0.second)) (serving again after \(String(format: "%.1f", $0.secondsToReplace)) s)" }.joined(separator: "; ")) + ".")
        lines.append("")
        // One row per interval: the answers it finished and every role's last sample in it.
        let roles = processes.map(\.role).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        func percent(_ value: Double) -> String { String(format: "%.0f", value) }
        lines.append("| until | answers | lost | p50 | p99 | " + roles.map { "\($0) RSS MB" }.joined(separator: " | ")
            + " | open files, all | threads, all | workers CPU % | machine busy % | steal % |")
        lines.append("| ---: | ---: | ---: | ---: | ---: | " + roles.map { _ in "---:" }.joined(separator: " | ") + " | ---: | ---: | ---: | ---: | ---: |")
        var previous = -Double.infinity
        for interval in intervals {
            // Each role's last reading in the interval.
            let inside = samples.filter { $0.second > previous && $0.second <= interval.second }
            let here = roles.compactMap { role in inside.last { $0.role == role } }
            let rss = roles.map { role in here.first { $0.role == role }.map { mb($0.rssBytes) } ?? "–" }
            lines.append("| \(clock(interval.second)) | \(interval.answers) | \(interval.failed) | \(ms(interval.p50Milliseconds)) | \(ms(interval.p99Milliseconds)) | "
                + rss.joined(separator: " | ") + " | \(here.reduce(0) { $0 + $1.openFiles }) | \(here.reduce(0) { $0 + $1.threads }) | "
                + "\(percent(interval.workersCPUPercent)) | \(percent(interval.machineBusyPercent)) | \(String(format: "%.1f", interval.stealPercent)) |")
            previous = interval.second
        }
        lines.append("")
        lines.append("| minutes | answers | lost | p50 | p99 | workers' CPU s per answer | of it system | minor faults per answer | machine busy % | steal % | speed probe, ms | memory probe, ms |")
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for window in windows {
            lines.append("| \(clock(window.fromSecond))–\(clock(window.toSecond)) | \(window.answers) | \(window.failed) | \(ms(window.p50Milliseconds)) | \(ms(window.p99Milliseconds)) | "
                + "\(String(format: "%.2f", window.workerCPUSecondsPerAnswer)) | \(window.workerSystemCPUSecondsPerAnswer.map { String(format: "%.3f", $0) } ?? "–") | "
                + "\(window.workerMinorFaultsPerAnswer.map { String(format: "%.0f", $0) } ?? "–") | \(percent(window.machineBusyPercent)) | \(String(format: "%.1f", window.stealPercent)) | "
                + "\(window.probeMilliseconds.map { String(format: "%.1f", $0) } ?? "–") | \(window.memoryProbeMilliseconds.map { String(format: "%.1f", $0) } ?? "–") |")
        }
        lines.append("")
        lines.append("| process | from → to | RSS after warm-up → end (max), MB | growth | RSS floor, first → last window, MB | floor growth | open files | threads | CPU % |")
        lines.append("| --- | --- | --- | ---: | --- | ---: | --- | --- | ---: |")
        for process in processes {
            lines.append("| \(process.role)\(process.instance > 1 ? " #\(process.instance)" : "") | \(clock(process.fromSecond)) → \(clock(process.toSecond)) | "
                + "\(mb(process.rssWarmBytes)) → \(mb(process.rssEndBytes)) (\(mb(process.rssMaxBytes))) | \(String(format: "%+.1f %%", process.rssGrowthPercent)) | "
                + "\(mb(process.rssFloorWarmBytes)) → \(mb(process.rssFloorEndBytes)) (\(process.floorWindow) readings each) | \(String(format: "%+.1f %%", process.rssFloorGrowthPercent)) | "
                + "\(process.openFilesWarm) → \(process.openFilesEnd) | \(process.threadsWarm) → \(process.threadsEnd) | \(percent(process.cpuPercent)) |")
        }
        let rested = processes.compactMap { process -> (String, SoakBenchReport.ProcessSample, SoakBenchReport.ProcessSample)? in
            let mine = restSamples.filter { $0.role == process.role && $0.instance == process.instance }
            guard mine.count >= 2, let first = mine.first, let last = mine.last else { return nil }
            return (process.role + (process.instance > 1 ? " #\(process.instance)" : ""), first, last)
        }
        if !rested.isEmpty {
            lines.append("")
            lines.append("| process, at rest (\(String(format: "%g", restSeconds)) s with nothing in flight) | after the warm-up (\(clock(rested[0].1.second))), MB | at the end, MB | growth |")
            lines.append("| --- | ---: | ---: | ---: |")
            for (name, first, last) in rested {
                let growth = (Double(last.rssBytes - first.rssBytes) / Double(max(1, first.rssBytes)) * 1_000).rounded() / 10
                lines.append("| \(name) | \(mb(first.rssBytes)) | \(mb(last.rssBytes)) | \(String(format: "%+.1f %%", growth)) |")
            }
        }
        if !problems.isEmpty {
            lines.append("")
            lines.append("Problems:")
            lines += problems.map { "- " + $0 }
        }
        lines.append("")
        lines.append("Warm-up: \(String(format: "%.0f", warmupSeconds)) s of each process; every process read every \(String(format: "%g", probeSeconds)) s. "
            + "Machine: \(machine.summary).")
        return lines.joined(separator: "\n")
    }

    public func json() -> String { benchJSON(self) }
}

extension SoakBenchReport.MachineSample {
    /// The first line of `/proc/stat` now, and the speed probe.
    static func read(at second: Double) -> Self? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        var sample = parse(stat, at: second)
        sample?.probeMilliseconds = speedProbe()
        sample?.memoryProbeMilliseconds = memoryProbe()
        return sample
    }

    /// The thread CPU time of 200,000 dependent reads at random over 64 MiB: each one a cache miss
    /// (past any L3 this VM is given a share of) and mostly a TLB miss. Where ``speedProbe()`` keeps to
    /// its core's own cache, this one waits on the memory the host's other tenants share, which a
    /// stalled core spends as CPU time.
    static func memoryProbe() -> Double? {
        threadCPUMilliseconds {
            var at: UInt32 = 0
            probeCycle.withUnsafeBufferPointer { next in
                for _ in 0..<200_000 { at = next[Int(at)] }
            }
            return UInt64(at)
        }
    }

    /// The thread CPU time of a fixed piece of integer and cache work (xorshift over 256 KiB, 6.5 million
    /// steps, 10-20 ms on the machines measured): wall time would count the waits for a core the stack
    /// keeps busy; CPU time counts only how fast the core ran the work (its clock, what shares it).
    static func speedProbe() -> Double? {
        var buffer = [UInt64](repeating: 0, count: 32_768)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return threadCPUMilliseconds {
            buffer.withUnsafeMutableBufferPointer { words in
                for _ in 0..<200 {
                    for index in words.indices { words[index] &+= xorshift(&state) }
                }
            }
            return buffer.reduce(0, &+)
        }
    }

    /// The CPU time this thread spent on `work`, in milliseconds to the microsecond. What the work
    /// returns is kept, so that the compiler cannot take it for dead code.
    private static func threadCPUMilliseconds(_ work: () -> UInt64) -> Double? {
        var before = timespec(), after = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &before) == 0 else { return nil }
        let result = work()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &after) == 0 else { return nil }
        probeSink.store(result, ordering: .relaxed)
        let milliseconds = Double(after.tv_sec - before.tv_sec) * 1e3 + Double(after.tv_nsec - before.tv_nsec) / 1e6
        return (milliseconds * 1_000).rounded() / 1_000
    }

    /// `cpu  user nice system idle iowait irq softirq steal guest guest_nice` (ticks); guest time is
    /// counted in user already.
    static func parse(_ stat: String, at second: Double) -> Self? {
        guard let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard ticks.count >= 8 else { return nil }
        return .init(second: second, busyTicks: ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6], stealTicks: ticks[7],
                     totalTicks: ticks[0..<8].reduce(0, +))
    }
}

private let probeSink = Atomic<UInt64>(0)

/// One cycle through all 16 Mi entries (Sattolo's shuffle, a fixed seed): following it from any entry
/// visits every other before coming back, in an order no prefetcher guesses. Made on the first probe.
private let probeCycle: [UInt32] = {
    var next = [UInt32](unsafeUninitializedCapacity: 1 << 24) { buffer, count in
        for index in 0..<buffer.count { buffer[index] = UInt32(index) }
        count = buffer.count
    }
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    for index in stride(from: next.count - 1, to: 0, by: -1) {
        next.swapAt(index, Int(xorshift(&state) % UInt64(index)))
    }
    return next
}()

/// Marsaglia's xorshift64 step (13, 7, 17): the probes' fixed pseudo-random sequence.
private func xorshift(_ state: inout UInt64) -> UInt64 {
    state ^= state << 13
    state ^= state >> 7
    state ^= state << 17
    return state
}

extension SoakBenchReport.Interval {
    /// The OCR workers' CPU seconds between `from` and `to` (every worker process read in that time, each
    /// from its last reading at or before `from`, or its first after it, to its last at or before `to`),
    /// and the machine's busy and steal shares of its CPU time, in percent.
    static func cpu(from: Double, to: Double, samples: [SoakBenchReport.ProcessSample], machine: [SoakBenchReport.MachineSample])
        -> (workerSeconds: Double, workers: Double, busy: Double, steal: Double) {
        let seconds = workers(\.cpuSeconds, from: from, to: to, samples: samples)
        let length = max(to - from, 1e-9)
        let start = machine.last { $0.second <= from } ?? machine.first, end = machine.last { $0.second <= to }
        var busy = 0.0, steal = 0.0
        if let start, let end, end.totalTicks > start.totalTicks {
            let total = Double(end.totalTicks - start.totalTicks)
            busy = Double(end.busyTicks - start.busyTicks) / total * 100
            steal = Double(end.stealTicks - start.stealTicks) / total * 100
        }
        return (seconds, seconds / length * 100, busy, steal)
    }

    /// How much a count of the OCR workers' (CPU time, page faults) rose between `from` and `to`, over
    /// every worker process read in that time: each from its last reading at or before `from`, or its
    /// first after it, to its last at or before `to`.
    static func workers(_ count: (SoakBenchReport.ProcessSample) -> Double?, from: Double, to: Double, samples: [SoakBenchReport.ProcessSample]) -> Double {
        var first: [Int32: Double] = [:], last: [Int32: Double] = [:]
        for sample in samples where sample.role.hasPrefix("worker") && sample.second <= to {
            guard let value = count(sample) else { continue }
            if sample.second <= from || first[sample.pid] == nil { first[sample.pid] = value }
            last[sample.pid] = value
        }
        return last.reduce(0) { sum, entry in sum + entry.value - (first[entry.key] ?? entry.value) }
    }
}

extension SoakBenchReport.ProcessSummary {
    /// The summary of one process's samples (in time order) from the first at or past `warmFrom` seconds;
    /// a floor's window holds at most `maxWindow` samples.
    init(role: String, instance: Int, samples: [SoakBenchReport.ProcessSample], warmFrom: Double, maxWindow: Int = 10) {
        let warmIndex = samples.firstIndex { $0.second >= warmFrom } ?? 0
        let after = Array(samples[warmIndex...])
        let warm = after[0], end = after[after.count - 1]
        let window = min(maxWindow, max(2, after.count / 5), after.count)
        func growth(_ from: Int, _ to: Int) -> Double { (Double(to - from) / Double(max(1, from)) * 1_000).rounded() / 10 }
        let floorWarm = after.prefix(window).map(\.rssBytes).min() ?? warm.rssBytes
        let floorEnd = after.suffix(window).map(\.rssBytes).min() ?? end.rssBytes
        self.init(role: role, instance: instance, fromSecond: warm.second, toSecond: end.second,
                  rssWarmBytes: warm.rssBytes, rssEndBytes: end.rssBytes, rssMaxBytes: after.map(\.rssBytes).max() ?? end.rssBytes,
                  rssGrowthPercent: growth(warm.rssBytes, end.rssBytes),
                  rssFloorWarmBytes: floorWarm, rssFloorEndBytes: floorEnd, rssFloorGrowthPercent: growth(floorWarm, floorEnd), floorWindow: window,
                  cpuPercent: end.second > warm.second ? ((end.cpuSeconds - warm.cpuSeconds) / (end.second - warm.second) * 1_000).rounded() / 10 : 0,
                  openFilesWarm: warm.openFiles, openFilesEnd: end.openFiles, threadsWarm: warm.threads, threadsEnd: end.threads)
    }
}

/// `quire bench soak`: the stack as separate processes (a broker with a job store, OCR workers, the
/// gateway), clients sending pages, photos and documents over ZeroMQ and through the gateway for
/// minutes, the first worker restarted on the way; every process's RSS, open files and threads
/// sampled, every answer checked against the first one for the same file on the same path.
public final class SoakBenchmark: Sendable {
    public let options: SoakBenchOptions
    private let logger: Logger
    private let progress: @Sendable (String) -> Void
    private let children = ChildRegistry()

    public init(options: SoakBenchOptions, logger: Logger, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.options = options
        self.logger = logger
        self.progress = progress
    }

    /// For a signal handler: kills the stack's processes.
    public func killSubprocesses() { children.killAll() }

    /// The image and document files under `inputs`, sorted; folders are searched (hidden files skipped).
    public static func files(_ inputs: [String]) throws -> [String] {
        let kinds: Set<String> = ["png", "jpg", "jpeg", "tif", "tiff", "pdf", "webp", "bmp", "gif", "heic", "heif", "pnm", "pbm", "pgm", "ppm"]
        var found: [String] = []
        for input in inputs {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory) else { throw BenchError("\(input): no such file or folder") }
            if !isDirectory.boolValue {
                found.append(input)
                continue
            }
            let walker = FileManager.default.enumerator(atPath: input)
            var here: [String] = []
            while let name = walker?.nextObject() as? String {
                let path = (input as NSString).appendingPathComponent(name)
                if name.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
                if kinds.contains((name as NSString).pathExtension.lowercased()) { here.append(path) }
            }
            found += here.sorted()
        }
        guard !found.isEmpty else { throw BenchError("no image, PDF or TIFF among \(inputs.joined(separator: " "))") }
        return found
    }

    public func run() throws -> SoakBenchReport {
        let paths = try Self.files(options.inputs)
        let files = try paths.map { path -> SoakFile in
            guard let data = FileManager.default.contents(atPath: path) else { throw BenchError("cannot read \(path)") }
            let bytes = [UInt8](data)
            return SoakFile(name: path, bytes: bytes, document: OCRServiceName.forJob(bytes) == OCRServiceName.document)
        }
        let executable = options.executable ?? SoakStack.thisExecutable
        let directory = NSTemporaryDirectory() + "quire-bench-soak-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let brokerPort = try freeLoopbackPort()
        let gatewayPort = try freeLoopbackPort()
        let endpoint = "tcp://127.0.0.1:\(brokerPort)"
        let stack = SoakStack(executable: executable, registry: children, arguments: [
            "broker": ["broker", "--bind", endpoint, "--auth", "off", "--data", directory, "--request-timeout-ms", "\(options.requestTimeout.value)"],
            "gateway": ["gateway", "--listen", "127.0.0.1:\(gatewayPort)", "--broker", endpoint, "--timeout-ms", "\(options.requestTimeout.value)"],
            "worker": ["worker", "ocr", "--broker", endpoint, "--threads", "1"],
        ])
        defer { stack.stopAll() }
        progress("starting a broker, \(options.workers) OCR workers and the gateway (\(executable))")
        try stack.start("broker", as: "broker")
        try waitUntil("the broker listens", timeout: 30_000) { loopbackPortAccepts(brokerPort) }
        for index in 1...options.workers { try stack.start("worker", as: "worker-\(index)") }
        try stack.start("gateway", as: "gateway")
        try waitUntil("the gateway listens", timeout: 30_000) { loopbackPortAccepts(gatewayPort) }

        let context = try Context()
        defer { context.shutdown() }
        // No resending: a request sent twice would hide one the stack lost.
        let client = try QuireClient(configuration: ClientConfiguration(broker: endpoint, timeout: options.requestTimeout, retries: 0,
                                                                         maxInFlight: options.clients * 2),
                                     context: context)
        defer { _ = blockingAwait { await client.close() } }
        try stack.waitForWorkers(client)

        let load = SoakLoad(files: files, paths: options.paths, client: client, gatewayPort: gatewayPort, timeout: options.requestTimeout)
        let start = Instant.now()
        let seconds = options.minutes * 60
        progress("\(options.clients) clients over \(files.count) files for \(String(format: "%g", options.minutes)) min; a row every \(String(format: "%g", options.sampleSeconds)) s, "
                 + "every process read every \(String(format: "%g", options.probeInterval)) s")
        let threads = (0..<options.clients).map { index in
            let thread = Thread { load.client(from: start, until: start + Milliseconds(Int64(seconds * 1_000))) }
            thread.name = "soak-client-\(index)"
            thread.stackSize = 1 << 20
            return thread
        }
        threads.forEach { $0.start() }

        var samples: [SoakBenchReport.ProcessSample] = []
        var machine: [SoakBenchReport.MachineSample] = []
        var rows: [Double] = []
        var restarts: [SoakBenchReport.Restart] = []
        let restartTimes = (1...max(1, options.restarts)).prefix(options.restarts).map { seconds * Double($0) / Double(options.restarts + 1) }
        let probe = options.probeInterval
        var nextProbe = 0.0
        var nextSample = options.sampleSeconds
        var nextRestart = 0
        var rested: [SoakBenchReport.ProcessSample] = []
        var restedWarm = options.restSeconds <= 0
        var resumed: Double?
        func readAtRest() throws {
            Thread.sleep(forTimeInterval: options.restSeconds)
            let at = (Instant.now().seconds(since: start) * 10).rounded() / 10
            rested += stack.sample(at: at) + [SoakStack.sample(role: "bench", instance: 1, pid: getpid(), at: at)].compactMap { $0 }
        }
        while true {
            let now = Instant.now().seconds(since: start)
            if !restedWarm, now >= options.warmupSeconds, now < seconds {
                restedWarm = true
                progress("the warm-up is over: the load pauses for a reading at rest")
                guard load.pause(timeout: options.requestTimeout) else { throw BenchError("requests still in flight \(options.requestTimeout.value) ms after the load paused") }
                try readAtRest()
                load.resume()
                resumed = Instant.now().seconds(since: start)
                continue
            }
            if nextRestart < restartTimes.count, now >= restartTimes[nextRestart] {
                let signal = nextRestart % 2 == 0 ? SIGTERM : SIGKILL
                let name = signal == SIGTERM ? "SIGTERM" : "SIGKILL"
                progress("restarting worker-1 with \(name)")
                let began = Instant.now()
                try stack.restart("worker-1", signal: signal)
                try stack.waitForWorkers(client)
                restarts.append(.init(second: now, role: "worker-1", signal: name, secondsToReplace: Instant.now().seconds(since: began)))
                nextRestart += 1
                continue
            }
            if now >= nextProbe || now >= nextSample || now >= seconds {
                let at = (now * 10).rounded() / 10
                let taken = stack.sample(at: at) + [SoakStack.sample(role: "bench", instance: 1, pid: getpid(), at: at)].compactMap { $0 }
                samples += taken
                if let reading = SoakBenchReport.MachineSample.read(at: at) { machine.append(reading) }
                // After a restart that took longer than an interval, the next one interval on.
                nextProbe = max(nextProbe + probe, now + probe)
                if now >= nextSample || now >= seconds {
                    rows.append(at)
                    let row = SoakBenchReport.Interval.cpu(from: rows.dropLast().last ?? 0, to: at, samples: samples, machine: machine)
                    progress(load.summary(since: nextSample - options.sampleSeconds, start: start)
                        + " · RSS MB " + taken.map { "\($0.role) \($0.rssBytes / 1_048_576)" }.joined(separator: ", ")
                        + String(format: " · CPU %% workers %.0f, machine %.0f, steal %.1f", row.workers, row.busy, row.steal)
                        + ((machine.last?.probeMilliseconds).map { String(format: ", probe %.1f ms", $0) } ?? "")
                        + ((machine.last?.memoryProbeMilliseconds).map { String(format: ", memory probe %.1f ms", $0) } ?? ""))
                    if let dead = stack.deadRole() { load.note("\(dead) exited during the run:\n\(stack.outputTail(dead))") }
                    nextSample = max(nextSample + options.sampleSeconds, now + options.sampleSeconds)
                    if now >= seconds { break }
                }
                continue
            }
            let wake = min(nextProbe, nextSample, restartTimes.dropFirst(nextRestart).first ?? .infinity, seconds)
            usleep(UInt32(max(0.01, min(1, wake - now)) * 1_000_000))
        }
        progress("the load stops; waiting for the requests in flight")
        threads.forEach { thread in while !thread.isFinished { usleep(50_000) } }
        if options.restSeconds > 0 {
            progress("reading every process at rest")
            try readAtRest()
        }
        if let dead = stack.deadRole() { load.note("\(dead) exited during the run:\n\(stack.outputTail(dead))") }
        return load.report(start: start, options: options, rows: rows, samples: samples, machine: machine, rested: rested, resumed: resumed,
                           restarts: restarts, documents: files.filter(\.document).count)
    }

}

/// Waits until `condition` holds, looking every 100 ms; past `timeout`, throws naming `what`.
func waitUntil(_ what: String, timeout: Milliseconds, _ condition: () -> Bool) throws {
    let deadline = Instant.now() + timeout
    while !condition() {
        guard Instant.now() < deadline else { throw BenchError("\(what): not within \(timeout.value) ms") }
        usleep(100_000)
    }
}

/// One input file.
struct SoakFile: Sendable {
    var name: String
    var bytes: [UInt8]
    var document: Bool
}

/// The stack's processes by role (`broker`, `gateway`, `worker-N`), each role's restarts counted.
final class SoakStack: @unchecked Sendable {
    private let executable: String
    private let registry: ChildRegistry
    private let arguments: [String: [String]]
    private let lock = NSLock()
    private var running: [String: (child: ChildProcess, kind: String, instance: Int)] = [:]

    init(executable: String, registry: ChildRegistry, arguments: [String: [String]]) {
        self.executable = executable
        self.registry = registry
        self.arguments = arguments
    }

    func start(_ kind: String, as role: String, instance: Int = 1) throws {
        // One engine thread per worker process, as `quire up` runs them (Tesseract's OpenMP off).
        let child = try ChildProcess(executable: executable, arguments: (arguments[kind] ?? []) + ["--log-level", "info"],
                                     environment: ["OMP_THREAD_LIMIT": "1"])
        registry.add(child)
        lock.withLock { running[role] = (child, kind, instance) }
    }

    /// Stops `role` with `signal` (SIGTERM: it drains; SIGKILL: its work in hand is lost to it), then starts it again.
    func restart(_ role: String, signal: Int32) throws {
        guard let old = lock.withLock({ running[role] }) else { throw BenchError("no process \(role)") }
        kill(old.child.pid, signal)
        guard old.child.waitForExit(timeout: 60_000) else { throw BenchError("\(role) did not exit within 60 s of \(signal == SIGKILL ? "SIGKILL" : "SIGTERM")") }
        registry.remove(pid: old.child.pid)
        old.child.stop(grace: 0)
        try start(old.kind, as: role, instance: old.instance + 1)
    }

    /// The running executable (`/proc/self/exe`), which the stack's processes run by default.
    static var thisExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Waits until every worker process has an engine serving `ocr` (their count in the broker's
    /// readiness is not public, so: the workers say `worker ready` in their logs) and `ocr` is available.
    func waitForWorkers(_ client: QuireClient) throws {
        try waitUntil("the OCR workers serve", timeout: 120_000) {
            workersReady() && (try? awaitBlocking("mmi.service", timeout: 5_000) { try await client.availability(of: OCRServiceName.page, timeout: 2_000) }) == .available
        }
    }

    /// Every worker process has logged that it is ready.
    func workersReady() -> Bool {
        lock.withLock { running.filter { $0.key.hasPrefix("worker") }.values.allSatisfy { $0.child.outputTail(lines: 200).contains("worker ready") } }
    }

    /// The first role whose process is no longer running.
    func deadRole() -> String? {
        lock.withLock { running.sorted { $0.key < $1.key }.first { !$0.value.child.isRunning }?.key }
    }

    func outputTail(_ role: String) -> String { lock.withLock { running[role]?.child.outputTail(lines: 20) ?? "" } }

    func sample(at second: Double) -> [SoakBenchReport.ProcessSample] {
        let now = lock.withLock { running.sorted { Self.order($0.key) < Self.order($1.key) } }
        return now.compactMap { Self.sample(role: $0.key, instance: $0.value.instance, pid: $0.value.child.pid, at: second) }
    }

    private static func order(_ role: String) -> String {
        role == "broker" ? "0" : role == "gateway" ? "1" : "2" + role
    }

    /// RSS (`/proc/PID/statm`), CPU time (`/proc/PID/stat`), open files (`/proc/PID/fd`) and threads
    /// (`/proc/PID/status`) of one process.
    static func sample(role: String, instance: Int, pid: Int32, at second: Double) -> SoakBenchReport.ProcessSample? {
        guard let statm = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8),
              let rss = ProcessMemory.residentBytes(statm: statm, pageSize: Int(sysconf(Int32(_SC_PAGESIZE)))),
              let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let cpu = cpuTimes(stat: stat, ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK)))),
              let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let files = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return nil }
        let threads = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }.flatMap { Int($0.dropFirst(8).trimmingCharacters(in: .whitespaces)) } ?? 0
        return .init(second: (second * 10).rounded() / 10, role: role, instance: instance, pid: pid, rssBytes: rss, cpuSeconds: cpu.user + cpu.system,
                     openFiles: files.count, threads: threads, systemCPUSeconds: cpu.system, minorFaults: cpu.minorFaults)
    }

    /// User and system CPU seconds (utime, stime) and minor page faults of a `/proc/PID/stat` line. The
    /// command name (field 2) is in parentheses and may hold spaces and parentheses itself, so fields are
    /// counted from the last `)`.
    static func cpuTimes(stat: String, ticksPerSecond: Double) -> (user: Double, system: Double, minorFaults: Int)? {
        guard let close = stat.lastIndex(of: ")"), ticksPerSecond > 0 else { return nil }
        // After the name: state (field 3), ppid, …, minflt (field 10), …, utime (field 14), stime (field 15).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let faults = Int(fields[7]), let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user / ticksPerSecond, system / ticksPerSecond, faults)
    }

    func stopAll() {
        let all = lock.withLock { running }
        // The gateway and the workers first, then the broker.
        for (_, entry) in all.sorted(by: { Self.order($0.key) > Self.order($1.key) }) {
            entry.child.stop(grace: 10_000)
            registry.remove(pid: entry.child.pid)
        }
    }
}

/// The clients' loop and every answer they got.
final class SoakLoad: Sendable {
    struct Answer: Sendable {
        var second: Double
        var path: SoakPath
        var milliseconds: Double
        var outcome: Outcome
    }

    enum Outcome: Sendable, Equatable {
        case right
        case wrong
        case failed
    }

    let files: [SoakFile]
    let paths: [SoakPath]
    let client: QuireClient
    let gatewayPort: Int
    let timeout: Milliseconds
    private let tickets = TicketCounter()
    private let answers = Mutex<[Answer]>([])
    /// The first answer's text for each path and file: every later answer must be the same.
    private let references = Mutex<[String: String]>([:])
    private let problems = Mutex<[String]>([])
    /// Whether the clients wait before their next request, and how many requests are in flight.
    private let gate = Mutex<(paused: Bool, inFlight: Int)>((false, 0))

    init(files: [SoakFile], paths: [SoakPath], client: QuireClient, gatewayPort: Int, timeout: Milliseconds) {
        self.files = files
        self.paths = paths
        self.client = client
        self.gatewayPort = gatewayPort
        self.timeout = timeout
    }

    /// Holds the clients before their next request and waits until none is in flight; false if some
    /// still are after `timeout`.
    func pause(timeout: Milliseconds) -> Bool {
        gate.withLock { $0.paused = true }
        let deadline = Instant.now() + timeout
        while gate.withLock({ $0.inFlight }) > 0 {
            if Instant.now() >= deadline { return false }
            usleep(20_000)
        }
        return true
    }

    func resume() { gate.withLock { $0.paused = false } }

    func note(_ problem: String) {
        problems.withLock { if $0.count < 20 { $0.append(problem) } }
    }

    /// One client: requests one at a time until `deadline`, each on the next path with the next file.
    func client(from start: Instant, until deadline: Instant) {
        var http: BlockingHTTPClient?
        var lastHTTP = Instant.now()
        while Instant.now() < deadline {
            guard gate.withLock({ gate in
                if gate.paused { return false }
                gate.inFlight += 1
                return true
            }) else {
                usleep(20_000)
                continue
            }
            defer { gate.withLock { $0.inFlight -= 1 } }
            let ticket = tickets.take()
            // Path by ticket, file by round over the paths: each file goes every way in turn.
            let file = files[(ticket / paths.count) % files.count]
            var path = paths[ticket % paths.count]
            if file.document { path = path.forDocument() }
            let began = Instant.now()
            var outcome = Outcome.failed
            do {
                let text: String
                switch path {
                case .zeromq: text = try recognize(file)
                case .job: text = try job(file)
                case .cloudVision, .azureRead:
                    // The gateway closes a connection idle for 30 s: one idle for 20 s is replaced first, as
                    // a client's pool would, so that its close is not taken for a lost request.
                    if http != nil && Instant.now().seconds(since: lastHTTP) > 20 {
                        http?.close()
                        http = nil
                    }
                    if http == nil { http = try BlockingHTTPClient(port: gatewayPort, timeout: timeout) }
                    defer { lastHTTP = Instant.now() }
                    guard let connection = http else { continue }
                    text = path == .cloudVision ? try cloudVision(file, connection) : try azureRead(file, connection)
                }
                let key = path.rawValue + "|" + file.name
                let reference = references.withLock { known in
                    if let text = known[key] { return text }
                    known[key] = text
                    return text
                }
                outcome = reference == text ? .right : .wrong
                if outcome == .wrong {
                    note("\(path.rawValue) \(file.name): the text differs from the first answer (\(reference.count) → \(text.count) characters)")
                }
            } catch {
                note("\(path.rawValue) \(file.name): \(error)")
                http?.close()
                http = nil
            }
            let answer = Answer(second: Instant.now().seconds(since: start), path: path,
                                milliseconds: Instant.now().seconds(since: began) * 1_000, outcome: outcome)
            answers.withLock { $0.append(answer) }
        }
        http?.close()
    }

    private func recognize(_ file: SoakFile) throws -> String {
        let request = OCRRequest().jsonBytes()
        let reply = try awaitBlocking("an ocr request", timeout: Milliseconds(timeout.value + 5_000)) { [client] in
            try await client.request(service: OCRServiceName.page, body: [request, file.bytes])
        }
        return try Self.text(ofResult: reply.first ?? [])
    }

    private func job(_ file: SoakFile) throws -> String {
        let request = OCRRequest().jsonBytes()
        let service = OCRServiceName.forJob(file.bytes)
        let reply = try awaitBlocking("a durable job", timeout: Milliseconds(timeout.value + 5_000)) { [client, timeout] () async throws -> JobReply<[[UInt8]]> in
            let id = try await client.jobs.submit(service: service, body: [request, file.bytes])
            let deadline = Instant.now() + timeout
            while true {
                let reply = try await client.jobs.result(of: id, wait: 30_000)
                if case .pending = reply, Instant.now() < deadline { continue }
                _ = try? await client.jobs.close(id)
                return reply
            }
        }
        switch reply {
        case .done(let frames): return try Self.text(ofResult: frames.first ?? [])
        case .failed(let error), .ended(let error): throw BenchError("the job failed: \(error)")
        case .pending: throw BenchError("the job did not finish within \(timeout.value) ms")
        case .unknown(let error): throw BenchError("the job is unknown: \(error.map { "\($0)" } ?? "")")
        }
    }

    private func cloudVision(_ file: SoakFile, _ http: BlockingHTTPClient) throws -> String {
        let body = #"{"requests":[{"image":{"content":""# + Data(file.bytes).base64EncodedString() + #""},"features":[{"type":"DOCUMENT_TEXT_DETECTION"}]}]}"#
        let answer = try http.exchange(HTTPCall(method: "POST", path: "/v1/images:annotate", contentType: "application/json", body: Array(body.utf8), expect: ""))
        guard answer.status == 200, let object = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
              let response = (object["responses"] as? [[String: Any]])?.first else {
            throw BenchError("images:annotate answered \(answer.status): \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
        }
        if let error = response["error"] { throw BenchError("images:annotate: \(error)") }
        return ((response["fullTextAnnotation"] as? [String: Any])?["text"] as? String) ?? ""
    }

    private func azureRead(_ file: SoakFile, _ http: BlockingHTTPClient) throws -> String {
        let posted = try http.exchange(HTTPCall(method: "POST", path: "/vision/v3.2/read/analyze", contentType: "application/octet-stream", body: file.bytes, expect: ""))
        guard posted.status == 202, let location = posted.headers["operation-location"], let url = URL(string: location) else {
            throw BenchError("read/analyze answered \(posted.status): \(String(decoding: posted.body.prefix(300), as: UTF8.self))")
        }
        let deadline = Instant.now() + timeout
        while Instant.now() < deadline {
            let polled = try http.exchange(HTTPCall(method: "GET", path: url.path, contentType: "application/json", body: [], expect: ""))
            guard polled.status == 200, let object = try? JSONSerialization.jsonObject(with: Data(polled.body)) as? [String: Any],
                  let status = object["status"] as? String else {
                throw BenchError("analyzeResults answered \(polled.status): \(String(decoding: polled.body.prefix(300), as: UTF8.self))")
            }
            switch status {
            case "succeeded":
                let pages = ((object["analyzeResult"] as? [String: Any])?["readResults"] as? [[String: Any]]) ?? []
                return pages.map { page in ((page["lines"] as? [[String: Any]]) ?? []).compactMap { $0["text"] as? String }.joined(separator: "\n") }
                    .joined(separator: "\n\u{0C}\n")
            case "failed": throw BenchError("the read operation failed: \(String(decoding: polled.body.prefix(300), as: UTF8.self))")
            default: usleep(200_000)
            }
        }
        throw BenchError("the read operation did not finish within \(timeout.value) ms")
    }

    /// The `text` of an `ocr` result (a document's too).
    static func text(ofResult frame: [UInt8]) throws -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(frame)) as? [String: Any], let text = object["text"] as? String else {
            throw BenchError("a reply that is not an OCR result: \(String(decoding: frame.prefix(300), as: UTF8.self))")
        }
        return text
    }

    /// One progress line: the answers since `from` seconds.
    func summary(since from: Double, start: Instant) -> String {
        let all = answers.withLock { $0 }
        let recent = all.filter { $0.second >= from }
        let latency = LatencySummary(nanoseconds: recent.map { UInt64($0.milliseconds * 1e6) })
        return String(format: "%d:%02d ", Int(Instant.now().seconds(since: start)) / 60, Int(Instant.now().seconds(since: start)) % 60)
            + "\(recent.count) answers (\(all.filter { $0.outcome == .failed }.count) lost, \(all.filter { $0.outcome == .wrong }.count) wrong so far), "
            + String(format: "p50 %.0f ms, p99 %.0f ms", latency.p50 / 1_000, latency.p99 / 1_000)
    }

    /// The latencies of the answers that were answered (a lost one's time is its timeout).
    static func latency(_ answers: [Answer]) -> LatencySummary {
        LatencySummary(nanoseconds: answers.filter { $0.outcome != .failed }.map { UInt64($0.milliseconds * 1e6) })
    }

    func report(start: Instant, options: SoakBenchOptions, rows: [Double], samples: [SoakBenchReport.ProcessSample],
                machine: [SoakBenchReport.MachineSample], rested: [SoakBenchReport.ProcessSample], resumed: Double? = nil,
                restarts: [SoakBenchReport.Restart], documents: Int) -> SoakBenchReport {
        let all = answers.withLock { $0 }
        // The paths asked for, and those the documents took instead (a PDF goes as a job).
        let taken = SoakPath.allCases.filter { path in self.paths.contains(path) || all.contains { $0.path == path } }
        let paths = taken.map { path -> SoakBenchReport.PathTotals in
            let mine = all.filter { $0.path == path }
            let latency = Self.latency(mine)
            return .init(path: path.rawValue, answered: mine.filter { $0.outcome != .failed }.count, wrong: mine.filter { $0.outcome == .wrong }.count,
                         failed: mine.filter { $0.outcome == .failed }.count, p50Milliseconds: (latency.p50 / 1_000).rounded(), p99Milliseconds: (latency.p99 / 1_000).rounded())
        }
        // Answers by when they finished: those finished after the last row (the requests in flight when the
        // load stopped) count in the last row and window.
        func finished(from: Double, to: Double) -> [Answer] {
            all.filter { $0.second >= from && $0.second < (to == rows.last ? .infinity : to) }
        }
        // What one stretch of the run sums up to: its answers, lost ones, latencies (of those answered)
        // and the CPU (``SoakBenchReport/Interval/cpu(from:to:samples:machine:)``), rounded as reported.
        func stretch(from: Double, to end: Double) -> (answers: Int, failed: Int, p50: Double, p99: Double, workerSeconds: Double,
                                                       workersPercent: Double, busyPercent: Double, stealPercent: Double) {
            let here = finished(from: from, to: end)
            let latency = Self.latency(here)
            let cpu = SoakBenchReport.Interval.cpu(from: from, to: end, samples: samples, machine: machine)
            func tenths(_ value: Double) -> Double { (value * 10).rounded() / 10 }
            return (here.count, here.filter { $0.outcome == .failed }.count, (latency.p50 / 1_000).rounded(), (latency.p99 / 1_000).rounded(),
                    cpu.workerSeconds, tenths(cpu.workers), tenths(cpu.busy), tenths(cpu.steal))
        }
        var intervals: [SoakBenchReport.Interval] = []
        var from = 0.0
        for end in rows {
            let sum = stretch(from: from, to: end)
            intervals.append(.init(second: end, answers: sum.answers, failed: sum.failed, p50Milliseconds: sum.p50, p99Milliseconds: sum.p99,
                                   workersCPUPercent: sum.workersPercent, machineBusyPercent: sum.busyPercent, stealPercent: sum.stealPercent))
            from = end
        }
        // Windows of whole rows: each ends at the first row at or past its length.
        var windows: [SoakBenchReport.Window] = []
        from = 0
        for end in rows where end >= from + options.windowSeconds - options.sampleSeconds / 2 || end == rows.last {
            guard end > from else { continue }
            let sum = stretch(from: from, to: end), probes = machine.filter { $0.second > from && $0.second <= end }
            func perAnswer(_ value: Double, places: Double) -> Double { sum.answers == 0 ? 0 : (value / Double(sum.answers) * places).rounded() / places }
            let system = SoakBenchReport.Interval.workers(\.systemCPUSeconds, from: from, to: end, samples: samples)
            let faults = SoakBenchReport.Interval.workers({ $0.minorFaults.map(Double.init) }, from: from, to: end, samples: samples)
            windows.append(.init(fromSecond: from, toSecond: end, answers: sum.answers, failed: sum.failed, p50Milliseconds: sum.p50, p99Milliseconds: sum.p99,
                                 workerCPUSecondsPerAnswer: perAnswer(sum.workerSeconds, places: 100), machineBusyPercent: sum.busyPercent, stealPercent: sum.stealPercent,
                                 workerSystemCPUSecondsPerAnswer: perAnswer(system, places: 1_000), workerMinorFaultsPerAnswer: perAnswer(faults, places: 1),
                                 probeMilliseconds: OCRDetectionRow.median(probes.compactMap(\.probeMilliseconds)),
                                 memoryProbeMilliseconds: OCRDetectionRow.median(probes.compactMap(\.memoryProbeMilliseconds))))
            from = end
        }
        // Each process from the first sample past its warm-up to its last. Not from the pause at rest: a
        // worker idle for it has handed its freed pages back, and its reading then is no floor of a process
        // under load. Its working set is back a row's time after the load resumes.
        let settled = resumed.map { $0 + min(options.sampleSeconds, options.warmupSeconds) } ?? 0
        var processes: [SoakBenchReport.ProcessSummary] = []
        var seen: [String] = []
        for sample in samples where !seen.contains("\(sample.role)#\(sample.instance)") {
            seen.append("\(sample.role)#\(sample.instance)")
            let mine = samples.filter { $0.role == sample.role && $0.instance == sample.instance }
            // A restarted process began at its restart.
            let began = sample.instance == 1 ? 0 : restarts.filter { $0.role == sample.role }.dropFirst(sample.instance - 2).first?.second ?? mine[0].second
            processes.append(.init(role: sample.role, instance: sample.instance, samples: mine, warmFrom: max(began + options.warmupSeconds, settled),
                                   maxWindow: max(2, Int((options.windowSeconds / options.probeInterval).rounded()))))
        }
        return SoakBenchReport(machine: MachineInfo.current(), minutes: options.minutes, clients: options.clients, workers: options.workers,
                               files: files.count, documents: documents, sampleSeconds: options.sampleSeconds, probeSeconds: options.probeInterval,
                               warmupSeconds: options.warmupSeconds, restSeconds: options.restSeconds, paths: paths, restarts: restarts, intervals: intervals, windows: windows,
                               processes: processes, samples: samples, machineSamples: machine, restSamples: rested, problems: problems.withLock { $0 })
    }
}
