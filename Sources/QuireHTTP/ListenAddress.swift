#if canImport(Glibc)
import Glibc
#endif

/// Where a server listens: `[HOST]:PORT`.
///
/// `:8080` and `*:8080` are every interface, IPv6 and IPv4 on one socket (IPv4 alone where the host
/// has no IPv6); `[::]:8080` is the same, said the IPv6 way; `0.0.0.0:8080` is IPv4 only;
/// `127.0.0.1:8080`, `[::1]:8080` and `localhost:8080` one address (a name is resolved once, at start,
/// IPv4 first). Port 0 asks the kernel for a free port; the server reports the one it got.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// nil: every interface.
    public var host: String?
    public var port: UInt16

    public init(host: String?, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `:9464`, `0.0.0.0:9464`, `127.0.0.1:0`, `[::1]:9464`, `localhost:9464`; nil for anything else.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        guard !portText.isEmpty, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber), let port = UInt16(portText) else { return nil }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { return nil }
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return nil  // an IPv6 address without brackets: ambiguous
        }
        self.host = host.isEmpty || host == "*" ? nil : host
        self.port = port
    }

    public var description: String {
        switch host {
        case nil: ":\(port)"
        case let host? where host.contains(":"): "[\(host)]:\(port)"
        case let host?: "\(host):\(port)"
        }
    }

    /// What to bind: a dual-stack wildcard, or one resolved socket address.
    enum Binding {
        case wildcard(port: UInt16)
        case address(sockaddr_storage, family: Int32, dualStack: Bool)
    }

    func binding() throws(HTTPServerError) -> Binding {
        guard let host else { return .wildcard(port: port) }
        if host == "::" {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = in6addr_any
            return .address(Self.storage(address), family: AF_INET6, dualStack: true)
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw HTTPServerError(.resolve, "cannot resolve '\(host)': \(String(cString: gai_strerror(status)))", address: description)
        }
        defer { freeaddrinfo(result) }
        var chosen: UnsafeMutablePointer<addrinfo>?
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            let family = info.pointee.ai_family
            if family == AF_INET { chosen = info; break }
            if family == AF_INET6 && chosen == nil { chosen = info }
            candidate = info.pointee.ai_next
        }
        guard let info = chosen, let address = info.pointee.ai_addr else {
            throw HTTPServerError(.resolve, "'\(host)' has no IPv4 or IPv6 address", address: description)
        }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: min(Int(info.pointee.ai_addrlen), target.count)))
        }
        return .address(storage, family: info.pointee.ai_family, dualStack: false)
    }

    static func storage<T>(_ address: T) -> sockaddr_storage {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            withUnsafeBytes(of: address) { target.copyMemory(from: $0) }
        }
        return storage
    }
}

/// A numeric host for a socket address (`127.0.0.1`, `::1`).
func numericHost(_ address: UnsafePointer<sockaddr>) -> String? {
    let length: socklen_t
    switch Int32(address.pointee.sa_family) {
    case AF_INET: length = socklen_t(MemoryLayout<sockaddr_in>.size)
    case AF_INET6: length = socklen_t(MemoryLayout<sockaddr_in6>.size)
    default: return nil
    }
    var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
    return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
