import Dispatch
import Foundation
import QuireClient
import QuireSupport
import QuireWire
import Synchronization

enum CallCommand {
    static let command = Command(
        "call", listing: ("call <service> [frame…]", "send one request and print the reply frames"),
        usage: "quire call <service> [frame…] [options]",
        discussion: """
            Sends one request with the given frames (UTF-8 text; '@FILE' reads a frame from a file) and
            prints each reply frame on its own line. A typed error reply goes to standard error as JSON
            and the exit status is 1. Given --timeout-ms, the call also waits for a worker to appear (see
            below).

            A token (see below) is put in the first frame as its "token" member when that frame is a JSON
            object and the service is not auth.* or mmi.*.
            """,
        groups: [ClientOptions.group(hiding: []), ClientAuth.group],
        epilogue: Preflight.help + " mmi.* requests are sent as they are.",
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        guard let service = invocation.positionals.first else {
            throw UsageError(command: invocation.command, message: "missing the service name")
        }
        var configuration = try ClientOptions.configuration(invocation)
        var body: [[UInt8]] = []
        for frame in invocation.positionals.dropFirst() {
            if frame.hasPrefix("@") {
                let path = String(frame.dropFirst())
                guard let data = FileManager.default.contents(atPath: path) else {
                    printError("quire call: cannot read '\(path)'")
                    return 1
                }
                body.append(Array(data))
            } else {
                body.append(Array(frame.utf8))
            }
        }
        // mmi.* is itself the question the preflight would ask: sent as is.
        var preflight: Preflight?
        if !Preflight.isMMI(service) {
            let carriesToken = ClientAuth.isProtected(service) && body.first?.first == UInt8(ascii: "{")
            guard let checked = try Preflight.run(invocation, configuration: &configuration, service: service, wantsToken: carriesToken) else { return 1 }
            if let token = checked.token, let first = body.first { body[0] = ClientAuth.insert(token, into: first) }
            preflight = checked
        }
        let request = body
        let settings = configuration
        let result = blockingAwait {
            try await withClient(configuration: settings) { client in
                try await client.request(service: service, body: request) { partial in
                    for frame in partial { printOut("partial: " + String(decoding: frame, as: UTF8.self)) }
                }
            }
        }
        switch result {
        case .success(let frames):
            for frame in frames { printOut(String(decoding: frame, as: UTF8.self)) }
            return 0
        case .failure(let error as ClientError):
            if let remote = (preflight?.explain(error) ?? error).remote {
                printError(String(decoding: remote.jsonFrame, as: UTF8.self))
            } else {
                printError("quire call: \(error)")
            }
            return 1
        case .failure(let error):
            printError("quire call: \(error)")
            return 1
        }
    }
}
