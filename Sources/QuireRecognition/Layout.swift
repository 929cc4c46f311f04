import Imaging
import QuireWire

/// How an engine is asked to find the text on a page, in no engine's words (Tesseract maps these to
/// its page segmentation modes).
public enum Layout: String, Sendable, CaseIterable {
    /// The page's regions decide: one column of text everywhere reads as one ``singleBlock``;
    /// anything else (columns, a sidebar, a ruled grid) as a ``page`` (``LayoutChoice``).
    case auto
    /// The engine's full layout analysis: columns read one after the other, pictures and rules left out.
    case page
    /// One block of lines read across the whole width: a receipt, a label, a slip, a form of one column.
    case singleBlock
    /// One line of text: a crop around a single line.
    case singleLine
    /// Text scattered over a picture, in no particular order: signs, labels, whiteboards.
    case sparse
}

/// A region of a page as an engine's layout analysis found it, in the analysed image's pixels.
public struct LayoutRegion: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// Text, in a column or across several (a heading), or a table's text.
        case text
        case table
        /// Text whose lines run top to bottom.
        case vertical
        /// A photo, a drawing, a chart.
        case picture
        /// A horizontal or vertical rule.
        case rule
        /// What the analysis could not place: specks, marks outside any column.
        case noise
    }

    public var kind: Kind
    public var box: PixelBox
    /// The text lines in the region (none for pictures, rules and noise).
    public var lines: [PixelBox]

    public init(kind: Kind, box: PixelBox, lines: [PixelBox] = []) {
        self.kind = kind
        self.box = box
        self.lines = lines
    }
}

/// Decides between reading a page as one block and reading it with the engine's full layout analysis,
/// from the regions that analysis found. The full analysis is the floor: it keeps columns apart and
/// leaves pictures out, but on a receipt it splits rows and loses text (its date found on 81% of 120
/// receipts against 91% read as one block). One block is chosen only where the text is one column
/// everywhere:
///
/// - no two text regions stand side by side (overlapping vertically by more than a line) with both at
///   least ``minColumnWidth`` line heights wide: columns, a sidebar, a head over columns all have such a
///   pair, while line numbers beside a transcript or prices beside items are too narrow to be a column.
///   A picture that wide and twice as tall beside a text region is a figure beside prose (a receipt's logo
///   beside its heading is smaller), and counts the same;
/// - no vertical rule at least ``minGridRule`` line heights long runs between text lines that reach a
///   line height past it on both sides: a ruled table, whose rows a single block would merge. A rule
///   at the paper's edge, with all the text on one side, is no grid.
///
/// The choice is recorded as the `layout` step, with what decided it.
public struct LayoutChoice: Sendable, Equatable {
    /// Side-by-side text regions narrower than this many line heights are not a column.
    public var minColumnWidth: Double = 4
    /// Vertical rules shorter than this many line heights are not a grid.
    public var minGridRule: Double = 4

    public init() {}

    /// The layout for a page with these regions, and the step that records why.
    public func choose(_ regions: [LayoutRegion]) -> (layout: Layout, step: OCRResult.Step) {
        let text = regions.filter { [.text, .table, .vertical].contains($0.kind) && !$0.lines.isEmpty }
        let lines = text.flatMap(\.lines)
        var parameters: [String: Double] = [
            "regions": Double(regions.count), "textRegions": Double(text.count),
            "pictures": Double(regions.filter { $0.kind == .picture }.count),
            "tables": Double(regions.filter { $0.kind == .table }.count),
        ]
        let heights = lines.map(\.height).sorted()
        guard !heights.isEmpty else {
            return (.page, OCRResult.Step(step: "layout", applied: false, parameters: parameters))
        }
        let lineHeight = Double(heights[heights.count / 2])
        parameters["lineHeight"] = lineHeight
        let columns = columnPairs(text, pictures: regions.filter { $0.kind == .picture }, lineHeight: lineHeight)
        let grid = gridRules(regions, lines: lines, lineHeight: lineHeight)
        parameters["columnPairs"] = Double(columns)
        parameters["gridRules"] = Double(grid)
        let single = columns == 0 && grid == 0
        parameters["singleBlock"] = single ? 1 : 0
        return (single ? .singleBlock : .page, OCRResult.Step(step: "layout", applied: true, parameters: parameters))
    }

