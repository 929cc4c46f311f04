import QuireWire
import Testing
@testable import QuireFields

@Suite("Receipt second look")
struct ReceiptRereadingTests {
    /// A receipt whose total no printed check agrees with (cash 20.10 − change 7.00 is 13.10, not 13.70).
    let misread = [
        "KEDAI MAKAN SEDAP",
        "12, JALAN MERDEKA, 81100 JOHOR BAHRU",
        "Date: 16/03/2018 17:34",
        "NASI LEMAK 1 12.36",
        "Total : 13.70",
        "Cash 20.10",
        "Change 7.00",
    ]

    @Test("the date's words and, where no check agrees with the total, the money rows' amounts, the total first")
    func spansOfAMisreadTotal() {
        let spans = ReceiptRereading.spans(page(misread))
        #expect(spans.map(\.text) == ["16/03/2018", "13.70", "20.10", "7.00"])
        #expect(spans.map(\.kind) == [.date, .amount, .amount, .amount])
        // The first reading's words, where they stand.
        #expect(spans[1].words == [WordPlace(block: 0, paragraph: 0, line: 4, word: 2)])
        #expect(spans[1].box == OCRResult.Box(x: 90, y: 140, width: 50, height: 20))
    }

    @Test("a total that cash and change agree with is not read again, nor a date printed twice")
    func agreedTotalIsLeft() {
        var lines = misread
        lines[4] = "Total : 13.10"
        lines.append("Printed 16/03/2018")
        #expect(ReceiptRereading.spans(page(lines)).isEmpty)
    }

    @Test("without a date found, words shaped like one are read again, those on a DATE row first; amounts are not dates")
    func dateShapedWords() {
        let lines = ["SHOP", "#001 /01/20 13:30", "RECEIPT DATE: 20/0a/204£", "Total 10.00", "Cash 10.00", "Change 0.00"]
        let spans = ReceiptRereading.spans(page(lines))
        #expect(spans.filter { $0.kind == .date }.map(\.text) == ["20/0a/204£", "/01/20"])
        #expect(ReceiptRereading.isDateShaped("2018-03-16", onDateRow: false))
        #expect(ReceiptRereading.isDateShaped("19.10.18", onDateRow: false))
        #expect(!ReceiptRereading.isDateShaped("10.00", onDateRow: true))
        #expect(!ReceiptRereading.isDateShaped("#001-001-0934-0001", onDateRow: false))
        #expect(!ReceiptRereading.isDateShaped("C800018751", onDateRow: true))
    }

    @Test("a run the first reading broke is one span: `593, 10`, `RNa 00`")
    func brokenAmounts() {
        let spans = ReceiptRereading.spans(page(["SHOP", "Grand Total RNa 00", "Sub-total: 593, 10"]))
        #expect(spans.map(\.text) == ["RNa 00", "593, 10"])
        #expect(spans.allSatisfy { !$0.readsWhole })
    }

    @Test("a new reading is taken where it is a valid date or one amount, confident, and says something new")
    func replacements() {
        let amount = ReceiptRereading.Span(kind: .amount, words: [], box: OCRResult.Box(x: 0, y: 0, width: 1, height: 1), text: "13.70")
        #expect(ReceiptRereading.replacement(for: amount, reading: "13.10", confidence: 0.99) == "13.10")
        #expect(ReceiptRereading.replacement(for: amount, reading: "Total RM 13.10", confidence: 0.99) == "RM13.10")
        #expect(ReceiptRereading.replacement(for: amount, reading: "13.10", confidence: 0.5) == nil)
        #expect(ReceiptRereading.replacement(for: amount, reading: "13.70", confidence: 0.99) == nil)
        #expect(ReceiptRereading.replacement(for: amount, reading: "1310", confidence: 0.99) == nil)
        let rounding = ReceiptRereading.Span(kind: .amount, words: [], box: amount.box, text: "-0.02")
        #expect(ReceiptRereading.replacement(for: rounding, reading: "0.02", confidence: 0.99) == nil)
        let broken = ReceiptRereading.Span(kind: .amount, words: [], box: amount.box, text: "593, 10")
        #expect(ReceiptRereading.replacement(for: broken, reading: "593, 10", confidence: 0.99) == "593,10")

        let date = ReceiptRereading.Span(kind: .date, words: [], box: amount.box, text: "Date:16/03/2018")
        #expect(ReceiptRereading.replacement(for: date, reading: "Date:15/03/2018", confidence: 0.99) == "Date:15/03/2018")
        #expect(ReceiptRereading.replacement(for: date, reading: "16/03/2018", confidence: 0.99) == nil)
        #expect(ReceiptRereading.replacement(for: date, reading: "20/03/201t", confidence: 0.99) == nil)
        #expect(ReceiptRereading.replacement(for: date, reading: "32/13/2018", confidence: 0.99) == nil)
    }

