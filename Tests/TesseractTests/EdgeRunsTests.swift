import Foundation
import Imaging
import QuireRecognition
import Testing
import Tesseract
import QuireTestSupport

/// The patched engine traces the outlines of a page's connected components skipping plain runs of
/// pixels (scripts/tesseract-patches/0018): a word of 32 white or black pixels unpacked at once, and
/// the pixels that change no edge in progress passed over in a tight loop. The outlines are the same,
/// so every page must read alike both ways, through the layout analysis and the segmentation alike.
@Suite("Edge runs: every page read as when traced pixel by pixel", .serialized)
struct EdgeRunsTests {
    @Test("Off and on, the same elements with the same texts, boxes, confidences and baselines")
    func runsMatchPixelByPixel() throws {
        guard ActivationsTests.switchedOn(Engine.setEdgeRuns) else { return }
        defer { Engine.setEdgeRuns(true) }
        // The tiles with rules too: long black runs, and outlines that enclose whole paragraphs.
        let pages = try ActivationsTests.pages() + [try TestImages.helloTiles(rules: true)]
        let runs = try ActivationsTests.read(pages)
        #expect(Engine.setEdgeRuns(false) == false)
        let pixels = try ActivationsTests.read(pages)
        ActivationsTests.expectSame(runs, pixels, pages: pages.count)
    }
}
