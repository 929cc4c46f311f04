import Foundation
import QuireFormats
import QuireHTTP
import QuireWire

/// Cloud Vision v1 `POST /v1/files:annotate` (the synchronous `BatchAnnotateFiles`): PDF, TIFF and GIF
/// files sent inline, at most five pages each, each page's text in its own response with its
/// `context.pageNumber`, and the file's `totalPages`. The call's problems (JSON, base64, no text
/// feature, more than five pages, a `gcsSource`) are 400 for the whole call, as on `images:annotate`;
/// a file that cannot be read is that file's `error`, a page that cannot be that page's.
extension CloudVisionAPI {
    /// `AnnotateFileRequest`.
    struct FileRequest: Decodable {
        struct InputConfig: Decodable {
            struct GCSSource: Decodable { var uri: String? }
            var content: String?
            var gcsSource: GCSSource?
            var mimeType: String?
        }
        var inputConfig: InputConfig?
        var features: [ImageRequest.Feature]?
        var imageContext: ImageRequest.Context?
        var pages: [Int]?
    }

    struct BatchFileRequest: Decodable {
        var requests: [FileRequest]?
    }

    /// The file types Google reads there.
    static let fileTypes: Set<String> = ["application/pdf", "image/tiff", "image/gif"]
    /// Google reads at most this many pages of one file per call, and the first ones when none are named.
    static let pagesPerFile = 5

    static func addFiles(to router: inout HTTPRouter, recognize: @escaping OCRCaller) {
        router.post("/v1/files:annotate") { request, _ in annotateFiles(request, recognize: recognize) }
    }

    static func annotateFiles(_ request: HTTPRequest, recognize: OCRCaller) -> HTTPResponse {
        let batch: BatchFileRequest
        do {
            batch = try JSONDecoder().decode(BatchFileRequest.self, from: Data(request.body))
        } catch {
            return Self.error(400, "Invalid JSON payload received. \(describe(error))")
        }
        let requests = batch.requests ?? []
        guard !requests.isEmpty else {
            return Self.error(400, "No requests were specified: send {\"requests\":[{\"inputConfig\":{\"content\":…,\"mimeType\":\"application/pdf\"},\"features\":[…]}]}.")
        }
        let credential = Credential.google(request)
        var calls: [(call: OCRCall, feature: CloudVision.Feature, mimeType: String?)] = []
        for (index, file) in requests.enumerated() {
            let field = "requests[\(index)]"
            let types = (file.features ?? []).compactMap(\.type)
            guard !types.isEmpty else {
                return Self.error(400, "No feature is specified in \(field).features: use TEXT_DETECTION or DOCUMENT_TEXT_DETECTION.")
            }
            let known = types.compactMap(CloudVision.Feature.init(rawValue:))
            guard let feature = known.contains(.documentTextDetection) ? .documentTextDetection : known.first else {
                return Self.error(400, "\(field).features: this server reads text only (TEXT_DETECTION, DOCUMENT_TEXT_DETECTION), not \(types.joined(separator: ", ")).")
            }
            let mimeType = file.inputConfig?.mimeType
            if let mimeType, !fileTypes.contains(mimeType) {
                return Self.error(400, "\(field).inputConfig.mimeType '\(mimeType)' is not supported: application/pdf, image/tiff or image/gif.")
            }
            guard let content = file.inputConfig?.content, !content.isEmpty else {
                let what = file.inputConfig?.gcsSource != nil ? "\(field).inputConfig.gcsSource is not read by this server" : "\(field).inputConfig.content is empty"
                return Self.error(400, "\(what): send the file's bytes in \(field).inputConfig.content (base64).")
            }
            guard let bytes = decodeBase64(content) else {
                return Self.error(400, "Invalid value at '\(field).inputConfig.content' (TYPE_BYTES), Base64 decoding failed.")
            }
            let pages = file.pages ?? []
            guard pages.count <= pagesPerFile else {
                return Self.error(400, "\(field).pages: at most \(pagesPerFile) pages of a file are read per call; \(pages.count) were asked for.")
            }
            if pages.contains(0) {
                return Self.error(400, "\(field).pages: pages start from 1 (or -1 from the end); there is no page 0.")
            }
            var call = OCRCall(image: bytes, mode: feature.mode, languages: file.imageContext?.languageHints, credential: credential,
                               pages: pages.isEmpty ? nil : pages)
            if pages.isEmpty { call.pageLimit = pagesPerFile }
            calls.append((call, feature, mimeType))
        }
        var responses: [CloudVision.FileResponse] = []
        for (call, feature, mimeType) in calls {
            switch recognize(call) {
            case .success(let result):
                responses.append(CloudVision.fileResponse(result, feature: feature, mimeType: mimeType))
            case .failure(let failure):
                switch itemFailure(failure) {
                case .wholeCall(let response): return response
                case .item(let status): responses.append(CloudVision.FileResponse(error: status))
                }
            }
        }
        return Gateway.json(200, CloudVision.BatchFileResponse(responses: responses))
    }
}
