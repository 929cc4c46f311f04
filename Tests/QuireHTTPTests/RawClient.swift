import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP client that writes exactly the bytes it is given and reads what comes back: for requests no
/// HTTP library would send.
/// Sending from one thread while another reads is fine: the socket is the kernel's, the class holds only its descriptor.
final class RawClient: @unchecked Sendable {
    let fd: Int32

    init(port: Int, host: String = "127.0.0.1") throws {
        let v6 = host.contains(":")
        fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var rc: Int32
        if v6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .ECONNREFUSED)
        }
    }

    deinit { close(fd) }

    /// Sends everything; false when the server has closed.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// Reads until the server closes or `timeout` passes; `closed` says which.
    func readAll(timeout: Duration = .seconds(5)) -> (bytes: [UInt8], closed: Bool) {
        var result: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return (result, false) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ms = Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            if poll(&poller, 1, ms) <= 0 { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { result += buffer[0..<n]; continue }
            return (result, true)  // end of stream, or reset
        }
    }

    /// Reads one response framed by `Content-Length` (or until close), with `timeout` for all of it.
    func readResponse(timeout: Duration = .seconds(5), head: Bool = false) -> RawResponse? {
        var data: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < deadline {
            if let response = RawResponse(parsing: data, headRequest: head) { return response }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 50) <= 0 { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return RawResponse(parsing: data, headRequest: head, closed: true) }
            data += buffer[0..<n]
        }
        return nil
    }
}

/// A response as bytes on the wire.
struct RawResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    var text: String { String(decoding: body, as: UTF8.self) }

    /// nil until `data` holds a whole response.
    init?(parsing data: [UInt8], headRequest: Bool = false, closed: Bool = false) {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard data.count >= 4, let end = (0...(data.count - 4)).first(where: { Array(data[$0..<$0 + 4]) == separator }) else { return nil }
        let lines = String(decoding: data[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else { return nil }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let rest = Array(data[(end + 4)...])
        let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) }
        if headRequest || status == 204 || status == 304 || (100..<200).contains(status) {
            body = []
        } else if let length {
            guard rest.count >= length else { return nil }
            body = Array(rest.prefix(length))
        } else {
            guard closed else { return nil }
            body = rest
        }
        self.status = status
        self.headers = headers
    }
}

/// Runs a command; its standard output, nil when it failed or is missing.
func run(_ executable: String, _ arguments: [String]) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return nil }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
}

/// Runs `body` on a thread of its own and waits for it without holding a thread of the cooperative
/// pool (two threads on a two-core machine): waits of seconds here would starve other suites' tasks.
/// Expectations stay in the test, on its task; only the waiting moves.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
