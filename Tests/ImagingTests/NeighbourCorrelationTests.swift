import Imaging
import QuireTestSupport
import Testing

/// Random noise is told from anything with text on it by how alike neighbouring pixels are.
@Suite struct NeighbourCorrelationTests {
    @Test func noiseHasNoCorrelationAndAPageHasMuch() throws {
        let noise = try Image.decode(TestImages.noise(width: 600, height: 400), format: .png)
        let correlation = try #require(try noise.neighbourCorrelation())
        #expect(abs(correlation) < 0.05)
        let page = try Image.decode(TestImages.page(width: 600, height: 400, glyphHeight: 12), format: .png)
        #expect(try #require(try page.neighbourCorrelation()) > 0.6)
    }

    @Test func aPageUnderHeavyNoiseIsStillAPage() throws {
        // Each pixel moved by up to 80 levels either way: a bad scan, not noise.
        let pixels = TestImages.pagePixels(width: 600, height: 400, glyphHeight: 12)
        let noisy = try Image.decode(TestImages.noise(width: 600, height: 400, amplitude: 80, page: pixels), format: .png)
        #expect(try #require(try noisy.neighbourCorrelation()) > 0.3)
    }

    @Test func aFlatPictureHasNone() throws {
        let white = try Image.decode(TestImages.noise(width: 50, height: 40, amplitude: 0), format: .png)
        #expect(try white.neighbourCorrelation() == nil)
        // One row or column has no neighbours to compare.
        #expect(try Image.decode(TestImages.noise(width: 1, height: 40), format: .png).neighbourCorrelation() == nil)
    }

    @Test func aCheckerboardCorrelatesNegativelyAndIsNotNoise() throws {
        // One-pixel black and white squares, as an ordered dither draws grey: each pixel foretells its
        // neighbours exactly, the other way round.
        let width = 64, height = 48
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width where (x + y) % 2 == 0 {
                for c in 0..<3 { pixels[(y * width + x) * 4 + c] = 255 }
            }
        }
        let board = try pixels.withUnsafeBytes { try Image.bgrx($0.baseAddress!, width: width, height: height, stride: width * 4, resolution: 300) }
        let correlation = try #require(try board.neighbourCorrelation(step: 1))
        #expect(correlation < -0.9)
    }
}
