import Testing
@testable import SceneText

@Suite struct CTCDecoderTests {
    /// Scores for `steps` time steps over `classes` classes, each step certain of one class.
    func scores(_ path: [Int], classes: Int, certainty: Float = 0.9) -> [Float] {
        var s = [Float](repeating: (1 - certainty) / Float(classes - 1), count: path.count * classes)
        for (t, c) in path.enumerated() { s[t * classes + c] = certainty }
        return s
    }

    @Test func mergesRepeatsAndDropsBlanks() {
        // classes: 0 blank, 1 "a", 2 "b", 3 " "
        let decoder = CTCDecoder(dictionary: ["a", "b"])
        let path = [0, 1, 1, 0, 1, 2, 2, 3, 0, 2, 0]
        let line = scores(path, classes: 4).withUnsafeBufferPointer { decoder.decode($0, steps: path.count, classes: 4) }
        #expect(line.text == "aab b")
        #expect(line.characters.map(\.step) == [1, 4, 5, 7, 9])
        #expect(abs(line.confidence - 0.9) < 1e-6)
        #expect(line.steps == path.count)
    }

    @Test func trimsSpacesAtTheEndsAndReadsFromAnOffset() {
        let decoder = CTCDecoder(dictionary: ["x"])
        let first = [1, 0], second = [2, 1, 0, 2]
        let all = scores(first, classes: 3) + scores(second, classes: 3)
        let line = all.withUnsafeBufferPointer { decoder.decode($0, offset: first.count * 3, steps: second.count, classes: 3) }
        #expect(line.text == "x")
        #expect(line.characters.map(\.step) == [1])
    }

    @Test func emptyLineHasNoConfidence() {
        let decoder = CTCDecoder(dictionary: ["x"])
        let line = scores([0, 0, 0], classes: 3).withUnsafeBufferPointer { decoder.decode($0, steps: 3, classes: 3) }
        #expect(line.text.isEmpty)
        #expect(line.confidence == 0)
    }
}

@Suite struct RestrictedDecoderTests {
    @Test func readsOnlyTheAllowedCharactersTheNextLikeliestInstead() {
        // classes: 0 blank, 1 "中", 2 "a", 3 " "; at step 0 "中" is likeliest, "a" next.
        let decoder = CTCDecoder(dictionary: ["中", "a"])
        let scores: [Float] = [0.1, 0.6, 0.3, 0.0,
                               0.9, 0.05, 0.05, 0.0]
        let all = scores.withUnsafeBufferPointer { decoder.decode($0, steps: 2, classes: 4) }
        #expect(all.text == "中")
        let latin = decoder.restricted(to: CTCDecoder.isLatinScript)
        let line = scores.withUnsafeBufferPointer { latin.decode($0, steps: 2, classes: 4) }
        #expect(line.text == "a")
        #expect(abs(line.characters[0].confidence - 0.3) < 1e-6)
    }

    @Test func latinScriptCoversLettersDigitsPunctuationAndSymbols() {
        for character in ["a", "Z", "é", "ß", "ł", "7", "€", "°", "—", "•", "Ω"] { #expect(CTCDecoder.isLatinScript(character), "\(character)") }
        for character in ["中", "あ", "カ", "한", "：", "Ａ"] { #expect(!CTCDecoder.isLatinScript(character), "\(character)") }
    }
}

/// Chinese and Japanese beside a Latin-script first language (a request without a language): each
/// line is read in Latin letters unless most of it decodes to East Asian characters.
@Suite struct EastAsianBesideLatinTests {
    static func line(_ text: String) -> CTCDecoder.Line {
        CTCDecoder.Line(characters: text.enumerated().map { CTCDecoder.Character(text: String($1), step: $0, confidence: 0.9) }, steps: text.count)
    }

    @Test func aLineIsEastAsianWhereMostOfItsCharactersAre() {
        #expect(SceneEngine.mostlyEastAsian(Self.line("今日活动价")))
        #expect(SceneEngine.mostlyEastAsian(Self.line("168元 今日")))
        #expect(!SceneEngine.mostlyEastAsian(Self.line("Highlight 太")))
        #expect(!SceneEngine.mostlyEastAsian(Self.line("   ")))
        #expect(!SceneEngine.mostlyEastAsian(Self.line("中")))
    }

    @Test func onlyALatinFirstLanguageWithEastAsianBesideItFallsBack() {
        let full = CTCDecoder(dictionary: ["a", "b", "中"])
        #expect(SceneEngine.latinFallback(full, for: ["eng", "chi_sim", "chi_tra"]) != nil)
        #expect(SceneEngine.latinFallback(full, for: ["chi_sim", "eng"]) == nil)
        #expect(SceneEngine.latinFallback(full, for: ["eng"]) == nil)
    }
}
