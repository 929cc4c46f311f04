import Foundation
import QuireSupport
import QuireWire
import Testing

@testable import QuireBroker
import QuireTestSupport

/// The broker's side of durable jobs: routing a job's attempt through `BrokerState`, and the store.
@Suite struct BrokerJobRoutingTests {
    @Test func titanicRequestsGoToTheJobManagerNotToAQueue() {
        var h = Harness()
        let actions = h.state.handle(.message(peer: Array("c".utf8), frames: MajordomoCodec.clientRequest(.mdp02, service: "titanic.request", body: [Array("echo".utf8), [1]])), now: h.now)
        #expect(actions == [.titanic(peer: Array("c".utf8), dialect: .mdp02, service: "titanic.request", body: [Array("echo".utf8), [1]], owner: "")])
        #expect(h.state.queueDepth(service: "titanic.request") == 0)
    }

    @Test func aJobsReplyAndPartialsComeBackTaggedForTheJobMachineNotToAClient() throws {
        var h = Harness()
        _ = h.ready("w")
        #expect(h.state.canTakeJob(service: "echo"))
        let sent = Harness.sends(h.state.submitJob(tag: 42, service: "echo", body: [Array("x".utf8)], now: h.now))
        let address = try #require(sent.first?.requestAddress)
        #expect(!h.state.canTakeJob(service: "echo"))
        let partial = h.state.handle(.message(peer: Array("w".utf8), frames: MajordomoCodec.workerReply(.mdp02, .partial, address: address, body: [[9]])!), now: h.now)
        // The job machine reads progress from it; nothing is sent to anyone.
        #expect(partial == [.jobPartial(tag: 42, body: [[9]])])
        let final = h.state.handle(.message(peer: Array("w".utf8), frames: MajordomoCodec.workerReply(.mdp02, .final, address: address, body: [[7]])!), now: h.now)
        #expect(final.contains(.jobReply(tag: 42, body: [[7]])))
        #expect(h.state.canTakeJob(service: "echo"))
    }

    @Test func aLostWorkerReportsTheJobInsteadOfRequeueingIt() {
        var h = Harness()
        _ = h.ready("w")
        _ = h.state.submitJob(tag: 7, service: "echo", body: [[1]], now: h.now)
        h.advance(ms: 10_000)
        let actions = h.state.handle(.tick, now: h.now)
        let failed = actions.compactMap { action -> (UInt64, WireError.Code, Bool)? in
            if case .jobFailed(let tag, let error, let reached) = action { return (tag, error.code, reached) }
            return nil
        }
        #expect(failed.count == 1)
        #expect(failed.first?.0 == 7 && failed.first?.1 == .workerLost && failed.first?.2 == true)
        #expect(h.state.queueDepth(service: "echo") == 0)
    }

    @Test func anUndeliverableJobRequestDoesNotCountAsReachingAWorker() {
        var h = Harness()
        _ = h.ready("w")
        let actions = h.state.submitJob(tag: 3, service: "echo", body: [[1]], now: h.now)
        guard case .send(let peer, let frames)? = actions.first else {
            Issue.record("no REQUEST sent")
            return
        }
        let after = h.state.handle(.undeliverable(peer: peer, frames: frames), now: h.now)
        #expect(after.contains { if case .jobFailed(3, _, false) = $0 { return true } else { return false } })
    }

    @Test func shutdownLeavesJobsToTheStore() {
        var h = Harness()
        _ = h.ready("w")
        _ = h.state.submitJob(tag: 1, service: "echo", body: [[1]], now: h.now)
        let actions = h.state.handle(.shutdown, now: h.now)
        // Only the worker's DISCONNECT: nobody to answer for the job; it runs again after a restart.
        #expect(Harness.sends(actions).count == 1)
    }

    @Test func workersCannotServeTitanic() {
        var h = Harness()
        let sent = h.ready("w", service: "titanic.request")
        #expect(sent.count == 1)
        #expect(h.state.workerCount(service: "titanic.request") == 0)
    }
}

