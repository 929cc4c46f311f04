import Foundation
import Imaging
import QuirePDF
import QuireWire

/// A document (a PDF, a multi-page TIFF) read by every worker at once: its selected pages sent as files
/// of their own (a PDF's as one-page PDFs, a TIFF's as PNGs at the page's resolution), one `ocr`
/// request each, and the pages' results put back together in page order as one result, as a worker
/// would have answered the whole file. `quire recognize` and `quire bench documents` send documents so, with the
/// pages as plain requests; the `ocr.document` service (``DocumentService``) sends them as durable jobs.
public enum DocumentPages {
    /// A document's selected pages, each a file of its own.
    public struct Split: Sendable {
        /// The pages' numbers in the whole file, in the order asked.
        public var numbers: [Int]
        public var pageCount: Int
        public var files: [[UInt8]]
        /// The whole file's format (`pdf`, `tiff`), for the merged result's `metadata.format`.
        public var format: String
    }

    /// The selected pages of a PDF or TIFF, each a file of its own; nil to send the file whole: neither,
    /// one page or none selected, no PDF library in this process, a file that cannot be opened or a page
    /// that cannot be taken out (the worker then says why, in the protocol's words).
    public static func pages(of bytes: [UInt8], request: OCRRequest) -> Split? {
        guard let split = try? split(bytes, request: request, maxPages: .max), split.numbers.count > 1 else { return nil }
        return split
    }

    /// How many pages of a PDF or TIFF the request selects, without taking them out; nil for any other
    /// file, or one that cannot be opened.
    public static func selectedPages(of bytes: [UInt8], request: OCRRequest) -> Int? {
        let count: Int
        if PDFSniff.isPDF(bytes) {
            guard PDFDocument.isAvailable, let document = try? PDFDocument(bytes) else { return nil }
            count = document.pageCount
        } else {
            guard let header = try? Image.header(bytes), header.format == .tiff else { return nil }
            count = header.pages
        }
        return (try? request.pageNumbers(pageCount: count, maxPages: .max, noun: "the file"))?.count
    }

    /// As ``pages(of:request:)``, for one page too, and with the selection's problems thrown in the
    /// protocol's words (`too_many_pages` past `maxPages`, `bad_request` for a page the file lacks)
    /// rather than left to the worker that reads the whole file. A TIFF page over `maxPixels` is not
    /// decoded here (the file goes whole, and its worker refuses it in its words).
    public static func split(_ bytes: [UInt8], request: OCRRequest, maxPages: Int, maxPixels: Int = OCRConfiguration().maxPixels)
        throws(WireError) -> Split? {
        if PDFSniff.isPDF(bytes) {
            guard PDFDocument.isAvailable, let document = try? PDFDocument(bytes) else { return nil }
            let numbers = try request.pageNumbers(pageCount: document.pageCount, maxPages: maxPages, noun: "the PDF")
            var files: [[UInt8]] = []
            for number in numbers {
                guard let file = try? document.extractPage(number - 1) else { return nil }
                files.append(file)
            }
            return Split(numbers: numbers, pageCount: document.pageCount, files: files, format: "pdf")
        }
        guard let header = try? Image.header(bytes), header.format == .tiff, header.pages > 1 else { return nil }
        let numbers = try request.pageNumbers(pageCount: header.pages, maxPages: maxPages, noun: "the TIFF")
        var files: [[UInt8]] = []
        for number in numbers {
            // Lossless, at the page's own resolution (PNG keeps it): the worker reads what it would have.
            guard let size = try? Image.tiffPageSize(bytes, page: number - 1), size.width * size.height <= maxPixels,
                  let page = try? Image.decode(bytes, format: .tiff, page: number - 1), let png = try? page.png() else { return nil }
            files.append(png)
        }
        return Split(numbers: numbers, pageCount: header.pages, files: files, format: "tiff")
    }

    /// The request for one page sent alone: every option but the page selection.
    public static func pageRequest(_ request: OCRRequest) -> OCRRequest {
        var single = request
        single.pages = nil
        single.pageLimit = nil
        return single
    }

    /// The pages' replies (each the JSON result of a one-page PDF, or the error its request got) as one
    /// result: pages numbered as in the whole file, a page whose request failed as a page with its
    /// `error`, steps, timings and text joined; nil when no page was read.
    public static func merge(_ replies: [Result<[UInt8], WireError>], numbers: [Int], pageCount: Int, format: String? = nil) -> OCRResult? {
        var merged: OCRResult?
        var pages: [OCRResult.Page] = []
        var steps: [OCRResult.Step] = []
        var timings = OCRResult.Timings(decodeMs: 0, recognizeMs: 0, encodeMs: 0)
        var engines: [String] = []
        for (reply, number) in zip(replies, numbers) {
            switch reply {
            case .success(let frame):
                guard var result = OCRResult(replyFrame: frame), var page = result.pages.first else {
                    pages.append(failedPage(number, code: .internal, message: "page \(number): the reply is not an OCR result"))
                    continue
                }
                page.pageNumber = number
                pages.append(page)
                steps += result.metadata.steps.map { var step = $0; step.page = number; return step }
                timings.decodeMs += result.metadata.timings.decodeMs
                timings.recognizeMs += result.metadata.timings.recognizeMs
                timings.encodeMs += result.metadata.timings.encodeMs
                engines.append(result.metadata.engine)
                result.attachments = nil
                merged = merged ?? result
            case .failure(let error):
                // The worker saw a one-page PDF: its "page 1" is this page.
                let message = error.message.hasPrefix("page 1 ") || error.message.hasPrefix("page 1:")
                    ? "page \(number)" + error.message.dropFirst("page 1".count) : "page \(number): \(error.message)"
                pages.append(failedPage(number, code: error.code, message: message))
            }
        }
        guard var result = merged else { return nil }
        result.pages = pages
        result.text = pages.map(\.text).joined(separator: "\u{0C}")
        result.metadata.pageCount = pageCount
        if let format { result.metadata.format = format }
        result.metadata.steps = steps
        result.metadata.timings = timings
        // Tesseract when any page needed OCR, as the worker names it for a whole file.
        result.metadata.engine = engines.first(where: { $0.hasPrefix("tesseract") }) ?? result.metadata.engine
        return result
    }

    static func failedPage(_ number: Int, code: WireError.Code, message: String) -> OCRResult.Page {
        var page = OCRResult.Page(pageNumber: number, width: 0, height: 0, unit: "pixel", rotation: 0, mirrored: false, deskewAngle: 0,
                                  transform: [1, 0, 0, 0, 1, 0], recognitionScale: 1, text: "", confidence: nil, languages: [], blocks: [],
                                  renderings: nil)
        page.error = .init(code: code, message: message)
        return page
    }
}
