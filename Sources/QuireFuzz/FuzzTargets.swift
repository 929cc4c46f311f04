import Foundation
import Imaging
import QuireGateway
import QuireHTTP
import QuireJWT
import QuireWire

/// The fuzz targets' bodies: what Quire does with bytes a stranger sends, checked for what must hold
/// whatever they are. `FuzzTesting/` wraps each in a libFuzzer entry point (built with
/// `-sanitize=fuzzer,address`); the unit tests replay the committed corpora through them. A check
/// that fails stops the process (`precondition`): libFuzzer keeps the input that did it.
public enum FuzzTargets {
    /// The targets by name, as `QUIRE_FUZZ_TARGET` (FuzzTesting/) and `FuzzTesting/Corpus/<name>` call them.
    public static let all: [String: @Sendable ([UInt8]) -> Void] = [
        "wire": wire, "json": json, "images": images, "gateway": gateway,
    ]

    /// `bytes` cut into frames: a length byte, then that many bytes (what is left when fewer), until
    /// none are left. Lets the fuzzer write multipart messages with empty and long frames alike.
    static func frames(_ bytes: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var at = 0
        while at < bytes.count {
            let length = Int(bytes[at])
            let end = min(bytes.count, at + 1 + length)
            out.append(Array(bytes[(at + 1)..<end]))
            at = end
        }
        return out
    }

    /// The ZeroMQ messages the broker, the workers and the clients decode: Majordomo 0.1 and 0.2 and
    /// Majortomo at the broker and at a worker, a client's reply, Titanic's replies, the heartbeat
    /// extension, a job's progress; and the broker's envelope taken out of a request's first frame,
    /// whose result must still be the JSON it was, without the members taken out.
    public static func wire(_ bytes: [UInt8]) {
        let message = frames(bytes)
        _ = MajordomoCodec.decodeAtBroker(message)
        for dialect in Dialect.allCases {
            _ = MajordomoCodec.decodeAtWorker(dialect, message)
            _ = MajordomoCodec.decodeClientReply(dialect, message)
        }
        _ = Titanic.outcome(of: message)
        _ = MajordomoCodec.heartbeatExtension(message)
        _ = JobProgress(partial: message)
        _ = message.first.map(Titanic.status(of:))
        _ = WorkerReport(jsonFrame: bytes)
        envelope(bytes)
    }

