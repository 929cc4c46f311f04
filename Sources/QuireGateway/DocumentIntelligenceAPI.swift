import Foundation
import QuireFormats
import QuireHTTP
import QuireWire

/// Azure AI Document Intelligence's analyze operation, over durable jobs as Azure Read's are:
/// `POST /documentintelligence/documentModels/{model}:analyze?api-version=2024-11-30` (and the same
/// under `/formrecognizer` with `api-version=2023-07-31`, ``FormRecognizerAPI``) → `202` with
/// `Operation-Location: …/documentModels/{model}/analyzeResults/{id}?api-version=…`, polled until
/// `succeeded` or `failed` (``DocumentIntelligence/operationResult(status:created:lastUpdated:result:error:model:apiVersion:stringIndexType:)``).
///
/// Models: `prebuilt-read` (text) and `prebuilt-receipt` (text and a receipt's fields, asked of the
/// worker with `fields: ["receipt"]`); any other is the service's `404 ModelNotFound`. The document is
/// the body (`image/*`, `application/pdf`, `application/octet-stream`) or JSON `{"urlSource"}` (fetched
/// from the allow-list only, ``FetchAllowList``) or `{"base64Source"}`. Query: `pages` (`1-3,5`),
/// `locale` (a language hint for the worker), `stringIndexType` (the unit of every span, carried to
/// the poll in `Operation-Location`, since the job itself holds only the `ocr` request); any other
/// parameter (`features`, `outputContentFormat`, `queryFields`…) is ignored, as the service ignores
/// what a model does not use. Errors are the service's `{"error":{"code","message","innererror"}}`,
/// the key's refusals its API Management front's (`"code":"401"`).
public enum DocumentIntelligenceAPI: DocumentIntelligenceDialect {
    static var prefix: String? { "/documentintelligence/" }
    static let family = DocumentIntelligenceFamily(root: "/documentintelligence", version: .v2024_11_30)
}

/// Document Intelligence's predecessor, Form Recognizer 2023-07-31 (`/formrecognizer/…`, the API of
/// `azure-ai-formrecognizer` 3.3): the same operation and result, without 2024-11-30's additions
/// (``DocumentIntelligenceAPI``).
public enum FormRecognizerAPI: DocumentIntelligenceDialect {
    static var prefix: String? { "/formrecognizer/" }
    static let family = DocumentIntelligenceFamily(root: "/formrecognizer", version: .v2023_07_31)
}

/// The two versions' dialects: the same routes and refusals, from their ``DocumentIntelligenceFamily``.
protocol DocumentIntelligenceDialect: UploadDialect {
    static var family: DocumentIntelligenceFamily { get }
}

extension DocumentIntelligenceDialect {
    static func addRoutes(to router: inout HTTPRouter, _ services: GatewayServices) { family.addRoutes(to: &router, services) }
    static func refusal(_ problem: UploadProblem) -> HTTPResponse { family.refusal(problem) }
    static func failure(_ failure: GatewayFailure) -> HTTPResponse { family.failure(failure, credential: nil) }
    static func notFound(_ request: HTTPRequest) -> HTTPResponse { DocumentIntelligenceFamily.resourceNotFound }
    static func methodNotAllowed(_ request: HTTPRequest, allowed: [String]) -> HTTPResponse {
        DocumentIntelligenceFamily.error(405, "405", wrongMethod(request, allowed: allowed))
    }
    static func rejection(_ status: Int, _ message: String) -> HTTPResponse { DocumentIntelligenceFamily.rejection(status, message) }
}

/// One of the two route families: where it lives and the version it answers. Everything else is the same.
struct DocumentIntelligenceFamily: Sendable {
    typealias DI = DocumentIntelligence

    /// `/documentintelligence` or `/formrecognizer`.
    var root: String
    var version: DI.APIVersion

    func addRoutes(to router: inout HTTPRouter, _ services: GatewayServices) {
        let family = self
        // `{model}:analyze` is one path segment; the router matches whole segments, so the verb is split off here.
        router.post(root + "/documentModels/{call}") { request, parameters in
            family.analyze(request, call: parameters["call"] ?? "", services)
        }
        router.get(root + "/documentModels/{model}/analyzeResults/{id}") { request, parameters in
            family.poll(request, model: parameters["model"] ?? "", id: parameters["id"] ?? "", jobs: services.jobs)
        }
    }

    /// The service's answer to an `api-version` it does not have, or none: its front's 404.
    func versionProblem(_ request: HTTPRequest) -> HTTPResponse? {
        request.query("api-version") == version.rawValue ? nil : Self.resourceNotFound
    }

