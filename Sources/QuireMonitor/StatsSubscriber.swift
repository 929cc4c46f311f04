import Foundation
import QuireStats
import QuireSupport
import ZeroMQ

/// A message from the broker's stats socket.
public enum StatsMessage: Sendable {
    /// A snapshot, with the JSON exactly as received.
    case snapshot(StatsSnapshot, raw: [UInt8])
    case event(StatsEvent, raw: [UInt8])
    /// Something that did not decode (a newer broker, a stray publisher): reported, never fatal.
    case invalid(topic: String, reason: String)
}

/// A SUB socket on the broker's stats endpoint. Owned by the thread that created it.
public final class StatsSubscriber {
    public let endpoint: String
    public let socket: Socket

    /// Connects (ZeroMQ reconnects by itself when the broker is not there yet or restarts).
    /// `curve`: the broker's CURVE key and this subscriber's pair, when its stats socket has CURVE on.
    public init(context: Context, endpoint: String, events: Bool = true, curve: CurveClientSettings? = nil) throws(ZMQError) {
        let socket = try Socket(context: context, type: .sub)
        try socket.applyCurve(curve)
        try socket.setReceiveHighWaterMark(1_000)
        try socket.setReconnectInterval(milliseconds: 200, maxMilliseconds: 2_000)
        try socket.subscribe(Array(StatsTopic.snapshot.utf8))
        if events { try socket.subscribe(Array(StatsTopic.event.utf8)) }
        try socket.connect(endpoint)
        self.endpoint = endpoint
        self.socket = socket
    }

    /// The next message if one is waiting, without blocking.
    public func receive() throws(ZMQError) -> StatsMessage? {
        guard let frames = try socket.receive(dontWait: true) else { return nil }
        return Self.decode(frames)
    }

    /// Decodes `[topic, json]`.
    public static func decode(_ frames: [[UInt8]]) -> StatsMessage {
        guard frames.count == 2 else {
            return .invalid(topic: frames.first.map { String(decoding: $0, as: UTF8.self) } ?? "", reason: "expected 2 frames, got \(frames.count)")
        }
        let topic = String(decoding: frames[0], as: UTF8.self)
        let body = frames[1]
        do {
            switch topic {
            case StatsTopic.snapshot:
                return .snapshot(try JSONDecoder().decode(StatsSnapshot.self, from: Data(body)), raw: body)
            case StatsTopic.event:
                return .event(try JSONDecoder().decode(StatsEvent.self, from: Data(body)), raw: body)
            default:
                return .invalid(topic: topic, reason: "unknown topic")
            }
        } catch {
            return .invalid(topic: topic, reason: "does not decode: \(error)")
        }
    }

    public func close() { socket.close() }
}
