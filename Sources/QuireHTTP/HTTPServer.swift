internal import CMicroHTTPD
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on GNU libmicrohttpd: the library parses requests, keeps connections alive,
/// speaks TLS and enforces its limits; this wrapper collects each request whole and hands it to one
/// Swift handler.
///
/// **Threads.** libmicrohttpd runs `configuration.threads` threads, each polling (epoll) the
/// connections it accepted. A handler runs on the thread of its connection, and while it runs,
/// that thread serves no other connection: a handler that blocks (waiting on the broker, say) holds
/// its thread and delays the few connections that thread already has. New connections go to the
/// threads that are polling. So: answer quickly where the API allows it (a durable job: submit and
/// say 202), and give the pool at least as many threads as requests you expect to block at once.
/// Never call ``stop()`` from a handler.
///
/// **What clients cannot do.** Send a head over `maxHeaderBytes` (431) or a body over `maxBodyBytes`
/// (413, without reading it when `Content-Length` says so), take longer than `requestTimeout` to send a
/// request (cut off, 408 where that is safe), stay silent longer than `idleTimeoutSeconds`, have more
/// than `maxConnections` open (the rest wait to be accepted). Malformed requests get libmicrohttpd's
/// 400 (505 for some versions other than 1.x); a method that is not an upper-case token or a target
/// that is not an absolute path gets 400 here.
public final class HTTPServer: Sendable {
    public let configuration: HTTPServerConfiguration
    /// The TCP port listened on: the one the kernel chose when the configuration said 0.
    public let port: Int
    private let core: ServerCore
    /// The `MHD_Daemon *` as a bit pattern (a Sendable type cannot hold the pointer); 0 once stopped.
    private let daemon: Mutex<Int>

    /// Starts serving; returns once the socket listens.
    /// - Parameters:
    ///   - log: libmicrohttpd's own messages (refused connections, TLS handshakes that failed, …).
    ///   - rejection: the response for a request the server turns down itself (400, 408 is raw,
    ///     413, 431), given the status, a message and the request's head as far as it was read (no
    ///     body), so that an application serving several APIs can answer in the shape of the one
    ///     addressed; the default is plain text.
    public init(configuration: HTTPServerConfiguration, log: (@Sendable (String) -> Void)? = nil,
                rejection: (@Sendable (_ status: Int, _ message: String, _ head: HTTPRequest) -> HTTPResponse)? = nil,
                handler: @escaping HTTPHandler) throws(HTTPServerError) {
        try configuration.validate()
        if configuration.tls != nil, MHD_is_feature_supported(.FEATURE_TLS) != .YES {
            throw HTTPServerError(.unsupported, "this libmicrohttpd has no TLS support", address: configuration.listen.description)
        }
        let core = ServerCore(configuration: configuration, handler: handler, log: log,
                              rejection: rejection ?? { status, message, _ in .text(status, message) })
        let binding = try configuration.listen.binding()
        var started = try Self.start(core, configuration, binding)
        if started == nil, case .wildcard(let port) = binding {
            // No IPv6 on this host (some containers): every IPv4 interface instead.
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = INADDR_ANY
            started = try Self.start(core, configuration, .address(ListenAddress.storage(address), family: AF_INET, dualStack: false))
        }
        guard let daemon = started else {
            let messages = core.endStartup()
            throw HTTPServerError(.start, "libmicrohttpd did not start", address: configuration.listen.description, libraryMessages: messages)
        }
        _ = core.endStartup()
        self.configuration = configuration
        self.core = core
        self.port = Int(quire_mhd_bound_port(daemon))
        self.daemon = Mutex(Int(bitPattern: daemon))
        core.startWatchdog()
    }

    /// Stops listening, closes every connection and returns once libmicrohttpd's threads have ended,
    /// which waits for handlers still running. Idempotent.
    public func stop() {
        let bits = daemon.withLock { bits in
            defer { bits = 0 }
            return bits
        }
        guard let daemon = OpaquePointer(bitPattern: bits) else { return }
        core.stopping.store(true, ordering: .releasing)
        MHD_stop_daemon(daemon)
        core.stopWatchdog()
    }

    deinit {
        // The daemon calls back into `core` (passed unretained), so it must not outlive the server.
        // Stopping it waits only for handlers still running; owners call stop() first.
        stop()
    }

    /// The libmicrohttpd version linked at run time, such as `0.9.75`.
    public static var libraryVersion: String {
        MHD_get_version().map { String(cString: $0) } ?? "unknown"
    }

