import Foundation
import QuireStats
import QuireSupport
import QuireWire
import Testing

@testable import QuireBroker

/// Several brokers on one shared store (PostgreSQL's behaviour, in memory): the store owns the queue,
/// each broker holds what its workers run, claims, leases and fenced writes. No socket, disk or clock.
@Suite struct SharedJobMachineTests {
    static let configuration: JobConfiguration = {
        var configuration = JobRig.configuration
        configuration.store = "postgresql://test/quire"
        configuration.storeLease = 3_000
        configuration.storePoll = 500
        return configuration
    }()

    /// Two brokers, `a` and `b`, on one store; neither has a worker yet.
    static func brokers() -> (JobRig, JobRig) {
        let store = MemoryJobStorage(shared: true, broker: "a")
        var a = JobRig(configuration: configuration, storage: store)
        var b = JobRig(configuration: configuration, storage: store.asBroker("b"))
        a.free(0)
        b.free(0)
        return (a, b)
    }

    static func result(of actions: [JobMachine.Action], to peer: String) -> JobRig.Reply? {
        JobRig.replies(actions).first { $0.peer == peer && $0.service == Titanic.reply }
    }

    @Test func aJobAcceptedByOneBrokerIsClaimedAndRunByTheBrokerWithAnIdleWorker() throws {
        var (a, b) = Self.brokers()
        let (id, submitted) = a.submit()
        let job = try #require(id)
        #expect(JobRig.dispatches(submitted).isEmpty)
        #expect(a.machine.active[job] == nil, "once committed, the job is the store's")
        #expect(a.rows[job]?.record.state == .queued)

        b.free(1)
        let claimed = b.tick()  // the poll: b's idle worker claims
        let dispatched = try #require(JobRig.dispatches(claimed).first)
        #expect(b.claims.map(\.service) == ["ocr"])
        #expect(b.rows[job]?.record.state == .running && b.rows[job]?.record.attempts == 1)
        #expect(b.storage.rows[job]?.claimedBy == "b")

        let done = b.handle(.attemptReplied(tag: dispatched.tag, body: [Array("text".utf8)])) + b.endTurn()
        #expect(done.contains(.statistic(.completed(service: "ocr", bytes: 4))))
        #expect(b.rows[job]?.record.state == .done)
        #expect(b.machine.active.isEmpty && b.machine.held.isEmpty)

        // Either broker answers for it, from the store.
        let fromA = Self.result(of: a.ask(Titanic.reply, [Array(job.utf8)]), to: "c")
        #expect(fromA?.body == [Array("200".utf8), Array("text".utf8)])
    }

    @Test func theSubmittingBrokerClaimsAtOnceWhenItsOwnWorkerIsIdle() throws {
        var (a, _) = Self.brokers()
        a.free(1)
        let (id, actions) = a.submit()
        let job = try #require(id)
        #expect(JobRig.dispatches(actions).count == 1, "claimed right after the commit, without waiting for the poll")
        #expect(a.machine.held[job] == 1)
    }

    /// b's worker takes a job and b falls silent: no renewal. Past the lease, a's pass queues the job
    /// again and a's worker takes it; then b comes back. The brokers, the job, the tag of b's attempt
    /// and what a's pass did.
    static func leaseLost() throws -> (a: JobRig, b: JobRig, job: String, lateTag: UInt64, retaken: [JobMachine.Action]) {
        var (a, b) = brokers()
        let job = try #require(a.submit().id)
        b.free(1)
        let first = try #require(JobRig.dispatches(b.tick()).first)
        a.advance(ms: 3_500)
        a.free(1)
        let retaken = a.tick()
        b.advance(ms: 3_500)
        return (a, b, job, first.tag, retaken)
    }

    @Test func aBrokerCutOffPastItsLeaseLosesTheJobAndItsLateResultIsRefused() throws {
        var (a, b, job, lateTag, retaken) = try Self.leaseLost()
        #expect(retaken.contains(.statistic(.leasesExpired(service: "ocr", count: 1))))
        let second = try #require(JobRig.dispatches(retaken).first)
        #expect(a.rows[job]?.record.attempts == 2 && a.storage.rows[job]?.claimedBy == "a")

        // b's worker's reply is written fenced by attempt 1, and refused.
        let late = b.handle(.attemptReplied(tag: lateTag, body: [Array("late".utf8)])) + b.endTurn()
        #expect(late.contains(.statistic(.fenceRefused(service: "ocr"))))
        #expect(b.machine.active[job] == nil, "b lets the job go")
        #expect(a.rows[job]?.record.state == .running, "attempt 2 is untouched")

        _ = a.handle(.attemptReplied(tag: second.tag, body: [Array("right".utf8)])) + a.endTurn()
        #expect(a.rows[job]?.record.state == .done && a.storage.rows[job]?.reply == [Array("right".utf8)])
    }

