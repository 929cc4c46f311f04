import Foundation

/// The URL prefixes the gateway may fetch images from (`quire gateway --fetch-allow`); empty: none.
///
/// A URL the client gives is fetched only when it names a place the operator chose: fetching "any
/// URL" would let every client make the gateway send requests from inside the network it runs in
/// (SSRF: cloud metadata at 169.254.169.254, admin ports on localhost, the broker's neighbours). So
/// the rule compares parsed components, never strings: scheme, host and port equal to a prefix's,
/// and the path inside the prefix's path. Anything that parsers could read differently (user info,
/// backslashes, white space, encoded slashes, `.`/`..` segments, percent-encoded host names) is
/// refused outright, and the URL fetched is the one rebuilt from the checked components.
public struct FetchAllowList: Sendable, Equatable {
    /// One allowed prefix, normalised: scheme and host lower-cased, the port explicit.
    public struct Prefix: Sendable, Equatable, CustomStringConvertible {
        public var scheme: String
        /// Lower-cased; an IPv6 literal keeps its brackets (`[::1]`).
        public var host: String
        public var port: Int
        /// Percent-encoding normalised (``FetchAllowList/normalisedPath(_:)``), starting with `/`.
        public var path: String

        /// `https://images.example.com:443/scans/`.
        public var description: String { "\(scheme)://\(host):\(port)\(path)" }

        /// Whether `url` is inside this prefix. A path ending in `/` is a folder (anything under it);
        /// one that does not is that path or a folder of that name: `/scans` allows `/scans` and
        /// `/scans/a.png`, not `/scans-private/a.png`.
        func contains(_ url: Checked) -> Bool {
            guard url.scheme == scheme, url.host == host, url.port == port else { return false }
            if path.hasSuffix("/") { return url.path.hasPrefix(path) }
            return url.path == path || url.path.hasPrefix(path + "/")
        }
    }

    /// What is wrong with a URL, for a message.
    struct Problem: Error {
        var reason: String
    }

    /// A URL taken apart and checked; ``url`` is what is fetched.
    struct Checked: Equatable {
        var scheme: String
        var host: String
        var port: Int
        var path: String
        var query: String?

        /// The URL rebuilt from the checked parts (no user info, no fragment; the port only when it is
        /// not the scheme's default).
        var url: URL? {
            let defaultPort = scheme == "https" ? 443 : 80
            let authority = port == defaultPort ? host : "\(host):\(port)"
            return URL(string: "\(scheme)://\(authority)\(path)" + (query.map { "?" + $0 } ?? ""))
        }
    }

