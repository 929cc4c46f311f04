/// The Majordomo dialects Quire speaks. The broker learns each peer's dialect from its first message and
/// answers it in the same one.
public enum Dialect: String, Sendable, CaseIterable, Codable {
    /// MDP/0.2, ZeroMQ RFC 18: the canonical dialect. DEALER sockets, no leading empty frame, partial
    /// and final replies, heartbeats both ways also while a worker is busy.
    case mdp02
    /// MDP/0.1, ZeroMQ RFC 7: the zguide's clients and workers. Leading empty frame, one reply per request.
    case mdp01
    /// The PyPI package `majortomo` 0.2.0: MDP/0.2 headers with a leading empty frame; the client sends
    /// REQUEST as `0x02` and receives `0x03` partial / `0x04` final without a service frame.
    case majortomo

    /// Whether messages in this dialect start with an empty delimiter frame.
    public var leadingEmptyFrame: Bool { self != .mdp02 }

    /// Whether the dialect expects heartbeats from a worker while it is busy with a request. MDP/0.1
    /// and majortomo workers are single-threaded and stay silent while they work.
    public var heartbeatsWhileBusy: Bool { self == .mdp02 }
}

/// Protocol constants.
public enum MDP {
    public static let clientHeader02: [UInt8] = Array("MDPC02".utf8)
    public static let workerHeader02: [UInt8] = Array("MDPW02".utf8)
    public static let clientHeader01: [UInt8] = Array("MDPC01".utf8)
    public static let workerHeader01: [UInt8] = Array("MDPW01".utf8)

    /// The longest service name accepted (bytes of UTF-8).
    public static let maxServiceNameBytes = 255

    static func clientHeader(_ d: Dialect) -> [UInt8] { d == .mdp01 ? clientHeader01 : clientHeader02 }
    static func workerHeader(_ d: Dialect) -> [UInt8] { d == .mdp01 ? workerHeader01 : workerHeader02 }
}

/// What a reply part is.
public enum ReplyKind: Sendable, Equatable {
    case partial, final
}

/// A worker command as the broker receives it.
public enum WorkerCommand: Sendable, Equatable {
    case ready(service: String)
    /// A PARTIAL (`final == false`) or FINAL reply for the request whose address frame was `address`.
    case reply(ReplyKind, address: [UInt8], body: [[UInt8]])
    case heartbeat
    case disconnect
}

/// A message the broker received on its ROUTER, after the peer identity frame.
public enum BrokerInbound: Sendable, Equatable {
    case clientRequest(Dialect, service: String, body: [[UInt8]])
    case worker(Dialect, WorkerCommand)
}

/// Which side sent a message the broker could not decode, so that the broker can answer it.
public enum PeerRole: Sendable, Equatable {
    case client, worker, unknown
}

/// Why a message could not be decoded, and how to answer the peer that sent it.
public struct DecodeFailure: Error, Sendable, Equatable {
    public var role: PeerRole
    /// The dialect to answer in: the one recognised, or MDP/0.2 when none was.
    public var dialect: Dialect
    /// For unrecognised headers: whether the message began with an empty frame (echoed in the answer).
    public var leadingEmptyFrame: Bool
    /// The service named in the message, when one could be read.
    public var service: String?
    public var error: WireError
}

/// Majordomo frame codecs for every dialect, for both ends of every connection. No sockets, no C: a
/// message is an array of frames, and the ROUTER identity frame is the caller's business.
public enum MajordomoCodec {
    // MARK: Broker side

