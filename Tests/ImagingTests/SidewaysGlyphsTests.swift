import CLeptonica
import Foundation
import Imaging
import Testing
import QuireTestSupport

/// A page turned by a quarter shows in its thin glyphs before it is read: upright print has its
/// `l`, `1` and `I` standing, a turned page has them lying (`Image.glyphs()`).
@Suite("Sideways glyphs: a quarter-turned page is seen before it is read")
struct SidewaysGlyphsTests {
    /// A page of English prose in Leptonica's own bitmap font (no font files: `bmfCreate(NULL, …)`
    /// builds it from data compiled into the library), at about 200 dpi print size.
    static func page() throws -> Image {
        let prose = """
            The committee met on Tuesday morning to review the annual budget and the plans for the new library. \
            Most of the members agreed that the reading room should stay open until nine o'clock in the evening. \
            A small group argued that the money would be better spent on repairs to the roof and the heating. \
            The river rises quickly in the spring, when the snow melts in the hills above the old town. \
            Farmers along the valley have learned to move their animals to higher ground before the water arrives. \
            In 1987 the flood reached the steps of the church, and the old bridge was closed for eleven weeks.
            """
        var font = bmfCreate(nil, 14)
        defer { bmfDestroy(&font) }
        var canvas = pixCreate(1600, 900, 8)
        defer { pixDestroy(&canvas) }
        pixSetAll(canvas)
        var overflow: Int32 = 0
        let status = prose.withCString { pixSetTextblock(canvas, font, $0, 0, 60, 60, 1480, 0, &overflow) }
        try #require(status == 0 && font != nil)
        var data: UnsafeMutablePointer<UInt8>?
        var size = 0
        pixWriteMemPng(&data, &size, canvas, 0)
        defer { free(data) }
        return try Image.decode(Array(UnsafeBufferPointer(start: data!, count: size)), format: .png)
    }

    static func share(_ image: Image) throws -> Double {
        let (_, standing, lying) = try image.glyphs()
        try #require(standing + lying >= 20, "too few thin glyphs to tell: \(standing) standing, \(lying) lying")
        return Double(lying) / Double(standing + lying)
    }

    @Test("Upright print: few lying; turned 90° or 270°: nearly all lying; 180°: as upright")
    func turns() throws {
        let page = try Self.page()
        let upright = try Self.share(page)
        #expect(upright < 0.5, "upright \(upright)")
        for turns in [1, 3] {
            let turned = try Self.share(try page.rotated(quarterTurns: turns))
            #expect(turned > 0.9, "\(turns * 90)°: \(turned)")
        }
        #expect(try Self.share(try page.rotated(quarterTurns: 2)) < 0.5)
    }

    @Test("The upright glyphs keep their boxes whatever the count of thin ones")
    func uprightBoxes() throws {
        let page = try TestImages.helloTiles()
        #expect(try page.glyphs().upright == page.glyphBoxes())
        #expect(try page.glyphBoxes().count > 50)
    }
}
