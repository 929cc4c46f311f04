import Imaging

/// What the glyph boxes of a page say about its text before it is read: where the text is.
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
}