    /// Decodes a message the broker received, `frames` excluding the ROUTER identity frame.
    public static func decodeAtBroker(_ frames: [[UInt8]]) -> Result<BrokerInbound, DecodeFailure> {
        var index = 0
        let leadingEmpty = !frames.isEmpty && frames[0].isEmpty
        if leadingEmpty { index = 1 }
        func fail(_ role: PeerRole, _ dialect: Dialect, _ message: String, service: String? = nil, code: WireError.Code = .badRequest) -> Result<BrokerInbound, DecodeFailure> {
            .failure(DecodeFailure(role: role, dialect: dialect, leadingEmptyFrame: leadingEmpty, service: service,
                                   error: WireError(code, message, service: service)))
        }
        guard index < frames.count else {
            return fail(.unknown, .mdp02, "empty message: expected a Majordomo header frame")
        }
        let header = frames[index]
        index += 1
        switch header {
        case MDP.clientHeader02:
            let dialect: Dialect = leadingEmpty ? .majortomo : .mdp02
            let expectedCommand: UInt8 = leadingEmpty ? 0x02 : 0x01
            guard index < frames.count else { return fail(.client, dialect, "REQUEST is missing its command frame") }
            let command = frames[index]
            index += 1
            guard command.count == 1, command[0] == expectedCommand else {
                return fail(.client, dialect, "unknown client command \(hex(command)); expected REQUEST \(hex([expectedCommand]))")
            }
            guard index < frames.count else { return fail(.client, dialect, "REQUEST is missing its service frame") }
            let serviceFrame = frames[index]
            index += 1
            let service: String
            switch validateServiceName(serviceFrame) {
            case .success(let name): service = name
            case .failure(let error): return fail(.client, dialect, error.message)
            }
            return .success(.clientRequest(dialect, service: service, body: Array(frames[index...])))

        case MDP.clientHeader01:
            guard leadingEmpty else {
                return fail(.client, .mdp01, "MDP/0.1 messages start with an empty frame")
            }
            guard index < frames.count else { return fail(.client, .mdp01, "REQUEST is missing its service frame") }
            let serviceFrame = frames[index]
            index += 1
            switch validateServiceName(serviceFrame) {
            case .success(let service): return .success(.clientRequest(.mdp01, service: service, body: Array(frames[index...])))
            case .failure(let error): return fail(.client, .mdp01, error.message)
            }

        case MDP.workerHeader02, MDP.workerHeader01:
            let dialect: Dialect = header == MDP.workerHeader01 ? .mdp01 : (leadingEmpty ? .majortomo : .mdp02)
            if dialect == .mdp01 && !leadingEmpty {
                return fail(.worker, .mdp01, "MDP/0.1 messages start with an empty frame")
            }
            guard index < frames.count, frames[index].count == 1 else {
                return fail(.worker, dialect, "worker message without a one-byte command frame")
            }
            let command = frames[index][0]
            index += 1
            let rest = Array(frames[index...])
            switch decodeWorkerCommand(dialect, command, rest) {
            case .success(let c): return .success(.worker(dialect, c))
            case .failure(let error): return fail(.worker, dialect, error.message)
            }

        default:
            return fail(.unknown, .mdp02, "unknown protocol header \(printable(header)); expected MDPC02, MDPC01, MDPW02 or MDPW01")
        }
    }

    private static func decodeWorkerCommand(_ dialect: Dialect, _ command: UInt8, _ rest: [[UInt8]]) -> Result<WorkerCommand, WireError> {
        func replyCommand(_ kind: ReplyKind) -> Result<WorkerCommand, WireError> {
            guard rest.count >= 2 else {
                return .failure(WireError(.badRequest, "reply needs a client address frame and an empty frame"))
            }
            guard rest[1].isEmpty else {
                return .failure(WireError(.badRequest, "the client address must be followed by an empty frame"))
            }
            return .success(.reply(kind, address: rest[0], body: Array(rest[2...])))
        }
        if dialect == .mdp01 {
            switch command {
            case 0x01:
                guard rest.count == 1 else { return .failure(WireError(.badRequest, "READY takes exactly one service frame")) }
                return validateServiceName(rest[0]).map { .ready(service: $0) }
            case 0x03: return replyCommand(.final)
            case 0x04: return .success(.heartbeat)
            case 0x05: return .success(.disconnect)
            default: return .failure(WireError(.badRequest, "unknown MDP/0.1 worker command \(hex([command]))"))
            }
        }
        switch command {
        case 0x01:
            guard rest.count == 1 else { return .failure(WireError(.badRequest, "READY takes exactly one service frame")) }
            return validateServiceName(rest[0]).map { .ready(service: $0) }
        case 0x03: return replyCommand(.partial)
        case 0x04: return replyCommand(.final)
        case 0x05: return .success(.heartbeat)
        case 0x06: return .success(.disconnect)
        default: return .failure(WireError(.badRequest, "unknown worker command \(hex([command]))"))
        }
    }

