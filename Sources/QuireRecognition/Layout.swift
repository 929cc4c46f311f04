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
    /// Vertical rules at least this share of the page's height, with text beside them on both sides,
    /// cut the page into columns read one after the other (``ruledPieces(width:height:rules:regions:)``);
    /// above 1, never.
    public var minCuttingRule: Double = 0.4
    /// Long rules cut only where every column between them is at least this many line heights wide:
    /// narrower ones are a table's cells, whose rows must stay together.
    public var minRuledColumnWidth: Double = 12

    public init() {}

    /// A text line at least this many line heights tall is a tall line (the `layout` step's `tallLines`,
    /// those in the lower half of the page's text).
    public static let tallLine = 1.6

    /// How many of `lines` stand in the lower half of their vertical extent and are at least
    /// ``tallLine`` times `lineHeight` tall.
    public static func tallLines(_ lines: [PixelBox], lineHeight: Double) -> Int {
        guard let top = lines.map(\.y).min(), let bottom = lines.map({ $0.y + $0.height }).max() else { return 0 }
        let middle = (top + bottom) / 2
        return lines.filter { $0.y >= middle && Double($0.height) >= tallLine * lineHeight }.count
    }

    /// The layout for a page with these regions, and the step that records why.
    public func choose(_ regions: [LayoutRegion]) -> (layout: Layout, step: OCRResult.Step) {
        let text = regions.filter { [.text, .table, .vertical].contains($0.kind) && !$0.lines.isEmpty }
        let lines = text.flatMap(\.lines)
        var parameters: [String: Double] = [
            "regions": Double(regions.count), "textRegions": Double(text.count),
            "pictures": Double(regions.filter { $0.kind == .picture }.count),
            "tables": Double(regions.filter { $0.kind == .table }.count),
        ]
        guard let lineHeight = Self.lineHeight(regions) else {
            return (.page, OCRResult.Step(step: "layout", applied: false, parameters: parameters))
        }
        parameters["lineHeight"] = lineHeight
        // Lines far taller than the page's in the lower half of its text (a total printed in double
        // height; a logo or a title stands at the top): a single block reads them badly or not at all.
        // Counted, for what reads the page after (receipt fields).
        parameters["tallLines"] = Double(Self.tallLines(lines, lineHeight: lineHeight))
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
        regions.filter { rule in
            rule.kind == .rule && Double(rule.box.height) >= minGridRule * lineHeight && Double(rule.box.width) < lineHeight
                && Self.between(rule.box, lines: lines, lineHeight: lineHeight)
        }.count
    }

    /// Whether text lines beside `rule` reach more than a line height past it on the left and on the
    /// right, at least two each way: text on both sides, not a frame at the paper's edge, nor the edge
    /// of a figure beside prose.
    static func between(_ rule: PixelBox, lines: [PixelBox], lineHeight: Double) -> Bool {
        let reach = Int(lineHeight.rounded(.up))
        let x = rule.x + rule.width / 2
        let beside = lines.filter { min($0.y + $0.height, rule.y + rule.height) - max($0.y, rule.y) > 0 }
        return beside.filter { $0.x < x - reach }.count >= 2 && beside.filter { $0.x + $0.width > x + reach }.count >= 2
    }

    /// Whether the page's pixels are worth searching for rules that cut it: the engine's analysis
    /// found a vertical rule at least ``minGridRule`` line heights long (the search is a pass over
    /// every pixel, about 130 ms on a page enlarged for small print; a page without such a rule is
    /// spared it).
    public func mayCut(_ regions: [LayoutRegion]) -> Bool {
        guard minCuttingRule <= 1, let lineHeight = Self.lineHeight(regions) else { return false }
        return regions.contains { $0.kind == .rule && $0.box.height > $0.box.width && Double($0.box.height) >= minGridRule * lineHeight }
    }

    /// The median height of the text lines in `regions`, nil when they have none.
    public static func lineHeight(_ regions: [LayoutRegion]) -> Double? {
        let heights = textLines(regions).map(\.height).sorted()
        return heights.isEmpty ? nil : Double(heights[heights.count / 2])
    }

    /// The lines of the text regions (text, tables, vertical text) in `regions`.
    static func textLines(_ regions: [LayoutRegion]) -> [PixelBox] {
        regions.filter { [.text, .table, .vertical].contains($0.kind) }.flatMap(\.lines)
    }

    /// The pieces a page cut by long vertical rules is read in, one after the other, in the page's
    /// pixels: what stands above the rules across the whole width, then the columns between them
    /// from left to right, then what stands below, each only where the analysis found printed lines
    /// (or within a picture that made a cut); empty when no rule cuts the page.
    ///
    /// Tesseract's layout analysis drops the text that touches a long rule (the figures of a column
    /// set flush against it: a quarter of a ruled form's words), takes a ruled box of a table and
    /// charts for one picture, and, with the rule taken out, merges the columns the rule kept apart.
    /// Read apart, each column keeps its words and its order. A rule cuts where it stands at least ``minCuttingRule`` of the
    /// page's height with printed lines on both sides (``between(_:lines:lineHeight:)``) or inside a
    /// picture reaching a column's width past it on both sides (a ruled box the analysis took whole),
    /// and only where every column between such rules is at least ``minRuledColumnWidth`` line heights
    /// wide: one narrower makes the rules a table's grid, whose rows must stay together.
    ///
    /// - Parameters:
    ///   - rules: the page's vertical rules (`Image.verticalRules`), in its pixels.
    ///   - regions: the page's regions from the engine's layout analysis, for its text lines.
    public func ruledPieces(width: Int, height: Int, rules: [PixelBox], regions: [LayoutRegion]) -> [PixelBox] {
        guard minCuttingRule <= 1, let lineHeight = Self.lineHeight(regions) else { return [] }
        let lines = Self.textLines(regions)
        // Lines that look like print: about a line high and at least two wide. The analysis also
        // reports the marks of a drawing as lines (circles as tall as three lines, specks), which
        // must not make a figure's frame look like a rule between columns of text.
        let printed = lines.filter {
            Double($0.height) >= lineHeight / 2 && Double($0.height) <= 2 * lineHeight && Double($0.width) >= 2 * lineHeight
        }
        // A picture the analysis made of a whole ruled box, the rule inside it with a column's width of
        // it on each side: a table beside charts in one frame, taken for one picture with the table's
        // text in it (none of it read).
        let least = Int((minRuledColumnWidth * lineHeight).rounded(.up))
        let pictures = regions.filter { $0.kind == .picture }.map(\.box)
        func swallowing(_ rule: PixelBox) -> PixelBox? {
            pictures.first { p in
                p.x <= rule.x - least && p.x + p.width >= rule.x + rule.width + least
                    && p.y <= rule.y + rule.height / 4 && p.y + p.height >= rule.y + rule.height * 3 / 4
            }
        }
        var cuts: [PixelBox] = []
        for rule in rules.sorted(by: { $0.x < $1.x }) where Double(rule.height) >= minCuttingRule * Double(height)
            && Double(rule.width) < lineHeight && (Self.between(rule, lines: printed, lineHeight: lineHeight) || swallowing(rule) != nil) {
            // A double rule (two strokes less than a line height apart) is one cut.
            if let last = cuts.last, Double(rule.x - (last.x + last.width)) < lineHeight {
                let top = min(last.y, rule.y), bottom = max(last.y + last.height, rule.y + rule.height)
                cuts[cuts.count - 1] = PixelBox(x: last.x, y: top, width: rule.x + rule.width - last.x, height: bottom - top)
            } else {
                cuts.append(rule)
            }
        }
        let swallowed = cuts.compactMap(swallowing)
        // A column narrower than that between the rules makes them a table's grid: none cuts.
        let edges = [0] + cuts.map { $0.x + $0.width / 2 } + [width]
        guard (0..<(edges.count - 1)).allSatisfy({ Double(edges[$0 + 1] - edges[$0]) >= minRuledColumnWidth * lineHeight }) else { return [] }
        guard !cuts.isEmpty else { return [] }
        // The columns run as far as the rules do, but no text line is cut across: a line of one column
        // the top or the bottom would cross stays in its column (a figure's frame ending beside the
        // column's last line), where no line across a rule is crossed there too; any other goes to the
        // part above or below.
        var top = cuts.map(\.y).min()!, bottom = cuts.map { $0.y + $0.height }.max()!
        func acrossARule(_ line: PixelBox) -> Bool { cuts.contains { $0.x < line.x + line.width && $0.x + $0.width > line.x } }
        func crossing(_ y: Int) -> [PixelBox] { lines.filter { $0.y < y && $0.y + $0.height > y } }
        if let own = crossing(top).min(by: { $0.y < $1.y }), !crossing(top).contains(where: acrossARule),
           !crossing(own.y).contains(where: acrossARule) {
            top = own.y
        }
        if let own = crossing(bottom).max(by: { $0.y + $0.height < $1.y + $1.height }), !crossing(bottom).contains(where: acrossARule),
           !crossing(own.y + own.height).contains(where: acrossARule) {
            bottom = own.y + own.height
        }
        while let crossed = lines.first(where: { $0.y < top && $0.y + $0.height > top }) { top = crossed.y + crossed.height }
        while let crossed = lines.first(where: { $0.y < bottom && $0.y + $0.height > bottom }) { bottom = crossed.y }
        guard bottom > top else { return [] }
        var pieces: [PixelBox] = [PixelBox(x: 0, y: 0, width: width, height: top)]
        var left = 0
        for cut in cuts + [PixelBox(x: width, y: top, width: 0, height: bottom - top)] {
            if cut.x > left { pieces.append(PixelBox(x: left, y: top, width: cut.x - left, height: bottom - top)) }
            left = cut.x + cut.width
        }
        pieces.append(PixelBox(x: 0, y: bottom, width: width, height: height - bottom))
        // Pieces where the analysis found no printed line are left out (blank margins, pictures, which
        // are not read as text: a figure alone in its column reads as noise), but for those within a
        // picture the analysis made of a ruled box: their own analysis finds what they hold.
        pieces = pieces.filter { piece in
            piece.height > 0 && (printed.contains {
                let (cx, cy) = ($0.x + $0.width / 2, $0.y + $0.height / 2)
                return cx >= piece.x && cx < piece.x + piece.width && cy >= piece.y && cy < piece.y + piece.height
            } || swallowed.contains {
                min($0.x + $0.width, piece.x + piece.width) > max($0.x, piece.x) && min($0.y + $0.height, piece.y + piece.height) > max($0.y, piece.y)
            })
        }
        return pieces
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

/// What an engine wants to be shown of a page.
public enum RecognizerInput: Sendable, Equatable {
    /// The page prepared for a page reader: in grey, scaled for its glyphs' height, deskewed, its
    /// light evened out, its layout chosen from its regions (Tesseract).
    case preparedPage
    /// The picture as taken, upright and in colour, reduced until its longer side has at most
    /// `maxSide` pixels (the scene engine, whose detector finds the lines itself).
    case picture(maxSide: Int)
}

/// An engine that reads the text of a page image: Tesseract is the first. One instance per worker
/// thread, created and used on it (engines hold C state that is not thread-safe).
public protocol TextRecognizer: AnyObject {
    /// The engine and its version, as the result's `metadata.engine` names it.
    var engineName: String { get }
    /// What the engine wants to be shown; ``RecognizerInput/preparedPage`` unless it says otherwise.
    var input: RecognizerInput { get }
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
    public var input: RecognizerInput { .preparedPage }

    /// Reads `image` with `layout`, resolving ``Layout/auto`` from the page's regions with `choice`
    /// first; returns the page and, for `auto`, the `layout` step that records the choice.
    /// A page cut by long vertical rules (``LayoutChoice/ruledPieces(width:height:rules:regions:)``) is
    /// read piece by piece, each piece's layout chosen from its own regions, and put back together in
    /// the page's pixels; the step then counts the pieces and those read as one block. `rulesMs` is what
    /// looking for the rules cost, where the analysis found one worth looking for (``LayoutChoice/mayCut(_:)``).
    public func read(_ image: Image, layout: Layout, symbols: Bool, choice: LayoutChoice = LayoutChoice())
        throws(RecognitionError) -> (page: RecognizedPage, step: OCRResult.Step?) {
        guard layout == .auto else { return (try recognize(image, layout: layout, symbols: symbols), nil) }
        let regions = try regions(of: image)
        var (chosen, step) = choice.choose(regions)
        var pieces: [PixelBox] = []
        if choice.mayCut(regions) {
            let searched = ContinuousClock.now
            pieces = try ruledPieces(image, regions: regions, choice: choice)
            step.parameters["rulesMs"] = ((ContinuousClock.now - searched) / .milliseconds(1) * 10).rounded() / 10
        }
        guard !pieces.isEmpty else { return (try recognize(image, layout: chosen, symbols: symbols), step) }
        var parts: [(RecognizedPage, PixelBox)] = []
        var single = 0
        for piece in pieces {
            let crop: Image
            do throws(ImageError) {
                crop = try image.cropped(x: piece.x, y: piece.y, width: piece.width, height: piece.height)
            } catch {
                throw RecognitionError(.recognitionFailed, "cutting the page at its rules: \(error.message)")
            }
            let (pieceLayout, _) = choice.choose(try self.regions(of: crop))
            if pieceLayout == .singleBlock { single += 1 }
            parts.append((try recognize(crop, layout: pieceLayout, symbols: symbols), piece))
        }
        step.parameters["singleBlock"] = 0
        step.parameters["ruledPieces"] = Double(pieces.count)
        step.parameters["ruledPiecesAsOneBlock"] = Double(single)
        return (RecognizedPage(joining: parts, width: image.width, height: image.height), step)
    }

    /// The pieces of `image` cut at its long vertical rules, empty when none cuts it.
    func ruledPieces(_ image: Image, regions: [LayoutRegion], choice: LayoutChoice) throws(RecognitionError) -> [PixelBox] {
        guard choice.minCuttingRule <= 1, let lineHeight = LayoutChoice.lineHeight(regions) else { return [] }
        do throws(ImageError) {
            let rules = try image.verticalRules(minLength: Int((choice.minCuttingRule * Double(image.height)).rounded(.up)),
                                                maxWidth: max(2, Int(lineHeight / 2)))
            return choice.ruledPieces(width: image.width, height: image.height, rules: rules, regions: regions)
        } catch {
            throw RecognitionError(.recognitionFailed, "finding the page's rules: \(error.message)")
        }
    }
}

extension RecognizedPage {
    /// The pages read from pieces of one page, put together in the order given: every box moved by
    /// its piece's place on the page, the blocks one after the other, the texts too.
    public init(joining parts: [(page: RecognizedPage, at: PixelBox)], width: Int, height: Int) {
        func moved(_ element: RecognizedElement, _ dx: Int, _ dy: Int) -> RecognizedElement {
            var e = element
            e.box.x += dx
            e.box.y += dy
            if let b = e.baseline { e.baseline = (b.x1 + dx, b.y1 + dy, b.x2 + dx, b.y2 + dy) }
            e.children = e.children.map { moved($0, dx, dy) }
            return e
        }
        let read = parts.filter { !$0.page.blocks.isEmpty }
        let angles = read.map(\.page.deskewAngle).sorted()
        self.init(width: width, height: height,
                  blocks: read.flatMap { part in part.page.blocks.map { moved($0, part.at.x, part.at.y) } },
                  deskewAngle: angles.isEmpty ? 0 : angles[angles.count / 2],
                  writingDirection: read.first?.page.writingDirection ?? "ltr",
                  text: read.map(\.page.text).joined())
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
