import CLeptonica
@testable import Imaging
import Testing

/// `Image.histogram()` counts the grey levels itself; Leptonica's `pixGetGrayHistogram` is what it
/// must give, to the count (Otsu's threshold, the ink's tones and every binarised copy follow from it).
@Suite("Grey histogram: Leptonica's counts")
struct GreyHistogramTests {
    /// An 8 bpp image whose left third is one level (paper) and the rest a pattern reaching every
    /// level, with the bytes past each row's last pixel set, which must not be counted.
    static func pattern(width: Int, height: Int) throws -> UnsafeMutablePointer<PIX> {
        let pix = try #require(pixCreate(Int32(width), Int32(height), 8))
        for y in 0..<height {
            for x in 0..<width {
                let level = x < width / 3 ? 231 : (x * 7 + y * 13 + (x * y) % 11) & 255
                pixSetPixel(pix, Int32(x), Int32(y), UInt32(level))
            }
        }
        pixSetPadBits(pix, 1)
        return pix
    }

    static func leptonica(_ pix: UnsafeMutablePointer<PIX>, factor: Int) throws -> [Double] {
        let histogram: UnsafeMutablePointer<NUMA> = try #require(pixGetGrayHistogram(pix, Int32(factor)) as UnsafeMutablePointer<NUMA>?)
        var numa: UnsafeMutablePointer<NUMA>? = histogram
        defer { numaDestroy(&numa) }
        return (0..<256).map { level in
            var count: Float = 0
            numaGetFValue(histogram, Int32(level), &count)
            return Double(count)
        }
    }

    @Test("every size and sampling factor counts as Leptonica does",
          arguments: [(1, 1), (3, 5), (4, 4), (7, 2), (401, 300), (1_003, 997)], [1, 2, 3, 7])
    func countsAsLeptonica(size: (Int, Int), factor: Int) throws {
        let pix = try Self.pattern(width: size.0, height: size.1)
        let expected = try Self.leptonica(pix, factor: factor)
        let image = Image(owning: pix)
        #expect(try image.histogram(factor: factor) == expected)
        #expect(expected.reduce(0, +) == Double(((size.0 + factor - 1) / factor) * ((size.1 + factor - 1) / factor)))
    }

    @Test("the default samples about a million pixels: every one below 4 MP, every second of every second row at 4 MP")
    func defaultFactor() throws {
        for (width, height, factor) in [(1_999, 1_999, 1), (2_001, 2_003, 2)] {
            let pix = try Self.pattern(width: width, height: height)
            let expected = try Self.leptonica(pix, factor: factor)
            #expect(try Image(owning: pix).histogram() == expected)
        }
    }

    @Test("an image that is not 8 bpp grey is refused, not miscounted")
    func refusesOtherDepths() throws {
        let pix = try #require(pixCreate(10, 10, 32))
        #expect(throws: ImageError.self) { try Image(owning: pix).histogram() }
    }
}
