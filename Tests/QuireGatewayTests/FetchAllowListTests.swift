import Foundation
@testable import QuireGateway
import QuireHTTP
import Synchronization
import Testing

/// `--fetch-allow`: which prefixes are valid, and which URLs they let through. The URLs refused are
/// the classic SSRF tricks: a look-alike host, user info that hides the real host, another port or
/// scheme, `..` (plain and encoded), encoded slashes.
@Suite("Fetch allow-list")
struct FetchAllowListTests {
    static let list: FetchAllowList = {
        // The tests below need a valid list; a throwing initialiser in a static cannot use #require.
        (try? FetchAllowList(parsing: " https://Images.Example.COM/scans/ , http://10.0.0.5:9000/bucket, http://[::1]:8080/img/")) ?? .none
    }()

    @Test("prefixes are normalised: scheme and host lower-cased, the default port explicit")
    func normalised() throws {
        let list = try FetchAllowList(parsing: "HTTPS://Images.Example.COM/scans/,http://10.0.0.5:9000/bucket,http://[::1]:8080/img/,http://h")
        #expect(list.prefixes.map(\.description) == [
            "https://images.example.com:443/scans/", "http://10.0.0.5:9000/bucket", "http://[::1]:8080/img/", "http://h:80/",
        ])
    }

    @Test("a bad prefix is refused with the reason", arguments: [
        ("ftp://images.example.com/", "only http and https"),
        ("images.example.com/scans/", "not an absolute URL"),
        ("https://user:pw@images.example.com/", "user info"),
        ("https://images.example.com/?a=1", "no query"),
        ("https://images.example.com/#x", "no fragment"),
        ("https://images.example.com/a/../b/", "'..'"),
        ("https:///scans/", "no host"),
        ("https://images.example.com:0/", "port"),
        ("https://images%2eexample.com/", "not a DNS name"),
        ("https://images.example.com/a%2Fb/", "encoded slash"),
        ("https://images.example.com/a b/", "white space"),
        (" , ", "no prefix"),
    ])
    func badPrefix(_ text: String, _ words: String) {
        #expect {
            _ = try FetchAllowList(parsing: text)
        } throws: { error in
            (error as? FetchAllowList.Invalid)?.description.contains(words) == true
        }
    }

    @Test("URLs under a prefix are allowed, and the URL fetched is the normalised one", arguments: [
        ("https://images.example.com/scans/a.png", "https://images.example.com/scans/a.png"),
        ("https://IMAGES.example.com/scans/a.png", "https://images.example.com/scans/a.png"),
        ("HTTPS://images.example.com:443/scans/a.png", "https://images.example.com/scans/a.png"),
        ("https://images.example.com/scans/sub/a.png?v=2#frag", "https://images.example.com/scans/sub/a.png?v=2"),
        ("https://images.example.com/scans/%61.png", "https://images.example.com/scans/a.png"),
        ("https://images.example.com/scans/%c3%a9.png", "https://images.example.com/scans/%C3%A9.png"),
        ("http://10.0.0.5:9000/bucket", "http://10.0.0.5:9000/bucket"),
        ("http://10.0.0.5:9000/bucket/x.jpg", "http://10.0.0.5:9000/bucket/x.jpg"),
        ("http://[::1]:8080/img/a.png", "http://[::1]:8080/img/a.png"),
    ])
    func allowed(_ url: String, _ fetched: String) throws {
        let decision = Self.list.decision(url)
        #expect(try decision.get().absoluteString == fetched)
    }

    @Test("look-alike hosts, user info, other ports and schemes, dot segments and encoded separators are refused", arguments: [
        "https://images.example.com.evil.com/scans/a.png",
        "https://images.example.com@evil.com/scans/a.png",
        "https://evil.com@images.example.com/scans/a.png",
        "https://user:pw@images.example.com/scans/a.png",
        "https://images.example.com:8443/scans/a.png",
        "http://images.example.com/scans/a.png",
        "ftp://images.example.com/scans/a.png",
        "file:///etc/passwd",
        "gs://bucket/a.png",
        "data:image/png;base64,aGVsbG8=",
        "https://images.example.com/scans/../secret.png",
        "https://images.example.com/scans/%2e%2e/secret.png",
        "https://images.example.com/scans/.%2E/secret.png",
        "https://images.example.com/scans/./a.png",
        "https://images.example.com/scans%2F..%2Fsecret.png",
        "https://images.example.com/scans\\..\\secret.png",
        "https://images.example.com/scans /a.png",
        "https://images.example.com/other/a.png",
        "https://images.example.com/scans",
        "https://images.example.com./scans/a.png",
        "https://images%2Eexample.com/scans/a.png",
        "http://10.0.0.5:9000/bucket-private/x.jpg",
        "http://10.0.0.5:9000/bucke/x.jpg",
        "http://10.0.0.5/bucket/x.jpg",
        "http://[::1]:8081/img/a.png",
        "http://[::2]:8080/img/a.png",
        "http://[::1]/img/a.png",
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost:8080/img/a.png",
        "",
        "/scans/a.png",
        "https://images.example.com/scans/a.png\u{0}",
        "https://images.exämple.com/scans/a.png",
    ])
    func refused(_ url: String) {
        let decision = Self.list.decision(url)
        guard case .failure(let failure) = decision else {
            Issue.record("\(url) was allowed as \(decision)")
            return
        }
        #expect(failure.reason == .notAllowed)
        #expect(!Self.list.allows(url))
    }

    @Test("with no list nothing is allowed, and the message names the flag")
    func empty() throws {
        let decision = FetchAllowList.none.decision("https://images.example.com/a.png")
        guard case .failure(let failure) = decision else {
            Issue.record("allowed with no list")
            return
        }
        #expect(failure.reason == .notAllowed)
        #expect(failure.message.contains("--fetch-allow"))
        #expect(failure.message.contains("allow-list"))
        #expect(ImageFetcher.none.source.refusal("https://images.example.com/a.png") != nil)
    }
}

