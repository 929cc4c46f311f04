import Foundation
import QuireOCR
import QuireSupport
import QuireWire

/// `quire`: one binary, one subcommand per role. Parsing only; the roles live in their modules.
let quireVersion = "0.1.0"

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

func printOut(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
let environment = ProcessInfo.processInfo.environment
let status: Int32
do {
    switch arguments.first {
    case nil, "--help", "-h":
        printOut(Commands.usage)
        status = arguments.isEmpty ? 2 : 0
    case "help":
        status = try HelpCommand.run(Array(arguments.dropFirst()))
    case "--version", "version":
        printOut("quire \(quireVersion) (OCR engine: tesseract \(InstalledEngines.tesseractVersion)) (PDF: \(Recognizer.pdfLibrary)) (scene engine: \(InstalledEngines.sceneRuntime))")
        status = 0
    case "bench" where Commands.command(for: arguments) == nil:
        if arguments.contains("--help") || arguments.contains("-h") {
            printOut(HelpCommand.benchUsage)
            status = 0
        } else {
            status = try BenchOptions.missing(Array(arguments.dropFirst()).filter { !$0.hasPrefix("-") })
        }
    default:
        guard let (command, words) = Commands.command(for: arguments) else {
            throw UsageError(command: "quire", message: "unknown command '\(arguments[0])'")
        }
        status = try command(Array(arguments.dropFirst(words)), environment: environment)
    }
} catch let error as UsageError {
    printError(error.description)
    status = 2
} catch {
    printError("quire: \(error)")
    status = 1
}
exit(status)
