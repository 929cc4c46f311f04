import QuireSupport
import QuireTestSupport
import QuireWire
import Testing

@testable import QuireBroker

/// The broker and its durable jobs composed: Majordomo frames in, frames and store operations out.
@Suite struct BrokerMachineTests {
    struct Rig {
        var machine: BrokerMachine
        var now = Instant(nanoseconds: 1_000_000_000)
        var wallClock: Int64 = 1_700_000_000_000
        var random = SplitMix64(seed: 7)
        var rows: [String: (record: JobRecord, request: [[UInt8]], reply: [[UInt8]]?)] = [:]
        /// The recoveries asked for after a lost store.
        var recoveries: [JobConfiguration] = []
        /// A store brokers share, in memory: when set, the store's work goes to it.
        var shared: MemoryJobStorage?
        /// The shared store cannot be reached from this broker: writes wait, as on the store's thread
        /// behind a recovery, until ``storeBack()``.
        var storeDown = false
        var waitingWrites: [JobBatch] = []

        init(jobs: Bool = true, shared: MemoryJobStorage? = nil) {
            let configuration = BrokerConfiguration(heartbeatInterval: 1_000, heartbeatLiveness: 3, busyWorkerTimeout: 20_000, requestTimeout: 5_000,
                                                    maxAttempts: 2, maxQueuedRequests: 3, maxMessageBytes: 1_024, maxFrames: 8)
            var jobConfiguration = JobRig.configuration
            if shared != nil { jobConfiguration.store = "postgresql://test/quire" }
            let job = JobMachine(configuration: jobConfiguration, recovered: [], knownServices: [], lastSequence: 0, now: wallClock)
            machine = BrokerMachine(broker: BrokerState(configuration: configuration), jobs: jobs ? job : nil)
            self.shared = shared
        }

        /// The shared store is reachable again: the writes that waited go, then the machine hears so.
        mutating func storeBack() -> [Sent] {
            storeDown = false
            var sent: [Sent] = []
            for batch in waitingWrites {
                let outcome = (try? shared?.write([batch])) ?? JobWriteOutcome()
                sent += handle(.committed(batch, outcome))
            }
            waitingWrites = []
            return sent
        }

        /// Handles the event and carries out store actions in memory; returns the frames sent, by peer.
        mutating func handle(_ event: BrokerMachine.Event) -> [Sent] {
            var pending = machine.handle(event, now: now, wallClock: wallClock, random: &random)
            var sent: [Sent] = []
            var index = 0
            while index < pending.count {
                let action = pending[index]
                index += 1
                switch action {
                case .send(let peer, let frames):
                    sent.append(Sent(peer: String(decoding: peer, as: UTF8.self), frames: frames))
                case .persist(let batch) where shared != nil:
                    if storeDown {
                        waitingWrites.append(batch)
                    } else {
                        let outcome = (try? shared?.write([batch])) ?? JobWriteOutcome()
                        pending += machine.handle(.committed(batch, outcome), now: now, wallClock: wallClock, random: &random)
                    }
                case .load(let load) where shared != nil:
                    pending += machine.handle(.loaded(load, shared!.load(load)), now: now, wallClock: wallClock, random: &random)
                case .claim(let claim) where shared != nil && !storeDown:
                    let taken = Result<[ClaimedJob], JobStoreError> { () throws(JobStoreError) -> [ClaimedJob] in try shared!.claim(claim) }
                    pending += machine.handle(.claimed(claim, taken, seconds: 0.001), now: now, wallClock: wallClock, random: &random)
                case .persist(let batch):
                    for insert in batch.inserts { rows[insert.record.id] = (insert.record, insert.request, nil) }
                    for (id, update) in batch.updates {
                        rows[id]?.record = update.record
                        if update.reply != nil { rows[id]?.reply = update.reply }
                    }
                    pending += machine.handle(.committed(batch, JobWriteOutcome()), now: now, wallClock: wallClock, random: &random)
                case .load(let load):
                    let result: JobLoad.Result
                    switch load {
                    case .request(let id): result = .frames(rows[id]?.request)
                    case .reply(let job, _): result = .frames(rows[job.id]?.reply)
                    case .job(let id, _): result = .record(rows[id]?.record)
                    case .key: result = .record(nil)
                    }
                    pending += machine.handle(.loaded(load, result), now: now, wallClock: wallClock, random: &random)
                case .recoverJobs(let configuration):
                    recoveries.append(configuration)
                case .log, .sweep, .claim, .renew, .maintain:
                    break
                }
            }
            return sent
        }

