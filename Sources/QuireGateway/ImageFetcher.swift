import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Why an image URL was not fetched, in terms each imitated API turns into its own error. The
/// message never holds what the server sent back.
public struct FetchFailure: Error, Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        /// Not on the allow-list (or no list), not http(s), a redirect leaving the list.
        case notAllowed
        /// No answer, not 2xx, timed out, too many redirects.
        case couldNotDownload
        /// Over the gateway's image limit.
        case tooLarge
        /// Empty, or a media type that is not an image's.
        case notAnImage
        /// Every fetch slot is taken.
        case busy
    }

    public var reason: Reason
    public var message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }
}

/// Fetches an image URL the client gave, if the allow-list has it (``FetchAllowList``), on the
/// calling thread (libmicrohttpd's, like the OCR call), with FoundationNetworking's `URLSession`.
///
/// Bounded so that a slow or hostile server cannot hold the gateway: one deadline for the whole
/// fetch (connect, redirects, body), a size cap (reading stops past it), at most half the HTTP
/// threads fetching at once (the rest still serve images sent as bytes), at most 3 redirects and each
/// target checked against the list. No cookies, no credentials, no cache, nothing from the client's
/// request (headers, tokens, keys) is sent on.
public final class ImageFetcher: Sendable {
    public let allow: FetchAllowList
    /// The whole fetch, redirects included.
    public let timeout: Duration
    public let maxBytes: Int
    public let maxRedirects: Int
    public let maxConcurrent: Int
    private let slots: DispatchSemaphore

    public static let defaultTimeout = Duration.seconds(10)

    public init(allow: FetchAllowList, timeout: Duration = ImageFetcher.defaultTimeout, maxBytes: Int = Gateway.maxBodyBytes, maxRedirects: Int = 3,
                maxConcurrent: Int = Gateway.threads / 2) {
        self.allow = allow
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.maxRedirects = maxRedirects
        self.maxConcurrent = max(1, maxConcurrent)
        self.slots = DispatchSemaphore(value: max(1, maxConcurrent))
    }

    /// Fetches nothing: every URL gets the "no allow-list" refusal.
    public static let none = ImageFetcher(allow: .none)

    /// This fetcher as the routes use it.
    public var source: ImageSource {
        let allow = self.allow
        return ImageSource(refusal: { text in
            if case .failure(let failure) = allow.decision(text) { return failure }
            return nil
        }, fetch: { self.fetch($0) })
    }

    /// The image's bytes, or why there are none.
    public func fetch(_ text: String) -> Result<[UInt8], FetchFailure> {
        let url: URL
        switch allow.decision(text) {
        case .success(let allowed): url = allowed
        case .failure(let failure): return .failure(failure)
        }
        guard slots.wait(timeout: .now()) == .success else {
            return .failure(FetchFailure(.busy, "too many image URLs are being fetched at once (\(maxConcurrent)); try again, or send the image's bytes"))
        }
        defer { slots.signal() }

        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.httpCookieStorage = nil
        configuration.urlCredentialStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 1
        configuration.httpAdditionalHeaders = ["Accept": "image/*, application/pdf, application/octet-stream;q=0.5", "User-Agent": "quire-gateway"]

        let delegate = FetchDelegate(allow: allow, maxBytes: maxBytes, maxRedirects: maxRedirects, seconds: seconds)
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
        request.httpShouldHandleCookies = false
        let task = session.dataTask(with: request)
        task.resume()
        // URLSession enforces the deadline; this wait is the backstop that frees the thread even if it does not.
        if delegate.done.wait(timeout: .now() + seconds + 1) == .timedOut {
            delegate.finish(FetchFailure(.couldNotDownload, "could not download the image: no complete answer within \(Self.describe(seconds))"))
            task.cancel()
        }
        session.invalidateAndCancel()
        return delegate.result ?? .failure(FetchFailure(.couldNotDownload, "could not download the image"))
    }

    static func describe(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}

/// One fetch's callbacks. The first outcome wins (a refusal, then the cancellation it causes).
/// `@unchecked Sendable`: URLSession calls it on its own queue; every mutable field is in the Mutex.
private final class FetchDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    struct State {
        var body: [UInt8] = []
        var redirects = 0
        var result: Result<[UInt8], FetchFailure>?
    }

    let allow: FetchAllowList
    let maxBytes: Int
    let maxRedirects: Int
    let seconds: Double
    let state = Mutex(State())
    let done = DispatchSemaphore(value: 0)

    init(allow: FetchAllowList, maxBytes: Int, maxRedirects: Int, seconds: Double) {
        self.allow = allow
        self.maxBytes = maxBytes
        self.maxRedirects = maxRedirects
        self.seconds = seconds
    }

    var result: Result<[UInt8], FetchFailure>? { state.withLock { $0.result } }

