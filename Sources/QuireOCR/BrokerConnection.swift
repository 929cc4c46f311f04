import Foundation
import QuireClient
import QuireSupport
import QuireWire
import QuireWorker

/// A handler's own client of the broker its worker serves, made on first use and closed with the
/// handler: `ocr.document` submits its pages through it, an `ocr` worker hands photos on through it.
final class BrokerConnection {
    private let timeout: Milliseconds
    private let retries: Int
    private let maxInFlight: Int
    private var client: QuireClient?

    init(timeout: Milliseconds, retries: Int, maxInFlight: Int) {
        self.timeout = timeout
        self.retries = retries
        self.maxInFlight = maxInFlight
    }

    deinit {
        if let client { _ = blockingAwait { await client.close() } }
    }

    /// The client, to `request`'s broker with its CURVE settings.
    func client(_ request: WorkerRequest) throws(WireError) -> QuireClient {
        if let client { return client }
        do {
            let made = try QuireClient(configuration: ClientConfiguration(broker: request.broker, timeout: timeout, retries: retries,
                                                                          maxInFlight: maxInFlight, curve: request.curve))
            client = made
            return made
        } catch {
            throw WireError(.internal, "cannot open a connection to the broker \(request.broker): \(error)")
        }
    }
}

extension BrokerConnection {
    /// What the broker answers when the worker itself may not send a request: it needs client
    /// credentials of its own (`credentialsHint`), or its client a scope.
    static func refusesWorker(_ error: WireError?) -> Bool {
        guard let code = error?.code else { return false }
        return [.unauthenticated, .forbidden, .tokenExpired].contains(code)
    }

    static let credentialsHint = "give it client credentials for the ocr scope (--credentials FILE, or QUIRE_CLIENT_ID and QUIRE_CLIENT_SECRET)"

    /// A request's JSON frame with `members` set (a token, job options), for a request of the
    /// handler's own; `what` names it in the error should it not be written.
    static func frame(_ frame: [UInt8], adding members: [String: Any], what: String) throws(WireError) -> [UInt8] {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(frame))) as? [String: Any] else {
            throw WireError(.invalidJSON, "the request frame is not a JSON object")
        }
        object.merge(members) { _, new in new }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            throw WireError(.internal, "\(what) could not be written")
        }
        return Array(data)
    }
}
