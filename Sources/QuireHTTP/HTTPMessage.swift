/// Header fields in the order they came (or will go), names compared without regard to case.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value of the field `name`, nil when it is absent.
    public subscript(name: String) -> String? {
        fields.first { Self.same($0.name, name) }?.value
    }

    /// Every value of the field `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.same($0.name, name) }.map(\.value)
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Replaces every field `name` by one with `value`.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { Self.same($0.name, name) }
        fields.append((name, value))
    }

    public mutating func remove(_ name: String) { fields.removeAll { Self.same($0.name, name) } }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.count == b.fields.count && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    static func same(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.lowercased() == b.lowercased()
    }
}

/// One request as the server read it: the head decoded by libmicrohttpd and the whole body.
public struct HTTPRequest: Sendable {
    /// The method as sent (`GET`, `POST`, …): case-sensitive, as HTTP says.
    public var method: String
    /// The path without the query, percent-decoded (`/vision/v3.2/read/analyze`).
    public var path: String
    /// The query's name/value pairs, percent-decoded, in order; a name without `=` has an empty value.
    public var query: [(name: String, value: String)]
    public var headers: HTTPHeaders
    /// The body (every byte of it; its size is at most the server's `maxBodyBytes`).
    public var body: [UInt8]
    /// `HTTP/1.1` or `HTTP/1.0`.
    public var version: String
    /// The client's numeric address (`127.0.0.1`, `::1`), nil when unknown.
    public var remoteAddress: String?

    public init(method: String, path: String, query: [(name: String, value: String)] = [], headers: HTTPHeaders = [:],
                body: [UInt8] = [], version: String = "HTTP/1.1", remoteAddress: String? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.version = version
        self.remoteAddress = remoteAddress
    }

    /// The first value of the query parameter `name`.
    public func query(_ name: String) -> String? { query.first { $0.name == name }?.value }
}

/// What a handler answers. libmicrohttpd adds `Content-Length`, `Date` and `Connection` itself, and
/// sends no body to a `HEAD` request (the length stays that of the body).
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain` answer; a newline is added.
    public static func text(_ status: Int, _ text: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var all: HTTPHeaders = ["Content-Type": "text/plain; charset=utf-8"]
        for field in headers { all.set(field.name, field.value) }
        return HTTPResponse(status: status, headers: all, body: Array((text + "\n").utf8))
    }

    /// The standard reason phrase of `status` (libmicrohttpd writes its own on the wire).
    public static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}

/// Answers one request. It runs on one of the server's threads; see ``HTTPServer`` for what blocking in it costs.
public typealias HTTPHandler = @Sendable (HTTPRequest) -> HTTPResponse
