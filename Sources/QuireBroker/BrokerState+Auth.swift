import QuireSupport
import QuireJWT
import QuireWire

/// The broker's side of token checks: fetching the public keys (JWKS) from `auth.jwks` through its own
/// queue, as a request whose origin is ``BrokerState/Origin/jwks``, and the requests parked until they come.
extension BrokerState {
    /// Asks the token worker for its public keys, through the broker's own queue.
    mutating func fetchJWKS(now: Instant, into actions: inout [BrokerAction]) {
        guard var gate = auth, !gate.fetching else { return }
        gate.fetching = true
        gate.lastFetch = now
        auth = gate
        let request = Request(id: nextRequestID, origin: .jwks, service: ReservedService.authJWKS, body: [Array("{}".utf8)],
                              deadline: now + configuration.requestTimeout, attempts: 0)
        nextRequestID &+= 1
        services[ReservedService.authJWKS, default: Service()].queue.append(request)
        actions.append(.log(.debug, "fetching the JWKS from auth.jwks", [:]))
        dispatch(service: ReservedService.authJWKS, now: now, into: &actions)
    }

    mutating func receiveJWKS(_ body: [[UInt8]], now: Instant, into actions: inout [BrokerAction]) {
        guard let frame = body.first, let jwks = try? JWKS(jsonFrame: frame) else {
            jwksFailed("auth.jwks answered something that is not a JWKS", into: &actions)
            return
        }
        auth?.install(jwks)
        auth?.fetching = false
        actions.append(.log(.info, "JWKS installed", ["keys": String(jwks.keys.count)]))
        let parked = auth?.parked ?? []
        auth?.parked.removeAll()
        auth?.parkedBytes = 0
        for request in parked {
            receive(peer: request.peer, frames: request.frames, now: now, replay: true, into: &actions)
        }
    }

    mutating func jwksFailed(_ reason: String, into actions: inout [BrokerAction]) {
        auth?.fetching = false
        actions.append(.log(.warning, "could not fetch the JWKS", ["reason": reason]))
        let parked = auth?.parked ?? []
        auth?.parked.removeAll()
        auth?.parkedBytes = 0
        for request in parked {
            refuseParked(request, WireError(.serviceUnavailable, "the token could not be checked: \(reason)"), into: &actions)
        }
    }

    /// Answers a request that waited for the JWKS, in its own dialect.
    mutating func refuseParked(_ request: (peer: [UInt8], frames: [[UInt8]], until: Instant), _ error: WireError, into actions: inout [BrokerAction]) {
        guard case .success(.clientRequest(let dialect, let service, _)) = MajordomoCodec.decodeAtBroker(request.frames) else { return }
        var error = error
        error.service = service
        replyError(to: request.peer, dialect: dialect, service: service, error, into: &actions)
    }
}
