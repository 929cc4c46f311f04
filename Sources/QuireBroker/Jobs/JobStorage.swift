import Dispatch
import Foundation
import QuireSupport
import Synchronization
import ZeroMQ

/// The durable job store as the broker uses it: recover at start, write a turn's ``JobBatch`` in one
/// transaction, answer a ``JobLoad``, sweep expired results. The job machine never calls it; the broker
/// does, on its ``StorageThread``. SQLite (``SQLiteJobStore``) is the one on disk; every conformance passes
/// the same suite (`JobStorageConformanceTests`).
protocol JobStorage: AnyObject {
    /// Requeues jobs a stopped broker left running and builds the machine that holds every active job.
    func recoverMachine(configuration: JobConfiguration, now: Int64) throws(JobStoreError) -> JobMachine
    /// Writes the batches, in order, in one transaction: all of them, or, thrown, none (in a shared
    /// store, all but the fenced updates that found their row changed, and the new jobs whose key was
    /// taken: the outcome says which).
    @discardableResult
    func write(_ batches: [JobBatch]) throws(JobStoreError) -> JobWriteOutcome
    func load(_ load: JobLoad) -> JobLoad.Result
    /// A shared store: up to `claim.count` queued jobs of the service, highest priority and oldest
    /// first, skipping those another broker is claiming at the same moment; each now running its next
    /// attempt under this broker's lease.
    func claim(_ claim: JobClaim) throws(JobStoreError) -> [ClaimedJob]
    /// A shared store: extends this broker's lease on the jobs it holds; those it still held.
    func renew(_ ids: [String], until: Int64) throws(JobStoreError) -> Set<String>
    /// A shared store: queues again (or ends dead) jobs whose lease ran out, ends queued jobs past
    /// their deadline, and counts what is queued.
    func maintain(now: Int64) throws(JobStoreError) -> JobMaintenance
    /// Deletes finished jobs whose results expired at or before `now`; returns how many.
    func sweepExpired(now: Int64) throws(JobStoreError) -> Int
    /// After a ``JobStoreError/Kind/lost`` failure: connects again. A store that cannot be lost (a
    /// file) has nothing to do.
    func reopen() throws(JobStoreError)
}

extension JobStorage {
    func reopen() throws(JobStoreError) {}
    // A store of one broker holds every job in the broker's memory: nothing to claim, renew or maintain.
    func claim(_ claim: JobClaim) throws(JobStoreError) -> [ClaimedJob] { [] }
    func renew(_ ids: [String], until: Int64) throws(JobStoreError) -> Set<String> { Set(ids) }
    func maintain(now: Int64) throws(JobStoreError) -> JobMaintenance { JobMaintenance() }
}

extension SQLiteJobStore: JobStorage {}

/// The store's I/O off the ZeroMQ thread: the broker loop hands each write, load and sweep to this
/// thread in order and goes on serving (heartbeats are never held up by a commit's fsync, or by a
/// store across a network); what comes of them returns as the machine's events, taken by the loop
/// when ``wakeup`` rings. Work is done strictly in the order it was handed over, so a turn's batch is
/// on disk before a later turn's, and a load sees every write asked for before it. Batches that queued
/// up while a commit was running are written together, in one transaction (one fsync): the group
/// commit the loop got when a commit blocked it and the next turn gathered what arrived meanwhile.
///
/// The store is used by this thread alone once handed over (`@unchecked Sendable` stands on that).
final class StorageThread: @unchecked Sendable {
    enum Work: Sendable {
        case persist(JobBatch)
        case load(JobLoad)
        case sweep(before: Int64)
        /// Reconnect and recover after the store was lost (``BrokerMachine/Action/recoverJobs(_:)``).
        case recover(JobConfiguration)
        case claim(JobClaim)
        case renew([String], until: Int64)
        case maintain(now: Int64)
    }

    private let store: any JobStorage
    private let wakeup: Wakeup
    private let logger: Logger
    private struct Queue {
        var work: [Work] = []
        var done: [BrokerMachine.Event] = []
        var busy = false
        var stopping = false
        /// The broker is stopping: a recovery in progress gives up.
        var abandoning = false
    }
    /// The store was reported lost (``BrokerMachine/Event/storeLost(_:)``) and not yet recovered: its
    /// later failures are the same loss, not news. Touched by this thread only.
    private var lost = false
    private let queue = Mutex(Queue())
    private let workReady = DispatchSemaphore(value: 0)
    private let idle = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(store: any JobStorage, wakeup: Wakeup, logger: Logger) {
        self.store = store
        self.wakeup = wakeup
        self.logger = logger
        let thread = Thread { [self] in
            Thread.current.name = "quire-job-store"
            run()
            finished.signal()
        }
        thread.name = "quire-job-store"
        thread.start()
    }

    /// Hands work over; its outcome comes back through ``takeEvents()``.
    func submit(_ work: Work) {
        queue.withLock { $0.work.append(work) }
        workReady.signal()
    }

