import QuireSupport
import QuireWire

/// Messages from workers: registration, replies, goodbyes, losing one, dispatching to them.
extension BrokerState {
    // MARK: - Workers

    mutating func workerMessage(peer: [UInt8], dialect: Dialect, command: WorkerCommand, now: Instant, into actions: inout [BrokerAction]) {
        guard var worker = workers[peer] else {
            switch command {
            case .ready(let service):
                register(peer: peer, dialect: dialect, service: service, now: now, into: &actions)
            case .disconnect:
                break
            default:
                // RFC 7/18: anything but READY from an unknown worker gets DISCONNECT. This is also how a
                // worker learns that a restarted broker has forgotten it.
                actions.append(.log(.info, "message from an unregistered worker; disconnecting it", ["peer": hex(peer)]))
                send(peer, MajordomoCodec.workerDisconnect(dialect), into: &actions)
                counters.workersDisconnected += 1
            }
            return
        }
        guard dialect == worker.dialect else {
            violation(peer, reason: "worker switched Majordomo dialect", now: now, into: &actions)
            return
        }
        if case .disconnect = command {
            actions.append(.log(.info, "worker disconnected", ["peer": hex(peer), "service": worker.service]))
            // A draining worker says goodbye only once it has answered what it took: a request it still
            // holds was sent while it was leaving (scale-down) and never served, so handing it on costs
            // no attempt. Up to maxAttempts such goodbyes per request, so that a worker that takes
            // requests and leaves without answering cannot pass one around for ever.
            // (Not for durable jobs: each attempt is a new request to the broker, so a per-request cap
            // would never stop one; their attempts count, and a lost worker sends them straight back.)
            if let id = worker.request, let request = inFlight[id], case .client = request.origin, request.goodbyes < configuration.maxAttempts {
                inFlight[id]?.attempts -= 1
                inFlight[id]?.goodbyes += 1
            }
            removeWorker(peer, now: now, into: &actions, disconnect: false)
            return
        }
        // Anything but DISCONNECT counts as a heartbeat.
        worker.expiry = now + configuration.workerExpiry
        workers[peer] = worker
        switch command {
        case .ready:
            violation(peer, reason: "READY from a worker that is already registered", now: now, into: &actions)
        case .heartbeat, .disconnect:
            break
        case .reply(let kind, let address, let body):
            guard let requestID = worker.request, address == Self.address(of: requestID), let request = inFlight[requestID] else {
                violation(peer, reason: "reply for a request the worker does not hold", now: now, into: &actions)
                return
            }
            if kind == .partial {
                if case .job(let tag) = request.origin { actions.append(.jobPartial(tag: tag, body: body)) }
                guard case .client(let client, let dialect) = request.origin else { return }
                statistics.partialForwarded(service: request.service, body: body)
                if let frames = MajordomoCodec.clientReply(dialect, .partial, service: request.service, body: body) {
                    send(client, frames, into: &actions)
                }
                return
            }
            inFlight[requestID] = nil
            switch request.origin {
            case .client(let client, let dialect):
                statistics.requestCompleted(id: requestID, service: request.service, worker: peer, body: body, now: now)
                counters.repliesSent += 1
                if let frames = MajordomoCodec.clientReply(dialect, .final, service: request.service, body: body) {
                    send(client, frames, into: &actions)
                }
            case .job(let tag):
                // Jobs are counted as jobs by the job machine, not as requests.
                statistics.requestAbandoned(id: requestID)
                actions.append(.jobReply(tag: tag, body: body))
            case .jwks:
                statistics.requestAbandoned(id: requestID)
                receiveJWKS(body, now: now, into: &actions)
            }
            worker.request = nil
            worker.busyDeadline = nil
            workers[peer] = worker
            services[worker.service, default: Service()].idle.append(peer)
            dispatch(service: worker.service, now: now, into: &actions)
        }
    }

