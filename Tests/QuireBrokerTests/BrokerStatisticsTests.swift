import Foundation
import QuireStats
import QuireSupport
import QuireWire
import Testing

@testable import QuireBroker

@Suite("Broker statistics")
struct BrokerStatisticsTests {
    func snapshot(_ h: inout Harness) -> StatsSnapshot {
        h.state.statisticsSnapshot(now: h.now, wallClockMs: 1_000_000, interval: 1_000, pid: 42)
    }

    @Test("the job store's writes, failures, losses and recoveries are counted; no store, no store figures")
    func storeFigures() throws {
        var h = Harness()
        #expect(snapshot(&h).store == nil, "a broker without durable jobs says nothing of a store")
        h.state.statistics.keepStore(kind: "postgresql")
        for ms in [2.0, 3.0, 4.0] { h.state.statistics.storeWrote(seconds: ms / 1_000, committed: true, now: h.now) }
        h.state.statistics.storeWrote(seconds: 0.010, committed: false, now: h.now)
        h.state.statistics.storeLost()
        var store = try #require(snapshot(&h).store)
        #expect(store.kind == "postgresql" && store.state == "recovering")
        #expect(store.commits == 3 && store.commitFailures == 1 && store.connectionsLost == 1 && store.recoveries == 0)
        #expect(store.commitSeconds.count == 4)
        let p50 = try #require(store.commitSeconds.p50)
        #expect(p50 > 0.0027 && p50 <= 0.0033)
        h.state.statistics.storeRecovered()
        store = try #require(snapshot(&h).store)
        #expect(store.state == "serving" && store.recoveries == 1)
    }

    @Test("completed requests, bytes, run times and the worker's jobs are counted")
    func completedRequests() throws {
        var h = Harness()
        h.state.statistics.keepsEvents = true
        _ = h.ready("w1")
        for n in 0..<10 {
            let sent = h.request("c\(n)", body: ["hello"])
            let address = try #require(sent.first?.requestAddress)
            h.advance(ms: 3)
            _ = h.final("w1", address: address, body: ["hello!"])
        }
        let s = snapshot(&h)
        let echo = try #require(s.services.first { $0.name == "echo" })
        #expect(echo.requests.submitted == 10)
        #expect(echo.requests.completed == 10)
        #expect(echo.requests.failed == 0)
        #expect(echo.bytesIn == 50)
        #expect(echo.bytesOut == 60)
        #expect(echo.runSeconds.count == 10)
        let p50 = try #require(echo.runSeconds.p50)
        #expect(p50 > 0.0027 && p50 <= 0.003)
        #expect(echo.workers == ServiceStats.Workers(idle: 1, busy: 0))
        #expect(s.workers.count == 1)
        #expect(s.workers[0].jobsDone == 10)
        #expect(s.workers[0].state == "idle")
        #expect(s.sequence == 1)
        #expect(snapshot(&h).sequence == 2)
        let events = h.state.statistics.takeEvents(wallClockMs: 5)
        #expect(events.map(\.kind) == [.workerJoined])
        #expect(events.first?.timeMs == 5)
    }

    @Test("wait time runs from arrival to dispatch; queue depth and busy workers are live")
    func waitAndQueue() throws {
        var h = Harness()
        _ = h.ready("w1")
        let first = try #require(h.request("c1").first?.requestAddress)
        #expect(h.request("c2").isEmpty)  // queued: the only worker is busy
        var s = snapshot(&h)
        #expect(s.services[0].queue.depth == 1)
        #expect(s.services[0].workers == ServiceStats.Workers(idle: 0, busy: 1))
        #expect(s.workers[0].state == "busy")
        h.advance(ms: 40)
        let sent = h.final("w1", address: first, body: ["x"])
        #expect(sent.contains { $0.isRequest })
        s = snapshot(&h)
        #expect(s.services[0].queue.depth == 0)
        let waitMax = try #require(s.services[0].waitSeconds.max)
        #expect(abs(waitMax - 0.040) < 0.001)
    }

    @Test("an error reply from a worker counts as completed and failed")
    func workerErrorReply() throws {
        var h = Harness()
        _ = h.ready("w1")
        let address = try #require(h.request("c1").first?.requestAddress)
        let error = String(decoding: WireError(.corruptImage, "bad").jsonFrame, as: UTF8.self)
        _ = h.final("w1", address: address, body: [error])
        let echo = snapshot(&h).services[0]
        #expect(echo.requests.completed == 1)
        #expect(echo.requests.failed == 1)
    }

    @Test("rejections by reason: busy and too large")
    func rejections() {
        var h = Harness()
        for n in 0..<4 { _ = h.request("c\(n)") }  // limit 3: the fourth is busy
        _ = h.request("big", body: [String(repeating: "x", count: 2_000)])
        let s = snapshot(&h)
        #expect(s.services[0].rejections == Rejections(busy: 1, tooLarge: 1))
        #expect(s.totals.rejections == Rejections(busy: 1, tooLarge: 1))
        #expect(s.services[0].requests.submitted == 3)
    }