    @Test("readings taken replace the words, and every text that holds them says the new one")
    func applying() throws {
        var read = page(misread)
        let spans = ReceiptRereading.spans(read)
        let outcome = ReceiptRereading.apply([(spans[0], "15/03/2018", 0.99), (spans[1], "13.10", 0.98)], to: &read)
        #expect(outcome == ReceiptRereading.Outcome(read: 2, changed: 2, dates: 1, amounts: 1))
        let lines = read.blocks[0].paragraphs[0].lines
        #expect(lines[2].text == "Date: 15/03/2018 17:34")
        #expect(lines[4].text == "Total : 13.10")
        #expect(lines[4].words[2].text == "13.10" && lines[4].words[2].confidence == 0.98)
        #expect(read.text.contains("Total : 13.10") && !read.text.contains("13.70"))
        #expect(read.blocks[0].paragraphs[0].text == read.text)
        // The total now agrees with cash − change.
        let fields = try #require(ReceiptFields.read(read).document?.fields)
        #expect(fields["Total"]?.valueCurrency?.amount == 13.10)
        #expect(fields["TransactionDate"]?.valueDate == "2018-03-15")
    }

    @Test("a run merged into one word keeps the line's other words and the texts around it")
    func mergingARun() {
        var read = page(["SHOP", "Sub-total: 593, 10", "Sub-total: 593, 10"])
        let span = ReceiptRereading.spans(read).first { $0.words.first?.line == 2 }!
        _ = ReceiptRereading.apply([(span, "593.10", 0.99)], to: &read)
        let line = read.blocks[0].paragraphs[0].lines[2]
        #expect(line.words.map(\.text) == ["Sub-total:", "593.10"])
        #expect(line.words[1].boundingBox == span.box)
        // The second of two identical lines was the one read again.
        #expect(read.text == "SHOP\nSub-total: 593, 10\nSub-total: 593.10")
    }

    @Test("a date read surely is not read again; without a date, a year is read with the word before it")
    func sureDatesAndYears() {
        #expect(!ReceiptRereading.spans(page(misread, confidence: 0.97)).contains { $0.kind == .date })
        #expect(ReceiptRereading.spans(page(misread, confidence: 0.94)).contains { $0.kind == .date })
        let spans = ReceiptRereading.spans(page(["SHOP", "cee 2018 CS-20242", "Total 10.00", "Cash 10.00", "Change 0.00"]))
        #expect(spans.map(\.text) == ["cee 2018"])
        #expect(!ReceiptRereading.isYear("1999") && ReceiptRereading.isYear("2018") && !ReceiptRereading.isYear("20180"))
    }

    @Test("an amount read surely is not read again; a total read surely on a receipt that does not round needs no check read either")
    func sureAmounts() {
        var sureCash = page(misread)
        sureCash.blocks[0].paragraphs[0].lines[5].words[1].confidence = 0.97
        #expect(ReceiptRereading.spans(sureCash).map(\.text) == ["16/03/2018", "13.70", "7.00"])
        var sureTotal = page(misread)
        sureTotal.blocks[0].paragraphs[0].lines[4].words[2].confidence = 0.97
        #expect(ReceiptRereading.spans(sureTotal).map(\.text) == ["16/03/2018"])
        // Where the receipt rounds, which amount is the total is the checks' to say: they are read.
        var rounding = misread
        rounding.insert("Rounding 0.00", at: 4)
        var rounds = page(rounding)
        rounds.blocks[0].paragraphs[0].lines[5].words[2].confidence = 0.97
        #expect(ReceiptRereading.spans(rounds).map(\.text) == ["16/03/2018", "20.10", "7.00", "0.00"])
        // The total of a receipt without rounding settles it; with it, not.
        #expect(ReceiptRereading.spans(page(misread)).filter(\.settlesTotal).map(\.text) == ["13.70"])
        #expect(!ReceiptRereading.spans(page(rounding)).contains { $0.settlesTotal })
    }

