internal import CZeroMQ
#if canImport(Glibc)
import Glibc
#endif

/// One frame of a multipart message.
public typealias Frame = [UInt8]

/// The socket types Quire uses.
public enum SocketType: Sendable {
    case router, dealer, pub, sub, pair, push, pull, req, rep

    var rawValue: Int32 {
        switch self {
        case .router: ZMQ_ROUTER
        case .dealer: ZMQ_DEALER
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .pair: ZMQ_PAIR
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        }
    }
}

/// A libzmq socket, owned by the one thread that created it.
///
/// The type is deliberately not `Sendable`: libzmq sockets are not thread-safe, so a socket is created,
/// used and closed on one thread. It keeps its ``Context`` alive and is closed with `LINGER 0` unless
/// told otherwise, so that closing never blocks on unsent messages.
public final class Socket {
    public let context: Context
    public let type: SocketType
    private var handle: UnsafeMutableRawPointer?
    /// The receive message lives on the heap so it never moves while libzmq holds it.
    private let message: UnsafeMutablePointer<zmq_msg_t>

    public init(context: Context, type: SocketType, linger: Int32 = 0) throws(ZMQError) {
        guard let handle = zmq_socket(context.handle, type.rawValue) else {
            throw ZMQError.last("zmq_socket")
        }
        self.context = context
        self.type = type
        self.handle = handle
        self.message = .allocate(capacity: 1)
        try setInt32Option(ZMQ_LINGER, linger, name: "ZMQ_LINGER")
    }

    deinit {
        if let handle { zmq_close(handle) }
        message.deallocate()
    }

    /// Closes the socket now; later calls fail with `ENOTSOCK`.
    public func close() {
        if let handle { zmq_close(handle) }
        handle = nil
    }

    var raw: UnsafeMutableRawPointer? { handle }

