import CLeptonica
@testable import Imaging
import QuireTestSupport
import Testing

/// `Image.scaled(by:)` scales grey images itself (linear interpolation, then `pixScale`'s unsharp mask
/// below 1.4); Leptonica's `pixScale` is what it must give, byte for byte, with the same resolution:
/// every page Quire reads is measured on a scaled copy and read enlarged.
@Suite("Grey scaling: Leptonica's pixels")
struct ScaleTests {
    /// An 8 bpp image in diagonal bands of paper (255), ink (0) and random levels, so that the unsharp
    /// mask clips at both ends, at 300 dpi.
    static func page(width: Int, height: Int, seed: UInt64) throws -> Image {
        let pix = try #require(pixCreate(Int32(width), Int32(height), 8))
        var random = SplitMix64(seed: seed)
        for y in 0..<height {
            for x in 0..<width {
                let band = (x / 7 + y / 5) % 4
                let level = band == 0 ? 255 : band == 1 ? 0 : Int(random.next() % 256)
                pixSetPixel(pix, Int32(x), Int32(y), UInt32(level))
            }
        }
        pixSetResolution(pix, 300, 300)
        return Image(owning: pix)
    }

    static func expectSame(_ ours: Image, _ leptonica: Image, _ what: String) {
        var same: Int32 = 0
        pixEqual(ours.pix, leptonica.pix, &same)
        #expect(ours.width == leptonica.width && ours.height == leptonica.height, "\(what): \(ours.width)×\(ours.height) against \(leptonica.width)×\(leptonica.height)")
        #expect(same == 1, "\(what): the pixels differ")
        #expect(pixGetXRes(ours.pix) == pixGetXRes(leptonica.pix) && pixGetYRes(ours.pix) == pixGetYRes(leptonica.pix), "\(what): the resolution differs")
    }

    @Test("every size and factor from 0.7 up scales as pixScale does, sharpened below 1.4",
          arguments: [(5, 5), (7, 3), (9, 11), (37, 23), (401, 300), (1_003, 211)])
    func scalesAsLeptonica(size: (Int, Int)) throws {
        let page = try Self.page(width: size.0, height: size.1, seed: UInt64(size.0 * 1_000 + size.1))
        for factor in [0.7, 0.75, 0.8962, 0.99, 1.01, 1.2, 1.3999, 1.4, 1.462, 1.9, 2.5, 3.5, 5.3] {
            let what = "\(size.0)×\(size.1) by \(factor)"
            let leptonica = try page.leptonicaScaled(by: factor)
            if let ours = try page.greyScaledLinearly(Float(factor)) {
                Self.expectSame(ours, leptonica, what)
            } else {
                // Left to Leptonica: 0.7, which as a float is below 0.7 (area mapping there), and a
                // result too small to sharpen (Leptonica's 1.4 as a float is below 1.4 too).
                let sharpened = Double(Float(factor)) < 1.4
                #expect(Double(Float(factor)) < 0.7 || sharpened && (leptonica.width < 5 || leptonica.height < 5), "\(what) was not scaled here")
            }
            Self.expectSame(try page.scaled(by: factor), leptonica, what)
        }
    }

    @Test("a page at a probe's and a reading's factors, and at those Leptonica scales its own way")
    func pageAndOtherFactors() throws {
        let page = try Self.page(width: 1_700, height: 1_100, seed: 7)
        // 2 and 4 are Leptonica's special cases of interpolation (not the general one's pixels), and
        // below 0.7 it maps areas: those must be left to it.
        for factor in [0.8962, 1.462, 0.5, 1.0, 2.0, 4.0] {
            Self.expectSame(try page.scaled(by: factor), try page.leptonicaScaled(by: factor), "1700×1100 by \(factor)")
        }
    }
}
