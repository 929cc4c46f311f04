import Foundation

/// Renders snapshots in the Prometheus text exposition format 0.0.4.
///
/// Names follow Prometheus's rules: a `quire_` prefix, base units (`_seconds`, `_bytes`), `_total` on
/// counters. Labels are bounded: `service`, `state`, `reason`, `priority`, `quantile` — never a job or
/// worker id (workers come and go with random ids; their figures are summed per service).
public enum PrometheusRenderer {
    /// The `Content-Type` of the output.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The exporter's own state next to the snapshot.
    public struct ExporterStatus: Sendable, Equatable {
        /// Snapshots received since the exporter started.
        public var snapshotsReceived: Int
        /// Sequence numbers skipped (snapshots missed) since the exporter started.
        public var snapshotsMissed: Int
        /// Seconds since the last snapshot arrived; `nil` before the first.
        public var lastSnapshotAgeSeconds: Double?
        /// Whether the broker counts as up: a snapshot arrived within three intervals.
        public var up: Bool

        public init(snapshotsReceived: Int, snapshotsMissed: Int, lastSnapshotAgeSeconds: Double?, up: Bool) {
            self.snapshotsReceived = snapshotsReceived
            self.snapshotsMissed = snapshotsMissed
            self.lastSnapshotAgeSeconds = lastSnapshotAgeSeconds
            self.up = up
        }
    }

