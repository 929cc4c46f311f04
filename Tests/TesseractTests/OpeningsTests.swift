import Foundation
import Imaging
import QuireRecognition
import Testing
import Tesseract
import QuireTestSupport

/// The patched engine finds a page's rules with openings whose runs are combined by doubling
/// (scripts/tesseract-patches/0009) instead of Leptonica's `pixOpenBrick`, one rasterop per pixel of
/// the brick. The pixels are the same, so a ruled page must read alike both ways: the same texts,
/// boxes, confidences and baselines at every level, with the rules found and taken out.
@Suite("Line finding's openings by doubling: a ruled page reads as with Leptonica's", .serialized)
struct OpeningsTests {
    @Test("Off and on, the same elements on a ruled page and on an unruled one")
    func doublingMatchesLeptonica() throws {
        guard ActivationsTests.switchedOn(Engine.setDoublingOpenings) else { return }
        defer { Engine.setDoublingOpenings(true) }
        let pages = [try TestImages.helloTiles(rules: true), try TestImages.helloTiles()]
        let engine = try Engine(dataPath: WalkTests.tessdata, languages: "eng")
        // The full layout analysis (psm 3) is the one that looks for rules.
        func read() throws -> [[String]] {
            try pages.map { page in try engine.recognize(page, layout: .page, symbols: true).blocks.flatMap { WalkTests.dump($0) } }
        }
        let doubled = try read()
        #expect(Engine.setDoublingOpenings(false) == false)
        let leptonica = try read()
        ActivationsTests.expectSame(doubled, leptonica, pages: pages.count)
        // The ruled page's words are the unruled page's: the rules were found and taken out, not read.
        func words(_ dump: [String]) -> Set<String> { Set(dump.filter { $0.hasPrefix("3 ") }.map { $0.split(separator: " ")[1].description }) }
        let unruled = words(doubled[1])
        #expect(unruled.count > 10 && words(doubled[0]).intersection(unruled).count * 10 >= unruled.count * 9,
                "the ruled page's words: \(words(doubled[0]).sorted()), the unruled page's: \(unruled.sorted())")
        #expect(doubled[0].joined().contains("Quire"), "the ruled page was not read: \(doubled[0].prefix(3))")
    }
}
