/// Routes requests by method and path pattern; answers what matches nothing with 404, and a known path
/// with another method with 405 and `Allow` (RFC 9110 §15.5.6).
///
/// A pattern is a path whose segments are literals or `{name}` (one whole segment, never empty):
/// `/vision/v3.2/read/analyzeResults/{id}`, `/{project}/{region}/annotateImage`. Literal segments win over
/// parameters, so `/v1/images:annotate` and `/{tenant}/oauth2/token` can live side by side. A `GET`
/// route also answers `HEAD` (the server drops the body).
public struct HTTPRouter: Sendable {
    /// A matched request and the values of the pattern's `{name}` segments.
    public typealias Handler = @Sendable (HTTPRequest, _ parameters: [String: String]) -> HTTPResponse

    struct Route: Sendable {
        let method: String
        let segments: [Segment]
        let handler: Handler
    }

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    private var routes: [Route] = []

    /// What answers a path no route has; the default says 404 in plain text.
    public var notFound: HTTPHandler = { _ in .text(404, "not found") }
    /// What answers a known path with another method, given the methods the path has (for `Allow`).
    public var methodNotAllowed: @Sendable (HTTPRequest, _ allowed: [String]) -> HTTPResponse = { request, allowed in
        .text(405, "method \(request.method) not allowed; use \(allowed.joined(separator: ", "))",
              headers: ["Allow": allowed.joined(separator: ", ")])
    }

    public init() {}

    /// Adds a route; the first route added wins among routes of the same specificity.
    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        let segments = Self.split(pattern).map { part -> Segment in
            if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 { return .parameter(String(part.dropFirst().dropLast())) }
            return .literal(part)
        }
        routes.append(Route(method: method, segments: segments, handler: handler))
    }

    public mutating func get(_ pattern: String, _ handler: @escaping Handler) { add("GET", pattern, handler) }
    public mutating func post(_ pattern: String, _ handler: @escaping Handler) { add("POST", pattern, handler) }

    /// Answers `request`: the best route for its path and method, else 405 or 404.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let path = Self.split(request.path)
        var candidates: [(route: Route, parameters: [String: String], literals: Int)] = []
        for route in routes {
            if let match = Self.match(route.segments, path) { candidates.append((route, match.parameters, match.literals)) }
        }
        guard !candidates.isEmpty else { return notFound(request) }
        // Most literal segments first; stable, so the first added wins a tie.
        let ranked = candidates.enumerated().sorted { ($0.element.literals, -$0.offset) > ($1.element.literals, -$1.offset) }.map(\.element)
        let method = request.method == "HEAD" ? ["HEAD", "GET"] : [request.method]
        for wanted in method {
            if let hit = ranked.first(where: { $0.route.method == wanted }) { return hit.route.handler(request, hit.parameters) }
        }
        var allowed: [String] = []
        for candidate in ranked where !allowed.contains(candidate.route.method) {
            allowed.append(candidate.route.method)
            if candidate.route.method == "GET" && !allowed.contains("HEAD") { allowed.append("HEAD") }
        }
        return methodNotAllowed(request, allowed)
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
