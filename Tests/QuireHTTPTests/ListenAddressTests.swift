import Testing
@testable import QuireHTTP

@Suite("Listen addresses")
struct ListenAddressTests {
    @Test("parses", arguments: [(":8080", nil as String?, 8080 as UInt16), ("127.0.0.1:0", "127.0.0.1", 0), ("[::]:8080", "::", 8080),
                                ("[::1]:80", "::1", 80), ("*:1", nil, 1), ("localhost:9464", "localhost", 9464)])
    func parses(text: String, host: String?, port: UInt16) throws {
        let address = try #require(ListenAddress(text))
        #expect(address.host == host)
        #expect(address.port == port)
    }

    @Test("refuses", arguments: ["9464", ":http", ":70000", "", ":", "::1:80", "[::1:80", "[]:80", ":-1", ":+80"])
    func refuses(text: String) {
        #expect(ListenAddress(text) == nil)
    }

    @Test("prints back", arguments: [":8080", "127.0.0.1:0", "[::1]:80"])
    func prints(text: String) throws {
        #expect(try #require(ListenAddress(text)).description == text)
    }
}
