import Testing
@testable import QuireHTTP

@Suite("HTTP router")
struct HTTPRouterTests {
    func router() -> HTTPRouter {
        var router = HTTPRouter()
        router.post("/vision/v3.2/read/analyze") { _, _ in .text(202, "analyze") }
        router.get("/vision/v3.2/read/analyzeResults/{id}") { _, p in .text(200, "result \(p["id"] ?? "")") }
        router.post("/{project}/{region}/annotateImage") { _, p in .text(200, "callable \(p["project"] ?? "")/\(p["region"] ?? "")") }
        router.post("/annotateImage") { _, _ in .text(200, "callable") }
        router.post("/{tenant}/oauth2/token") { _, p in .text(200, "token \(p["tenant"] ?? "")") }
        router.post("/oauth2/token") { _, _ in .text(200, "token") }
        router.post("/v1/images:annotate") { _, _ in .text(200, "vision") }
        return router
    }

    func answer(_ method: String, _ path: String) -> (Int, String) {
        let response = router().respond(to: HTTPRequest(method: method, path: path))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    @Test("literal segments, parameters, and literals before parameters")
    func matching() {
        #expect(answer("POST", "/vision/v3.2/read/analyze") == (202, "analyze\n"))
        #expect(answer("GET", "/vision/v3.2/read/analyzeResults/abc-123") == (200, "result abc-123\n"))
        #expect(answer("POST", "/my-project/us-central1/annotateImage") == (200, "callable my-project/us-central1\n"))
        #expect(answer("POST", "/annotateImage") == (200, "callable\n"))
        #expect(answer("POST", "/contoso/oauth2/token") == (200, "token contoso\n"))
        #expect(answer("POST", "/oauth2/token") == (200, "token\n"))
        #expect(answer("POST", "/v1/images:annotate") == (200, "vision\n"))
        #expect(answer("POST", "/v1/images:annotate/") == (200, "vision\n"))
    }

    @Test("404 for unknown paths, 405 with every allowed method for known ones, HEAD served by GET")
    func failures() {
        #expect(answer("GET", "/vision/v3.2/read/analyzeResults").0 == 404)
        #expect(answer("GET", "/").0 == 404)
        let wrong = router().respond(to: HTTPRequest(method: "GET", path: "/vision/v3.2/read/analyze"))
        #expect(wrong.status == 405)
        #expect(wrong.headers["Allow"] == "POST")
        let delete = router().respond(to: HTTPRequest(method: "DELETE", path: "/vision/v3.2/read/analyzeResults/1"))
        #expect(delete.headers["allow"] == "GET, HEAD")
        #expect(answer("HEAD", "/vision/v3.2/read/analyzeResults/9") == (200, "result 9\n"))
    }

    @Test("a group's refusals answer its routes' other methods, the server's refusals of them, and unknown paths under its prefix")
    func groups() {
        var router = HTTPRouter()
        let azure = HTTPRouter.Refusals(notFound: { .text(404, "azure missing \($0.path)") },
                                        methodNotAllowed: { .text(405, "azure \($0.method) \($1.joined(separator: ","))") },
                                        rejection: { status, message, _ in .text(status, "azure \(message)") })
        let callable = HTTPRouter.Refusals(notFound: { _ in .text(404, "callable missing") }, methodNotAllowed: { _, _ in .text(400, "callable method") },
                                           rejection: { status, _, _ in .text(status, "callable refused") })
        router.group(azure, prefix: "/vision/") { $0.post("/vision/v3.2/read/analyze") { _, _ in .text(202, "analyze") } }
        router.group(callable) { $0.post("/{project}/{region}/annotateImage") { _, _ in .text(200, "callable") } }
        router.post("/v1/images:annotate") { _, _ in .text(200, "vision") }
        router.notFound = { _ in .text(404, "default missing") }
        func answer(_ method: String, _ path: String) -> (Int, String) {
            let response = router.respond(to: HTTPRequest(method: method, path: path))
            return (response.status, String(decoding: response.body, as: UTF8.self))
        }
        #expect(answer("POST", "/vision/v3.2/read/analyze") == (202, "analyze\n"))
        #expect(answer("GET", "/vision/v3.2/read/analyze") == (405, "azure GET POST\n"))
        #expect(answer("GET", "/vision/nothing") == (404, "azure missing /vision/nothing\n"))
        // The route's group, not the prefix the path is under.
        #expect(answer("GET", "/vision/x/annotateImage") == (400, "callable method\n"))
        #expect(answer("GET", "/a/b/c/annotateImage") == (404, "default missing\n"))
        #expect(answer("GET", "/v1/images:annotate").0 == 405)
        #expect(answer("GET", "/v1/images:annotate").1.hasPrefix("method GET not allowed"))
        let head = { (path: String) in HTTPRequest(method: "POST", path: path) }
        #expect(String(decoding: router.rejection(413, "too big", head("/vision/v3.2/read/analyze")).body, as: UTF8.self) == "azure too big\n")
        #expect(String(decoding: router.rejection(431, "too big", head("/vision/unknown")).body, as: UTF8.self) == "azure too big\n")
        #expect(String(decoding: router.rejection(413, "too big", head("/p/r/annotateImage")).body, as: UTF8.self) == "callable refused\n")
        #expect(router.rejection(413, "too big", head("/v1/images:annotate")).status == 413)
        #expect(String(decoding: router.rejection(413, "too big", head("/elsewhere")).body, as: UTF8.self) == "too big\n")
    }

    @Test("headers: case-insensitive lookup, set replaces, order kept")
    func headers() {
        var headers: HTTPHeaders = ["Content-Type": "a", "X-One": "1"]
        headers.add("x-one", "2")
        #expect(headers["content-type"] == "a")
        #expect(headers.values("X-ONE") == ["1", "2"])
        headers.set("X-One", "3")
        #expect(headers.values("x-one") == ["3"])
        #expect(headers.fields.map(\.name) == ["Content-Type", "X-One"])
    }
}