@Suite struct JobStoreTests {
    func temporaryDirectory() -> String { QuireTestSupport.temporaryDirectory("quire-jobstore") }

    func record(_ id: String, state: JobState = .queued, sequence: Int64 = 1) -> JobRecord {
        JobRecord(id: id, service: "ocr", owner: "", idempotencyKey: "k-\(id)", priority: .high, state: state, attempts: 1, maxAttempts: 3,
                  createdAt: 1_000, updatedAt: 1_000, startedAt: nil, finishedAt: nil, notBefore: 1_000, deadline: nil, resultTTL: 60_000,
                  expiresAt: nil, sequence: sequence, requestBytes: 3, lastError: nil)
    }

    @Test func framesRoundTripThroughOneBlob() {
        let frames: [[UInt8]] = [[], [0], Array("hello".utf8), [UInt8](repeating: 0xff, count: 70_000)]
        #expect(FrameCoding.decode(FrameCoding.encode(frames)) == frames)
        #expect(FrameCoding.decode(FrameCoding.encode([])) == [])
        // Truncated or padded blobs are refused, not misread.
        let blob = FrameCoding.encode(frames)
        #expect(FrameCoding.decode(Array(blob.dropLast())) == nil)
        #expect(FrameCoding.decode(blob + [0]) == nil)
        #expect(FrameCoding.decode([0, 0]) == nil)
    }

    @Test func aNewStoreIsMigratedToTheLatestSchemaAndReopens() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try SQLiteJobStore(directory: directory)
            #expect(store.schemaVersion == SQLiteJobStore.migrations.count)
            try store.batch { () throws(SQLiteError) in try store.insert(record("a"), request: [[1, 2, 3]]) }
        }
        let again = try SQLiteJobStore(directory: directory)
        #expect(again.schemaVersion == SQLiteJobStore.migrations.count)
        #expect(try again.request(id: "a") == [[1, 2, 3]])
        #expect(again.nextSequence() == 2)
    }

    @Test func recoveryRequeuesRunningJobsAndKeepsFinishedOnesOut() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteJobStore(directory: directory)
        try store.batch { () throws(SQLiteError) in
            try store.insert(record("q", state: .queued, sequence: 1), request: [[1]])
            try store.insert(record("r", state: .running, sequence: 2), request: [[2]])
            try store.insert(record("d", state: .done, sequence: 3), request: [[3]])
        }
        let active = try store.batch { () throws(SQLiteError) in try store.recover(now: 5_000) }
        #expect(active.map(\.id) == ["q", "r"])
        #expect(active.allSatisfy { $0.state == .queued })
        #expect(try store.record(id: "r")?.updatedAt == 5_000)
        #expect(try store.record(owner: "", idempotencyKey: "k-d")?.id == "d")
    }

    @Test func finishedResultsAreSweptAfterTheirTTL() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteJobStore(directory: directory)
        var done = record("x")
        try store.batch { () throws(SQLiteError) in try store.insert(done, request: [[1]]) }
        done.state = .done
        done.expiresAt = 10_000
        try store.batch { () throws(SQLiteError) in try store.update(done, reply: [Array("result".utf8)]) }
        #expect(try store.reply(id: "x") == [Array("result".utf8)])
        #expect(try store.batch { () throws(SQLiteError) in try store.sweep(now: 9_999) } == 0)
        #expect(try store.batch { () throws(SQLiteError) in try store.sweep(now: 10_000) } == 1)
        #expect(try store.record(id: "x") == nil)
    }

    /// A read left open would pin a snapshot and keep every checkpoint from passing it: the WAL would
    /// grow until the disk is full.
    @Test func readsLeaveNothingThatHoldsTheWALBack() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteJobStore(directory: directory)
        for n in 0..<40 {
            try store.batch { () throws(SQLiteError) in
                try store.insert(record("j\(n)", sequence: Int64(n + 1)), request: [[UInt8](repeating: UInt8(n), count: 100_000)])
            }
            _ = try store.record(id: "j\(n)")
            _ = try store.request(id: "j\(n)")
            _ = try store.record(owner: "", idempotencyKey: "k-j\(n)")
            _ = try store.knownServices()
        }
        let checkpointer = try SQLiteDatabase(path: store.path)
        let checkpoint = try checkpointer.statement("PRAGMA wal_checkpoint(PASSIVE)")
        defer { checkpoint.reset() }
        #expect(try checkpoint.step())
        let (walFrames, copied) = (checkpoint.int(1), checkpoint.int(2))
        #expect(walFrames > 0)
        #expect(copied == walFrames, "only \(copied) of \(walFrames) WAL frames could be checkpointed")
    }

    @Test func aStoreFromANewerBrokerIsRefused() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try SQLiteJobStore(directory: directory)
            _ = store
        }
        let database = try SQLiteDatabase(path: directory + "/" + SQLiteJobStore.fileName)
        try database.execute("PRAGMA user_version = 99")
        #expect(throws: JobStoreError.self) { try SQLiteJobStore(directory: directory) }
    }
}

