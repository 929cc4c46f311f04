internal import CHeif
internal import CLeptonica
#if canImport(Glibc)
import Glibc
#endif

/// Image container formats Quire can decode, sniffed from the bytes (never from a file name).
public enum ImageFormat: String, Sendable, Codable, CaseIterable {
    case png, jpeg, tiff, webp, gif, bmp, pnm, jp2, heic

    /// The format of `bytes`, or nil when it is not an image Quire reads.
    public static func sniff(_ bytes: [UInt8]) -> ImageFormat? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("BM".utf8)) && bytes.count > 26 { return .bmp }
        if bytes.count > 2, bytes[0] == UInt8(ascii: "P"), (UInt8(ascii: "1")...UInt8(ascii: "6")).contains(bytes[1]),
           [0x20, 0x0A, 0x0D, 0x09].contains(bytes[2]) { return .pnm }
        if starts([0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20]) || starts([0xFF, 0x4F, 0xFF, 0x51]) { return .jp2 }
        if starts(Array("ftyp".utf8), at: 4) {
            let brand = bytes.count >= 12 ? String(decoding: bytes[8..<12], as: UTF8.self) : ""
            if ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1", "avif"].contains(brand) { return .heic }
        }
        return nil
    }
}

/// Why an image could not be decoded.
public struct ImageError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case notAnImage = "not_an_image"
        case unsupportedFormat = "unsupported_format"
        case corrupt = "corrupt_image"
        case tooManyPixels = "too_many_pixels"
        case tooManyPages = "too_many_pages"
        case internalFailure = "internal"
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) { self.code = code; self.message = message }
    public var description: String { "\(code.rawValue): \(message)" }
}

/// A decoded raster (a Leptonica `PIX`), owned by this object and freed with it.
///
/// Not `Sendable`: an image is decoded, transformed and recognised on one worker thread.
public final class Image {
    var pix: UnsafeMutablePointer<PIX>?

    init(owning pix: UnsafeMutablePointer<PIX>) { self.pix = pix }

    deinit { pixDestroy(&pix) }

    /// The Leptonica `PIX` for an engine of this package that reads it in place (`TessBaseAPISetImage2`);
    /// the image keeps owning it and must outlive that use.
    package var unsafePix: OpaquePointer { OpaquePointer(pix!) }

    /// An image that takes over a Leptonica `PIX` an engine of this package made (Tesseract's binary
    /// image), and destroys it when it goes.
    package convenience init(adopting raw: OpaquePointer) { self.init(owning: UnsafeMutablePointer<PIX>(raw)) }

    public var width: Int { Int(pix!.pointee.w) }
    public var height: Int { Int(pix!.pointee.h) }
    public var depth: Int { Int(pix!.pointee.d) }
    /// Horizontal resolution the file declared, or 0 when it declared none.
    public var resolution: Int { Int(pixGetXRes(pix)) }

    public func setResolution(_ dpi: Int) {
        pixSetResolution(pix, Int32(dpi), Int32(dpi))
    }

    /// Rotated clockwise by `quarterTurns` × 90°.
    public func rotated(quarterTurns: Int) throws(ImageError) -> Image {
        let q = ((quarterTurns % 4) + 4) % 4
        if q == 0 { return try copy() }
        guard let out = pixRotateOrth(pix, Int32(q)) else { throw ImageError(.internalFailure, "rotation failed") }
        return Image(owning: out)
    }

    /// Mirrored left–right.
    public func flippedHorizontally() throws(ImageError) -> Image {
        guard let out = pixFlipLR(nil, pix) else { throw ImageError(.internalFailure, "flip failed") }
        return Image(owning: out)
    }

    /// The rectangle at (x, y) of `width`×`height` pixels, clipped to the image.
    public func cropped(x: Int, y: Int, width: Int, height: Int) throws(ImageError) -> Image {
        guard let box = boxCreate(Int32(x), Int32(y), Int32(width), Int32(height)) else { throw ImageError(.internalFailure, "crop failed") }
        var owned: UnsafeMutablePointer<BOX>? = box
        defer { boxDestroy(&owned) }
        guard let out = pixClipRectangle(pix, box, nil) else { throw ImageError(.internalFailure, "crop failed") }
        return Image(owning: out)
    }

