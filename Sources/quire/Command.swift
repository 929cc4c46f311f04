import Foundation
import QuireSupport

/// One flag or variable as the parser, `--help` and the configuration table see it: a ``Setting`` of
/// a configuration type, or an ``Option`` of a command, with the default this command gives it.
struct OptionInfo: Sendable {
    var flag: String?
    var variable: String?
    var placeholder = ""
    var isSwitch = false
    /// One of a closed list of words, which `expectation` names.
    var isChoice = false
    var help: String
    var expectation = ""
    /// The default as this command has it; nil: none worth showing (a switch that is off).
    var defaultText: String?
    /// The declaration's own help and default note, for the configuration table, whatever a command's
    /// group says about it in its `--help`.
    var summary: String
    var defaultNote: String?

    init(flag: String? = nil, variable: String? = nil, placeholder: String = "", isSwitch: Bool = false, isChoice: Bool = false, help: String,
         expectation: String = "", defaultText: String? = nil, defaultNote: String? = nil) {
        self.flag = flag
        self.variable = variable
        self.placeholder = placeholder
        self.isSwitch = isSwitch
        self.isChoice = isChoice
        self.help = help
        self.expectation = expectation
        self.defaultText = defaultText
        self.summary = help
        self.defaultNote = defaultNote
    }
}

/// Options a command takes together, the role `@OptionGroup` plays in swift-argument-parser: a
/// configuration type's settings (``BrokerConfiguration/settings``) or a command's own options.
struct OptionGroup: Sendable {
    /// The heading in `--help`; nil: the command's main options.
    var title: String?
    var options: [OptionInfo]

    init(_ title: String? = nil, options: [OptionInfo]) {
        self.title = title
        self.options = options
    }

    init<Root>(_ settings: [Setting<Root>], defaults: Root, hiding: Set<String> = []) {
        self.init(nil, settings, defaults: defaults, hiding: hiding)
    }

    /// `settings` with the defaults of `defaults`; the flags in `hiding` are left out (the command
    /// still reads their variables).
    init<Root>(_ title: String? = nil, _ settings: [Setting<Root>], defaults: Root, hiding: Set<String> = []) {
        self.title = title
        self.options = settings.compactMap { setting in
            let shown = setting.shown(in: defaults)
            var info = OptionInfo(flag: setting.flag, variable: setting.variable, placeholder: setting.placeholder, isSwitch: setting.isSwitch,
                                  isChoice: setting.isChoice, help: setting.help, expectation: setting.expectation,
                                  defaultText: setting.isSwitch && shown == "off" ? nil : shown, defaultNote: setting.defaultNote)
            if let flag = info.flag, hiding.contains(flag) {
                guard info.variable != nil else { return nil }
                info.flag = nil
            }
            return info
        }
    }
}

/// A command's own option (not a configuration type's property), declared once: flag, variable,
/// values, default and help. Read with ``Invocation/value(_:)``: the flag, else the variable, else
/// the default.
struct Option<Value: Sendable>: Sendable {
    let flag: String?
    let variable: String?
    let value: SettingValue<Value>
    let defaultValue: Value?
    let help: String
    let defaultNote: String?

    init(_ flag: String?, variable: String? = nil, _ value: SettingValue<Value>, default defaultValue: Value? = nil, help: String,
         defaultNote: String? = nil) {
        self.flag = flag
        self.variable = variable
        self.value = value
        self.defaultValue = defaultValue
        self.help = help
        self.defaultNote = defaultNote
    }

    /// The same option with another default (`quire bench` logs at `warning`; `quire up` runs one
    /// worker thread per core, `note`).
    func defaulting(to newDefault: Value?, note: String? = nil) -> Self {
        Option(flag, variable: variable, value, default: newDefault, help: help, defaultNote: note)
    }

    var info: OptionInfo {
        let shown = defaultNote ?? defaultValue.map(value.text)
        return OptionInfo(flag: flag, variable: variable, placeholder: value.placeholder, isSwitch: value.isSwitch, isChoice: value.noun != nil, help: help,
                          expectation: value.expectation, defaultText: value.isSwitch && shown == "off" ? nil : shown, defaultNote: defaultNote)
    }
}