    /// A reply part for a client, in the client's dialect. MDP/0.1 has no partial replies: the broker
    /// does not forward partials to MDP/0.1 clients (`nil`).
    public static func clientReply(_ dialect: Dialect, _ kind: ReplyKind, service: String, body: [[UInt8]]) -> [[UInt8]]? {
        switch dialect {
        case .mdp02:
            return [MDP.clientHeader02, [kind == .partial ? 0x02 : 0x03], Array(service.utf8)] + body
        case .mdp01:
            guard kind == .final else { return nil }
            return [[], MDP.clientHeader01, Array(service.utf8)] + body
        case .majortomo:
            return [[], MDP.clientHeader02, [kind == .partial ? 0x03 : 0x04]] + body
        }
    }

    /// The answer to a message whose header could not be recognised: MDP/0.2's FINAL shape, behind an
    /// empty frame if the message began with one.
    public static func unknownPeerReply(leadingEmptyFrame: Bool, service: String?, body: [[UInt8]]) -> [[UInt8]] {
        let reply = [MDP.clientHeader02, [0x03], Array((service ?? "").utf8)] + body
        return leadingEmptyFrame ? [[]] + reply : reply
    }

    /// REQUEST from the broker to a worker. `address` is opaque to the worker, which echoes it back.
    public static func workerRequest(_ dialect: Dialect, address: [UInt8], body: [[UInt8]]) -> [[UInt8]] {
        var frames: [[UInt8]] = dialect.leadingEmptyFrame ? [[]] : []
        frames.append(MDP.workerHeader(dialect))
        frames.append([0x02])
        frames.append(address)
        frames.append([])
        frames.append(contentsOf: body)
        return frames
    }

    public static func workerHeartbeat(_ dialect: Dialect) -> [[UInt8]] {
        (dialect.leadingEmptyFrame ? [[]] : []) + [MDP.workerHeader(dialect), [dialect == .mdp01 ? 0x04 : 0x05]]
    }

    public static func workerDisconnect(_ dialect: Dialect) -> [[UInt8]] {
        (dialect.leadingEmptyFrame ? [[]] : []) + [MDP.workerHeader(dialect), [dialect == .mdp01 ? 0x05 : 0x06]]
    }

    // MARK: Client side

    /// A client's REQUEST in `dialect`.
    public static func clientRequest(_ dialect: Dialect, service: String, body: [[UInt8]]) -> [[UInt8]] {
        switch dialect {
        case .mdp02: return [MDP.clientHeader02, [0x01], Array(service.utf8)] + body
        case .mdp01: return [[], MDP.clientHeader01, Array(service.utf8)] + body
        case .majortomo: return [[], MDP.clientHeader02, [0x02], Array(service.utf8)] + body
        }
    }

    /// Decodes a reply part a client received from the broker.
    public static func decodeClientReply(_ dialect: Dialect, _ frames: [[UInt8]]) -> Result<(ReplyKind, body: [[UInt8]]), WireError> {
        var index = 0
        if dialect.leadingEmptyFrame {
            guard let first = frames.first, first.isEmpty else { return .failure(WireError(.badRequest, "reply without the leading empty frame")) }
            index = 1
        }
        guard index < frames.count, frames[index] == MDP.clientHeader(dialect) else {
            return .failure(WireError(.badRequest, "reply with an unexpected protocol header"))
        }
        index += 1
        switch dialect {
        case .mdp01:
            guard index < frames.count else { return .failure(WireError(.badRequest, "reply without a service frame")) }
            return .success((.final, Array(frames[(index + 1)...])))
        case .mdp02:
            guard index + 1 < frames.count, frames[index].count == 1 else { return .failure(WireError(.badRequest, "reply too short")) }
            let kind: ReplyKind
            switch frames[index][0] {
            case 0x02: kind = .partial
            case 0x03: kind = .final
            default: return .failure(WireError(.badRequest, "unknown reply command \(hex(frames[index]))"))
            }
            return .success((kind, Array(frames[(index + 2)...])))
        case .majortomo:
            guard index < frames.count, frames[index].count == 1 else { return .failure(WireError(.badRequest, "reply too short")) }
            let kind: ReplyKind
            switch frames[index][0] {
            case 0x03: kind = .partial
            case 0x04: kind = .final
            default: return .failure(WireError(.badRequest, "unknown reply command \(hex(frames[index]))"))
            }
            return .success((kind, Array(frames[(index + 1)...])))
        }
    }