    mutating func register(peer: [UInt8], dialect: Dialect, service: String, now: Instant, into actions: inout [BrokerAction]) {
        if ServiceClass(service).isServedByBroker {
            actions.append(.log(.warning, "worker tried to serve a reserved service; disconnecting it", ["peer": hex(peer), "service": service]))
            send(peer, MajordomoCodec.workerDisconnect(dialect), into: &actions)
            counters.workersDisconnected += 1
            return
        }
        if stopping {
            send(peer, MajordomoCodec.workerDisconnect(dialect), into: &actions)
            return
        }
        workers[peer] = Worker(identity: peer, dialect: dialect, service: service, request: nil,
                               expiry: now + configuration.workerExpiry, busyDeadline: nil, lastSent: now)
        var record = services[service] ?? Service()
        record.workerCount += 1
        record.idle.append(peer)
        services[service] = record
        statistics.workerJoined(peer, service: service, now: now)
        actions.append(.log(.info, "worker ready", ["peer": hex(peer), "service": service, "dialect": dialect.rawValue]))
        dispatch(service: service, now: now, into: &actions)
        if service == ReservedService.authJWKS, let gate = auth, !gate.haveKeys, !gate.fetching {
            fetchJWKS(now: now, into: &actions)
        }
    }

    /// A worker broke the protocol: DISCONNECT it and give its request to another worker.
    mutating func violation(_ peer: [UInt8], reason: String, now: Instant, into actions: inout [BrokerAction]) {
        actions.append(.log(.warning, "worker broke the protocol; disconnecting it", ["peer": hex(peer), "reason": reason]))
        removeWorker(peer, now: now, into: &actions, disconnect: true)
    }

    /// Forgets a worker. A request it held goes back to the front of its queue, or fails with
    /// `worker_lost` when its attempts are used up.
    mutating func removeWorker(_ peer: [UInt8], now: Instant, into actions: inout [BrokerAction], disconnect: Bool) {
        guard let worker = workers.removeValue(forKey: peer) else { return }
        statistics.workerLost(peer, service: worker.service, dropped: disconnect)
        if disconnect {
            send(peer, MajordomoCodec.workerDisconnect(worker.dialect), into: &actions)
            counters.workersDisconnected += 1
        }
        var record = services[worker.service] ?? Service()
        record.workerCount -= 1
        record.idle.removeAll { $0 == peer }
        services[worker.service] = record
        if let requestID = worker.request, var request = inFlight.removeValue(forKey: requestID) {
            switch request.origin {
            case .job(let tag):
                // The job machine counts a job's attempts across restarts and decides about retries.
                statistics.requestAbandoned(id: requestID)
                actions.append(.jobFailed(tag: tag, error: WireError(.workerLost, "the worker holding the job was lost", service: request.service),
                                          reachedWorker: request.attempts > 0))
            case .jwks:
                statistics.requestAbandoned(id: requestID)
                jwksFailed("the token worker was lost while fetching the JWKS", into: &actions)
            case .client(let client, let dialect) where request.attempts >= configuration.maxAttempts:
                statistics.requestAbandoned(id: requestID)
                replyError(to: client, dialect: dialect, service: request.service,
                           WireError(.workerLost, "\(request.attempts) workers lost the request in turn",
                                     service: request.service, attempts: request.attempts), into: &actions)
            case .client:
                counters.requestsRequeued += 1
                statistics.requestRequeued(id: request.id, service: request.service, now: now)
                request.deadline = now + configuration.requestTimeout
                services[worker.service, default: Service()].queue.prepend(request)
                actions.append(.log(.info, "requeued a request its worker lost", ["service": request.service, "attempts": String(request.attempts)]))
                dispatch(service: worker.service, now: now, into: &actions)
            }
        }
    }

    /// Hands queued requests to idle workers, least recently used worker first.
    mutating func dispatch(service: String, now: Instant, into actions: inout [BrokerAction]) {
        guard var record = services[service] else { return }
        while !record.queue.isEmpty, let identity = record.idle.popFirst() {
            guard var worker = workers[identity] else { continue }
            var request = record.queue.popFirst()!
            request.attempts += 1
            worker.request = request.id
            worker.busyDeadline = worker.dialect.heartbeatsWhileBusy ? nil : now + configuration.busyWorkerTimeout
            worker.lastSent = now
            workers[identity] = worker
            send(identity, MajordomoCodec.workerRequest(worker.dialect, address: Self.address(of: request.id), body: request.body), into: &actions)
            inFlight[request.id] = request
            statistics.requestDispatched(id: request.id, service: service, now: now)
        }
        services[service] = record
    }
}
