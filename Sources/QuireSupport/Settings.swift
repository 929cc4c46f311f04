/// What a setting's text must look like, how it becomes a value and how a value is shown (in `--help`
/// and the configuration table). One per kind of value: ``integer(_:)``, ``milliseconds(_:)``,
/// ``onOff``, ``choice(_:noun:)``…
public struct SettingValue<Value>: Sendable {
    /// The word after the flag in `--help`: `N`, `ENDPOINT`, `FILE`; empty for a switch.
    public var placeholder: String
    /// What a valid text is, for the messages: "an integer in 1…100", "on or off".
    public var expectation: String
    /// For a closed list of words: the noun of "unknown dialect 'x' (mdp02, mdp01, majortomo)".
    public var noun: String?
    /// A flag that takes no value (`--json`): given means on.
    public var isSwitch: Bool
    let parse: @Sendable (String) -> Value?
    let format: @Sendable (Value) -> String

    public init(placeholder: String, expectation: String, noun: String? = nil, isSwitch: Bool = false,
                parse: @escaping @Sendable (String) -> Value?, format: @escaping @Sendable (Value) -> String) {
        self.placeholder = placeholder
        self.expectation = expectation
        self.noun = noun
        self.isSwitch = isSwitch
        self.parse = parse
        self.format = format
    }

    /// The value `text` stands for; nil when it is not valid.
    public func value(_ text: String) -> Value? { parse(text) }

    /// How `value` is written in `--help` and the docs.
    public func text(_ value: Value) -> String { format(value) }

    /// What is wrong with `text` given to the flag `--name`.
    public func rejection(_ text: String, flag: String) -> String {
        if text.isEmpty && !placeholder.isEmpty { return "--\(flag) needs a value (\(placeholder))" }
        if let noun { return "unknown \(noun) '\(text)' (\(expectation))" }
        return "'--\(flag) \(text)': expected \(expectation)"
    }

    /// What is wrong with `text` read from an environment variable (named by the caller).
    public func rejection(environment text: String) -> String {
        if let noun { return "unknown \(noun) '\(text)' (\(expectation))" }
        return "'\(text)' is not \(expectation)"
    }

    /// The same text, with one more value: `none` (shown as `noneText`); `offWord`, when given, is
    /// the text that asks for it (`--stats off`).
    public func optional(none noneText: String, offWord: String? = nil) -> SettingValue<Value?> {
        let parse = self.parse
        let format = self.format
        return SettingValue<Value?>(
            placeholder: placeholder, expectation: offWord.map { "\(expectation) or \($0)" } ?? expectation, noun: noun, isSwitch: isSwitch,
            parse: { text in
                if let offWord, text == offWord { return .some(nil) }
                return parse(text).map { .some($0) }
            },
            format: { $0.map(format) ?? noneText })
    }

    /// The same text, mapped to another type (seconds given, milliseconds kept).
    public func map<Other>(_ forward: @escaping @Sendable (Value) -> Other, back: @escaping @Sendable (Other) -> Value) -> SettingValue<Other> {
        let parse = self.parse
        let format = self.format
        return SettingValue<Other>(placeholder: placeholder, expectation: expectation, noun: noun, isSwitch: isSwitch,
                                   parse: { parse($0).map(forward) }, format: { format(back($0)) })
    }
}

extension SettingValue where Value == Int {
    /// A whole number in `range`.
    public static func integer(_ range: ClosedRange<Int>, placeholder: String = "N") -> Self {
        Self(placeholder: placeholder, expectation: "an integer in \(range.lowerBound)…\(range.upperBound)",
             parse: { Int($0).flatMap { range.contains($0) ? $0 : nil } }, format: { String($0) })
    }
}

extension SettingValue where Value == Milliseconds {
    /// A duration given in whole milliseconds.
    public static func milliseconds(_ range: ClosedRange<Int>) -> Self {
        SettingValue<Int>.integer(range).map({ Milliseconds(Int64($0)) }, back: { Int($0.value) })
    }

    /// A duration given in whole seconds, kept in milliseconds.
    public static func seconds(_ range: ClosedRange<Int>) -> Self {
        SettingValue<Int>.integer(range).map({ Milliseconds(Int64($0) * 1_000) }, back: { Int($0.value / 1_000) })
    }
}

