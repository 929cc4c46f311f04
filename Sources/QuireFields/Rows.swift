import QuireWire

/// One printed row of a receipt: the lines that stand side by side on the page joined left to right.
/// A label and its amount are often read as two lines (two columns, two blocks); a receipt's fields are
/// found on rows, so that "TOTAL" finds the amount printed beside it whichever way the page was cut.
struct Row: Sendable, Equatable {
    /// The row's words left to right, each with its box and confidence.
    var words: [OCRResult.Word]
    /// The words joined with single spaces, upper-cased (labels are matched without case).
    var text: String
    var box: OCRResult.Box
    /// Its place in the page's rows, top first.
    var index: Int
    /// Where each word stands in the page's hierarchy, as ``words``.
    var places: [WordPlace] = []

    /// The mean confidence of the words (0.5 where the engine gave none).
    var confidence: Double { Row.confidence(words) }

    static func confidence(_ words: [OCRResult.Word]) -> Double {
        let values = words.compactMap(\.confidence)
        return values.isEmpty ? 0.5 : values.reduce(0, +) / Double(values.count)
    }

    /// The page's rows, top to bottom: lines whose vertical extents overlap by more than half the
    /// smaller one's height are one row. Lines are taken from every block, since a page's layout
    /// analysis may put a row's label and amount in different blocks.
    static func rows(of page: OCRResult.Page) -> [Row] {
        var lines: [OCRResult.Line] = []
        var placed: [(block: Int, paragraph: Int, line: Int)] = []
        for (b, block) in page.blocks.enumerated() {
            for (p, paragraph) in block.paragraphs.enumerated() {
                for (l, line) in paragraph.lines.enumerated() where !line.words.isEmpty { lines.append(line); placed.append((b, p, l)) }
            }
        }
        let order = lines.indices.sorted {
            (lines[$0].boundingBox.y + lines[$0].boundingBox.height / 2, $0) < (lines[$1].boundingBox.y + lines[$1].boundingBox.height / 2, $1)
        }
        var groups: [[Int]] = []
        var extents: [(top: Int, bottom: Int)] = []
        for lineIndex in order {
            let line = lines[lineIndex]
            let top = line.boundingBox.y, bottom = line.boundingBox.y + line.boundingBox.height
            if let last = extents.last, let lastLines = groups.last {
                let overlap = min(bottom, last.bottom) - max(top, last.top)
                let smaller = min(line.boundingBox.height, lastLines.map { lines[$0].boundingBox.height }.min() ?? line.boundingBox.height)
                // Side by side, not below: lines of one row do not overlap horizontally.
                let besides = lastLines.map { lines[$0] }.allSatisfy { other in
                    line.boundingBox.x >= other.boundingBox.x + other.boundingBox.width - 2 || line.boundingBox.x + line.boundingBox.width <= other.boundingBox.x + 2
                }
                if smaller > 0, Double(overlap) > 0.5 * Double(smaller), besides {
                    groups[groups.count - 1].append(lineIndex)
                    extents[extents.count - 1] = (min(top, last.top), max(bottom, last.bottom))
                    continue
                }
            }
            groups.append([lineIndex])
            extents.append((top, bottom))
        }
        return groups.enumerated().map { index, group in
            let ordered = group.sorted { lines[$0].boundingBox.x < lines[$1].boundingBox.x }
            let words = ordered.flatMap { lines[$0].words }
            let places = ordered.flatMap { i in
                lines[i].words.indices.map { WordPlace(block: placed[i].block, paragraph: placed[i].paragraph, line: placed[i].line, word: $0) }
            }
            return Row(words: words, text: words.map(\.text).joined(separator: " ").uppercased(),
                       box: Geometry.union(ordered.map { lines[$0].boundingBox }), index: index, places: places)
        }
    }
}

/// Where a word stands in a page's hierarchy: its block, paragraph, line and place in the line.
public struct WordPlace: Sendable, Hashable {
    public var block: Int
    public var paragraph: Int
    public var line: Int
    public var word: Int
}

/// Boxes of the words a value was read from.
enum Geometry {
    static func union(_ boxes: [OCRResult.Box]) -> OCRResult.Box {
        guard let first = boxes.first else { return OCRResult.Box(x: 0, y: 0, width: 0, height: 0) }
        var minX = first.x, minY = first.y, maxX = first.x + first.width, maxY = first.y + first.height
        for box in boxes.dropFirst() {
            minX = min(minX, box.x); minY = min(minY, box.y)
            maxX = max(maxX, box.x + box.width); maxY = max(maxY, box.y + box.height)
        }
        return OCRResult.Box(x: minX, y: minY, width: maxX - minX, height: maxY - minY)
    }

    /// The box's four corners, clockwise from the top left (the result's polygons are).
    static func polygon(_ box: OCRResult.Box) -> [OCRResult.Point] {
        [OCRResult.Point(x: box.x, y: box.y), OCRResult.Point(x: box.x + box.width, y: box.y),
         OCRResult.Point(x: box.x + box.width, y: box.y + box.height), OCRResult.Point(x: box.x, y: box.y + box.height)]
    }
}
