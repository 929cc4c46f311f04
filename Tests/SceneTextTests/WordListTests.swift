import Foundation
import Testing
@testable import SceneText

/// Words read as no word of the list, read again against it: the list's search and the CTC scores
/// that choose, without a model.
@Suite struct WordListTests {
    @Test func editDistanceWithinALimit() {
        func within(_ a: String, _ b: String, _ limit: Int) -> Bool {
            let b = b.unicodeScalars.map(\.value)
            var rows = ([Int](repeating: 0, count: b.count + 1), [Int](repeating: 0, count: b.count + 1))
            return WordList.within(a.unicodeScalars.map(\.value), b, limit, rows: &rows)
        }
        #expect(within("kitten", "sitting", 3))
        #expect(!within("kitten", "sitting", 2))
        #expect(within("kitten", "kitten", 0))
        #expect(!within("", "sitting", 6))
        #expect(within("", "sitting", 7))
    }

    @Test func wordsNearAReadingWhateverTheirCase() {
        let list = WordList(words: ["that", "tat", "cannot", "Kennedy", "dog", "Kennedy's", "cat"])
        #expect(list.count == 6)  // the possessive is left out
        #expect(list.contains("KENNEDY") && list.contains("kennedy"))
        #expect(Set(list.near("trat", distance: 1)) == ["that", "tat"])
        #expect(list.near("keurecly", distance: 4) == ["Kennedy"])
        #expect(list.near("keurecly", distance: 3).isEmpty)
        #expect(list.near("xyz", distance: 1).isEmpty)
    }

    // Classes: 0 blank, 1…7 the letters, 8 the space.
    let decoder = CTCDecoder(dictionary: ["t", "h", "a", "r", "c", "n", "o"])
    let classes = 9

    /// Scores for time steps each given as the probabilities of some classes; the rest share what is left.
    func scores(_ steps: [[Int: Float]]) -> [Float] {
        var s: [Float] = []
        for step in steps {
            let rest = (1 - step.values.reduce(0, +)) / Float(classes - step.count)
            s += (0..<classes).map { step[$0] ?? rest }
        }
        return s
    }

    @Test func forwardProbabilitySumsEveryAlignment() {
        // Two steps, each a blank or an "a" at even odds: "a" is read by "a-", "-a" and "aa".
        let decoder = CTCDecoder(dictionary: ["a"])
        let s: [Float] = [0.5, 0.5, 0, 0.5, 0.5, 0]
        let p = s.withUnsafeBufferPointer { decoder.logProbability([1], scores: $0, offset: 0, classes: 3, from: 0, through: 1) }
        #expect(abs(p - log(0.75)) < 1e-9)
        // "aa" needs a blank between: two steps cannot hold it.
        let twice = s.withUnsafeBufferPointer { decoder.logProbability([1, 1], scores: $0, offset: 0, classes: 3, from: 0, through: 1) }
        #expect(twice < -20)
    }

    /// "trat not": the second letter an `r` at `r` and an `h` at `h`.
    func line(r: Float, h: Float) -> (CTCDecoder.Line, [Float]) {
        let s = scores([[1: 0.97], [0: 0.97], [4: r, 2: h], [0: 0.97], [3: 0.97], [0: 0.97], [1: 0.97], [8: 0.97],
                        [6: 0.97], [0: 0.97], [7: 0.97], [0: 0.97], [1: 0.97], [0: 0.97], [0: 0.97]])
        let line = s.withUnsafeBufferPointer { decoder.decode($0, steps: 15, classes: classes) }
        return (line, s)
    }

    @Test func anUnsureMisspellingBecomesTheListsWord() {
        let (read, s) = line(r: 0.55, h: 0.40)
        #expect(read.text == "trat not")
        let list = WordList(words: ["that", "not", "cannot"])
        let corrected = s.withUnsafeBufferPointer { decoder.corrected(read, words: list, tolerance: 5, scores: $0, offset: 0, classes: classes) }
        #expect(corrected.text == "that not")
        // The new word's characters spread over the reading's steps, at the reading's mean probability.
        #expect(corrected.characters.prefix(4).map(\.step) == [0, 2, 4, 6])
        let mean = read.characters.prefix(4).map(\.confidence).reduce(0, +) / 4
        #expect(corrected.characters.prefix(4).allSatisfy { abs($0.confidence - mean) < 1e-9 })
        // What decides between two readings of the line is the reading as decoded.
        #expect(corrected.readingConfidence == read.confidence && corrected.readingCount == 8)
    }

    @Test func aClearReadingStaysAsItIs() {
        // The recognizer is sure of its `r`: "that" would be e⁶ less likely, past the tolerance.
        let (read, s) = line(r: 0.99, h: 0.0025)
        let list = WordList(words: ["that", "not"])
        let corrected = s.withUnsafeBufferPointer { decoder.corrected(read, words: list, tolerance: 5, scores: $0, offset: 0, classes: classes) }
        #expect(corrected == read)
        #expect(corrected.decoded == nil)
        // Words of the list, and words of one or two letters, are not looked up at all.
        let known = s.withUnsafeBufferPointer { decoder.corrected(read, words: WordList(words: ["trat", "not"]), tolerance: 50, scores: $0, offset: 0, classes: classes) }
        #expect(known.text == "trat not")
    }
}
