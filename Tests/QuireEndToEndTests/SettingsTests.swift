import Foundation
import Testing

/// Settings are declared once (flag, variable, default, range, help); the parser, the environment
/// fallback, `--help` and the table in docs/configuration.md all come from the declarations.
@Suite("Settings declared once", .serialized)
struct SettingsTests {
    static let docsPage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/configuration.md")

    @Test("docs/configuration.md's table is the one the declarations make (scripts/configuration-table rewrites it)")
    func docsTable() throws {
        let r = try runQuire(["help", "settings", "--markdown"])
        #expect(r.status == 0, "stderr: \(r.err)")
        let page = try String(contentsOf: Self.docsPage, encoding: .utf8)
        let begin = try #require(page.range(of: "<!-- settings table:"), "docs/configuration.md has no settings table marker")
        let tableStart = try #require(page[begin.upperBound...].firstIndex(of: "\n"))
        let end = try #require(page.range(of: "<!-- end of settings table -->"))
        let documented = String(page[page.index(after: tableStart)..<end.lowerBound]).trimmingCharacters(in: .whitespacesAndNewlines)
        let declared = r.out.trimmingCharacters(in: .whitespacesAndNewlines)
        let documentedRows = documented.split(separator: "\n").map(String.init)
        let declaredRows = declared.split(separator: "\n").map(String.init)
        let missing = declaredRows.filter { !documentedRows.contains($0) }
        let stale = documentedRows.filter { !declaredRows.contains($0) }
        #expect(documented == declared, "run scripts/configuration-table; rows to add: \(missing); rows to remove: \(stale)")
    }

    @Test("a flag and its variable take the same values", arguments: [
        (["broker"], "heartbeat-interval-ms", "QUIRE_HEARTBEAT_INTERVAL_MS", "3600001", "1…3600000"),
        (["broker"], "stats-interval-ms", "QUIRE_STATS_INTERVAL_MS", "5", "10…3600000"),
        (["broker", "--data", "/nonexistent/quire-settings-test"], "job-lease-ms", "QUIRE_JOB_LEASE_MS", "86400001", "1…86400000"),
        (["worker", "echo"], "heartbeat-liveness", "QUIRE_HEARTBEAT_LIVENESS", "0", "1…100"),
        (["worker", "echo"], "threads", "QUIRE_THREADS", "257", "1…256"),
    ])
    func sameRange(command: [String], flag: String, variable: String, value: String, range: String) throws {
        let byFlag = try runQuire(command + ["--\(flag)", value])
        #expect(byFlag.status == 2)
        #expect(byFlag.err.contains("'--\(flag) \(value)': expected an integer in \(range)"), "stderr: \(byFlag.err)")
        let byVariable = try runQuire(command, environment: [variable: value])
        #expect(byVariable.status == 2)
        #expect(byVariable.err.contains("\(variable): '\(value)' is not an integer in \(range)"), "stderr: \(byVariable.err)")
    }

    @Test("every command answers --help with its usage and the variables it reads")
    func everyCommandHelp() throws {
        let commands: [([String], String)] = [
            (["broker"], "QUIRE_HEARTBEAT_INTERVAL_MS"), (["up"], "QUIRE_THREADS"), (["worker"], "QUIRE_OCR_DESKEW"),
            (["recognize"], "QUIRE_TIMEOUT_MS"), (["submit"], "--priority"), (["result"], "--wait"), (["status"], "QUIRE_BROKER"),
            (["cancel"], "QUIRE_BROKER"), (["close"], "QUIRE_BROKER"), (["call"], "QUIRE_RETRIES"), (["token"], "--job"),
            (["clients"], "--scope"), (["keys"], "--activate-in-s"), (["bench", "broker"], "--in-flight"), (["bench", "ocr"], "--no-cli"),
            (["bench", "jobs"], "--submits"), (["bench", "tokens"], "--seconds"), (["stats"], "QUIRE_STATS"), (["exporter"], "QUIRE_EXPORTER_LISTEN"),
        ]
        for (command, mention) in commands {
            let r = try runQuire(command + ["--help"])
            #expect(r.status == 0, "\(command): \(r.err)")
            #expect(r.out.hasPrefix("Usage: quire "), "\(command): \(r.out.prefix(80))")
            #expect(r.out.split(separator: "\n").first?.contains("quire \(command.joined(separator: " "))") == true, "\(command): \(r.out.prefix(80))")
            #expect(r.out.contains(mention), "\(command) --help does not mention \(mention)")
            #expect(r.out.contains("--log-level LEVEL"), "\(command) --help does not show --log-level")
        }
    }
}
