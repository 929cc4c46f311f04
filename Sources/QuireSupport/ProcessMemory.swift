import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The process's own resident memory, for worker reports.
public enum ProcessMemory {
    /// Resident set size in bytes from `/proc/self/statm` (its second field, in pages); `nil` where
    /// there is no /proc.
    public static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        return residentBytes(statm: text, pageSize: Int(sysconf(Int32(_SC_PAGESIZE))))
    }

    /// Parses statm's text: `size resident shared text lib data dt`, in pages.
    public static func residentBytes(statm: String, pageSize: Int) -> Int? {
        let fields = statm.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 2, let pages = Int(fields[1]), pages >= 0, pageSize > 0 else { return nil }
        return pages * pageSize
    }
}