    func analyze(_ request: HTTPRequest, call: String, _ services: GatewayServices) -> HTTPResponse {
        if let problem = versionProblem(request) { return problem }
        guard call.hasSuffix(":analyze") else { return Self.resourceNotFound }
        let modelID = String(call.dropLast(":analyze".count))
        guard let model = DI.Model(rawValue: modelID) else { return Self.modelNotFound }
        var pages: [Int]?
        if let selection = request.query("pages"), !selection.isEmpty {
            guard let parsed = PageRanges.parse(selection) else {
                return Self.invalid("InvalidParameter", "The parameter pages is invalid: '\(selection)' is not a list of pages and ranges such as 1-3,5.")
            }
            pages = parsed
        }
        var indexType: DI.StringIndexType?
        if let text = request.query("stringIndexType"), !text.isEmpty {
            guard let known = DI.StringIndexType(rawValue: text) else {
                return Self.invalid("InvalidParameter", "The parameter stringIndexType is invalid: use "
                                    + DI.StringIndexType.allCases.map(\.rawValue).joined(separator: ", ") + ".")
            }
            indexType = known
        }
        let document: [UInt8]
        switch read(request, fetch: services.fetch) {
        case .success(let bytes): document = bytes
        case .failure(let problem): return refusal(problem)
        }
        guard DocumentSniff.isSupported(document) else { return Self.invalidContent }
        let locale = request.query("locale").flatMap { $0.isEmpty ? nil : [$0] }
        var call = OCRCall(image: document, mode: "document", languages: locale, credential: .azure(request), pages: pages)
        call.fields = model.fields
        switch services.jobs.submit(call) {
        case .success(let id):
            var location = AzureAPI.base(request, https: services.https) + root + "/documentModels/" + model.rawValue + "/analyzeResults/" + id
                + "?api-version=" + version.rawValue
            if let indexType { location += "&stringIndexType=" + indexType.rawValue }
            return HTTPResponse(status: 202, headers: ["Operation-Location": location, "apim-request-id": id])
        case .failure(let failure):
            return self.failure(failure, credential: .azure(request))
        }
    }

    func poll(_ request: HTTPRequest, model modelID: String, id: String, jobs: JobBackend) -> HTTPResponse {
        if let problem = versionProblem(request) { return problem }
        guard let model = DI.Model(rawValue: modelID) else { return Self.modelNotFound }
        let indexType = request.query("stringIndexType").flatMap(DI.StringIndexType.init(rawValue:)) ?? .textElements
        switch jobs.poll(id, .azure(request)) {
        case .success(let state?):
            let status = state.phase.azureStatus
            var response = Gateway.json(200, DI.operationResult(status: status, created: state.created, lastUpdated: state.updated, result: state.result,
                                                                error: state.phase == .failed ? Self.jobError(state) : nil,
                                                                model: model, apiVersion: version, stringIndexType: indexType))
            // The SDKs' pollers wait this long between polls (azure-core's default is 30 s without it).
            if status == .notStarted || status == .running { response.headers.set("Retry-After", "1") }
            return response
        case .success(nil):
            return Self.error(404, "NotFound", "Resource not found.", inner: ("ResultNotFound", "Analyze result '\(id)' was not found (never submitted, or expired)."))
        case .failure(let failure):
            return self.failure(failure, credential: .azure(request))
        }
    }

    /// A failed job's error: a file no worker could read is the service's `InvalidContent`; any
    /// other failure (workers lost past the last attempt, a deadline) its internal error.
    static func jobError(_ state: JobSnapshot) -> DI.ErrorDetail {
        let message = state.failure?.message ?? state.error ?? "The analysis failed."
        if state.failure?.kind == .invalidImage {
            return DI.ErrorDetail(code: "InvalidRequest", message: "Invalid request.", inner: ("InvalidContent", AzureAPI.sentence(message)))
        }
        return DI.ErrorDetail(code: "InternalServerError", message: "An unexpected error occurred.", inner: ("InternalServerError", AzureAPI.sentence(message)))
    }

    /// The document: the body, or JSON `{"urlSource"}` / `{"base64Source"}` (exactly one).
    func read(_ request: HTTPRequest, fetch: ImageSource) -> Result<[UInt8], UploadProblem> {
        guard Gateway.mediaType(request) == "application/json" else {
            return Upload.read(request, fetch: fetch, accepts: Upload.imageOrPDF)
        }
        struct Source: Decodable {
            var urlSource: String?
            var base64Source: String?
        }
        guard let source = try? JSONDecoder().decode(Source.self, from: Data(request.body)) else { return .failure(.unreadableJSON) }
        switch (source.urlSource, source.base64Source) {
        case (let url?, nil):
            return fetch.fetch(url).mapError { .notFetched($0) }
        case (nil, let base64?):
            guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else { return .failure(.unreadableJSON) }
            return data.isEmpty ? .failure(.empty) : .success(Array(data))
        default:
            return .failure(.noURL)
        }
    }