/// A parsed command line and the environment it runs in.
struct Invocation {
    /// `quire broker`: the prefix of every usage error.
    let command: String
    let arguments: Arguments
    let environment: [String: String]

    var positionals: [String] { arguments.positionals }

    /// `root` with the settings' variables, then their flags, applied: flags override variables,
    /// which override the defaults. A value that does not parse is a usage error naming its source.
    func configure<Root>(_ root: inout Root, _ settings: [Setting<Root>]) throws(UsageError) {
        do {
            try settings.applyEnvironment(environment, to: &root)
        } catch {
            throw UsageError(command: command, message: error.description)
        }
        for setting in settings {
            guard let flag = setting.flag, let text = given(flag, isSwitch: setting.isSwitch) else { continue }
            guard setting.apply(text, to: &root) else {
                throw UsageError(command: command, message: setting.rejection(text, flag: flag))
            }
        }
    }

    /// `Root()` configured.
    func configured<Root>(_ root: Root, _ settings: [Setting<Root>]) throws(UsageError) -> Root {
        var root = root
        try configure(&root, settings)
        return root
    }

    /// The option's value: its flag, else its variable, else its default.
    func value<Value>(_ option: Option<Value>) throws(UsageError) -> Value? {
        if let flag = option.flag, let text = given(flag, isSwitch: option.value.isSwitch) {
            guard let value = option.value.value(text) else { throw UsageError(command: command, message: option.value.rejection(text, flag: flag)) }
            return value
        }
        if let variable = option.variable, let text = environment[variable], !text.isEmpty {
            guard let value = option.value.value(text) else {
                throw UsageError(command: command, message: "\(variable): " + option.value.rejection(environment: text))
            }
            return value
        }
        return option.defaultValue
    }

    /// The option's value, for options that have a default.
    func value<Value>(_ option: Option<Value>, or fallback: Value) throws(UsageError) -> Value {
        try value(option) ?? fallback
    }

    /// Whether the option's flag is on the command line.
    func isGiven<Value>(_ option: Option<Value>) -> Bool {
        option.flag.map { given($0, isSwitch: option.value.isSwitch) != nil } ?? false
    }

    /// Whether the flag is on the command line.
    func isGiven(flag: String) -> Bool { arguments.string(flag) != nil || arguments.flag(flag) }

    private func given(_ flag: String, isSwitch: Bool) -> String? {
        isSwitch ? (arguments.flag(flag) ? "on" : nil) : arguments.string(flag)
    }
}

/// One `quire` command as a value: its name, help and options, and what it runs. `main.swift`
/// dispatches over ``Command/all``.
struct Command: Sendable {
    /// The words after `quire`: `broker`, `bench ocr`.
    let name: String
    /// The line in `quire --help` (name with arguments, what it does); nil: not listed on its own.
    let listing: (String, String)?
    let usage: String
    let discussion: String
    let groups: [OptionGroup]
    /// Text after the options.
    let epilogue: String
    let run: @Sendable (Invocation) throws -> Int32

    init(_ name: String, listing: (String, String)?, usage: String, discussion: String, groups: [OptionGroup], epilogue: String = "",
         run: @escaping @Sendable (Invocation) throws -> Int32) {
        self.name = name
        self.listing = listing
        self.usage = usage
        self.discussion = discussion
        var groups = groups
        if !groups.contains(where: { $0.options.contains { $0.flag == "log-level" } }) {
            // Every command takes --log-level: with its main options, or after them all.
            if let main = groups.firstIndex(where: { $0.title == nil }) {
                groups[main].options.append(CommonOptions.logLevel.info)
            } else {
                groups.append(OptionGroup(options: [CommonOptions.logLevel.info]))
            }
        }
        self.groups = groups
        self.epilogue = epilogue
        self.run = run
    }

