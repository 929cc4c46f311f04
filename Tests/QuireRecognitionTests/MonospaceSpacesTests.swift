import Testing
@testable import QuireRecognition
import Imaging

@Suite("Monospace spaces: words run together across an empty cell are split")
struct MonospaceSpacesTests {
    /// A word of `text` whose characters stand in cells of `pitch` px from column `cell`, a cell of
    /// its own left empty before each index in `gaps`; and the column after it.
    static func word(_ text: String, cell: Int, pitch: Int = 10, gaps: Set<Int> = [], widths: [Int]? = nil) -> (RecognizedElement, Int) {
        var column = cell
        var symbols: [RecognizedElement] = []
        for (index, character) in text.enumerated() {
            if gaps.contains(index) { column += 1 }
            let width = widths?[index] ?? 6
            let x = column * pitch + (pitch - width) / 2
            symbols.append(RecognizedElement(text: String(character), box: PixelBox(x: x, y: 0, width: width, height: 14), confidence: 0.9,
                                             language: nil, baseline: nil, children: []))
            column += 1
        }
        let x0 = symbols.first!.box.x, x1 = symbols.last!.box.x + symbols.last!.box.width
        return (RecognizedElement(text: text, box: PixelBox(x: x0, y: 0, width: x1 - x0, height: 14), confidence: 0.8, language: "eng",
                                  baseline: nil, children: symbols), column)
    }

    static func page(_ words: [RecognizedElement]) -> RecognizedPage {
        let line = RecognizedElement(text: words.map(\.text).joined(separator: " ") + "\n", box: PixelBox(x: 0, y: 0, width: 500, height: 14),
                                     confidence: 0.8, language: nil, baseline: nil, children: words)
        let paragraph = RecognizedElement(text: line.text, box: line.box, confidence: 0.8, language: nil, baseline: nil, children: [line])
        let block = RecognizedElement(text: line.text + "\n", box: line.box, confidence: 0.8, language: nil, baseline: nil, children: [paragraph])
        return RecognizedPage(width: 500, height: 14, blocks: [block], deskewAngle: 0, writingDirection: "ltr", text: line.text + "\n")
    }

    static func words(_ page: RecognizedPage) -> [String] {
        page.blocks.flatMap(\.children).flatMap(\.children).flatMap(\.children).map(\.text)
    }

    @Test("TOTALGST with an empty cell after TOTAL becomes TOTAL GST, boxes and symbols with it")
    func splitsAtTheEmptyCell() {
        let (joined, next) = Self.word("TOTALGST", cell: 0, gaps: [5])
        let (amount, _) = Self.word("12.50", cell: next + 1)
        let (out, split, monospaced) = MonospaceSpaces.split(Self.page([joined, amount]))
        #expect(split == 1 && monospaced == 1)
        #expect(Self.words(out) == ["TOTAL", "GST", "12.50"])
        let pieces = out.blocks[0].children[0].children[0].children
        #expect(pieces[0].children.map(\.text).joined() == "TOTAL" && pieces[1].children.count == 3)
        #expect(pieces[0].box.x == joined.box.x && pieces[0].box.x + pieces[0].box.width <= pieces[1].box.x)
        #expect(pieces[1].confidence == joined.confidence && pieces[1].language == "eng")
        #expect(out.blocks[0].children[0].children[0].text == "TOTAL GST 12.50\n")
    }

    @Test("Proportional print, lines too short to tell, amounts and unspelled words are left as read")
    func leavesOthersAlone() {
        // Proportional: an i and an m are not one width apart; a wide gap inside a word is its shape.
        let widths = [2, 14, 6, 2, 14, 6, 2, 14]
        var column = 0
        var symbols: [RecognizedElement] = []
        for (index, width) in widths.enumerated() {
            symbols.append(RecognizedElement(text: String(Array("imaimaim")[index]), box: PixelBox(x: column, y: 0, width: width, height: 14),
                                             confidence: 0.9, language: nil, baseline: nil, children: []))
            column += width + 2 + (index == 3 ? 12 : 0)
        }
        let proportional = RecognizedElement(text: "imaimaim", box: PixelBox(x: 0, y: 0, width: column, height: 14), confidence: 0.8,
                                             language: "eng", baseline: nil, children: symbols)
        #expect(MonospaceSpaces.split(Self.page([proportional])).split == 0)
        // Too few characters to measure a pitch.
        let (short, _) = Self.word("ABCD", cell: 0, gaps: [2])
        #expect(MonospaceSpaces.split(Self.page([short])).split == 0)
        // An amount stays one word even with an empty cell in it.
        let (label, next) = Self.word("SUBTOTAL", cell: 0)
        let (amount, _) = Self.word("12.50", cell: next + 1, gaps: [3])
        let (out, split, _) = MonospaceSpaces.split(Self.page([label, amount]))
        #expect(split == 0 && Self.words(out) == ["SUBTOTAL", "12.50"])
    }
}