    private func live(_ operation: String) throws(ZMQError) -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError(code: ENOTSOCK, operation: operation, context: "socket closed") }
        return handle
    }

    // MARK: - Endpoints

    public func bind(_ endpoint: String) throws(ZMQError) {
        let h = try live("zmq_bind")
        _ = try retryingInterrupts("zmq_bind", endpoint) { zmq_bind(h, endpoint) }
    }

    public func connect(_ endpoint: String) throws(ZMQError) {
        let h = try live("zmq_connect")
        _ = try retryingInterrupts("zmq_connect", endpoint) { zmq_connect(h, endpoint) }
    }

    public func disconnect(_ endpoint: String) throws(ZMQError) {
        let h = try live("zmq_disconnect")
        _ = try retryingInterrupts("zmq_disconnect", endpoint) { zmq_disconnect(h, endpoint) }
    }

    public func unbind(_ endpoint: String) throws(ZMQError) {
        let h = try live("zmq_unbind")
        _ = try retryingInterrupts("zmq_unbind", endpoint) { zmq_unbind(h, endpoint) }
    }

    /// The endpoint last bound, with the port the system chose for `tcp://127.0.0.1:*`.
    public var lastEndpoint: String {
        get throws(ZMQError) { try stringOption(ZMQ_LAST_ENDPOINT, name: "ZMQ_LAST_ENDPOINT") }
    }

    // MARK: - Sending

    /// Sends a multipart message. Returns `false` when the message cannot be queued (`EAGAIN`): at once
    /// with `dontWait`, or when a send timeout (`setSendTimeout`) expires. Other failures,
    /// `EHOSTUNREACH` included, throw.
    ///
    /// libzmq queues a multipart message atomically: once the first frame is accepted the rest are.
    @discardableResult
    public func send(_ frames: [Frame], dontWait: Bool = false) throws(ZMQError) -> Bool {
        let h = try live("zmq_send")
        if frames.isEmpty { return true }
        let last = frames.count - 1
        for (index, frame) in frames.enumerated() {
            var flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
            if index < last { flags |= ZMQ_SNDMORE }
            do {
                _ = try retryingInterrupts("zmq_send") {
                    frame.withUnsafeBytes { zmq_send(h, $0.baseAddress, $0.count, flags) }
                }
            } catch {
                if error.isWouldBlock && index == 0 { return false }
                throw error
            }
        }
        return true
    }

    // MARK: - Receiving

    /// Receives one whole multipart message. Returns `nil` when `dontWait` is set and nothing is waiting,
    /// or when a receive timeout (`setReceiveTimeout`) expires.
    public func receive(dontWait: Bool = false) throws(ZMQError) -> [Frame]? {
        let h = try live("zmq_msg_recv")
        var frames: [Frame] = []
        while true {
            zmq_msg_init(message)
            let flags: Int32 = (dontWait && frames.isEmpty) ? ZMQ_DONTWAIT : 0
            let size: Int32
            do {
                size = try retryingInterrupts("zmq_msg_recv") { zmq_msg_recv(message, h, flags) }
            } catch {
                zmq_msg_close(message)
                if error.isWouldBlock && frames.isEmpty { return nil }
                throw error
            }
            // zmq_msg_recv's return value is capped at INT_MAX; the message knows its real size.
            _ = size
            let length = zmq_msg_size(message)
            let bytes = zmq_msg_data(message)
            let frame: Frame = length == 0 || bytes == nil
                ? []
                : Frame(UnsafeRawBufferPointer(start: bytes, count: length))
            // Read "more" before closing: it belongs to the message.
            let more = zmq_msg_more(message) != 0
            zmq_msg_close(message)
            frames.append(frame)
            if !more { return frames }
        }
    }

    // MARK: - Monitoring

    /// Connection events a monitor can report (`ZMQ_EVENT_*`).
    public struct MonitorEvents: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// A bound socket accepted a connection.
        public static let accepted = MonitorEvents(rawValue: ZMQ_EVENT_ACCEPTED)
        /// A connecting socket's connection is up.
        public static let connected = MonitorEvents(rawValue: ZMQ_EVENT_CONNECTED)
        /// A connection went down, either side having closed it.
        public static let disconnected = MonitorEvents(rawValue: ZMQ_EVENT_DISCONNECTED)
    }

    /// Reports this socket's `events` on `endpoint` (an `inproc://` name), where a PAIR socket connected
    /// to it receives one message per event (`zmq_socket_monitor`); ``monitorEvent(_:)`` reads them.
    public func monitor(_ endpoint: String, events: MonitorEvents) throws(ZMQError) {
        let h = try live("zmq_socket_monitor")
        _ = try retryingInterrupts("zmq_socket_monitor", endpoint) { zmq_socket_monitor(h, endpoint, events.rawValue) }
    }

    /// The event a monitor message reports: its first frame holds the event (16 bits) and a value
    /// (32 bits, the descriptor for connections), in the host's byte order; nil for anything else.
    public static func monitorEvent(_ frames: [Frame]) -> MonitorEvents? {
        guard frames.count == 2, frames[0].count == 6 else { return nil }
        let event = frames[0].withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) }
        return MonitorEvents(rawValue: Int32(event))
    }

    // MARK: - Options

    func setInt32Option(_ option: Int32, _ value: Int32, name: String) throws(ZMQError) {
        let h = try live("zmq_setsockopt")
        var v = value
        _ = try retryingInterrupts("zmq_setsockopt", name) {
            zmq_setsockopt(h, option, &v, MemoryLayout<Int32>.size)
        }
    }

    func setInt64Option(_ option: Int32, _ value: Int64, name: String) throws(ZMQError) {
        let h = try live("zmq_setsockopt")
        var v = value
        _ = try retryingInterrupts("zmq_setsockopt", name) {
            zmq_setsockopt(h, option, &v, MemoryLayout<Int64>.size)
        }
    }

    func setOption(_ option: Int32, bytes: [UInt8], name: String) throws(ZMQError) {
        let h = try live("zmq_setsockopt")
        _ = try retryingInterrupts("zmq_setsockopt", name) {
            bytes.withUnsafeBytes { zmq_setsockopt(h, option, $0.baseAddress, $0.count) }
        }
    }

    func intOption(_ option: Int32, name: String) throws(ZMQError) -> Int32 {
        let h = try live("zmq_getsockopt")
        var v: Int32 = 0
        var size = MemoryLayout<Int32>.size
        _ = try retryingInterrupts("zmq_getsockopt", name) { zmq_getsockopt(h, option, &v, &size) }
        return v
    }

    func stringOption(_ option: Int32, name: String) throws(ZMQError) -> String {
        let h = try live("zmq_getsockopt")
        var buffer = [CChar](repeating: 0, count: 512)
        var size = buffer.count
        _ = try retryingInterrupts("zmq_getsockopt", name) { zmq_getsockopt(h, option, &buffer, &size) }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Milliseconds to keep unsent messages after close; Quire's default is 0.
    public func setLinger(milliseconds: Int32) throws(ZMQError) {
        try setInt32Option(ZMQ_LINGER, milliseconds, name: "ZMQ_LINGER")
    }

    /// ROUTER: fail with `EHOSTUNREACH` instead of silently dropping a message to an unknown peer.
    public func setRouterMandatory(_ on: Bool) throws(ZMQError) {
        try setInt32Option(ZMQ_ROUTER_MANDATORY, on ? 1 : 0, name: "ZMQ_ROUTER_MANDATORY")
    }

    /// ROUTER: a new connection with an identity already in use takes it over (a restarted client).
    public func setRouterHandover(_ on: Bool) throws(ZMQError) {
        try setInt32Option(ZMQ_ROUTER_HANDOVER, on ? 1 : 0, name: "ZMQ_ROUTER_HANDOVER")
    }

    public func setSendHighWaterMark(_ messages: Int32) throws(ZMQError) {
        try setInt32Option(ZMQ_SNDHWM, messages, name: "ZMQ_SNDHWM")
    }

    public func setReceiveHighWaterMark(_ messages: Int32) throws(ZMQError) {
        try setInt32Option(ZMQ_RCVHWM, messages, name: "ZMQ_RCVHWM")
    }

    /// The largest single frame libzmq accepts from a peer over a network transport; a peer that sends
    /// more is disconnected. Not enforced over `inproc`.
    public func setMaxMessageSize(_ bytes: Int64) throws(ZMQError) {
        try setInt64Option(ZMQ_MAXMSGSIZE, bytes, name: "ZMQ_MAXMSGSIZE")
    }

    /// The identity this socket presents to a ROUTER: 1–255 bytes. Identities starting with a zero byte
    /// are reserved for the ones libzmq generates (4.3.4 does not enforce this).
    public func setIdentity(_ identity: [UInt8]) throws(ZMQError) {
        try setOption(ZMQ_ROUTING_ID, bytes: identity, name: "ZMQ_ROUTING_ID")
    }

    /// ZMTP-level heartbeats: detect dead TCP peers even when the application protocol is quiet.
    public func setTransportHeartbeat(intervalMilliseconds: Int32, timeoutMilliseconds: Int32, ttlMilliseconds: Int32) throws(ZMQError) {
        try setInt32Option(ZMQ_HEARTBEAT_IVL, intervalMilliseconds, name: "ZMQ_HEARTBEAT_IVL")
        try setInt32Option(ZMQ_HEARTBEAT_TIMEOUT, timeoutMilliseconds, name: "ZMQ_HEARTBEAT_TIMEOUT")
        try setInt32Option(ZMQ_HEARTBEAT_TTL, ttlMilliseconds, name: "ZMQ_HEARTBEAT_TTL")
    }

    public func setReconnectInterval(milliseconds: Int32, maxMilliseconds: Int32) throws(ZMQError) {
        try setInt32Option(ZMQ_RECONNECT_IVL, milliseconds, name: "ZMQ_RECONNECT_IVL")
        try setInt32Option(ZMQ_RECONNECT_IVL_MAX, maxMilliseconds, name: "ZMQ_RECONNECT_IVL_MAX")
    }

    /// Queue messages only to completed connections (clients and workers: no sends into the void).
    public func setImmediate(_ on: Bool) throws(ZMQError) {
        try setInt32Option(ZMQ_IMMEDIATE, on ? 1 : 0, name: "ZMQ_IMMEDIATE")
    }

    public func setSendTimeout(milliseconds: Int32) throws(ZMQError) {
        try setInt32Option(ZMQ_SNDTIMEO, milliseconds, name: "ZMQ_SNDTIMEO")
    }

    public func setReceiveTimeout(milliseconds: Int32) throws(ZMQError) {
        try setInt32Option(ZMQ_RCVTIMEO, milliseconds, name: "ZMQ_RCVTIMEO")
    }

    /// SUB: receive messages whose first frame starts with `prefix` (empty: everything).
    public func subscribe(_ prefix: [UInt8] = []) throws(ZMQError) {
        try setOption(ZMQ_SUBSCRIBE, bytes: prefix, name: "ZMQ_SUBSCRIBE")
    }

    // MARK: - CURVE

    /// Makes this socket a CURVE server with the given secret key (32 raw bytes).
    public func setCurveServer(secretKey: [UInt8]) throws(ZMQError) {
        try setInt32Option(ZMQ_CURVE_SERVER, 1, name: "ZMQ_CURVE_SERVER")
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: secretKey, name: "ZMQ_CURVE_SECRETKEY")
    }

    /// Makes this socket a CURVE client of the server whose public key is given.
    public func setCurveClient(serverKey: [UInt8], keyPair: CurveKeyPair) throws(ZMQError) {
        try setOption(ZMQ_CURVE_SERVERKEY, bytes: serverKey, name: "ZMQ_CURVE_SERVERKEY")
        try setOption(ZMQ_CURVE_PUBLICKEY, bytes: keyPair.publicKey, name: "ZMQ_CURVE_PUBLICKEY")
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: keyPair.secretKey, name: "ZMQ_CURVE_SECRETKEY")
    }

    /// The ZAP domain; setting one makes libzmq consult the ZAP handler even for NULL security.
    public func setZAPDomain(_ domain: String) throws(ZMQError) {
        try setOption(ZMQ_ZAP_DOMAIN, bytes: Array(domain.utf8), name: "ZMQ_ZAP_DOMAIN")
    }

    /// The security mechanism in force: 0 NULL, 1 PLAIN, 2 CURVE.
    public var mechanism: Int32 {
        get throws(ZMQError) { try intOption(ZMQ_MECHANISM, name: "ZMQ_MECHANISM") }
    }

    public var receiveHighWaterMark: Int32 {
        get throws(ZMQError) { try intOption(ZMQ_RCVHWM, name: "ZMQ_RCVHWM") }
    }
    public var sendHighWaterMark: Int32 {
        get throws(ZMQError) { try intOption(ZMQ_SNDHWM, name: "ZMQ_SNDHWM") }
    }
    public var linger: Int32 {
        get throws(ZMQError) { try intOption(ZMQ_LINGER, name: "ZMQ_LINGER") }
    }

    /// The descriptor that becomes readable when the socket may have changed state (`ZMQ_FD`). It is
    /// not a data descriptor: after it fires, and after every send, ask ``events``.
    public var fileDescriptor: Int32 {
        get throws(ZMQError) { try intOption(ZMQ_FD, name: "ZMQ_FD") }
    }

    /// What the socket can do now without blocking (`ZMQ_EVENTS`); processes pending commands.
    public var events: PollEvents {
        get throws(ZMQError) { PollEvents(rawValue: Int16(truncatingIfNeeded: try intOption(ZMQ_EVENTS, name: "ZMQ_EVENTS"))) }
    }
}

extension Socket {
    /// Applies CURVE client settings, if any (before `connect`).
    public func applyCurve(_ settings: CurveClientSettings?) throws(ZMQError) {
        guard let settings else { return }
        try setCurveClient(serverKey: settings.serverKey, keyPair: settings.keyPair)
    }
}