@Suite struct TitanicWireTests {
    @Test func statusFramesMayCarryAReason() {
        #expect(Titanic.status(of: Array("200".utf8)) == .ok)
        #expect(Titanic.status(of: Array("500 busy".utf8)) == .error)
        #expect(Titanic.status(of: Array("4000".utf8)) == nil)
        #expect(Titanic.status(of: Array("20".utf8)) == nil)
        #expect(Titanic.status(of: Array("201".utf8)) == nil)
    }

    @Test func jobIDsAre32HexCharacters() {
        #expect(Titanic.isJobID("0123456789abcdefABCDEF0123456789"))
        #expect(!Titanic.isJobID("0123456789abcdefABCDEF012345678"))
        #expect(!Titanic.isJobID("g123456789abcdefABCDEF0123456789"))
    }

    @Test func theEnvelopeTakesOutTheBrokersMembersOnly() throws {
        let frame = Array(#"{"languages":["en"],"job":{"priority":"high","maxAttempts":2},"token":"t.o.k"}"#.utf8)
        let (envelope, rest) = try BrokerEnvelope.split(frame).get()
        #expect(envelope.token == "t.o.k")
        #expect(envelope.job == JobOptions(priority: "high", maxAttempts: 2))
        #expect(String(decoding: rest, as: UTF8.self) == #"{"languages":["en"]}"#)
        // Frames without them pass through byte for byte.
        let plain = Array(#"{ "languages" : ["en"] }"#.utf8)
        #expect(try BrokerEnvelope.split(plain).get().1 == plain)
        let binary: [UInt8] = [0x89, 0x50, 0x4e, 0x47]
        #expect(try BrokerEnvelope.split(binary).get().1 == binary)
    }

    @Test(arguments: [
        #"{"job":"high"}"#, #"{"job":[1]}"#, #"{"job":null}"#, #"{"job":{"priority":1}}"#, #"{"job":{"other":1}}"#,
        #"{"token":5}"#, #"{"waitMs":-1}"#, #"{"waitMs":1.5}"#, #"{"job":{"priority":"high""#,
    ])
    func malformedMembersAreTypedErrors(_ text: String) {
        switch BrokerEnvelope.split(Array(text.utf8)) {
        case .success: Issue.record("accepted \(text)")
        case .failure(let error): #expect(error.code == .badRequest || error.code == .invalidJSON)
        }
    }
}

@Suite struct TokenMemberScanTests {
    @Test(arguments: [
        (#"{"token":"t.o.k"}"#, "{}"),
        (#"{"token":"t.o.k","a":1}"#, #"{"a":1}"#),
        (#"{"a":1,"token":"t.o.k"}"#, #"{"a":1}"#),
        (#"{"a":[1,{"token":"inner"}],"token":"t.o.k","b":"x\"y"}"#, #"{"a":[1,{"token":"inner"}],"b":"x\"y"}"#),
        (#" { "token" : "t.o.k" , "a" : true } "#, #" {  "a" : true } "#),
    ])
    func theTokenIsTakenOutAndTheRestKept(_ input: String, _ rest: String) throws {
        let (envelope, frame) = try BrokerEnvelope.split(Array(input.utf8), removing: ["token"]).get()
        #expect(envelope.token == "t.o.k")
        #expect(String(decoding: frame, as: UTF8.self) == rest)
        #expect((try? JSONSerialization.jsonObject(with: Data(frame))) != nil)
    }

    @Test func framesWithoutATokenPassUntouched() throws {
        let frame = Array(#"{"a":"token","b":{"token":"nested"}}"#.utf8)
        let (envelope, rest) = try BrokerEnvelope.split(frame, removing: ["token"]).get()
        #expect(envelope.token == nil)
        #expect(rest == frame)
    }

    @Test(arguments: [#"{"token":5}"#, #"{"token":"a","token":"b"}"#, #"{"token":"t"#, #"{"token":"t"} x"#])
    func oddFramesGoToTheDecoder(_ input: String) {
        // Either a typed error or the decoder's reading; never a half-scanned frame.
        switch BrokerEnvelope.split(Array(input.utf8), removing: ["token"]) {
        case .success(let (envelope, rest)):
            #expect(envelope.token != nil)
            #expect((try? JSONSerialization.jsonObject(with: Data(rest))) != nil)
        case .failure(let error):
            #expect(error.code == .badRequest || error.code == .invalidJSON)
        }
    }
}

@Suite struct VoluntaryDisconnectTests {
    /// Scale-down: a draining worker says goodbye while a request it never started is on its way to it.
    @Test func aRequestHeldByAWorkerThatSaysGoodbyeCostsNoAttempt() throws {
        var h = Harness()  // maxAttempts 2
        for round in 0..<3 {
            let worker = "w\(round)"
            _ = h.ready(worker)
            let sent = round == 0 ? h.request("c") : []
            if round == 0 { #expect(sent.first?.isRequest == true) }
            // The goodbye crosses the request: the request goes to the next worker, attempts unchanged.
            let after = h.send(worker, MajordomoCodec.workerDisconnect(.mdp02))
            #expect(!after.contains { $0.peer == "c" }, "the client must not get worker_lost after \(round + 1) goodbyes")
            #expect(h.state.queueDepth(service: "echo") == 1)
        }
        let next = h.ready("last")
        let address = try #require(next.first(where: { $0.peer == "last" })?.requestAddress)
        let reply = h.final("last", address: address, body: ["done"])
        #expect(reply.first?.peer == "c")
    }
}

extension VoluntaryDisconnectTests {
    /// A worker that takes requests and leaves without answering cannot pass one around for ever.
    @Test func goodbyesAreFreeOnlyUpToTheAttemptLimit() {
        var h = Harness()  // maxAttempts 2: 2 free goodbyes, then 2 counted
        _ = h.request("c")
        var lost: WireError?
        for round in 0..<10 where lost == nil {
            _ = h.ready("w\(round)")
            for sent in h.send("w\(round)", MajordomoCodec.workerDisconnect(.mdp02)) where sent.peer == "c" {
                lost = sent.error
                #expect(round == 3)
            }
        }
        #expect(lost?.code == .workerLost)
    }
}

extension VoluntaryDisconnectTests {
    /// Each attempt of a durable job is a new request to the broker: a goodbye must count, or a worker
    /// that leaves on a poison job would pass it around for ever.
    @Test func aJobHeldByAWorkerThatSaysGoodbyeCountsTheAttempt() {
        var h = Harness()
        _ = h.ready("w")
        _ = h.state.submitJob(tag: 9, service: "echo", body: [[1]], now: h.now)
        let actions = h.state.handle(.message(peer: Array("w".utf8), frames: MajordomoCodec.workerDisconnect(.mdp02)), now: h.now)
        #expect(actions.contains { if case .jobFailed(9, _, true) = $0 { return true } else { return false } })
    }
}
