@testable import Imaging
import QuireTestSupport
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

/// The strokes `verticalRules` follows, found visiting only the columns with ink or a stroke to
/// continue, against a plain scan of every pixel of every row (the way they were first found).
@Suite("Vertical rules: the strokes found column by column equal a scan of every pixel")
struct LongestStrokesTests {
    /// Ink at random: strokes that drift and break, blobs, specks, on widths around the 32-bit words.
    static func page(width: Int, height: Int, seed: UInt64) -> [[Bool]] {
        var random = SplitMix64(seed: seed)
        var ink = [[Bool]](repeating: [Bool](repeating: false, count: width), count: height)
        for _ in 0..<(width / 6) {
            var x = Int.random(in: 0..<width, using: &random)
            let top = Int.random(in: 0..<height, using: &random), length = Int.random(in: 1...height, using: &random)
            for y in top..<min(height, top + length) where Int.random(in: 0..<12, using: &random) != 0 {
                ink[y][x] = true
                if Int.random(in: 0..<8, using: &random) == 0 { x = min(width - 1, max(0, x + (Bool.random(using: &random) ? 1 : -1))) }
            }
        }
        for _ in 0..<(width * height / 40) { ink[Int.random(in: 0..<height, using: &random)][Int.random(in: 0..<width, using: &random)] = true }
        return ink
    }

    /// The rows of the longest stroke ending in each column, every pixel of every row visited, each
    /// row's strokes made from the row before's.
    static func scanned(_ ink: [[Bool]], maxGap: Int, drift: Int) -> (top: [Int], bottom: [Int]) {
        let width = ink.first?.count ?? 0
        var start = [Int](repeating: -1, count: width), column = [Int](repeating: 0, count: width), gap = [Int](repeating: 0, count: width)
        var top = [Int](repeating: 0, count: width), bottom = [Int](repeating: -1, count: width)
        for (y, row) in ink.enumerated() {
            var nextStart = start, nextColumn = column, nextGap = gap
            for x in 0..<width {
                if row[x] {
                    let from = (max(0, x - 1)...min(width - 1, x + 1))
                        .filter { start[$0] >= 0 && abs(x - column[$0]) * drift <= max(drift, y - start[$0]) }
                        .min { start[$0] < start[$1] }
                    (nextStart[x], nextColumn[x], nextGap[x]) = from.map { (start[$0], column[$0], 0) } ?? (y, x, 0)
                    if y - nextStart[x] > bottom[x] - top[x] { (top[x], bottom[x]) = (nextStart[x], y) }
                } else if start[x] >= 0, gap[x] < maxGap {
                    nextGap[x] = gap[x] + 1
                } else {
                    (nextStart[x], nextGap[x]) = (-1, 0)
                }
            }
            (start, column, gap) = (nextStart, nextColumn, nextGap)
        }
        return (top, bottom)
    }

    @Test("random pages of 1 to 4 words a row, each way of drifting and breaking", arguments: [1, 31, 32, 33, 64, 97, 128])
    func sameStrokes(width: Int) {
        for seed in UInt64(1)...6 {
            let ink = Self.page(width: width, height: 90, seed: seed &* 1_000 &+ UInt64(width))
            let wpl = (width + 31) / 32
            // 1 bpp as Leptonica keeps it, the first pixel in the most significant bit, and the bits
            // past the last column set: they are not ink.
            var words = [UInt32](repeating: 0, count: wpl * ink.count)
            for (y, row) in ink.enumerated() {
                for x in 0..<(wpl * 32) where x >= width || row[x] { words[y * wpl + x / 32] |= UInt32(0x8000_0000) >> UInt32(x % 32) }
            }
            for (maxGap, drift) in [(2, 50), (0, 50), (3, 4)] {
                let found = words.withUnsafeMutableBufferPointer {
                    Image.longestStrokes(data: $0.baseAddress!, wordsPerLine: wpl, width: width, height: ink.count, maxGap: maxGap, drift: drift)
                }
                let expected = Self.scanned(ink, maxGap: maxGap, drift: drift)
                #expect(found.top == expected.top && found.bottom == expected.bottom, "seed \(seed), gap \(maxGap), drift \(drift)")
            }
        }
    }
}
