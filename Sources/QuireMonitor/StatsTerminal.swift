import Foundation
import QuireStats
import QuireSupport
import Synchronization
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// `quire stats`: subscribes to the broker's stats socket and shows it.
///
/// Live mode draws ``TerminalView`` in place on the alternate screen with the cursor hidden, and puts
/// the terminal back on exit, SIGINT or SIGTERM. `json` prints each snapshot as received, one per line;
/// `once` stops after the first snapshot.
public final class StatsTerminal: Sendable {
    public enum Output: Sendable {
        /// The refreshing table (plain reprints when standard output is not a terminal).
        case table
        /// Raw snapshots as JSON lines (and events, when asked for).
        case json(events: Bool)
    }

    public let endpoint: String
    public let output: Output
    public let once: Bool
    /// `once`: how long to wait for the first snapshot before failing.
    public let timeout: Milliseconds
    private let context: Context
    private let wakeup: Wakeup
    private let stopRequested = Atomic<Bool>(false)
    private let resized = Atomic<Bool>(false)

    public init(endpoint: String, output: Output, once: Bool, timeout: Milliseconds = 10_000, context: Context) throws(ZMQError) {
        self.endpoint = endpoint
        self.output = output
        self.once = once
        self.timeout = timeout
        self.context = context
        self.wakeup = try Wakeup()
    }

    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        wakeup.signal()
    }

    /// The terminal changed size: redraw.
    public func windowChanged() {
        resized.store(true, ordering: .releasing)
        wakeup.signal()
    }

    public struct TimedOut: Error, CustomStringConvertible {
        public let endpoint: String
        public let milliseconds: Int64
        public var description: String { "no stats snapshot from \(endpoint) within \(milliseconds) ms (is the broker running with --stats?)" }
    }

    /// Runs until stopped (or, with `once`, until the first snapshot). Throws ``TimedOut`` when `once`
    /// sees no snapshot in time.
    public func run() throws {
        let subscriber = try StatsSubscriber(context: context, endpoint: endpoint, events: { if case .json(true) = output { return true }; return false }())
        defer { subscriber.close() }
        let live = { if case .table = output { return !once && isatty(1) == 1 }; return false }()
        var view = TerminalView(endpoint: endpoint)
        let started = Instant.now()
        if live { Self.write(Self.enterScreen) }
        defer { if live { Self.write(Self.leaveScreen) } }
        var dirty = live
        let poller = Poller([.socket(subscriber.socket, .readable), .descriptor(wakeup.descriptor, .readable)])

        while !stopRequested.load(ordering: .acquiring) {
            if dirty && live {
                let size = Self.terminalSize()
                let lines = view.render(width: size.columns, height: size.rows, now: Instant.now())
                Self.write(Self.home + lines.map { $0 + Self.clearLine }.joined(separator: "\r\n") + Self.clearBelow)
                dirty = false
            }
            let ready = try poller.poll(timeoutMilliseconds: 500)
            if ready[1].contains(.readable) {
                wakeup.drain()
                if resized.exchange(false, ordering: .acquiring) { dirty = true }
            }
            // Redraw at least every half second so "no snapshot for N s" shows up.
            dirty = dirty || live
            if once, Instant.now().seconds(since: started) * 1000 > Double(timeout.value) {
                throw TimedOut(endpoint: endpoint, milliseconds: timeout.value)
            }
            guard ready[0].contains(.readable) else { continue }
            while let message = try subscriber.receive() {
                switch message {
                case .snapshot(let snapshot, let raw):
                    view.receive(snapshot, now: Instant.now())
                    switch output {
                    case .json:
                        Self.write(raw + [UInt8(ascii: "\n")])
                    case .table where !live:
                        let lines = view.render(width: 80, height: 1_000, now: Instant.now())
                        Self.write(Array((lines.joined(separator: "\n") + "\n" + (once ? "" : "\n")).utf8))
                    case .table:
                        dirty = true
                    }
                    if once { return }
                case .event(_, let raw):
                    if case .json(true) = output { Self.write(raw + [UInt8(ascii: "\n")]) }
                case .invalid(let topic, let reason):
                    FileHandle.standardError.write(Data("quire stats: ignored a message on '\(topic)': \(reason)\n".utf8))
                }
            }
        }
    }

    // MARK: - Terminal

    static let enterScreen = Array("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J".utf8)
    static let leaveScreen = Array("\u{1B}[?25h\u{1B}[?1049l".utf8)
    static let home = "\u{1B}[H"
    static let clearLine = "\u{1B}[K"
    static let clearBelow = "\u{1B}[J"

    static func terminalSize() -> (columns: Int, rows: Int) {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 {
            return (Int(size.ws_col), Int(size.ws_row))
        }
        return (80, 24)
    }

    static func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.write(1, base + offset, buffer.count - offset)
            }
            if n > 0 { offset += n; continue }
            if n < 0 && errno == EINTR { continue }
            return
        }
    }

    static func write(_ text: String) { write(Array(text.utf8)) }
}
