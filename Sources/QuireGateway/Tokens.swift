import Foundation
import QuireClient
import QuireSupport
import QuireWire
import Synchronization

/// Why `auth.token` gave no token.
public enum TokenFailure: Error, Sendable, Equatable {
    /// The token worker (or the broker on its behalf) answered with this error: RFC 6749 §5.2 codes
    /// from the worker, `busy`, `rate_limited`, `service_unavailable`… from the broker.
    case refused(WireError)
    /// The broker has no `auth.token` service (MMI says 404) and does not want tokens (`mmi.auth`
    /// 404, or `501` from an older broker). A broker with auth on and no token worker is `refused`
    /// with `service_unavailable`.
    case noTokenWorker
    /// The broker did not answer, or answered something that is not a token reply.
    case transport(GatewayFailure)
}

/// The gateway's way to the token worker: `auth.token` requests through the broker, like `quire
/// token`'s. The gateway holds no signing key and no client registry.
public struct TokenBackend: Sendable {
    public var request: @Sendable (TokenRequest) -> Result<TokenResponse, TokenFailure>

    public init(request: @escaping @Sendable (TokenRequest) -> Result<TokenResponse, TokenFailure>) {
        self.request = request
    }

    /// No broker: every request says there is no token worker.
    public static let none = TokenBackend { _ in .failure(.noTokenWorker) }

    /// How long the broker's "no `auth.token` here" is believed before MMI is asked again, and how long
    /// "there is one" saves the question.
    static let absentFor = Milliseconds(2_000)
    static let presentFor = Milliseconds(5_000)
    static let probeTimeout = Milliseconds(1_000)

    /// `auth.token` through `client`'s broker. An MMI question (answered by the broker at once) comes
    /// first when the last answer is old, so that a broker without a token worker is known at once
    /// instead of after the broker's request timeout.
    public static func broker(_ client: QuireClient) -> TokenBackend {
        struct Known { var absentUntil: Instant?; var presentUntil: Instant? }
        let known = Mutex(Known())
        return TokenBackend { grant in
            let now = Instant.now()
            let state = known.withLock { $0 }
            if let until = state.absentUntil, now < until { return .failure(.noTokenWorker) }
            let frame = grant.jsonFrame
            return blockingAwait { () async -> Result<TokenResponse, TokenFailure> in
                do {
                    if !(state.presentUntil.map { now < $0 } ?? false) {
                        switch try await client.availability(of: ReservedService.authToken, timeout: probeTimeout) {
                        case .absent:
                            if try await client.wantsTokens(timeout: probeTimeout) == true {
                                // Auth is on: a token worker is missing for now (the broker was just
                                // restarted, the worker is starting). A key sent on without a token would
                                // be refused as a bad key; this is the service being unavailable.
                                return .failure(.refused(WireError(
                                    .serviceUnavailable, "the broker wants tokens but has no token worker (auth.token) connected yet",
                                    service: ReservedService.authToken)))
                            }
                            known.withLock { $0 = Known(absentUntil: now + absentFor, presentUntil: nil) }
                            return .failure(.noTokenWorker)
                        case .available:
                            known.withLock { $0 = Known(absentUntil: nil, presentUntil: now + presentFor) }
                        case .unknown:
                            break
                        }
                    }
                    let reply = try await client.request(service: ReservedService.authToken, body: [frame])
                    let first = reply.first ?? []
                    if let error = WireError(jsonFrame: first) { return .failure(.refused(error)) }
                    guard let issued = try? JSONDecoder().decode(TokenResponse.self, from: Data(first)) else {
                        return .failure(.transport(GatewayFailure(.internal, "auth.token answered something that is not a token response")))
                    }
                    return .success(issued)
                } catch let error as ClientError {
                    if let remote = error.remote { return .failure(.refused(remote)) }
                    return .failure(.transport(GatewayFailure(error)))
                } catch {
                    return .failure(.transport(GatewayFailure(.internal, String(describing: error))))
                }
            }.mapError { .transport(JobBackend.failure($0)) }.flatMap { $0 }
        }
    }
}
