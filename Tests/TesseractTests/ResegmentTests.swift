import Foundation
import Imaging
import QuireRecognition
import Testing
import Tesseract
import QuireTestSupport

/// A page read as one block after its layout analysis (``Engine/regions(of:)``) is segmented again from
/// the binary image the analysis started from, which the patched engine keeps
/// (scripts/tesseract-patches/0019), instead of being thresholded again. The analysis takes rules out of
/// its own binary image, so the kept one must be the image as thresholded: the page must read as a
/// fresh engine reads it as one block.
@Suite("Resegmenting: one block after the regions reads as a fresh one-block read", .serialized)
struct ResegmentTests {
    static func dump(_ page: RecognizedPage) -> [String] { page.blocks.flatMap { WalkTests.dump($0) } }

    @Test("Kept and not kept, the same elements as a fresh read, ruled page included")
    func resegmentedMatchesFresh() throws {
        guard ActivationsTests.switchedOn(Engine.setKeepPageBinary) else { return }
        defer { Engine.setKeepPageBinary(true) }
        let ruled = try TestImages.helloTiles(rules: true)
        let pages = [ruled] + (try ActivationsTests.pages())
        let fresh = try pages.map { try Self.dump(Engine(dataPath: WalkTests.tessdata, languages: "eng").recognize($0, layout: .singleBlock)) }
        // The rules change a one-block read: read from the analysis's own image (rules taken out),
        // the ruled page would read differently.
        let unruled = try Engine(dataPath: WalkTests.tessdata, languages: "eng").recognize(try TestImages.helloTiles(), layout: .singleBlock)
        #expect(Self.dump(unruled) != fresh[0], "the rules do not change the ruled page's one-block read")

        let engine = try Engine(dataPath: WalkTests.tessdata, languages: "eng")
        let resegmented = try pages.map { page in
            _ = try engine.regions(of: page)
            return Self.dump(try engine.recognize(page, layout: .singleBlock))
        }
        #expect(engine.resegmentedPages == pages.count)
        ActivationsTests.expectSame(resegmented, fresh, pages: pages.count)

        // Not kept: the page is given to the engine again, and reads the same.
        #expect(Engine.setKeepPageBinary(false) == false)
        let again = try Engine(dataPath: WalkTests.tessdata, languages: "eng")
        _ = try again.regions(of: ruled)
        #expect(Self.dump(try again.recognize(ruled, layout: .singleBlock)) == fresh[0])
        #expect(again.resegmentedPages == 0)
    }

    @Test("Another image after the regions is given to the engine, not segmented from the kept image")
    func otherImageIsLoaded() throws {
        guard ActivationsTests.switchedOn(Engine.setKeepPageBinary) else { return }
        let pages = try ActivationsTests.pages()
        let engine = try Engine(dataPath: WalkTests.tessdata, languages: "eng")
        _ = try engine.regions(of: pages[0])
        let other = try engine.recognize(pages[1], layout: .singleBlock)
        #expect(engine.resegmentedPages == 0)
        let fresh = try Engine(dataPath: WalkTests.tessdata, languages: "eng").recognize(pages[1], layout: .singleBlock)
        #expect(Self.dump(other) == Self.dump(fresh))
    }
}
