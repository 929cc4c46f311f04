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

    /// The file types Google reads there.
    static let fileTypes: Set<String> = ["application/pdf", "image/tiff", "image/gif"]
    /// Google reads at most this many pages of one file per call, and the first ones when none are named.
    static let pagesPerFile = 5

    /// One file to read.
    struct FileCall {
        var call: OCRCall
        var feature: CloudVision.Feature
        var mimeType: String?
    }

    static func annotateFiles(_ request: HTTPRequest, recognize: OCRCaller) -> HTTPResponse {
        let credential = Credential.google(request)
        let calls: [FileCall]
        switch Self.calls(request, example: #"{"requests":[{"inputConfig":{"content":…,"mimeType":"application/pdf"},"features":[…]}]}"#, { (file: FileRequest, field) in
            fileCall(file, field: field, credential: credential)
        }) {
        case .success(let made): calls = made
        case .failure(let refusal): return Self.error(refusal.status, refusal.message)
        }
        var responses: [CloudVision.FileResponse] = []
        for file in calls {
            switch recognize(file.call) {
            case .success(let result):
                responses.append(CloudVision.fileResponse(result, feature: file.feature, mimeType: file.mimeType))
            case .failure(let failure):
                switch itemFailure(failure) {
                case .wholeCall(let response): return response
                case .item(let status): responses.append(CloudVision.FileResponse(error: status))
                }
            }
        }
        return Gateway.json(200, CloudVision.BatchFileResponse(responses: responses))
    }

    /// The `ocr` call for one `AnnotateFileRequest`, or why there is none.
    static func fileCall(_ file: FileRequest, field: String, credential: Credential) -> Result<FileCall, Refusal> {
        let feature: CloudVision.Feature
        switch Self.feature(file.features ?? [], field: field) {
        case .success(let found): feature = found
        case .failure(let refusal): return .failure(refusal)
        }
        let mimeType = file.inputConfig?.mimeType
        if let mimeType, !fileTypes.contains(mimeType) {
            return .failure(Refusal(status: 400, message: "\(field).inputConfig.mimeType '\(mimeType)' is not supported: application/pdf, image/tiff or image/gif."))
        }
        guard let content = file.inputConfig?.content, !content.isEmpty else {
            let what = file.inputConfig?.gcsSource != nil ? "\(field).inputConfig.gcsSource is not read by this server" : "\(field).inputConfig.content is empty"
            return .failure(Refusal(status: 400, message: "\(what): send the file's bytes in \(field).inputConfig.content (base64)."))
        }
        let bytes: [UInt8]
        switch Self.bytes(content, field: "\(field).inputConfig.content") {
        case .success(let decoded): bytes = decoded
        case .failure(let refusal): return .failure(refusal)
        }
        let pages = file.pages ?? []
        guard pages.count <= pagesPerFile else {
            return .failure(Refusal(status: 400, message: "\(field).pages: at most \(pagesPerFile) pages of a file are read per call; \(pages.count) were asked for."))
        }
        if pages.contains(0) {
            return .failure(Refusal(status: 400, message: "\(field).pages: pages start from 1 (or -1 from the end); there is no page 0."))
        }
        var call = OCRCall(image: bytes, mode: feature.mode, languages: file.imageContext?.languageHints, credential: credential,
                           pages: pages.isEmpty ? nil : pages)
        if pages.isEmpty { call.pageLimit = pagesPerFile }
        return .success(FileCall(call: call, feature: feature, mimeType: mimeType))
    }
}
