internal import CLeptonica
#if canImport(Glibc)
import Glibc
#endif

/// An image's pixels compressed the way a PDF image XObject carries them (Leptonica's
/// `pixGenerateCIData`, as Tesseract's own PDF renderer uses it).
public struct CompressedImage: Sendable {
    public enum Encoding: Sendable { case jpeg, flate }
    public var encoding: Encoding
    public var width: Int
    public var height: Int
    public var bitsPerComponent: Int
    /// 1 (grey) or 3 (RGB).
    public var components: Int
    /// Flate data written with PNG predictors (`/DecodeParms << /Predictor 14 … >>`).
    public var predictor: Bool
    public var data: [UInt8]
}

/// What the outputs people open need from Leptonica: pixels for a PDF page, zlib for its streams,
/// and drawing boxes onto a copy of the page for the overlay picture.
extension Image {
    /// The image with nothing Leptonica cannot put in a PDF as is: 8-bit grey or 24-bit RGB, no
    /// colour map, transparent pixels on white.
    public func plain() throws(ImageError) -> Image {
        var source = pix
        var owned: [UnsafeMutablePointer<PIX>?] = []
        defer { for var p in owned { pixDestroy(&p) } }
        if depth == 32, samplesPerPixel == 4, let blended = pixAlphaBlendUniform(source, 0xFFFF_FF00) {
            owned.append(blended)
            source = blended
        }
        if pixGetColormap(source) != nil, let removed = pixRemoveColormap(source, Int32(REMOVE_CMAP_BASED_ON_SRC)) {
            owned.append(removed)
            source = removed
        }
        let d = pixGetDepth(source)
        let out: UnsafeMutablePointer<PIX>?
        if d == 8 || d == 32 {
            out = pixCopy(nil, source)
        } else if d == 24 || d == 16 {
            out = pixConvertTo32(source)
        } else {
            out = pixConvertTo8(source, 0)
        }
        guard let out else { throw ImageError(.internalFailure, "conversion to grey or RGB failed") }
        pixCopyResolution(out, pix)
        if pixGetDepth(out) == 32 { pixSetSpp(out, 3) }
        return Image(owning: out)
    }

    /// The pixels compressed for a PDF: JPEG at `jpegQuality`, or lossless flate when nil.
    public func compressed(jpegQuality: Int?) throws(ImageError) -> CompressedImage {
        let image = try plain()
        var cid: UnsafeMutablePointer<L_COMP_DATA>?
        let type = jpegQuality == nil ? Int32(L_FLATE_ENCODE) : Int32(L_JPEG_ENCODE)
        guard pixGenerateCIData(image.pix, type, Int32(jpegQuality ?? 0), 0, &cid) == 0, let data = cid else {
            throw ImageError(.internalFailure, "the image cannot be compressed for a PDF")
        }
        defer { l_CIDataDestroy(&cid) }
        let c = data.pointee
        guard let bytes = c.datacomp, c.nbytescomp > 0 else { throw ImageError(.internalFailure, "the image cannot be compressed for a PDF") }
        return CompressedImage(encoding: jpegQuality == nil ? .flate : .jpeg, width: Int(c.w), height: Int(c.h), bitsPerComponent: Int(c.bps),
                               components: Int(c.spp), predictor: c.predictor != 0, data: Array(UnsafeBufferPointer(start: bytes, count: c.nbytescomp)))
    }

    /// A JPEG file's own bytes as a PDF's DCT image, when a PDF can show them unchanged (grey or
    /// YCbCr; not CMYK or YCCK).
    public static func jpegAsIs(_ bytes: [UInt8]) -> CompressedImage? {
        var w: Int32 = 0, h: Int32 = 0, spp: Int32 = 0, ycck: Int32 = 0, cmyk: Int32 = 0
        let ok = bytes.withUnsafeBufferPointer { readHeaderMemJpeg($0.baseAddress, $0.count, &w, &h, &spp, &ycck, &cmyk) }
        guard ok == 0, w > 0, h > 0, spp == 1 || spp == 3, ycck == 0, cmyk == 0 else { return nil }
        return CompressedImage(encoding: .jpeg, width: Int(w), height: Int(h), bitsPerComponent: 8, components: Int(spp), predictor: false, data: bytes)
    }

    /// A 24-bit RGB copy to draw on.
    public func colour() throws(ImageError) -> Image {
        let image = try plain()
        guard let out = pixConvertTo32(image.pix) else { throw ImageError(.internalFailure, "conversion to RGB failed") }
        pixCopyResolution(out, pix)
        return Image(owning: out)
    }

    /// Draws the closed polygon through `points` (pixels) in `rgb`, `width` pixels wide, in place.
    public func stroke(_ points: [(x: Double, y: Double)], rgb: (UInt8, UInt8, UInt8), width: Int) {
        guard points.count >= 2, let pta = ptaCreate(Int32(points.count)) else { return }
        var owned: UnsafeMutablePointer<PTA>? = pta
        defer { ptaDestroy(&owned) }
        for p in points { ptaAddPt(pta, Float(p.x), Float(p.y)) }
        pixRenderPolylineArb(pix, pta, Int32(max(1, width)), rgb.0, rgb.1, rgb.2, 1)
    }

    /// The image as a PNG file.
    public func png() throws(ImageError) -> [UInt8] {
        var data: UnsafeMutablePointer<UInt8>?
        var size = 0
        guard pixWriteMemPng(&data, &size, pix, 0) == 0, let data else { throw ImageError(.internalFailure, "PNG encoding failed") }
        defer { lept_free(data) }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }
}

/// zlib (deflate) through Leptonica, for PDF streams.
public enum Zlib {
    public static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        var size = 0
        guard let out = bytes.withUnsafeBufferPointer({ zlibCompress($0.baseAddress, $0.count, &size) }) else { return nil }
        defer { lept_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }
}
