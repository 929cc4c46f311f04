import QuireSupport

/// What `quire stats` shows: a pure model fed with snapshots and asked for lines, so that the layout
/// (80 columns), the rates, and the notices about missed snapshots and broker restarts are tested
/// without a terminal.
public struct TerminalView: Sendable {
    /// The endpoint shown in the title.
    public let endpoint: String
    public private(set) var current: StatsSnapshot?
    /// The snapshot before `current` from the same broker run, for rates.
    public private(set) var previous: StatsSnapshot?
    /// When `current` arrived.
    public private(set) var lastArrival: Instant?
    /// The latest notice (a gap or a restart) and when it was noticed.
    public private(set) var notice: String?
    /// Snapshots skipped in the sequence since the view started.
    public private(set) var missed = 0

    public init(endpoint: String) {
        self.endpoint = endpoint
    }

    /// Takes a snapshot in. Notices a gap in the sequence and a broker restart (a new start time).
    public mutating func receive(_ snapshot: StatsSnapshot, now: Instant) {
        if let last = current {
            if snapshot.broker.startedAtMs != last.broker.startedAtMs {
                notice = "broker restarted at \(Self.clock(snapshot.broker.startedAtMs)) UTC; counters start over"
                previous = nil
            } else if snapshot.sequence <= last.sequence {
                return  // a duplicate or a stale one: keep what we have
            } else {
                if snapshot.sequence > last.sequence + 1 {
                    let gap = Int(snapshot.sequence - last.sequence - 1)
                    missed += gap
                    notice = "missed \(gap) snapshot\(gap == 1 ? "" : "s") (seq \(last.sequence + 1)…\(snapshot.sequence - 1)) at \(Self.clock(snapshot.timeMs)) UTC"
                }
                previous = last
            }
        }
        current = snapshot
        lastArrival = now
    }