    public static func render(_ snapshot: StatsSnapshot?, exporter: ExporterStatus) -> String {
        var out = Output()
        out.family("quire_up", "gauge", "1 when the exporter received a broker snapshot within three intervals.")
        out.sample("quire_up", [], exporter.up ? 1 : 0)
        out.family("quire_exporter_snapshots_received_total", "counter", "Stats snapshots the exporter received.")
        out.sample("quire_exporter_snapshots_received_total", [], Double(exporter.snapshotsReceived))
        out.family("quire_exporter_snapshots_missed_total", "counter", "Snapshots skipped in the broker's sequence (not received).")
        out.sample("quire_exporter_snapshots_missed_total", [], Double(exporter.snapshotsMissed))
        if let age = exporter.lastSnapshotAgeSeconds {
            out.family("quire_exporter_last_snapshot_age_seconds", "gauge", "Seconds since the last snapshot arrived.")
            out.sample("quire_exporter_last_snapshot_age_seconds", [], age)
        }
        guard let s = snapshot else { return out.text }

        out.family("quire_broker_start_time_seconds", "gauge", "When the broker started, in Unix seconds.")
        out.sample("quire_broker_start_time_seconds", [], Double(s.broker.startedAtMs) / 1000)
        if let store = s.store {
            out.family("quire_store_info", "gauge", "The broker's durable job store (1), by kind.")
            out.sample("quire_store_info", [("store", store.kind)], 1)
            let figures: [(String, String, String, Int)] = [
                ("quire_store_serving", "gauge", "1 while the broker serves its job store, 0 while it recovers a lost one (durable jobs paused).",
                 store.state == "serving" ? 1 : 0),
                ("quire_store_commits_total", "counter", "Transactions the broker committed to its job store.", store.commits),
                ("quire_store_commit_failures_total", "counter", "Transactions that failed (nothing of them written).", store.commitFailures),
                ("quire_store_connections_lost_total", "counter", "Connections to the job store lost (PostgreSQL).", store.connectionsLost),
                ("quire_store_recoveries_total", "counter", "Lost job stores taken over again.", store.recoveries),
                ("quire_store_claims_total", "counter", "Claims on a shared job store for this broker's idle workers.", store.claims),
                ("quire_store_claimed_jobs_total", "counter", "Jobs this broker's claims took from a shared job store.", store.claimedJobs),
                ("quire_store_lease_expiries_total", "counter", "Jobs of silent brokers whose leases this broker found run out, queued again or dead.",
                 store.leasesExpired),
                ("quire_store_leases_lost_total", "counter", "Jobs this broker held that another broker took after its lease ran out.", store.leasesLost),
                ("quire_store_fenced_writes_refused_total", "counter", "Writes about a job another broker holds now, refused by their fence.",
                 store.fencedWritesRefused),
            ]
            for (name, type, help, value) in figures {
                out.family(name, type, help)
                out.sample(name, [], Double(value))
            }
            out.summary("quire_store_commit_seconds", "How long a write to the job store took, its commit included (quantiles over the sliding window).",
                        [([], store.commitSeconds)])
            out.summary("quire_store_claim_seconds", "How long a claim on a shared job store took (quantiles over the sliding window).",
                        [([], store.claimSeconds)])
        }
        out.family("quire_broker_received_bytes_total", "counter", "Bytes of every message the broker received.")
        out.sample("quire_broker_received_bytes_total", [], Double(s.totals.bytesIn))
        out.family("quire_broker_sent_bytes_total", "counter", "Bytes of every message the broker sent.")
        out.sample("quire_broker_sent_bytes_total", [], Double(s.totals.bytesOut))
        out.family("quire_broker_malformed_messages_total", "counter", "Messages that did not decode as Majordomo, from any peer.")
        out.sample("quire_broker_malformed_messages_total", [], Double(s.totals.malformedMessages))
        out.family("quire_broker_workers_joined_total", "counter", "Workers that registered.")
        out.sample("quire_broker_workers_joined_total", [], Double(s.totals.workersJoined))
        out.family("quire_broker_workers_lost_total", "counter", "Workers that left or were dropped.")
        out.sample("quire_broker_workers_lost_total", [], Double(s.totals.workersLost))

        let services = s.services
        func perService(_ name: String, _ type: String, _ help: String, _ value: (ServiceStats) -> Double) {
            guard !services.isEmpty else { return }
            out.family(name, type, help)
            for service in services { out.sample(name, [("service", service.name)], value(service)) }
        }
        perService("quire_queue_depth", "gauge", "Requests and jobs waiting for a worker.") { Double($0.queue.depth) }
        if !services.isEmpty {
            out.family("quire_job_queue_depth", "gauge", "Durable jobs queued, by priority.")
            for service in services {
                for (priority, n) in [("high", service.queue.jobs.high), ("normal", service.queue.jobs.normal), ("low", service.queue.jobs.low)] {
                    out.sample("quire_job_queue_depth", [("service", service.name), ("priority", priority)], Double(n))
                }
            }
            out.family("quire_workers", "gauge", "Connected workers by state.")
            for service in services {
                out.sample("quire_workers", [("service", service.name), ("state", "idle")], Double(service.workers.idle))
                out.sample("quire_workers", [("service", service.name), ("state", "busy")], Double(service.workers.busy))
            }
        }
        perService("quire_requests_submitted_total", "counter", "Direct requests accepted into the queue.") { Double($0.requests.submitted) }
        perService("quire_requests_completed_total", "counter", "Direct requests answered by a worker, errors included.") { Double($0.requests.completed) }
        perService("quire_requests_failed_total", "counter", "Direct requests answered with an error.") { Double($0.requests.failed) }
        perService("quire_requests_retried_total", "counter", "Direct requests given to another worker after one was lost.") { Double($0.requests.retried) }
        perService("quire_requests_expired_total", "counter", "Direct requests that waited past the request timeout.") { Double($0.requests.expired) }
        perService("quire_jobs_submitted_total", "counter", "Durable jobs accepted.") { Double($0.jobs.submitted) }
        perService("quire_jobs_completed_total", "counter", "Durable jobs completed.") { Double($0.jobs.completed) }
        perService("quire_jobs_failed_total", "counter", "Durable job attempts that failed.") { Double($0.jobs.failed) }
        perService("quire_jobs_retried_total", "counter", "Durable jobs queued again for another attempt.") { Double($0.jobs.retried) }
        perService("quire_jobs_dead_total", "counter", "Durable jobs that used up their attempts.") { Double($0.jobs.dead) }
        perService("quire_jobs_expired_total", "counter", "Durable jobs or results that expired.") { Double($0.jobs.expired) }
        if !services.isEmpty {
            out.family("quire_rejections_total", "counter", "Requests and jobs turned away before a worker saw them, by reason.")
            for service in services {
                let r = service.rejections
                for (reason, n) in [("busy", r.busy), ("too_large", r.tooLarge), ("auth", r.auth), ("malformed", r.malformed)] {
                    out.sample("quire_rejections_total", [("service", service.name), ("reason", reason)], Double(n))
                }
            }
        }
        summary(&out, "quire_wait_seconds", "Time from arrival to dispatch to a worker (quantiles over the sliding window).", services) { $0.waitSeconds }
        summary(&out, "quire_run_seconds", "Time from dispatch to the worker's final reply (quantiles over the sliding window).", services) { $0.runSeconds }
        perService("quire_received_bytes_total", "counter", "Request bytes accepted for the service.") { Double($0.bytesIn) }
        perService("quire_sent_bytes_total", "counter", "Reply bytes forwarded from the service's workers.") { Double($0.bytesOut) }

        // Worker reports, summed per service over the workers connected now (gauges: they fall when a
        // worker leaves).
        let reported = Dictionary(grouping: s.workers.filter { $0.report != nil }, by: \.service)
            .map { (service: $0.key, reports: $0.value.compactMap(\.report)) }
            .sorted { $0.service < $1.service }
        if !reported.isEmpty {
            out.family("quire_worker_resident_memory_bytes", "gauge", "Resident memory of the connected workers that report it, summed.")
            for group in reported {
                out.sample("quire_worker_resident_memory_bytes", [("service", group.service)], Double(group.reports.reduce(0) { $0 + $1.rssBytes }))
            }
            out.family("quire_worker_engine_seconds", "gauge", "Handler time reported by the connected workers since they started, summed.")
            for group in reported {
                out.sample("quire_worker_engine_seconds", [("service", group.service)], group.reports.reduce(0) { $0 + $1.engineSeconds })
            }
            out.family("quire_worker_jobs_done", "gauge", "Requests answered by the connected workers since they started, as they report it, summed.")
            for group in reported {
                out.sample("quire_worker_jobs_done", [("service", group.service)], Double(group.reports.reduce(0) { $0 + $1.jobsDone }))
            }
        }
        return out.text
    }

