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
}
