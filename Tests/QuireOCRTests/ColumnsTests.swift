import Testing
import Tesseract
@testable import QuireOCR

@Suite("Column detection from glyph boxes")
struct ColumnsTests {
    /// Glyph boxes for lines of text: each line a run of glyphs from `x0` to `x1`.
    static func lines(_ spans: [(Int, Int)], top: Int = 0, glyph: Int = 20) -> [PixelBox] {
        var boxes: [PixelBox] = []
        for (index, span) in spans.enumerated() {
            var x = span.0
            while x + glyph / 2 <= span.1 {
                boxes.append(PixelBox(x: x, y: top + index * glyph * 3 / 2, width: glyph / 2, height: glyph))
                x += glyph * 2 / 3
            }
        }
        return boxes
    }

    @Test("Two columns of prose with a title across the top")
    func twoColumns() {
        let title = Self.lines([(100, 900)])
        let left = Self.lines(Array(repeating: (100, 700), count: 40), top: 60)
        let right = Self.lines(Array(repeating: (800, 1400), count: 40), top: 60)
        #expect(Recognizer.hasColumns(title + left + right, glyphHeight: 20))
    }

    @Test("A receipt: items and prices apart, headings across the gap")
    func receipt() {
        let headings = Self.lines(Array(repeating: (250, 750), count: 6))
        let items = Self.lines(Array(repeating: (50, 500), count: 30), top: 200)
        let prices = Self.lines(Array(repeating: (800, 950), count: 30), top: 200)
        #expect(!Recognizer.hasColumns(headings + items + prices, glyphHeight: 20))
    }

    @Test("A single column")
    func single() {
        #expect(!Recognizer.hasColumns(Self.lines(Array(repeating: (100, 1400), count: 50)), glyphHeight: 20))
    }

    @Test("The text box takes text-sized glyphs and a title, leaves out specks, keeps a margin")
    func textBox() throws {
        let body = Self.lines(Array(repeating: (300, 700), count: 20), top: 400)
        let title = [PixelBox(x: 320, y: 300, width: 40, height: 60)]
        let specks = [PixelBox(x: 5, y: 5, width: 4, height: 4), PixelBox(x: 1500, y: 2000, width: 5, height: 5)]
        let box = try #require(Recognizer.textBox(body + title + specks, glyphHeight: 20))
        #expect(box.x == 300 - 60 && box.y == 300 - 60)
        #expect(box.x + box.width > 700 && box.x + box.width < 800)
        #expect(box.y + box.height < 1100)
    }
}