/// The routes with a fake image source: what each API answers for a URL allowed, refused, or not fetched.
@Suite("Gateway routes: image URLs")
struct GatewayFetchRoutesTests {
    final class Seen: Sendable {
        let urls = Mutex<[String]>([])
    }

    /// Allows `https://img.test/`; `.../missing` is a 404, `.../big` too large, `.../page` an HTML page.
    static func source(_ seen: Seen) -> ImageSource {
        ImageSource(refusal: { url in url.hasPrefix("https://img.test/") ? nil : FetchFailure(.notAllowed, "the URL is not on this server's allow-list") },
                    fetch: { url in
                        seen.urls.withLock { $0.append(url) }
                        guard url.hasPrefix("https://img.test/") else { return .failure(FetchFailure(.notAllowed, "the URL is not on this server's allow-list")) }
                        if url.hasSuffix("missing") { return .failure(FetchFailure(.couldNotDownload, "could not download the image: the server answered HTTP 404")) }
                        if url.hasSuffix("big") { return .failure(FetchFailure(.tooLarge, "the image at the URL is larger than this server's limit")) }
                        if url.hasSuffix("page") { return .failure(FetchFailure(.notAnImage, "the URL's content is not an image (Content-Type text/html)")) }
                        return .success(Array("hello".utf8))
                    })
    }

    func router(_ calls: GatewayRoutesTests.Calls, _ seen: Seen) throws -> HTTPRouter {
        let result = try #require(GatewayRoutesTests.fixture)
        return Gateway.router(recognize: { call in
            calls.seen.withLock { $0.append(call) }
            return .success(result)
        }, fetch: Self.source(seen))
    }

    func post(_ router: HTTPRouter, _ path: String, _ json: String) throws -> (Int, [String: Any]) {
        let parts = path.split(separator: "?", maxSplits: 1).map(String.init)
        var query: [(name: String, value: String)] = []
        for pair in parts.count > 1 ? parts[1].split(separator: "&") : [] {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            query.append((name: kv[0], value: kv.count > 1 ? kv[1] : ""))
        }
        let response = router.respond(to: HTTPRequest(method: "POST", path: parts[0], query: query, headers: ["Content-Type": "application/json"],
                                                      body: Array(json.utf8)))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        return (response.status, object)
    }

    static func item(_ url: String) -> String {
        #"{"image":{"source":{"imageUri":"\#(url)"}},"features":[{"type":"TEXT_DETECTION"}]}"#
    }

