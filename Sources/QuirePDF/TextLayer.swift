internal import CPDFium
import Foundation
import Imaging
import QuireRecognition

/// One character of a page's text layer, in the pixels of the page rendered at some resolution.
public struct LayerCharacter: Sendable, Equatable {
    public var scalar: Unicode.Scalar
    public var box: PixelBox
    /// The height of the font as drawn (ascent to descent), pixels; 0 for the line breaks PDFium adds.
    public var size: Double
    /// Quarter turns the text runs clockwise from left-to-right, as the page shows it (1: downwards,
    /// 2: upside down, 3: upwards).
    public var quarterTurns: Int
    public init(scalar: Unicode.Scalar, box: PixelBox, size: Double, quarterTurns: Int = 0) {
        self.scalar = scalar
        self.box = box
        self.size = size
        self.quarterTurns = quarterTurns
    }

    var isSpace: Bool { scalar.properties.isWhitespace && scalar != "\n" && scalar != "\r" }
    var isBreak: Bool { scalar == "\n" || scalar == "\r" }
}

extension PDFDocument {
    /// The characters of page `index`'s text layer, in content order (PDFium's), with their boxes in
    /// the pixels of the page rendered at `dpi`. Line breaks PDFium adds between lines are kept (as
    /// `\n` with an empty box); control characters are dropped, a soft hyphen becomes `-`.
    public func characters(_ index: Int, dpi: Double) throws(PDFError) -> [LayerCharacter] {
        try inspect(index, dpi: dpi) { _ in true }.characters ?? []
    }

    func characters(_ page: QFPDF_PAGE, _ text: QFPDF_TEXTPAGE, size: (width: Double, height: Double), dpi: Double) -> [LayerCharacter] {
        let width = Int32(Self.pixels(size.width, dpi: dpi)), height = Int32(Self.pixels(size.height, dpi: dpi))
        do {
            // PDFium measures a character's angle in the page's own space; a page shown turned
            // (`/Rotate`) turns its text with it: a landscape table drawn sideways on a page turned
            // back is upright on the screen.
            let pageTurns = Int(max(0, api.pointee.PageGetRotation(page)))
            var characters: [LayerCharacter] = []
            let count = api.pointee.TextCountChars(text)
            for i in 0..<max(0, count) {
                var code = api.pointee.TextGetUnicode(text, i)
                if code == 0x02 || code == 0xAD { code = 0x2D }  // PDFium's soft hyphen at a line's end
                guard let scalar = Unicode.Scalar(code) else { continue }
                if scalar == "\n" || scalar == "\r" {
                    if characters.last?.isBreak != true { characters.append(LayerCharacter(scalar: "\n", box: PixelBox(x: 0, y: 0, width: 0, height: 0), size: 0)) }
                    continue
                }
                if scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) { continue }
                // The loose box: the font's full height (ascent to descent) at the size drawn, the same
                // for every character of a line, where the tight box of a full stop is a dot. Under a
                // text matrix that flips the glyphs PDFium puts it on the wrong side of the baseline:
                // where it misses the glyph's own (tight) box, the tight box is grown to its height instead.
                var rect = quire_fs_rectf(left: 0, top: 0, right: 0, bottom: 0)
                var box = PixelBox(x: 0, y: 0, width: 0, height: 0)
                func device(_ left: Double, _ top: Double, _ right: Double, _ bottom: Double) -> PixelBox {
                    var x0: Int32 = 0, y0: Int32 = 0, x1: Int32 = 0, y1: Int32 = 0
                    _ = api.pointee.PageToDevice(page, 0, 0, width, height, 0, left, top, &x0, &y0)
                    _ = api.pointee.PageToDevice(page, 0, 0, width, height, 0, right, bottom, &x1, &y1)
                    let minX = max(0, min(x0, x1)), minY = max(0, min(y0, y1))
                    let maxX = min(width, max(x0, x1)), maxY = min(height, max(y0, y1))
                    return PixelBox(x: Int(minX), y: Int(minY), width: Int(max(0, maxX - minX)), height: Int(max(0, maxY - minY)))
                }
                if api.pointee.TextGetLooseCharBox(text, i, &rect) != 0 {
                    box = device(Double(rect.left), Double(rect.top), Double(rect.right), Double(rect.bottom))
                }
                var left = 0.0, right = 0.0, bottom = 0.0, top = 0.0
                if api.pointee.TextGetCharBox(text, i, &left, &right, &bottom, &top) != 0, right > left || top > bottom {
                    let tight = device(left, top, right, bottom)
                    let middle = tight.y + tight.height / 2
                    if middle < box.y || middle > box.y + box.height {
                        box = PixelBox(x: tight.x, y: max(0, middle - box.height / 2), width: tight.width, height: box.height)
                    }
                }
                // The size drawn, across the line: the loose box's height (the font size PDFium reports
                // leaves out the text matrix, 1 for text drawn at `1 Tf` and scaled).
                let size = Double(rect.top - rect.bottom).magnitude * dpi / 72
                // PDFium's angle turns clockwise on the page (π/2: text running down). A space it adds
                // between words has no angle of its own (0): it runs with the text before it.
                let angle = Double(api.pointee.TextGetCharAngle(text, i))
                var turns = ((angle >= 0 && angle.isFinite ? Int((angle / (Double.pi / 2)).rounded()) : 0) + pageTurns) % 4
                if api.pointee.TextIsGenerated(text, i) == 1 { turns = characters.last?.quarterTurns ?? turns }
                characters.append(LayerCharacter(scalar: scalar, box: box, size: size.isFinite ? size : 0, quarterTurns: turns))
            }
            return TextLayer.composed(characters)
        }
    }

    /// Page `index`'s text layer as a recognized page in the pixels of its rendering at `dpi`
    /// (``TextLayer/page(_:width:height:language:symbols:)``).
    public func textLayer(_ index: Int, dpi: Double, language: String?, symbols: Bool) throws(PDFError) -> RecognizedPage {
        let page = try inspect(index, dpi: dpi) { _ in true }
        return TextLayer.page(page.characters ?? [], width: Self.pixels(page.size.width, dpi: dpi), height: Self.pixels(page.size.height, dpi: dpi),
                              language: language, symbols: symbols)
    }
}

