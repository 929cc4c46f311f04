import Dispatch
import Foundation
import Testing
import ZeroMQ
import QuireTestSupport

@Suite("Context")
struct ContextTests {
    @Test("libraryVersion is a 4.x.y version string")
    func libraryVersionIs4x() {
        let parts = Context.libraryVersion.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3, "\(Context.libraryVersion)")
        #expect(parts.first == "4", "\(Context.libraryVersion)")
        #expect(parts.allSatisfy { Int($0) != nil }, "\(Context.libraryVersion)")
    }

    @Test("has() reports curve and rejects an unknown capability")
    func capabilities() {
        #expect(Context.has("curve"))
        #expect(Context.has("ipc"))
        #expect(!Context.has("no-such-capability"))
    }

    @Test("shutdown makes a receive blocked on another thread throw ETERM")
    func shutdownInterruptsBlockingReceive() throws {
        let context = try Context()
        let endpoint = uniqueInprocEndpoint()
        let blocking = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<[Frame]?, ZMQError>?>(nil)

        let finished = startThread {
            do throws(ZMQError) {
                let socket = try Socket(context: context, type: .pull)
                try socket.bind(endpoint)
                // A safety net only: the test gives up long before this timeout expires.
                try socket.setReceiveTimeout(milliseconds: 20_000)
                blocking.signal()
                outcome.value = .success(try socket.receive())
            } catch {
                outcome.value = .failure(error)
                blocking.signal()
            }
        }

        try #require(joined(blocking), "the receiving thread never started")
        Thread.sleep(forTimeInterval: 0.2)
        #expect(outcome.value == nil, "receive returned before shutdown: \(String(describing: outcome.value))")

        context.shutdown()
        try #require(joined(finished, within: 5), "receive was still blocked 5 s after shutdown")

        let result = try #require(outcome.value)
        guard case .failure(let error) = result else {
            Issue.record("receive returned \(result) instead of throwing")
            return
        }
        #expect(error.isTerminated)
        #expect(error.code == zmqETERM)
        #expect(error.operation == "zmq_msg_recv")
    }

    @Test("shutdown makes a poll blocked on another thread throw ETERM")
    func shutdownInterruptsBlockingPoll() throws {
        let context = try Context()
        let polling = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<[PollEvents], ZMQError>?>(nil)

        let finished = startThread {
            do throws(ZMQError) {
                let socket = try Socket(context: context, type: .pull)
                try socket.bind(uniqueInprocEndpoint())
                let poller = Poller([.socket(socket, .readable)])
                polling.signal()
                outcome.value = .success(try poller.poll(timeoutMilliseconds: 20_000))
            } catch {
                outcome.value = .failure(error)
                polling.signal()
            }
        }

        try #require(joined(polling), "the polling thread never started")
        Thread.sleep(forTimeInterval: 0.2)
        context.shutdown()
        try #require(joined(finished, within: 5), "poll was still blocked 5 s after shutdown")

        let result = try #require(outcome.value)
        guard case .failure(let error) = result else {
            Issue.record("poll returned \(result) instead of throwing")
            return
        }
        #expect(error.isTerminated)
        #expect(error.operation == "zmq_poll")
    }

    @Test("after shutdown, creating a socket throws ETERM")
    func noSocketsAfterShutdown() throws {
        let context = try Context()
        context.shutdown()
        let error = #expect(throws: ZMQError.self) { try Socket(context: context, type: .dealer) }
        #expect(error?.isTerminated == true)
        #expect(error?.operation == "zmq_socket")
    }

    @Test("sockets keep their context alive; it is freed after the last socket")
    func socketsKeepContextAlive() throws {
        weak var weakContext: Context?
        let endpoint = uniqueInprocEndpoint()
        var pull: Socket?
        var push: Socket?
        do {
            let context = try Context()
            weakContext = context
            pull = try Socket(context: context, type: .pull)
            try pull?.bind(endpoint)
            push = try Socket(context: context, type: .push)
            try push?.connect(endpoint)
        }
        #expect(weakContext != nil, "the context was freed while its sockets were open")
        #expect(try push?.send([bytes("still alive")]) == true)
        #expect(try pull?.receive(timeoutMilliseconds: 5_000) == [bytes("still alive")])

        push = nil
        #expect(weakContext != nil, "the context was freed while a socket was open")
        pull = nil
        #expect(weakContext == nil, "the context outlived its last socket")
    }
}
