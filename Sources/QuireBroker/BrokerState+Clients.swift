import QuireSupport
import QuireWire

/// Messages from clients: decoding, the limits, MMI, the token check, queueing.
extension BrokerState {
    // MARK: - Receiving

    /// `replay`: a request that waited for the JWKS, handled again (counted once, never parked twice).
    mutating func receive(peer: [UInt8], frames: [[UInt8]], now: Instant, replay: Bool, into actions: inout [BrokerAction]) {
        var total = 0
        for frame in frames { total += frame.count }
        if !replay { counters.bytesIn += total }

        let decoded = MajordomoCodec.decodeAtBroker(frames)
        switch decoded {
        case .failure(let failure):
            counters.malformedMessages += 1
            rejectMalformed(peer: peer, failure: failure, now: now, into: &actions)

        case .success(.clientRequest(let dialect, let service, var body)):
            if !replay { counters.requestsReceived += 1 }
            if stopping {
                replyError(to: peer, dialect: dialect, service: service,
                           WireError(.shuttingDown, "the broker is shutting down", service: service), into: &actions)
                return
            }
            if frames.count > configuration.maxFrames {
                replyError(to: peer, dialect: dialect, service: service,
                           WireError(.tooLarge, "message has \(frames.count) frames; the limit is \(configuration.maxFrames)",
                                     service: service, limit: configuration.maxFrames), into: &actions)
                return
            }
            if total > configuration.maxMessageBytes {
                replyError(to: peer, dialect: dialect, service: service,
                           WireError(.tooLarge, "message has \(total) bytes; the limit is \(configuration.maxMessageBytes)",
                                     service: service, limit: configuration.maxMessageBytes), into: &actions)
                return
            }
            let kind = ServiceClass(service)
            if kind == .management {
                answerMMI(peer: peer, dialect: dialect, service: service, body: body, into: &actions)
                return
            }
            var owner = ""
            if var gate = auth, kind.needsToken {
                let decision = gate.check(service: service, body: body, now: now, wallSeconds: wallClockSeconds, mayPark: !replay)
                auth = gate
                switch decision {
                case .allow(let checked, let subject):
                    body = checked
                    owner = subject
                case .deny(let error):
                    replyError(to: peer, dialect: dialect, service: service, error, into: &actions)
                    return
                case .park:
                    // Bounded: tokens naming unknown keys cannot make the broker hold unlimited bytes.
                    guard gate.parked.count < AuthGate.maxParked, gate.parkedBytes + total <= AuthGate.maxParkedBytes else {
                        replyError(to: peer, dialect: dialect, service: service,
                                   WireError(.serviceUnavailable, "too many requests are waiting for the token keys; try again shortly", service: service),
                                   into: &actions)
                        return
                    }
                    auth?.parked.append((peer, frames, now + gate.configuration.jwksWait))
                    auth?.parkedBytes += total
                    fetchJWKS(now: now, into: &actions)
                    return
                }
            }
            if kind == .jobs {
                actions.append(.titanic(peer: peer, dialect: dialect, service: service, body: body, owner: owner))
                return
            }
            enqueue(client: peer, dialect: dialect, service: service, body: body, now: now, into: &actions)

        case .success(.worker(let dialect, let command)):
            statistics.workerMessage(peer, command: command, frames: frames, now: now)
            workerMessage(peer: peer, dialect: dialect, command: command, now: now, into: &actions)
        }
    }

    mutating func rejectMalformed(peer: [UInt8], failure: DecodeFailure, now: Instant, into actions: inout [BrokerAction]) {
        actions.append(.log(.debug, "malformed message", ["peer": hex(peer), "reason": failure.error.message]))
        if workers[peer] != nil {
            // A registered worker that breaks the protocol is disconnected, whatever it sent.
            violation(peer, reason: failure.error.message, now: now, into: &actions)
            return
        }
        switch failure.role {
        case .worker:
            send(peer, MajordomoCodec.workerDisconnect(failure.dialect), into: &actions)
            counters.workersDisconnected += 1
        case .client:
            replyError(to: peer, dialect: failure.dialect, service: failure.service ?? "", failure.error, into: &actions)
        case .unknown:
            count(failure.error.code)
            send(peer, MajordomoCodec.unknownPeerReply(leadingEmptyFrame: failure.leadingEmptyFrame,
                                                        service: failure.service, body: [failure.error.jsonFrame]), into: &actions)
        }
    }

    // MARK: - Clients

    mutating func enqueue(client: [UInt8], dialect: Dialect, service: String, body: [[UInt8]], now: Instant, into actions: inout [BrokerAction]) {
        var record = services[service] ?? Service()
        if record.queue.count >= configuration.maxQueuedRequests {
            replyError(to: client, dialect: dialect, service: service,
                       WireError(.busy, "the queue for '\(service)' is full (\(configuration.maxQueuedRequests) requests)",
                                 service: service, limit: configuration.maxQueuedRequests), into: &actions)
            return
        }
        let request = Request(id: nextRequestID, origin: .client(peer: client, dialect: dialect), service: service, body: body,
                              deadline: now + configuration.requestTimeout, attempts: 0)
        nextRequestID &+= 1
        record.queue.append(request)
        services[service] = record
        statistics.requestQueued(id: request.id, service: service, body: body, now: now)
        dispatch(service: service, now: now, into: &actions)
    }

    mutating func answerMMI(peer: [UInt8], dialect: Dialect, service: String, body: [[UInt8]], into actions: inout [BrokerAction]) {
        let code: String
        switch service {
        case ReservedService.mmiService:
            // RFC 8: the body's first frame names the service; 200 when it has workers, 404 when not.
            // `titanic.*` is the broker's own: 200 while it keeps durable jobs (not without a store, nor
            // while it recovers a lost one), so that clients naming several brokers find the one serving.
            if let first = body.first, case .success(let name) = MajordomoCodec.validateServiceName(first) {
                if ServiceClass(name) == .jobs {
                    code = servesJobs ? "200" : "404"
                } else {
                    code = workerCount(service: name) > 0 ? "200" : "404"
                }
            } else {
                code = "404"
            }
        case ReservedService.mmiAuth:
            code = auth == nil ? "404" : "200"
        default:
            code = "501"
        }
        counters.repliesSent += 1
        if let frames = MajordomoCodec.clientReply(dialect, .final, service: service, body: [Array(code.utf8)]) {
            send(peer, frames, into: &actions)
        }
    }
}
