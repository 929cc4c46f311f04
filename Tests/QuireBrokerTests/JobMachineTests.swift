import Foundation
import QuireSupport
import QuireWire
import Testing

@testable import QuireBroker

/// The durable-job lifecycle, driven by hand: no socket, no disk, no clock.
@Suite struct JobMachineTests {
    // MARK: - Persist before answering

    @Test func aSubmitterHearsOnlyOnceTheJobIsOnDisk() throws {
        var rig = JobRig()
        let body: [[UInt8]] = [Array("ocr".utf8), Array(#"{"image":1}"#.utf8)]
        let during = rig.machine.handle(.request(peer: Array("c".utf8), dialect: .mdp02, service: Titanic.request, body: body, owner: "",
                                                 workers: rig.workers),
                                        now: rig.now, random: &rig.random)
        #expect(during.isEmpty, "nothing is answered before the turn's write")
        let end = rig.machine.handle(.endOfTurn(rig.workers), now: rig.now, random: &rig.random)
        #expect(end.count == 1)
        guard case .persist(let batch)? = end.first else {
            Issue.record("the turn's end asks for a write first")
            return
        }
        #expect(batch.inserts.count == 1)
        #expect(batch.inserts.first?.request == [Array(#"{"image":1}"#.utf8)])
        #expect(batch.services == ["ocr"])
        let after = rig.machine.handle(.committed(batch, rig.workers, JobWriteOutcome()), now: rig.now, random: &rig.random)
        let reply = try #require(JobRig.replies(after).first)
        #expect(reply.status == "200")
        #expect(reply.body.count == 2)
        #expect(after.contains(.statistic(.submitted(service: "ocr", bytes: 11))))
    }

    @Test func aFailedWriteAnswers500AndKeepsNothing() throws {
        var rig = JobRig()
        rig.failWrites = true
        let (id, actions) = rig.submit()
        #expect(id == nil)
        let reply = try #require(JobRig.replies(actions).first)
        #expect(reply.status.hasPrefix("500"))
        #expect(reply.error?.code == .storageFailure)
        #expect(rig.machine.activeCount == 0)
        #expect(actions.contains { if case .log(.error, "job store write failed", _) = $0 { true } else { false } })
    }

    @Test func theSameSeedGivesTheSameJobIDs() {
        var a = JobRig(), b = JobRig()
        #expect(a.submit().id == b.submit().id)
        #expect(a.submit().id.map(Titanic.isJobID) == true)
    }

    // MARK: - Dispatch, priorities

    @Test func readyJobsGoToFreeWorkersHighestLaneFirst() {
        var rig = JobRig()
        let low = rig.submit(#""priority":"low""#).id
        let normal = rig.submit().id
        let high = rig.submit(#""priority":"high""#).id
        #expect(rig.loads.isEmpty, "no worker free: nothing dispatched")
        rig.free(1)
        let first = JobRig.dispatches(rig.endTurn())
        #expect(first.count == 1)
        #expect(rig.state(of: high ?? "") == .running)
        rig.free(2)
        _ = rig.endTurn()
        #expect(rig.state(of: normal ?? "") == .running)
        #expect(rig.state(of: low ?? "") == .running)
        // The request goes out as submitted, without the broker's own members.
        #expect(first.first?.body == [Array(#"{"image":1}"#.utf8), [0xff, 0xd8]])
    }

    @Test func oneFreeWorkerTakesOneJob() {
        var rig = JobRig()
        _ = rig.submit()
        _ = rig.submit()
        rig.free(1)
        let dispatched = JobRig.dispatches(rig.endTurn())
        #expect(dispatched.count == 1)
        #expect(rig.machine.activeCount == 2)
    }

    // MARK: - Outcomes, retries, backoff

    @Test func aReplyFinishesTheJobAndAReaderGetsIt() throws {
        var rig = JobRig()
        let (jobID, tag) = try rig.dispatchedJob()
        rig.advance(ms: 250)
        let replied = rig.handle(.attemptReplied(tag: tag, body: [Array("text".utf8)]))
        #expect(JobRig.statistics(replied).contains(.ran(service: "ocr", seconds: 0.25)))
        #expect(JobRig.statistics(replied).contains(.completed(service: "ocr", bytes: 4)))
        _ = rig.endTurn()
        #expect(rig.rows[jobID]?.record.state == .done)
        let reply = try #require(JobRig.replies(rig.ask(Titanic.reply, [Array(jobID.utf8)])).first)
        #expect(reply.body == [Array("200".utf8), Array("text".utf8)])
        // Read from the store, since the job is no longer in memory.
        #expect(rig.loads.contains { if case .reply = $0 { true } else { false } })
    }

    @Test func aReaderHearsAnOutcomeOnlyOnceItIsOnDisk() throws {
        var rig = JobRig()
        let (jobID, tag) = try rig.dispatchedJob()
        _ = rig.handle(.attemptReplied(tag: tag, body: [Array("text".utf8)]))
        // Asked in the same turn, before the outcome is written: the reader waits for the write, as a
        // submitter does, so that no crash takes back what it was told and every broker reads the same.
        let asked = rig.handle(.request(peer: Array("r".utf8), dialect: .mdp02, service: Titanic.reply, body: [Array(jobID.utf8)], owner: "",
                                        workers: rig.workers))
        #expect(JobRig.replies(asked).isEmpty)
        #expect(rig.rows[jobID]?.record.state != .done)
        let written = rig.endTurn()
        #expect(rig.rows[jobID]?.record.state == .done)
        let reply = try #require(JobRig.replies(written).first { $0.peer == "r" })
        #expect(reply.body == [Array("200".utf8), Array("text".utf8)])
    }

    @Test func aJobsStatusIsToldOnlyOnceItIsOnDisk() throws {
        var rig = JobRig()
        let (jobID, tag) = try rig.dispatchedJob()
        _ = rig.handle(.attemptReplied(tag: tag, body: [Array("text".utf8)]))
        func status() -> [JobMachine.Action] {
            rig.handle(.request(peer: Array("s".utf8), dialect: .mdp02, service: Titanic.status, body: [Array(jobID.utf8)], owner: "", workers: rig.workers))
        }
        // Asked before the outcome is written: `done` is told with the write, not before it.
        #expect(JobRig.replies(status()).isEmpty)
        #expect(rig.rows[jobID]?.record.state != .done)
        let written = rig.endTurn()
        #expect(rig.rows[jobID]?.record.state == .done)
        let told = try #require(JobRig.replies(written).first { $0.peer == "s" })
        #expect(told.body.count == 2 && told.body.first == Array("200".utf8))
        #expect(try JSONDecoder().decode(JobStatus.self, from: Data(told.body.last ?? [])).state == "done")
        // Asked once it is on disk: answered at once.
        let again = try #require(JobRig.replies(status()).first { $0.peer == "s" })
        #expect(again.body == told.body)
    }

    @Test func aStatusWhoseStateDidNotReachTheDiskIsRefused() throws {
        var rig = JobRig()
        let (jobID, tag) = try rig.dispatchedJob()
        _ = rig.handle(.attemptReplied(tag: tag, body: [Array("text".utf8)]))
        rig.failWrites = true
        // `done` never reached the disk: the reader hears 500, not a state a restart would take back.
        let refused = try #require(JobRig.replies(rig.ask(Titanic.status, [Array(jobID.utf8)], from: "s")).first { $0.peer == "s" })
        #expect(refused.status.hasPrefix("500"))
        #expect(rig.rows[jobID]?.record.state != .done)
    }

    @Test func retryableFailuresBackOffWithJitterThenTheJobIsDead() throws {
        var rig = JobRig()
        let (jobID, firstTag) = try rig.dispatchedJob()
        var tag = firstTag
        let busy = WireError(.busy, "worker busy", service: "ocr").jsonFrame
        // Attempt 1 fails: the retry waits between half and all of retryBase (1 s).
        let retried = rig.handle(.attemptReplied(tag: tag, body: [busy]))
        #expect(JobRig.statistics(retried).contains(.retried(service: "ocr")))
        rig.free(1)
        _ = rig.endTurn()
        let notBefore = try #require(rig.machine.active[jobID]?.notBefore)
        #expect((rig.now + 500...rig.now + 1_000).contains(notBefore))
        #expect(rig.state(of: jobID) == .queued)
        rig.now = notBefore - 1
        #expect(JobRig.dispatches(rig.tick()).isEmpty, "not before its retry time")
        rig.now = notBefore
        tag = try #require(JobRig.dispatches(rig.tick()).first?.tag)
        // Attempt 2 fails: the ceiling doubles to 2 s.
        let start = rig.now
        _ = rig.handle(.attemptFailed(tag: tag, error: WireError(.timeout, "slow", service: "ocr"), reachedWorker: true))
        rig.free(1)
        _ = rig.endTurn()
        let second = try #require(rig.machine.active[jobID]?.notBefore)
        #expect((start + 1_000...start + 2_000).contains(second))
        rig.now = second
        tag = try #require(JobRig.dispatches(rig.tick()).first?.tag)
        // Attempt 3 of 3 fails: dead, with the last error kept.
        let dead = rig.handle(.attemptReplied(tag: tag, body: [busy]))
        #expect(JobRig.statistics(dead).contains { if case .dead(service: "ocr", job: jobID, _) = $0 { true } else { false } })
        _ = rig.endTurn()
        #expect(rig.rows[jobID]?.record.state == .dead)
        #expect(rig.rows[jobID]?.record.attempts == 3)
        let reply = try #require(JobRig.replies(rig.ask(Titanic.reply, [Array(jobID.utf8)])).first)
        #expect(reply.status == "400 dead")
        #expect(reply.error?.code == .jobDead)
    }

    @Test func aServiceErrorThatNoRetryChangesFailsTheJobAtOnce() throws {
        var rig = JobRig()
        let (id, tag) = try rig.dispatchedJob()
        let corrupt = WireError(.badRequest, "not an image", service: "ocr").jsonFrame
        let after = rig.handle(.attemptReplied(tag: tag, body: [corrupt]))
        #expect(JobRig.statistics(after).contains(.failed(service: "ocr")))
        _ = rig.endTurn()
        #expect(rig.rows[id]?.record.state == .failed)
        // The service answered: the reader gets 200 and the worker's own error.
        let reply = try #require(JobRig.replies(rig.ask(Titanic.reply, [Array(id.utf8)])).first)
        #expect(reply.body == [Array("200".utf8), corrupt])
    }

    @Test func aLostWorkerSendsTheJobBackAtOnceButTheAttemptCounts() throws {
        var rig = JobRig()
        let (jobID, firstTag) = try rig.dispatchedJob(#""maxAttempts":2"#)
        var tag = firstTag
        _ = rig.handle(.attemptFailed(tag: tag, error: WireError(.workerLost, "gone", service: "ocr"), reachedWorker: true))
        #expect(rig.machine.active[jobID].map { $0.state == .queued && $0.notBefore <= rig.now } == true, "no backoff for a lost worker")
        rig.free(1)
        tag = try #require(JobRig.dispatches(rig.endTurn()).first?.tag)
        #expect(rig.machine.active[jobID]?.attempts == 2)
        _ = rig.handle(.attemptFailed(tag: tag, error: WireError(.workerLost, "gone", service: "ocr"), reachedWorker: true))
        _ = rig.endTurn()
        #expect(rig.rows[jobID]?.record.state == .dead)
    }

    @Test func anAttemptThatNeverReachedAWorkerCostsNothing() throws {
        var rig = JobRig()
        let (id, tag) = try rig.dispatchedJob()
        _ = rig.handle(.attemptFailed(tag: tag, error: WireError(.timeout, "no worker took the job in time", service: "ocr"), reachedWorker: false))
        #expect(rig.machine.active[id]?.attempts == 0)
        #expect(rig.machine.active[id]?.state == .queued)
        rig.free(1)
        #expect(JobRig.dispatches(rig.endTurn()).count == 1)
    }

    // MARK: - Leases, deadlines

    @Test func aLeaseThatRunsOutRetriesTheJobAndTheLateReplyIsIgnored() throws {
        var rig = JobRig()
        let (jobID, tag) = try rig.dispatchedJob()
        rig.advance(ms: 9_999)
        #expect(!rig.tick().contains { if case .log(.warning, "job lease expired", _) = $0 { true } else { false } })
        rig.advance(ms: 1)
        let expired = rig.tick()
        #expect(expired.contains { if case .log(.warning, "job lease expired", _) = $0 { true } else { false } })
        #expect(JobRig.statistics(expired).contains(.retried(service: "ocr")))
        #expect(rig.state(of: jobID) == .queued)
        let late = rig.handle(.attemptReplied(tag: tag, body: [Array("late".utf8)]))
        #expect(late.isEmpty, "a stale attempt changes nothing")
        #expect(rig.state(of: jobID) == .queued)
    }

    @Test func progressFromTheWorkerShowsInStatusAndRenewsTheLease() throws {
        var rig = JobRig()
        let (jobID, tag) = try rig.dispatchedJob()
        func status() throws -> JobStatus {
            let reply = try #require(JobRig.replies(rig.ask(Titanic.status, [Array(jobID.utf8)])).first)
            return try JSONDecoder().decode(JobStatus.self, from: Data(reply.body[1]))
        }
        #expect(try status().progress == nil)
        rig.advance(ms: 9_000)
        _ = rig.handle(.attemptProgressed(tag: tag, JobProgress(done: 3, total: 60)))
        #expect(try status().progress == JobProgress(done: 3, total: 60))
        // Past the first lease's end the attempt still holds the job: its progress renewed the lease.
        rig.advance(ms: 9_000)
        #expect(!rig.tick().contains { if case .log(.warning, "job lease expired", _) = $0 { true } else { false } })
        #expect(rig.state(of: jobID) == .running)
        rig.advance(ms: 1_001)
        #expect(rig.tick().contains { if case .log(.warning, "job lease expired", _) = $0 { true } else { false } })
        // Queued again: no progress shown, and the stale attempt's word changes nothing.
        #expect(try status().progress == nil)
        _ = rig.handle(.attemptProgressed(tag: tag, JobProgress(done: 4, total: 60)))
        #expect(try status().progress == nil)
    }

    @Test func onlyProgressShapedPartialsAreProgress() {
        #expect(JobProgress(partial: [Array(#"{"progress":{"done":2,"total":5}}"#.utf8)]) == JobProgress(done: 2, total: 5))
        #expect(JobProgress(partial: [JobProgress(done: 0, total: 0).partialFrame]) == JobProgress(done: 0, total: 0))
        for frame in ["working", #"{"progress":{"done":6,"total":5}}"#, #"{"progress":{"done":-1,"total":5}}"#, #"{"progress":"half"}"#, "{}",
                      #"{"progress":{"done":1,"total":2}}"# + String(repeating: " ", count: 1_100)] {
            #expect(JobProgress(partial: [Array(frame.utf8)]) == nil, "\(frame.prefix(40))")
        }
        #expect(JobProgress(partial: []) == nil)
    }

    @Test func aJobPastItsDeadlineExpires() throws {
        var rig = JobRig()
        let (id, _) = rig.submit(#""deadlineMs":5000"#)
        let jobID = try #require(id)
        rig.advance(ms: 4_999)
        _ = rig.tick()
        #expect(rig.state(of: jobID) == .queued)
        rig.advance(ms: 1)
        let ticked = rig.tick()
        #expect(JobRig.statistics(ticked).contains(.expired(service: "ocr")))
        #expect(rig.rows[jobID]?.record.state == .expired)
        let reply = try #require(JobRig.replies(rig.ask(Titanic.reply, [Array(jobID.utf8)])).first)
        #expect(reply.status == "400 expired")
        #expect(reply.error?.code == .deadlineExceeded)
    }

    @Test(arguments: [#""deadlineMs":0"#, #""deadlineMs":9223372036854775807"#, #""maxAttempts":21"#, #""priority":"urgent""#,
                      #""idempotencyKey":"""#, #""resultTtlSeconds":0"#])
    func optionsOutOfRangeAreRefusedAndCounted(_ options: String) throws {
        var rig = JobRig()
        let (id, actions) = rig.submit(options)
        #expect(id == nil)
        let reply = try #require(JobRig.replies(actions).first)
        #expect(reply.status.hasPrefix("400"))
        #expect(JobRig.statistics(actions).contains(.refused(service: "ocr", code: .badRequest)))
        #expect(rig.persisted.allSatisfy { $0.inserts.isEmpty })
    }

    // MARK: - Idempotency

    @Test func theSameKeyIsTheSameJobInTheSameTurnAndLater() throws {
        var rig = JobRig()
        let body: [[UInt8]] = [Array("ocr".utf8), Array(#"{"job":{"idempotencyKey":"k1"}}"#.utf8)]
        var actions = rig.handle(.request(peer: Array("a".utf8), dialect: .mdp02, service: Titanic.request, body: body, owner: "me", workers: rig.workers))
        actions += rig.handle(.request(peer: Array("b".utf8), dialect: .mdp02, service: Titanic.request, body: body, owner: "me", workers: rig.workers))
        actions += rig.endTurn()
        let replies = JobRig.replies(actions)
        #expect(replies.map(\.peer) == ["a", "b"])
        #expect(replies[0].body == replies[1].body)
        #expect(rig.persisted.last?.inserts.count == 1)
        // Later, from the store.
        let again = JobRig.replies(rig.ask(Titanic.request, body, from: "d", owner: "me"))
        #expect(again.first?.body == replies[0].body)
        #expect(rig.machine.activeCount == 1)
        // Another submitter's key is another job.
        let other = JobRig.replies(rig.ask(Titanic.request, body, from: "e", owner: "you"))
        #expect(other.first?.status == "200")
        #expect(other.first?.body != replies[0].body)
    }

    @Test func aClosedJobFreesItsKeyInTheSameTurn() throws {
        var rig = JobRig()
        let body: [[UInt8]] = [Array("ocr".utf8), Array(#"{"job":{"idempotencyKey":"k"}}"#.utf8)]
        let first = try #require(JobRig.replies(rig.ask(Titanic.request, body)).first?.body.last)
        _ = rig.handle(.request(peer: Array("c".utf8), dialect: .mdp02, service: Titanic.close, body: [first], owner: "", workers: rig.workers))
        let again = JobRig.replies(rig.ask(Titanic.request, body))
        let second = try #require(again.first { $0.service == Titanic.request }?.body.last)
        #expect(second != first)
    }

    @Test func aJobPastItsResultTTLFreesItsKeyBeforeTheSweep() throws {
        var rig = JobRig()
        rig.free(1)
        let body: [[UInt8]] = [Array("ocr".utf8), Array(#"{"job":{"idempotencyKey":"k","resultTtlSeconds":2}}"#.utf8)]
        let submitted = rig.ask(Titanic.request, body)
        let first = try #require(JobRig.replies(submitted).first?.body.last)
        let tag = try #require(JobRig.dispatches(submitted).first?.tag)
        _ = rig.handle(.attemptReplied(tag: tag, body: [Array("text".utf8)]))
        _ = rig.endTurn()
        rig.advance(ms: 1_999)
        #expect(JobRig.replies(rig.ask(Titanic.request, body)).first?.body.last == first, "while its result lasts, the key is the job")
        rig.advance(ms: 1)
        // Expired, not yet swept: the same key is a new job, and the old row goes with the new one's insert.
        let again = JobRig.replies(rig.ask(Titanic.request, body))
        let second = try #require(again.first { $0.service == Titanic.request }?.body.last)
        #expect(second != first)
        let batch = try #require(rig.persisted.last)
        #expect(batch.deletions == [String(decoding: first, as: UTF8.self)] && batch.inserts.map(\.record.id) == [String(decoding: second, as: UTF8.self)])
        #expect(JobRig.replies(rig.ask(Titanic.status, [second])).first?.status == "200")
        #expect(JobRig.replies(rig.ask(Titanic.reply, [first])).first?.error?.code == .unknownJob)
    }

    @Test func aKeyReadBeforeItsJobsCloseIsOnDiskStillSeesTheClose() throws {
        // The store works on its own thread: the read of a key asked for in the turn that closed the
        // job can come back before that turn's batch is written, with the job still in it.
        var rig = JobRig()
        let body: [[UInt8]] = [Array("ocr".utf8), Array(#"{"job":{"idempotencyKey":"k"}}"#.utf8)]
        let first = try #require(JobRig.replies(rig.ask(Titanic.request, body)).first?.body.last)
        let stored = try #require(rig.rows[String(decoding: first, as: UTF8.self)]?.record)
        var machine = rig.machine
        var random = rig.random
        func handle(_ event: JobMachine.Event) -> [JobMachine.Action] { machine.handle(event, now: rig.now, random: &random) }
        _ = handle(.request(peer: Array("c".utf8), dialect: .mdp02, service: Titanic.close, body: [first], owner: "", workers: rig.workers))
        let asked = handle(.request(peer: Array("c".utf8), dialect: .mdp02, service: Titanic.request, body: body, owner: "", workers: rig.workers))
        let load = try #require(asked.compactMap { if case .load(let load) = $0 { load } else { nil } }.first)
        let persisted = handle(.endOfTurn(rig.workers))
        let closing = try #require(persisted.compactMap { if case .persist(let batch) = $0 { batch } else { nil } }.first)
        // The key's read comes back first, from the store as it was.
        let answered = handle(.loaded(load, .record(stored)))
        #expect(JobRig.replies(answered).isEmpty, "not the closed job's id")
        _ = handle(.committed(closing, rig.workers, JobWriteOutcome()))
        let next = handle(.endOfTurn(rig.workers))
        let inserting = try #require(next.compactMap { if case .persist(let batch) = $0 { batch } else { nil } }.first)
        #expect(inserting.inserts.count == 1)
        let ack = JobRig.replies(handle(.committed(inserting, rig.workers, JobWriteOutcome()))).first { $0.service == Titanic.request }
        #expect(ack?.status == "200" && ack?.body.last != first)
        #expect(machine.writing.isEmpty)
    }

    @Test func twoSubmissionsOfOneKeyLookedUpAtOnceAreOneJob() throws {
        // Both lookups are asked before the store answers either (it works on its own thread), and the
        // second resubmission comes while the first one's insert is being written.
        let rig = JobRig()
        var machine = rig.machine
        var random = rig.random
        func handle(_ event: JobMachine.Event) -> [JobMachine.Action] { machine.handle(event, now: rig.now, random: &random) }
        func loads(_ actions: [JobMachine.Action]) -> [JobLoad] { actions.compactMap { if case .load(let load) = $0 { load } else { nil } } }
        let body: [[UInt8]] = [Array("ocr".utf8), Array(#"{"job":{"idempotencyKey":"k"}}"#.utf8)]
        let first = try #require(loads(handle(.request(peer: Array("a".utf8), dialect: .mdp02, service: Titanic.request, body: body, owner: "",
                                                       workers: rig.workers))).first)
        let second = try #require(loads(handle(.request(peer: Array("b".utf8), dialect: .mdp02, service: Titanic.request, body: body, owner: "",
                                                        workers: rig.workers))).first)
        _ = handle(.loaded(first, .record(nil)))
        _ = handle(.loaded(second, .record(nil)))
        let batch = try #require(handle(.endOfTurn(rig.workers)).compactMap { if case .persist(let batch) = $0 { batch } else { nil } }.first)
        #expect(batch.inserts.count == 1 && batch.inserts.first?.submitters.count == 2)
        // A third, while that insert is being written: no lookup, answered with the others.
        #expect(loads(handle(.request(peer: Array("c".utf8), dialect: .mdp02, service: Titanic.request, body: body, owner: "",
                                      workers: rig.workers))).isEmpty)
        let answers = JobRig.replies(handle(.committed(batch, rig.workers, JobWriteOutcome()))).filter { $0.service == Titanic.request }
        #expect(answers.map(\.peer).sorted() == ["a", "b", "c"])
        #expect(Set(answers.map { $0.body.last ?? [] }).count == 1, "one job")
        #expect(machine.insertedKeys.isEmpty && machine.lateSubmitters.isEmpty)
    }

    // MARK: - Cancel, close

    @Test func cancelIsAnsweredOnceOnDiskAndUndoneWhenTheWriteFails() throws {
        var rig = JobRig()
        let (id, _) = rig.submit()
        let jobID = try #require(id)
        rig.failWrites = true
        let refused = JobRig.replies(rig.ask(Titanic.cancel, [Array(jobID.utf8)]))
        #expect(refused.first?.status.hasPrefix("500") == true)
        #expect(rig.state(of: jobID) == .queued, "a cancel that did not reach the disk did not happen")
        rig.failWrites = false
        let cancelled = JobRig.replies(rig.ask(Titanic.cancel, [Array(jobID.utf8)]))
        #expect(cancelled.first?.status == "200")
        let status = try #require(cancelled.first?.body.last)
        #expect(String(decoding: status, as: UTF8.self).contains(#""state":"cancelled""#))
        #expect(rig.rows[jobID]?.record.state == .cancelled)
        #expect(JobRig.replies(rig.ask(Titanic.reply, [Array(jobID.utf8)])).first?.status == "400 cancelled")
    }

    @Test func closeForgetsTheJobAndAnswersHeldReaders() throws {
        var rig = JobRig()
        let (id, _) = rig.submit()
        let jobID = try #require(id)
        let held = rig.ask(Titanic.reply, [Array(jobID.utf8), Array(#"{"waitMs":10000}"#.utf8)], from: "r")
        #expect(JobRig.replies(held).isEmpty)
        let closed = JobRig.replies(rig.ask(Titanic.close, [Array(jobID.utf8)]))
        #expect(closed.contains { $0.peer == "r" && $0.error?.code == .unknownJob })
        #expect(closed.contains { $0.peer == "c" && $0.body == [Array("200".utf8)] })
        #expect(rig.rows[jobID] == nil)
        #expect(JobRig.replies(rig.ask(Titanic.status, [Array(jobID.utf8)])).first?.error?.code == .unknownJob)
    }

    @Test func someoneElsesJobIsUnknown() throws {
        var rig = JobRig()
        let (id, _) = rig.submit(owner: "alice")
        let jobID = try #require(id)
        #expect(JobRig.replies(rig.ask(Titanic.status, [Array(jobID.utf8)], owner: "bob")).first?.error?.code == .unknownJob)
        #expect(JobRig.replies(rig.ask(Titanic.status, [Array(jobID.utf8)], owner: "alice")).first?.status == "200")
    }

    // MARK: - Held readers, TTL

    @Test func aHeldReaderGetsTheResultOnceItIsOnDiskOrAsksAgainLater() throws {
        var rig = JobRig()
        let (jobID, tag) = try rig.dispatchedJob()
        _ = rig.ask(Titanic.reply, [Array(jobID.utf8), Array(#"{"waitMs":1000}"#.utf8)], from: "r1")
        _ = rig.handle(.attemptReplied(tag: tag, body: [Array("text".utf8)]))
        let done = JobRig.replies(rig.endTurn())
        #expect(done == [JobRig.Reply(peer: "r1", service: Titanic.reply, body: [Array("200".utf8), Array("text".utf8)])])
        // Another job nobody finishes: the reader is told 300 when its wait is over.
        let (other, _) = rig.submit()
        _ = rig.ask(Titanic.reply, [Array((other ?? "").utf8), Array(#"{"waitMs":1000}"#.utf8)], from: "r2")
        rig.advance(ms: 999)
        #expect(JobRig.replies(rig.tick()).isEmpty)
        rig.advance(ms: 1)
        #expect(JobRig.replies(rig.tick()) == [JobRig.Reply(peer: "r2", service: Titanic.reply, body: [Array("300".utf8)])])
    }

    @Test func aResultIsGoneAfterItsTTLAndTheSweepIsAskedFor() throws {
        var rig = JobRig()
        let (jobID, tag) = try rig.dispatchedJob(#""resultTtlSeconds":2"#)
        _ = rig.handle(.attemptReplied(tag: tag, body: [Array("text".utf8)]))
        _ = rig.endTurn()
        rig.advance(ms: 1_999)
        #expect(JobRig.replies(rig.ask(Titanic.reply, [Array(jobID.utf8)])).first?.status == "200")
        rig.advance(ms: 1)
        #expect(JobRig.replies(rig.ask(Titanic.reply, [Array(jobID.utf8)])).first?.error?.code == .unknownJob)
        rig.advance(ms: 10_000)
        #expect(rig.tick().contains(.sweep(before: rig.now)))
        #expect(!rig.tick().contains(.sweep(before: rig.now)), "one sweep per interval")
    }

    // MARK: - Recovery, shutdown

    @Test func recoveredJobsRunAgainInTheirOrder() throws {
        func record(_ id: String, _ sequence: Int64, _ priority: JobPriority) -> JobRecord {
            JobRecord(id: id, service: "ocr", owner: "", idempotencyKey: nil, priority: priority, state: .queued, attempts: 1, maxAttempts: 3,
                      createdAt: 1_000, updatedAt: 1_000, startedAt: nil, finishedAt: nil, notBefore: 1_000, deadline: nil, resultTTL: 60_000,
                      expiresAt: nil, sequence: sequence, requestBytes: 1, lastError: nil)
        }
        var rig = JobRig(recovered: [record("a", 1, .normal), record("b", 2, .high), record("c", 3, .normal)])
        for id in ["a", "b", "c"] { rig.rows[id] = JobRig.Row(record: record(id, 0, .normal), request: [Array(id.utf8)]) }
        #expect(rig.machine.activeCount == 3)
        rig.free(3)
        let bodies = JobRig.dispatches(rig.endTurn()).map(\.body)
        #expect(bodies == [[Array("b".utf8)], [Array("a".utf8)], [Array("c".utf8)]])
        #expect(rig.machine.active["a"]?.attempts == 2, "attempts count across restarts")
    }

    @Test func aJobWhoseRequestIsGoneIsForgotten() {
        var rig = JobRig()
        _ = rig.submit()
        rig.rows = [:]
        rig.free(1)
        #expect(JobRig.dispatches(rig.endTurn()).isEmpty)
        #expect(rig.machine.activeCount == 0)
    }

    @Test func shutdownTellsHeldReadersToAskAgain() throws {
        var rig = JobRig()
        let (id, _) = rig.submit()
        _ = rig.ask(Titanic.reply, [Array((id ?? "").utf8), Array(#"{"waitMs":5000}"#.utf8)], from: "r")
        #expect(JobRig.replies(rig.handle(.shutdown)) == [JobRig.Reply(peer: "r", service: Titanic.reply, body: [Array("300".utf8)])])
    }

    @Test func aJobMayTargetOnlyAServiceThatHasOrHadAWorker() throws {
        var rig = JobRig()
        let body: [[UInt8]] = [Array("fresh".utf8), Array("{}".utf8)]
        #expect(JobRig.replies(rig.ask(Titanic.request, body)).first?.error?.code == .unknownService)
        #expect(JobRig.replies(rig.ask(Titanic.request, [Array("mmi.service".utf8), Array("{}".utf8)])).first?.error?.code == .unknownService)
        // Its first worker registered earlier in the same turn: already a target, remembered with the job.
        rig.workers.services.append("fresh")
        #expect(JobRig.replies(rig.ask(Titanic.request, body)).first?.status == "200")
        #expect(rig.services.contains("fresh"))
        // Once seen, always a target, workers or not.
        rig.workers.services = []
        #expect(JobRig.replies(rig.ask(Titanic.request, body)).first?.status == "200")
    }

    @Test func aFullQueueAnswersBusyAtOnce() throws {
        var configuration = JobRig.configuration
        configuration.maxActiveJobs = 1
        var rig = JobRig(configuration: configuration)
        #expect(rig.submit().id != nil)
        let (id, actions) = rig.submit()
        #expect(id == nil)
        #expect(JobRig.replies(actions).first?.error?.code == .busy)
    }
}