    /// Whether this libmicrohttpd was built with TLS (GnuTLS).
    public static var supportsTLS: Bool { MHD_is_feature_supported(.FEATURE_TLS) == .YES }

    private static func start(_ core: ServerCore, _ configuration: HTTPServerConfiguration,
                              _ binding: ListenAddress.Binding) throws(HTTPServerError) -> OpaquePointer? {
        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_ERROR_LOG.rawValue
        flags |= MHD_is_feature_supported(.FEATURE_EPOLL) == .YES ? MHD_USE_EPOLL.rawValue : MHD_USE_POLL.rawValue
        if configuration.tls != nil {
            flags |= MHD_USE_TLS.rawValue
        } else {
            // Without TURBO, libmicrohttpd shuts the socket for writing before it reports the connection
            // closed, and ServerCore.closed(_:) could not answer the request lines it drops (see there).
            flags |= MHD_USE_TURBO.rawValue
        }
        var port: UInt16 = 0
        var address = sockaddr_storage()
        var hasAddress = false
        switch binding {
        case .wildcard(let wildcardPort):
            flags |= MHD_USE_DUAL_STACK.rawValue
            port = wildcardPort
        case .address(let storage, let family, let dualStack):
            address = storage
            hasAddress = true
            if family == AF_INET6 { flags |= (dualStack ? MHD_USE_DUAL_STACK : MHD_USE_IPv6).rawValue }
        }
        let key: UnsafeMutablePointer<CChar>? = configuration.tls.flatMap { strdup($0.keyPEM) }
        let certificate: UnsafeMutablePointer<CChar>? = configuration.tls.flatMap { strdup($0.certificatePEM) }
        defer {
            // libmicrohttpd loads the key and certificate into GnuTLS while it starts.
            free(key)
            free(certificate)
        }
        let context = Unmanaged.passUnretained(core).toOpaque()
        return withUnsafeMutableBytes(of: &address) { addressBytes -> OpaquePointer? in
            var options: [MHD_OptionItem] = [
                MHD_OptionItem(option: .CONNECTION_LIMIT, value: configuration.maxConnections, ptr_value: nil),
                MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: configuration.idleTimeoutSeconds, ptr_value: nil),
                MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: configuration.connectionMemoryBytes, ptr_value: nil),
            ]
            if configuration.threads > 1 {
                options.append(MHD_OptionItem(option: .THREAD_POOL_SIZE, value: configuration.threads, ptr_value: nil))
            }
            if configuration.maxConnectionsPerClient > 0 {
                options.append(MHD_OptionItem(option: .PER_IP_CONNECTION_LIMIT, value: configuration.maxConnectionsPerClient, ptr_value: nil))
            }
            if hasAddress {
                options.append(MHD_OptionItem(option: .SOCK_ADDR, value: 0, ptr_value: addressBytes.baseAddress))
            }
            if let key, let certificate {
                options.append(MHD_OptionItem(option: .HTTPS_MEM_KEY, value: 0, ptr_value: UnsafeMutableRawPointer(key)))
                options.append(MHD_OptionItem(option: .HTTPS_MEM_CERT, value: 0, ptr_value: UnsafeMutableRawPointer(certificate)))
            }
            options.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
            return options.withUnsafeBufferPointer { items in
                quire_mhd_start(flags, port, accessHandler, requestCompleted, connectionChanged, logMessage, context, items.baseAddress)
            }
        }
    }
}

// MARK: - The state the C callbacks reach through their context pointer

/// What the daemon's callbacks share: the handler, the limits, and the connections' deadlines.
final class ServerCore: Sendable {
    let handler: HTTPHandler
    let rejection: @Sendable (Int, String, HTTPRequest) -> HTTPResponse
    let log: (@Sendable (String) -> Void)?
    let maxHeaderBytes: Int
    let maxBodyBytes: Int
    let requestTimeout: Duration
    let plainText: Bool
    let idleTimeout: Duration
    /// Set while the daemon stops: connections closed now are not the clients' fault.
    let stopping = Atomic<Bool>(false)
    /// libmicrohttpd's messages while it starts (it has no other way to say why it failed); nil afterwards.
    private let startupMessages = Mutex<[String]?>([])
    private let connections = Mutex<[Int: Watch]>([:])
    private let watchdogStop = Atomic<Bool>(false)
    /// Signalled by stopWatchdog() to cut the watchdog's pause short, and by the watchdog when it ends.
    private let watchdogWake = DispatchSemaphore(value: 0)
    private let watchdogDone = DispatchSemaphore(value: 0)
    private let watchdogRunning = Atomic<Bool>(false)

