import Foundation
import QuireFormats
import QuireHTTP
import QuireWire

/// Cloud Vision v1 `POST /v1/images:annotate` (REST, proto3 JSON): the text features only.
///
/// What goes wrong with the whole call (JSON that does not parse, base64 that does not decode, an
/// image URL not on the allow-list, no text feature) is HTTP 400 with `{"error":{"code","message","status"}}`, as Google
/// answers; what goes wrong with one image read (not an image, no worker, a URL that could not be
/// fetched) is that response's `error`, and the batch is still 200. A refused token is 401 for the whole call.
/// Google's front answers any path no API owns, so this is the gateway's default family.
public enum CloudVisionAPI: APIDialect {
    /// `AnnotateImageRequest`, leniently: `features` may be a list (Google's API) or one object (the
    /// Firebase tutorial's `annotateImage` call).
    struct ImageRequest: Decodable {
        struct Image: Decodable {
            struct Source: Decodable {
                var imageUri: String?
                var gcsImageUri: String?
            }
            var content: String?
            var source: Source?
        }
        /// `type` as its name or, as Google's REST clients send it (`$alt=json;enum-encoding=int`),
        /// as its number.
        struct Feature: Decodable {
            var type: String?

            enum CodingKeys: String, CodingKey { case type }

            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                if let number = try? c.decodeIfPresent(Int.self, forKey: .type) {
                    type = Self.names[number] ?? "TYPE_\(number)"
                } else {
                    type = try c.decodeIfPresent(String.self, forKey: .type)
                }
            }

            /// `google.cloud.vision.v1.Feature.Type` numbers of the text features.
            static let names = [5: "TEXT_DETECTION", 11: "DOCUMENT_TEXT_DETECTION"]
        }
        struct Context: Decodable {
            var languageHints: [String]?
        }
        var image: Image?
        var features: [Feature]
        var imageContext: Context?

