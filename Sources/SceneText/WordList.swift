import Foundation
import Synchronization

/// A language's words, so that the scene engine reads handwriting and worn print as a reader does,
/// who knows which words there are: a word the recognizer spells as no word of the list is replaced
/// by the word of the list, a few edits from it, that the recognizer's own scores make likeliest
/// (``CTCDecoder/corrected(_:words:tolerance:scores:offset:classes:)``).
public final class WordList: Sendable {
    /// The words, lower-cased: whether a reading is a word.
    let known: Set<String>
    /// The words as the list writes them, lower-cased as scalars, and the set of their scalars
    /// (``letters(_:)``), by their length in scalars.
    let byLength: [Int: [(word: String, folded: [UInt32], letters: UInt64)]]

    /// `words`: one word per element; words with an apostrophe (`Kennedy's`) are left out, a
    /// reading's possessive being its word with the ending read as it is.
    public init<S: Sequence>(words: S) where S.Element: StringProtocol {
        var known = Set<String>()
        var byLength: [Int: [(word: String, folded: [UInt32], letters: UInt64)]] = [:]
        for raw in words {
            let word = String(raw).trimmingCharacters(in: .whitespaces)
            guard !word.isEmpty, !word.contains("'"), word.allSatisfy(\.isLetter) else { continue }
            let folded = word.lowercased()
            // One entry per word whatever its case: a candidate is tried in every case anyway.
            guard known.insert(folded).inserted else { continue }
            let scalars = folded.unicodeScalars.map(\.value)
            byLength[scalars.count, default: []].append((word, scalars, Self.letters(scalars)))
        }
        self.known = known
        self.byLength = byLength
    }

    public var count: Int { known.count }

    public func contains(_ word: String) -> Bool { known.contains(word.lowercased()) }

    /// The set of a word's scalars as bits: a to z each its own, the rest sharing 38.
    static func letters(_ scalars: [UInt32]) -> UInt64 {
        scalars.reduce(0) { set, c in set | (c >= 97 && c <= 122 ? 1 << UInt64(c - 97) : 1 << UInt64(26 + c % 38)) }
    }

    /// The words of the list at most `distance` edits (Levenshtein, case-folded) from `word`. A word
    /// with more than `distance` letters the other lacks is passed over at once (each needs an edit).
    public func near(_ word: String, distance: Int) -> [String] {
        let target = word.lowercased().unicodeScalars.map(\.value)
        let targetLetters = Self.letters(target)
        var found: [String] = []
        var rows = ([Int](repeating: 0, count: target.count + 1), [Int](repeating: 0, count: target.count + 1))
        for length in max(1, target.count - distance)...(target.count + distance) {
            for entry in byLength[length] ?? [] {
                guard (entry.letters & ~targetLetters).nonzeroBitCount <= distance, (targetLetters & ~entry.letters).nonzeroBitCount <= distance,
                      Self.within(entry.folded, target, distance, rows: &rows) else { continue }
                found.append(entry.word)
            }
        }
        return found
    }

    /// Whether `a` and `b` are at most `limit` edits apart: two rows of the edit-distance table (given,
    /// each `b.count + 1` long, so that a search over the whole list allocates them once), left as soon
    /// as a row has nothing within the limit.
    static func within(_ a: [UInt32], _ b: [UInt32], _ limit: Int, rows: inout ([Int], [Int])) -> Bool {
        guard abs(a.count - b.count) <= limit else { return false }
        guard !a.isEmpty else { return b.count <= limit }
        return a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                rows.0.withUnsafeMutableBufferPointer { previous in
                    rows.1.withUnsafeMutableBufferPointer { current in
                        var (previous, current) = (previous, current)
                        for j in 0...b.count { previous[j] = j }
                        for i in 1...a.count {
                            current[0] = i
                            var best = i
                            for j in 1..<(b.count + 1) {
                                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                                best = min(best, current[j])
                            }
                            if best > limit { return false }
                            swap(&previous, &current)
                        }
                        return previous[b.count] <= limit
                    }
                }
            }
        }
    }

    /// Debian's word lists (`wamerican`, `wfrench`, `wngerman`, … in /usr/share/dict) by Tesseract language.
    public static let files: [String: String] = [
        "eng": "american-english", "fra": "french", "deu": "ngerman", "spa": "spanish",
        "ita": "italian", "por": "portuguese", "nld": "dutch",
    ]
    public static let directory = "/usr/share/dict"

    private static let loaded = Mutex<[String: WordList?]>([:])

    /// The word list of `language`, read once per process; nil where none is installed.
    public static func forLanguage(_ language: String, directory: String = directory) -> WordList? {
        guard let name = files[language] else { return nil }
        let path = directory + "/" + name
        if let cached = loaded.withLock({ $0[path] }) { return cached }
        let list = (try? String(contentsOfFile: path, encoding: .utf8)).map { WordList(words: $0.split(separator: "\n")) }
        loaded.withLock { $0[path] = list }
        return list
    }
}