    /// The screen: at most `width` columns (the layout is made for 80) and `height` lines.
    public func render(width: Int = 80, height: Int = 24, now: Instant) -> [String] {
        var lines: [String] = []
        guard let s = current else {
            lines.append(Self.fit("quire stats  \(endpoint)", width))
            lines.append("")
            lines.append(Self.fit("waiting for the broker… (no snapshot yet from \(endpoint))", width))
            lines.append("")
            lines.append(Self.fit("Ctrl-C to quit", width))
            return Array(lines.prefix(max(1, height)))
        }
        let title = "quire stats  \(endpoint)"
        let right = "seq \(s.sequence)  \(Self.clock(s.timeMs)) UTC"
        lines.append(Self.spread(title, right, width: min(width, 80)))
        let t = s.totals
        lines.append("broker pid \(s.broker.pid), up \(Self.duration(s.broker.uptimeSeconds))  in \(Self.bytes(t.bytesIn))  out \(Self.bytes(t.bytesOut))  malformed \(t.malformedMessages)")
        if let lastArrival, let age = Optional(now.seconds(since: lastArrival)), age * 1000 > Double(max(1_000, s.intervalMs * 3)) {
            lines.append("! no snapshot for \(Int(age)) s: is the broker running?")
        } else if let notice {
            lines.append("! " + notice)
        } else {
            lines.append("")
        }

        // Services.
        lines.append(String(repeating: " ", count: 55) + "   wait time    run time")
        lines.append(Self.row(["SERVICE", "QUEUE", "IDLE", "BUSY", "DONE/S", "DONE", "FAIL", "REJ", "p50", "p99", "p50", "p99"]))
        let previousByName = Dictionary((previous?.services ?? []).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let seconds = previous.map { Double(s.timeMs - $0.timeMs) / 1000 } ?? 0
        var serviceRows: [String] = []
        for service in s.services {
            let done = service.requests.completed + service.jobs.completed
            var rate = "-"
            if seconds > 0, let before = previousByName[service.name] {
                let delta = done - before.requests.completed - before.jobs.completed
                rate = Self.rate(Double(max(0, delta)) / seconds)
            }
            serviceRows.append(Self.row([
                service.name, String(service.queue.depth), String(service.workers.idle), String(service.workers.busy), rate,
                Self.count(done), Self.count(service.requests.failed + service.jobs.failed + service.jobs.dead),
                Self.count(service.rejections.total),
                Self.latency(service.waitSeconds.p50), Self.latency(service.waitSeconds.p99),
                Self.latency(service.runSeconds.p50), Self.latency(service.runSeconds.p99),
            ]))
        }
        if serviceRows.isEmpty { serviceRows.append("  (no services yet)") }

        // Workers.
        var workerRows: [String] = []
        workerRows.append("")
        workerRows.append("WORKERS \(s.workers.count) connected, \(s.workers.filter { $0.state == "busy" }.count) busy")
        workerRows.append(Self.workerRow(["ID", "SERVICE", "STATE", "JOBS", "LAST HB", "RSS", "ENGINE", "DIALECT"]))
        for worker in s.workers {
            workerRows.append(Self.workerRow([
                String(worker.id.suffix(8)), worker.service, worker.state, Self.count(worker.jobsDone),
                Self.duration(worker.lastHeartbeatSecondsAgo) + " ago",
                worker.report.map { Self.bytes($0.rssBytes) } ?? "-",
                worker.report.map { Self.duration($0.engineSeconds) } ?? "-",
                worker.dialect,
            ]))
        }

        // Fit the height: services first, then as many workers as there is room for.
        let room = max(0, height - lines.count - 1)
        if serviceRows.count > room {
            let shown = max(0, room - 1)
            lines += serviceRows.prefix(shown)
            lines.append("  … and \(serviceRows.count - shown) more services")
        } else {
            lines += serviceRows
            let left = max(0, height - lines.count - 1)
            if workerRows.count > left, left >= 4 {
                let shown = left - 1
                lines += workerRows.prefix(shown)
                lines.append("  … and \(workerRows.count - shown) more workers")
            } else if workerRows.count <= left {
                lines += workerRows
            }
        }
        lines.append("Ctrl-C to quit")
        return lines.prefix(max(1, height)).map { Self.fit($0, width) }
    }

    // MARK: - Layout

    /// Service columns: name 12, then right-aligned numbers; 79 columns in all.
    static let serviceWidths = [12, 6, 5, 5, 8, 8, 6, 5, 6, 6, 6, 6]
    static let workerWidths = [9, 15, 6, 8, 12, 10, 9, 10]

    static func row(_ cells: [String]) -> String { layout(cells, serviceWidths) }
    static func workerRow(_ cells: [String]) -> String { layout(cells, workerWidths, leftAligned: [0, 1, 2, 7]) }

    static func layout(_ cells: [String], _ widths: [Int], leftAligned: Set<Int> = [0]) -> String {
        var line = ""
        for (index, cell) in cells.enumerated() where index < widths.count {
            let w = widths[index]
            // Every cell leaves one column free to separate it from its neighbours.
            let text = cell.count > w - 1 ? String(cell.prefix(max(1, w - 2))) + "…" : cell
            if !leftAligned.contains(index) {
                line += String(repeating: " ", count: max(0, w - text.count)) + text
            } else if index == 0 {
                line += text + String(repeating: " ", count: max(0, w - text.count))
            } else {
                line += " " + text + String(repeating: " ", count: max(0, w - 1 - text.count))
            }
        }
        return line
    }

    static func spread(_ left: String, _ right: String, width: Int) -> String {
        let gap = width - left.count - right.count
        return gap >= 2 ? left + String(repeating: " ", count: gap) + right : left + "  " + right
    }

    /// Cuts a line to `width` columns (characters; the view uses no wide characters).
    static func fit(_ line: String, _ width: Int) -> String {
        line.count > width ? String(line.prefix(max(0, width - 1))) + "…" : line
    }

    // MARK: - Formats

    /// `HH:MM:SS` of a Unix-milliseconds time, UTC.
    static func clock(_ ms: Int64) -> String {
        let text = StatsTime.rfc3339(unixMilliseconds: ms)
        let start = text.index(text.startIndex, offsetBy: 11)
        return String(text[start..<text.index(start, offsetBy: 8)])
    }

    /// A latency in at most 6 columns: `850µs`, `1.2ms`, `123ms`, `1.23s`, `12.3s`, `4m`, or `-`.
    static func latency(_ seconds: Double?) -> String {
        guard let s = seconds, s.isFinite else { return "-" }
        if s < 0.001 { return "\(Int((s * 1e6).rounded()))µs" }
        if s < 0.01 { return fixed(s * 1000, 1) + "ms" }
        if s < 1 { return "\(Int((s * 1000).rounded()))ms" }
        if s < 10 { return fixed(s, 2) + "s" }
        if s < 60 { return fixed(s, 1) + "s" }
        return duration(s)
    }

    /// A duration for people: `0.4s`, `12s`, `3m05s`, `2h03m`, `4d02h`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-" }
        if seconds < 10 { return fixed(seconds, 1) + "s" }
        let s = Int(seconds)
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m" + two(s % 60) + "s" }
        if s < 86_400 { return "\(s / 3600)h" + two(s / 60 % 60) + "m" }
        return "\(s / 86_400)d" + two(s / 3600 % 24) + "h"
    }

    static func rate(_ perSecond: Double) -> String {
        perSecond >= 10_000 ? count(Int(perSecond.rounded())) : fixed(perSecond, 1)
    }

    /// A count in at most 7 columns: `1234567`, then `12.3M`.
    static func count(_ n: Int) -> String {
        if n < 10_000_000 { return String(n) }
        return fixed(Double(n) / 1e6, 1) + "M"
    }

    static func bytes(_ n: Int) -> String {
        let v = Double(n)
        if n < 1_000 { return "\(n) B" }
        if n < 1_000_000 { return fixed(v / 1e3, 1) + " kB" }
        if n < 1_000_000_000 { return fixed(v / 1e6, 1) + " MB" }
        return fixed(v / 1e9, 1) + " GB"
    }

    static func fixed(_ v: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int((v * scale).rounded())
        let whole = scaled / Int(scale)
        let fraction = scaled % Int(scale)
        guard digits > 0 else { return String(whole) }
        let f = String(fraction)
        return "\(whole)." + String(repeating: "0", count: digits - f.count) + f
    }

    static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : String(n) }
}
