#if canImport(Glibc)
import Glibc
#endif

/// How an ``HTTPServer`` listens and what it tolerates from clients. Every default is here.
public struct HTTPServerConfiguration: Sendable {
    public var listen: ListenAddress
    /// libmicrohttpd's internal thread pool: each thread polls (epoll) its share of the connections
    /// and runs their handlers. A handler that blocks holds its thread; see ``HTTPServer``.
    public var threads: Int
    /// Connections open at once. libmicrohttpd stops accepting at the limit: more wait in the kernel's
    /// listen backlog until one closes (or their client gives up).
    public var maxConnections: Int
    /// Connections open at once from one client address; 0 is no limit (behind a proxy every
    /// client has the proxy's address).
    public var maxConnectionsPerClient: Int
    /// Seconds a connection may stay silent (no byte in or out) before it is closed:
    /// libmicrohttpd's `MHD_OPTION_CONNECTION_TIMEOUT`, an inactivity timeout.
    public var idleTimeoutSeconds: Int
    /// How long a client may take to send a whole request (head and body), from the moment the
    /// connection opened or its previous response went out. An inactivity timeout alone lets a client
    /// that sends one byte a second hold a connection for hours; this one cuts it off (with 408 on
    /// plain HTTP when it is the connection's first request). It does not cover the handler's time.
    public var requestTimeout: Duration
    /// The most bytes of request head (request line and header fields) answered; more gets 431.
    public var maxHeaderBytes: Int
    /// The most body bytes a request may have; more gets 413, before the body is read when
    /// `Content-Length` says so, as soon as the limit is passed for a chunked body.
    public var maxBodyBytes: Int
    /// libmicrohttpd's memory per connection (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`): the read
    /// buffer and the parsed head. A head that does not fit gets libmicrohttpd's own 414 or 431.
    /// Must be larger than `maxHeaderBytes`.
    public var connectionMemoryBytes: Int
    /// HTTPS when set.
    public var tls: TLS?

    public init(listen: ListenAddress, threads: Int = 4, maxConnections: Int = 256, maxConnectionsPerClient: Int = 0,
                idleTimeoutSeconds: Int = 30, requestTimeout: Duration = .seconds(30), maxHeaderBytes: Int = 16 * 1024,
                maxBodyBytes: Int = 1 << 20, connectionMemoryBytes: Int = 64 * 1024, tls: TLS? = nil) {
        self.listen = listen
        self.threads = threads
        self.maxConnections = maxConnections
        self.maxConnectionsPerClient = maxConnectionsPerClient
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.requestTimeout = requestTimeout
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.connectionMemoryBytes = connectionMemoryBytes
        self.tls = tls
    }

    /// A certificate (chain) and its private key, PEM-encoded.
    public struct TLS: Sendable, Equatable {
        public var certificatePEM: String
        public var keyPEM: String

        public init(certificatePEM: String, keyPEM: String) {
            self.certificatePEM = certificatePEM
            self.keyPEM = keyPEM
        }

        /// Reads both from files (`--tls-cert`, `--tls-key`).
        public init(certificateFile: String, keyFile: String) throws(HTTPServerError) {
            self.certificatePEM = try Self.readPEM(certificateFile)
            self.keyPEM = try Self.readPEM(keyFile)
        }

        static func readPEM(_ path: String) throws(HTTPServerError) -> String {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let code = errno
                throw HTTPServerError(.tlsFiles, "cannot open '\(path)': \(String(cString: strerror(code)))", errno: code)
            }
            defer { close(fd) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n > 0 { bytes += chunk[0..<n]; continue }
                if n == 0 { break }
                let code = errno
                if code == EINTR { continue }
                throw HTTPServerError(.tlsFiles, "cannot read '\(path)': \(String(cString: strerror(code)))", errno: code)
            }
            guard let text = String(validating: bytes, as: UTF8.self), text.contains("-----BEGIN ") else {
                throw HTTPServerError(.tlsFiles, "'\(path)' is not PEM")
            }
            return text
        }
    }

    func validate() throws(HTTPServerError) {
        func check(_ ok: Bool, _ message: String) throws(HTTPServerError) {
            if !ok { throw HTTPServerError(.invalidConfiguration, message, address: listen.description) }
        }
        try check((1...1024).contains(threads), "threads must be 1…1024, not \(threads)")
        try check(maxConnections >= 1, "maxConnections must be at least 1")
        try check(maxConnectionsPerClient >= 0, "maxConnectionsPerClient must not be negative")
        try check(idleTimeoutSeconds >= 0, "idleTimeoutSeconds must not be negative")
        try check(requestTimeout > .zero, "requestTimeout must be positive")
        try check(maxHeaderBytes >= 256, "maxHeaderBytes must be at least 256")
        try check(maxBodyBytes >= 0, "maxBodyBytes must not be negative")
        try check(connectionMemoryBytes > maxHeaderBytes, "connectionMemoryBytes must be larger than maxHeaderBytes")
    }
}
