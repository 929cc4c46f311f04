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
}

/// An engine that reports fixed regions and records the layouts it is asked to read with.
final class RecordingRecognizer: TextRecognizer {
    let fixed: [LayoutRegion]
    var asked: [Layout] = []
    var analysed = 0
    init(regions: [LayoutRegion]) { fixed = regions }

    var engineName: String { "recording 1.0" }
    func regions(of image: Image) throws(RecognitionError) -> [LayoutRegion] { analysed += 1; return fixed }
    func recognize(_ image: Image, layout: Layout, symbols: Bool) throws(RecognitionError) -> RecognizedPage {
        asked.append(layout)
        return RecognizedPage(width: image.width, height: image.height, blocks: [], text: "")
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