    func refusal(_ problem: UploadProblem) -> HTTPResponse {
        switch problem {
        case .unreadableJSON:
            Self.invalid("InvalidContentSourceFormat", "The body is not JSON {\"urlSource\": …} or {\"base64Source\": …} with valid base64.")
        case .noURL:
            Self.invalid("InvalidContentSourceFormat", "The JSON body must have exactly one of urlSource and base64Source.")
        case .notFetched(let failure) where failure.reason == .busy:
            Self.error(429, "429", failure.message)
        case .notFetched(let failure):
            Self.invalid("InvalidContentSourceFormat", "Invalid content source: " + AzureAPI.sentence(failure.message))
        case .mediaType(let type):
            Self.error(415, "InvalidRequest", "Invalid request.", inner: ("UnsupportedMediaType",
                       "Content type '\(type)' is not supported: send application/pdf, image/*, application/octet-stream or JSON."))
        case .empty:
            Self.invalid("InvalidContentLength", "The input document is empty.")
        }
    }

    /// Quire's failures in the service's words; refusals of the key or token as its front says them.
    func failure(_ failure: GatewayFailure, credential: Credential?) -> HTTPResponse {
        // The front's body for a key it does not know, the same on every Azure route, with its code header.
        if failure.isInvalidAPIKey { return ImageAnalysisAPI.invalidKey }
        switch failure.kind {
        case .invalidImage:
            return Self.invalidContent
        case .unauthenticated:
            if let credential, credential.token == nil, credential.apiKey == nil { return Self.missingKey }
            return Self.error(401, "401", AzureAPI.sentence(failure.message))
        case .forbidden, .busy:
            return Self.error(failure.kind.httpStatus, String(failure.kind.httpStatus), AzureAPI.sentence(failure.message))
        case .unavailable:
            return Self.error(503, "ServiceUnavailable", AzureAPI.sentence(failure.message))
        case .internal:
            return Self.error(500, "InternalServerError", "An unexpected error occurred.", inner: ("InternalServerError", AzureAPI.sentence(failure.message)))
        }
    }

    static func rejection(_ status: Int, _ message: String) -> HTTPResponse {
        status == 413 ? invalid("InvalidContentLength", "The input document is too large: " + message, status: 413) : invalid("InvalidParameter", message, status: status)
    }

    /// What the service answers a file it cannot read.
    static var invalidContent: HTTPResponse {
        invalid("InvalidContent", "The file is corrupted or format is unsupported. Refer to documentation for the list of supported formats.")
    }

    static var modelNotFound: HTTPResponse {
        error(404, "NotFound", "Resource not found.", inner: ("ModelNotFound", "The requested model was not found. This server has "
                                                              + DI.Model.allCases.map(\.rawValue).joined(separator: " and ") + "."))
    }

    /// The API Management front's answer to a path or `api-version` it does not route.
    static var resourceNotFound: HTTPResponse { error(404, "404", "Resource not found") }

    /// The front's answer to a request without `Ocp-Apim-Subscription-Key` (or a token) when keys are checked.
    static var missingKey: HTTPResponse {
        error(401, "401", "Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.")
    }

    /// `400 InvalidRequest` with the reason in `innererror`, as the service answers bad input.
    static func invalid(_ inner: String, _ message: String, status: Int = 400) -> HTTPResponse {
        error(status, "InvalidRequest", "Invalid request.", inner: (inner, message))
    }

    /// `{"error":{"code","message","innererror":{"code","message"}}}`, the code also in `x-ms-error-code`.
    static func error(_ status: Int, _ code: String, _ message: String, inner: (code: String, message: String)? = nil) -> HTTPResponse {
        var response = Gateway.json(status, ["error": DI.ErrorDetail(code: code, message: message, inner: inner)])
        response.headers.set("x-ms-error-code", inner?.code ?? code)
        return response
    }
}

/// Whether bytes are a file Document Intelligence takes and Quire reads: PDF, JPEG, PNG, BMP, TIFF,
/// HEIF, and GIF and WebP (which Quire reads too). Checked by the file's signature before the job is
/// accepted, as the service refuses such a file at once (`400 InvalidContent`) rather than in a failed
/// operation; a file with a right signature and a broken inside fails in its operation instead.
enum DocumentSniff {
    static func isSupported(_ bytes: [UInt8]) -> Bool {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        if PDFSniff.isPDF(bytes) { return true }
        if starts([0xFF, 0xD8, 0xFF]) || starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return true }  // JPEG, PNG
        if starts(Array("BM".utf8)) && bytes.count > 26 { return true }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return true }  // TIFF, both byte orders
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return true }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return true }
        if starts(Array("ftyp".utf8), at: 4), bytes.count >= 12 {
            let brand = String(decoding: bytes[8..<12], as: UTF8.self)
            return ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].contains(brand)
        }
        return false
    }
}