    @Test("Cloud Vision: an allowed URL is read; one not fetched is that image's error; one not allowed is the call's 400")
    func cloudVision() throws {
        let calls = GatewayRoutesTests.Calls()
        let seen = Seen()
        let r = try router(calls, seen)
        let (status, body) = try post(r, "/v1/images:annotate",
                                      #"{"requests":[\#(Self.item("https://img.test/a.png")),\#(Self.item("https://img.test/missing")),\#(Self.item("https://img.test/big"))]}"#)
        #expect(status == 200)
        let responses = try #require(body["responses"] as? [[String: Any]])
        #expect(responses.count == 3)
        #expect(responses[0]["error"] == nil)
        #expect((responses[1]["error"] as? [String: Any])?["code"] as? Int == 14)
        #expect(((responses[1]["error"] as? [String: Any])?["message"] as? String)?.hasPrefix("We can not access the URL currently.") == true)
        #expect((responses[2]["error"] as? [String: Any])?["code"] as? Int == 3)
        #expect(calls.all.map(\.image) == [Array("hello".utf8)])

        let (refused, refusal) = try post(r, "/v1/images:annotate", #"{"requests":[\#(Self.item("https://img.test/a.png")),\#(Self.item("http://169.254.169.254/"))]}"#)
        #expect(refused == 400)
        #expect(((refusal["error"] as? [String: Any])?["message"] as? String)?.contains("requests[1].image.source.imageUri") == true)
        #expect(calls.all.count == 1)
        #expect(seen.urls.withLock { $0 }.count == 3)

        // content wins over source, as Google's docs say.
        let (both, _) = try post(r, "/v1/images:annotate", #"{"requests":[{"image":{"content":"aGk=","source":{"imageUri":"http://nope/"}},"features":[{"type":"TEXT_DETECTION"}]}]}"#)
        #expect(both == 200)
        #expect(calls.all.last?.image == Array("hi".utf8))
    }

    @Test("Firebase: a URL not fetched is the callable's error with the status of Vision's code")
    func firebase() throws {
        let r = try router(GatewayRoutesTests.Calls(), Seen())
        let (status, body) = try post(r, "/annotateImage", #"{"data":\#(Self.item("https://img.test/missing"))}"#)
        #expect(status == 503)
        #expect((body["error"] as? [String: Any])?["status"] as? String == "UNAVAILABLE")
        let (ok, result) = try post(r, "/annotateImage", #"{"data":\#(Self.item("https://img.test/a.png"))}"#)
        #expect(ok == 200)
        #expect(result["result"] != nil)
        let (refused, _) = try post(r, "/annotateImage", #"{"data":\#(Self.item("https://elsewhere/a.png"))}"#)
        #expect(refused == 400)
    }

    @Test("Azure Read and Image Analysis: 400 InvalidImageUrl naming the reason; an allowed URL is read", arguments: [
        ("https://img.test/missing", "HTTP 404"), ("https://img.test/big", "larger"), ("https://img.test/page", "not an image"),
        ("https://elsewhere/a.png", "allow-list"),
    ])
    func azure(_ url: String, _ words: String) throws {
        let calls = GatewayRoutesTests.Calls()
        let r = try router(calls, Seen())
        let (status, body) = try post(r, "/vision/v3.2/read/analyze", #"{"url":"\#(url)"}"#)
        #expect(status == 400)
        let error = try #require(body["error"] as? [String: Any])
        #expect(error["code"] as? String == "InvalidImageUrl")
        #expect((error["message"] as? String)?.contains(words) == true)

        let (iaStatus, iaBody) = try post(r, "/computervision/imageanalysis:analyze?api-version=2023-10-01&features=read", #"{"url":"\#(url)"}"#)
        #expect(iaStatus == 400)
        let iaError = try #require(iaBody["error"] as? [String: Any])
        #expect(iaError["code"] as? String == "InvalidRequest")
        #expect((iaError["innererror"] as? [String: Any])?["code"] as? String == "InvalidImageUrl")
        #expect((iaError["message"] as? String)?.contains(words) == true)

        let (ok, _) = try post(r, "/computervision/imageanalysis:analyze?api-version=2023-10-01&features=read", #"{"url":"https://img.test/a.png"}"#)
        #expect(ok == 200)
        #expect(calls.all.map(\.image) == [Array("hello".utf8)])
    }
}