    @Test("a new reading confirms an amount where it reads the same amount, confidently")
    func confirmations() {
        let amount = ReceiptRereading.Span(kind: .amount, words: [], box: OCRResult.Box(x: 0, y: 0, width: 1, height: 1), text: "13.70")
        #expect(ReceiptRereading.confirms(amount, reading: "13.70", confidence: 0.9))
        #expect(ReceiptRereading.confirms(amount, reading: "Total RM13.70", confidence: 0.9))
        #expect(!ReceiptRereading.confirms(amount, reading: "13.70", confidence: 0.5))
        #expect(!ReceiptRereading.confirms(amount, reading: "13.10", confidence: 0.99))
        // A run the first reading broke has no amount to confirm, nor has a date.
        let broken = ReceiptRereading.Span(kind: .amount, words: [], box: amount.box, text: "13 70")
        #expect(!ReceiptRereading.confirms(broken, reading: "13.70", confidence: 0.99))
        let date = ReceiptRereading.Span(kind: .date, words: [], box: amount.box, text: "16/03/2018")
        #expect(!ReceiptRereading.confirms(date, reading: "16/03/2018", confidence: 0.99))
    }

    @Test("an amount taller than its row's words is also cut in the row's band, down to its foot; a date is moved into the band")
    func tallAmounts() throws {
        var read = page(["SHOP", "Total Sales 64.80", "Cash 70.00", "Change 5.00", "Date: 16/03/2018 #01"])
        // A pen's mark above the total's amount, and one below the date, stretch their boxes.
        read.blocks[0].paragraphs[0].lines[1].words[2].boundingBox = OCRResult.Box(x: 130, y: 20, width: 50, height: 70)
        read.blocks[0].paragraphs[0].lines[4].words[1].boundingBox = OCRResult.Box(x: 70, y: 140, width: 100, height: 60)
        let spans = ReceiptRereading.spans(read)
        let total = try #require(spans.first { $0.text == "64.80" })
        #expect(total.box == OCRResult.Box(x: 130, y: 20, width: 50, height: 70))
        #expect(total.band == OCRResult.Box(x: 130, y: 50, width: 50, height: 40))
        let date = try #require(spans.first { $0.kind == .date })
        #expect(date.box == OCRResult.Box(x: 70, y: 140, width: 100, height: 20) && date.band == nil)
        #expect(spans.first { $0.text == "70.00" }?.band == nil)
    }

    @Test("GASH is CASH misread")
    func gash() {
        #expect(Labels.kind("GASH : 112.48") == .cash)
    }

    @Test("a line found inside an earlier line's text is replaced where it stands, not where it first appears")
    func lineInsideAnEarlierLine() {
        var read = page(["SHOP", "Total 13.70", "13.70"])
        let span = ReceiptRereading.Span(kind: .amount, words: [WordPlace(block: 0, paragraph: 0, line: 2, word: 0)],
                                         box: read.blocks[0].paragraphs[0].lines[2].words[0].boundingBox, text: "13.70")
        _ = ReceiptRereading.apply([(span, "13.10", 0.99)], to: &read)
        #expect(read.text == "SHOP\nTotal 13.70\n13.10")
        #expect(ReceiptRereading.replacing("ab", with: "x", occurrence: 1, in: "ab-ab") == "ab-x")
        #expect(ReceiptRereading.replacing("ab", with: "x", occurrence: 2, in: "ab-ab") == nil)
    }
}
