import Testing
@testable import QuireBench

@Suite("Accuracy measures")
struct AccuracyTests {
    @Test("CER folds white space and counts edits over the truth's length")
    func characterErrorRate() {
        #expect(Accuracy.characterErrorRate(truth: "hello  world\n", text: "hello world") == 0)
        #expect(Accuracy.characterErrorRate(truth: "abcd", text: "abxd") == 0.25)
        #expect(Accuracy.characterErrorRate(truth: "abcd", text: "") == 1)
        // Reading order counts: two lines swapped are many edits.
        #expect(Accuracy.characterErrorRate(truth: "first line\nsecond line", text: "second line\nfirst line") > 0.3)
    }

    @Test("Word error is order-independent and case-folded: max(missing, extra) over the truth's words")
    func wordError() {
        let same = Accuracy.wordError(truth: "TOTAL 12.50\nCASH 20.00", text: "cash 20.00 total 12.50")
        #expect(same.error == 0)
        // One substitution (12.80 for 12.50) and one extra word: missing 1, extra 2.
        let off = Accuracy.wordError(truth: "TOTAL 12.50 CASH 20.00", text: "TOTAL 12.80 CASH 20.00 |")
        #expect(off.missing == 1 && off.extra == 2 && off.words == 4)
        #expect(off.error == 0.5)
        #expect(Accuracy.wordError(truth: "a b", text: "").error == 1)
    }

    @Test("Key fields are found with white space ignored, case-folded")
    func keyFields() {
        #expect(Accuracy.contains("Date: 10 Mar 2018 18:24", value: "10 MAR 2018"))
        #expect(Accuracy.contains("TOTAL RM 60. 30", value: "60.30"))
        #expect(!Accuracy.contains("TOTAL RM 60.31", value: "60.30"))
        #expect(!Accuracy.contains("anything", value: " "))
    }
}

@Suite("Bag error, the datasets' measure")
struct BagErrorTests {
    @Test("Unmatched words on both sides count, over the truth's words; order and case do not")
    func unmatched() {
        let same = Accuracy.bagError(truth: "TOTAL 12.50\nCASH 20.00", text: "cash 20.00 total 12.50")
        #expect(same.error == 0 && same.missing == 0 && same.extra == 0 && same.tokens == 4)
        // One misread word and one extra: the word error says 2/4, the bag error (1 + 2)/4.
        let off = Accuracy.bagError(truth: "TOTAL 12.50 CASH 20.00", text: "TOTAL 12.80 CASH 20.00 |")
        #expect(off.missing == 1 && off.extra == 2 && off.tokens == 4)
        #expect(off.error == 0.75)
        #expect(Accuracy.wordError(truth: "TOTAL 12.50 CASH 20.00", text: "TOTAL 12.80 CASH 20.00 |").error == 0.5)
        // Repeats are matched one for one.
        #expect(Accuracy.bagError(truth: "a a b", text: "a b b").error == 2.0 / 3.0)
        #expect(Accuracy.bagError(truth: "a b", text: "").error == 1)
        #expect(Accuracy.bagError(truth: "a b", text: "a b c d e f").error == 2)
        #expect(Accuracy.bagError(truth: " \n", text: "").error == 0)
        #expect(Accuracy.bagError(truth: "", text: "noise").error == 1)
    }

    @Test("Chinese and Japanese characters are a token each, however the engine spaces them")
    func cjk() {
        #expect(Accuracy.tokens("价格：12 元") == ["价", "格", "：", "12", "元"])
        #expect(Accuracy.tokens("TOTAL東京x") == ["total", "東", "京", "x"])
        #expect(Accuracy.bagError(truth: "南丰站 G123", text: "南 丰 站 g123").error == 0)
        // One character wrong of four: one missing and one extra.
        #expect(Accuracy.bagError(truth: "南丰站到", text: "南丰站列").error == 0.5)
        // Korean spaces its words: a Hangul word stays one token.
        #expect(Accuracy.tokens("한국어 텍스트") == ["한국어", "텍스트"])
    }
}

