import Foundation
import Imaging

/// Puts back the spaces Tesseract drops between two words in tight proportional print, where the
/// second starts with a capital: `TotalGST`, `TaxCode`, `DocNo.`. A lower-case letter followed by a
/// capital is where words meet far more often than inside one, and a gap between the two letters'
/// boxes of at least ``minimumGap`` of the word's median letter height is the space itself (letters
/// within a word stand closer; `McDonald` or `iPhone` have no such gap).
/// Like ``MonospaceSpaces`` it needs the symbol level.
enum CaseSpaces {
    static let minimumGap = 0.35

    /// The page with those words split, and how many words were split.
    static func split(_ page: RecognizedPage) -> (RecognizedPage, split: Int) {
        let (out, split) = page.rebuilt(lines: { words in MonospaceSpaces.splitting(words, pieces(of:)) })
        return (out, split)
    }

    static func pieces(of word: RecognizedElement) -> [RecognizedElement] {
        let heights = word.children.map(\.box.height).sorted()
        guard !heights.isEmpty else { return [word] }
        let gap = minimumGap * Double(heights[heights.count / 2])
        return MonospaceSpaces.cut(word) { previous, symbol in
            guard let a = previous.text.unicodeScalars.first, previous.text.unicodeScalars.count == 1,
                  let b = symbol.text.unicodeScalars.first, symbol.text.unicodeScalars.count == 1,
                  a.properties.isLowercase, b.properties.isUppercase else { return false }
            return Double(symbol.box.x - (previous.box.x + previous.box.width)) >= gap
        }
    }
}
