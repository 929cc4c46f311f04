import Foundation
import Imaging

/// Mends the brackets Tesseract misreads inside a word. Thin print's round bracket loses its curve
/// and comes out as a brace (`Tax($}`, `Amount{$)`, `(867388-U}`): a word that opens with one kind
/// and closes with another. Where a word's bracket closes one of another kind, and the word writes
/// neither the closer's own opener nor the opener's own closer, one of the two is misread; both
/// become round brackets, the kind print uses far more than braces or square ones (`(HYR}` →
/// `(HYR)`, `Tax{$)` → `Tax($)`). Pairs that match (`{x}`, `[1]`), brackets alone (`GST)` whose
/// opener is in the word before) and words with both kinds written are left as read.
enum Brackets {
    static let closerOf: [Character: Character] = ["(": ")", "[": "]", "{": "}"]
    static let openerOf: [Character: Character] = [")": "(", "]": "[", "}": "{"]

    /// The word's text with its mismatched bracket pairs made round, or nil when nothing changes.
    static func mended(_ text: String) -> String? {
        var characters = Array(text)
        var open: [Int] = []
        var changed = false
        for index in characters.indices {
            let character = characters[index]
            if closerOf[character] != nil {
                open.append(index)
            } else if let opener = openerOf[character], let last = open.popLast() {
                let written = characters[last]
                guard written != opener else { continue }
                // Both kinds written elsewhere in the word: it may mean them; leave it.
                guard !characters.contains(opener), !characters[(index + 1)...].contains(closerOf[written]!) else { continue }
                if written == "(" {
                    characters[index] = ")"
                    changed = true
                } else if character == ")" {
                    characters[last] = "("
                    changed = true
                }
            }
        }
        return changed ? String(characters) : nil
    }

    /// The page with its words' mismatched brackets made round (symbols and texts too), and how
    /// many words changed.
    static func mend(_ page: RecognizedPage) -> (RecognizedPage, changed: Int) {
        var changed = 0
        let edited = page.editingWords { word in
            guard let text = mended(word.text) else { return nil }
            var word = word
            // Symbols are the word's characters one by one where Tesseract kept them so.
            if MonospaceSpaces.spelled(word), word.children.count == text.count {
                for (index, character) in text.enumerated() {
                    word.children[index].text = String(character)
                }
            }
            word.text = text
            changed += 1
            return word
        }
        return (edited, changed)
    }
}
