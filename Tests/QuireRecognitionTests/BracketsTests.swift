import Testing
import Imaging
@testable import QuireRecognition

@Suite("Brackets: a word's pair read as two kinds becomes round")
struct BracketsTests {
    @Test("Mismatched pairs become round, whichever side was misread")
    func mismatched() {
        #expect(Brackets.mended("Tax($}") == "Tax($)")
        #expect(Brackets.mended("Amount{$)") == "Amount($)")
        #expect(Brackets.mended("(867388-U}") == "(867388-U)")
        #expect(Brackets.mended("(RM]") == "(RM)")
        #expect(Brackets.mended("[RM)") == "(RM)")
        #expect(Brackets.mended("Amt{RM)") == "Amt(RM)")
        // Each pair on its own.
        #expect(Brackets.mended("(a}(b]") == "(a)(b)")
    }

    @Test("Matching pairs, brackets alone, and words that write both kinds are left as read")
    func leftAlone() {
        for text in ["(RM)", "{x}", "[1]", "GST)", "(Excluding", "f(x)", "({a)}", "{a)}", "Tax", "", ")(", "a}b{"] {
            #expect(Brackets.mended(text) == nil, "\(text)")
        }
        // A brace pair that closes with a square bracket: neither side is round, which is unsure.
        #expect(Brackets.mended("{a]") == nil)
    }

    @Test("The page's words, their symbols and the texts of lines are mended; the count is returned")
    func page() {
        let page = DecimalSeparatorsTests.page([["Tax($}", "5.27"], ["Total", "(RM)"]])
        let (mended, changed) = Brackets.mend(page)
        #expect(changed == 1)
        #expect(DecimalSeparatorsTests.words(mended) == ["Tax($)", "5.27", "Total", "(RM)"])
        let word = mended.blocks[0].children[0].children[0].children[0]
        #expect(word.children.map(\.text).joined() == "Tax($)")
        #expect(mended.text.contains("Tax($) 5.27\n"))
        #expect(!mended.text.contains("}"))
        #expect(Brackets.mend(DecimalSeparatorsTests.page([["Total", "(RM)"]])).changed == 0)
    }
}
