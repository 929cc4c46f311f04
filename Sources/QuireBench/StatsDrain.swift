import QuireStack
import QuireSupport
import Synchronization
import ZeroMQ

/// A subscriber on the broker's stats socket that receives and counts snapshots on its own thread and
/// context (as `quire stats` would in its own process), so the benchmark measures the publishing path.
final class StatsDrain: Sendable {
    private final class Flags: Sendable {
        let stopRequested = Atomic<Bool>(false)
        let received = Atomic<Int>(0)
    }

    private let flags = Flags()
    private let thread: LoopThread

    init(endpoint: String) throws {
        let flags = self.flags
        thread = LoopThread(name: "bench-stats-sub") {
            let context = try Context()
            defer { context.terminate() }
            let socket = try Socket(context: context, type: .sub)
            defer { socket.close() }
            try socket.subscribe(Array("quire.".utf8))
            try socket.connect(endpoint)
            let poller = Poller([.socket(socket, .readable)])
            while !flags.stopRequested.load(ordering: .acquiring) {
                guard try poller.poll(timeoutMilliseconds: 100)[0].contains(.readable) else { continue }
                while let frames = try socket.receive(dontWait: true) {
                    if frames.first == Array("quire.stats".utf8) { flags.received.add(1, ordering: .relaxed) }
                }
            }
        }
    }

    /// Stops the thread; returns how many snapshots it received.
    func stop() -> Int {
        flags.stopRequested.store(true, ordering: .releasing)
        _ = thread.join(timeout: 2_000)
        return flags.received.load(ordering: .relaxed)
    }
}