    @Test func aStatusAnsweredAfterAnEarlierRefusedWriteTellsTheJobAsTheStoreHasIt() throws {
        // The store writes on its own thread: the late result's batch is still being written when the
        // reader asks, so the answer waits for the next batch; the first batch is then refused.
        let (_, b, job, lateTag, retaken) = try Self.leaseLost()
        #expect(JobRig.dispatches(retaken).count == 1)
        var machine = b.machine
        var random = b.random
        func handle(_ event: JobMachine.Event) -> [JobMachine.Action] { machine.handle(event, now: b.now, random: &random) }
        func persisted(_ actions: [JobMachine.Action]) -> JobBatch? { actions.compactMap { if case .persist(let batch) = $0 { batch } else { nil } }.first }
        _ = handle(.attemptReplied(tag: lateTag, body: [Array("late".utf8)]))
        let late = try #require(persisted(handle(.endOfTurn(b.workers))))
        #expect(JobRig.replies(handle(.request(peer: Array("s".utf8), dialect: .mdp02, service: Titanic.status, body: [Array(job.utf8)], owner: "",
                                               workers: b.workers))).isEmpty)
        let next = try #require(persisted(handle(.endOfTurn(b.workers))))
        _ = handle(.committed(late, b.workers, JobWriteOutcome(refused: [job])))
        let after = handle(.committed(next, b.workers, JobWriteOutcome()))
        // Not the `done` b had in memory when asked: the job as the store has it, a's attempt 2 running.
        let load = try #require(after.compactMap { if case .load(let load) = $0 { load } else { nil } }.first)
        let told = try #require(JobRig.replies(handle(.loaded(load, b.storage.load(load)))).first { $0.peer == "s" })
        let status = try JSONDecoder().decode(JobStatus.self, from: Data(told.body.last ?? []))
        #expect(told.status == "200" && status.state == "running" && status.attempts == 2)
    }

    @Test func aJobWhoseBrokerWentSilentOnItsLastAttemptIsDeadAndTheBrokerThatFoundItSaysSo() throws {
        var (a, b) = Self.brokers()
        let job = try #require(a.submit(#""maxAttempts":1"#).id)
        b.free(1)
        _ = try #require(JobRig.dispatches(b.tick()).first)
        a.advance(ms: 3_500)
        let found = a.tick()
        #expect(found.contains(.statistic(.dead(service: "ocr", job: job, reason: JobMaintenance.deadOfSilence))))
        #expect(a.rows[job]?.record.state == .dead)
        let reply = JobRig.replies(a.ask(Titanic.reply, [Array(job.utf8)])).first
        #expect(reply?.status == "400 dead" && reply?.error?.code == .jobDead)
    }

    @Test func leasesAreRenewedWhileHeldAndAJobTheStoreGaveAwayIsLetGo() throws {
        var (a, b) = Self.brokers()
        let job = try #require(a.submit().id)
        b.free(1)
        _ = try #require(JobRig.dispatches(b.tick()).first)
        b.advance(ms: 1_100)
        _ = b.tick()
        #expect((b.storage.rows[job]?.leaseUntil ?? 0) >= b.now + 2_000, "renewed every third of the lease")
        // A client closes the job meanwhile (through a): b's next renewal finds it gone.
        let closed = JobRig.replies(a.ask(Titanic.close, [Array(job.utf8)])).first
        #expect(closed?.status == "200")
        b.advance(ms: 1_100)
        let renewal = b.tick()
        #expect(renewal.contains(.statistic(.leaseLost(service: "ocr"))))
        #expect(b.machine.held.isEmpty && b.machine.active.isEmpty)
    }

    @Test func aBrokerThatStopsGivesTheJobsItHoldsBackAtOnce() throws {
        var (a, b) = Self.brokers()
        let job = try #require(a.submit().id)
        b.free(1)
        _ = try #require(JobRig.dispatches(b.tick()).first)
        b.machine.releaseHeld(now: b.now)
        _ = b.endTurn()
        #expect(b.rows[job]?.record.state == .queued && b.rows[job]?.record.attempts == 1, "back in the queue, its attempt counted")
        a.free(1)
        #expect(JobRig.dispatches(a.tick()).count == 1, "another broker takes it without waiting for the lease")
        #expect(a.rows[job]?.record.attempts == 2)
    }

    @Test func aRetryGoesBackToTheStoresQueueAndAnyBrokerTakesItAfterItsBackoff() throws {
        var (a, b) = Self.brokers()
        let job = try #require(a.submit().id)
        b.free(1)
        let attempt = try #require(JobRig.dispatches(b.tick()).first)
        let failed = b.handle(.attemptFailed(tag: attempt.tag, error: WireError(.timeout, "slow", service: "ocr"), reachedWorker: true)) + b.endTurn()
        #expect(failed.contains(.statistic(.retried(service: "ocr"))))
        #expect(b.rows[job]?.record.state == .queued && b.rows[job]?.record.attempts == 1)
        #expect(b.machine.active[job] == nil, "queued again: the store's")
        a.free(1)
        #expect(JobRig.dispatches(a.tick()).isEmpty, "not before its backoff")
        a.advance(ms: 60_000)
        #expect(JobRig.dispatches(a.tick()).count == 1)
        #expect(a.rows[job]?.record.attempts == 2)
    }

    @Test func aReaderWaitingAtOneBrokerIsAnsweredWhenAnotherFinishesTheJob() throws {
        var (a, b) = Self.brokers()
        let job = try #require(a.submit().id)
        let waiting = a.ask(Titanic.reply, [Array(job.utf8), Array(#"{"waitMs":10000}"#.utf8)], from: "reader")
        #expect(Self.result(of: waiting, to: "reader") == nil, "held")
        b.free(1)
        let attempt = try #require(JobRig.dispatches(b.tick()).first)
        _ = b.handle(.attemptReplied(tag: attempt.tag, body: [Array("text".utf8)])) + b.endTurn()
        // b's commit notifies: a reads the job again and answers its reader.
        let woken = a.handle(.notified(work: [], done: [job], a.workers))
        #expect(Self.result(of: woken, to: "reader")?.body == [Array("200".utf8), Array("text".utf8)])
    }

    @Test func aReaderIsAnsweredAtThePollWhenNoNotificationCame() throws {
        var (a, b) = Self.brokers()
        let job = try #require(a.submit().id)
        _ = a.ask(Titanic.reply, [Array(job.utf8), Array(#"{"waitMs":10000}"#.utf8)], from: "reader")
        b.free(1)
        let attempt = try #require(JobRig.dispatches(b.tick()).first)
        _ = b.handle(.attemptReplied(tag: attempt.tag, body: [Array("text".utf8)])) + b.endTurn()
        a.advance(ms: 600)
        #expect(Self.result(of: a.tick(), to: "reader")?.status == "200")
    }

    @Test func aCancelThroughAnyBrokerEndsAJobAnotherRunsAndItsResultIsRefused() throws {
        var (a, b) = Self.brokers()
        let job = try #require(a.submit().id)
        b.free(1)
        let attempt = try #require(JobRig.dispatches(b.tick()).first)
        let cancel = JobRig.replies(a.ask(Titanic.cancel, [Array(job.utf8)])).first
        #expect(cancel?.status == "200")
        #expect(a.rows[job]?.record.state == .cancelled)
        let late = b.handle(.attemptReplied(tag: attempt.tag, body: [Array("text".utf8)])) + b.endTurn()
        #expect(late.contains(.statistic(.fenceRefused(service: "ocr"))))
        #expect(a.rows[job]?.record.state == .cancelled)
    }

    @Test func theSameKeySubmittedToTwoBrokersAtOnceIsOneJob() throws {
        var (a, b) = Self.brokers()
        // Both look the key up before either commits: each makes a job; the store keeps the first.
        let first = try #require(a.submit(#""idempotencyKey":"receipt-42""#).id)
        // b's lookup of the key was answered (none yet) before a's commit: it admits a job of its own.
        let racing = b.handle(.loaded(.key(owner: "", key: "receipt-42", then: JobSubmission(
            client: JobClient(peer: Array("d".utf8), dialect: .mdp02), owner: "", target: "ocr", request: [[1]], priority: .normal,
            idempotencyKey: "receipt-42", maxAttempts: 3, deadlineMs: nil, ttlSeconds: 60)), .record(nil)))
        let answer = JobRig.replies(racing + b.endTurn()).first { $0.peer == "d" }
        #expect(answer?.body == [Array("200".utf8), Array(first.utf8)], "the second broker answers with the first job's id")
        #expect(b.rows.values.filter { $0.record.idempotencyKey == "receipt-42" }.count == 1)
        #expect(b.machine.active.isEmpty)
    }

    @Test func theQueueBoundCountsWhatTheStoreHolds() throws {
        var configuration = Self.configuration
        configuration.maxActiveJobs = 3
        let store = MemoryJobStorage(shared: true)
        var a = JobRig(configuration: configuration, storage: store)
        a.free(0)
        for _ in 0..<3 { _ = try #require(a.submit().id) }
        a.advance(ms: 600)
        _ = a.tick()  // the pass counts the queue
        let refused = JobRig.replies(a.submit().actions).first
        #expect(refused?.error?.code == .busy)
    }
}
