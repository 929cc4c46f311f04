import Imaging
import QuireWire
import Testing
@testable import QuireRecognition

/// The layout choice from regions, without an engine: regions as an engine's layout analysis reports
/// them for the kinds of pages Quire reads (line height 30 px throughout).
@Suite("LayoutChoice: one block only where the page is one column of text everywhere")
struct LayoutChoiceTests {
    static let lineHeight = 30

    /// A text region at (x, y), `width` wide, with `lines` lines one line height apart.
    static func text(x: Int, y: Int, width: Int, lines: Int, kind: LayoutRegion.Kind = .text) -> LayoutRegion {
        let boxes = (0..<lines).map { PixelBox(x: x, y: y + $0 * 2 * lineHeight, width: width, height: lineHeight) }
        return LayoutRegion(kind: kind, box: PixelBox(x: x, y: y, width: width, height: lines * 2 * lineHeight), lines: boxes)
    }

    static func rule(x: Int, y: Int, width: Int, height: Int) -> LayoutRegion {
        LayoutRegion(kind: .rule, box: PixelBox(x: x, y: y, width: width, height: height))
    }

    static func choose(_ regions: [LayoutRegion], _ choice: LayoutChoice = LayoutChoice()) -> (Layout, OCRResult.Step) {
        choice.choose(regions)
    }

    @Test("Tall lines are counted in the lower half of the text only: a total in double height, not a heading")
    func tallLines() {
        var body = Self.text(x: 20, y: 100, width: 600, lines: 10)
        // A heading twice as tall at the top, and a total twice as tall near the foot.
        body.lines.insert(PixelBox(x: 20, y: 20, width: 400, height: 2 * Self.lineHeight), at: 0)
        body.lines.append(PixelBox(x: 300, y: 760, width: 200, height: 2 * Self.lineHeight))
        let (layout, step) = Self.choose([body])
        #expect(layout == .singleBlock)
        #expect(step.parameters["tallLines"] == 1)
        #expect(Self.choose([Self.text(x: 20, y: 100, width: 600, lines: 10)]).1.parameters["tallLines"] == 0)
    }

    @Test("A receipt: blocks stacked one above the other, a logo and dashed rules between them, read as one block")
    func receipt() {
        let (layout, step) = Self.choose([
            LayoutRegion(kind: .picture, box: PixelBox(x: 200, y: 0, width: 300, height: 200)),
            Self.text(x: 20, y: 220, width: 800, lines: 5),
            Self.rule(x: 20, y: 560, width: 800, height: 3),
            Self.text(x: 20, y: 600, width: 800, lines: 20, kind: .table),
            Self.text(x: 300, y: 1_900, width: 300, lines: 1),
        ])
        #expect(layout == .singleBlock)
        #expect(step.step == "layout" && step.applied)
        #expect(step.parameters["singleBlock"] == 1)
        #expect(step.parameters["columnPairs"] == 0 && step.parameters["gridRules"] == 0)
        #expect(step.parameters["lineHeight"] == Double(Self.lineHeight))
        #expect(step.parameters["pictures"] == 1 && step.parameters["tables"] == 1)
    }

    @Test("Two columns side by side are read with the full layout analysis")
    func twoColumns() {
        let (layout, step) = Self.choose([
            Self.text(x: 100, y: 100, width: 900, lines: 40),
            Self.text(x: 1_040, y: 100, width: 900, lines: 38),
        ])
        #expect(layout == .page)
        #expect(step.parameters["columnPairs"] == 1)
        #expect(step.parameters["singleBlock"] == 0)
    }

    @Test("A one-column head over two columns and a one-column foot: the columns in the middle decide")
    func mixedLayout() {
        let (layout, step) = Self.choose([
            Self.text(x: 100, y: 100, width: 1_840, lines: 4),
            Self.text(x: 100, y: 400, width: 900, lines: 20),
            Self.text(x: 1_040, y: 400, width: 900, lines: 20),
            Self.text(x: 100, y: 1_700, width: 1_840, lines: 3),
        ])
        #expect(layout == .page)
        #expect(step.parameters["columnPairs"] == 1)
    }

