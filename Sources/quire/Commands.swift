import Foundation
import QuireBroker
import QuireClient

/// The commands `main.swift` dispatches: values in one list, found by name.
enum Commands {
    /// Every command, in the order `quire --help` lists them.
    static let all: [Command] = [
        BrokerCommand.command, UpCommand.command, WorkerCommand.command, RecognizeCommand.command, JobCommands.submit, JobCommands.result,
        JobCommands.status, JobCommands.cancel, JobCommands.close, CallCommand.command, TokenCommand.command, ClientsCommand.command,
        KeysCommand.command, BenchCommand.command, BenchTokensCommand.command, BenchOCRCommand.command, BenchDocumentsCommand.command, BenchFieldsCommand.command, BenchJobsCommand.command, BenchGatewayCommand.command, BenchSoakCommand.command, BenchHostileCommand.command,
        StatsCommand.command, ExporterCommand.command, GatewayCommand.command,
    ]

    static var usage: String {
        var lines = ["quire \(quireVersion): self-hosted OCR over ZeroMQ (Majordomo)", "", "Usage: quire <command> [options]", "", "Commands:"]
        for command in all {
            guard let listing = command.listing else { continue }
            lines.append(contentsOf: Command.entry(listing.0, OptionInfo(help: listing.1), width: 23))
        }
        lines.append("")
        lines.append("Options for every command:")
        lines.append(contentsOf: Command.entry("--help, -h", OptionInfo(help: "show help for the command"), width: 23))
        lines.append(contentsOf: Command.entry(Command.flagText(CommonOptions.logLevel.info), CommonOptions.logLevel.info, width: 23))
        lines.append(contentsOf: Command.entry("--version", OptionInfo(help: "print the version"), width: 23))
        lines.append("""

            Clients and workers find the broker with --broker ENDPOINT or QUIRE_BROKER
            (default \(ClientConfiguration().broker)); the broker binds --bind ENDPOINT or QUIRE_BIND
            (default \(BrokerConfiguration().bind)). Every flag and variable: quire help settings
            (--markdown: the table in docs/configuration.md).

            Exit status: 0 success, 1 failure (the message says which), 2 usage error
            (quire result: 3 when the job has not finished yet).
            """)
        return lines.joined(separator: "\n")
    }

    /// The command `arguments` names: the longest name that its first words spell.
    static func command(for arguments: [String]) -> (Command, Int)? {
        all.map { ($0, $0.name.split(separator: " ").map(String.init)) }
            .filter { arguments.starts(with: $0.1) }
            .max { $0.1.count < $1.1.count }
            .map { ($0.0, $0.1.count) }
    }
}
