import Imaging
import Testing

/// `Image.verticalRules`: the long thin strokes that cut a ruled form into columns, found on drawn pages.
@Suite("Vertical rules: long thin strokes, followed through a slant, a gap and the rules that cross them")
struct VerticalRulesTests {
    /// A white 8-bit page with black rectangles (x, y, width, height).
    static func page(width: Int, height: Int, ink: [(Int, Int, Int, Int)]) throws -> Image {
        var pixels = [UInt8](repeating: 255, count: width * height)
        for (x0, y0, w, h) in ink {
            for y in max(0, y0)..<min(height, y0 + h) {
                for x in max(0, x0)..<min(width, x0 + w) { pixels[y * width + x] = 0 }
            }
        }
        return try Image.decode(Array("P5\n\(width) \(height)\n255\n".utf8) + pixels, format: .pnm)
    }

    @Test("A slanted 2 px rule broken for 2 rows, with thick rules across both ends and glyphs flush against it, is one rule")
    func slantedRule() throws {
        var ink: [(Int, Int, Int, Int)] = [(0, 20, 600, 4), (0, 376, 600, 4)]
        // Moves a pixel to the right every 100 rows, with 2 rows missing at 200.
        for y in 20..<380 where !(200..<202).contains(y) { ink.append((200 + (y - 20) / 100, y, 2, 1)) }
        // "Glyphs": 8×10 blocks touching it on the left every 30 rows.
        for y in stride(from: 40, to: 360, by: 30) { ink.append((192 + (y - 20) / 100, y, 8, 10)) }
        // A black bar 30 px wide, a rule too short, a rule broken for 6 rows in its middle.
        ink += [(400, 20, 30, 360), (500, 50, 2, 100), (300, 20, 2, 177), (300, 203, 2, 177)]
        let rules = try Self.page(width: 600, height: 400, ink: ink).verticalRules(minLength: 300, maxWidth: 6)
        #expect(rules.count == 1, "\(rules)")
        let rule = try #require(rules.first)
        #expect(rule.x >= 199 && rule.x <= 201 && rule.x + rule.width <= 206, "\(rule)")
        #expect(rule.y <= 24 && rule.y + rule.height >= 376, "\(rule)")
    }

    @Test("A page without long strokes has no rules; a dark margin is no rule")
    func none() throws {
        let text = (0..<10).map { (20 + 50 * $0, 100, 30, 12) }
        #expect(try Self.page(width: 600, height: 400, ink: text).verticalRules(minLength: 160, maxWidth: 6).isEmpty)
        #expect(try Self.page(width: 600, height: 400, ink: [(0, 0, 40, 400)] + text).verticalRules(minLength: 160, maxWidth: 6).isEmpty)
    }
}
