import Foundation
import QuireClient
import QuireSupport
import QuireWire
import QuireWorker
import Synchronization

/// Pictures an `ocr` worker without the scene engine cannot read well, handed to the workers that can
/// (`ocr.scene`, a deployment's photo workers): a request for `engine: scene`, or an `auto` one where
/// Tesseract's reading looked like a photo read badly, goes to `ocr.scene` through the worker's own
/// broker, as it came, and that worker's reply is the answer (its `engine` step says what it chose).
/// Where no `ocr.scene` worker is registered, or none answers, `auto` keeps Tesseract's reading and
/// `scene` is an `engine_failure` that says so. Whether `ocr.scene` has workers is asked of the broker
/// (`mmi.service`) and kept for 10 s, so that a deployment without photo workers pays nothing per page.
public final class SceneHandOff: Sendable {
    let tokens: @Sendable (QuireClient) async throws -> String?
    let timeout: Milliseconds
    /// Why this worker has no scene engine, for the errors.
    let localReason: String
    /// The broker's last answer about `ocr.scene`, and until when it holds.
    private let known = Mutex<(served: Bool, until: Date)?>(nil)

    /// `localReason`: why this worker has no scene engine (``InstalledEngines/sceneStatus(_:)``); `tokens`:
    /// the token to present (the worker's own client credentials), nil with auth off.
    public init(localReason: String, timeout: Milliseconds = 60_000, tokens: @escaping @Sendable (QuireClient) async throws -> String? = { _ in nil }) {
        self.localReason = localReason
        self.timeout = timeout
        self.tokens = tokens
    }

    /// The reply of an `ocr.scene` worker to `request`, or why there is none.
    func handOn(_ request: WorkerRequest, client: QuireClient) -> Result<[[UInt8]], WireError> {
        let name = OCRServiceName.scene
        let outcome = blockingAwait { () async throws -> [[UInt8]]? in
            if try await !self.served(client) { return nil }
            var body = request.body
            if let token = try await self.tokens(client) { body[0] = try BrokerConnection.frame(body[0], adding: ["token": token], what: "the request") }
            return try await client.request(service: name, body: body, timeout: self.timeout, retries: 0)
        }
        func unavailable(_ why: String) -> WireError {
            WireError(.engineFailure, "the scene engine is not available here (\(localReason)), and " + why)
        }
        switch outcome {
        case .success(let frames?):
            if let first = frames.first, frames.count == 1, let error = WireError(jsonFrame: first) { return .failure(error) }
            return .success(frames)
        case .failure(let error as ClientError) where BrokerConnection.refusesWorker(error.remote):
            // The caller's token was fine: it is this worker that may not ask ocr.scene.
            return .failure(unavailable("this worker may not hand the picture to \(name) (\(error.remote?.message ?? "")): \(BrokerConnection.credentialsHint)"))
        case .success(nil):
            return .failure(unavailable("no \(name) worker is registered at the broker to read the picture"))
        case .failure(let error as ClientError):
            return .failure(error.remote ?? unavailable("\(name) did not answer: \(error)"))
        case .failure(let error as WireError):
            return .failure(error)
        case .failure(let error):
            return .failure(unavailable("\(name) could not be asked: \(error)"))
        }
    }

    /// Whether `ocr.scene` has workers, as the broker said within the last 10 s.
    private func served(_ client: QuireClient) async throws -> Bool {
        if let hit = known.withLock({ $0 }), hit.until > Date() { return hit.served }
        let reply = try await client.request(service: ReservedService.mmiService, body: [Array(OCRServiceName.scene.utf8)], timeout: 5_000, retries: 0)
        let served = reply.first == Array("200".utf8)
        known.withLock { $0 = (served, Date().addingTimeInterval(10)) }
        return served
    }
}
