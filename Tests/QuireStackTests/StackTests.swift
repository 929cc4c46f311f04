import Foundation
import QuireBroker
import QuireClient
import QuireStack
import QuireSupport
import QuireTokens
import QuireWire
import QuireWorker
import Testing

/// A whole stack in this process over real TCP sockets on a free port: what `quire up` and the
/// benchmarks start, driven by a client as an app would drive it.
@Suite("Stack: broker, workers and token worker in one process")
struct StackTests {
    static let logger = Logger(label: "test.stack", level: .warning)

    /// A fresh folder, removed afterwards.
    final class Folder {
        let path = NSTemporaryDirectory() + "quire-stack-\(UUID().uuidString)"
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    func client(_ stack: Stack) -> ClientConfiguration {
        ClientConfiguration(broker: stack.connectEndpoint, timeout: 10_000, retries: 0, maxInFlight: 16)
    }

    @Test("echo workers behind a broker on a system-chosen port answer requests; stop ends every part")
    func echo() async throws {
        let echo = WorkerGroup(service: EchoService.make(name: "echo"), count: 2, context: .own)
        let stack = try Stack.start(StackConfiguration(broker: BrokerConfiguration(bind: "tcp://127.0.0.1:*"), workers: [echo]), logger: Self.logger)
        #expect(!stack.endpoint.hasSuffix(":*"))
        #expect(stack.connectEndpoint.hasPrefix("tcp://127.0.0.1:"))
        #expect(stack.workers.count == 2)
        try await withClient(configuration: client(stack)) { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let body = [Array("request \(index)".utf8), [UInt8(index), 0, 255]]
                        let reply = try await client.request(service: "echo", body: body)
                        #expect(reply == body)
                    }
                }
                try await group.waitForAll()
            }
        }
        #expect(stack.workers.reduce(0) { $0 + $1.requestsServed } == 40)
        #expect(stack.endedWorker == nil)
        #expect(stack.stop())
        #expect(stack.waitForWorkers())
        #expect(stack.stop(), "a second stop gives the first outcome")
    }

    @Test("a client naming several brokers moves on from one that does not answer, and stays with the one that does")
    func severalBrokers() async throws {
        let stack = try Stack.start(StackConfiguration(broker: BrokerConfiguration(bind: "tcp://127.0.0.1:*"),
                                                       workers: [WorkerGroup(service: EchoService.make(name: "echo"))]), logger: Self.logger)
        defer { stack.stop() }
        // A port nobody listens on: ZeroMQ's connect succeeds and the request waits there unanswered.
        let silent = "tcp://127.0.0.1:\(try unusedPort())"
        let configuration = ClientConfiguration(broker: "\(silent), \(stack.connectEndpoint)", timeout: 300, retries: 0, maxInFlight: 4)
        try await withClient(configuration: configuration) { client in
            #expect(client.brokerInUse == silent)
            // Retries 0, yet each broker is tried once: the first attempt times out, the second is answered.
            let started = ContinuousClock.now
            var answered: [[UInt8]] = []
            while answered.isEmpty, ContinuousClock.now < started + .seconds(10) {
                answered = (try? await client.request(service: "echo", body: [Array("one".utf8)])) ?? []
            }
            #expect(answered == [Array("one".utf8)])
            #expect(client.brokerInUse == stack.connectEndpoint)
            // The rest go straight to it, within one attempt's timeout each.
            for index in 0..<5 {
                let body = [Array("next \(index)".utf8)]
                let reply = try await client.request(service: "echo", body: body, timeout: 5_000)
                #expect(reply == body)
            }
            #expect(client.brokerInUse == stack.connectEndpoint)
        }
    }

    /// A TCP port free on 127.0.0.1 right now (bound and released).
    func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw ClientError(.transport, "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test("with its store the broker keeps durable jobs: submit, then the result from titanic.reply")
    func durableJobs() async throws {
        let folder = Folder()
        var broker = BrokerConfiguration(bind: "tcp://127.0.0.1:*")
        broker.jobs = JobConfiguration(directory: folder.path)
        let stack = try Stack.start(StackConfiguration(broker: broker, workers: [WorkerGroup(service: EchoService.make(name: "echo"))]),
                                    logger: Self.logger)
        defer { stack.stop() }
        try await withClient(configuration: client(stack)) { client in
            // A job for a service no worker has ever offered is refused: wait until the echo worker has
            // registered (the stack reports the broker bound, not its workers ready).
            let deadline = ContinuousClock.now + .seconds(10)
            while try await client.request(service: "mmi.service", body: [Array("echo".utf8)]) != [Array("200".utf8)], ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let accepted = try await client.request(service: Titanic.request, body: [Array("echo".utf8), Array("page".utf8)])
            #expect(accepted.first == Array("200".utf8))
            let id = try #require(accepted.count == 2 ? accepted[1] : nil)
            let reply = try await client.request(service: Titanic.reply, body: [id, Array(#"{"waitMs":5000}"#.utf8)])
            #expect(reply.first == Array("200".utf8))
            #expect(reply.last == Array("page".utf8))
        }
        #expect(FileManager.default.fileExists(atPath: folder.path + "/jobs.sqlite3"))
    }

    @Test("auth on: the token worker in the stack issues a token that the broker accepts, and nothing passes without one")
    func tokenWorker() async throws {
        let folder = Folder()
        let authority = try TokenAuthority(dataDirectory: folder.path)
        _ = try KeyStore(dataDirectory: folder.path).ensureKey(now: epochSeconds())
        let (registered, secret) = try ClientRegistry(dataDirectory: folder.path).add(name: "app", scopes: ["echo"], now: epochSeconds())
        var broker = BrokerConfiguration(bind: "tcp://127.0.0.1:*")
        broker.auth = AuthConfiguration()
        let groups = TokenService.make(authority: authority, logger: Self.logger).map { WorkerGroup(service: $0) }
            + [WorkerGroup(service: EchoService.make(name: "echo"))]
        let stack = try Stack.start(StackConfiguration(broker: broker, workers: groups), logger: Self.logger)
        defer { stack.stop() }
        try await withClient(configuration: client(stack)) { client in
            let request = TokenRequest.credentials(Credentials(clientID: registered.id, clientSecret: secret))
            let reply = try await client.request(service: ReservedService.authToken, body: [request.jsonFrame])
            let token = try TokenResponse(jsonFrame: try #require(reply.first)).accessToken

            let refusal = await #expect(throws: ClientError.self) {
                _ = try await client.request(service: "echo", body: [Array("{}".utf8)])
            }
            #expect(refusal?.remote?.code == .unauthenticated)

            let echoed = try await client.request(service: "echo", body: [Array(#"{"token":"\#(token)"}"#.utf8), Array("hi".utf8)])
            #expect(echoed == [Array("{}".utf8), Array("hi".utf8)])
        }
    }

    @Test("a broker that cannot bind fails the start with the reason, and nothing is left running")
    func bindFailure() throws {
        let first = try Stack.start(StackConfiguration(broker: BrokerConfiguration(bind: "tcp://127.0.0.1:*")), logger: Self.logger)
        defer { first.stop() }
        #expect(throws: StackError.self) {
            _ = try Stack.start(StackConfiguration(broker: BrokerConfiguration(bind: first.endpoint)), logger: Self.logger)
        }
    }
}