    @Test("Line numbers beside a transcript, or prices beside items, are too narrow to be a column")
    func narrowBeside() {
        let numbers = Self.text(x: 40, y: 100, width: 2 * Self.lineHeight, lines: 25)
        let transcript = Self.text(x: 160, y: 100, width: 1_200, lines: 25)
        #expect(Self.choose([numbers, transcript]).0 == .singleBlock)
        // At 2 line heights wide it becomes a column when columns may be that narrow.
        var choice = LayoutChoice()
        choice.minColumnWidth = 2
        #expect(Self.choose([numbers, transcript], choice).0 == .page)
    }

    @Test("A figure beside prose stands for a column; a receipt's logo beside its heading does not")
    func figureBeside() {
        let prose = Self.text(x: 1_000, y: 400, width: 800, lines: 20)
        let figure = LayoutRegion(kind: .picture, box: PixelBox(x: 100, y: 400, width: 800, height: 1_100))
        let (layout, step) = Self.choose([Self.text(x: 100, y: 100, width: 1_700, lines: 4), figure, prose])
        #expect(layout == .page)
        #expect(step.parameters["columnPairs"] == 1)
        // 8 line heights wide, 6 tall: a logo.
        let logo = LayoutRegion(kind: .picture, box: PixelBox(x: 20, y: 20, width: 8 * Self.lineHeight, height: 6 * Self.lineHeight))
        #expect(Self.choose([logo, Self.text(x: 300, y: 20, width: 600, lines: 3), Self.text(x: 20, y: 300, width: 900, lines: 20)]).0 == .singleBlock)
        // Two pictures side by side are no text in columns.
        let other = LayoutRegion(kind: .picture, box: PixelBox(x: 1_000, y: 400, width: 800, height: 1_100))
        #expect(Self.choose([Self.text(x: 100, y: 100, width: 1_700, lines: 4), figure, other]).0 == .singleBlock)
    }

    @Test("Regions beside each other only within a line's height do not stand side by side")
    func barelyOverlapping() {
        let upper = Self.text(x: 100, y: 100, width: 900, lines: 10)
        // Starts a little above the upper region's bottom (700): overlaps by less than a line.
        let lower = Self.text(x: 1_040, y: 700 - Self.lineHeight / 2, width: 900, lines: 10)
        #expect(Self.choose([upper, lower]).0 == .singleBlock)
        let beside = Self.text(x: 1_040, y: 300, width: 900, lines: 10)
        #expect(Self.choose([upper, beside]).0 == .page)
    }

    @Test("A ruled table: a vertical rule between text lines that reach past it on both sides")
    func grid() {
        // One table region whose row lines run across the rule (as Tesseract's table lines do).
        let table = Self.text(x: 100, y: 100, width: 1_600, lines: 12, kind: .table)
        let rule = Self.rule(x: 700, y: 90, width: 3, height: 24 * Self.lineHeight + 20)
        let (layout, step) = Self.choose([table, rule])
        #expect(layout == .page)
        #expect(step.parameters["gridRules"] == 1)
        // Shorter than 4 line heights it is a mark, not a grid.
        #expect(Self.choose([table, Self.rule(x: 700, y: 90, width: 3, height: 3 * Self.lineHeight)]).0 == .singleBlock)
        // As wide as a line it is no rule of a grid either (a bar, a block of ink).
        #expect(Self.choose([table, Self.rule(x: 700, y: 90, width: Self.lineHeight, height: 700)]).0 == .singleBlock)
    }

    @Test("The paper's edge, with all the text on one side of it, is no grid")
    func paperEdge() {
        let text = Self.text(x: 20, y: 100, width: 800, lines: 30)
        // The edge runs down the left of the text: the lines start within a line height of it.
        let edge = Self.rule(x: 3, y: 0, width: 2, height: 2_000)
        #expect(Self.choose([text, edge]).0 == .singleBlock)
        let right = Self.rule(x: 830, y: 0, width: 2, height: 2_000)
        #expect(Self.choose([text, edge, right]).0 == .singleBlock)
    }