/// A text layer's characters grouped as a recognition result, in reading order: words between spaces;
/// lines where the file breaks them, cut again where a gap wider than the font size parts a column
/// or a table cell from the next; blocks of lines set one under the other in the same column; and
/// the blocks ordered by Breuel's two rules ("High performance document layout analysis", 2003): a
/// block comes before another below it when their columns overlap, and
/// before one to its right unless a third block between them in height spans both; line numbers in a
/// margin start the rows they number. Every element has confidence 1: the text is the file's own.
public enum TextLayer {
    public static func page(_ characters: [LayerCharacter], width: Int, height: Int, language: String?, symbols: Bool) -> RecognizedPage {
        // Text turned on the page (a table's upright headings, a landscape table on a portrait page,
        // a page drawn upside down) is laid out in its own frame, turned so that it runs left to
        // right, and its boxes turned back: the most common direction first.
        var byTurns: [Int: [LayerCharacter]] = [:]
        var turns = 0
        for character in characters {
            if !character.isBreak { turns = character.quarterTurns }  // a break belongs with the text before it
            byTurns[turns, default: []].append(character)
        }
        let directions = byTurns.keys.sorted { (byTurns[$0]!.count, -$0) > (byTurns[$1]!.count, -$1) }
        var blocks: [RecognizedElement] = []
        for quarterTurns in directions {
            // Turned back (counterclockwise) by as much as the text is turned.
            let toFrame = Affine.rotation(quarterTurns: (4 - quarterTurns) % 4, width: Double(width), height: Double(height))
            let turned = byTurns[quarterTurns]!.map { character in
                var c = character
                if !c.isBreak { c.box = toFrame.box(c.box) }
                return c
            }
            let laidOut = layout(turned, language: language, symbols: symbols)
            blocks += quarterTurns == 0 ? laidOut : laidOut.map { $0.mapped(toFrame.inverse) }
        }
        let text = blocks.map { $0.text + "\n" }.joined(separator: "\n")
        return RecognizedPage(width: width, height: height, blocks: blocks, text: text)
    }

