import Foundation
import QuireBench
import QuireSupport

enum BenchTokensCommand {
    static let settings: [Setting<TokenBenchOptions>] = [
        Setting(\.seconds, flag: "seconds", SettingValue<Int>.integer(1...600).map({ Double($0) }, back: { Int($0) }), help: "length of each timed loop"),
        Setting(\.inFlight, flag: "in-flight", .integer(1...1_024), help: "outstanding auth.token requests in the broker run"),
        Setting(\.workers, flag: "workers", .integer(1...64), help: "auth.token worker threads in the broker run"),
    ]

    static let command = Command(
        "bench tokens", listing: ("bench tokens", "measure token minting and verification"),
        usage: "quire bench tokens [options]",
        discussion: """
            Measures the token worker's costs in one process: one argon2id secret check (a client's
            first token), tokens minted per second on one thread with the secret check cached, one
            token verification (what the broker pays per request), and tokens per second through a
            broker on TCP loopback. Build with -c release before measuring.
            """,
        groups: [OptionGroup(settings, defaults: TokenBenchOptions()), OptionGroup("Output:", options: [BenchOptions.json.info, BenchOptions.logLevel.info])],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        guard invocation.positionals.isEmpty else {
            throw UsageError(command: invocation.command, message: "unexpected argument '\(invocation.positionals[0])'")
        }
        let options = try invocation.configured(TokenBenchOptions(), settings)
        let report = try TokenBenchmark(options: options, logger: try BenchOptions.logger(invocation)) { printError("bench: " + $0) }.run()
        printOut(try invocation.value(BenchOptions.json, or: false) ? report.json() : report.markdown())
        return 0
    }
}
