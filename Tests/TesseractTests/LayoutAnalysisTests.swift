import Foundation
import Imaging
import QuireRecognition
import Testing
import Tesseract

/// The Tesseract engine's side of the layout choice: its regions, and a full-analysis read that
/// reuses them.
@Suite("Tesseract layout analysis: regions, and a read that reuses them")
struct LayoutAnalysisTests {
    @Test("The four-tile page has text regions side by side, with lines, in the page's pixels")
    func regions() throws {
        let page = try WalkTests.page()
        let engine = try Engine(dataPath: WalkTests.tessdata, languages: "eng")
        let regions = try engine.regions(of: page)
        let text = regions.filter { $0.kind == .text || $0.kind == .table }
        #expect(text.count >= 2, "\(regions)")
        #expect(text.allSatisfy { !$0.lines.isEmpty })
        for region in regions {
            #expect(region.box.x >= 0 && region.box.y >= 0)
            #expect(region.box.x + region.box.width <= page.width && region.box.y + region.box.height <= page.height)
            for line in region.lines {
                #expect(line.x >= region.box.x - 2 && line.x + line.width <= region.box.x + region.box.width + 2, "\(line) outside \(region.box)")
            }
        }
        // Two columns of tiles: the choice reads the page with the full analysis.
        #expect(LayoutChoice().choose(regions).layout == .page)
    }

    @Test("Reading with the full analysis after asking for the regions gives the page a fresh read gives")
    func reuse() throws {
        let page = try WalkTests.page()
        let fresh = try Engine(dataPath: WalkTests.tessdata, languages: "eng").recognize(page, layout: .page)
        let engine = try Engine(dataPath: WalkTests.tessdata, languages: "eng")
        _ = try engine.regions(of: page)
        let reused = try engine.recognize(page, layout: .page)
        #expect(reused.blocks.flatMap { WalkTests.dump($0) } == fresh.blocks.flatMap { WalkTests.dump($0) })
        #expect(reused.text == fresh.text && reused.text.contains("Quire"))
        // And one block after the regions reads the page again, as one block.
        let single = try engine.recognize(page, layout: .singleBlock)
        let direct = try Engine(dataPath: WalkTests.tessdata, languages: "eng").recognize(page, layout: .singleBlock)
        #expect(single.text == direct.text)
    }
}