    /// A connection's socket and since when it has been waiting for a request to arrive in full.
    struct Watch {
        let fd: Int32
        let opened: ContinuousClock.Instant
        /// nil while a handler runs or a response goes out.
        var since: ContinuousClock.Instant?
        var served = 0
        var cut = false
    }

    init(configuration: HTTPServerConfiguration, handler: @escaping HTTPHandler, log: (@Sendable (String) -> Void)?,
         rejection: @escaping @Sendable (Int, String, HTTPRequest) -> HTTPResponse) {
        self.handler = handler
        self.rejection = rejection
        self.log = log
        self.maxHeaderBytes = configuration.maxHeaderBytes
        self.maxBodyBytes = configuration.maxBodyBytes
        self.requestTimeout = configuration.requestTimeout
        self.plainText = configuration.tls == nil
        self.idleTimeout = .seconds(configuration.idleTimeoutSeconds)
    }

    func endStartup() -> [String] {
        startupMessages.withLock { messages in
            defer { messages = nil }
            return messages ?? []
        }
    }

    func library(message: String) {
        let kept = startupMessages.withLock { messages -> Bool in
            guard messages != nil else { return false }
            messages?.append(message)
            return true
        }
        if !kept { log?(message) }
    }

    // MARK: Connections and the request deadline

    func opened(_ connection: OpaquePointer) {
        let fd = quire_mhd_connection_fd(connection)
        let now = ContinuousClock.now
        connections.withLock { $0[Int(bitPattern: connection)] = Watch(fd: fd, opened: now, since: now) }
    }

