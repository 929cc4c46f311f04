/// `echo`: answers every request with its own body. For tests, interop checks and the broker benchmark.
public enum EchoService {
    public static func make(name: String = "echo", requiresJSONFrame: Bool = false) -> WorkerService {
        WorkerService(name: name, requiresJSONFrame: requiresJSONFrame, runsInline: true) { EchoHandler() }
    }

    final class EchoHandler: RequestHandler {
        func handle(_ request: WorkerRequest) throws -> [[UInt8]] { request.body }
    }
}
