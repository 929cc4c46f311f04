import Foundation
import QuireBench
import QuireSupport

enum BenchTokensCommand {
    static let help = """
        Usage: quire bench tokens [options]

        Measures the token worker's costs in one process: one argon2id secret check (a client's
        first token), tokens minted per second on one thread with the secret check cached, one
        token verification (what the broker pays per request), and tokens per second through a
        broker on TCP loopback. Build with -c release before measuring.

        Options:
          --seconds N        length of each timed loop (default 2)
          --in-flight N      outstanding auth.token requests in the broker run (16)
          --workers N        auth.token worker threads in the broker run (1)
          --json             print JSON instead of the table
          --log-level LEVEL  [QUIRE_LOG_LEVEL] (warning)
        """

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let command = "quire bench tokens"
        let arguments = try Arguments(command: command, args, valued: ["seconds", "in-flight", "workers", "log-level"], booleans: ["json"])
        guard arguments.positionals.isEmpty else { throw UsageError(command: command, message: "unexpected argument '\(arguments.positionals[0])'") }
        var options = TokenBenchOptions()
        if let v = try arguments.integer("seconds", range: 1...600) { options.seconds = Double(v) }
        if let v = try arguments.integer("in-flight", range: 1...1_024) { options.inFlight = v }
        if let v = try arguments.integer("workers", range: 1...64) { options.workers = v }
        let levelName = arguments.string("log-level") ?? ProcessInfo.processInfo.environment["QUIRE_LOG_LEVEL"] ?? "warning"
        guard let level = Logger.Level(name: levelName) else { throw UsageError(command: command, message: "unknown log level '\(levelName)'") }
        let report = try TokenBenchmark(options: options, logger: Logger(label: "quire.bench", level: level)) { printError("bench: " + $0) }.run()
        printOut(arguments.flag("json") ? report.json() : report.markdown())
        return 0
    }
}