@Suite("Accuracy rows: pooled, per group, per half")
struct AccuracyRowsTests {
    @Test("Means over the images of each selection, Quire's and the CLI's side by side")
    func rows() throws {
        let groups = ["prose", "tables", "prose", "tables"]
        let halves: [Half] = [.a, .a, .b, .b]
        let quire: [Int: ImageAccuracy] = [
            0: ImageAccuracy(cer: 0.10, wordError: 0.1, bagError: 0.2),
            1: ImageAccuracy(cer: 0.50, wordError: 0.3, bagError: 0.6),
            2: ImageAccuracy(cer: 0.20, wordError: 0.1, bagError: 0.2),
            3: ImageAccuracy(cer: 0.40, wordError: 0.5, bagError: 1.0),
        ]
        let cli: [Int: ImageAccuracy] = [0: ImageAccuracy(cer: 0.30, wordError: 0.2, bagError: 0.4),
                                         3: ImageAccuracy(cer: 0.10, wordError: 0.1, bagError: 0.2)]
        let rows = OCRAccuracyRow.rows(groups: groups, halves: halves, quire: quire, cli: cli)
        #expect(rows.map(\.group) == ["all", "prose", "tables", "half A", "half B"])
        #expect(rows.map(\.scope) == [.all, .group, .group, .half, .half])
        let all = try #require(rows[0].quire)
        #expect(all.images == 4 && all.cerPercent == 30 && all.wordErrorPercent == 25 && all.bagErrorPercent == 50)
        #expect(all.datePercent == nil && all.keyFieldImages == 0)
        #expect(rows[1].quire?.cerPercent == 15 && rows[2].quire?.cerPercent == 45)
        #expect(rows[3].quire?.cerPercent == 30 && rows[4].quire?.cerPercent == 30)
        // The CLI is pooled over the images it has scores for.
        #expect(rows[0].cli?.images == 2 && rows[0].cli?.cerPercent == 20)
        #expect(rows[1].cli?.cerPercent == 30 && rows[2].cli?.cerPercent == 10)
        #expect(rows[3].cli?.bagErrorPercent == 40 && rows[4].cli?.bagErrorPercent == 20)
    }

    @Test("One group names the pooled row; no CLI leaves its side empty; key fields are shares")
    func oneGroup() {
        let quire: [Int: ImageAccuracy] = [
            0: ImageAccuracy(cer: 0.2, wordError: 0.2, bagError: 0.2, dateFound: true, totalFound: true),
            1: ImageAccuracy(cer: 0.4, wordError: 0.2, bagError: 0.2, dateFound: false, totalFound: nil),
            2: ImageAccuracy(cer: 0.6, wordError: 0.2, bagError: 0.2, dateFound: true, totalFound: false),
        ]
        let rows = OCRAccuracyRow.rows(groups: ["receipt", "receipt", "receipt"], halves: [.a, .b, .a], quire: quire, cli: nil)
        #expect(rows.map(\.group) == ["receipt", "half A", "half B"])
        #expect(rows.allSatisfy { $0.cli == nil })
        #expect(rows[0].quire?.keyFieldImages == 3)
        #expect(rows[0].quire?.datePercent == 66.7 && rows[0].quire?.totalPercent == 50)
        #expect(rows[1].quire?.images == 2 && rows[1].quire?.cerPercent == 40)
        #expect(rows[2].quire?.datePercent == 0 && rows[2].quire?.totalPercent == nil)
    }

    @Test("An image is scored on CER, both word measures and its key fields")
    func image() {
        let score = ImageAccuracy(truth: "Date 10/03/2018\nTOTAL 60.30", keyFields: ["date": "10/03/2018", "total": "60.30", "company": "X"],
                                  text: "date 10/03/2018 total 60.80")
        #expect(score.dateFound == true && score.totalFound == false)
        #expect(score.wordError == 0.25 && score.bagError == 0.5)
        #expect(score.cer > 0.1 && score.cer < 0.4)
        let none = ImageAccuracy(truth: "a", keyFields: [:], text: "a")
        #expect(none.dateFound == nil && none.totalFound == nil && none.cer == 0)
    }
}
