import Foundation
import Imaging

extension RecognizedPage {
    /// The page with every word for which `transform` returns a list replaced by that list (an empty
    /// one drops the word; nil keeps it as it is), the texts of changed lines, paragraphs, blocks and
    /// the page rebuilt as Tesseract writes them, and lines, paragraphs and blocks left empty removed;
    /// and how many words were replaced or dropped.
    func rebuilt(words transform: (RecognizedElement) -> [RecognizedElement]?) -> (RecognizedPage, changedWords: Int) {
        rebuilt(lines: { words in
            var changed = 0
            var kept: [RecognizedElement] = []
            for word in words {
                if let replacement = transform(word) {
                    changed += 1
                    kept += replacement
                } else {
                    kept.append(word)
                }
            }
            return changed > 0 ? (kept, changed) : nil
        })
    }

    /// The page with each line's words replaced where `transform` returns new ones for the whole line
    /// (with how many words it counts as changed; nil keeps the line), rebuilt as ``rebuilt(words:)``.
    func rebuilt(lines transform: ([RecognizedElement]) -> (words: [RecognizedElement], changed: Int)?) -> (RecognizedPage, changedWords: Int) {
        var changedWords = 0
        var out = self
        var anyChanged = false
        out.blocks = blocks.compactMap { block -> RecognizedElement? in
            var block = block
            var blockChanged = false
            block.children = block.children.compactMap { paragraph -> RecognizedElement? in
                var paragraph = paragraph
                var paragraphChanged = false
                paragraph.children = paragraph.children.compactMap { line -> RecognizedElement? in
                    var line = line
                    guard let (kept, changed) = transform(line.children) else { return line }
                    changedWords += changed
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
            guard !block.children.isEmpty else { anyChanged = anyChanged || blockChanged; return nil }
            if blockChanged {
                anyChanged = true
                block.text = block.children.map(\.text).joined(separator: "\n") + "\n"
            }
            return block
        }
        // Tesseract's page text: a line per line, a blank line after each paragraph.
        if anyChanged {
            out.text = out.blocks.flatMap(\.children).map { $0.children.map(\.text).joined() + "\n" }.joined()
        }
        return (out, changedWords)
    }

    /// The page with words replaced where `edit` returns one.
    func editingWords(_ edit: (RecognizedElement) -> RecognizedElement?) -> RecognizedPage {
        rebuilt { word in edit(word).map { [$0] } }.0
    }
}
