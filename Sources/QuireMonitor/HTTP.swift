/// The little HTTP/1.1 the exporter speaks: one request per connection, `GET /metrics`.
public enum HTTP {
    /// The most bytes of request head read before answering 431.
    public static let maxHeadBytes = 16 * 1024

    public struct Response: Sendable, Equatable {
        public var status: Int
        public var reason: String
        public var headers: [(String, String)]
        public var body: [UInt8]

        public init(status: Int, reason: String, headers: [(String, String)] = [], body: [UInt8]) {
            self.status = status
            self.reason = reason
            self.headers = headers
            self.body = body
        }

        public static func == (a: Response, b: Response) -> Bool {
            a.status == b.status && a.reason == b.reason && a.body == b.body && a.headers.map { "\($0.0):\($0.1)" } == b.headers.map { "\($0.0):\($0.1)" }
        }

        /// The bytes on the wire; a HEAD response keeps the length but drops the body.
        public func serialized(includeBody: Bool = true) -> [UInt8] {
            var head = "HTTP/1.1 \(status) \(reason)\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            return Array(head.utf8) + (includeBody ? body : [])
        }

        public static func text(_ status: Int, _ reason: String, _ text: String, extra: [(String, String)] = []) -> Response {
            Response(status: status, reason: reason, headers: [("Content-Type", "text/plain; charset=utf-8")] + extra, body: Array((text + "\n").utf8))
        }
    }

    /// What reading a request head gave.
    public enum Head: Sendable, Equatable {
        /// Not all of it yet.
        case incomplete
        case request(method: String, path: String)
        /// Answer with this and close.
        case invalid(Response)
    }

    /// Parses the request line of a head once it is complete (`\r\n\r\n`, or `\n\n` from sloppy clients).
    public static func parseHead(_ bytes: [UInt8]) -> Head {
        guard let end = headEnd(bytes) else {
            return bytes.count >= maxHeadBytes ? .invalid(.text(431, "Request Header Fields Too Large", "request head too large")) : .incomplete
        }
        let head = bytes[..<end]
        let lineEnd = head.firstIndex(of: UInt8(ascii: "\n")) ?? head.endIndex
        var line = Array(head[..<lineEnd])
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        guard let text = String(validating: line, as: UTF8.self) else {
            return .invalid(.text(400, "Bad Request", "request line is not UTF-8"))
        }
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isLetter && $0.isUppercase }),
              parts[1].hasPrefix("/"), parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0" else {
            return .invalid(.text(400, "Bad Request", "malformed request line"))
        }
        let target = parts[1]
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "/"
        return .request(method: String(parts[0]), path: path)
    }

    static func headEnd(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\n") {
                if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") { return index + 2 }
                if index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "\r"), bytes[index + 2] == UInt8(ascii: "\n") { return index + 3 }
            }
            index += 1
        }
        return nil
    }

    /// Routes a parsed request: `GET`/`HEAD /metrics` → `metrics()`, `/` → a pointer to it, else 404/405.
    public static func respond(method: String, path: String, metrics: () -> String) -> Response {
        switch path {
        case "/metrics":
            guard method == "GET" || method == "HEAD" else {
                return .text(405, "Method Not Allowed", "only GET and HEAD", extra: [("Allow", "GET, HEAD")])
            }
            return Response(status: 200, reason: "OK", headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                            body: Array(metrics().utf8))
        case "/":
            guard method == "GET" || method == "HEAD" else {
                return .text(405, "Method Not Allowed", "only GET and HEAD", extra: [("Allow", "GET, HEAD")])
            }
            return .text(200, "OK", "quire exporter: metrics at /metrics")
        default:
            return .text(404, "Not Found", "not found; metrics are at /metrics")
        }
    }
}
