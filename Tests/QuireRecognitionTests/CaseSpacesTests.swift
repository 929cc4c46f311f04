import Testing
@testable import QuireRecognition
import Imaging

@Suite("Case spaces: words run together where a small letter meets a capital across a gap are split")
struct CaseSpacesTests {
    /// A word of proportional print: each character `advance` px wide with `spacing` px after it,
    /// and `gap` px more before each index in `gaps`; letters 20 px high.
    static func word(_ text: String, x: Int = 0, advance: Int = 10, spacing: Int = 2, gaps: Set<Int> = [], gap: Int = 8) -> RecognizedElement {
        var column = x
        var symbols: [RecognizedElement] = []
        for (index, character) in text.enumerated() {
            if gaps.contains(index) { column += gap }
            symbols.append(RecognizedElement(text: String(character), box: PixelBox(x: column, y: 0, width: advance, height: 20), confidence: 0.9,
                                             language: nil, baseline: nil, children: []))
            column += advance + spacing
        }
        return RecognizedElement(text: text, box: PixelBox(x: x, y: 0, width: column - x, height: 20), confidence: 0.8, language: "eng",
                                 baseline: nil, children: symbols)
    }

    @Test("TotalGST with a gap before the G becomes Total GST, symbols, boxes and line text with it")
    func splits() {
        let page = MonospaceSpacesTests.page([Self.word("TotalGST", gaps: [5]), Self.word("5.27", x: 200)])
        let (split, count) = CaseSpaces.split(page)
        #expect(count == 1)
        #expect(MonospaceSpacesTests.words(split) == ["Total", "GST", "5.27"])
        let words = split.blocks[0].children[0].children[0].children
        #expect(words[0].children.map(\.text) == ["T", "o", "t", "a", "l"])
        #expect(words[1].box.x == words[1].children[0].box.x)
        #expect(words[0].box.x + words[0].box.width < words[1].box.x)
        #expect(split.text.contains("Total GST 5.27"))
    }

    @Test("No gap (McDonald, iPhone), capitals then small letters, or all capitals: left as read")
    func leftAlone() {
        let page = MonospaceSpacesTests.page([
            Self.word("McDonald"), Self.word("iPhone", x: 120), Self.word("GSTTotal", x: 220, gaps: [3]),
            Self.word("TOTALGST", x: 340, gaps: [5]),
        ])
        let (same, count) = CaseSpaces.split(page)
        #expect(count == 0)
        #expect(MonospaceSpacesTests.words(same) == ["McDonald", "iPhone", "GSTTotal", "TOTALGST"])
        // The gap is measured against the letters' height: 6 px between 20 px letters is not a space.
        let tight = MonospaceSpacesTests.page([Self.word("TaxCode", spacing: 1, gaps: [3], gap: 5)])
        #expect(CaseSpaces.split(tight).split == 0)
        let wide = MonospaceSpacesTests.page([Self.word("TaxCode", spacing: 1, gaps: [3], gap: 7)])
        #expect(MonospaceSpacesTests.words(CaseSpaces.split(wide).0) == ["Tax", "Code"])
    }
}