    /// Hands the loop an event from outside the store's work (a notification), after what is done.
    func post(_ event: BrokerMachine.Event) {
        queue.withLock { $0.done.append(event) }
        wakeup.signal()
    }

    /// The events of the work done since the last call, in order.
    func takeEvents() -> [BrokerMachine.Event] {
        queue.withLock { queue in defer { queue.done.removeAll() }; return queue.done }
    }

    /// Waits until everything handed over is done (its events ready to be taken).
    func waitUntilIdle() {
        while true {
            let pending = queue.withLock { !$0.work.isEmpty || $0.busy }
            if !pending { return }
            idle.wait()
        }
    }

    /// Makes a recovery in progress (or handed over) give up: the broker is stopping, and must not
    /// wait for a store that may not come back.
    func abandonRecovery() {
        queue.withLock { $0.abandoning = true }
    }

    /// Finishes what was handed over, then stops the thread.
    func stop() {
        queue.withLock { $0.stopping = true }
        workReady.signal()
        finished.wait()
    }

    private func run() {
        while true {
            workReady.wait()
            while let work = queue.withLock({ queue -> [Work]? in
                guard let first = queue.work.first else { return nil }
                queue.busy = true
                // A persist takes the persists queued right behind it along.
                var taken = 1
                if case .persist = first {
                    while taken < queue.work.count, case .persist = queue.work[taken] { taken += 1 }
                }
                defer { queue.work.removeFirst(taken) }
                return Array(queue.work.prefix(taken))
            }) {
                let events = perform(work)
                queue.withLock { queue in
                    queue.done += events
                    queue.busy = false
                }
                wakeup.signal()
                idle.signal()
            }
            if queue.withLock({ $0.stopping && $0.work.isEmpty }) { return }
        }
    }

    /// Does one piece of work, or several persists in one transaction; their events in order.
    private func perform(_ work: [Work]) -> [BrokerMachine.Event] {
        let batches = work.compactMap { if case .persist(let batch) = $0 { batch } else { nil } }
        if !batches.isEmpty {
            let started = Instant.now()
            func timed(_ committed: Bool) -> BrokerMachine.Event {
                .storeWrote(seconds: Instant.now().seconds(since: started), committed: committed)
            }
            do {
                let outcome = try store.write(batches)
                return batches.map { .committed($0, outcome) } + [timed(true)]
            } catch {
                return batches.map { .commitFailed($0, error) } + [timed(false)] + lostEvent(error)
            }
        }
        switch work.first {
        case .load(let load):
            let result = store.load(load)
            if case .failed(let error) = result { return [.loaded(load, result)] + lostEvent(error) }
            return [.loaded(load, result)]
        case .sweep(let before):
            do {
                let swept = try store.sweepExpired(now: before)
                if swept > 0 { logger.info("swept expired job results", metadata: ["jobs": String(swept)]) }
            } catch {
                logger.error("job sweep failed", metadata: ["error": error.description])
                return lostEvent(error)
            }
            return []
        case .recover(let configuration):
            return recover(configuration)
        case .claim(let claim):
            let started = Instant.now()
            do {
                let jobs = try store.claim(claim)
                return [.claimed(claim, .success(jobs), seconds: Instant.now().seconds(since: started))]
            } catch {
                return [.claimed(claim, .failure(error), seconds: Instant.now().seconds(since: started))] + lostEvent(error)
            }
        case .renew(let ids, let until):
            do {
                return [.renewed(asked: ids, held: try store.renew(ids, until: until))]
            } catch {
                if !lost { logger.error("renewing job leases failed", metadata: ["error": error.description]) }
                return [.renewed(asked: ids, held: nil)] + lostEvent(error)
            }
        case .maintain(let now):
            do {
                return [.maintained(try store.maintain(now: now))]
            } catch {
                if !lost { logger.error("job store maintenance failed", metadata: ["error": error.description]) }
                return [.maintained(nil)] + lostEvent(error)
            }
        case .persist, nil:
            return []
        }
    }

    /// `.storeLost` the first time a failure says the store is gone.
    private func lostEvent(_ error: JobStoreError) -> [BrokerMachine.Event] {
        guard error.kind == .lost, !lost else { return [] }
        lost = true
        return [.storeLost(error)]
    }

    /// Connects again until the store is back, backing off up to 10 s between tries; nothing when the
    /// broker stops first.
    private func recover(_ configuration: JobConfiguration) -> [BrokerMachine.Event] {
        var backoff = 250.0
        let keepWaiting = { [self] in !queue.withLock { $0.stopping || $0.abandoning } }
        while keepWaiting() {
            do {
                try store.reopen()
                let machine = try store.recoverMachine(configuration: configuration, now: wallClockMilliseconds())
                lost = false
                return [.jobsRecovered(machine)]
            } catch {
                logger.warning("job store still unreachable; trying again", metadata: ["error": error.description, "backoff_ms": String(Int(backoff))])
                var slept = 0.0
                while slept < backoff, keepWaiting() {
                    Thread.sleep(forTimeInterval: 0.1)
                    slept += 100
                }
                backoff = min(backoff * 2, 10_000)
            }
        }
        return []
    }
}
