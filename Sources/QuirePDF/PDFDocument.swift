internal import CPDFium
import Foundation
import Imaging
import QuireWire

/// Why a PDF, or one of its pages, could not be read.
public struct PDFError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// No PDF library in this process (scripts/install-pdfium).
        case unavailable
        /// Not a PDF, or one too damaged to open even after PDFium rebuilt its cross-reference table.
        case corrupt
        /// Opening it needs a password.
        case passwordProtected
        /// Encrypted with a security handler PDFium does not know.
        case unsupportedSecurity
        /// A document without a single page.
        case noPages
        /// One page cannot be loaded or rendered; the other pages can still be read.
        case pageFailed
        /// One page is too large to render within the pixel budget.
        case tooManyPixels
    }

    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) { self.code = code; self.message = message }
    public var description: String { "\(code.rawValue): \(message)" }
}

/// PDFium is not thread-safe: every call into it, from any document, holds this lock. (An `NSLock`
/// rather than a `Mutex`: what the calls return, PDFium's handles, are not `Sendable` values.)
final class PDFiumLock: @unchecked Sendable {
    private let lock = NSLock()

    func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

let pdfium = PDFiumLock()

/// A PDF opened with PDFium from bytes in memory. Its pages are counted, inspected (text layer or
/// pictures), rendered to an ``Image`` and read from their text layer.
///
/// Thread-safe: each call takes the process-wide PDFium lock, so documents on several worker threads
/// take turns inside PDFium and read in parallel outside it.
public final class PDFDocument: @unchecked Sendable {
    /// Whether this process has a PDF library (PDFium, loaded at first use).
    public static var isAvailable: Bool { quire_pdfium() != nil }

    /// Why PDF input is off in this process, or nil when it is on.
    public static var unavailableReason: String? { quire_pdfium_error().map { String(cString: $0) } }

