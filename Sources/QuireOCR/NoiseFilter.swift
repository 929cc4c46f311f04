import Foundation
import Tesseract

/// Drops the "words" Tesseract makes of things that are not text: rules, borders, dotted separators,
/// specks (`|`, `—`, `ee`, `~~`). On the receipts these were a fifth of everything read; removing
/// them cut the word error by about 6 points and lost no date or total (docs/ocr.md).
enum NoiseFilter {
    /// Marks that mean something on their own (a quantity sign, a currency, a colon in a table).
    static let meaningfulMarks: Set<String> = ["-", ":", "@", "&", "#", "$", "%", "/", "+", "*", "=", "!", "?", "€", "£", "¥"]

    /// Whether a word is noise: nothing but marks that mean nothing alone, or at most two letters
    /// and digits read with less than `maxConfidence`.
    static func isNoise(_ word: RecognizedElement, maxConfidence: Double) -> Bool {
        let text = word.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let alphanumerics = text.unicodeScalars.filter { $0.properties.isAlphabetic || $0.properties.numericType != nil }.count
        if alphanumerics == 0 { return !meaningfulMarks.contains(text) }
        return alphanumerics <= 2 && (word.confidence ?? 0) < maxConfidence
    }

    /// The page without its noise words (and without lines, paragraphs and blocks left empty), with
    /// the texts of what lost words rebuilt; and how many words were dropped.
    static func filter(_ page: RecognizedPage, maxConfidence: Double) -> (RecognizedPage, dropped: Int) {
        var dropped = 0
        var out = page
        out.blocks = page.blocks.compactMap { block -> RecognizedElement? in
            var block = block
            var blockChanged = false
            block.children = block.children.compactMap { paragraph -> RecognizedElement? in
                var paragraph = paragraph
                var paragraphChanged = false
                paragraph.children = paragraph.children.compactMap { line -> RecognizedElement? in
                    var line = line
                    let kept = line.children.filter { !isNoise($0, maxConfidence: maxConfidence) }
                    guard kept.count != line.children.count else { return line }
                    dropped += line.children.count - kept.count
                    paragraphChanged = true
                    guard !kept.isEmpty else { return nil }
                    line.children = kept
                    line.text = kept.map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: " ") + "\n"
                    return line
                }
                guard !paragraph.children.isEmpty else { blockChanged = true; return nil }
                if paragraphChanged {
                    blockChanged = true
                    paragraph.text = paragraph.children.map(\.text).joined()
                }
                return paragraph
            }
            guard !block.children.isEmpty else { return nil }
            if blockChanged { block.text = block.children.map(\.text).joined(separator: "\n") + "\n" }
            return block
        }
        // Tesseract's page text: a line per line, a blank line after each paragraph.
        if dropped > 0 {
            out.text = out.blocks.flatMap(\.children).map { $0.children.map(\.text).joined() + "\n" }.joined()
        }
        return (out, dropped)
    }
}
