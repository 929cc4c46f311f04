import Dispatch
import Foundation
import QuireBroker
import QuireClient
import QuireJWT
import QuireStack
import QuireSupport
import QuireTokens
import QuireWire
import QuireWorker
import ZeroMQ

/// What `quire bench tokens` measures.
public struct TokenBenchOptions: Sendable {
    /// How long each timed loop runs.
    public var seconds: Double = 2
    /// Requests outstanding at once in the end-to-end run.
    public var inFlight: Int = 16
    /// `auth.token` worker threads in the end-to-end run.
    public var workers: Int = 1
    public init() {}
}

/// The figures for the README.
public struct TokenBenchReport: Sendable, Codable {
    public var machine: MachineInfo
    /// One argon2id secret check (a client's first token, or every token with the cache off), ms.
    public var argon2idCheckMilliseconds: Double
    /// Tokens minted per second on one thread, secret check cached (the steady state).
    public var mintPerSecond: Double
    /// One `TokenVerifier.verify` (parse, Ed25519 verify, claims), µs.
    public var verifyMicroseconds: Double
    /// One `VerifiedTokenCache.verify` of a token seen before, µs.
    public var cachedVerifyMicroseconds: Double
    /// Tokens per second through the broker (`auth.token` over TCP, cached secret check).
    public var endToEndPerSecond: Double
    public var endToEndWorkers: Int
    public var endToEndInFlight: Int

    public func markdown() -> String {
        """
        | measurement | result |
        | --- | --- |
        | argon2id secret check (first token of a client) | \(String(format: "%.1f", argon2idCheckMilliseconds)) ms |
        | tokens minted per second, one thread, in process | \(Int(mintPerSecond)) |
        | one token verify (TokenVerifier.verify) | \(String(format: "%.1f", verifyMicroseconds)) µs |
        | one token verify, seen before (VerifiedTokenCache) | \(String(format: "%.2f", cachedVerifyMicroseconds)) µs |
        | tokens per second through the broker (auth.token over TCP, \(endToEndWorkers) worker, \(endToEndInFlight) in flight) | \(Int(endToEndPerSecond)) |

        Machine: \(machine.processors) × \(machine.cpuModel), \(machine.os), Swift \(machine.swift) (\(machine.buildConfiguration)), libzmq \(machine.libzmq)
        """
    }

    /// The report as one JSON object (snake_case keys, as the other benchmarks).
    public func json() -> String { benchJSON(self) }
}

/// Token minting and verification, in process and through a broker on TCP loopback.
public struct TokenBenchmark {
    let options: TokenBenchOptions
    let logger: Logger
    let progress: (String) -> Void

    public init(options: TokenBenchOptions, logger: Logger, progress: @escaping (String) -> Void) {
        self.options = options
        self.logger = logger
        self.progress = progress
    }

    /// Runs `body` repeatedly for about `seconds`; calls per second.
    private func rate(_ seconds: Double, _ body: () throws -> Void) rethrows -> Double {
        let start = Instant.now()
        var count = 0
        while true {
            for _ in 0..<64 { try body() }
            count += 64
            let elapsed = Instant.now().seconds(since: start)
            if elapsed >= seconds { return Double(count) / elapsed }
        }
    }

    public func run() throws -> TokenBenchReport {
        let folder = NSTemporaryDirectory() + "quire-bench-tokens-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let authority = try TokenAuthority(dataDirectory: folder)
        let (client, secret) = try authority.registry.add(name: "bench", scopes: ["ocr", "echo"], now: epochSeconds())
        let credentials = Credentials(clientID: client.id, clientSecret: secret)

        progress("argon2id secret check")
        let uncached = try TokenAuthority(dataDirectory: folder, configuration: TokenAuthorityConfiguration(verifiedSecretCacheLifetime: 0))
        let checks = 8
        let argonStart = Instant.now()
        for _ in 0..<checks { _ = try uncached.issue(.credentials(credentials)).get() }
        let argon = Instant.now().seconds(since: argonStart) * 1_000 / Double(checks)

        progress("minting in process")
        let mint = try rate(options.seconds) { _ = try authority.issue(.credentials(credentials)).get() }

        progress("verifying in process")
        let token = try authority.issue(.credentials(credentials)).get().accessToken
        let verifier = try authority.verifier()
        let now = epochSeconds()
        let verifies = try rate(options.seconds) { _ = try verifier.verify(token, now: now).get() }
        var cache = VerifiedTokenCache(verifier: verifier)
        let cachedVerifies = try rate(options.seconds) { _ = try cache.verify(token, now: now).get() }

        progress("minting through the broker")
        let endToEnd = try throughBroker(authority: authority, credentials: credentials)
        return TokenBenchReport(machine: MachineInfo.current(), argon2idCheckMilliseconds: argon, mintPerSecond: mint,
                                verifyMicroseconds: 1e6 / verifies, cachedVerifyMicroseconds: 1e6 / cachedVerifies, endToEndPerSecond: endToEnd,
                                endToEndWorkers: options.workers, endToEndInFlight: options.inFlight)
    }

    private func throughBroker(authority: TokenAuthority, credentials: Credentials) throws -> Double {
        // Broker and token workers in one context, as `quire up` runs them; the client has its own.
        let tokens = WorkerGroup(service: TokenService.token(authority: authority, logger: logger), count: options.workers,
                                 keepsHeartbeat: true, threadName: "bench-token")
        let stack: Stack
        do {
            stack = try Stack.start(StackConfiguration(broker: BrokerConfiguration(bind: "tcp://127.0.0.1:*"), workers: [tokens]), logger: logger)
        } catch let error as StackError {
            throw BenchError(error.description)
        }
        defer { stack.stop() }
        let endpoint = stack.endpoint
        let frame = TokenRequest.credentials(credentials).jsonFrame
        let seconds = options.seconds
        let inFlight = options.inFlight
        let configuration = ClientConfiguration(broker: endpoint, timeout: 10_000, retries: 0, maxInFlight: inFlight)
        return try awaitBlocking("minting through the broker", timeout: Milliseconds(Int64(seconds * 1_000) + 30_000)) {
            try await withClient(configuration: configuration) { client in
                // Warm up: every worker registered and every connection made.
                for _ in 0..<(inFlight * 2) { _ = try await client.request(service: ReservedService.authToken, body: [frame]) }
                let start = Instant.now()
                let stopAt = start + Milliseconds(Int64(seconds * 1_000))
                let counter = TicketCounter()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<inFlight {
                        group.addTask {
                            while Instant.now() < stopAt {
                                let reply = try await client.request(service: ReservedService.authToken, body: [frame])
                                guard let first = reply.first, (try? TokenResponse(jsonFrame: first)) != nil else {
                                    throw BenchError("auth.token did not answer with a token")
                                }
                                _ = counter.take()
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                return Double(counter.count) / Instant.now().seconds(since: start)
            }
        }
    }
}