    private static func summary(_ out: inout Output, _ name: String, _ help: String, _ services: [ServiceStats], _ pick: (ServiceStats) -> LatencySummary) {
        guard !services.isEmpty else { return }
        out.summary(name, help, services.map { ([("service", $0.name)], pick($0)) })
    }

    struct Output {
        var text = ""

        mutating func family(_ name: String, _ type: String, _ help: String) {
            text += "# HELP \(name) \(escapeHelp(help))\n# TYPE \(name) \(type)\n"
        }

        /// A summary family: for each labelled latency, its quantiles over the window, sum and count.
        mutating func summary(_ name: String, _ help: String, _ series: [(labels: [(String, String)], latency: LatencySummary)]) {
            family(name, "summary", help)
            for (labels, l) in series {
                for (q, v) in [("0.5", l.p50), ("0.9", l.p90), ("0.99", l.p99)] {
                    sample(name, labels + [("quantile", q)], v ?? .nan)
                }
                sample(name + "_sum", labels, l.sum)
                sample(name + "_count", labels, Double(l.count))
            }
        }

        mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
            text += name
            if !labels.isEmpty {
                text += "{" + labels.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
            }
            text += " " + formatValue(value) + "\n"
        }
    }

    /// Integers without a fraction, others in Swift's shortest round-trip form; NaN and ±Inf as the
    /// format spells them.
    static func formatValue(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v > 0 ? "+Inf" : "-Inf" }
        if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        return String(v)
    }

    static func escapeLabel(_ s: String) -> String {
        var r = ""
        for ch in s {
            switch ch {
            case "\\": r += "\\\\"
            case "\"": r += "\\\""
            case "\n": r += "\\n"
            default: r.append(ch)
            }
        }
        return r
    }

    static func escapeHelp(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }
}
