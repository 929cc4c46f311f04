import CTesseract
import CLeptonica
import CTesseractShim
import Foundation
import Testing
import Imaging
import QuireRecognition
import Tesseract
import QuireTestSupport

/// Tesseract 5.3 stores each text line it cuts out as PNG and decodes it again a moment later; Quire
/// interposes Leptonica's `pixWriteMem` so that, while it recognises, those writes are uncompressed
/// (`CTesseractShim.h`). These tests check that the interposition is bound, that it changes only
/// what it should, and that the page is read exactly as with the PNG round trip.
@Suite("Line images: Tesseract's PNG round trip skipped, the text unchanged")
struct LineImagesTests {
    static let tessdata = "/usr/share/tesseract-ocr/5/tessdata"

    /// Bytes `pixWriteMem` gives for an 8-bit grey gradient in `format`, with the shim `on` or off.
    static func written(format: Int, on: Bool) -> [UInt8] {
        let pix = pixCreate(40, 12, 8)!
        defer { var p: UnsafeMutablePointer<PIX>? = pix; pixDestroy(&p) }
        for y in 0..<12 { for x in 0..<40 { pixSetPixel(pix, Int32(x), Int32(y), UInt32((x * 6 + y * 3) % 256)) } }
        var data: UnsafeMutablePointer<UInt8>?
        var size = 0
        quire_raw_line_images(on ? 1 : 0)
        let status = pixWriteMem(&data, &size, pix, Int32(format))
        quire_raw_line_images(0)
        guard status == 0, let data else { return [] }
        defer { free(data) }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    @Test("The executable's pixWriteMem is the one Tesseract's calls reach")
    func bound() {
        #expect(Engine.lineImageShimBound)
    }

    @Test("On, PNG writes are Leptonica's uncompressed spix, and read back pixel for pixel")
    func pngBecomesSpix() throws {
        let raw = Self.written(format: IFF_PNG, on: true)
        #expect(Array(raw.prefix(4)) == Array("spix".utf8))
        let png = Self.written(format: IFF_PNG, on: false)
        #expect(Array(png.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
        // Both decode, through the reader Tesseract uses, to the same pixels.
        let a = raw.withUnsafeBufferPointer { pixReadMem($0.baseAddress, $0.count) }
        let b = png.withUnsafeBufferPointer { pixReadMem($0.baseAddress, $0.count) }
        #expect(a != nil && b != nil)
        var same: Int32 = 0
        pixEqual(a, b, &same)
        #expect(same == 1)
        var pa = a, pb = b
        pixDestroy(&pa); pixDestroy(&pb)
    }

    @Test("Other formats, and PNG outside recognition, are written by Leptonica unchanged")
    func othersUntouched() {
        let jpeg = Self.written(format: IFF_JFIF_JPEG, on: true)
        #expect(Array(jpeg.prefix(2)) == [0xFF, 0xD8])
        let pnm = Self.written(format: IFF_PNM, on: true)
        #expect(Array(pnm.prefix(2)) == Array("P5".utf8))
    }

    @Test("A skewed, shrunk page reads the same words, boxes and confidences both ways")
    func sameReading() throws {
        var image = try Image.decode(try TestImages.sample(), format: .png).grey().scaled(by: 0.6)
        // Greys at every stroke's edge, so that a lossy path would show.
        image = try image.rotated(degrees: 2.5).image
        image.setResolution(180)
        func read(raw: Bool) throws -> [String] {
            let engine = try Engine(dataPath: Self.tessdata, languages: "eng")
            engine.rawLineImages = raw
            let before = quire_raw_line_images_written()
            let page = try engine.recognize(image, layout: .page)
            // Tesseract's own line images came through the shim (one per line, at least), or none did.
            let written = quire_raw_line_images_written() - before
            if raw { #expect(written >= 3) } else { #expect(written == 0) }
            return page.blocks.flatMap { Self.words($0) }
        }
        let raw = try read(raw: true), png = try read(raw: false)
        #expect(raw.count >= 10, "\(raw)")
        #expect(raw == png)
    }

    /// "text x y w h confidence" for every leaf (symbol) under `element`.
    static func words(_ element: RecognizedElement) -> [String] {
        if element.children.isEmpty {
            return ["\(element.text) \(element.box.x) \(element.box.y) \(element.box.width) \(element.box.height) \(element.confidence ?? -1)"]
        }
        return element.children.flatMap { words($0) }
    }
}