    @Test("queued requests that time out count as expired")
    func expired() {
        var h = Harness()
        _ = h.ready("w1", service: "other")
        _ = h.request("c1")
        h.advance(ms: 6_000)
        _ = h.tick()
        let echo = snapshot(&h).services.first { $0.name == "echo" }
        #expect(echo?.requests.expired == 1)
        #expect(h.state.statistics.queuedAt.isEmpty)
    }

    @Test("a lost worker's request is retried, then failed; worker.lost events say why")
    func retriedAndLost() throws {
        var h = Harness()
        h.state.statistics.keepsEvents = true
        _ = h.ready("w1")
        _ = h.request("c1")
        h.advance(ms: 4_000)
        _ = h.tick()  // w1 expired holding the request: requeued
        _ = h.ready("w2")
        h.advance(ms: 4_000)
        _ = h.tick()  // w2 expired too: attempts used up (2)
        let s = snapshot(&h)
        let echo = try #require(s.services.first)
        #expect(echo.requests.retried == 1)
        #expect(echo.requests.failed == 1)
        #expect(s.totals.workersJoined == 2)
        #expect(s.totals.workersLost == 2)
        let events = h.state.statistics.takeEvents(wallClockMs: 0)
        #expect(events.map(\.kind) == [.workerJoined, .workerLost, .workerJoined, .workerLost])
        #expect(events.filter { $0.kind == .workerLost }.allSatisfy { $0.reason == "dropped" })
        // A worker that says DISCONNECT left; one whose connection is gone is unreachable.
        _ = h.ready("w3")
        _ = h.ready("w4")
        _ = h.send("w3", MajordomoCodec.workerDisconnect(.mdp02))
        _ = h.state.handle(.undeliverable(peer: Array("w4".utf8), frames: MajordomoCodec.workerHeartbeat(.mdp02)), now: h.now)
        let reasons = h.state.statistics.takeEvents(wallClockMs: 0).filter { $0.kind == .workerLost }.map(\.reason)
        #expect(reasons == ["left", "unreachable"])
        #expect(events.map(\.sequence) == [1, 2, 3, 4])
        #expect(h.state.statistics.dispatchedAt.isEmpty && h.state.statistics.queuedAt.isEmpty)
    }

    @Test("a HEARTBEAT's report frame shows in the worker's entry; a plain HEARTBEAT still counts")
    func heartbeatReport() throws {
        var h = Harness()
        _ = h.ready("w1")
        let report = WorkerReport(jobsDone: 7, engineSeconds: 1.5, rssBytes: 31_000_000, pid: 99)
        h.advance(ms: 500)
        #expect(h.send("w1", MajordomoCodec.workerHeartbeat(.mdp02, report: report.jsonFrame)).isEmpty)
        var s = snapshot(&h)
        #expect(s.workers[0].report == report)
        #expect(s.workers[0].lastHeartbeatSecondsAgo == 0)
        h.advance(ms: 500)
        #expect(h.send("w1", MajordomoCodec.workerHeartbeat(.mdp02, report: Array("not json".utf8))).isEmpty)
        h.advance(ms: 2_500)
        _ = h.send("w1", MajordomoCodec.workerHeartbeat(.mdp02))
        _ = h.tick()
        s = snapshot(&h)
        #expect(s.workers.count == 1)  // alive: both heartbeats kept it
        #expect(s.workers[0].report == report)  // the bad frame was ignored, the good one kept
    }

    @Test("durable-job hooks land in the service's figures and job.dead is an event")
    func jobHooks() throws {
        var h = Harness()
        h.state.statistics.keepsEvents = true
        h.state.statistics.jobSubmitted(service: "ocr", bytes: 100)
        h.state.statistics.jobRetried(service: "ocr")
        h.state.statistics.jobFailed(service: "ocr")
        h.state.statistics.jobDead(service: "ocr", job: "j-1", reason: "engine_failure")
        h.state.statistics.setJobQueueDepth(service: "ocr", PriorityDepth(high: 1, normal: 2, low: 3))
        h.state.statistics.jobWaited(service: "ocr", seconds: 0.5, now: h.now)
        let ocr = try #require(snapshot(&h).services.first { $0.name == "ocr" })
        #expect(ocr.jobs == ServiceStats.JobCounters(submitted: 1, failed: 1, retried: 1, dead: 1))
        #expect(ocr.queue.depth == 6)
        #expect(ocr.queue.jobs == PriorityDepth(high: 1, normal: 2, low: 3))
        #expect(ocr.waitSeconds.count == 1)
        let events = h.state.statistics.takeEvents(wallClockMs: 0)
        #expect(events.count == 1)
        #expect(events.first?.job == "j-1")
    }

    @Test("error bodies are recognised without parsing")
    func errorBody() {
        #expect(BrokerStatistics.isErrorBody(Array(#"{"error":{"code":"x"}}"#.utf8)))
        #expect(BrokerStatistics.isErrorBody(Array(#"{ "error" : 1}"#.utf8)))
        #expect(!BrokerStatistics.isErrorBody(Array(#"{"errors":[]}"#.utf8)))
        #expect(!BrokerStatistics.isErrorBody(Array(#"{"pages":[]}"#.utf8)))
        #expect(!BrokerStatistics.isErrorBody(nil))
        #expect(!BrokerStatistics.isErrorBody(Array("error".utf8)))
    }
}
