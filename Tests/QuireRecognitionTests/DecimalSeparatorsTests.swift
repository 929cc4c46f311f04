import Testing
import Imaging
@testable import QuireRecognition

@Suite("Decimal separators: a page's odd amounts get the separator the page uses")
struct DecimalSeparatorsTests {
    static func word(_ text: String) -> RecognizedElement {
        let symbols = text.map { RecognizedElement(text: String($0), box: PixelBox(x: 0, y: 0, width: 1, height: 1), confidence: 0.9,
                                                   language: nil, baseline: nil, children: []) }
        return RecognizedElement(text: text, box: PixelBox(x: 0, y: 0, width: 10, height: 10), confidence: 0.9, language: "eng",
                                 baseline: nil, children: symbols)
    }

    /// One block, one paragraph, a line per row of words, texts as Tesseract writes them.
    static func page(_ rows: [[String]]) -> RecognizedPage {
        let lines = rows.map { row in
            RecognizedElement(text: row.joined(separator: " ") + "\n", box: PixelBox(x: 0, y: 0, width: 100, height: 10), confidence: 0.9,
                              language: nil, baseline: nil, children: row.map(word))
        }
        let paragraph = RecognizedElement(text: lines.map(\.text).joined(), box: PixelBox(x: 0, y: 0, width: 100, height: 100),
                                          confidence: 0.9, language: nil, baseline: nil, children: lines)
        let block = RecognizedElement(text: paragraph.text + "\n", box: paragraph.box, confidence: 0.9, language: nil, baseline: nil,
                                      children: [paragraph])
        return RecognizedPage(width: 100, height: 100, blocks: [block], deskewAngle: 0, writingDirection: "ltr", text: paragraph.text + "\n")
    }

    static func words(_ page: RecognizedPage) -> [String] {
        page.blocks.flatMap(\.children).flatMap(\.children).flatMap(\.children).map(\.text)
    }

    @Test("Amounts: 1–3 digits, a dot or a comma, two digits, with anything but digits around them")
    func amounts() {
        #expect(DecimalSeparators.amount("33,90")?.separator == ",")
        #expect(DecimalSeparators.amount("33,90")?.separatorOffset == 2)
        #expect(DecimalSeparators.amount("RM33,90")?.separatorOffset == 4)
        #expect(DecimalSeparators.amount("5.77*")?.separator == ".")
        #expect(DecimalSeparators.amount("(123.45)")?.separatorOffset == 4)
        // Groupings, dates, times, other decimals and plain words are not amounts.
        for text in ["1,250", "1.250,00", "1234.56", "12:30", "05/01/2018", "2.5", "1.5.20", "TOTAL", "", ",90", "3.9O"] {
            #expect(DecimalSeparators.amount(text) == nil, "\(text)")
        }
    }

    @Test("A page of dot amounts gets its comma amounts changed, symbols and texts too")
    func dotPage() {
        let page = Self.page([["Nasi", "Lemak", "12.50"], ["Teh", "4.20"], ["Cash", "RM50.00"], ["TOTAL", "RM33,90"], ["Tel", "1,250"]])
        let (unified, changed, dots, commas) = DecimalSeparators.unify(page)
        #expect((changed, dots, commas) == (1, 3, 1))
        #expect(Self.words(unified) == ["Nasi", "Lemak", "12.50", "Teh", "4.20", "Cash", "RM50.00", "TOTAL", "RM33.90", "Tel", "1,250"])
        let total = unified.blocks[0].children[0].children[3]
        #expect(total.text == "TOTAL RM33.90\n")
        #expect(total.children[1].children.map(\.text).joined() == "RM33.90")
        #expect(unified.text.contains("TOTAL RM33.90\n"))
        #expect(!unified.text.contains("33,90"))
        #expect(unified.blocks[0].children[0].text.contains("RM33.90"))
    }

    @Test("A page of comma amounts (12,50) gets its dot amounts changed to commas")
    func commaPage() {
        let page = Self.page([["Brot", "2,50"], ["Milch", "1,19"], ["Summe", "3,69"], ["Bar", "5.00"]])
        let (unified, changed, _, _) = DecimalSeparators.unify(page)
        #expect(changed == 1)
        #expect(Self.words(unified).last == "5,00")
    }