    @Test("A page without text lines gets the full analysis and says it chose nothing")
    func empty() {
        let (layout, step) = Self.choose([LayoutRegion(kind: .picture, box: PixelBox(x: 0, y: 0, width: 500, height: 500))])
        #expect(layout == .page)
        #expect(!step.applied)
        #expect(step.parameters["lineHeight"] == nil)
        #expect(Self.choose([]).0 == .page)
    }

    /// A ruled form like a precinct bulletin, 2200×1700: a head across the page above a rule at 209,
    /// four columns of entries between three rules running from it to 1622, a frame at each edge of
    /// the paper with text on one side only, a foot below.
    static func ruledForm(columnWidth: Int = 510) -> (regions: [LayoutRegion], rules: [PixelBox]) {
        let width = 160 + 4 * columnWidth
        var regions = [text(x: 90, y: 30, width: width - 200, lines: 3)]
        for column in 0..<4 {
            regions.append(text(x: 90 + column * columnWidth, y: 240, width: columnWidth - 20, lines: 20))
        }
        regions.append(text(x: 90, y: 1640, width: 1000, lines: 1))
        let rules = [PixelBox(x: 77, y: 37, width: 6, height: 1586)]
            + (1...3).map { PixelBox(x: 80 + $0 * columnWidth - 1, y: 209, width: 2, height: 1414) }
            + [PixelBox(x: width - 83, y: 37, width: 6, height: 1586)]
        return (regions, rules)
    }