    /// ``BrokerEnvelope/split(_:removing:)`` on a frame: where the frame is a JSON object and the
    /// split succeeds, what is forwarded is a JSON object too, holds every other member, and none of
    /// those taken out; the token taken is the frame's own.
    static func envelope(_ frame: [UInt8]) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(frame), options: [.fragmentsAllowed])) as? [String: Any] else {
            _ = BrokerEnvelope.split(frame, removing: ["token"])
            _ = BrokerEnvelope.split(frame)
            return
        }
        for keys in [Set(["token"]), BrokerEnvelope.reservedKeys] {
            guard case .success(let (envelope, forwarded)) = BrokerEnvelope.split(frame, removing: keys) else { continue }
            let out = (try? JSONSerialization.jsonObject(with: Data(forwarded))) as? [String: Any]
            precondition(out != nil, "the forwarded frame is not a JSON object: \(String(decoding: forwarded, as: UTF8.self))")
            let kept = Set(object.keys).subtracting(keys)
            precondition(Set(out!.keys) == kept, "members \(Set(out!.keys)) forwarded, \(kept) expected")
            if keys.contains("token"), let token = object["token"] as? String { precondition(envelope.token == token, "the token taken is not the frame's") }
        }
    }

    /// The JSON Quire decodes from strangers: a recognition request, token requests and responses, a
    /// job's status, a key set, a result (as a reader gets it back), page ranges, and a token checked
    /// against a key set (its JSON segments in base64url).
    public static func json(_ bytes: [UInt8]) {
        let data = Data(bytes)
        if let request = try? OCRRequest.parse(bytes) {
            // What parses says what it asks within the request's limits.
            precondition(request.languages.map { !$0.isEmpty } ?? true, "a request with an empty language list was accepted")
        }
        _ = try? JSONDecoder().decode(TokenRequest.self, from: data)
        _ = try? JSONDecoder().decode(TokenResponse.self, from: data)
        _ = JobStatus(jsonFrame: bytes)
        _ = try? JSONDecoder().decode(OCRResult.self, from: data)
        let text = String(decoding: bytes, as: UTF8.self)
        if let pages = PageRanges.parse(text) { precondition(pages.allSatisfy { $0 >= 1 }, "page ranges hold a page before the first") }
        _ = Base64URL.decode(text)
        _ = try? JWKS(jsonFrame: bytes)
        _ = verifier.verify(text, now: 1_800_000_000)
        _ = verifier.verify(text.split(separator: ".").map { Base64URL.encode(Array($0.utf8)) }.joined(separator: "."), now: 1_800_000_000)
    }

    static let verifier: TokenVerifier = {
        let key = "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"kid\":\"k1\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}]}"
        return TokenVerifier(jwks: try! JWKS(jsonFrame: Array(key.utf8)))
    }()

    /// The image and PDF sniffers, the header reader (sizes checked against the limits before any
    /// pixel is decoded), the EXIF orientation of a JPEG, and a TIFF's pages.
    public static func images(_ bytes: [UInt8]) {
        let format = ImageFormat.sniff(bytes)
        _ = PDFSniff.isPDF(bytes)
        if let header = try? Image.header(bytes) {
            precondition(header.format == format, "the header's format is not the sniffed one")
            precondition(header.width > 0 && header.height > 0 && header.pages >= 0, "a header of \(header.width)×\(header.height), \(header.pages) pages")
            if header.format == .tiff {
                for page in 0..<min(header.pages, 4) { _ = try? Image.tiffPageSize(bytes, page: page) }
            }
        }
        let orientation = EXIFOrientation.read(jpeg: bytes)
        precondition((1...8).contains(orientation), "EXIF orientation \(orientation)")
    }

    /// A result every OCR call of the gateway target answers with: one page, one line, two words.
    static let result: OCRResult = try! JSONDecoder().decode(OCRResult.self, from: Data(#"""
{"text":"Tabs VS\nspa-\nces\n\nHello\n","pages":[{"pageNumber":1,"width":600,"height":400,"unit":"pixel","rotation":0,"mirrored":false,"deskewAngle":0,"transform":[1,0,0,0,1,0],"recognitionScale":1,"text":"Tabs VS\nspa-\nces\n\nHello\n","confidence":0.82,"languages":["en"],"blocks":[{"text":"Tabs VS\nspa-\nces\n\nHello","boundingBox":{"x":0,"y":43,"width":417,"height":267},"polygon":[{"x":0,"y":43},{"x":417,"y":43},{"x":417,"y":310},{"x":0,"y":310}],"confidence":0.85,"languages":["en"],"paragraphs":[{"text":"Tabs VS\nspa-\nces","boundingBox":{"x":0,"y":43,"width":313,"height":167},"polygon":[{"x":0,"y":43},{"x":313,"y":43},{"x":313,"y":210},{"x":0,"y":210}],"confidence":0.8,"languages":["en"],"lines":[{"text":"Tabs VS","boundingBox":{"x":0,"y":43,"width":313,"height":52},"polygon":[{"x":0,"y":43},{"x":313,"y":43},{"x":313,"y":95},{"x":0,"y":95}],"confidence":0.69,"languages":["en"],"baseline":{"start":{"x":0,"y":87},"end":{"x":313,"y":87}},"direction":"ltr","words":[{"text":"Tabs","boundingBox":{"x":0,"y":43,"width":153,"height":40},"polygon":[{"x":0,"y":43},{"x":153,"y":43},{"x":153,"y":83},{"x":0,"y":83}],"confidence":0.42,"languages":["en"],"break":"space","symbols":[{"text":"T","boundingBox":{"x":0,"y":43,"width":38,"height":40},"polygon":[{"x":0,"y":43},{"x":38,"y":43},{"x":38,"y":83},{"x":0,"y":83}],"confidence":0.42},{"text":"a","boundingBox":{"x":38,"y":43,"width":38,"height":40},"polygon":[{"x":38,"y":43},{"x":76,"y":43},{"x":76,"y":83},{"x":38,"y":83}],"confidence":0.43}]},{"text":"VS","boundingBox":{"x":259,"y":55,"width":54,"height":40},"polygon":[{"x":259,"y":55},{"x":313,"y":55},{"x":313,"y":95},{"x":259,"y":95}],"confidence":0.96,"languages":["en"],"break":"line","symbols":[{"text":"V","boundingBox":{"x":259,"y":55,"width":27,"height":40},"polygon":[{"x":259,"y":55},{"x":286,"y":55},{"x":286,"y":95},{"x":259,"y":95}],"confidence":0.96},{"text":"S","boundingBox":{"x":286,"y":55,"width":27,"height":40},"polygon":[{"x":286,"y":55},{"x":313,"y":55},{"x":313,"y":95},{"x":286,"y":95}],"confidence":0.97}]}]}]}]}]}],"metadata":{"engine":"tesseract 5.3.0","languages":["en"],"mode":"document","format":"png","pageCount":1,"timings":{"decodeMs":1,"recognizeMs":2,"encodeMs":0},"steps":[]}}
"""#.utf8))

    /// The gateway's routes (every API family) behind a worker that answers at once: an HTTP request
    /// made from the bytes (a method, one of the routes' paths with a tail, a query, headers and a
    /// body) gets a response with an HTTP status, and a JSON body where the response says JSON.
    public static func gateway(_ bytes: [UInt8]) {
        guard bytes.count >= 2 else { return }
        let methods = ["POST", "GET", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "post"]
        let paths = ["/v1/images:annotate", "/v1/files:annotate", "/annotateImage", "/p/r/annotateImage", "/vision/v3.2/read/analyze",
                     "/vision/v3.2/read/analyzeResults/", "/vision/v2.0/read/core/asyncBatchAnalyze", "/vision/v2.0/read/operations/",
                     "/computervision/imageanalysis:analyze", "/documentintelligence/documentModels/prebuilt-receipt:analyze",
                     "/documentintelligence/documentModels/prebuilt-read/analyzeResults/", "/formrecognizer/documentModels/prebuilt-read:analyze",
                     "/formrecognizer/documentModels/prebuilt-receipt/analyzeResults/", "/oauth2/token", "/t/oauth2/token", "/"]
        let parts = bytes.dropFirst(2).split(separator: 0, maxSplits: 3, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        func part(_ i: Int) -> String { parts.indices.contains(i) ? parts[i] : "" }
        let query = part(1).split(separator: "&").map { pair -> (name: String, value: String) in
            let two = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(two[0]), two.count > 1 ? String(two[1]) : "")
        }
        var headers = HTTPHeaders()
        for line in part(2).split(separator: "\n") {
            let two = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            headers.add(String(two[0]), two.count > 1 ? String(two[1]).trimmingCharacters(in: .whitespaces) : "")
        }
        let body = parts.count > 3 ? Array(bytes.dropFirst(2).split(separator: 0, maxSplits: 3, omittingEmptySubsequences: false)[3]) : []
        let request = HTTPRequest(method: methods[Int(bytes[0]) % methods.count], path: paths[Int(bytes[1]) % paths.count] + part(0), query: query,
                                  headers: headers, body: body)
        let response = router.respond(to: request)
        precondition((100...599).contains(response.status), "HTTP status \(response.status)")
        if response.headers["Content-Type"]?.contains("json") == true, !response.body.isEmpty {
            precondition((try? JSONSerialization.jsonObject(with: Data(response.body), options: [.fragmentsAllowed])) != nil,
                         "a \(response.status) response says JSON and is not: \(String(decoding: response.body.prefix(200), as: UTF8.self))")
        }
    }

    static let router: HTTPRouter = Gateway.router(
        recognize: { _ in .success(result) },
        jobs: JobBackend(submit: { _ in .success("0123456789abcdef0123456789abcdef") }, poll: { _, _ in .success(nil) }))
}