    /// Pairs of regions side by side, both wide enough to be columns: two text regions, or a text
    /// region and a picture at least that wide and twice as tall (a figure beside prose).
    func columnPairs(_ text: [LayoutRegion], pictures: [LayoutRegion], lineHeight: Double) -> Int {
        let least = minColumnWidth * lineHeight
        let wide = text.filter { Double($0.box.width) >= least }
        let figures = pictures.filter { Double($0.box.width) >= least && Double($0.box.height) >= 2 * least }
        func sideBySide(_ a: PixelBox, _ b: PixelBox) -> Bool {
            let overlapY = min(a.y + a.height, b.y + b.height) - max(a.y, b.y)
            let overlapX = min(a.x + a.width, b.x + b.width) - max(a.x, b.x)
            return Double(overlapY) > lineHeight && overlapX <= 0
        }
        var pairs = 0
        for i in wide.indices {
            for j in wide.indices where j > i && sideBySide(wide[i].box, wide[j].box) { pairs += 1 }
            for figure in figures where sideBySide(wide[i].box, figure.box) { pairs += 1 }
        }
        return pairs
    }

    /// Vertical rules that run between text: lines beside the rule reach more than a line height past
    /// it on the left and on the right, at least two each way.
    func gridRules(_ regions: [LayoutRegion], lines: [PixelBox], lineHeight: Double) -> Int {
        let reach = Int(lineHeight.rounded(.up))
        return regions.filter { rule in
            guard rule.kind == .rule, Double(rule.box.height) >= minGridRule * lineHeight, Double(rule.box.width) < lineHeight else { return false }
            let x = rule.box.x + rule.box.width / 2
            let beside = lines.filter { min($0.y + $0.height, rule.box.y + rule.box.height) - max($0.y, rule.box.y) > 0 }
            return beside.filter { $0.x < x - reach }.count >= 2 && beside.filter { $0.x + $0.width > x + reach }.count >= 2
        }.count
    }
}

/// Why an engine could not read.
public struct RecognitionError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case initFailed = "init_failed"
        case unknownLanguage = "unknown_language"
        case recognitionFailed = "recognition_failed"
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) { self.code = code; self.message = message }
    public var description: String { "\(code.rawValue): \(message)" }
}

/// An engine that reads the text of a page image: Tesseract is the first. One instance per worker
/// thread, created and used on it (engines hold C state that is not thread-safe).
public protocol TextRecognizer: AnyObject {
    /// The engine and its version, as the result's `metadata.engine` names it.
    var engineName: String { get }
    /// The page's regions as the engine's own layout analysis finds them. An engine may keep the
    /// analysis for a ``recognize(_:layout:symbols:)`` of the same image with ``Layout/page`` that
    /// follows at once.
    func regions(of image: Image) throws(RecognitionError) -> [LayoutRegion]
    /// Reads `image` (its resolution set) with `layout`; the hierarchy goes down to symbols when
    /// `symbols` is true. ``Layout/auto`` reads as ``Layout/page``: the caller resolves it
    /// (``read(_:layout:symbols:choice:)``).
    func recognize(_ image: Image, layout: Layout, symbols: Bool) throws(RecognitionError) -> RecognizedPage
    /// Frees what the last page left behind; the engine stays ready.
    func clear()
}

extension TextRecognizer {
    /// Reads `image` with `layout`, resolving ``Layout/auto`` from the page's regions with `choice`
    /// first; returns the page and, for `auto`, the `layout` step that records the choice.
    public func read(_ image: Image, layout: Layout, symbols: Bool, choice: LayoutChoice = LayoutChoice())
        throws(RecognitionError) -> (page: RecognizedPage, step: OCRResult.Step?) {
        guard layout == .auto else { return (try recognize(image, layout: layout, symbols: symbols), nil) }
        let (chosen, step) = choice.choose(try regions(of: image))
        return (try recognize(image, layout: chosen, symbols: symbols), step)
    }
}

/// Finds which way up a page stands (Tesseract's OSD is the first).
public protocol OrientationDetector: AnyObject {
    /// The clockwise turn that makes `image` upright, or nil when it cannot tell.
    func orientation(of image: Image) -> OrientationGuess?
}

extension RecognizedPage {
    /// The mean confidence of the words read, 0…1 (0 when nothing was read).
    public var meanWordConfidence: Double {
        var sum = 0.0, count = 0
        for block in blocks {
            for paragraph in block.children {
                for line in paragraph.children {
                    for word in line.children {
                        if let c = word.confidence { sum += c; count += 1 }
                    }
                }
            }
        }
        return count == 0 ? 0 : sum / Double(count)
    }
}
