import QuireSupport
import QuireWire

/// Time-driven work of the broker machine (heartbeats, expiries, request timeouts) and its orderly stop.
extension BrokerState {
    mutating func tick(now: Instant, into actions: inout [BrokerAction]) {
        if var gate = auth {
            let expired = gate.parked.filter { $0.until <= now }
            gate.parked.removeAll { $0.until <= now }
            gate.parkedBytes = gate.parked.reduce(0) { $0 + $1.frames.reduce(0) { $0 + $1.count } }
            if gate.haveKeys, !gate.fetching, let last = gate.lastFetch, now >= last + gate.configuration.jwksMaxAge,
               workerCount(service: ReservedService.authJWKS) > 0 {
                auth = gate
                fetchJWKS(now: now, into: &actions)
            } else {
                auth = gate
            }
            for request in expired {
                refuseParked(request, WireError(.serviceUnavailable, "the token could not be checked: no JWKS from auth.jwks in time"), into: &actions)
            }
        }
        // Dead workers first, so that their requests can still be served by others below.
        var dead: [[UInt8]] = []
        for (identity, worker) in workers {
            if let busyDeadline = worker.busyDeadline {
                if now >= busyDeadline { dead.append(identity) }
            } else if now >= worker.expiry {
                dead.append(identity)
            }
        }
        for identity in dead {
            counters.workersExpired += 1
            actions.append(.log(.warning, "worker expired", ["peer": hex(identity), "service": workers[identity]?.service ?? ""]))
            removeWorker(identity, now: now, into: &actions, disconnect: true)
        }
        // Heartbeats to every worker that has heard nothing from us for an interval, busy ones too.
        for (identity, var worker) in workers where now >= worker.lastSent + configuration.heartbeatInterval {
            worker.lastSent = now
            workers[identity] = worker
            send(identity, MajordomoCodec.workerHeartbeat(worker.dialect), into: &actions)
        }
        // Requests that waited too long for a worker.
        for name in services.keys {
            guard var record = services[name], !record.queue.isEmpty else { continue }
            var expired: [Request] = []
            record.queue.removeAll { request in
                if now >= request.deadline { expired.append(request); return true }
                return false
            }
            if expired.isEmpty { continue }
            services[name] = record
            for request in expired {
                statistics.requestAbandoned(id: request.id)
                let client: [UInt8], dialect: Dialect
                switch request.origin {
                case .job(let tag):
                    actions.append(.jobFailed(tag: tag, error: WireError(.timeout, "no worker took the job in time", service: name), reachedWorker: false))
                    continue
                case .jwks:
                    jwksFailed("no token worker (auth.jwks) answered within \(configuration.requestTimeout.value) ms", into: &actions)
                    continue
                case .client(let peer, let peerDialect):
                    (client, dialect) = (peer, peerDialect)
                }
                let error = record.workerCount == 0
                    ? WireError(.serviceUnavailable, "no worker for service '\(name)' took the request within \(configuration.requestTimeout.value) ms", service: name)
                    : WireError(.timeout, "the request waited \(configuration.requestTimeout.value) ms in the queue for '\(name)'", service: name)
                replyError(to: client, dialect: dialect, service: name, error, into: &actions)
            }
        }
    }

    mutating func shutdown(into actions: inout [BrokerAction]) {
        stopping = true
        if let parked = auth?.parked {
            auth?.parked.removeAll()
            auth?.parkedBytes = 0
            for request in parked { refuseParked(request, WireError(.shuttingDown, "the broker is shutting down"), into: &actions) }
        }
        for (name, var record) in services {
            while let request = record.queue.popFirst() {
                // Jobs stay in the store and run again after the restart.
                guard case .client(let client, let dialect) = request.origin else { continue }
                replyError(to: client, dialect: dialect, service: name,
                           WireError(.shuttingDown, "the broker is shutting down", service: name), into: &actions)
            }
            record.idle.removeAll()
            services[name] = record
        }
        for (_, request) in inFlight {
            guard case .client(let client, let dialect) = request.origin else { continue }
            replyError(to: client, dialect: dialect, service: request.service,
                       WireError(.shuttingDown, "the broker is shutting down", service: request.service), into: &actions)
        }
        inFlight.removeAll()
        for (identity, worker) in workers {
            send(identity, MajordomoCodec.workerDisconnect(worker.dialect), into: &actions)
        }
        workers.removeAll()
    }
}