        mutating func send(_ peer: String, _ frames: [[UInt8]]) -> [Sent] {
            var sent = handle(.message(peer: Array(peer.utf8), frames: frames))
            sent += handle(.endOfTurn)
            return sent
        }
    }

    @Test func aJobGoesFromClientToWorkerAndItsResultBackToAReader() throws {
        var rig = Rig()
        _ = rig.send("w", MajordomoCodec.workerReady(.mdp02, service: "ocr"))
        let submitted = rig.send("c", MajordomoCodec.clientRequest(.mdp02, service: Titanic.request,
                                                                   body: [Array("ocr".utf8), Array(#"{"image":1}"#.utf8)]))
        let accepted = try #require(submitted.first { $0.peer == "c" })
        let id = try #require(accepted.frames.last)
        #expect(Titanic.isJobID(String(decoding: id, as: UTF8.self)))
        // The same turn's commit hands the job to the idle worker, as a plain Majordomo REQUEST.
        let request = try #require(submitted.first { $0.peer == "w" })
        let address = try #require(request.requestAddress)
        #expect(request.frames.last == Array(#"{"image":1}"#.utf8))
        // The worker's reply goes to the job, not to a peer.
        let replied = rig.send("w", MajordomoCodec.workerReply(.mdp02, .final, address: address, body: [Array("text".utf8)]) ?? [])
        #expect(replied.isEmpty)
        let read = rig.send("r", MajordomoCodec.clientRequest(.mdp02, service: Titanic.reply, body: [id]))
        #expect(read.count == 1)
        #expect(read.first?.frames.suffix(2) == [Array("200".utf8), Array("text".utf8)])
        #expect(rig.machine.broker.statistics.services["ocr"]?.jobs.completed == 1)
    }

    /// A client that saw the worker (MMI) may submit before the loop's turn ends.
    @Test func aServiceWhoseWorkerJustRegisteredIsATargetInTheSameTurn() throws {
        var rig = Rig()
        var sent = rig.handle(.message(peer: Array("w".utf8), frames: MajordomoCodec.workerReady(.mdp02, service: "fresh")))
        sent += rig.handle(.message(peer: Array("c".utf8), frames: MajordomoCodec.clientRequest(.mdp02, service: Titanic.request,
                                                                                                 body: [Array("fresh".utf8), [1]])))
        sent += rig.handle(.endOfTurn)
        let accepted = try #require(sent.first { $0.peer == "c" })
        #expect(accepted.frames.suffix(2).first == Array("200".utf8))
        #expect(sent.contains { $0.peer == "w" && $0.isRequest })
    }

    @Test func withoutADataFolderTitanicIsUnavailable() throws {
        var rig = Rig(jobs: false)
        let sent = rig.send("c", MajordomoCodec.clientRequest(.mdp02, service: Titanic.request, body: [Array("ocr".utf8), [1]]))
        let reply = try #require(sent.first)
        #expect(reply.frames.contains(Array("500 service_unavailable".utf8)))
        #expect(reply.frames.last.flatMap { WireError(jsonFrame: $0) }?.code == .serviceUnavailable)
    }

    @Test func aWorkerLostWhileHoldingAJobSendsItToTheNextWorker() throws {
        var rig = Rig()
        _ = rig.send("w1", MajordomoCodec.workerReady(.mdp02, service: "ocr"))
        let submitted = rig.send("c", MajordomoCodec.clientRequest(.mdp02, service: Titanic.request, body: [Array("ocr".utf8), [1]]))
        #expect(submitted.contains { $0.peer == "w1" && $0.isRequest })
        _ = rig.send("w2", MajordomoCodec.workerReady(.mdp02, service: "ocr"))
        // w1 says goodbye holding the job: the attempt counts, and the job goes to w2 at the turn's end.
        let after = rig.send("w1", MajordomoCodec.workerDisconnect(.mdp02))
        #expect(after.contains { $0.peer == "w2" && $0.isRequest })
    }

    /// What `mmi.service titanic.request` answers now.
    func offersJobs(_ rig: inout Rig) -> String? {
        let sent = rig.send("m", MajordomoCodec.clientRequest(.mdp02, service: ReservedService.mmiService, body: [Array(Titanic.request.utf8)]))
        return sent.first?.frames.last.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func mmiSaysWhetherTheBrokerKeepsDurableJobs() {
        var without = Rig(jobs: false)
        #expect(offersJobs(&without) == "404")
        var with = Rig()
        #expect(offersJobs(&with) == "200")
    }

    @Test func aLostStorePausesJobsUntilRecoveredAndALateReplyToAnOldAttemptIsNotTakenForANewOne() throws {
        var rig = Rig()
        _ = rig.send("w", MajordomoCodec.workerReady(.mdp02, service: "ocr"))
        let submitted = rig.send("c", MajordomoCodec.clientRequest(.mdp02, service: Titanic.request, body: [Array("ocr".utf8), Array("page".utf8)]))
        let id = try #require(submitted.first { $0.peer == "c" }?.frames.last)
        let jobID = String(decoding: id, as: UTF8.self)
        let oldAttempt = try #require(submitted.first { $0.peer == "w" }?.requestAddress)
        _ = rig.send("w2", MajordomoCodec.workerReady(.mdp02, service: "ocr"))
        // A reader waits for the result, held by the broker.
        #expect(rig.send("r", MajordomoCodec.clientRequest(.mdp02, service: Titanic.reply, body: [id, Array(#"{"waitMs":20000}"#.utf8)])).isEmpty)

        // The store's connection goes: jobs pause, the waiting reader hears 300 (ask again), and the
        // broker asks for a recovery.
        let lostTurn = rig.handle(.storeLost(JobStoreError(kind: .lost, message: "server closed the connection")))
        #expect(lostTurn.first { $0.peer == "r" }?.frames.last == Array("300".utf8))
        #expect(rig.machine.jobs == nil && rig.machine.jobsPaused)
        #expect(rig.recoveries == [JobRig.configuration])
        let paused = rig.send("c", MajordomoCodec.clientRequest(.mdp02, service: Titanic.request, body: [Array("ocr".utf8), [1]]))
        let refusal = try #require(paused.first?.frames.last.flatMap { WireError(jsonFrame: $0) })
        #expect(refusal.code == .serviceUnavailable && refusal.message.contains("paused"))
        _ = rig.handle(.storeLost(JobStoreError(kind: .lost, message: "again")))
        #expect(rig.recoveries.count == 1, "one loss, one recovery")
        #expect(offersJobs(&rig) == "404", "clients naming several brokers look elsewhere meanwhile")

        // Back, as the store has it: the job queued again, in a machine whose own tags would start at 1.
        var record = try #require(rig.rows[jobID]?.record)
        record.state = .queued
        let recovered = JobMachine(configuration: JobRig.configuration, recovered: [record], knownServices: ["ocr"], lastSequence: 1, now: rig.wallClock)
        _ = rig.handle(.jobsRecovered(recovered))
        #expect(rig.machine.jobs != nil && !rig.machine.jobsPaused)
        // The idle worker gets it as a new attempt, while the first worker still holds the old one.
        let turn = rig.handle(.endOfTurn)
        let newAttempt = try #require(turn.first { $0.peer == "w2" && $0.isRequest }?.requestAddress)
        #expect(newAttempt != oldAttempt, "attempt tags go on past the lost machine's")
        // The old attempt's late reply is not the job's result; the new attempt's is.
        _ = rig.send("w", MajordomoCodec.workerReply(.mdp02, .final, address: oldAttempt, body: [Array("stale".utf8)]) ?? [])
        #expect(rig.rows[jobID]?.reply == nil, "a reply to the lost machine's attempt is dropped")
        _ = rig.send("w2", MajordomoCodec.workerReply(.mdp02, .final, address: newAttempt, body: [Array("fresh".utf8)]) ?? [])
        #expect(rig.rows[jobID]?.reply == [Array("fresh".utf8)])
        #expect(offersJobs(&rig) == "200", "durable jobs offered again")
    }

    @Test func aSharedStoreLostKeepsTheJobsItsWorkersRunAndTheirLateWriteIsFencedOnceItIsBack() throws {
        let store = MemoryJobStorage(shared: true)
        var rig = Rig(shared: store)
        rig.machine.broker.statistics.keepStore(kind: "postgresql")
        _ = rig.send("w", MajordomoCodec.workerReady(.mdp02, service: "ocr"))
        let submitted = rig.send("c", MajordomoCodec.clientRequest(.mdp02, service: Titanic.request, body: [Array("ocr".utf8), Array("page".utf8)]))
        let jobID = String(decoding: try #require(submitted.first { $0.peer == "c" }?.frames.last), as: UTF8.self)
        let attempt = try #require(submitted.first { $0.peer == "w" }?.requestAddress, "claimed from the store and sent to the worker")

        // The store is lost: new durable jobs are refused, but the job the worker runs stays this broker's.
        rig.storeDown = true
        _ = rig.handle(.storeLost(JobStoreError(kind: .lost, message: "server closed the connection")))
        #expect(rig.machine.jobsPaused && rig.machine.jobs?.held[jobID] == 1)
        let paused = rig.send("c", MajordomoCodec.clientRequest(.mdp02, service: Titanic.request, body: [Array("ocr".utf8), [1]]))
        #expect(paused.first?.frames.last.flatMap { WireError(jsonFrame: $0) }?.code == .serviceUnavailable)

        // Meanwhile its lease runs out; another broker queues the job again and runs it as attempt 2.
        let other = store.asBroker("b")
        #expect(try other.maintain(now: rig.wallClock + 60_000).leasesExpired == ["ocr": 1])
        var second = try #require(try other.claim(JobClaim(service: "ocr", count: 1, now: rig.wallClock + 60_000, until: rig.wallClock + 80_000)).first)
        second.record.state = .done
        var finished = JobBatch()
        finished.updates[jobID] = JobBatch.Update(record: second.record, reply: [Array("attempt 2".utf8)], fence: .attempt(2))
        #expect(try other.write([finished]).refused.isEmpty)

        // The worker answers attempt 1; the write waits for the store, and once it is back is refused.
        _ = rig.send("w", MajordomoCodec.workerReply(.mdp02, .final, address: attempt, body: [Array("attempt 1".utf8)]) ?? [])
        let recovered = JobMachine(configuration: rig.machine.jobs!.configuration, recovered: [], knownServices: ["ocr"], lastSequence: 0, now: rig.wallClock)
        _ = rig.handle(.jobsRecovered(recovered))
        #expect(!rig.machine.jobsPaused)
        _ = rig.storeBack()
        #expect(store.rows[jobID]?.reply == [Array("attempt 2".utf8)], "the newer attempt's result stands")
        #expect(rig.machine.broker.statistics.store?.fencedWritesRefused == 1)
        #expect(rig.machine.jobs?.active.isEmpty == true, "the broker let the job go")
        #expect(offersJobs(&rig) == "200", "durable jobs offered again")
    }
}