    /// Accents drawn as characters of their own over a letter (`e` then `ˆ`, as some generators set
    /// `ê`) put onto it: the letter becomes the precomposed one (`ê`, Unicode's canonical composition),
    /// so that the word is found and copied as it reads. An accent is put on the letter before it (or
    /// else after it) whose extent along the line it overlaps by half its own; an accent that overlaps
    /// none (`rock´n´roll`'s) stays as it is, and so does one with no precomposed letter.
    public static func composed(_ characters: [LayerCharacter]) -> [LayerCharacter] {
        func combining(_ scalar: Unicode.Scalar) -> Unicode.Scalar? {
            if (0x300...0x36F).contains(scalar.value) { return scalar }
            let spacing: [UInt32: UInt32] = [
                0x60: 0x300, 0xB4: 0x301, 0x2C6: 0x302, 0x5E: 0x302, 0x2DC: 0x303, 0xAF: 0x304, 0x2D8: 0x306, 0x2D9: 0x307,
                0xA8: 0x308, 0x2DA: 0x30A, 0x2DD: 0x30B, 0x2C7: 0x30C, 0xB8: 0x327, 0x2DB: 0x328,
            ]
            return spacing[scalar.value].flatMap(Unicode.Scalar.init)
        }
        func overlaps(_ accent: LayerCharacter, _ base: LayerCharacter) -> Bool {
            guard !base.isBreak, !base.isSpace, combining(base.scalar) == nil, base.quarterTurns == accent.quarterTurns else { return false }
            let across = accent.quarterTurns % 2 == 0
            let (a0, a1) = across ? (accent.box.x, accent.box.x + accent.box.width) : (accent.box.y, accent.box.y + accent.box.height)
            let (b0, b1) = across ? (base.box.x, base.box.x + base.box.width) : (base.box.y, base.box.y + base.box.height)
            return a1 > a0 && 2 * (min(a1, b1) - max(a0, b0)) >= a1 - a0
        }
        var out: [LayerCharacter] = []
        out.reserveCapacity(characters.count)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if let mark = combining(character.scalar) {
                let before = out.last.flatMap { overlaps(character, $0) ? $0 : nil }
                let after = before == nil && index + 1 < characters.count && overlaps(character, characters[index + 1]) ? characters[index + 1] : nil
                if let base = before ?? after {
                    let pair = String(String.UnicodeScalarView([base.scalar, mark])).precomposedStringWithCanonicalMapping.unicodeScalars
                    if pair.count == 1, let letter = pair.first {
                        var composed = base
                        composed.scalar = letter
                        if before != nil { out[out.count - 1] = composed } else { out.append(composed); index += 1 }
                        index += 1
                        continue
                    }
                }
            }
            out.append(character)
            index += 1
        }
        return out
    }

    /// Characters that run left to right laid out as blocks in reading order.
    static func layout(_ characters: [LayerCharacter], language: String?, symbols: Bool) -> [RecognizedElement] {
        let fragments = joined(self.fragments(characters))
        let lineElements: [RecognizedElement] = fragments.compactMap { run in
            var words: [RecognizedElement] = []
            var current: [LayerCharacter] = []
            func flush() {
                guard !current.isEmpty else { return }
                let text = String(String.UnicodeScalarView(current.map(\.scalar)))
                let box = union(current.map(\.box))
                let children = symbols ? current.map { RecognizedElement(text: String($0.scalar), box: $0.box, confidence: 1) } : []
                words.append(RecognizedElement(text: text, box: box, confidence: 1, language: language, children: children))
                current = []
            }
            for character in run {
                if character.isSpace { flush() } else { current.append(character) }
            }
            flush()
            guard !words.isEmpty else { return nil }
            let box = union(words.map(\.box))
            return RecognizedElement(text: words.map(\.text).joined(separator: " "), box: box, confidence: 1,
                                     baseline: (box.x, box.y + box.height, box.x + box.width, box.y + box.height), children: words)
        }
        let sizes = fragments.map { run in run.map(\.size).max() ?? 0 }
        return ordered(numbered(self.blocks(Array(zip(lineElements, sizes)))).map { lines -> RecognizedElement in
            let box = union(lines.map(\.box))
            let text = lines.map(\.text).joined(separator: "\n")
            let paragraph = RecognizedElement(text: text, box: box, confidence: 1, children: lines)
            return RecognizedElement(text: text, box: box, confidence: 1, children: [paragraph])
        })
    }

    /// Runs of characters on one line of one column: the file's lines (between its break characters,
    /// or where the text jumps back left below the last character), cut where a gap wider than the
    /// font size opens between two characters; a narrower gap wider than a fifth of it, without a
    /// space character, gets one.
    static func fragments(_ characters: [LayerCharacter]) -> [[LayerCharacter]] {
        var runs: [[LayerCharacter]] = [[]]
        var last: LayerCharacter?
        for character in characters {
            if character.isBreak {
                if !runs[runs.count - 1].isEmpty { runs.append([]) }
                last = nil
                continue
            }
            if !character.isSpace, character.box.height > 0, let previous = last {
                let gap = Double(character.box.x - (previous.box.x + previous.box.width))
                let em = max(character.size, previous.size, 1)
                let below = character.box.y >= previous.box.y + previous.box.height
                let backwards = character.box.x + character.box.width / 2 < previous.box.x
                if (backwards && below) || gap > em || (backwards && Double(previous.box.x - character.box.x) > em) {
                    runs.append([])
                } else if gap > em / 5 || Self.leavesSuperscript(previous, for: character), runs[runs.count - 1].last?.isSpace == false {
                    // A gap the file leaves without a space character still parts two words, and so
                    // does a raised, smaller mark before the text it marks (a footnote's number).
                    let space = PixelBox(x: previous.box.x + previous.box.width, y: previous.box.y, width: max(0, Int(gap)), height: previous.box.height)
                    runs[runs.count - 1].append(LayerCharacter(scalar: " ", box: space, size: previous.size, quarterTurns: previous.quarterTurns))
                }
            }
            runs[runs.count - 1].append(character)
            if !character.isSpace, character.box.height > 0 { last = character }
        }
        // Spaces at the ends of a run belong to neither neighbour.
        return runs.map { run in
            var run = run[...]
            while run.first?.isSpace == true { run = run.dropFirst() }
            while run.last?.isSpace == true { run = run.dropLast() }
            return Array(run)
        }.filter { !$0.isEmpty }
    }
    /// Whether `previous` is a superscript that `character` comes down from: drawn smaller (under 85 %
    /// of its size) and raised (its bottom a fifth of a font size above `character`'s). A subscript
    /// (`H₂O` drawn with a lowered 2) is not one.
    static func leavesSuperscript(_ previous: LayerCharacter, for character: LayerCharacter) -> Bool {
        guard previous.quarterTurns == character.quarterTurns, character.size > 0, previous.size < 0.85 * character.size else { return false }
        let raised = Double((character.box.y + character.box.height) - (previous.box.y + previous.box.height))
        return raised > character.size / 5
    }

    /// Fragments that continue one another on the same line put back together, whatever order the file
    /// drew them in: taken from left to right, a fragment joins the line whose end it starts at most
    /// one font size after (or half of one before), at the same height and size; a space goes between
    /// them where the file has none and the gap is wider than a fifth of the font size.
    static func joined(_ fragments: [[LayerCharacter]]) -> [[LayerCharacter]] {
        struct Run { var characters: [LayerCharacter]; var box: PixelBox; var size: Double }
        let runs = fragments.map { Run(characters: $0, box: union($0.map(\.box)), size: $0.map(\.size).max() ?? 0) }
        var lines: [Run] = []
        for run in runs.sorted(by: { ($0.box.x, $0.box.y) < ($1.box.x, $1.box.y) }) {
            var best: (index: Int, gap: Int)?
            for (k, line) in lines.enumerated() {
                let em = max(line.size, run.size, 1)
                guard abs(line.size - run.size) <= 0.25 * em else { continue }
                let gap = run.box.x - (line.box.x + line.box.width)
                guard Double(gap) <= em, Double(gap) >= -em / 2 else { continue }
                let overlap = min(run.box.y + run.box.height, line.box.y + line.box.height) - max(run.box.y, line.box.y)
                guard 2 * overlap >= min(run.box.height, line.box.height) else { continue }
                if best == nil || gap < best!.gap { best = (k, gap) }
            }
            guard let best else { lines.append(run); continue }
            var line = lines[best.index]
            if Double(best.gap) > line.size / 5, line.characters.last?.isSpace != true, run.characters.first?.isSpace != true {
                let space = PixelBox(x: line.box.x + line.box.width, y: line.box.y, width: max(0, best.gap), height: line.box.height)
                line.characters.append(LayerCharacter(scalar: " ", box: space, size: line.size, quarterTurns: run.characters[0].quarterTurns))
            }
            line.characters += run.characters
            line.box = union([line.box, run.box])
            line.size = max(line.size, run.size)
            lines[best.index] = line
        }
        return lines.map(\.characters)
    }

    /// Lines gathered into blocks, taken from the top of the page down: a line joins the block whose
    /// last line it continues (the same font size within a quarter, at most 0.8 of it below, their
    /// spans across overlapping by at least a third of the narrower), else starts a block.
    static func blocks(_ lines: [(element: RecognizedElement, size: Double)]) -> [[RecognizedElement]] {
        let order = lines.indices.sorted { (lines[$0].element.box.y, lines[$0].element.box.x) < (lines[$1].element.box.y, lines[$1].element.box.x) }
        var blocks: [(lines: [RecognizedElement], size: Double)] = []
        for index in order {
            let (line, size) = lines[index]
            let b = line.box
            var best: (block: Int, gap: Int)?
            for (k, block) in blocks.enumerated() {
                let last = block.lines[block.lines.count - 1].box
                let em = max(block.size, size, 1)
                guard abs(block.size - size) <= 0.25 * em else { continue }
                let gap = b.y - (last.y + last.height)
                // Below the last line (its middle under the last one's bottom half), not far below it.
                guard Double(gap) <= 0.8 * em, 2 * b.y + b.height > 2 * last.y + last.height + last.height / 2 else { continue }
                let overlap = min(b.x + b.width, last.x + last.width) - max(b.x, last.x)
                guard 3 * overlap >= min(b.width, last.width) else { continue }
                if best == nil || gap < best!.gap { best = (k, gap) }
            }
            if let best {
                blocks[best.block].lines.append(line)
            } else {
                blocks.append(([line], size))
            }
        }
        return blocks.map(\.lines)
    }

    /// Line numbers set in a margin beside the text (a transcript's or a pleading's 1 to 25, a listing's)
    /// put at the start of the line they number, as the page reads and as OCR reads it. Lines that are
    /// a whole number (one to five digits) and nothing else, one above another in the same margin, each one more than the
    /// one above, at least three in a row, are line numbers; each takes the lines of the other blocks
    /// that stand to its right on the same row, left to right. The numbered rows then read in order as
    /// one block, a number without a line of its own in its place.
    static func numbered(_ blocks: [[RecognizedElement]]) -> [[RecognizedElement]] {
        struct Place: Hashable { var block: Int; var line: Int }
        // A line number is one to five digits (a file's own text: no sign, no overflow).
        func number(_ line: RecognizedElement) -> Int? {
            (1...5).contains(line.text.count) && line.text.allSatisfy { $0.isASCII && $0.isNumber } ? Int(line.text) : nil
        }
        func sameRow(_ a: PixelBox, _ b: PixelBox) -> Bool {
            2 * (min(a.y + a.height, b.y + b.height) - max(a.y, b.y)) >= min(a.height, b.height)
        }
        // Blocks made of numbers only (a margin's numbers are blocks of one line where the text is
        // double-spaced), top to bottom.
        let numbers = blocks.indices.filter { b in blocks[b].allSatisfy { number($0) != nil } }
            .flatMap { b in blocks[b].indices.map { Place(block: b, line: $0) } }
            .sorted { blocks[$0.block][$0.line].box.y < blocks[$1.block][$1.line].box.y }
        var runs: [[Place]] = []
        var used = Set<Place>()
        for first in numbers where !used.contains(first) {
            var run = [first]
            for next in numbers where !used.contains(next) && next != first {
                let last = blocks[run[run.count - 1].block][run[run.count - 1].line], candidate = blocks[next.block][next.line]
                let across = min(last.box.x + last.box.width, candidate.box.x + candidate.box.width) - max(last.box.x, candidate.box.x)
                if number(candidate) == number(last)! + 1, across > 0, candidate.box.y > last.box.y { run.append(next) }
            }
            guard run.count >= 3 else { continue }
            runs.append(run)
            used.formUnion(run)
        }
        guard !runs.isEmpty else { return blocks }
        var taken = used
        var numberedBlocks: [[RecognizedElement]] = []
        for run in runs {
            numberedBlocks.append(run.map { place in
                let numberLine = blocks[place.block][place.line]
                var row: [(place: Place, line: RecognizedElement)] = []
                for b in blocks.indices {
                    for (l, line) in blocks[b].enumerated() where !taken.contains(Place(block: b, line: l)) {
                        if line.box.x >= numberLine.box.x + numberLine.box.width, sameRow(numberLine.box, line.box) { row.append((Place(block: b, line: l), line)) }
                    }
                }
                guard !row.isEmpty else { return numberLine }
                let lines = [numberLine] + row.sorted { $0.line.box.x < $1.line.box.x }.map(\.line)
                taken.formUnion(row.map(\.place))
                let box = union(lines.map(\.box))
                return RecognizedElement(text: lines.map(\.text).joined(separator: " "), box: box, confidence: 1,
                                         baseline: (box.x, box.y + box.height, box.x + box.width, box.y + box.height),
                                         children: lines.flatMap(\.children))
            })
        }
        let rest = blocks.indices.map { b in blocks[b].indices.filter { !taken.contains(Place(block: b, line: $0)) }.map { blocks[b][$0] } }
        return rest.filter { !$0.isEmpty } + numberedBlocks
    }

    /// Blocks in reading order by Breuel's rules: `a` before `b` when their spans across overlap and `a`
    /// is above, or when `a` is wholly left of `b` and no block whose middle lies between theirs in
    /// height spans across both. Among blocks free to come next, the highest (then leftmost) does.
    static func ordered(_ blocks: [RecognizedElement]) -> [RecognizedElement] {
        let n = blocks.count
        guard n > 1 else { return blocks }
        let boxes = blocks.map(\.box)
        func overlapsAcross(_ a: PixelBox, _ b: PixelBox) -> Bool { min(a.x + a.width, b.x + b.width) > max(a.x, b.x) }
        func middle(_ a: PixelBox) -> Int { 2 * a.y + a.height }
        var successors = [[Int]](repeating: [], count: n)
        var predecessors = [Int](repeating: 0, count: n)
        for i in 0..<n {
            for j in 0..<n where i != j {
                let a = boxes[i], b = boxes[j]
                var before = false
                if overlapsAcross(a, b) {
                    before = middle(a) < middle(b) || (middle(a) == middle(b) && i < j)
                } else if a.x + a.width <= b.x {
                    // Rule 2 looks for a block between them; past a few hundred blocks (a dense table)
                    // that search is skipped and left-to-right stands.
                    let low = min(middle(a), middle(b)), high = max(middle(a), middle(b))
                    before = n > 400 || !boxes.indices.contains { k in
                        k != i && k != j && middle(boxes[k]) > low && middle(boxes[k]) < high && overlapsAcross(boxes[k], a) && overlapsAcross(boxes[k], b)
                    }
                }
                if before {
                    successors[i].append(j)
                    predecessors[j] += 1
                }
            }
        }
        // Kahn's algorithm, taking the highest free block first; a cycle (which the rules can make
        // when blocks overlap oddly) is broken at its highest block.
        var done = [Bool](repeating: false, count: n)
        var result: [RecognizedElement] = []
        let byPosition = (0..<n).sorted { (boxes[$0].y, boxes[$0].x) < (boxes[$1].y, boxes[$1].x) }
        while result.count < n {
            let next = byPosition.first { !done[$0] && predecessors[$0] == 0 } ?? byPosition.first { !done[$0] }!
            done[next] = true
            result.append(blocks[next])
            for s in successors[next] { predecessors[s] -= 1 }
        }
        return result
    }

    static func union(_ boxes: [PixelBox]) -> PixelBox {
        let real = boxes.filter { $0.width > 0 || $0.height > 0 }
        guard let first = real.first else { return PixelBox(x: 0, y: 0, width: 0, height: 0) }
        var x0 = first.x, y0 = first.y, x1 = first.x + first.width, y1 = first.y + first.height
        for b in real.dropFirst() {
            x0 = min(x0, b.x); y0 = min(y0, b.y); x1 = max(x1, b.x + b.width); y1 = max(y1, b.y + b.height)
        }
        return PixelBox(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

extension Affine {
    /// The box around `box`'s corners mapped by this transform.
    func box(_ box: PixelBox) -> PixelBox {
        let corners = [(box.x, box.y), (box.x + box.width, box.y), (box.x, box.y + box.height), (box.x + box.width, box.y + box.height)]
            .map { apply(Double($0.0), Double($0.1)) }
        let x0 = corners.map(\.x).min()!, x1 = corners.map(\.x).max()!, y0 = corners.map(\.y).min()!, y1 = corners.map(\.y).max()!
        return PixelBox(x: Int(x0.rounded()), y: Int(y0.rounded()), width: Int((x1 - x0).rounded()), height: Int((y1 - y0).rounded()))
    }
}

extension RecognizedElement {
    /// This element and its children with their boxes (and a line's baseline) mapped by `transform`.
    func mapped(_ transform: Affine) -> RecognizedElement {
        var element = self
        element.box = transform.box(box)
        if let b = baseline {
            let start = transform.apply(Double(b.x1), Double(b.y1)), end = transform.apply(Double(b.x2), Double(b.y2))
            element.baseline = (Int(start.x.rounded()), Int(start.y.rounded()), Int(end.x.rounded()), Int(end.y.rounded()))
        }
        element.children = children.map { $0.mapped(transform) }
        return element
    }
}
