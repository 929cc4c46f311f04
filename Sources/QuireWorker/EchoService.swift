import Foundation
import QuireSupport

/// `echo`: answers every request with its own body. For tests, interop checks and the broker benchmark.
public enum EchoService {
    /// - Parameter delay: hold each request this long before answering (tests of workers that die or
    ///   drain mid-request). Without a delay the handler runs inline on the I/O thread.
    public static func make(name: String = "echo", requiresJSONFrame: Bool = false, delay: Milliseconds? = nil) -> WorkerService {
        WorkerService(name: name, requiresJSONFrame: requiresJSONFrame, runsInline: delay == nil) { EchoHandler(delay: delay) }
    }

    final class EchoHandler: RequestHandler {
        let delay: Milliseconds?
        init(delay: Milliseconds?) { self.delay = delay }

        func handle(_ request: WorkerRequest) throws -> [[UInt8]] {
            if let delay {
                request.sendPartial([Array("working".utf8)])
                Thread.sleep(forTimeInterval: Double(delay.value) / 1_000)
            }
            return request.body
        }
    }
}
