import Foundation
import QuireHTTP

/// What can be wrong with the file a call uploads, before any worker sees it.
enum UploadProblem: Error {
    /// A JSON body that is not `{"url": …}`.
    case unreadableJSON
    /// JSON without `"url"`.
    case noURL
    /// A URL that was not fetched (not on the allow-list, not downloaded, too large, every slot taken).
    case notFetched(FetchFailure)
    /// A body of a media type the API does not take.
    case mediaType(String)
    /// An empty body.
    case empty
}

/// A family whose calls upload the file (``Upload``), as Azure's do: it says the problems in its own words.
protocol UploadDialect: APIDialect {
    /// An upload refused.
    static func refusal(_ problem: UploadProblem) -> HTTPResponse
}

/// How the Azure APIs take a file: the body itself, of the media types the API accepts, or JSON
/// `{"url": …}` fetched from the allow-list (``FetchAllowList``), before the call is accepted, so that the
/// client hears at once why a URL gives no file. Each API says the problems in its own words
/// (``UploadDialect/refusal(_:)``).
enum Upload {
    static func read(_ request: HTTPRequest, fetch: ImageSource, accepts: (String) -> Bool) -> Result<[UInt8], UploadProblem> {
        let type = Gateway.mediaType(request)
        if type == "application/json" {
            struct URLBody: Decodable { var url: String? }
            guard let body = try? JSONDecoder().decode(URLBody.self, from: Data(request.body)) else { return .failure(.unreadableJSON) }
            guard let url = body.url else { return .failure(.noURL) }
            return fetch.fetch(url).mapError { .notFetched($0) }
        }
        guard accepts(type) else { return .failure(.mediaType(type)) }
        guard !request.body.isEmpty else { return .failure(.empty) }
        return .success(request.body)
    }

    /// `application/octet-stream` (what the Azure SDKs send) and `image/*`.
    static func image(_ type: String) -> Bool { type == "application/octet-stream" || type.hasPrefix("image/") }

    /// ``image(_:)`` and `application/pdf`.
    static func imageOrPDF(_ type: String) -> Bool { image(type) || type == "application/pdf" }
}