    public func copy() throws(ImageError) -> Image {
        guard let out = pixCopy(nil, pix) else { throw ImageError(.internalFailure, "copy failed") }
        return Image(owning: out)
    }

    /// Silences Leptonica's own stderr messages about bad input: errors come back as values. Some of
    /// its readers write to stderr past the severity (a truncated TIFF: "Bad file: amount too big"),
    /// which let a client's bad files fill a worker's log; its stderr handler drops them too.
    private static let quietOnce: Void = {
        _ = setMsgSeverity(Int32(L_SEVERITY_NONE))
        leptSetStderrHandler { _ in }
    }()

    /// Header facts read without decoding the pixels, so limits are checked before any allocation.
    public struct Header: Sendable, Equatable {
        public var format: ImageFormat
        public var width: Int
        public var height: Int
        public var pages: Int
    }

    /// Reads the header: format, size and page count (TIFF). Throws for bytes that are no image.
    public static func header(_ bytes: [UInt8]) throws(ImageError) -> Header {
        _ = quietOnce
        guard let format = ImageFormat.sniff(bytes) else {
            throw ImageError(.notAnImage, "the bytes are not an image in a supported format (PNG, JPEG, TIFF, WebP, GIF, BMP, PNM, JPEG 2000, HEIC)")
        }
        if format == .heic { return try HEIF.header(bytes) }
        // pixReadHeaderMem fails on compressed BMP: check before it, or the reply is corrupt_image.
        if format == .bmp { try rejectCompressedBMP(bytes) }
        var lformat: Int32 = 0, w: Int32 = 0, h: Int32 = 0, bps: Int32 = 0, spp: Int32 = 0, cmap: Int32 = 0
        let ok = bytes.withUnsafeBufferPointer { pixReadHeaderMem($0.baseAddress, $0.count, &lformat, &w, &h, &bps, &spp, &cmap) }
        guard ok == 0, w > 0, h > 0 else {
            throw ImageError(.corrupt, "the \(format.rawValue.uppercased()) header cannot be read (truncated or damaged file)")
        }
        var pages = 1
        if format == .tiff {
            pages = tiffPageCount(bytes)
        }
        return Header(format: format, width: Int(w), height: Int(h), pages: pages)
    }

    /// Decodes page `page` (0-based; TIFF only has more than one).
    /// - Parameter jpegReduction: 1, 2, 4 or 8: decode a JPEG at reduced size, which is much cheaper.
    public static func decode(_ bytes: [UInt8], format: ImageFormat, page: Int = 0, jpegReduction: Int = 1) throws(ImageError) -> Image {
        _ = quietOnce
        switch format {
        case .heic:
            return try HEIF.decode(bytes)
        case .jpeg:
            var warnings: Int32 = 0
            let pix = bytes.withUnsafeBufferPointer { pixReadMemJpeg($0.baseAddress, $0.count, 0, Int32(jpegReduction), &warnings, 0) }
            guard let pix else { throw ImageError(.corrupt, "the JPEG data cannot be decoded (truncated or damaged file)") }
            return Image(owning: pix)
        case .tiff:
            let pix = bytes.withUnsafeBufferPointer { pixReadMemTiff($0.baseAddress, $0.count, Int32(page)) }
            guard let pix else { throw ImageError(.corrupt, "TIFF page \(page + 1) cannot be decoded") }
            return Image(owning: pix)
        case .bmp:
            try rejectCompressedBMP(bytes)
            fallthrough
        default:
            let pix = bytes.withUnsafeBufferPointer { pixReadMem($0.baseAddress, $0.count) }
            guard let pix else { throw ImageError(.corrupt, "the \(format.rawValue.uppercased()) data cannot be decoded (truncated or damaged file)") }
            return Image(owning: pix)
        }
    }

    /// The size of TIFF page `page` (0-based), read from its directory without decoding the pixels.
    public static func tiffPageSize(_ bytes: [UInt8], page: Int) throws(ImageError) -> (width: Int, height: Int) {
        _ = quietOnce
        var w: Int32 = 0, h: Int32 = 0, bps: Int32 = 0, spp: Int32 = 0, res: Int32 = 0, cmap: Int32 = 0, format: Int32 = 0
        let ok = bytes.withUnsafeBufferPointer {
            readHeaderMemTiff($0.baseAddress, $0.count, Int32(page), &w, &h, &bps, &spp, &res, &cmap, &format)
        }
        guard ok == 0, w > 0, h > 0 else { throw ImageError(.corrupt, "the header of TIFF page \(page + 1) cannot be read") }
        return (Int(w), Int(h))
    }