    /// Every option of the command.
    var options: [OptionInfo] { groups.flatMap(\.options) }

    /// Parses `arguments` against the command's options and runs it. `--help` or `-h` anywhere prints
    /// the help instead.
    func callAsFunction(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            printOut(help)
            return 0
        }
        let parsed = try Arguments(command: "quire " + name, arguments, options: options)
        return try run(Invocation(command: "quire " + name, arguments: parsed, environment: environment))
    }

    /// The `--help` text: usage, discussion, then every option group from its declarations.
    var help: String {
        var lines = ["Usage: " + usage, ""]
        lines.append(contentsOf: discussion.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        let flagged = groups.map { OptionGroup($0.title, options: $0.options.filter { $0.flag != nil }) }.filter { !$0.options.isEmpty }
        let width = min(32, (flagged.flatMap(\.options).map { Self.flagText($0).count }.max() ?? 0) + 2)
        for (index, group) in flagged.enumerated() {
            lines.append("")
            lines.append(group.title ?? (index == 0 ? "Options (environment variable in brackets):" : "Options:"))
            for option in group.options {
                lines.append(contentsOf: Self.entry(Self.flagText(option), option, width: width))
            }
        }
        let environmentOnly = options.filter { $0.flag == nil && $0.variable != nil }
        if !environmentOnly.isEmpty {
            lines.append("")
            lines.append("Environment variables without a flag:")
            let variableWidth = min(32, (environmentOnly.map { ($0.variable ?? "").count }.max() ?? 0) + 2)
            for option in environmentOnly {
                var bare = option
                bare.variable = nil
                lines.append(contentsOf: Self.entry(option.variable ?? "", bare, width: variableWidth))
            }
        }
        if !epilogue.isEmpty {
            lines.append("")
            lines.append(epilogue)
        }
        return lines.joined(separator: "\n")
    }

    static func flagText(_ option: OptionInfo) -> String {
        guard let flag = option.flag else { return "" }
        return option.placeholder.isEmpty ? "--" + flag : "--\(flag) \(option.placeholder)"
    }

    /// One option in `--help`: its name padded to `width`, then its help, variable, choices and
    /// default, wrapped at 100 columns.
    static func entry(_ name: String, _ option: OptionInfo, width: Int) -> [String] {
        var text = option.help
        if let variable = option.variable { text += " [\(variable)]" }
        let choices = option.isChoice && option.help != option.expectation ? option.expectation : nil
        switch (choices, option.defaultText) {
        case let (choices?, shown?): text += " (\(choices); default \(shown))"
        case let (choices?, nil): text += " (\(choices))"
        case let (nil, shown?): text += " (default \(shown))"
        case (nil, nil): break
        }
        let indent = String(repeating: " ", count: width + 2)
        var lines: [String] = []
        var line = "  " + name.padding(toLength: max(width, name.count + 1), withPad: " ", startingAt: 0)
        if name.count + 1 > width {
            lines.append("  " + name)
            line = indent
        }
        var lineHasWords = false
        for word in text.split(separator: " ") {
            if lineHasWords && line.count + 1 + word.count > 100 {
                lines.append(line)
                line = indent
                lineHasWords = false
            }
            line += (lineHasWords ? " " : "") + word
            lineHasWords = true
        }
        lines.append(line)
        return lines
    }
}

/// Options every command takes.
enum CommonOptions {
    static let logLevel = Option("log-level", variable: "QUIRE_LOG_LEVEL",
                                 .word(Logger.Level.allCases.map(\.name), noun: "log level", placeholder: "LEVEL"),
                                 default: "info", help: "the least severe log lines written; JSON lines on stderr unless it is a terminal")

    /// The logger the command's `--log-level` (or `QUIRE_LOG_LEVEL`) asks for.
    static func logger(_ label: String, _ invocation: Invocation, option: Option<String> = logLevel) throws(UsageError) -> Logger {
        let name = try invocation.value(option, or: "info")
        return Logger(label: label, level: Logger.Level(name: name) ?? .info)
    }
}
