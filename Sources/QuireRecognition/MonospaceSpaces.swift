import Foundation
import Imaging

/// Puts back the spaces Tesseract drops on monospaced lines. Thermal receipts and typewriters print
/// every character in a cell of the same width, and a space is an empty cell; Tesseract's line
/// recognizer, trained mostly on proportional print, often runs two words together across one
/// (`TOTALGST`, `GSTSUMMARY`). On a line whose characters stand on a regular pitch, a word is split
/// where the centres of two of its characters are ``minimumCells`` pitches apart or more.
///
/// A line counts as monospaced when at least ``minimumDistances`` consecutive characters within its
/// words were measured and ``monospacedShare`` of those distances lie within 0.8–1.25 of their
/// median (proportional print fails this: `i` and `m` are not one width apart). Amounts
/// (`12.50`) are never split. It needs the symbol level: a page read without it is left as it is.
enum MonospaceSpaces {
    static let minimumCells = 1.8
    static let minimumDistances = 6
    static let monospacedShare = 0.85

    /// The page with its monospaced lines' run-together words split, how many words were split, and
    /// how many lines were monospaced.
    static func split(_ page: RecognizedPage) -> (RecognizedPage, split: Int, monospacedLines: Int) {
        var monospaced = 0
        let (out, split) = page.rebuilt(lines: { words in
            guard let pitch = pitch(of: words) else { return nil }
            monospaced += 1
            return splitting(words) { pieces(of: $0, pitch: pitch) }
        })
        return (out, split, monospaced)
    }

    /// A line's words with each replaced by its pieces, and how many were split; nil when none was.
    static func splitting(_ words: [RecognizedElement], _ pieces: (RecognizedElement) -> [RecognizedElement]) -> ([RecognizedElement], Int)? {
        var kept: [RecognizedElement] = []
        var split = 0
        for word in words {
            let parts = pieces(word)
            if parts.count > 1 { split += 1 }
            kept += parts
        }
        return split > 0 ? (kept, split) : nil
    }

    static func centre(_ symbol: RecognizedElement) -> Double { Double(symbol.box.x) + Double(symbol.box.width) / 2 }

    /// Whether the word's symbols spell its text (Tesseract keeps them so; an edited word may not).
    static func spelled(_ word: RecognizedElement) -> Bool {
        !word.children.isEmpty && word.children.map(\.text).joined() == word.text
    }

    /// The line's character pitch, pixels, when the line is monospaced; nil otherwise.
    static func pitch(of words: [RecognizedElement]) -> Double? {
        var distances: [Double] = []
        for word in words where spelled(word) {
            let centres = word.children.map(centre)
            distances += zip(centres, centres.dropFirst()).map { $1 - $0 }
        }
        guard distances.count >= minimumDistances else { return nil }
        let sorted = distances.sorted()
        let median = sorted[sorted.count / 2]
        guard median > 0 else { return nil }
        let regular = distances.filter { $0 >= 0.8 * median && $0 <= 1.25 * median }.count
        return Double(regular) >= monospacedShare * Double(distances.count) ? median : nil
    }

    /// The word cut at every empty cell (itself alone when there is none, or when it is an amount).
    static func pieces(of word: RecognizedElement, pitch: Double) -> [RecognizedElement] {
        cut(word) { previous, symbol in centre(symbol) - centre(previous) >= minimumCells * pitch }
    }

    /// The word cut between every two consecutive symbols `between` says a space stood between
    /// (itself alone when there is none, when its symbols do not spell it, or when it is an amount).
    static func cut(_ word: RecognizedElement, between: (RecognizedElement, RecognizedElement) -> Bool) -> [RecognizedElement] {
        guard word.children.count >= 2, spelled(word), DecimalSeparators.amount(word.text) == nil else { return [word] }
        var groups: [[RecognizedElement]] = [[word.children[0]]]
        for (previous, symbol) in zip(word.children, word.children.dropFirst()) {
            if between(previous, symbol) {
                groups.append([symbol])
            } else {
                groups[groups.count - 1].append(symbol)
            }
        }
        guard groups.count > 1 else { return [word] }
        return groups.map { symbols in
            var piece = word
            piece.children = symbols
            piece.text = symbols.map(\.text).joined()
            let x0 = symbols.map(\.box.x).min()!, y0 = symbols.map(\.box.y).min()!
            let x1 = symbols.map { $0.box.x + $0.box.width }.max()!, y1 = symbols.map { $0.box.y + $0.box.height }.max()!
            piece.box = PixelBox(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
            return piece
        }
    }
}
