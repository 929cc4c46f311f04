/// Quire's one extension to Majordomo: a worker may put one more frame after its HEARTBEAT command,
/// a JSON report of its own figures (`proto-json/worker-report.schema.json`).
///
/// RFC 7 and RFC 18 give HEARTBEAT no body. The brokers Quire interoperates with ignore frames after the
/// command (Quire's own, majortomo 0.2.0, the zguide's `mdbroker`), so a Quire worker behind a foreign
/// broker keeps working; `WorkerConfiguration.sendsReports` turns the frame off for a broker that does
/// not. Quire's broker never sends it to workers and accepts plain heartbeats as before.
extension MajordomoCodec {
    /// A worker's HEARTBEAT with the report frame after the command.
    public static func workerHeartbeat(_ dialect: Dialect, report: [UInt8]) -> [[UInt8]] {
        workerHeartbeat(dialect) + [report]
    }

    /// The report frame of a worker HEARTBEAT as the broker received it (frames after the ROUTER
    /// identity), or `nil` for a plain heartbeat or any other message.
    public static func heartbeatExtension(_ frames: [[UInt8]]) -> [UInt8]? {
        var index = 0
        if let first = frames.first, first.isEmpty { index = 1 }
        guard index + 2 < frames.count else { return nil }
        let header = frames[index]
        let command = frames[index + 1]
        guard command.count == 1 else { return nil }
        let isHeartbeat = (header == MDP.workerHeader02 && command[0] == 0x05) || (header == MDP.workerHeader01 && command[0] == 0x04)
        return isHeartbeat ? frames[index + 2] : nil
    }
}
