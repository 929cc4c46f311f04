import Foundation
import Imaging
import QuireRecognition
import Testing
import Tesseract
import QuireTestSupport

/// The patched engine counts a page's histogram in four parts and writes a one-channel page's binary
/// image a word of 32 pixels at a time (scripts/tesseract-patches/0014), where it counted and set
/// pixel by pixel. The histogram, Otsu's threshold and the binary image are the same, so every page
/// must read alike both ways (grey pages, and a colour one, whose three channels take the histogram's
/// quick loop and the thresholding's old one), and orientation detection must answer alike.
@Suite("Quick thresholding: pages read, and orientation detection answers, as with the loops pixel by pixel", .serialized)
struct ThresholdTests {
    /// The sample page drawn again from its RGB bytes as a PNM of `magic` (`P6` colour, `P5` grey), with
    /// `pixels` making the PNM's pixels of those bytes, at 300 dpi.
    static func sampleRedrawn(_ magic: String, _ pixels: ([UInt8]) -> [UInt8]) throws -> Image {
        let grey = try Image.decode(try TestImages.sample(), format: .png).grey()
        let header = Array("\(magic)\n\(grey.width) \(grey.height)\n255\n".utf8)
        let page = try Image.decode(header + pixels(try grey.rgb()), format: .pnm)
        page.setResolution(300)
        return page
    }

    /// The sample page in colour: paper and ink tinted yellow.
    static func colourPage() throws -> Image {
        try sampleRedrawn("P6") { rgb in rgb.enumerated().map { index, value in index % 3 == 2 ? UInt8(Int(value) * 3 / 4) : value } }
    }

    /// The sample page in negative (white on black): its ink is above Otsu's threshold.
    static func negativePage() throws -> Image {
        try sampleRedrawn("P5") { rgb in stride(from: 0, to: rgb.count, by: 3).map { 255 - rgb[$0] } }
    }

    @Test("Off and on, the same elements on grey and colour pages, and the same orientation answers")
    func quickMatchesPixelByPixel() throws {
        guard ActivationsTests.switchedOn(Engine.setQuickThreshold) else { return }
        defer { Engine.setQuickThreshold(true) }
        let colour = try Self.colourPage()
        #expect(colour.depth == 32, "the colour page must reach Tesseract with three channels")
        let pages = try ActivationsTests.pages() + [colour]
        let engine = try Engine(dataPath: WalkTests.tessdata, languages: "eng")
        // The negative page only for its binary image: its ink is the other side of the threshold.
        let negative = try Self.negativePage()
        func binaries() throws -> [[UInt8]] { try (pages + [negative]).map { try #require(engine.thresholded($0)).png() } }
        let quickBinaries = try binaries()
        let quick = try ActivationsTests.read(pages)
        let quickGuesses = try ClassPrunerTests.guesses()
        #expect(Engine.setQuickThreshold(false) == false)
        let loopBinaries = try binaries()
        let loops = try ActivationsTests.read(pages)
        let loopGuesses = try ClassPrunerTests.guesses()
        // The binary images are the same pixel for pixel (their PNGs, byte for byte)...
        #expect(quickBinaries.count == pages.count + 1)
        for (index, (a, b)) in zip(quickBinaries, loopBinaries).enumerated() {
            let same = a == b
            #expect(same, "page \(index)'s binary image differs")
        }
        // ...and so is what is read from them.
        ActivationsTests.expectSame(quick, loops, pages: pages.count)
        #expect(quickGuesses == loopGuesses)
    }
}
