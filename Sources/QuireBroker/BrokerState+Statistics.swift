import QuireStats
import QuireSupport

extension BrokerState {
    /// A snapshot for the stats socket: the statistics' counters and histograms with the live queues
    /// and workers. Takes the next sequence number.
    public mutating func statisticsSnapshot(now: Instant, wallClockMs: Int64, interval: Milliseconds, pid: Int32) -> StatsSnapshot {
        let sequence = statistics.nextSnapshotSequence()
        // Forget timings of requests that left by a path without a hook, so the maps stay bounded: a
        // running request is in `inFlight`, and a queued one is answered by the request timeout.
        if statistics.dispatchedAt.count > inFlight.count {
            statistics.dispatchedAt = statistics.dispatchedAt.filter { inFlight[$0.key] != nil }
        }
        if statistics.queuedAt.count > queuedRequestTotal {
            let oldest = now.nanoseconds &- UInt64(max(0, configuration.requestTimeout.value + 1_000)) * 1_000_000
            statistics.queuedAt = statistics.queuedAt.filter { $0.value.nanoseconds >= oldest || now.nanoseconds < oldest }
        }
        let names = Set(statistics.services.keys).union(services.keys).sorted()
        var serviceStats: [ServiceStats] = []
        serviceStats.reserveCapacity(names.count)
        for name in names {
            let live = services[name]
            let record = statistics.services[name]
            let idle = live?.idle.count ?? 0
            serviceStats.append(ServiceStats(
                name: name,
                queue: ServiceStats.Queue(requests: live?.queue.count ?? 0, jobs: record?.jobQueue ?? PriorityDepth()),
                workers: ServiceStats.Workers(idle: idle, busy: max(0, (live?.workerCount ?? 0) - idle)),
                requests: record?.requests ?? ServiceStats.RequestCounters(),
                jobs: record?.jobs ?? ServiceStats.JobCounters(),
                rejections: record?.rejections ?? Rejections(),
                waitSeconds: record?.wait.summary(now: now) ?? LatencySummary(),
                runSeconds: record?.run.summary(now: now) ?? LatencySummary(),
                bytesIn: record?.bytesIn ?? 0,
                bytesOut: record?.bytesOut ?? 0))
        }
        var workerStats: [WorkerStats] = []
        workerStats.reserveCapacity(workers.count)
        for (identity, worker) in workers {
            let record = statistics.workers[identity]
            workerStats.append(WorkerStats(
                id: hex(identity), service: worker.service, state: worker.request == nil ? "idle" : "busy",
                dialect: worker.dialect.rawValue, jobsDone: record?.jobsDone ?? 0,
                connectedSeconds: record.map { now.seconds(since: $0.joined) } ?? 0,
                lastHeartbeatSecondsAgo: record.map { now.seconds(since: $0.lastSeen) } ?? 0,
                report: record?.report))
        }
        workerStats.sort { ($0.service, $0.id) < ($1.service, $1.id) }
        let totals = StatsSnapshot.Totals(
            requestsReceived: counters.requestsReceived, repliesSent: counters.repliesSent,
            bytesIn: counters.bytesIn, bytesOut: counters.bytesOut, malformedMessages: counters.malformedMessages,
            workersJoined: statistics.workersJoined, workersLost: statistics.workersLost,
            rejections: statistics.totalRejections)
        return StatsSnapshot(
            sequence: sequence, timeMs: wallClockMs, intervalMs: interval.value,
            windowSeconds: Double(statistics.window.value) / 1000,
            broker: StatsSnapshot.BrokerInfo(startedAtMs: statistics.startedAtMs, uptimeSeconds: now.seconds(since: statistics.startedAt), pid: pid),
            totals: totals, services: serviceStats, workers: workerStats,
            store: statistics.store.map { store in
                StatsSnapshot.StoreStats(kind: store.kind, state: store.recovering ? "recovering" : "serving", commits: store.commits,
                                         commitFailures: store.commitFailures, connectionsLost: store.connectionsLost,
                                         recoveries: store.recoveries, commitSeconds: store.commitTime.summary(now: now),
                                         claims: store.claims, claimedJobs: store.claimedJobs, leasesExpired: store.leasesExpired,
                                         leasesLost: store.leasesLost, fencedWritesRefused: store.fencedWritesRefused,
                                         claimSeconds: store.claimTime.summary(now: now))
            })
    }

    private var queuedRequestTotal: Int {
        services.values.reduce(0) { $0 + $1.queue.count }
    }
}