    /// Records the outcome if none is yet. The waiting thread is woken only when the task has ended
    /// (``urlSession(_:task:didCompleteWithError:)``): invalidating the session while FoundationNetworking
    /// still waits for a callback (a redirect's) makes it trap.
    func finish(_ failure: FetchFailure) {
        state.withLock { state in
            guard state.result == nil else { return }
            state.result = .failure(failure)
            state.body = []
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
                    completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        let count = state.withLock { state -> Int in
            state.redirects += 1
            return state.redirects
        }
        guard count <= maxRedirects else {
            finish(FetchFailure(.couldNotDownload, "could not download the image: more than \(maxRedirects) redirects"))
            // nil makes the redirect the final answer, which didReceive(response:) then cancels.
            completionHandler(nil)
            return
        }
        guard let target = request.url?.absoluteString, case .success(let url) = allow.decision(target) else {
            finish(FetchFailure(.notAllowed, "the URL redirects to a URL that is not on this server's allow-list (quire gateway --fetch-allow)"))
            completionHandler(nil)
            return
        }
        var next = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
        next.httpShouldHandleCookies = false
        completionHandler(next)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        guard let http = response as? HTTPURLResponse else {
            finish(FetchFailure(.couldNotDownload, "could not download the image: the answer is not HTTP"))
            return completionHandler(.cancel)
        }
        guard (200...299).contains(http.statusCode) else {
            finish(FetchFailure(.couldNotDownload, "could not download the image: the server answered HTTP \(http.statusCode)"))
            return completionHandler(.cancel)
        }
        if http.expectedContentLength > Int64(maxBytes) {
            finish(FetchFailure(.tooLarge, "the image at the URL is larger than this server's limit of \(maxBytes) bytes (Content-Length \(http.expectedContentLength))"))
            return completionHandler(.cancel)
        }
        if let type = Self.mediaType(http.value(forHTTPHeaderField: "Content-Type")), !Self.imageTypes(type) {
            finish(FetchFailure(.notAnImage, "the URL's content is not an image (Content-Type \(type))"))
            return completionHandler(.cancel)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let over = state.withLock { state -> Bool in
            guard state.result == nil else { return false }
            if state.body.count + data.count > maxBytes { return true }
            state.body += data
            return false
        }
        if over {
            finish(FetchFailure(.tooLarge, "the image at the URL is larger than this server's limit of \(maxBytes) bytes"))
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        // FoundationNetworking checks certificates in libcurl and asks only for credentials, which are never sent.
        finish(FetchFailure(.couldNotDownload, "could not download the image: the server asks for credentials, and none are sent"))
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error {
            let timedOut = (error as? URLError)?.code == .timedOut
            finish(FetchFailure(.couldNotDownload, timedOut ? "could not download the image: no complete answer within \(ImageFetcher.describe(seconds))"
                                                             : "could not download the image: \(Self.describe(error))"))
            done.signal()
            return
        }
        state.withLock { state in
            guard state.result == nil else { return }
            state.result = state.body.isEmpty ? .failure(FetchFailure(.notAnImage, "the URL's content is empty")) : .success(state.body)
            state.body = []
        }
        done.signal()
    }

    /// The media type of a `Content-Type` value, lower-cased, only when it is a plain token (it goes
    /// into an error message).
    static func mediaType(_ value: String?) -> String? {
        guard let value, let first = value.split(separator: ";").first else { return nil }
        let type = first.trimmingCharacters(in: .whitespaces).lowercased()
        guard !type.isEmpty, type.count <= 100,
              type.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || "/.+-_".unicodeScalars.contains($0) }) else {
            return "(not a media type)"
        }
        return type
    }

    /// An image's or a PDF's media type, or the generic ones object stores serve files with (the routes
    /// that read images only refuse a PDF by its bytes).
    static func imageTypes(_ type: String) -> Bool {
        type.hasPrefix("image/") || type == "application/pdf" || type == "application/octet-stream" || type == "binary/octet-stream"
    }

    /// What failed, without URLSession's text (which may quote the URL or the server).
    static func describe(_ error: any Error) -> String {
        guard let error = error as? URLError else { return "the transfer failed" }
        return switch error.code {
        case .cannotFindHost, .dnsLookupFailed: "the host name does not resolve"
        case .cannotConnectToHost: "the connection was refused"
        case .networkConnectionLost: "the connection was closed before the image was complete"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
             .serverCertificateHasUnknownRoot, .clientCertificateRejected: "the TLS connection failed (certificate or handshake)"
        case .badServerResponse: "the server's answer is not valid HTTP"
        case .httpTooManyRedirects: "too many redirects"
        case .cancelled: "the transfer was cancelled"
        default: "the transfer failed (URLError \(error.code.rawValue))"
        }
    }
}
