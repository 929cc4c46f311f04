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