extension SettingValue where Value == Int64 {
    /// A whole number in `range`, kept as `Int64` (seconds of a token's lifetime).
    public static func integer64(_ range: ClosedRange<Int>) -> Self {
        SettingValue<Int>.integer(range).map({ Int64($0) }, back: { Int($0) })
    }
}

extension SettingValue where Value == Double {
    /// A number in `range`.
    public static func number(_ range: ClosedRange<Double>) -> Self {
        Self(placeholder: "X", expectation: "a number in \(range.lowerBound)…\(range.upperBound)",
             parse: { Double($0).flatMap { range.contains($0) ? $0 : nil } },
             format: { $0 == $0.rounded() && abs($0) < 1e15 ? String(Int($0)) : String($0) })
    }
}

extension SettingValue where Value == Bool {
    /// `on`/`off` (also `true`/`false`, `1`/`0`, `yes`/`no`).
    public static var onOff: Self {
        Self(placeholder: "on|off", expectation: "on or off", parse: { text in
            switch text.lowercased() {
            case "on", "true", "1", "yes": true
            case "off", "false", "0", "no": false
            default: nil
            }
        }, format: { $0 ? "on" : "off" })
    }

    /// A flag without a value (`--json`); in a variable, `on` or `off`.
    public static var `switch`: Self {
        var value = onOff
        value.placeholder = ""
        value.isSwitch = true
        return value
    }
}

extension SettingValue where Value == String {
    /// Any text but the empty one.
    public static func string(_ placeholder: String) -> Self {
        Self(placeholder: placeholder, expectation: "a value", parse: { $0.isEmpty ? nil : $0 }, format: { $0 })
    }

    /// One of `words`.
    public static func word(_ words: [String], noun: String, placeholder: String) -> Self {
        Self(placeholder: placeholder, expectation: words.joined(separator: ", "), noun: noun,
             parse: { words.contains($0) ? $0 : nil }, format: { $0 })
    }
}

extension SettingValue where Value: RawRepresentable & CaseIterable & Sendable, Value.RawValue == String {
    /// One of an enumeration's raw values.
    public static func choice(noun: String, placeholder: String) -> Self {
        Self(placeholder: placeholder, expectation: Value.allCases.map(\.rawValue).joined(separator: ", "), noun: noun,
             parse: { Value(rawValue: $0) }, format: { $0.rawValue })
    }
}

extension SettingValue where Value == [String] {
    /// Words joined by `separator` (`eng+deu`, `ocr,echo`).
    public static func list(separator: Character, placeholder: String) -> Self {
        Self(placeholder: placeholder, expectation: "names separated by '\(separator)'",
             parse: { text in
                 let items = text.split(separator: separator).map { String($0).trimmingCharacters(inWhitespace: ()) }.filter { !$0.isEmpty }
                 return items.isEmpty ? nil : items
             },
             format: { $0.joined(separator: String(separator)) })
    }
}

extension String {
    fileprivate func trimmingCharacters(inWhitespace: Void) -> String {
        var text = Substring(self)
        while text.first?.isWhitespace == true { text = text.dropFirst() }
        while text.last?.isWhitespace == true { text = text.dropLast() }
        return String(text)
    }
}

/// One setting of a configuration type, declared once: its flag, its `QUIRE_*` variable, the values it
/// takes and its help. The default is the property's own (`Root()`'s). The environment fallback, the
/// command-line parser, `--help` and the configuration table in `docs/configuration.md` all read it,
/// the role `@Option(name:help:)` plays in swift-argument-parser.
public struct Setting<Root>: Sendable {
    /// The flag without its dashes (`heartbeat-interval-ms`); nil: environment only.
    public let flag: String?
    /// The environment variable (`QUIRE_HEARTBEAT_INTERVAL_MS`); nil: flag only.
    public let variable: String?
    /// One line: what it does.
    public let help: String
    public let placeholder: String
    /// What a valid text is ("an integer in 1…3600000").
    public let expectation: String
    public let isSwitch: Bool
    /// Whether it takes one of a closed list of words (``expectation`` lists them).
    public let isChoice: Bool
    /// Shown instead of the default value when that is worked out at run time ("one per core").
    public let defaultNote: String?
    private let assign: @Sendable (inout Root, String) -> Bool
    private let show: @Sendable (Root) -> String
    private let reject: @Sendable (String, String?) -> String