    /// libmicrohttpd is about to close the connection's socket (it calls this first): after this the
    /// watchdog never touches it.
    ///
    /// libmicrohttpd 0.9.75 (Debian 12) drops a connection whose request line has no space in it
    /// (`GARBAGE`, `GET`) without a word, where RFC 9112 §3 says to answer 400. So when a plain-text
    /// connection closes on its first request, with bytes received and none ever sent (the kernel's
    /// TCP counters say so), the client still there, and neither the watchdog nor a stopping daemon
    /// the cause, it gets the 400 here (or 408 when it was libmicrohttpd's idle timeout).
    func closed(_ connection: OpaquePointer) {
        guard let watch = connections.withLock({ $0.removeValue(forKey: Int(bitPattern: connection)) }) else { return }
        guard plainText, watch.fd >= 0, !watch.cut, watch.served == 0, watch.since != nil, !stopping.load(ordering: .acquiring) else { return }
        let traffic = quire_tcp_traffic(watch.fd)
        guard traffic.known != 0, traffic.data_segments_out == 0, traffic.data_segments_in > 0 else { return }
        var byte: UInt8 = 0
        let peeked = recv(watch.fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        let code = errno
        guard peeked > 0 || (peeked < 0 && (code == EAGAIN || code == EWOULDBLOCK)) else { return }  // gone, or broken
        let idle = idleTimeout > .zero && ContinuousClock.now - watch.opened >= idleTimeout
        let answer = idle ? Self.requestTimeoutResponse : Self.badRequestResponse
        answer.withUnsafeBytes { bytes in
            _ = send(watch.fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
    }

    /// The request is in: its handler runs, then its response goes out; no deadline meanwhile.
    func handling(_ connection: OpaquePointer) {
        connections.withLock { $0[Int(bitPattern: connection)]?.since = nil }
    }

    /// The response went out (or the request ended otherwise): the next request's clock starts.
    func completed(_ connection: OpaquePointer) {
        let now = ContinuousClock.now
        connections.withLock { table in
            let key = Int(bitPattern: connection)
            guard var watch = table[key] else { return }
            watch.since = now
            watch.served += 1
            table[key] = watch
        }
    }

    func startWatchdog() {
        watchdogRunning.store(true, ordering: .releasing)
        let period = min(Duration.milliseconds(250), requestTimeout / 4)
        let thread = Thread { [self] in
            let pause = Double(period.components.seconds) + Double(period.components.attoseconds) / 1e18
            while !watchdogStop.load(ordering: .acquiring) {
                _ = watchdogWake.wait(timeout: .now() + pause)
                sweep(now: ContinuousClock.now)
            }
            watchdogDone.signal()
        }
        thread.name = "quire-http-wdog"  // at most 15 bytes: Linux refuses longer thread names
        thread.start()
    }

    func stopWatchdog() {
        guard watchdogRunning.exchange(false, ordering: .acquiringAndReleasing) else { return }
        watchdogStop.store(true, ordering: .releasing)
        watchdogWake.signal()
        watchdogDone.wait()
    }

    /// Cuts off connections whose request has taken longer than `requestTimeout` to arrive. Shutting the
    /// socket down (never closing it: it is libmicrohttpd's) makes libmicrohttpd see the end of the
    /// stream and close the connection itself.
    func sweep(now: ContinuousClock.Instant) {
        connections.withLock { table in
            for (key, watch) in table where !watch.cut {
                guard let since = watch.since, now - since >= requestTimeout, watch.fd >= 0 else { continue }
                if plainText && watch.served == 0 {
                    // Nothing else is written on a connection waiting for its first request; on TLS a raw
                    // write would break the stream, and on a kept-alive connection the client may
                    // just be idle.
                    Self.requestTimeoutResponse.withUnsafeBytes { bytes in
                        _ = send(watch.fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                    }
                }
                shutdown(watch.fd, Int32(SHUT_RDWR))
                table[key]?.cut = true
            }
        }
    }

    static let requestTimeoutResponse = rawResponse(408, "request not received in time")
    static let badRequestResponse = rawResponse(400, "malformed request line")

    /// A response for the two cases where libmicrohttpd gives no way to answer (see ``closed(_:)`` and ``sweep(now:)``).
    static func rawResponse(_ status: Int, _ text: String) -> [UInt8] {
        let body = text + "\n"
        return Array(("HTTP/1.1 \(status) \(HTTPResponse.reason(status))\r\nConnection: close\r\n"
                      + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body).utf8)
    }

    // MARK: Requests

    /// libmicrohttpd's access handler: called once the head is in (`*state` nil), once per piece of body,
    /// and once more with nothing when the request is complete; a response may be queued on the first
    /// and the last call only.
    func access(_ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
                upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
                state statePointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        guard let existing = statePointer.pointee else {
            let state = RequestState(head: head(connection, url: url, method: method, version: version))
            statePointer.pointee = Unmanaged.passRetained(state).toOpaque()
            if let refusal = refuse(state, connection) {
                handling(connection)
                return queue(rejection(refusal.status, refusal.message, state.request), on: connection)
            }
            return .YES
        }
        let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
        let size = uploadSize.pointee
        if size > 0 {
            uploadSize.pointee = 0
            if state.tooLarge {
                // A chunked body past the limit: read on (without keeping it) to answer 413, but only a
                // little past the limit (the client may still be sending the chunks in flight: 64 KiB, or a
                // sixteenth of the limit up to 1 MiB); a body that goes on is cut off.
                state.discarded += size
                return state.discarded > maxBodyBytes + max(64 * 1024, min(maxBodyBytes / 16, 1 << 20)) ? .NO : .YES
            }
            if state.request.body.count + size > maxBodyBytes {
                state.tooLarge = true
                state.discarded = state.request.body.count + size
                state.request.body = []
                return .YES
            }
            if let upload {
                upload.withMemoryRebound(to: UInt8.self, capacity: size) {
                    state.request.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
                }
            }
            return .YES
        }
        handling(connection)
        if state.tooLarge {
            return queue(rejection(413, "request body over \(maxBodyBytes) bytes", state.request), on: connection)
        }
        return queue(handler(state.request), on: connection)
    }

    /// The request line and header fields as libmicrohttpd parsed them.
    private func head(_ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
                      version: UnsafePointer<CChar>?) -> Head {
        let headers = PairCollector()
        let query = PairCollector()
        withExtendedLifetime((headers, query)) {
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, collectPair, Unmanaged.passUnretained(headers).toOpaque())
            _ = MHD_get_connection_values_n(connection, .GET_ARGUMENT_KIND, collectPair, Unmanaged.passUnretained(query).toOpaque())
        }
        var request = HTTPRequest(method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "",
                                  query: query.pairs, headers: HTTPHeaders(headers.pairs), body: [],
                                  version: version.map { String(cString: $0) } ?? "")
        request.remoteAddress = quire_mhd_client_address(connection).flatMap(numericHost)
        let lineBytes = request.method.utf8.count + request.path.utf8.count + request.version.utf8.count + query.bytes + 4
        return Head(request: request, bytes: lineBytes + headers.bytes)
    }

    /// Whether the head alone already decides the answer.
    private func refuse(_ state: RequestState, _ connection: OpaquePointer) -> (status: Int, message: String)? {
        let request = state.request
        if state.headBytes > maxHeaderBytes {
            return (431, "request head over \(maxHeaderBytes) bytes")
        }
        // RFC 9110 methods are tokens and case-sensitive; every registered one is upper case, and a
        // lower-case `get` is a broken client (nginx says 400 to it too).
        guard !request.method.isEmpty, request.method.utf8.allSatisfy({ (65...90).contains($0) || $0 == 45 || $0 == 95 }) else {
            return (400, "malformed method")
        }
        guard request.path.hasPrefix("/") || (request.method == "OPTIONS" && request.path == "*") else {
            return (400, "malformed request target: expected an absolute path")
        }
        if let declared = request.headers["Content-Length"] {
            // libmicrohttpd has already refused a malformed length with 400.
            if let length = Int(declared.trimmingCharacters(in: .whitespaces)), length > maxBodyBytes {
                return (413, "request body of \(length) bytes is over \(maxBodyBytes)")
            }
            if let length = Int(declared.trimmingCharacters(in: .whitespaces)), length > 0 {
                state.request.body.reserveCapacity(length)
            }
        }
        return nil
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let status = (100...599).contains(response.status) ? response.status : 500
        let made: OpaquePointer? = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let made else { return .NO }
        defer { MHD_destroy_response(made) }
        for field in response.headers where MHD_add_response_header(made, field.name, field.value) != .YES {
            log?("response header refused: \(field.name)")
        }
        return MHD_queue_response(connection, UInt32(status), made)
    }
}

struct Head {
    var request: HTTPRequest
    var bytes: Int
}

/// One request while it arrives; lives in libmicrohttpd's per-request pointer until the request completes.
final class RequestState {
    var request: HTTPRequest
    let headBytes: Int
    var tooLarge = false
    var discarded = 0

    init(head: Head) {
        self.request = head.request
        self.headBytes = head.bytes
    }
}

final class PairCollector {
    var pairs: [(name: String, value: String)] = []
    var bytes = 0
}

// MARK: - C callbacks (no captures: everything arrives through the context pointer)

private func text(_ pointer: UnsafePointer<CChar>?, _ count: Int) -> String {
    guard let pointer, count > 0 else { return "" }
    return pointer.withMemoryRebound(to: UInt8.self, capacity: count) { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) }
}

private let collectPair: MHD_KeyValueIteratorN = { context, _, key, keySize, value, valueSize in
    guard let context else { return .NO }
    let collector = Unmanaged<PairCollector>.fromOpaque(context).takeUnretainedValue()
    collector.pairs.append((text(key, keySize), text(value, valueSize)))
    collector.bytes += keySize + valueSize + 4
    return .YES
}

private let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, version, upload, uploadSize, state in
    guard let context, let connection, let uploadSize, let state else { return .NO }
    let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
    return core.access(connection, url: url, method: method, version: version, upload: upload, uploadSize: uploadSize, state: state)
}

private let requestCompleted: MHD_RequestCompletedCallback = { context, connection, state, _ in
    if let state, let pointer = state.pointee {
        Unmanaged<RequestState>.fromOpaque(pointer).release()
        state.pointee = nil
    }
    guard let context, let connection else { return }
    Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue().completed(connection)
}

private let connectionChanged: MHD_NotifyConnectionCallback = { context, connection, _, code in
    guard let context, let connection else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
    switch code {
    case .CONNECTION_NOTIFY_STARTED: core.opened(connection)
    case .CONNECTION_NOTIFY_CLOSED: core.closed(connection)
    }
}

private let logMessage: MHD_LogCallback = { context, format, arguments in
    guard let context, let format, let arguments else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(context).takeUnretainedValue()
    var buffer = [UInt8](repeating: 0, count: 512)
    let written = buffer.withUnsafeMutableBufferPointer { bytes in
        bytes.withMemoryRebound(to: CChar.self) { vsnprintf($0.baseAddress, $0.count, format, arguments) }
    }
    guard written > 0 else { return }
    let end = buffer.firstIndex(of: 0) ?? buffer.count
    let message = String(decoding: buffer[..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    if !message.isEmpty { core.library(message: message) }
}