    /// PDFium's build as installed (`chromium/8149`), from the file scripts/install-pdfium writes beside
    /// the library, or nil.
    public static var libraryVersion: String? {
        guard let path = quire_pdfium_path().map({ String(cString: $0) }) else { return nil }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent()
        guard let text = try? String(contentsOf: folder.appendingPathComponent("pdfium-version"), encoding: .utf8) else { return "unknown build" }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether `bytes` begin like a PDF (``PDFSniff``).
    public static func sniff(_ bytes: [UInt8]) -> Bool { PDFSniff.isPDF(bytes) }

    let api: UnsafePointer<quire_pdfium_api>
    let document: QFPDF_DOCUMENT
    /// PDFium reads the file from this copy as long as the document is open.
    private let storage: UnsafeMutableRawBufferPointer
    public let pageCount: Int

    /// Opens `bytes` (copied). Throws ``PDFError`` with a code for what is wrong with the file.
    public init(_ bytes: [UInt8]) throws(PDFError) {
        guard let api = quire_pdfium() else {
            throw PDFError(.unavailable, "PDF input is off on this worker: " + (Self.unavailableReason ?? "no PDF library"))
        }
        self.api = api
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
        bytes.withUnsafeBytes { storage.copyMemory(from: $0) }
        let opened: Result<(QFPDF_DOCUMENT, Int), PDFError> = pdfium.run {
            guard let document = api.pointee.LoadMemDocument64(storage.baseAddress, bytes.count, nil) else {
                let code = api.pointee.GetLastError()
                return .failure(Self.openError(code))
            }
            let count = Int(api.pointee.GetPageCount(document))
            if count <= 0 {
                api.pointee.CloseDocument(document)
                return .failure(PDFError(.noPages, "the PDF has no pages"))
            }
            return .success((document, count))
        }
        switch opened {
        case .success(let (document, count)):
            self.document = document
            self.pageCount = count
            self.storage = storage
        case .failure(let error):
            storage.deallocate()
            throw error
        }
    }

    deinit {
        pdfium.run { api.pointee.CloseDocument(document) }
        storage.deallocate()
    }

    private static func openError(_ code: UInt) -> PDFError {
        switch Int(code) {
        case Int(QFPDF_ERR_PASSWORD):
            PDFError(.passwordProtected, "the PDF is encrypted and needs a password to open")
        case Int(QFPDF_ERR_SECURITY):
            PDFError(.unsupportedSecurity, "the PDF is encrypted with a security handler that cannot be read")
        case Int(QFPDF_ERR_FILE), Int(QFPDF_ERR_FORMAT):
            PDFError(.corrupt, "the PDF cannot be read: its structure is damaged beyond repair or it is not a PDF")
        default:
            PDFError(.corrupt, "the PDF cannot be opened (PDFium error \(code))")
        }
    }

    /// A length in points as pixels at `dpi`.
    public static func pixels(_ points: Double, dpi: Double) -> Int { Int((points * dpi / 72).rounded()) }

    /// Page `index`'s size in points (1/72 inch) as displayed, its rotation applied.
    public func pageSize(_ index: Int) throws(PDFError) -> (width: Double, height: Double) {
        var size: [Float] = [0, 0]
        let ok = pdfium.run { size.withUnsafeMutableBufferPointer { api.pointee.GetPageSizeByIndexF(document, Int32(index), $0.baseAddress) } }
        guard ok != 0, size[0].isFinite, size[1].isFinite, size[0] > 0, size[1] > 0 else {
            throw PDFError(.pageFailed, "page \(index + 1) has no valid size")
        }
        return (Double(size[0]), Double(size[1]))
    }

    /// Runs `body` on page `index`, loaded and closed under the lock.
    func withPage<T>(_ index: Int, _ body: (QFPDF_PAGE) -> T) throws(PDFError) -> T {
        let result: T? = pdfium.run {
            guard let page = api.pointee.LoadPage(document, Int32(index)) else { return nil }
            defer { api.pointee.ClosePage(page) }
            return body(page)
        }
        guard let result else { throw PDFError(.pageFailed, "page \(index + 1) cannot be loaded (its page object is damaged)") }
        return result
    }

    /// What a page is made of, for choosing between its text layer and OCR.
    public struct Contents: Sendable, Equatable {
        /// Characters drawn visibly (not spaces, not line breaks PDFium adds).
        public var visibleCharacters: Int
        /// Characters drawn in render mode 3 (invisible: another program's OCR layer) or 7 (clip only).
        public var invisibleCharacters: Int
        /// Characters whose font has no usable map to Unicode (text that extracts as garbage).
        public var unmappedCharacters: Int
        /// The share of the page that pictures cover (their boxes, clipped to the page; 0…1).
        public var imageCover: Double
        /// The resolution of the page's largest picture as placed on the page, pixels per inch (nil: no picture).
        public var imageResolution: Double?

        public init(visibleCharacters: Int, invisibleCharacters: Int, unmappedCharacters: Int, imageCover: Double, imageResolution: Double?) {
            self.visibleCharacters = visibleCharacters
            self.invisibleCharacters = invisibleCharacters
            self.unmappedCharacters = unmappedCharacters
            self.imageCover = imageCover
            self.imageResolution = imageResolution
        }
    }

    /// What page `index` is: its size in points, its ``Contents``, and, when `wanted` says so of them, its
    /// text layer's characters at `dpi` (``characters(_:dpi:)``), from one load of the page. (`wanted`
    /// runs under the PDFium lock.)
    public func inspect(_ index: Int, dpi: Double, characters wanted: (Contents) -> Bool)
        throws(PDFError) -> (size: (width: Double, height: Double), contents: Contents, characters: [LayerCharacter]?) {
        try withPage(index) { page in
            let size = (width: Double(api.pointee.GetPageWidthF(page)), height: Double(api.pointee.GetPageHeightF(page)))
            let text = api.pointee.TextLoadPage(page)
            defer { if let text { api.pointee.TextClosePage(text) } }
            let counted = self.contents(page, text, size: size)
            let layer = wanted(counted) ? text.map { self.characters(page, $0, size: size, dpi: dpi) } ?? [] : nil
            return (size, counted, layer)
        }
    }

    /// The page's text and pictures, counted.
    public func contents(_ index: Int) throws(PDFError) -> Contents {
        try inspect(index, dpi: 72) { _ in false }.contents
    }

    private func contents(_ page: QFPDF_PAGE, _ text: QFPDF_TEXTPAGE?, size: (width: Double, height: Double)) -> Contents {
        do {
            let (width, height) = size
            var pictures: [(box: (Double, Double, Double, Double), pixels: (Int, Int))] = []
            func visit(_ object: QFPDF_PAGEOBJECT, depth: Int) {
                let type = api.pointee.PageObjGetType(object)
                if type == QFPDF_PAGEOBJ_IMAGE {
                    var l: Float = 0, b: Float = 0, r: Float = 0, t: Float = 0
                    var w: UInt32 = 0, h: UInt32 = 0
                    if api.pointee.PageObjGetBounds(object, &l, &b, &r, &t) != 0 {
                        _ = api.pointee.ImageObjGetImagePixelSize(object, &w, &h)
                        pictures.append(((Double(l), Double(b), Double(r), Double(t)), (Int(w), Int(h))))
                    }
                } else if type == QFPDF_PAGEOBJ_FORM, depth < 16 {
                    let count = api.pointee.FormObjCountObjects(object)
                    for i in 0..<max(0, count) {
                        if let child = api.pointee.FormObjGetObject(object, UInt(i)) { visit(child, depth: depth + 1) }
                    }
                }
            }
            let objects = api.pointee.PageCountObjects(page)
            for i in 0..<max(0, objects) {
                if let object = api.pointee.PageGetObject(page, i) { visit(object, depth: 0) }
            }
            var visible = 0, invisible = 0, unmapped = 0
            if let text {
                let count = api.pointee.TextCountChars(text)
                var modes: [UnsafeMutableRawPointer: Int32] = [:]
                for i in 0..<max(0, count) {
                    let code = api.pointee.TextGetUnicode(text, i)
                    if api.pointee.TextIsGenerated(text, i) == 1 || code == 0x20 || code == 0x0A || code == 0x0D || code == 0x09 { continue }
                    if api.pointee.TextHasUnicodeMapError(text, i) == 1 || code == 0 || code == 0xFFFD { unmapped += 1 }
                    var mode: Int32 = 0
                    if let object = api.pointee.TextGetTextObject(text, i) {
                        let key = UnsafeMutableRawPointer(object)
                        if let known = modes[key] { mode = known } else {
                            mode = api.pointee.TextObjGetTextRenderMode(object)
                            modes[key] = mode
                        }
                    }
                    if mode == QFPDF_TEXTRENDERMODE_INVISIBLE || mode == QFPDF_TEXTRENDERMODE_CLIP {
                        invisible += 1
                    } else {
                        visible += 1
                    }
                }
            }
            let area = max(1, width * height)
            var cover = 0.0
            var resolution: Double?
            var largest = 0.0
            for picture in pictures {
                let (l, b, r, t) = picture.box
                let w = max(0, min(r, width) - max(l, 0)), h = max(0, min(t, height) - max(b, 0))
                cover += w * h / area
                // Pixels per inch of the picture as placed: its pixels over its box, whichever way it is turned.
                let placed = (r - l) * (t - b)
                if w * h > largest, placed > 0, picture.pixels.0 > 0, picture.pixels.1 > 0 {
                    largest = w * h
                    resolution = (Double(picture.pixels.0 * picture.pixels.1) / placed).squareRoot() * 72
                }
            }
            return Contents(visibleCharacters: visible, invisibleCharacters: invisible, unmappedCharacters: unmapped,
                            imageCover: min(1, cover), imageResolution: resolution)
        }
    }

    /// Page `index` alone, as a PDF of its own (what a client sends when it spreads a document's pages
    /// over several workers).
    public func extractPage(_ index: Int) throws(PDFError) -> [UInt8] {
        let extracted: [UInt8]? = pdfium.run {
            var data: UnsafeMutablePointer<UInt8>?
            var size = 0
            guard quire_pdfium_extract_page(api, document, Int32(index), &data, &size) != 0, let data else { return nil }
            defer { free(data) }
            return Array(UnsafeBufferPointer(start: data, count: size))
        }
        guard let extracted else { throw PDFError(.pageFailed, "page \(index + 1) could not be copied into a PDF of its own") }
        return extracted
    }

    /// The map from pixels of page `index` drawn whole at `width`×`height` (as ``render(_:dpi:maxPixels:seconds:)``
    /// draws it: upright, its `/Rotate` applied) to the page's own space (points, y up, as its content
    /// is drawn).
    public func deviceToPage(_ index: Int, width: Int, height: Int) throws(PDFError) -> Affine {
        let corners: [(Double, Double)] = try withPage(index) { page in
            [(0, 0), (width, 0), (0, height)].map { (x: Int, y: Int) -> (Double, Double) in
                var px = 0.0, py = 0.0
                _ = api.pointee.DeviceToPage(page, 0, 0, Int32(width), Int32(height), 0, Int32(x), Int32(y), &px, &py)
                return (px, py)
            }
        }
        let (origin, right, down) = (corners[0], corners[1], corners[2])
        return Affine(a: (right.0 - origin.0) / Double(width), b: (down.0 - origin.0) / Double(height), c: origin.0,
                      d: (right.1 - origin.1) / Double(width), e: (down.1 - origin.1) / Double(height), f: origin.1)
    }

    /// One page of another document drawn over a page of this one.
    public struct Overlay: Sendable {
        /// The page of the other document (0-based), and the page of this one it goes over.
        public var sourcePage: Int
        public var page: Int
        /// From the other page's space to this page's space.
        public var matrix: Affine

        public init(sourcePage: Int, page: Int, matrix: Affine) {
            self.sourcePage = sourcePage
            self.page = page
            self.matrix = matrix
        }
    }

    /// This document saved with pages of `source` drawn over its pages (each as a form XObject, its
    /// fonts and resources copied in, the page's own content streams kept and one added after them),
    /// and nothing else of it changed. `incremental`: the original bytes are kept and the changes
    /// appended; PDFium appends every object again then, doubling the file, so the default is a
    /// rewrite. The document itself is changed: open it for this alone.
    public func saving(overlays: [Overlay], from source: PDFDocument, incremental: Bool = false) throws(PDFError) -> [UInt8] {
        let saved: [UInt8]? = pdfium.run {
            var data: UnsafeMutablePointer<UInt8>?
            var size = 0
            let sourcePages = overlays.map { Int32($0.sourcePage) }, pages = overlays.map { Int32($0.page) }
            // PDF's order: x' = a x + c y + e, y' = b x + d y + f.
            let matrices = overlays.flatMap { [$0.matrix.a, $0.matrix.d, $0.matrix.b, $0.matrix.e, $0.matrix.c, $0.matrix.f] }
            guard quire_pdfium_overlay(api, document, source.document, Int32(overlays.count), sourcePages, pages, matrices,
                                       UInt(incremental ? QFPDF_INCREMENTAL : QFPDF_NO_INCREMENTAL), &data, &size) != 0,
                  let data else { return nil }
            defer { free(data) }
            return Array(UnsafeBufferPointer(start: data, count: size))
        }
        guard let saved else { throw PDFError(.pageFailed, "the text layer could not be added to the PDF") }
        return saved
    }

    /// Page `index` rendered at `dpi` pixels per inch on white, as an RGB ``Image`` of that resolution.
    /// Throws ``PDFError/Code/tooManyPixels`` when the rendering would exceed `maxPixels`, and
    /// ``PDFError/Code/pageFailed`` when drawing it takes longer than `seconds` (PDFium is asked
    /// between page objects whether to go on: a page of a million tiny objects is stopped, though one
    /// object that takes long on its own is not).
    public func render(_ index: Int, dpi: Double, maxPixels: Int, seconds: Double = 30) throws(PDFError) -> Image {
        let (widthPoints, heightPoints) = try pageSize(index)
        let width = Self.pixels(widthPoints, dpi: dpi), height = Self.pixels(heightPoints, dpi: dpi)
        guard width > 0, height > 0 else { throw PDFError(.pageFailed, "page \(index + 1) renders to no pixels at \(Int(dpi)) dpi") }
        guard width <= 65_535, height <= 65_535, width * height <= maxPixels else {
            throw PDFError(.tooManyPixels, "page \(index + 1) is \(Int(widthPoints / 72 * 100) / 100)×\(Int(heightPoints / 72 * 100) / 100) inches: \(width)×\(height) pixels at \(Int(dpi)) dpi; the limit is \(maxPixels) pixels")
        }
        let rendered: Result<Image, PDFError> = try withPage(index) { page in
            guard let bitmap = api.pointee.BitmapCreateEx(Int32(width), Int32(height), QFPDF_BITMAP_BGRX, nil, 0) else {
                return .failure(PDFError(.tooManyPixels, "no memory for page \(index + 1) at \(width)×\(height) pixels"))
            }
            defer { api.pointee.BitmapDestroy(bitmap) }
            _ = api.pointee.BitmapFillRect(bitmap, 0, 0, Int32(width), Int32(height), 0xFFFF_FFFF)
            switch quire_pdfium_render(api, bitmap, page, Int32(width), Int32(height), QFPDF_RENDER_ANNOT, seconds) {
            case 0: break
            case 1: return .failure(PDFError(.pageFailed, "page \(index + 1) took longer than \(Int((seconds * 1_000).rounded())) ms to render"))
            default: return .failure(PDFError(.pageFailed, "page \(index + 1) could not be rendered"))
            }
            guard let buffer = api.pointee.BitmapGetBuffer(bitmap) else {
                return .failure(PDFError(.pageFailed, "page \(index + 1) could not be rendered"))
            }
            do throws(ImageError) {
                return .success(try Image.bgrx(buffer, width: width, height: height, stride: Int(api.pointee.BitmapGetStride(bitmap)),
                                               resolution: Int(dpi.rounded())))
            } catch {
                return .failure(PDFError(.pageFailed, "page \(index + 1): \(error.message)"))
            }
        }
        return try rendered.get()
    }
}