    @Test("Long rules with columns on both sides cut the page: the head, the columns left to right, the foot")
    func ruledColumns() {
        let (regions, rules) = Self.ruledForm()
        let pieces = LayoutChoice().ruledPieces(width: 2200, height: 1700, rules: rules, regions: regions)
        #expect(pieces == [
            PixelBox(x: 0, y: 0, width: 2200, height: 209),
            PixelBox(x: 0, y: 209, width: 589, height: 1414),
            PixelBox(x: 591, y: 209, width: 508, height: 1414),
            PixelBox(x: 1101, y: 209, width: 508, height: 1414),
            PixelBox(x: 1611, y: 209, width: 589, height: 1414),
            PixelBox(x: 0, y: 1623, width: 2200, height: 77),
        ])
        // A double rule, two strokes 6 px apart, cuts once: its strokes and the gap between them are
        // left out, so only the column right of it changes.
        let doubled = rules + [PixelBox(x: rules[2].x + 8, y: 209, width: 2, height: 1414)]
        var narrowed = pieces
        narrowed[3] = PixelBox(x: 1109, y: 209, width: 500, height: 1414)
        #expect(LayoutChoice().ruledPieces(width: 2200, height: 1700, rules: doubled, regions: regions) == narrowed)
        // The frames at the paper's edges have text on one side only: alone they cut nothing.
        #expect(LayoutChoice().ruledPieces(width: 2200, height: 1700, rules: [rules[0], rules[4]], regions: regions).isEmpty)
    }

    @Test("Rules do not cut a table's narrow columns, short rules cut nothing, and the cut can be switched off")
    func ruledColumnsLeftAlone() {
        // Columns of 10 line heights: a table's cells, whose rows stay together.
        let (regions, rules) = Self.ruledForm(columnWidth: 300)
        #expect(LayoutChoice().ruledPieces(width: 1360, height: 1700, rules: rules, regions: regions).isEmpty)
        // Rules shorter than 40 % of the page.
        let (form, long) = Self.ruledForm()
        let short = long.map { PixelBox(x: $0.x, y: 600, width: $0.width, height: 600) }
        #expect(LayoutChoice().ruledPieces(width: 2200, height: 1700, rules: short, regions: form).isEmpty)
        var never = LayoutChoice()
        never.minCuttingRule = 1.01
        #expect(never.ruledPieces(width: 2200, height: 1700, rules: long, regions: form).isEmpty)
        // No text lines at all: no line height, no cut.
        #expect(LayoutChoice().ruledPieces(width: 2200, height: 1700, rules: long, regions: []).isEmpty)
    }

    @Test("One column between the rules narrower than 12 line heights makes them a table's grid: no cut; nor does a figure's edge")
    func narrowColumn() {
        // Columns at 0–800, 800–1100 (10 line heights) and 1100–2200.
        let regions = [Self.text(x: 20, y: 100, width: 760, lines: 20), Self.text(x: 820, y: 100, width: 260, lines: 20),
                       Self.text(x: 1120, y: 100, width: 1000, lines: 20)]
        let rules = [PixelBox(x: 799, y: 80, width: 2, height: 1300), PixelBox(x: 1099, y: 80, width: 2, height: 1300)]
        #expect(LayoutChoice().ruledPieces(width: 2200, height: 1700, rules: rules, regions: regions).isEmpty)
        // Without the rule at 1100 the columns are wide: the one at 800 cuts.
        // Nothing is written above or below the rules: the columns alone are read.
        #expect(LayoutChoice().ruledPieces(width: 2200, height: 1700, rules: [rules[0]], regions: regions) == [
            PixelBox(x: 0, y: 80, width: 799, height: 1300), PixelBox(x: 801, y: 80, width: 1399, height: 1300),
        ])
        // The edge of a figure (a picture, no text lines) beside prose cuts nothing: the analysis
        // keeps the figure out of the text, read apart it would read as noise.
        // Its drawing's marks come back as lines: circles three lines high, specks, a short word.
        let marks = [PixelBox(x: 300, y: 400, width: 90, height: 90), PixelBox(x: 500, y: 700, width: 20, height: 12),
                     PixelBox(x: 400, y: 900, width: 40, height: 30), PixelBox(x: 100, y: 1100, width: 600, height: 30)]
        let figure = [LayoutRegion(kind: .picture, box: PixelBox(x: 20, y: 100, width: 700, height: 1200)),
                      LayoutRegion(kind: .text, box: PixelBox(x: 100, y: 400, width: 600, height: 730), lines: marks),
                      Self.text(x: 820, y: 100, width: 1300, lines: 20)]
        #expect(LayoutChoice().ruledPieces(width: 2200, height: 1700, rules: [PixelBox(x: 760, y: 100, width: 3, height: 1200)], regions: figure).isEmpty)
    }

    @Test("A table beside charts in one ruled frame that the analysis took for one picture is cut at the rule inside it, and each side read")
    func swallowedBox() {
        // A title above, the frame (40–2160 × 90–1640) reported as one picture with no lines in it,
        // a rule at 1496 inside it, a foot below.
        let regions = [Self.text(x: 40, y: 20, width: 1000, lines: 1),
                       LayoutRegion(kind: .picture, box: PixelBox(x: 37, y: 91, width: 2126, height: 1550)),
                       Self.text(x: 40, y: 1660, width: 800, lines: 1)]
        let rules = [PixelBox(x: 39, y: 91, width: 6, height: 1550), PixelBox(x: 1496, y: 91, width: 11, height: 1550),
                     PixelBox(x: 2155, y: 91, width: 6, height: 1550)]
        #expect(LayoutChoice().ruledPieces(width: 2200, height: 1700, rules: rules, regions: regions) == [
            PixelBox(x: 0, y: 0, width: 2200, height: 91), PixelBox(x: 0, y: 91, width: 1496, height: 1550),
            PixelBox(x: 1507, y: 91, width: 693, height: 1550), PixelBox(x: 0, y: 1641, width: 2200, height: 59),
        ])
        // A picture that only reaches past the rule on one side (a figure and its frame) cuts nothing.
        let figure = [regions[0], LayoutRegion(kind: .picture, box: PixelBox(x: 37, y: 91, width: 1480, height: 1550)), regions[2]]
        #expect(LayoutChoice().ruledPieces(width: 2200, height: 1700, rules: rules, regions: figure).isEmpty)
    }

    @Test("The columns end where the rules do, but never across a text line: a column's line stays in its column, a line across the rule goes above or below")
    func noLineCutAcross() {
        // A rule from 200 to 980 beside two columns whose lines (30 px high, every 60 px from 190)
        // cross both of its ends: at 190–220 and at 970–1000.
        let regions = [Self.text(x: 20, y: 190, width: 700, lines: 14), Self.text(x: 820, y: 190, width: 700, lines: 14)]
        let rule = PixelBox(x: 779, y: 200, width: 2, height: 780)
        let pieces = LayoutChoice().ruledPieces(width: 1540, height: 1200, rules: [rule], regions: regions)
        // Each line crossed belongs to one column: the columns take them, from 190 to 1000, and nothing
        // is left above or below. Read above or below, the two columns' first (or last) lines would be
        // read as one row.
        #expect(pieces == [PixelBox(x: 0, y: 190, width: 779, height: 810), PixelBox(x: 781, y: 190, width: 759, height: 810)])
        // A head and a foot across the page, crossing the rule's ends (the rule drawn through them):
        // they go above and below, and the columns start and end clear of them.
        let across = [Self.text(x: 20, y: 185, width: 1500, lines: 1), Self.text(x: 20, y: 230, width: 700, lines: 12),
                      Self.text(x: 820, y: 230, width: 700, lines: 12), Self.text(x: 20, y: 965, width: 1500, lines: 1)]
        #expect(LayoutChoice().ruledPieces(width: 1540, height: 1200, rules: [rule], regions: across) == [
            PixelBox(x: 0, y: 0, width: 1540, height: 215), PixelBox(x: 0, y: 215, width: 779, height: 750),
            PixelBox(x: 781, y: 215, width: 759, height: 750), PixelBox(x: 0, y: 965, width: 1540, height: 235),
        ])
    }
}