    /// Why a prefix given at start-up is not valid.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public var prefix: String
        public var reason: String
        public var description: String { "'\(prefix)' is not a valid fetch prefix: \(reason)" }
    }

    public var prefixes: [Prefix]

    public init(prefixes: [Prefix] = []) {
        self.prefixes = prefixes
    }

    /// No URL is fetched.
    public static let none = FetchAllowList()

    public var isEmpty: Bool { prefixes.isEmpty }

    /// Prefixes separated by commas (`https://images.example.com/,http://10.0.0.5:9000/bucket/`);
    /// white space around each is ignored. Each must be an absolute http or https URL without user
    /// info, query or fragment.
    public init(parsing text: String) throws(Invalid) {
        var prefixes: [Prefix] = []
        for item in text.split(separator: ",") {
            let raw = item.trimmingCharacters(in: .whitespaces)
            if raw.isEmpty { continue }
            let checked: Checked
            switch Self.check(raw) {
            case .success(let value): checked = value
            case .failure(let problem): throw Invalid(prefix: raw, reason: problem.reason)
            }
            if checked.query != nil { throw Invalid(prefix: raw, reason: "a prefix has no query ('?…')") }
            if raw.contains("#") { throw Invalid(prefix: raw, reason: "a prefix has no fragment ('#…')") }
            prefixes.append(Prefix(scheme: checked.scheme, host: checked.host, port: checked.port, path: checked.path))
        }
        if prefixes.isEmpty { throw Invalid(prefix: text, reason: "no prefix given (use URLs such as https://images.example.com/scans/)") }
        self.prefixes = prefixes
    }

    /// The URL to fetch for `text`, or why it may not be fetched (a message for the client, which
    /// names the flag the operator would set and never the prefixes themselves).
    func decision(_ text: String) -> Result<URL, FetchFailure> {
        guard !isEmpty else {
            return .failure(FetchFailure(.notAllowed, "this server does not fetch image URLs unless its operator allows them: it fetches only from an allow-list "
                                         + "of URL prefixes configured with quire gateway --fetch-allow, and none is configured"))
        }
        let checked: Checked
        switch Self.check(text) {
        case .success(let value): checked = value
        case .failure(let problem): return .failure(FetchFailure(.notAllowed, "the URL is not fetched: \(problem.reason)"))
        }
        guard prefixes.contains(where: { $0.contains(checked) }), let url = checked.url else {
            return .failure(FetchFailure(.notAllowed, "the URL is not on this server's allow-list: it fetches images only from the URL prefixes "
                                         + "its operator configured (quire gateway --fetch-allow)"))
        }
        return .success(url)
    }

    /// Whether `text` may be fetched.
    public func allows(_ text: String) -> Bool {
        if case .success = decision(text) { return true }
        return false
    }

    /// `text` taken apart, or what is wrong with it.
    static func check(_ text: String) -> Result<Checked, Problem> {
        guard text.utf8.count <= 8192 else { return .failure(Problem(reason: "it is longer than 8192 bytes")) }
        // What parsers disagree on is refused before parsing: Foundation would encode a space or a
        // backslash that another parser (or the server) reads as a separator.
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7F || $0 == "\\" }) else {
            return .failure(Problem(reason: "it contains white space, a backslash, a control or a non-ASCII character"))
        }
        guard let components = URLComponents(string: text), let rawScheme = components.scheme else {
            return .failure(Problem(reason: "it is not an absolute URL"))
        }
        let scheme = rawScheme.lowercased()
        guard scheme == "http" || scheme == "https" else { return .failure(Problem(reason: "only http and https URLs are fetched")) }
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil, !authority(of: text).contains("@") else {
            return .failure(Problem(reason: "URLs with user info ('user@host') are not fetched"))
        }
        guard let rawHost = components.percentEncodedHost, !rawHost.isEmpty else { return .failure(Problem(reason: "it has no host")) }
        let host = rawHost.lowercased()
        guard validHost(host) else { return .failure(Problem(reason: "its host '\(host)' is not a DNS name or an IP address")) }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        guard (1...65535).contains(port) else { return .failure(Problem(reason: "its port is not in 1…65535")) }
        var path = components.percentEncodedPath
        if path.isEmpty { path = "/" }
        guard path.hasPrefix("/"), let normalised = normalisedPath(path) else {
            return .failure(Problem(reason: "its path has an encoded slash, backslash or NUL, or broken percent-encoding"))
        }
        let segments = normalised.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains(where: { segment in
            let decoded = segment.removingPercentEncoding ?? String(segment)
            return decoded == "." || decoded == ".."
        }) else {
            return .failure(Problem(reason: "its path has a '.' or '..' segment"))
        }
        return .success(Checked(scheme: scheme, host: host, port: port, path: normalised, query: components.percentEncodedQuery))
    }

    /// The authority part of an absolute URL's text (between `//` and the next `/`, `?` or `#`).
    static func authority(of text: String) -> Substring {
        guard let start = text.range(of: "//") else { return "" }
        let rest = text[start.upperBound...]
        return rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    }

    /// A DNS name (letters, digits, `-`, `.`, no empty label) or an IPv6 literal in brackets; no
    /// percent-encoding, so that the host compared is the host connected to.
    static func validHost(_ host: String) -> Bool {
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { return false }
            return host.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        guard !host.hasPrefix("."), !host.hasSuffix("."), !host.contains("..") else { return false }
        return host.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "." }
    }

    /// `path` with RFC 3986's percent-encoding normalisation (§6.2.2.2: unreserved characters
    /// decoded, other escapes upper-cased), so that `/scans/%61.png` and `/scans/a.png` compare
    /// equal; nil when an escape is broken or stands for `/`, `\` or NUL, which servers may decode
    /// into a separator after the check.
    static func normalisedPath(_ path: String) -> String? {
        let bytes = Array(path.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                index += 1
                continue
            }
            guard index + 2 < bytes.count, let high = bytes[index + 1].asciiHexValue, let low = bytes[index + 2].asciiHexValue else { return nil }
            let value = high << 4 | low
            if value == UInt8(ascii: "/") || value == UInt8(ascii: "\\") || value == 0 { return nil }
            let unreserved = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(value) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(value)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(value) || [UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~")].contains(value)
            if unreserved {
                out.append(value)
            } else {
                out += Array(String(format: "%%%02X", value).utf8)
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension UInt8 {
    /// The value (0–15) of this byte as an ASCII hex digit, either case; nil for any other byte.
    /// Percent-decoding, for the allow-list's URLs and the token endpoint's form.
    var asciiHexValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
