import Foundation
import QuireSupport
import Synchronization
import ZeroMQ

/// How the broker's sockets use CURVE: its secret key, and the client keys its ZAP handler admits.
public struct CurveServerSettings: Sendable, Equatable {
    public var secretKey: [UInt8]
    /// The client and worker public keys allowed in. `nil`: no ZAP handler is started, and a broker
    /// with CURVE on refuses to start (libzmq 4.3.4 would let any client in).
    public var allowedKeys: Set<[UInt8]>?

    public init(secretKey: [UInt8], allowedKeys: Set<[UInt8]>?) {
        self.secretKey = secretKey
        self.allowedKeys = allowedKeys
    }
}

/// A ZAP handler (ZeroMQ RFC 27) for one context: a REP socket on `inproc://zeromq.zap.01`, on its own
/// thread, admitting CURVE clients whose public key is listed and refusing everything else (NULL and
/// PLAIN included). Stops when the context is terminated or ``stop()`` is called.
public final class ZAPHandler: Sendable {
    public static let endpoint = "inproc://zeromq.zap.01"

    private let wakeup: Wakeup
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let counts = Mutex<(allowed: Int, denied: Int)>((0, 0))

    /// Binds the handler (on its thread) and returns once it is bound; throws if it cannot bind, e.g.
    /// because another handler already serves this context.
    public init(context: Context, allowedKeys: Set<[UInt8]>, logger: Logger) throws {
        let wakeup = try Wakeup()
        self.wakeup = wakeup
        let bound = Mutex<Result<Void, ZMQError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            Thread.current.name = "quire-zap"
            let socket: Socket
            do throws(ZMQError) {
                socket = try Socket(context: context, type: .rep)
                try socket.bind(Self.endpoint)
                bound.withLock { $0 = .success(()) }
                ready.signal()
            } catch {
                bound.withLock { $0 = .failure(error) }
                ready.signal()
                finished.signal()
                return
            }
            serve(socket, allowedKeys: allowedKeys, logger: logger)
            socket.close()
            finished.signal()
        }
        thread.name = "quire-zap"
        thread.start()
        ready.wait()
        if case .failure(let error) = bound.withLock({ $0 }) { throw error }
    }

    /// Connections admitted and refused so far.
    public var decisions: (allowed: Int, denied: Int) { counts.withLock { $0 } }

    /// Stops the handler and waits for its thread. New connections are refused from then on.
    public func stop() {
        if stopRequested.exchange(true, ordering: .acquiringAndReleasing) { return }
        wakeup.signal()
        finished.wait()
    }

    private func serve(_ socket: Socket, allowedKeys: Set<[UInt8]>, logger: Logger) {
        let poller = Poller([.socket(socket, .readable), .descriptor(wakeup.descriptor, .readable)])
        do {
            while !stopRequested.load(ordering: .acquiring) {
                let ready = try poller.poll(timeoutMilliseconds: -1)
                if ready[1].contains(.readable) { wakeup.drain() }
                guard ready[0].contains(.readable), let request = try socket.receive(dontWait: true) else { continue }
                let reply = Self.decide(request, allowedKeys: allowedKeys)
                if reply.allowed {
                    counts.withLock { $0.allowed += 1 }
                    logger.debug("curve client admitted", metadata: ["client.key": reply.userID, "address": reply.address])
                } else {
                    counts.withLock { $0.denied += 1 }
                    logger.warning("connection refused by the ZAP handler", metadata: ["reason": reply.text, "address": reply.address])
                }
                try socket.send(reply.frames)
            }
        } catch {
            if !error.isTerminated { logger.error("ZAP handler failed", metadata: ["error": error.description]) }
        }
    }

    struct Decision {
        var allowed: Bool
        var text: String
        var userID: String
        var address: String
        var frames: [[UInt8]]
    }

    /// RFC 27: request = version, request id, domain, address, identity, mechanism, credentials…;
    /// reply = version, request id, status code, status text, user id, metadata.
    static func decide(_ request: [[UInt8]], allowedKeys: Set<[UInt8]>) -> Decision {
        func reply(_ allowed: Bool, _ code: String, _ text: String, userID: String = "", address: String = "") -> Decision {
            let id = request.count > 1 ? request[1] : []
            return Decision(allowed: allowed, text: text, userID: userID, address: address,
                            frames: [Array("1.0".utf8), id, Array(code.utf8), Array(text.utf8), Array(userID.utf8), []])
        }
        guard request.count >= 6, request[0] == Array("1.0".utf8) else { return reply(false, "500", "malformed ZAP request") }
        let address = String(decoding: request[3], as: UTF8.self)
        let mechanism = String(decoding: request[5], as: UTF8.self)
        guard mechanism == "CURVE" else { return reply(false, "400", "mechanism \(mechanism) not allowed; CURVE only", address: address) }
        guard request.count >= 7, request[6].count == 32 else { return reply(false, "400", "no CURVE client key", address: address) }
        let key = request[6]
        let z85 = (try? Z85.encode(key)) ?? "?"
        guard allowedKeys.contains(key) else { return reply(false, "400", "client key \(z85) is not on the allow-list", address: address) }
        return reply(true, "200", "OK", userID: z85, address: address)
    }

    /// Throws unless a ZAP handler is bound in `context`. With CURVE on and no handler, libzmq 4.3.4
    /// admits any client that knows the server key, so the broker must not start.
    public static func requireBound(in context: Context) throws(ZMQError) {
        let probe = try Socket(context: context, type: .rep)
        defer { probe.close() }
        do {
            try probe.bind(endpoint)
        } catch let error where error.code == EADDRINUSE {
            return
        }
        // Unbind now: closing alone releases an inproc endpoint later, on libzmq's reaper thread, and
        // a handler bound right after would find it still taken.
        try? probe.unbind(endpoint)
        throw ZMQError(code: EPERM, operation: "curve", context: "CURVE is on but no ZAP handler is bound to \(endpoint) (give --curve-allow): libzmq would admit any client")
    }
}
