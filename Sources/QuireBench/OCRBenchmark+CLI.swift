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
    // MARK: - tesseract CLI

    struct CLIUnavailable: Error { let message: String }

    func cliVersion(_ tesseract: String) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: tesseract) else {
            throw CLIUnavailable(message: "\(tesseract) is not installed (Debian: apt-get install tesseract-ocr)")
        }
        let probe: (status: Int32, output: String)
        do {
            probe = try runBriefly(tesseract, ["--version"], timeout: 20_000)
        } catch {
            throw CLIUnavailable(message: "'\(tesseract) --version' failed: \(error)")
        }
        guard probe.status == 0, let first = probe.output.split(separator: "\n").first(where: { $0.hasPrefix("tesseract") }) else {
            throw CLIUnavailable(message: "'\(tesseract) --version' exited with status \(probe.status): \(probe.output)")
        }
        return String(first)
    }

    /// The runner, after one warm-up process per language set (so that their traineddata is in the
    /// page cache for all).
    func startCLI(_ tesseract: String, warmUps: [BenchImage], scratch: String) throws -> CLIRunner {
        var environment = ProcessInfo.processInfo.environment
        environment["OMP_THREAD_LIMIT"] = "1"
        let arguments = ["--psm", String(OCRBenchOptions.psm(for: options.mode)), "--tessdata-dir", options.configuration.dataPath]
        let runner = CLIRunner(executable: tesseract, arguments: arguments, environment: environment,
                               timeout: options.requestTimeout, registry: cliProcesses)
        do {
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        } catch {
            throw CLIUnavailable(message: "cannot create \(scratch): \(error.localizedDescription)")
        }
        for warmUp in warmUps {
            progress("tesseract CLI: warm-up with \(warmUp.name) (\(warmUp.languageKey))")
            if case .failure(let message) = runner.run(image: warmUp.path, languages: warmUp.languageKey, output: scratch + "/warm") {
                throw CLIUnavailable(message: "\(warmUp.name): \(message)")
            }
        }
        return runner
    }

    /// Every image of `indices` once, one `tesseract` process each with the image's languages,
    /// `workers` at a time. Texts and times are by the image's index in `images`.
    func cliPass(_ runner: CLIRunner, images: [BenchImage], indices: [Int], scratch: String, problems: Problems) throws -> Tally {
        let tickets = TicketCounter()
        let samples = Locked<[UInt64]>([])
        let texts = Locked<[Int: String]>([:])
        let perImage = Locked<[Int: UInt64]>([:])
        let stopAt = Instant.now() + options.phaseTimeout
        let cpu0 = CPUSnapshot.now()
        let start = Instant.now()
        var threads: [LoopThread] = []
        for index in 0..<options.workers {
            let output = scratch + "/slot-\(index)"
            threads.append(LoopThread(name: "bench-cli-\(index)") {
                while true {
                    let ticket = tickets.take()
                    guard ticket < indices.count, Instant.now() < stopAt else { return }
                    let index = indices[ticket]
                    let t0 = Instant.now()
                    switch runner.run(image: images[index].path, languages: images[index].languageKey, output: output) {
                    case .success:
                        let elapsed = Instant.now().nanoseconds &- t0.nanoseconds
                        samples.withLock { $0.append(elapsed) }
                        perImage.withLock { $0[index] = elapsed }
                        let text = FileManager.default.contents(atPath: output + ".txt").map { String(decoding: $0, as: UTF8.self) } ?? ""
                        texts.withLock { $0[index] = text }
                    case .failure(let message):
                        problems.add(images[index], "cli", message)
                    }
                }
            })
        }
        let hardLimit = start + Milliseconds(options.phaseTimeout.value + options.requestTimeout.value + 10_000)
        for thread in threads {
            guard thread.join(timeout: Milliseconds(max(1, Instant.now().milliseconds(until: hardLimit)))) else {
                killSubprocesses()
                throw BenchError("tesseract CLI: a pass did not finish within \(options.phaseTimeout.value + options.requestTimeout.value) ms")
            }
        }
        let seconds = max(Instant.now().seconds(since: start), 1e-9)
        var tally = Tally(samples: samples.withLock { $0 }, seconds: seconds, cpu: cpu0.until(CPUSnapshot.now()))
        tally.texts = texts.withLock { $0 }
        tally.perImage = perImage.withLock { $0 }
        return tally
    }
}

/// Running `tesseract` processes, so that a signal handler on another thread can kill them.
final class PIDRegistry: Sendable {
    let pids = Locked<Set<Int32>>([])
    func add(_ pid: Int32) { pids.withLock { _ = $0.insert(pid) } }
    func remove(_ pid: Int32) { pids.withLock { _ = $0.remove(pid) } }
    func killAll() { for pid in pids.withLock({ $0 }) { kill(pid, SIGKILL) } }
}

/// Starts `tesseract` for one image and waits for it, at most `timeout` (then it is killed). Standard
/// output (the text) and error go to files next to `output`, rewritten for every image.
final class CLIRunner: Sendable {
    let executable: String
    /// After `IMG stdout -l LANG`: the page segmentation and the tessdata folder.
    let arguments: [String]
    let environment: [String: String]
    let timeout: Milliseconds
    let registry: PIDRegistry

    enum Outcome { case success, failure(String) }

    init(executable: String, arguments: [String], environment: [String: String], timeout: Milliseconds, registry: PIDRegistry) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.timeout = timeout
        self.registry = registry
    }

    /// Reads `image` with `languages` (`chi_sim+eng`).
    func run(image: String, languages: String, output: String) -> Outcome {
        let fm = FileManager.default
        let outPath = output + ".txt", errPath = output + ".err"
        guard fm.createFile(atPath: outPath, contents: nil), fm.createFile(atPath: errPath, contents: nil),
              let out = FileHandle(forWritingAtPath: outPath), let err = FileHandle(forWritingAtPath: errPath) else {
            return .failure("cannot create \(outPath)")
        }
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [image, "stdout", "-l", languages] + arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        do {
            try process.run()
        } catch {
            return .failure("cannot start \(executable): \(error.localizedDescription)")
        }
        let pid = process.processIdentifier
        registry.add(pid)
        defer { registry.remove(pid) }
        if done.wait(timeout: .now() + .milliseconds(Int(timeout.value))) == .timedOut {
            kill(pid, SIGKILL)
            _ = done.wait(timeout: .now() + .seconds(5))
            return .failure("tesseract did not finish within \(timeout.value) ms and was killed")
        }
        let status = process.terminationStatus
        if process.terminationReason == .uncaughtSignal {
            return .failure("tesseract was killed by signal \(status)")
        }
        guard status == 0 else {
            let text = fm.contents(atPath: errPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
            let tail = text.split(separator: "\n").suffix(3).joined(separator: " / ")
            return .failure("tesseract exited with status \(status)\(tail.isEmpty ? "" : ": " + tail)")
        }
        return .success
    }
}
