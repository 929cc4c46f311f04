import Dispatch
import Foundation
import QuireClient
import QuireSupport
import QuireWire
import Synchronization

enum CallCommand {
    static let help = """
        Usage: quire call <service> [frame…] [options]

        Sends one request with the given frames (UTF-8 text; '@FILE' reads a frame from a file) and
        prints each reply frame on its own line. A typed error reply goes to standard error as JSON
        and the exit status is 1.

        Options:
          --broker ENDPOINT     the broker [QUIRE_BROKER] (default tcp://127.0.0.1:5555)
          --timeout-ms N        wait per attempt [QUIRE_TIMEOUT_MS] (30000); given, the call also waits
                                for a worker to appear (see below)
          --retries N           resend after a timeout [QUIRE_RETRIES] (2)
          --dialect D           mdp02 (default), mdp01 or majortomo

        A token (see below) is put in the first frame as its "token" member when that frame is a JSON
        object and the service is not auth.* or mmi.*.
        """ + "\n" + ClientAuth.help + "\n\n" + Preflight.help + " mmi.* requests are sent as they are."

    static func run(_ args: [String]) throws -> Int32 {
        if args.contains("--help") || args.contains("-h") { printOut(help); return 0 }
        let arguments = try Arguments(command: "quire call", args, valued: ClientAuth.options.union(["broker", "timeout-ms", "retries", "dialect", "log-level"]))
        guard let service = arguments.positionals.first else {
            throw UsageError(command: "quire call", message: "missing the service name")
        }
        var configuration = try clientConfiguration(arguments)
        if let v = try arguments.integer("retries", range: 0...100) { configuration.retries = v }
        if let v = arguments.string("dialect") {
            guard let dialect = Dialect(rawValue: v) else {
                throw UsageError(command: "quire call", message: "unknown dialect '\(v)' (mdp02, mdp01, majortomo)")
            }
            configuration.dialect = dialect
        }
        var body: [[UInt8]] = []
        for frame in arguments.positionals.dropFirst() {
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
            guard let checked = try Preflight.run(arguments, configuration: configuration, service: service, wantsToken: carriesToken) else { return 1 }
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

/// Runs async work from synchronous `main` on the cooperative pool and waits for it on this thread
/// (the main thread is not part of the pool, so waiting here blocks no task).
func blockingAwait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let box = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await work()
            box.withLock { $0 = .success(value) }
        } catch {
            box.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    return box.withLock { $0! }
}
