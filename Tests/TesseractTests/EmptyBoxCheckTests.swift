import Foundation
import Imaging
import QuireRecognition
import Testing
import Tesseract
import QuireTestSupport

/// Where the layout analysis projects the page's text lines, it asks twice for each blob where the
/// page's picture mask has pixels within a box; the patched engine first looks for a word of the mask
/// with any, a word at a time, and answers "none" itself where there is none, as Leptonica's scan of
/// the box column by column would (scripts/tesseract-patches/0020). Pages with and without a picture
/// must read alike both ways.
@Suite("Empty boxes: every page read as when Leptonica scans each box", .serialized)
struct EmptyBoxCheckTests {
    @Test("Off and on, the same regions and the same elements, a page with a picture included")
    func checkMatchesLeptonica() throws {
        guard ActivationsTests.switchedOn(Engine.setEmptyBoxCheck) else { return }
        defer { Engine.setEmptyBoxCheck(true) }
        let pictured = try TestImages.helloTiles(picture: true)
        let regions = try Engine(dataPath: WalkTests.tessdata, languages: "eng").regions(of: pictured)
        // The noise is a picture to the analysis: the boxes beside it are not all empty.
        #expect(regions.contains { $0.kind == .picture }, "no picture found: \(regions.map(\.kind))")
        let pages = try ActivationsTests.pages() + [pictured, try TestImages.helloTiles(rules: true)]
        let checked = try ActivationsTests.read(pages)
        #expect(Engine.setEmptyBoxCheck(false) == false)
        let scanned = try ActivationsTests.read(pages)
        #expect(try Engine(dataPath: WalkTests.tessdata, languages: "eng").regions(of: pictured) == regions)
        ActivationsTests.expectSame(checked, scanned, pages: pages.count)
    }
}