        enum CodingKeys: String, CodingKey { case image, features, imageContext }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            image = try c.decodeIfPresent(Image.self, forKey: .image)
            if let list = try? c.decodeIfPresent([Feature].self, forKey: .features) {
                features = list
            } else if let one = try c.decodeIfPresent(Feature.self, forKey: .features) {
                features = [one]
            } else {
                features = []
            }
            imageContext = try c.decodeIfPresent(Context.self, forKey: .imageContext)
        }
    }

    /// `{"requests": […]}` of `images:annotate` and `files:annotate`.
    struct Batch<Item: Decodable>: Decodable {
        var requests: [Item]?
    }

    /// A request that cannot be served at all: Google's status name and the HTTP code it goes with.
    struct Refusal: Error {
        var status: Int
        var message: String
    }

    /// The feature to read with, of the features `field` asks for: DOCUMENT_TEXT_DETECTION when it is
    /// among them, else TEXT_DETECTION; a request without a text feature is refused.
    static func feature(_ features: [ImageRequest.Feature], field: String) -> Result<CloudVision.Feature, Refusal> {
        let types = features.compactMap(\.type)
        guard !types.isEmpty else {
            return .failure(Refusal(status: 400, message: "No feature is specified in \(field).features: use TEXT_DETECTION or DOCUMENT_TEXT_DETECTION."))
        }
        let known = types.compactMap(CloudVision.Feature.init(rawValue:))
        guard let feature = known.contains(.documentTextDetection) ? .documentTextDetection : known.first else {
            return .failure(Refusal(status: 400, message: "\(field).features: this server reads text only (TEXT_DETECTION, DOCUMENT_TEXT_DETECTION), not \(types.joined(separator: ", "))."))
        }
        return .success(feature)
    }

    /// The bytes of `content` at `field` (base64), or Google's 400.
    static func bytes(_ content: String, field: String) -> Result<[UInt8], Refusal> {
        guard let bytes = decodeBase64(content) else {
            return .failure(Refusal(status: 400, message: "Invalid value at '\(field)' (TYPE_BYTES), Base64 decoding failed."))
        }
        return .success(bytes)
    }

    /// One image to read: its call, and the URL its bytes are fetched from (then `call.image` is empty).
    struct Item {
        var call: OCRCall
        var url: String?
        var feature: CloudVision.Feature

        /// The call with the image's bytes, fetching them if they are at a URL.
        func resolved(_ source: ImageSource) -> Result<OCRCall, FetchFailure> {
            guard let url else { return .success(call) }
            return source.fetch(url).map { bytes in
                var call = self.call
                call.image = bytes
                return call
            }
        }
    }

    static func addRoutes(to router: inout HTTPRouter, _ services: GatewayServices) {
        router.post("/v1/images:annotate") { request, _ in annotate(request, recognize: services.ocr, fetch: services.fetch) }
        router.post("/v1/files:annotate") { request, _ in annotateFiles(request, recognize: services.ocr) }
    }

    /// The calls of a batch (`images:annotate`'s, `files:annotate`'s), one per request (`call` makes
    /// each, given its field's name), or Google's 400 for the whole batch: a body that is not one, holds
    /// no request (`example`: what to send) or one that cannot be read.
    static func calls<Item: Decodable, Call>(_ request: HTTPRequest, example: String,
                                             _ call: (Item, _ field: String) -> Result<Call, Refusal>) -> Result<[Call], Refusal> {
        let batch: Batch<Item>
        do {
            batch = try JSONDecoder().decode(Batch<Item>.self, from: Data(request.body))
        } catch {
            return .failure(Refusal(status: 400, message: "Invalid JSON payload received. \(describe(error))"))
        }
        let requests = batch.requests ?? []
        guard !requests.isEmpty else { return .failure(Refusal(status: 400, message: "No requests were specified: send \(example).")) }
        var calls: [Call] = []
        for (index, item) in requests.enumerated() {
            switch call(item, "requests[\(index)]") {
            case .success(let made): calls.append(made)
            case .failure(let refusal): return .failure(refusal)
            }
        }
        return .success(calls)
    }

    static func annotate(_ request: HTTPRequest, recognize: OCRCaller, fetch: ImageSource) -> HTTPResponse {
        let credential = Credential.google(request)
        let items: [Item]
        switch calls(request, example: #"{"requests":[{"image":{"content":…},"features":[…]}]}"#, { (item: ImageRequest, field) in
            call(item, field: field, credential: credential, fetch: fetch)
        }) {
        case .success(let made): items = made
        case .failure(let refusal): return Self.error(refusal.status, refusal.message)
        }
        var responses: [CloudVision.Response] = []
        for item in items {
            let feature = item.feature
            let call: OCRCall
            switch item.resolved(fetch) {
            case .success(let resolved): call = resolved
            case .failure(let failure):
                // As Google answers a URL it could not get: that image's error, the batch still 200.
                responses.append(CloudVision.Response(error: CloudVision.Status(code: GRPCStatus(failure.reason).rawValue, message: message(failure))))
                continue
            }
            // images:annotate reads images; Google answers a PDF there as bad image data (PDFs go to files:annotate).
            if PDFSniff.isPDF(call.image) {
                responses.append(CloudVision.Response(error: CloudVision.Status(code: 3, message: "Bad image data: a PDF is read by files:annotate, not images:annotate.")))
                continue
            }
            switch recognize(call) {
            case .success(let result):
                responses.append(CloudVision.response(result, feature: feature))
            case .failure(let failure):
                switch itemFailure(failure) {
                case .wholeCall(let response): return response
                case .item(let status): responses.append(CloudVision.Response(error: status))
                }
            }
        }
        return Gateway.json(200, CloudVision.BatchResponse(responses: responses))
    }

    /// The `ocr` call for one `AnnotateImageRequest`, or why there is none. `image.content` wins
    /// over `image.source` (Google: "If both content and source are provided for an image, content
    /// takes precedence"), `imageUri` over `gcsImageUri`; a URL must pass `fetch`'s allow-list here,
    /// before any image of the call is read, and is fetched later (``Item/resolved(_:)``).
    static func call(_ item: ImageRequest, field: String, credential: Credential, fetch: ImageSource) -> Result<Item, Refusal> {
        let feature: CloudVision.Feature
        switch Self.feature(item.features, field: field) {
        case .success(let found): feature = found
        case .failure(let refusal): return .failure(refusal)
        }
        let languages = item.imageContext?.languageHints
        if item.image?.content?.isEmpty ?? true, let source = item.image?.source,
           let (name, url) = source.imageUri.map({ ("imageUri", $0) }) ?? source.gcsImageUri.map({ ("gcsImageUri", $0) }) {
            if let refusal = fetch.refusal(url) {
                return .failure(Refusal(status: 400, message: "\(field).image.source.\(name): \(refusal.message); send the bytes in \(field).image.content (base64)."))
            }
            return .success(Item(call: OCRCall(image: [], mode: feature.mode, languages: languages, credential: credential), url: url, feature: feature))
        }
        guard let content = item.image?.content, !content.isEmpty else {
            return .failure(Refusal(status: 400, message: "\(field).image.content is empty: send the image's bytes, base64-encoded."))
        }
        return bytes(content, field: "\(field).image.content").map { bytes in
            Item(call: OCRCall(image: bytes, mode: feature.mode, languages: languages, credential: credential), url: nil, feature: feature)
        }
    }

    /// The message of an image whose URL was not fetched (its status is ``GRPCStatus``'s for the reason):
    /// Google's own sentence when it could not be downloaded.
    static func message(_ failure: FetchFailure) -> String {
        failure.reason == .couldNotDownload ? "We can not access the URL currently. Please download the content and pass it in. (\(failure.message))"
                                            : failure.message
    }

    /// Standard or URL-safe base64, padded or not, as proto3 JSON accepts `bytes`. Works on the UTF-8
    /// bytes (a photo is megabytes of base64: per-Character work would cost more than the rest of the call).
    static func decodeBase64(_ text: String) -> [UInt8]? {
        var normalized: [UInt8] = []
        normalized.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): continue
            case UInt8(ascii: "-"): normalized.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): normalized.append(UInt8(ascii: "/"))
            default: normalized.append(byte)
            }
        }
        // Padding only at the end (Foundation's decoder takes `ab=c`, which Google refuses).
        let padding = normalized.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        if padding > 2 || normalized.dropLast(padding).contains(UInt8(ascii: "=")) { return nil }
        let remainder = normalized.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { normalized += [UInt8](repeating: UInt8(ascii: "="), count: 4 - remainder) }
        return Data(base64Encoded: Data(normalized)).map(Array.init)
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
             DecodingError.keyNotFound(_, let context):
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? "The body is not JSON of the expected shape." : "Invalid value at '\(path.drop { $0 == "." })'."
        default:
            return "The body is not JSON."
        }
    }

    /// How Google answers one image's or file's failure in a batch.
    enum ItemFailure {
        /// A refused key or token: auth is about the whole call.
        case wholeCall(HTTPResponse)
        /// Anything else: that item's `google.rpc.Status`, the batch still 200.
        case item(CloudVision.Status)
    }

    static func itemFailure(_ failure: GatewayFailure) -> ItemFailure {
        if failure.isInvalidAPIKey || failure.kind == .unauthenticated || failure.kind == .forbidden { return .wholeCall(Self.failure(failure)) }
        return .item(CloudVision.Status(code: GRPCStatus(failure.kind).rawValue, message: failure.message))
    }

    /// A failure of the whole call: Google's 400 with `API_KEY_INVALID` for an unknown key, else the
    /// failure's status.
    static func failure(_ failure: GatewayFailure) -> HTTPResponse {
        failure.isInvalidAPIKey ? invalidKey : Self.error(failure.kind.httpStatus, failure.message)
    }

    static func notFound(_ request: HTTPRequest) -> HTTPResponse {
        Self.error(404, "The requested URL \(request.path) was not found on this server.")
    }

    static func methodNotAllowed(_ request: HTTPRequest, allowed: [String]) -> HTTPResponse {
        Self.error(405, wrongMethod(request, allowed: allowed))
    }

    static func rejection(_ status: Int, _ message: String) -> HTTPResponse {
        Self.error(status, message)
    }

    /// Google's answer to an unknown or revoked API key: 400 INVALID_ARGUMENT (not 401) with the
    /// `google.rpc.ErrorInfo` detail whose `reason` client libraries look at.
    public static let invalidKey = error(400, APIKeyTokens.invalidKeyMessage, details: [ErrorInfo()])

    /// `google.rpc.ErrorInfo`, the detail of ``invalidKey``.
    struct ErrorInfo: Encodable {
        var type = "type.googleapis.com/google.rpc.ErrorInfo"
        var reason = "API_KEY_INVALID"
        var domain = "googleapis.com"
        var metadata = ["service": "vision.googleapis.com"]
        enum CodingKeys: String, CodingKey {
            case type = "@type"
            case reason, domain, metadata
        }
    }

    /// Google's error body: `{"error":{"code":400,"message":"…","status":"INVALID_ARGUMENT"}}`, the
    /// status named as Google's front names it (``GRPCStatus/init(answering:)``).
    public static func error(_ status: Int, _ message: String) -> HTTPResponse {
        error(status, message, details: nil)
    }

    static func error(_ status: Int, _ message: String, details: [ErrorInfo]?) -> HTTPResponse {
        struct Body: Encodable {
            struct Inner: Encodable {
                var code: Int
                var message: String
                var status: String
                var details: [ErrorInfo]?
            }
            var error: Inner
        }
        return Gateway.json(status, Body(error: .init(code: status, message: message, status: GRPCStatus(answering: status).name, details: details)))
    }
}
