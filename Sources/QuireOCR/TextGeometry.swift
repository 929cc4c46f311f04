import Tesseract

/// What the glyph boxes of a page say about its text, before it is read: where the text is and
/// whether it stands in columns.
extension Recognizer {
    /// The box around the text: the glyphs of about the text's size (a title up to 4× larger, not
    /// specks or rules), with a margin of three glyphs. A receipt scanned on an A4 bed is a fifth of
    /// the page; the rest is paper and specks that cost time and come out as noise words.
    static func textBox(_ glyphs: [PixelBox], glyphHeight: Double) -> PixelBox? {
        let text = glyphs.filter { Double($0.height) >= 0.4 * glyphHeight && Double($0.height) <= 4 * glyphHeight }
        guard text.count >= 12, let x0 = text.map(\.x).min(), let y0 = text.map(\.y).min(),
              let x1 = text.map({ $0.x + $0.width }).max(), let y1 = text.map({ $0.y + $0.height }).max() else { return nil }
        let margin = Int((3 * glyphHeight).rounded(.up))
        return PixelBox(x: max(0, x0 - margin), y: max(0, y0 - margin), width: x1 - x0 + 2 * margin, height: y1 - y0 + 2 * margin)
    }

    /// Whether the glyphs stand in columns side by side: a vertical band at least 1.5 glyphs wide in
    /// the middle of the text that (almost) no glyph crosses, with a good share of the text on each
    /// side. A receipt's prices stand apart too, but its headings cross the gap and the prices are
    /// too little text to be a column.
    static func hasColumns(_ glyphs: [PixelBox], glyphHeight: Double) -> Bool {
        guard glyphs.count >= 50, let left = glyphs.map(\.x).min(), let right = glyphs.map({ $0.x + $0.width }).max() else { return false }
        let bin = max(1, Int(glyphHeight / 2))
        let bins = (right - left) / bin + 1
        guard bins >= 8 else { return false }
        var coverage = [Double](repeating: 0, count: bins)
        for g in glyphs {
            for b in ((g.x - left) / bin)...min(bins - 1, (g.x + g.width - 1 - left) / bin) { coverage[b] += Double(g.height) }
        }
        guard let peak = coverage.max(), peak > 0 else { return false }
        let total = coverage.reduce(0, +)
        let empty = coverage.map { $0 <= 0.06 * peak }
        let needed = max(2, Int((1.5 * glyphHeight / Double(bin)).rounded(.up)))
        var start = Int(Double(bins) * 0.2)
        let end = Int(Double(bins) * 0.8)
        while start < end {
            guard empty[start] else { start += 1; continue }
            var stop = start
            while stop < bins, empty[stop] { stop += 1 }
            if stop - start >= needed {
                let before = coverage[..<start].reduce(0, +), after = coverage[stop...].reduce(0, +)
                if before >= 0.25 * total && after >= 0.25 * total { return true }
            }
            start = stop
        }
        return false
    }
}