    /// Leptonica reads only uncompressed BMP (BI_RGB, BI_BITFIELDS): say so rather than "corrupt".
    static func rejectCompressedBMP(_ bytes: [UInt8]) throws(ImageError) {
        guard bytes.count >= 34 else { return }
        let compression = UInt32(bytes[30]) | UInt32(bytes[31]) << 8 | UInt32(bytes[32]) << 16 | UInt32(bytes[33]) << 24
        if compression != 0 && compression != 3 {
            throw ImageError(.unsupportedFormat, "compressed (RLE) BMP is not supported; send PNG or an uncompressed BMP")
        }
    }

    /// Counts TIFF pages by walking the IFD chain in the bytes (bounded, no decoding).
    static func tiffPageCount(_ bytes: [UInt8]) -> Int {
        guard let tiff = TIFFBytes(bytes[...]) else { return 0 }
        var offset = tiff.u32(4) ?? 0
        var count = 0
        var seen = Set<Int>()
        while offset > 0, count < 100_000, !seen.contains(offset), let entries = tiff.u16(offset) {
            seen.insert(offset)
            count += 1
            offset = tiff.u32(offset + 2 + entries * 12) ?? 0
        }
        return count
    }
}

/// HEIC/HEIF through libheif, which applies the file's own rotation and mirroring.
enum HEIF {
    static func header(_ bytes: [UInt8]) throws(ImageError) -> Image.Header {
        try withPrimaryHandle(bytes) { handle throws(ImageError) in
            Image.Header(format: .heic, width: Int(heif_image_handle_get_width(handle)),
                         height: Int(heif_image_handle_get_height(handle)), pages: 1)
        }
    }

    static func decode(_ bytes: [UInt8]) throws(ImageError) -> Image {
        try withPrimaryHandle(bytes) { handle throws(ImageError) in
            var image: OpaquePointer?
            let error = heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGB, nil)
            guard error.code == heif_error_Ok, let image else {
                throw ImageError(.corrupt, "HEIC image cannot be decoded: \(message(error))")
            }
            defer { heif_image_release(image) }
            let width = heif_image_get_width(image, heif_channel_interleaved)
            let height = heif_image_get_height(image, heif_channel_interleaved)
            var stride: Int32 = 0
            guard width > 0, height > 0, let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride),
                  let pix = pixCreate(width, height, 32) else {
                throw ImageError(.corrupt, "HEIC image has no RGB plane")
            }
            let data = pixGetData(pix)!
            let wpl = Int(pixGetWpl(pix))
            for y in 0..<Int(height) {
                let row = plane + y * Int(stride)
                let out = data + y * wpl
                for x in 0..<Int(width) {
                    let p = row + x * 3
                    // Leptonica's 32 bpp layout: R in the top byte, then G, B, (alpha).
                    out[x] = UInt32(p[0]) << 24 | UInt32(p[1]) << 16 | UInt32(p[2]) << 8
                }
            }
            return Image(owning: pix)
        }
    }

    private static func withPrimaryHandle<T>(_ bytes: [UInt8], _ body: (OpaquePointer) throws(ImageError) -> T) throws(ImageError) -> T {
        guard let context = heif_context_alloc() else { throw ImageError(.internalFailure, "libheif context allocation failed") }
        defer { heif_context_free(context) }
        let readError = bytes.withUnsafeBytes { heif_context_read_from_memory_without_copy(context, $0.baseAddress, $0.count, nil) }
        guard readError.code == heif_error_Ok else {
            throw ImageError(.corrupt, "HEIC container cannot be read: \(message(readError))")
        }
        var handle: OpaquePointer?
        let handleError = heif_context_get_primary_image_handle(context, &handle)
        guard handleError.code == heif_error_Ok, let handle else {
            throw ImageError(.corrupt, "HEIC file has no primary image: \(message(handleError))")
        }
        defer { heif_image_handle_release(handle) }
        return try body(handle)
    }

    private static func message(_ error: heif_error) -> String {
        error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)"
    }
}
