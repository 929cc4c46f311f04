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