    // MARK: Worker side

    public static func workerReady(_ dialect: Dialect, service: String) -> [[UInt8]] {
        (dialect.leadingEmptyFrame ? [[]] : []) + [MDP.workerHeader(dialect), [0x01], Array(service.utf8)]
    }

    /// A worker's reply part. MDP/0.1 has only REPLY (final); partials are not sent in it (`nil`).
    public static func workerReply(_ dialect: Dialect, _ kind: ReplyKind, address: [UInt8], body: [[UInt8]]) -> [[UInt8]]? {
        let command: UInt8
        switch (dialect, kind) {
        case (.mdp01, .partial): return nil
        case (.mdp01, .final): command = 0x03
        case (_, .partial): command = 0x03
        case (_, .final): command = 0x04
        }
        return (dialect.leadingEmptyFrame ? [[]] : []) + [MDP.workerHeader(dialect), [command], address, []] + body
    }

    /// What a worker receives from the broker.
    public enum WorkerInbound: Sendable, Equatable {
        case request(address: [UInt8], body: [[UInt8]])
        case heartbeat
        case disconnect
    }

    public static func decodeAtWorker(_ dialect: Dialect, _ frames: [[UInt8]]) -> Result<WorkerInbound, WireError> {
        var index = 0
        if dialect.leadingEmptyFrame {
            guard let first = frames.first, first.isEmpty else { return .failure(WireError(.badRequest, "message without the leading empty frame")) }
            index = 1
        }
        guard index + 1 < frames.count, frames[index] == MDP.workerHeader(dialect), frames[index + 1].count == 1 else {
            return .failure(WireError(.badRequest, "message with an unexpected header or command frame"))
        }
        let command = frames[index + 1][0]
        let rest = Array(frames[(index + 2)...])
        let heartbeat: UInt8 = dialect == .mdp01 ? 0x04 : 0x05
        let disconnect: UInt8 = dialect == .mdp01 ? 0x05 : 0x06
        switch command {
        case 0x02:
            guard rest.count >= 2, rest[1].isEmpty else { return .failure(WireError(.badRequest, "REQUEST without address and empty frame")) }
            return .success(.request(address: rest[0], body: Array(rest[2...])))
        case heartbeat: return .success(.heartbeat)
        case disconnect: return .success(.disconnect)
        default: return .failure(WireError(.badRequest, "unknown command \(hex([command])) from the broker"))
        }
    }

    // MARK: Helpers

    /// A service name is 1–255 bytes of UTF-8 without control characters.
    public static func validateServiceName(_ frame: [UInt8]) -> Result<String, WireError> {
        guard !frame.isEmpty else { return .failure(WireError(.badRequest, "empty service name")) }
        guard frame.count <= MDP.maxServiceNameBytes else {
            return .failure(WireError(.badRequest, "service name longer than \(MDP.maxServiceNameBytes) bytes"))
        }
        guard let name = String(validating: frame, as: UTF8.self) else {
            return .failure(WireError(.badRequest, "service name is not valid UTF-8"))
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return .failure(WireError(.badRequest, "service name contains control characters"))
        }
        return .success(name)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        if bytes.isEmpty { return "(empty)" }
        let shown = bytes.prefix(8).map { b in
            let s = String(b, radix: 16)
            return "0x" + (s.count == 1 ? "0" + s : s)
        }.joined(separator: " ")
        return bytes.count > 8 ? shown + " …" : shown
    }

    static func printable(_ bytes: [UInt8]) -> String {
        if let s = String(validating: bytes.prefix(16), as: UTF8.self),
           !s.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }), !s.isEmpty {
            return "'\(s)'" + (bytes.count > 16 ? "…" : "")
        }
        return hex(bytes)
    }
}
