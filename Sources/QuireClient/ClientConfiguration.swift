import QuireSupport
import QuireWire
import ZeroMQ

/// How a client reaches the broker and how patient it is.
public struct ClientConfiguration: Sendable, Equatable {
    /// The broker's endpoint (`--broker`, `QUIRE_BROKER`).
    public var broker: String
    public var dialect: Dialect
    /// How long to wait for the FINAL reply to one attempt.
    public var timeout: Milliseconds
    /// How many times to resend a request that timed out, on a fresh connection each time (RFC 7's
    /// reliability section: the Lazy Pirate pattern). Quire's services are idempotent.
    public var retries: Int
    /// Requests in flight at once. Each has its own DEALER connection, as MDP allows one outstanding
    /// request per connection; further requests wait in the client.
    public var maxInFlight: Int
    /// How long a connection may sit idle before it is closed, all but the last one: the pool grows to
    /// the requests in flight at once and shrinks back once they are answered.
    public var idleLinger: Milliseconds
    /// CURVE towards a broker that has it on (`--curve-server-key`, `--curve-key`); `nil`: plain TCP.
    public var curve: CurveClientSettings?

    public init(broker: String = "tcp://127.0.0.1:5555", dialect: Dialect = .mdp02, timeout: Milliseconds = 30_000, retries: Int = 2, maxInFlight: Int = 64,
                idleLinger: Milliseconds = Self.defaultIdleLinger, curve: CurveClientSettings? = nil) {
        self.broker = broker
        self.dialect = dialect
        self.timeout = timeout
        self.retries = retries
        self.maxInFlight = maxInFlight
        self.idleLinger = idleLinger
        self.curve = curve
    }

    /// A minute: long enough that steady traffic keeps its connections, short enough that a burst's are
    /// gone before the next.
    public static let defaultIdleLinger: Milliseconds = 60_000

    /// The defaults, overridden by the `QUIRE_*` variables of ``settings`` where set.
    public init(environment: [String: String]) throws(ConfigurationError) {
        self.init()
        try Self.settings.applyEnvironment(environment, to: &self)
    }

    /// What the client verbs let their users set about the connection, each setting declared once.
    public static let settings: [Setting<ClientConfiguration>] = [
        .broker(\.broker),
        Setting(\.timeout, flag: "timeout-ms", variable: "QUIRE_TIMEOUT_MS", .milliseconds(1...86_400_000), help: "wait per attempt"),
        Setting(\.retries, flag: "retries", variable: "QUIRE_RETRIES", .integer(0...100), help: "resend after a timeout"),
        Setting(\.dialect, flag: "dialect", .choice(noun: "dialect", placeholder: "D"), help: "the Majordomo dialect to speak"),
    ]
}

/// Why a request failed on the client side.
public struct ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// No reply within the timeout, after every retry.
        case timeout
        /// The broker or a worker answered with a typed error (see ``remote``).
        case remote
        /// A ZeroMQ call failed.
        case transport
        /// The client was closed while the request waited.
        case closed
        /// The calling task was cancelled.
        case cancelled
        /// The broker's reply did not follow the protocol.
        case protocolError = "protocol_error"
    }

    public var code: Code
    public var message: String
    /// The error the broker or worker sent, for ``Code/remote``.
    public var remote: WireError?

    public init(_ code: Code, _ message: String, remote: WireError? = nil) {
        self.code = code
        self.message = message
        self.remote = remote
    }

    public var description: String {
        if let remote { return "\(remote.code.rawValue): \(remote.message)" }
        return "\(code.rawValue): \(message)"
    }
}