    @Test("Too few amounts, or both separators in like numbers: the page is left as read")
    func leftAlone() {
        let few = Self.page([["12.50"], ["4.20"], ["33,90"]])
        #expect(DecimalSeparators.unify(few).changed == 0)
        // Fewer than twice as many of one: the page mixes both, and neither is changed.
        let mixed = Self.page([["12.50"], ["4.20"], ["1.00"], ["7.00"], ["33,90"], ["2,10"], ["8,40"]])
        let (unified, changed, dots, commas) = DecimalSeparators.unify(mixed)
        #expect((changed, dots, commas) == (0, 4, 3))
        #expect(unified.text == mixed.text)
    }

    @Test("Twice as many amounts with one separator are enough (10 dots against 5 commas is a misread page)")
    func twiceAsMany() {
        let page = Self.page([["12.50"], ["4.20"], ["1.00"], ["7.00"], ["33,90"], ["2,10"]])
        let (unified, changed, dots, commas) = DecimalSeparators.unify(page)
        #expect((changed, dots, commas) == (2, 4, 2))
        #expect(Self.words(unified) == ["12.50", "4.20", "1.00", "7.00", "33.90", "2.10"])
    }

    /// A page of one line of words at the given x and width, 20 px high, confidence `confidence`.
    static func placedLine(_ words: [(text: String, x: Int, width: Int, confidence: Double)]) -> RecognizedPage {
        var page = page([words.map(\.text)])
        page.blocks[0].children[0].children[0].children = words.map { w in
            var word = word(w.text)
            word.box = PixelBox(x: w.x, y: 40, width: w.width, height: 20)
            word.confidence = w.confidence
            return word
        }
        return page
    }

    @Test("An amount broken after its full stop (55. 00) is joined: text, box, symbols, confidence, line text")
    func joinsSplitAmount() {
        let page = Self.placedLine([("TOTAL", 10, 70, 0.95), ("55.", 100, 40, 0.9), ("00", 150, 25, 0.7)])
        let (joined, count) = DecimalSeparators.joinSplitAmounts(page)
        #expect(count == 1)
        #expect(Self.words(joined) == ["TOTAL", "55.00"])
        let line = joined.blocks[0].children[0].children[0]
        let amount = line.children[1]
        #expect(amount.box == PixelBox(x: 100, y: 40, width: 75, height: 20))
        #expect(amount.children.map(\.text) == ["5", "5", ".", "0", "0"])
        #expect(amount.confidence == 0.7)
        #expect(line.text == "TOTAL 55.00\n")
        #expect(joined.text.contains("TOTAL 55.00"))
        // Prefixed and signed amounts too.
        for (head, whole) in [("RM5.", "RM5.83"), ("-30.", "-30.83")] {
            let (out, n) = DecimalSeparators.joinSplitAmounts(Self.placedLine([(head, 100, 40, 0.9), ("83", 145, 25, 0.9)]))
            #expect(n == 1 && Self.words(out) == [whole], "\(head)")
        }
    }

    @Test("Words farther apart than their height, commas, and other shapes stay apart")
    func leavesOthersApart() {
        let cases: [[(text: String, x: Int, width: Int, confidence: Double)]] = [
            [("38.", 100, 30, 0.9), ("39", 160, 25, 0.9)],   // 30 px apart, 20 px high: "Lot 38. 39"
            [("4,", 100, 20, 0.9), ("30", 125, 25, 0.9)],    // a comma: as often a list
            [("12.", 100, 30, 0.9), ("500", 135, 35, 0.9)],  // three digits after
            [("No.", 100, 30, 0.9), ("12", 135, 25, 0.9)],   // no digit before the stop
            [("55.", 100, 40, 0.9), ("0O", 145, 25, 0.9)],   // not two digits
        ]
        for words in cases {
            let page = Self.placedLine(words)
            let (out, n) = DecimalSeparators.joinSplitAmounts(page)
            #expect(n == 0 && Self.words(out) == words.map(\.text), "\(words.map(\.text))")
        }
    }
}
