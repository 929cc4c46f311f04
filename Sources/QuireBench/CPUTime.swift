import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CPU time from /proc: this process's threads by name, and every process of one name (PostgreSQL's
/// server processes), in seconds of user + system time.
enum CPUTime {
    /// Seconds per clock tick of /proc's `utime` and `stime`.
    static let tick = 1 / Double(sysconf(Int32(_SC_CLK_TCK)))

    /// `utime + stime` of one `/proc/…/stat` (fields 14 and 15, counted after the name in brackets,
    /// which may hold spaces).
    static func seconds(stat: String) -> Double? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) * tick
    }

    /// This process's threads: their name (`comm`) and CPU seconds, by thread id.
    static func threads() -> [Int: (name: String, seconds: Double)] {
        var found: [Int: (name: String, seconds: Double)] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            guard let tid = Int(entry),
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(entry)/stat", encoding: .utf8),
                  let seconds = seconds(stat: stat),
                  let name = try? String(contentsOfFile: "/proc/self/task/\(entry)/comm", encoding: .utf8) else { continue }
            found[tid] = (name.trimmingCharacters(in: .whitespacesAndNewlines), seconds)
        }
        return found
    }

    /// Every process named `name` (`comm`) on the machine, by process id: CPU seconds of its own and
    /// of its waited-for children.
    static func processes(named name: String) -> [Int: Double] {
        var found: [Int: Double] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  stat.contains("(\(name))"), let seconds = seconds(stat: stat) else { continue }
            found[pid] = seconds
        }
        return found
    }

    /// CPU seconds spent between two samples, by a group of threads or processes: those alive at the
    /// second, less what they had at the first (a thread or process born in between counts whole).
    static func spent<Key>(_ before: [Key: Double], _ after: [Key: Double]) -> Double {
        after.reduce(0) { $0 + max(0, $1.value - (before[$1.key] ?? 0)) }
    }
}
