/// Why a server could not start: what failed, at which address, and what libmicrohttpd said about it.
public struct HTTPServerError: Error, Equatable, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        /// A listen address that does not parse (`[HOST]:PORT`).
        case invalidAddress
        /// The host name did not resolve.
        case resolve
        /// A setting out of range (threads, limits).
        case invalidConfiguration
        /// The certificate or key could not be read.
        case tlsFiles
        /// This libmicrohttpd was built without something asked for (TLS).
        case unsupported
        /// `MHD_start_daemon` refused: port in use, no permission, a bad key…
        case start
    }

    public let code: Code
    public let message: String
    /// The listen address, as given.
    public let address: String
    /// libmicrohttpd's own messages while it was starting (it reports errors only through its logger).
    public let libraryMessages: [String]
    /// `errno` right after the failing call, when there was one.
    public let errno: Int32?

    public init(_ code: Code, _ message: String, address: String = "", libraryMessages: [String] = [], errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.address = address
        self.libraryMessages = libraryMessages
        self.errno = errno
    }

    public var description: String {
        var text = address.isEmpty ? message : "\(address): \(message)"
        if !libraryMessages.isEmpty { text += " (" + libraryMessages.joined(separator: "; ") + ")" }
        return text
    }
}