/// An engine that reports fixed regions and records the layouts it is asked to read with.
final class RecordingRecognizer: TextRecognizer {
    let fixed: [LayoutRegion]
    var asked: [Layout] = []
    var analysed = 0
    init(regions: [LayoutRegion]) { fixed = regions }

    var engineName: String { "recording 1.0" }
    func regions(of image: Image) throws(RecognitionError) -> [LayoutRegion] { analysed += 1; return fixed }
    /// The sizes of the images read, in order.
    var sizes: [String] = []
    /// Reads every image as one block covering it, with one word of its size (`600x300`).
    func recognize(_ image: Image, layout: Layout, symbols: Bool) throws(RecognitionError) -> RecognizedPage {
        asked.append(layout)
        let size = "\(image.width)x\(image.height)"
        sizes.append(size)
        let box = PixelBox(x: 0, y: 0, width: image.width, height: image.height)
        let word = RecognizedElement(text: size, box: PixelBox(x: 1, y: 2, width: 3, height: 4), baseline: (1, 5, 4, 5))
        let block = RecognizedElement(text: size + "\n", box: box, children: [word])
        return RecognizedPage(width: image.width, height: image.height, blocks: [block], text: size + "\n\n")
    }
    func clear() {}
}

@Suite("TextRecognizer.read: auto is resolved from the regions before reading")
struct TextRecognizerReadTests {
    /// A tiny white page (PNM), enough for an `Image`.
    static func blank() throws -> Image {
        let bytes = Array("P5\n4 4\n255\n".utf8) + [UInt8](repeating: 255, count: 16)
        return try Image.decode(bytes, format: .pnm)
    }

    @Test("auto asks for the regions once and reads with the layout chosen, recording the step")
    func auto() throws {
        let columns = RecordingRecognizer(regions: [
            LayoutChoiceTests.text(x: 0, y: 0, width: 900, lines: 10), LayoutChoiceTests.text(x: 940, y: 0, width: 900, lines: 10),
        ])
        let read = try columns.read(try Self.blank(), layout: .auto, symbols: false)
        #expect(columns.asked == [.page] && columns.analysed == 1)
        #expect(read.step?.step == "layout")
        let receipt = RecordingRecognizer(regions: [LayoutChoiceTests.text(x: 0, y: 0, width: 900, lines: 10)])
        _ = try receipt.read(try Self.blank(), layout: .auto, symbols: false)
        #expect(receipt.asked == [.singleBlock])
    }

