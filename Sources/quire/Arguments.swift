/// A usage error: printed with the command's usage, exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let command: String
    let message: String
    var description: String { "\(command): \(message)\nRun '\(command) --help' for usage." }
}

/// A small argument parser: `--name value`, `--name=value`, boolean `--flag`, positionals, `--`.
/// It knows the flags from the command's declared options, so a typo is an error and not silently
/// ignored.
struct Arguments {
    let command: String
    private(set) var values: [String: String] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    init(command: String, _ arguments: [String], options: [OptionInfo]) throws(UsageError) {
        self.command = command
        let valued = Set(options.filter { !$0.isSwitch }.compactMap(\.flag))
        let booleans = Set(options.filter(\.isSwitch).compactMap(\.flag))
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                if !onlyPositionals && argument.hasPrefix("-") && argument != "-" && argument.count > 1 {
                    throw UsageError(command: command, message: "unknown option '\(argument)'")
                }
                positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if booleans.contains(name) {
                guard inlineValue == nil else { throw UsageError(command: command, message: "option '--\(name)' takes no value") }
                flags.insert(name)
            } else if valued.contains(name) {
                if let inlineValue {
                    values[name] = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError(command: command, message: "option '--\(name)' needs a value") }
                    values[name] = arguments[index]
                    index += 1
                }
            } else {
                throw UsageError(command: command, message: "unknown option '--\(name)'")
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }

    func string(_ name: String) -> String? { values[name] }
}
