import Dispatch
import Foundation
import Testing
import ZeroMQ
import QuireTestSupport

private let idle: PollEvents = []
private let readable: PollEvents = .readable
private let writable: PollEvents = .writable

@Suite("Poller and Wakeup")
struct PollerTests {
    @Test("readable fires for the socket with a message waiting and not for the other")
    func readableOnlyWhereAMessageWaits() throws {
        let context = try Context()
        let quietPull = try Socket(context: context, type: .pull)
        let quietEndpoint = try bindFresh(quietPull, .inproc)
        let busyPull = try Socket(context: context, type: .pull)
        let busyEndpoint = try bindFresh(busyPull, .inproc)
        let quietPush = try Socket(context: context, type: .push)
        try quietPush.connect(quietEndpoint)
        let busyPush = try Socket(context: context, type: .push)
        try busyPush.connect(busyEndpoint)

        let poller = Poller([.socket(quietPull, .readable), .socket(busyPull, .readable)])
        #expect(try poller.poll(timeoutMilliseconds: 0) == [idle, idle])

        #expect(try busyPush.send([bytes("waiting")]))
        #expect(try poller.poll(timeoutMilliseconds: 5_000) == [idle, readable])
        // Polling does not consume: the message is still there.
        #expect(try poller.poll(timeoutMilliseconds: 0) == [idle, readable])
        #expect(try busyPull.receive(dontWait: true) == [bytes("waiting")])
        // Once it is read, nothing is ready any more (events from the last poll are not left over).
        #expect(try poller.poll(timeoutMilliseconds: 0) == [idle, idle])

        #expect(try quietPush.send([bytes("now you")]))
        #expect(try poller.poll(timeoutMilliseconds: 5_000) == [readable, idle])
    }

    @Test("writable fires for a DEALER with a connected peer and not for one without")
    func writableOnlyWithAPeer() throws {
        let context = try Context()
        let router = try Socket(context: context, type: .router)
        let endpoint = try bindFresh(router, .inproc)
        let connected = try Socket(context: context, type: .dealer)
        try connected.connect(endpoint)
        let lonely = try Socket(context: context, type: .dealer)

        let poller = Poller([.socket(connected, [.readable, .writable]), .socket(lonely, [.readable, .writable])])
        #expect(try poller.poll(timeoutMilliseconds: 5_000) == [writable, idle])
    }

    @Test("a poll that times out returns no events, after about the timeout")
    func timeout() throws {
        let context = try Context()
        let pull = try Socket(context: context, type: .pull)
        _ = try bindFresh(pull, .inproc)
        let wakeup = try Wakeup()
        let poller = Poller([.socket(pull, .readable), .descriptor(wakeup.descriptor, .readable)])

        let start = ContinuousClock.now
        let events = try poller.poll(timeoutMilliseconds: 200)
        let elapsed = ContinuousClock.now - start
        #expect(events == [idle, idle])
        #expect(events.allSatisfy { $0.isEmpty })
        #expect(elapsed >= .milliseconds(150), "returned after \(elapsed)")
        #expect(elapsed < .seconds(5), "returned after \(elapsed)")
    }

    @Test("a poller with no items just waits out the timeout")
    func noItems() throws {
        #expect(try Poller([]).poll(timeoutMilliseconds: 10) == [])
    }

    @Test("a Wakeup signalled from another thread wakes poll(-1); drain() resets it")
    func wakeupFromAnotherThread() throws {
        let context = try Context()
        let wakeup = try Wakeup()

        // A watchdog: if the Wakeup never wakes the poll, a message on this socket does, so the
        // test fails instead of hanging.
        let watchdogEndpoint = uniqueInprocEndpoint()
        let watchdog = try Socket(context: context, type: .pull)
        try watchdog.bind(watchdogEndpoint)
        let testFinished = DispatchSemaphore(value: 0)
        let watchdogDone = startThread {
            guard !joined(testFinished, within: 10) else { return }
            guard let push = try? Socket(context: context, type: .push),
                  (try? push.connect(watchdogEndpoint)) != nil else { return }
            _ = try? push.send([bytes("timeout")])
            // Keep the socket open until the test has seen the message.
            _ = joined(testFinished, within: 30)
        }
        defer {
            testFinished.signal()
            _ = joined(watchdogDone, within: 35)
        }

        let poller = Poller([.descriptor(wakeup.descriptor, .readable), .socket(watchdog, .readable)])
        #expect(try poller.poll(timeoutMilliseconds: 0) == [idle, idle])

        let signalled = startThread {
            Thread.sleep(forTimeInterval: 0.1)
            wakeup.signal()
        }
        let start = ContinuousClock.now
        let events = try poller.poll(timeoutMilliseconds: -1)
        let elapsed = ContinuousClock.now - start
        #expect(events == [readable, idle], "woken by \(events) after \(elapsed)")
        #expect(elapsed >= .milliseconds(50), "poll returned before the signal: \(elapsed)")
        #expect(joined(signalled))

        // Still signalled until drained...
        #expect(try poller.poll(timeoutMilliseconds: 0) == [readable, idle])
        wakeup.drain()
        #expect(try poller.poll(timeoutMilliseconds: 0) == [idle, idle])
    }

    @Test("several signals are cleared by one drain; draining an unsignalled Wakeup does not block")
    func drainClearsAllSignals() throws {
        let wakeup = try Wakeup()
        let poller = Poller([.descriptor(wakeup.descriptor, .readable)])

        wakeup.drain()
        #expect(try poller.poll(timeoutMilliseconds: 0) == [idle])

        for _ in 0..<3 { wakeup.signal() }
        #expect(try poller.poll(timeoutMilliseconds: 0) == [readable])
        wakeup.drain()
        #expect(try poller.poll(timeoutMilliseconds: 0) == [idle])

        wakeup.signal()
        #expect(try poller.poll(timeoutMilliseconds: 0) == [readable])
    }

    @Test("polling a socket that was closed before the Poller was made throws ENOTSOCK")
    func closedSocket() throws {
        let context = try Context()
        let socket = try Socket(context: context, type: .pull)
        socket.close()
        // Without the check zmq_poll would get {socket: NULL, fd: -1}, a descriptor that never fires.
        _ = #expect(throws: ZMQError.self) {
            try Poller([.socket(socket, .readable)]).poll(timeoutMilliseconds: 0)
        }
    }

    @Test("each Wakeup has its own descriptor")
    func distinctDescriptors() throws {
        let first = try Wakeup()
        let second = try Wakeup()
        #expect(first.descriptor >= 0)
        #expect(first.descriptor != second.descriptor)

        first.signal()
        let poller = Poller([.descriptor(first.descriptor, .readable), .descriptor(second.descriptor, .readable)])
        #expect(try poller.poll(timeoutMilliseconds: 0) == [readable, idle])
    }
}
