/// Routes requests by method and path pattern; answers what matches nothing with 404, and a known path
/// with another method with 405 and `Allow` (RFC 9110 §15.5.6).
///
/// A pattern is a path whose segments are literals or `{name}` (one whole segment, never empty):
/// `/vision/v3.2/read/analyzeResults/{id}`, `/{project}/{region}/annotateImage`. Literal segments win over
/// parameters, so `/v1/images:annotate` and `/{tenant}/oauth2/token` can live side by side. A `GET`
/// route also answers `HEAD` (the server drops the body).
///
/// A server of several APIs adds each API's routes as a ``group(_:prefix:_:)`` with that API's
/// ``Refusals``: what refuses a request to one of its routes (another method, the server's own 400,
/// 413 and 431) answers in that API's shape, and so does a path under its prefix that no route has.
public struct HTTPRouter: Sendable {
    /// A matched request and the values of the pattern's `{name}` segments.
    public typealias Handler = @Sendable (HTTPRequest, _ parameters: [String: String]) -> HTTPResponse

    /// How one group of routes says no, each in its API's error shape.
    public struct Refusals: Sendable {
        /// A path no route has.
        public var notFound: HTTPHandler
        /// A path the routes have, with another method, given the methods it has (for `Allow`).
        public var methodNotAllowed: @Sendable (HTTPRequest, _ allowed: [String]) -> HTTPResponse
        /// The server's own refusal of a request (``HTTPServer``'s `rejection`), given its head.
        public var rejection: @Sendable (_ status: Int, _ message: String, _ head: HTTPRequest) -> HTTPResponse

        public init(notFound: @escaping HTTPHandler, methodNotAllowed: @escaping @Sendable (HTTPRequest, _ allowed: [String]) -> HTTPResponse,
                    rejection: @escaping @Sendable (_ status: Int, _ message: String, _ head: HTTPRequest) -> HTTPResponse) {
            self.notFound = notFound
            self.methodNotAllowed = methodNotAllowed
            self.rejection = rejection
        }

        /// Plain text.
        public static let plain = Refusals(notFound: { _ in .text(404, "not found") }, methodNotAllowed: { request, allowed in
            .text(405, "method \(request.method) not allowed; use \(allowed.joined(separator: ", "))",
                  headers: ["Allow": allowed.joined(separator: ", ")])
        }, rejection: { status, message, _ in .text(status, message) })
    }

    struct Route: Sendable {
        let method: String
        let segments: [Segment]
        let handler: Handler
        /// Its group's; nil: the router's own ``refusals``.
        var refusals: Refusals?
    }

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    private var routes: [Route] = []
    /// The groups' prefixes, in the order the groups were added.
    private var prefixes: [(prefix: String, refusals: Refusals)] = []

    /// What refuses requests no group answers for: paths outside every group's prefix that no route
    /// has, and the routes added outside a group. Plain text by default.
    public var refusals = Refusals.plain

    /// What answers a path no route has (``refusals``' `notFound`).
    public var notFound: HTTPHandler {
        get { refusals.notFound }
        set { refusals.notFound = newValue }
    }
    /// What answers a known path with another method (``refusals``' `methodNotAllowed`).
    public var methodNotAllowed: @Sendable (HTTPRequest, _ allowed: [String]) -> HTTPResponse {
        get { refusals.methodNotAllowed }
        set { refusals.methodNotAllowed = newValue }
    }

    public init() {}

    /// Adds a route; the first route added wins among routes of the same specificity.
    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        let segments = Self.split(pattern).map { part -> Segment in
            if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 { return .parameter(String(part.dropFirst().dropLast())) }
            return .literal(part)
        }
        routes.append(Route(method: method, segments: segments, handler: handler, refusals: nil))
    }

    public mutating func get(_ pattern: String, _ handler: @escaping Handler) { add("GET", pattern, handler) }
    public mutating func post(_ pattern: String, _ handler: @escaping Handler) { add("POST", pattern, handler) }

    /// Adds the routes `add` adds as one API's: `refusals` answers their other methods and the
    /// server's refusals of requests to them, and the paths under `prefix` (`/vision/`) that no route
    /// has (the first group whose prefix matches).
    public mutating func group(_ refusals: Refusals, prefix: String? = nil, _ add: (inout HTTPRouter) -> Void) {
        var group = HTTPRouter()
        add(&group)
        for var route in group.routes {
            route.refusals = route.refusals ?? refusals
            routes.append(route)
        }
        if let prefix { prefixes.append((prefix, refusals)) }
    }

    /// The refusals in charge of `path`: the group of its best route whatever the method, else the
    /// group whose prefix it is under, else the router's.
    func refusals(for path: String) -> Refusals {
        if let best = ranked(Self.split(path)).first { return best.route.refusals ?? refusals }
        return unrouted(path)
    }

    /// The refusals of a path no route has: its prefix's group's, else the router's.
    private func unrouted(_ path: String) -> Refusals {
        prefixes.first { path.hasPrefix($0.prefix) }?.refusals ?? refusals
    }

    /// The server's own refusal of a request (a malformed head, a body or head over the limit) in the
    /// shape of the group its path belongs to: pass it as ``HTTPServer``'s `rejection`.
    public func rejection(_ status: Int, _ message: String, _ head: HTTPRequest) -> HTTPResponse {
        refusals(for: head.path).rejection(status, message, head)
    }

    /// Answers `request`: the best route for its path and method, else 405 or 404.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let ranked = ranked(Self.split(request.path))
        guard let best = ranked.first else { return unrouted(request.path).notFound(request) }
        let method = request.method == "HEAD" ? ["HEAD", "GET"] : [request.method]
        for wanted in method {
            if let hit = ranked.first(where: { $0.route.method == wanted }) { return hit.route.handler(request, hit.parameters) }
        }
        var allowed: [String] = []
        for candidate in ranked where !allowed.contains(candidate.route.method) {
            allowed.append(candidate.route.method)
            if candidate.route.method == "GET" && !allowed.contains("HEAD") { allowed.append("HEAD") }
        }
        return (best.route.refusals ?? refusals).methodNotAllowed(request, allowed)
    }

    /// The routes that match `path`, most literal segments first; stable, so the first added wins a tie.
    private func ranked(_ path: [String]) -> [(route: Route, parameters: [String: String])] {
        var candidates: [(route: Route, parameters: [String: String], literals: Int)] = []
        for route in routes {
            if let match = Self.match(route.segments, path) { candidates.append((route, match.parameters, match.literals)) }
        }
        return candidates.enumerated().sorted { ($0.element.literals, -$0.offset) > ($1.element.literals, -$1.offset) }
            .map { ($0.element.route, $0.element.parameters) }
    }

    /// The router as a server's handler.
    public var handler: HTTPHandler {
        let router = self
        return { router.respond(to: $0) }
    }

    static func split(_ path: String) -> [String] {
        // `/a/b/` and `/a/b` are the same route; `//` collapses.
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    static func match(_ pattern: [Segment], _ path: [String]) -> (parameters: [String: String], literals: Int)? {
        guard pattern.count == path.count else { return nil }
        var parameters: [String: String] = [:]
        var literals = 0
        for (segment, part) in zip(pattern, path) {
            switch segment {
            case .literal(let text):
                guard text == part else { return nil }
                literals += 1
            case .parameter(let name):
                parameters[name] = part
            }
        }
        return (parameters, literals)
    }
}
