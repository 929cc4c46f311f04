/// A configuration value that could not be used, naming where it came from.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var source: String
    public var message: String
    public init(source: String, message: String) {
        self.source = source
        self.message = message
    }
    public var description: String { "\(source): \(message)" }
}
