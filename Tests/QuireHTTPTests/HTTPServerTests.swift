import Foundation
import Synchronization
import Testing
@testable import QuireHTTP

/// The routes every server test runs: `/hello`, `/echo`, `/slow`, `/items/{id}`.
func testRouter() -> HTTPRouter {
    var router = HTTPRouter()
    router.get("/hello") { request, _ in
        .text(200, "hello \(request.query("name") ?? "world")")
    }
    router.post("/echo") { request, _ in
        var headers: HTTPHeaders = ["Content-Type": request.headers["Content-Type"] ?? "application/octet-stream"]
        headers.add("X-Method", request.method)
        headers.add("X-Client", request.remoteAddress ?? "")
        return HTTPResponse(status: 200, headers: headers, body: request.body)
    }
    router.get("/slow") { request, _ in
        Thread.sleep(forTimeInterval: Double(request.query("ms") ?? "100").map { $0 / 1000 } ?? 0.1)
        return .text(200, "slept")
    }
    router.get("/items/{id}") { _, parameters in .text(200, "item \(parameters["id"] ?? "")") }
    router.add("DELETE", "/items/{id}") { _, parameters in HTTPResponse(status: 204) }
    return router
}

func makeServer(_ configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> HTTPServer {
    var configuration = HTTPServerConfiguration(listen: ListenAddress(host: "127.0.0.1", port: 0), threads: 2,
                                                requestTimeout: .seconds(5), maxBodyBytes: 64 * 1024)
    configure(&configuration)
    return try HTTPServer(configuration: configuration, handler: testRouter().handler)
}

func request(_ port: Int, _ text: String, head: Bool = false) throws -> RawResponse? {
    let client = try RawClient(port: port)
    client.send(text)
    return client.readResponse(head: head)
}

@Suite("HTTP server")
struct HTTPServerTests {
    @Test("port 0 gives each server its own port; stop closes it")
    func ports() throws {
        let a = try makeServer()
        let b = try makeServer()
        #expect(a.port > 0 && b.port > 0 && a.port != b.port)
        a.stop()
        a.stop()
        #expect(throws: (any Error).self) { try RawClient(port: a.port) }
        #expect(try request(b.port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 200)
        b.stop()
    }

    @Test("a port in use is an error that says so")
    func portInUse() throws {
        let a = try makeServer()
        defer { a.stop() }
        #expect {
            try makeServer { $0.listen.port = UInt16(a.port) }
        } throws: { error in
            guard let error = error as? HTTPServerError else { return false }
            return error.code == .start && error.description.contains("127.0.0.1:\(a.port)")
        }
    }

    static let hasIPv6 = FileManager.default.fileExists(atPath: "/proc/net/if_inet6")

    @Test("every interface (:PORT and [::]:PORT): answers on 127.0.0.1, and on ::1 where there is IPv6",
          arguments: [nil, "::"] as [String?])
    func wildcard(host: String?) throws {
        if host == "::" && !Self.hasIPv6 { return }
        let server = try makeServer { $0.listen = ListenAddress(host: host, port: 0) }
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.readResponse()?.status == 405)
        if Self.hasIPv6 {
            let v6 = try RawClient(port: server.port, host: "::1")
            v6.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nv6")
            let response = try #require(v6.readResponse())
            #expect(response.text == "v6")
            #expect(response.header("X-Client") == "::1")
        }
    }

    @Test("one IPv6 address: [::1]:0")
    func loopback6() throws {
        guard Self.hasIPv6 else { return }
        let server = try makeServer { $0.listen = ListenAddress(host: "::1", port: 0) }
        defer { server.stop() }
        let client = try RawClient(port: server.port, host: "::1")
        client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.readResponse()?.status == 200)
        #expect(throws: (any Error).self) { try RawClient(port: server.port, host: "127.0.0.1") }
    }

    @Test("GET with a query, POST with a body, path parameters, HEAD")
    func basics() throws {
        let server = try makeServer()
        defer { server.stop() }
        let hello = try #require(try request(server.port, "GET /hello?name=qu%20ire HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(hello.status == 200)
        #expect(hello.text == "hello qu ire\n")
        #expect(hello.header("Content-Type") == "text/plain; charset=utf-8")

        let body = (0..<5000).map { UInt8($0 % 251) }
        let client = try RawClient(port: server.port)
        client.send(Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-thing\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        let echo = try #require(client.readResponse())
        #expect(echo.status == 200)
        #expect(echo.body == body)
        #expect(echo.header("X-Method") == "POST")
        #expect(echo.header("X-Client") == "127.0.0.1")
        #expect(echo.header("Content-Type") == "application/x-thing")
        // The same connection is kept alive for the next request.
        client.send("GET /items/42 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.readResponse()?.text == "item 42\n")

        let chunked = try RawClient(port: server.port)
        chunked.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        #expect(chunked.readResponse()?.text == "hello world")

        let head = try #require(try request(server.port, "HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n", head: true))
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "12")
        #expect(try request(server.port, "DELETE /items/7 HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 204)
    }

    @Test("unknown routes 404, other methods 405 with Allow")
    func routing() throws {
        let server = try makeServer()
        defer { server.stop() }
        #expect(try request(server.port, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 404)
        #expect(try request(server.port, "GET /items HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 404)
        let put = try #require(try request(server.port, "PUT /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"))
        #expect(put.status == 405)
        #expect(put.header("Allow") == "GET, HEAD")
        let patch = try #require(try request(server.port, "PATCH /items/1 HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(patch.status == 405)
        #expect(patch.header("Allow") == "GET, HEAD, DELETE")
        #expect(try request(server.port, "BREW /hello HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 405)
    }

    @Test("bodies over the limit: 413 before the body is read, and while a chunked body arrives")
    func bodyLimit() throws {
        let server = try makeServer { $0.maxBodyBytes = 1000 }
        defer { server.stop() }
        // Declared too large: answered at once, though not a byte of the body was sent.
        let declared = try #require(try request(server.port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n"))
        #expect(declared.status == 413)
        // With Expect: 100-continue the client hears 413 instead of 100.
        let expect = try #require(try request(server.port, "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n"))
        #expect(expect.status == 413)
        // Exactly at the limit is fine.
        let client = try RawClient(port: server.port)
        client.send(Array("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n".utf8) + [UInt8](repeating: 7, count: 1000))
        #expect(client.readResponse()?.status == 200)
        // Chunked past the limit: counted as it arrives.
        let chunked = try RawClient(port: server.port)
        let chunk = String(repeating: "x", count: 600)
        chunked.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n0\r\n\r\n")
        #expect(chunked.readResponse()?.status == 413)
        // A chunked body that never ends is cut off, not read forever.
        let endless = try RawClient(port: server.port)
        endless.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        var stillOpen = true
        for _ in 0..<200 where stillOpen { stillOpen = endless.send("400\r\n" + String(repeating: "y", count: 1024) + "\r\n") }
        #expect(!stillOpen)
        #expect(try request(server.port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 200)
    }

    @Test("heads too large: 431 from the server, 414/431 from libmicrohttpd past its memory")
    func headerLimit() throws {
        let server = try makeServer { $0.maxHeaderBytes = 4096; $0.connectionMemoryBytes = 32 * 1024 }
        defer { server.stop() }
        let big = String(repeating: "a", count: 5000)
        #expect(try request(server.port, "GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n")?.status == 431)
        #expect(try request(server.port, "GET /hello?q=\(big) HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 431)
        let many = (0..<500).map { "X-H\($0): v\r\n" }.joined()
        #expect(try request(server.port, "GET /hello HTTP/1.1\r\nHost: x\r\n\(many)\r\n")?.status == 431)
        let huge = String(repeating: "b", count: 100_000)
        #expect(try request(server.port, "GET /hello HTTP/1.1\r\nHost: x\r\nX-Huge: \(huge)\r\n\r\n")?.status == 431)
        #expect(try request(server.port, "GET /\(huge) HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 414)
        #expect(try request(server.port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 200)
    }

    @Test("malformed requests get 400 (505 for other HTTP versions)", arguments: [
        "GARBAGE\r\n\r\n", "GET\r\n\r\n", "GET /hello\r\n\r\n", "GET hello HTTP/1.1\r\nHost: x\r\n\r\n",
        "get /hello HTTP/1.1\r\nHost: x\r\n\r\n", "G@T /hello HTTP/1.1\r\nHost: x\r\n\r\n", "GET /hello HTTP/1.1 extra\r\n\r\n",
        "GET /hello HTTP/1.1\r\nno colon here\r\n\r\n", "GET /hello HTTP/1.1\r\n folded\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ])
    func malformed(text: String) throws {
        let server = try makeServer()
        defer { server.stop() }
        let response = try #require(try request(server.port, text))
        #expect(response.status == 400)
        #expect(try request(server.port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 200)
    }

    @Test("a client sending one byte a second is cut off by the request timeout; others are served meanwhile")
    func slowLoris() throws {
        let server = try makeServer { $0.requestTimeout = .seconds(2); $0.idleTimeoutSeconds = 30; $0.threads = 1 }
        defer { server.stop() }
        let slow = try RawClient(port: server.port)
        let started = ContinuousClock.now
        let requestText = Array("GET /hello HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "p", count: 40))\r\n\r\n".utf8)
        let sender = Thread {
            for byte in requestText {
                if !slow.send([byte]) { return }
                Thread.sleep(forTimeInterval: 1)
            }
        }
        sender.start()
        // Others are served while it dribbles, on the server's only thread.
        for _ in 0..<3 {
            #expect(try request(server.port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 200)
            Thread.sleep(forTimeInterval: 0.3)
        }
        let response = slow.readResponse(timeout: .seconds(10))
        let elapsed = ContinuousClock.now - started
        #expect(response?.status == 408)
        #expect(elapsed >= .milliseconds(1_900) && elapsed < .seconds(5))
        #expect(try request(server.port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 200)
    }

    @Test("a silent connection is cut off too")
    func silent() throws {
        let server = try makeServer { $0.requestTimeout = .seconds(1) }
        defer { server.stop() }
        let silent = try RawClient(port: server.port)
        let (bytes, closed) = silent.readAll(timeout: .seconds(4))
        #expect(closed)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 408 "))
    }

    @Test("concurrent clients on a pool of threads, with handlers that block")
    func concurrent() throws {
        let server = try makeServer { $0.threads = 4 }
        defer { server.stop() }
        let failures = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let group = DispatchGroup()
        let started = ContinuousClock.now
        for client in 0..<8 {
            group.enter()
            Thread {
                defer { group.leave() }
                for n in 0..<10 {
                    let path = n % 2 == 0 ? "/slow?ms=50" : "/hello?name=c\(client)"
                    let response = try? request(server.port, "GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    if response?.status == 200 { done.add(1, ordering: .relaxed) } else { failures.add(1, ordering: .relaxed) }
                }
            }.start()
        }
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(done.load(ordering: .relaxed) == 80)
        // 40 sleeps of 50 ms over 4 threads is 0.5 s; one thread would take 2 s.
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test("a blocked handler holds its thread; the other threads keep serving")
    func blockedHandler() throws {
        let server = try makeServer { $0.threads = 2 }
        defer { server.stop() }
        let blocked = try RawClient(port: server.port)
        blocked.send("GET /slow?ms=1500 HTTP/1.1\r\nHost: x\r\n\r\n")
        Thread.sleep(forTimeInterval: 0.2)
        let started = ContinuousClock.now
        for _ in 0..<5 {
            #expect(try request(server.port, "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?.status == 200)
        }
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(blocked.readResponse()?.text == "slept\n")
    }

    @Test("the connection limit: connections over it wait until one closes")
    func connectionLimit() throws {
        let server = try makeServer { $0.maxConnections = 4 }
        defer { server.stop() }
        var held: [RawClient] = []
        for _ in 0..<4 { held.append(try RawClient(port: server.port)) }
        Thread.sleep(forTimeInterval: 0.2)
        let extra = try RawClient(port: server.port)
        extra.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(extra.readResponse(timeout: .seconds(1)) == nil)
        held.removeAll()
        #expect(extra.readResponse(timeout: .seconds(3))?.status == 200)
        #expect(try request(server.port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")?.status == 200)
    }

    @Test("rejections can be rendered by the application")
    func rejection() throws {
        let server = try HTTPServer(
            configuration: HTTPServerConfiguration(listen: ListenAddress(host: "127.0.0.1", port: 0), threads: 1, maxBodyBytes: 10),
            rejection: { status, message in
                HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array("{\"error\":{\"code\":\"\(status)\"}}".utf8))
            },
            handler: testRouter().handler)
        defer { server.stop() }
        let response = try #require(try request(server.port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n"))
        #expect(response.status == 413)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.text == "{\"error\":{\"code\":\"413\"}}")
    }

    @Test("configuration out of range is refused before anything starts")
    func invalidConfiguration() {
        #expect(throws: HTTPServerError.self) { try makeServer { $0.threads = 0 } }
        #expect(throws: HTTPServerError.self) { try makeServer { $0.connectionMemoryBytes = $0.maxHeaderBytes } }
        #expect(throws: HTTPServerError.self) { try makeServer { $0.listen = ListenAddress(host: "no-such-host.invalid", port: 0) } }
    }
}

@Suite("HTTPS")
struct HTTPSTests {
    @Test("TLS from PEM files made by openssl; plain HTTP on the TLS port gets nowhere")
    func tls() throws {
        #expect(HTTPServer.supportsTLS, "Debian's libmicrohttpd is built with GnuTLS")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("quire-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        guard run("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                                       "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]) != nil else {
            Issue.record("openssl is missing or failed")
            return
        }
        let tls = try HTTPServerConfiguration.TLS(certificateFile: cert, keyFile: key)
        let server = try makeServer { $0.tls = tls }
        defer { server.stop() }
        let body = try #require(run("/usr/bin/curl", ["-sS", "--cacert", cert, "https://127.0.0.1:\(server.port)/hello?name=tls"]))
        #expect(body == "hello tls\n")
        let posted = try #require(run("/usr/bin/curl", ["-sS", "--cacert", cert, "--data-binary", "abc", "-H", "Content-Type: text/x",
                                                        "https://127.0.0.1:\(server.port)/echo"]))
        #expect(posted == "abc")
        let plain = try RawClient(port: server.port)
        plain.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(!String(decoding: plain.readAll(timeout: .seconds(3)).bytes, as: UTF8.self).contains("hello"))
        #expect(try #require(run("/usr/bin/curl", ["-sS", "--cacert", cert, "https://127.0.0.1:\(server.port)/hello"])) == "hello world\n")
    }

    @Test("missing or non-PEM files are errors")
    func badFiles() throws {
        #expect(throws: HTTPServerError.self) { try HTTPServerConfiguration.TLS(certificateFile: "/nonexistent/cert.pem", keyFile: "/nonexistent/key.pem") }
        #expect(throws: HTTPServerError.self) { try HTTPServerConfiguration.TLS(certificateFile: "/etc/hostname", keyFile: "/etc/hostname") }
    }
}
