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

/// Reads typed values from `QUIRE_*` environment variables.
public struct EnvironmentReader {
    public let environment: [String: String]
    public init(_ environment: [String: String]) { self.environment = environment }

    public func string(_ name: String) -> String? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }

    public func integer(_ name: String, range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError(source: name, message: "'\(text)' is not an integer in \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }

    public func number(_ name: String, range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text), range.contains(value) else {
            throw ConfigurationError(source: name, message: "'\(text)' is not a number in \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }

    /// `on`/`off` (also `true`/`false`, `1`/`0`, `yes`/`no`).
    public func flag(_ name: String) throws(ConfigurationError) -> Bool? {
        guard let text = string(name) else { return nil }
        switch text.lowercased() {
        case "on", "true", "1", "yes": return true
        case "off", "false", "0", "no": return false
        default: throw ConfigurationError(source: name, message: "'\(text)' is not on or off")
        }
    }

    public func milliseconds(_ name: String) throws(ConfigurationError) -> Milliseconds? {
        guard let value = try integer(name, range: 1...(86_400_000 * 7)) else { return nil }
        return Milliseconds(Int64(value))
    }
}
