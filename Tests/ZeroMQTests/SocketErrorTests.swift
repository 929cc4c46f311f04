import Foundation
import Testing
import ZeroMQ
import QuireTestSupport

@Suite("Socket errors")
struct SocketErrorTests {
    @Test("bind to an invalid endpoint throws with errno, zmq_bind and the endpoint",
          arguments: [
              ("bogus://nowhere", EPROTONOSUPPORT),
              ("tcp://127.0.0.1:notaport", EINVAL),
              ("tcp://", EINVAL),
              ("inproc://", EINVAL),
              ("", EINVAL),
          ])
    func bindInvalidEndpoint(endpoint: String, code: Int32) throws {
        let context = try Context()
        let socket = try Socket(context: context, type: .router)
        let error = #expect(throws: ZMQError.self) { try socket.bind(endpoint) }
        #expect(error?.code == code)
        #expect(error?.operation == "zmq_bind")
        #expect(error?.context == endpoint)
    }

    @Test("connect to an invalid endpoint throws with zmq_connect and the endpoint")
    func connectInvalidEndpoint() throws {
        let context = try Context()
        let socket = try Socket(context: context, type: .dealer)
        let error = #expect(throws: ZMQError.self) { try socket.connect("bogus://nowhere") }
        #expect(error?.code == EPROTONOSUPPORT)
        #expect(error?.operation == "zmq_connect")
        #expect(error?.context == "bogus://nowhere")
    }

    @Test("the error description names the operation, the context and errno")
    func description() throws {
        let context = try Context()
        let socket = try Socket(context: context, type: .router)
        let error = try #require(throws: ZMQError.self) { try socket.bind("bogus://nowhere") }
        #expect(error.description == "zmq_bind(bogus://nowhere): Protocol not supported (errno \(EPROTONOSUPPORT))")
        #expect(ZMQError(code: EAGAIN, operation: "zmq_send").description
            == "zmq_send: Resource temporarily unavailable (errno \(EAGAIN))")
    }

    @Test("binding the same TCP port twice throws EADDRINUSE")
    func tcpAddressInUse() throws {
        let context = try Context()
        let first = try Socket(context: context, type: .router)
        try first.bind("tcp://127.0.0.1:*")
        let endpoint = try first.lastEndpoint
        let second = try Socket(context: context, type: .router)
        let error = #expect(throws: ZMQError.self) { try second.bind(endpoint) }
        #expect(error?.code == EADDRINUSE)
        #expect(error?.operation == "zmq_bind")
        #expect(error?.context == endpoint)
    }

    @Test("binding the same inproc name twice throws EADDRINUSE")
    func inprocAddressInUse() throws {
        let context = try Context()
        let endpoint = uniqueInprocEndpoint()
        let first = try Socket(context: context, type: .router)
        try first.bind(endpoint)
        let second = try Socket(context: context, type: .router)
        let error = #expect(throws: ZMQError.self) { try second.bind(endpoint) }
        #expect(error?.code == EADDRINUSE)
    }

    @Test("unbind frees a TCP port for another socket; unbinding again throws ENOENT")
    func unbind() throws {
        let context = try Context()
        let first = try Socket(context: context, type: .router)
        try first.bind("tcp://127.0.0.1:*")
        let endpoint = try first.lastEndpoint
        try first.unbind(endpoint)
        // libzmq closes the listener on its I/O thread, so the port may take a moment to free up.
        let second = try Socket(context: context, type: .router)
        var lastError = bindError(second, endpoint)
        for _ in 0..<100 where lastError?.code == EADDRINUSE {
            Thread.sleep(forTimeInterval: 0.02)
            lastError = bindError(second, endpoint)
        }
        #expect(lastError == nil, "the port was not free 2 s after unbind: \(String(describing: lastError))")
        let error = #expect(throws: ZMQError.self) { try first.unbind(endpoint) }
        #expect(error?.code == ENOENT)
        #expect(error?.operation == "zmq_unbind")
    }

    /// Every public entry point on a closed socket, with the libzmq operation its error should name.
    enum ClosedSocketOperation: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case bind, connect, disconnect, unbind, send, receive, receiveDontWait
        case setReceiveTimeout, setIdentity, setCurveServer, linger, lastEndpoint, mechanism

        var testDescription: String { rawValue }

        var operation: String {
            switch self {
            case .bind: "zmq_bind"
            case .connect: "zmq_connect"
            case .disconnect: "zmq_disconnect"
            case .unbind: "zmq_unbind"
            case .send: "zmq_send"
            case .receive, .receiveDontWait: "zmq_msg_recv"
            case .setReceiveTimeout, .setIdentity, .setCurveServer: "zmq_setsockopt"
            case .linger, .lastEndpoint, .mechanism: "zmq_getsockopt"
            }
        }

        func run(on socket: Socket) throws(ZMQError) {
            switch self {
            case .bind: try socket.bind(uniqueInprocEndpoint())
            case .connect: try socket.connect(uniqueInprocEndpoint())
            case .disconnect: try socket.disconnect("inproc://x")
            case .unbind: try socket.unbind("inproc://x")
            case .send: _ = try socket.send([bytes("x")])
            case .receive: _ = try socket.receive()
            case .receiveDontWait: _ = try socket.receive(dontWait: true)
            case .setReceiveTimeout: try socket.setReceiveTimeout(milliseconds: 10)
            case .setIdentity: try socket.setIdentity(bytes("id"))
            case .setCurveServer: try socket.setCurveServer(secretKey: [UInt8](repeating: 1, count: 32))
            case .linger: _ = try socket.linger
            case .lastEndpoint: _ = try socket.lastEndpoint
            case .mechanism: _ = try socket.mechanism
            }
        }
    }

    @Test("operations on a closed socket throw ENOTSOCK", arguments: ClosedSocketOperation.allCases)
    func closedSocket(operation: ClosedSocketOperation) throws {
        let context = try Context()
        let socket = try Socket(context: context, type: .dealer)
        try socket.bind(uniqueInprocEndpoint())
        socket.close()
        socket.close()  // closing twice is harmless
        let error = #expect(throws: ZMQError.self) { try operation.run(on: socket) }
        #expect(error?.code == ENOTSOCK)
        #expect(error?.operation == operation.operation)
    }
}

/// The error `bind` throws, or nil when it succeeds.
private func bindError(_ socket: Socket, _ endpoint: String) -> ZMQError? {
    do {
        try socket.bind(endpoint)
        return nil
    } catch {
        return error
    }
}