extension CTCDecoder {
    /// `line` with each word that is no word of `words` (three letters or more, apostrophes inside
    /// allowed, punctuation around it kept) replaced by the word of the list, within a third of its
    /// length in edits, that is likeliest over the time steps the reading spans: the CTC forward
    /// probability (the sum over every alignment) of each candidate, as written, in lower case,
    /// capitalised and in capitals, against that of the reading itself. A candidate is taken when
    /// it is at most `tolerance` (natural log) less likely than the reading. A replacement's
    /// characters keep the reading's mean probability and are spread over its time steps; the line
    /// keeps its reading's confidence and length in ``Line/decoded``.
    public func corrected(_ line: Line, words: WordList, tolerance: Double, scores: UnsafeBufferPointer<Float>,
                          offset: Int, classes: Int) -> Line {
        var characters = line.characters
        var corrected = false
        var start = 0
        while start < characters.count {
            guard characters[start].text != " " else { start += 1; continue }
            var end = start
            while end < characters.count, characters[end].text != " " { end += 1 }
            // The word's core: its letters, apostrophes inside them allowed.
            var first = start, last = end
            while first < last, !Self.isLetter(characters[first].text) { first += 1 }
            while last > first, !Self.isLetter(characters[last - 1].text) { last -= 1 }
            let core = characters[first..<last]
            let text = core.map(\.text).joined()
            if core.count >= 3, core.allSatisfy({ Self.isLetter($0.text) || $0.text == "'" || $0.text == "’" }), !words.contains(text) {
                let from = first > 0 ? characters[first - 1].step + 1 : 0
                let through = last < characters.count ? characters[last].step - 1 : line.steps - 1
                if let better = likeliest(near: text, words: words, tolerance: tolerance, scores: scores, offset: offset,
                                          classes: classes, from: from, through: through) {
                    let confidence = core.map(\.confidence).reduce(0, +) / Double(core.count)
                    let (a, b) = (core.first!.step, core.last!.step)
                    let letters = Array(better)
                    let replaced = letters.indices.map { i in
                        Character(text: String(letters[i]), step: letters.count == 1 ? a : a + (b - a) * i / (letters.count - 1), confidence: confidence)
                    }
                    characters.replaceSubrange(first..<last, with: replaced)
                    end += replaced.count - (last - first)
                    corrected = true
                }
            }
            start = end
        }
        return corrected ? Line(characters: characters, steps: line.steps, decoded: (line.confidence, line.characters.count)) : line
    }

    static func isLetter(_ text: String) -> Bool { text.count == 1 && text.first!.isLetter }

    /// The list's word near `reading` likeliest over steps `from...through`, if it is at most
    /// `tolerance` less likely than the reading.
    func likeliest(near reading: String, words: WordList, tolerance: Double, scores: UnsafeBufferPointer<Float>, offset: Int,
                   classes: Int, from: Int, through: Int) -> String? {
        guard through >= from, let own = labels(reading) else { return nil }
        let floor = logProbability(own, scores: scores, offset: offset, classes: classes, from: from, through: through) - tolerance
        var best: (word: String, score: Double)?
        let distance = max(1, reading.count / 3 + 1)
        for word in words.near(reading, distance: distance) {
            var forms = [word, word.lowercased(), word.prefix(1).uppercased() + word.dropFirst(), word.uppercased()]
            forms = forms.enumerated().filter { i, form in !forms[..<i].contains(form) }.map(\.element)
            for form in forms {
                guard let label = labels(form) else { continue }
                let score = logProbability(label, scores: scores, offset: offset, classes: classes, from: from, through: through)
                if score >= floor, score > best?.score ?? -.infinity { best = (form, score) }
            }
        }
        return best.map(\.word)
    }

    /// The classes that spell `text`, one per character; nil when one is not in the dictionary or may
    /// not be read.
    func labels(_ text: String) -> [Int]? {
        var labels: [Int] = []
        for character in text {
            guard let index = classIndex[String(character)], allowed?[index] ?? true else { return nil }
            labels.append(index)
        }
        return labels
    }

    /// The log probability of `label` over steps `from...through` (the CTC forward algorithm, Graves
    /// et al., 2006: blanks between and around the labels, a label repeated only across a blank), in
    /// probabilities scaled to sum to 1 at each step, the scales' logs added up.
    func logProbability(_ label: [Int], scores: UnsafeBufferPointer<Float>, offset: Int, classes: Int, from: Int, through: Int) -> Double {
        let steps = through - from + 1
        guard steps >= 1, !label.isEmpty else { return -.infinity }
        var extended = [0]
        for l in label { extended += [l, 0] }
        let s = extended.count
        func p(_ t: Int, _ c: Int) -> Double { max(Double(scores[offset + (from + t) * classes + c]), 1e-12) }
        var alpha = [Double](repeating: 0, count: s)
        var next = alpha
        alpha[0] = p(0, extended[0])
        alpha[1] = p(0, extended[1])
        var logScale = 0.0
        func normalize(_ a: inout [Double]) -> Bool {
            let sum = a.reduce(0, +)
            guard sum > 0 else { return false }
            for i in a.indices { a[i] /= sum }
            logScale += Foundation.log(sum)
            return true
        }
        guard normalize(&alpha) else { return -.infinity }
        for t in 1..<steps {
            for i in 0..<s {
                var value = alpha[i]
                if i > 0 { value += alpha[i - 1] }
                if i > 1, extended[i] != 0, extended[i] != extended[i - 2] { value += alpha[i - 2] }
                next[i] = value * p(t, extended[i])
            }
            swap(&alpha, &next)
            guard normalize(&alpha) else { return -.infinity }
        }
        let end = alpha[s - 1] + alpha[s - 2]
        return end > 0 ? Foundation.log(end) + logScale : -.infinity
    }
}