    /// A white page of `width`×`height` (PNM) with black vertical rules, each `(x, from, to)` 2 px wide.
    static func page(width: Int, height: Int, rules: [(x: Int, from: Int, to: Int)]) throws -> Image {
        var pixels = [UInt8](repeating: 255, count: width * height)
        for rule in rules {
            for y in rule.from..<rule.to { pixels[y * width + rule.x] = 0; pixels[y * width + rule.x + 1] = 0 }
        }
        return try Image.decode(Array("P5\n\(width) \(height)\n255\n".utf8) + pixels, format: .pnm)
    }

    @Test("auto on a page cut by a long rule reads the pieces one by one and puts them back in the page's pixels")
    func ruledPieces() throws {
        // Lines of 10 px on both sides of a rule at x 300 running from row 40 to the foot.
        let lines = [PixelBox(x: 20, y: 10, width: 500, height: 10)]
            + (0..<10).flatMap { [PixelBox(x: 20, y: 50 + 20 * $0, width: 250, height: 10), PixelBox(x: 330, y: 50 + 20 * $0, width: 250, height: 10)] }
        let text = LayoutRegion(kind: .text, box: PixelBox(x: 20, y: 10, width: 560, height: 240), lines: lines)
        // The engine's analysis saw the rule (a piece of it is enough): the pixels are searched.
        let engine = RecordingRecognizer(regions: [text, LayoutRegion(kind: .rule, box: PixelBox(x: 299, y: 100, width: 4, height: 100))])
        let image = try Self.page(width: 600, height: 295, rules: [(300, 40, 290)])
        let read = try engine.read(image, layout: .auto, symbols: true)
        // The head above the rule, the two columns, nothing below (no text there).
        #expect(engine.sizes == ["600x40", "300x250", "298x250"])
        #expect(read.step?.parameters["ruledPieces"] == 3 && read.step?.parameters["singleBlock"] == 0)
        #expect(read.page.width == 600 && read.page.height == 295)
        #expect(read.page.blocks.map(\.box) == [PixelBox(x: 0, y: 0, width: 600, height: 40), PixelBox(x: 0, y: 40, width: 300, height: 250),
                                                 PixelBox(x: 302, y: 40, width: 298, height: 250)])
        // Words and baselines move with their piece; the texts follow each other in reading order.
        let word = read.page.blocks[2].children[0]
        #expect(word.box == PixelBox(x: 303, y: 42, width: 3, height: 4))
        #expect(word.baseline.map { [$0.x1, $0.y1, $0.x2, $0.y2] } == [303, 45, 306, 45])
        #expect(read.page.text == "600x40\n\n300x250\n\n298x250\n\n")
        // Without the rule the page is read whole.
        let whole = RecordingRecognizer(regions: engine.fixed)
        let plain = try whole.read(try Self.page(width: 600, height: 295, rules: []), layout: .auto, symbols: true)
        #expect(whole.sizes == ["600x295"] && plain.step?.parameters["ruledPieces"] == nil && plain.step?.parameters["rulesMs"] != nil)
        // An analysis without a long vertical rule spares the page the search; so does the switch.
        let unruled = RecordingRecognizer(regions: [text])
        let spared = try unruled.read(image, layout: .auto, symbols: true)
        #expect(unruled.sizes == ["600x295"] && spared.step?.parameters["rulesMs"] == nil)
        var never = LayoutChoice()
        never.minCuttingRule = 1.01
        let off = RecordingRecognizer(regions: engine.fixed)
        #expect(try off.read(image, layout: .auto, symbols: true, choice: never).step?.parameters["rulesMs"] == nil && off.sizes == ["600x295"])
    }

    @Test("Any other layout is read as asked, without an analysis or a step")
    func explicit() throws {
        for layout in [Layout.page, .singleBlock, .singleLine, .sparse] {
            let engine = RecordingRecognizer(regions: [])
            let read = try engine.read(try Self.blank(), layout: layout, symbols: true)
            #expect(engine.asked == [layout] && engine.analysed == 0)
            #expect(read.step == nil)
        }
    }
}
