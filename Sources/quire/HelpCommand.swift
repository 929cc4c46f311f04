import Foundation

/// `quire help [COMMAND…]`, and `quire help settings`: every flag and variable, from their
/// declarations.
enum HelpCommand {
    static func run(_ arguments: [String]) throws -> Int32 {
        switch arguments.first {
        case nil:
            printOut(Commands.usage)
        case "settings":
            let rest = Array(arguments.dropFirst())
            guard rest.allSatisfy({ $0 == "--markdown" }) else {
                throw UsageError(command: "quire help settings", message: "unexpected argument '\(rest.first { $0 != "--markdown" } ?? "")'")
            }
            printOut(rest.isEmpty ? SettingsTable.text(Commands.all) : SettingsTable.markdown(Commands.all))
        default:
            if arguments == ["bench"] {
                printOut(benchUsage)
            } else if let (command, words) = Commands.command(for: arguments), words == arguments.count {
                printOut(command.help)
            } else {
                throw UsageError(command: "quire help", message: "unknown command '\(arguments.joined(separator: " "))'")
            }
        }
        return 0
    }

    static var benchUsage: String {
        var lines = ["Usage: quire bench broker|ocr|documents|jobs|tokens|gateway [options]", "", "Benchmarks (quire bench NAME --help for each):"]
        for command in Commands.all where command.name.hasPrefix("bench ") {
            let summary = command.listing?.1 ?? command.discussion.split(separator: "\n").first.map(String.init) ?? ""
            lines.append(contentsOf: Command.entry(command.name, OptionInfo(help: summary), width: 23))
        }
        return lines.joined(separator: "\n")
    }
}

/// The configuration table of `docs/configuration.md`: one row per environment variable, made from
/// the declarations every command's option groups hold. A test compares the page with it.
enum SettingsTable {
    struct Row {
        var variable: String
        var flag: String?
        var summary: String
        var expectation: String
        var defaultNote: String?
        /// Commands in list order, with the default each gives, and whether it takes the flag.
        var uses: [(command: String, defaultText: String, flag: Bool)] = []
    }

    static func rows(_ commands: [Command]) -> [Row] {
        var rows: [Row] = []
        for command in commands {
            for option in command.options {
                guard let variable = option.variable else { continue }
                let index: Int
                if let found = rows.firstIndex(where: { $0.variable == variable }) {
                    index = found
                } else {
                    rows.append(Row(variable: variable, flag: nil, summary: option.summary, expectation: option.expectation, defaultNote: option.defaultNote))
                    index = rows.count - 1
                }
                if rows[index].flag == nil { rows[index].flag = option.flag }
                guard !rows[index].uses.contains(where: { $0.command == command.name }) else { continue }
                rows[index].uses.append((command.name, option.defaultText ?? "none", option.flag != nil))
            }
        }
        return rows
    }

    /// The default: the one most commands have, and the others after it.
    static func defaultText(_ row: Row) -> String {
        var counts: [(String, Int)] = []
        for use in row.uses {
            if let i = counts.firstIndex(where: { $0.0 == use.defaultText }) { counts[i].1 += 1 } else { counts.append((use.defaultText, 1)) }
        }
        let common = counts.max { $0.1 < $1.1 }?.0 ?? "none"
        if counts.count > 2, let note = row.defaultNote { return note }
        let others = counts.filter { $0.0 != common }.map { value, _ in
            row.uses.filter { $0.defaultText == value }.map { "quire " + $0.command }.joined(separator: ", ") + ": " + value
        }
        return others.isEmpty ? common : common + " (" + others.joined(separator: "; ") + ")"
    }

    static func usedBy(_ row: Row, of commands: [Command]) -> String {
        if row.uses.count == commands.count { return "every command" }
        return row.uses.map { "quire " + $0.command }.joined(separator: ", ")
    }

    /// The flag, and which commands take it when not all that read the variable do.
    static func flagText(_ row: Row, code: Bool = false) -> String {
        guard let flag = row.flag else { return "" }
        let name = code ? "`--\(flag)`" : "--\(flag)"
        let takers = row.uses.filter(\.flag)
        return takers.count == row.uses.count ? name : name + " (" + takers.map { "quire " + $0.command }.joined(separator: ", ") + ")"
    }

    /// The values it takes, shortly: `1…100`, `on or off`; nothing for free text.
    static func values(_ row: Row) -> String {
        var text = row.expectation
        for prefix in ["an integer in ", "a number in "] where text.hasPrefix(prefix) { text = String(text.dropFirst(prefix.count)) }
        if text == "a value" { return "" }
        if text.hasPrefix("a value or ") { return "any, or " + text.dropFirst("a value or ".count) }
        return text
    }

    static func markdown(_ commands: [Command]) -> String {
        func cell(_ text: String, code: Bool = false) -> String {
            guard !text.isEmpty else { return "" }
            let escaped = text.replacingOccurrences(of: "|", with: "\\|")
            return code ? "`" + escaped + "`" : escaped
        }
        var lines = ["| variable | flag | default | values | used by | what it sets |", "| --- | --- | --- | --- | --- | --- |"]
        for row in rows(commands) {
            lines.append("| " + [cell(row.variable, code: true), cell(flagText(row, code: true)), cell(defaultText(row)), cell(values(row)),
                                 cell(usedBy(row, of: commands)), cell(row.summary)].joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    static func text(_ commands: [Command]) -> String {
        rows(commands).map { row in
            var lines = [row.variable + (row.flag == nil ? "" : "  " + flagText(row))]
            lines.append("    " + row.summary)
            lines.append("    default: " + defaultText(row) + (values(row).isEmpty ? "" : "; values: " + values(row)))
            lines.append("    used by: " + usedBy(row, of: commands))
            return lines.joined(separator: "\n")
        }.joined(separator: "\n\n")
    }
}
