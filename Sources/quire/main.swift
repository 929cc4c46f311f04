import Foundation
import QuireOCR
import QuireSupport
import QuireWire

/// `quire`: one binary, one subcommand per role. Parsing only; the roles live in their modules.
let quireVersion = "0.1.0"

let usage = """
    quire \(quireVersion): self-hosted OCR over ZeroMQ (Majordomo)

    Usage: quire <command> [options]

    Commands:
      broker                 run the Majordomo broker (clients and workers connect to it)
      up                     run the whole stack on this machine: broker + OCR workers
      worker <kind>          run a worker; kinds: ocr, echo, token
      recognize FILE…        OCR images through the broker and print the results
      submit FILE…           store durable OCR jobs with the broker; prints one job id per file
      result ID              print a durable job's result (--wait to wait for it)
      status ID              a durable job's state; cancel ID, close ID
      call <service> [frame…]
                             send one request and print the reply frames
      token                  print an access token (or, with --job, a reader token for one job)
      clients add|list|remove
                             manage the clients that may get tokens (secrets stored as argon2id hashes)
      keys rotate|list|curve rotate token signing keys; make CURVE key pairs
      bench broker           measure the broker: requests/s and round-trip latency
      bench tokens           measure token minting and verification
      bench ocr DIR          measure OCR end to end vs the tesseract CLI and the raw engine
      stats                  show the broker's stats live (queues, workers, throughput, latency)
      exporter               serve the broker's stats as Prometheus metrics over HTTP

    Options for every command:
      --help, -h             show help for the command
      --log-level LEVEL      trace, debug, info, notice, warning, error (QUIRE_LOG_LEVEL; default info)
      --version              print the version

    Clients and workers find the broker with --broker ENDPOINT or QUIRE_BROKER
    (default tcp://127.0.0.1:5555); the broker binds --bind ENDPOINT or QUIRE_BIND (same default port).

    Exit status: 0 success, 1 failure (the message says which), 2 usage error
    (quire result: 3 when the job has not finished yet).
    """

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

func printOut(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

func makeLogger(_ label: String, _ arguments: Arguments) throws(UsageError) -> Logger {
    let environment = ProcessInfo.processInfo.environment
    let name = arguments.string("log-level") ?? environment["QUIRE_LOG_LEVEL"] ?? "info"
    guard let level = Logger.Level(name: name) else {
        throw UsageError(command: arguments.command, message: "unknown log level '\(name)'")
    }
    return Logger(label: label, level: level)
}

var arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
do {
    switch arguments.first {
    case nil, "--help", "-h", "help":
        printOut(usage)
        status = arguments.isEmpty ? 2 : 0
    case "--version", "version":
        printOut("quire \(quireVersion) (OCR engine: tesseract \(Recognizer.engineVersion))")
        status = 0
    case "broker":
        status = try BrokerCommand.run(Array(arguments.dropFirst()))
    case "worker":
        status = try WorkerCommand.run(Array(arguments.dropFirst()))
    case "up":
        status = try UpCommand.run(Array(arguments.dropFirst()))
    case "recognize":
        status = try RecognizeCommand.run(Array(arguments.dropFirst()))
    case "call":
        status = try CallCommand.run(Array(arguments.dropFirst()))
    case "submit":
        status = try JobCommands.submit(Array(arguments.dropFirst()))
    case "result":
        status = try JobCommands.result(Array(arguments.dropFirst()))
    case "status":
        status = try JobCommands.status(Array(arguments.dropFirst()), service: Titanic.status)
    case "cancel":
        status = try JobCommands.status(Array(arguments.dropFirst()), service: Titanic.cancel)
    case "close":
        status = try JobCommands.status(Array(arguments.dropFirst()), service: Titanic.close)
    case "token":
        status = try TokenCommand.run(Array(arguments.dropFirst()))
    case "clients":
        status = try ClientsCommand.run(Array(arguments.dropFirst()))
    case "keys":
        status = try KeysCommand.run(Array(arguments.dropFirst()))
    case "bench":
        status = try BenchCommand.run(Array(arguments.dropFirst()))
    case "stats":
        status = try StatsCommand.run(Array(arguments.dropFirst()))
    case "exporter":
        status = try ExporterCommand.run(Array(arguments.dropFirst()))
    case let other?:
        throw UsageError(command: "quire", message: "unknown command '\(other)'")
    }
} catch let error as UsageError {
    printError(error.description)
    status = 2
} catch {
    printError("quire: \(error)")
    status = 1
}
exit(status)