    /// A setting that sets `keyPath`.
    public init<Value>(_ keyPath: WritableKeyPath<Root, Value> & Sendable, flag: String? = nil, variable: String? = nil, _ value: SettingValue<Value>,
                       help: String, defaultNote: String? = nil) {
        self.init(flag: flag, variable: variable, value, help: help, defaultNote: defaultNote,
                  set: { root, new in root[keyPath: keyPath] = new }, get: { $0[keyPath: keyPath] })
    }

    /// A setting that sets more than one property (a rate and its burst).
    public init<Value>(flag: String? = nil, variable: String? = nil, _ value: SettingValue<Value>, help: String, defaultNote: String? = nil,
                       set: @escaping @Sendable (inout Root, Value) -> Void, get: @escaping @Sendable (Root) -> Value) {
        self.flag = flag
        self.variable = variable
        self.help = help
        self.placeholder = value.placeholder
        self.expectation = value.expectation
        self.isSwitch = value.isSwitch
        self.isChoice = value.noun != nil
        self.defaultNote = defaultNote
        self.assign = { root, text in
            guard let parsed = value.value(text) else { return false }
            set(&root, parsed)
            return true
        }
        self.show = { value.text(get($0)) }
        self.reject = { text, flag in flag.map { value.rejection(text, flag: $0) } ?? value.rejection(environment: text) }
    }

    /// Sets the value `text` stands for; false (and `root` unchanged) when `text` is not valid.
    public func apply(_ text: String, to root: inout Root) -> Bool { assign(&root, text) }

    /// The message for `text`, not valid, given to `--flag`, or (nil) read from the variable.
    public func rejection(_ text: String, flag: String?) -> String { reject(text, flag) }

    /// The value `root` has, as `--help` and the docs show it.
    public func shown(in root: Root) -> String { defaultNote ?? show(root) }
}

extension Sequence {
    /// Applies the settings' variables that `environment` sets (empty ones count as unset) to `root`.
    /// A value that does not parse is reported, naming the variable, never ignored.
    public func applyEnvironment<Root>(_ environment: [String: String], to root: inout Root) throws(ConfigurationError) where Element == Setting<Root> {
        for setting in self {
            guard let variable = setting.variable, let text = environment[variable], !text.isEmpty else { continue }
            guard setting.apply(text, to: &root) else {
                throw ConfigurationError(source: variable, message: setting.rejection(text, flag: nil))
            }
        }
    }
}

/// The settings more than one configuration type has (the broker and its workers must agree on
/// heartbeats; workers and clients name the same broker): declared here once, bound to each type's
/// property.
extension Setting {
    public static func heartbeatInterval(_ keyPath: WritableKeyPath<Root, Milliseconds> & Sendable) -> Self {
        Setting(keyPath, flag: "heartbeat-interval-ms", variable: "QUIRE_HEARTBEAT_INTERVAL_MS", .milliseconds(1...3_600_000),
                help: "heartbeat every N ms, also while busy; keep it equal on the broker and its workers")
    }

    public static func heartbeatLiveness(_ keyPath: WritableKeyPath<Root, Int> & Sendable) -> Self {
        Setting(keyPath, flag: "heartbeat-liveness", variable: "QUIRE_HEARTBEAT_LIVENESS", .integer(1...100),
                help: "missed heartbeats before the peer is taken for dead")
    }

    public static func broker(_ keyPath: WritableKeyPath<Root, String> & Sendable) -> Self {
        Setting(keyPath, flag: "broker", variable: "QUIRE_BROKER",
                SettingValue<String>(placeholder: "ENDPOINT[,ENDPOINT…]", expectation: "one or more endpoints separated by commas",
                                     parse: { BrokerEndpoints.split($0).isEmpty ? nil : $0 }, format: { $0 }),
                help: "the broker to connect to; several, separated by commas: when one stops answering, the next")
    }

    public static func audience(_ keyPath: WritableKeyPath<Root, String> & Sendable) -> Self {
        Setting(keyPath, flag: "audience", variable: "QUIRE_AUDIENCE", .string("NAME"), help: "the 'aud' tokens carry")
    }

    public static func issuer(_ keyPath: WritableKeyPath<Root, String> & Sendable) -> Self {
        Setting(keyPath, flag: "issuer", variable: "QUIRE_ISSUER", .string("NAME"), help: "the 'iss' tokens carry")
    }
}

/// A `--broker` value: one endpoint, or several separated by commas (brokers that share a job store,
/// or one name per machine), tried in turn when the one in use stops answering.
public enum BrokerEndpoints {
    public static func split(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
