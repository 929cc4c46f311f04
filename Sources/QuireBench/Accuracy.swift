import Foundation
import QuireSupport

/// How well a text read matches its ground truth: the measures `quire bench ocr` reports.
///
/// - character error rate (CER): edit distance between the texts with runs of white space folded to
///   one space, over the truth's length (order matters: a page read in the wrong column order scores
///   badly, as a reader sees it);
/// - order-independent word error: the words as bags, case-folded (SROIE's annotations are upper
///   case, and their line order is not reading order), `max(missing, extra) / truth words`, which is
///   `(S + D + I) / N` when a missing and an extra word pair up as one substitution;
/// - bag error, the datasets' own measure (receipts-dev, photos-dev): the tokens as case-folded bags,
///   `(truth tokens not matched + tokens read not matched) / truth tokens`; a token is a white-space
///   separated word, except that Chinese and Japanese characters are a token each (those scripts do
///   not space their words, and engines space them differently);
/// - key fields (receipts): whether each value of NAME.key.json (`date`, `total`) appears in the text,
///   white space ignored, case-folded.
public enum Accuracy {
    /// Character error rate, 0… (can exceed 1 when the text read is much longer than the truth).
    public static func characterErrorRate(truth: String, text: String) -> Double {
        let t = Array(folded(truth).unicodeScalars), o = Array(folded(text).unicodeScalars)
        guard !t.isEmpty else { return o.isEmpty ? 0 : 1 }
        return Double(editDistance(t, o)) / Double(t.count)
    }

    /// Order-independent word error, 0… (see the type's summary).
    public static func wordError(truth: String, text: String) -> (error: Double, missing: Int, extra: Int, words: Int) {
        var bag: [String: Int] = [:]
        let truthWords = words(truth)
        for word in truthWords { bag[word, default: 0] += 1 }
        var extra = 0
        for word in words(text) {
            if let n = bag[word], n > 0 { bag[word] = n - 1 } else { extra += 1 }
        }
        let missing = bag.values.reduce(0, +)
        guard !truthWords.isEmpty else { return (extra == 0 ? 0 : 1, 0, extra, 0) }
        return (Double(max(missing, extra)) / Double(truthWords.count), missing, extra, truthWords.count)
    }

    /// Bag error, 0… (see the type's summary): unlike ``wordError(truth:text:)``, a misread word
    /// counts twice (missing and extra), and extra words count in full.
    public static func bagError(truth: String, text: String) -> (error: Double, missing: Int, extra: Int, tokens: Int) {
        var bag: [String: Int] = [:]
        let truthTokens = tokens(truth)
        for token in truthTokens { bag[token, default: 0] += 1 }
        var extra = 0
        for token in tokens(text) {
            if let n = bag[token], n > 0 { bag[token] = n - 1 } else { extra += 1 }
        }
        let missing = bag.values.reduce(0, +)
        guard !truthTokens.isEmpty else { return (extra == 0 ? 0 : 1, 0, extra, 0) }
        return (Double(missing + extra) / Double(truthTokens.count), missing, extra, truthTokens.count)
    }

    /// Case-folded white-space separated words, with each Chinese or Japanese character a token of its own.
    static func tokens(_ text: String) -> [String] {
        var out: [String] = []
        for word in words(text) {
            var run = String.UnicodeScalarView()
            for scalar in word.unicodeScalars {
                if isCJK(scalar) {
                    if !run.isEmpty { out.append(String(run)); run = String.UnicodeScalarView() }
                    out.append(String(scalar))
                } else {
                    run.append(scalar)
                }
            }
            if !run.isEmpty { out.append(String(run)) }
        }
        return out
    }

    /// Han ideographs, kana, CJK punctuation and full-width forms (`：`), which the datasets count one by one.
    static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3000...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0xFF00...0xFFEF, 0x20000...0x2FA1F: true
        default: false
        }
    }

    /// Whether `value` appears in `text`, white space ignored and case-folded.
    public static func contains(_ text: String, value: String) -> Bool {
        let needle = squashed(value)
        return !needle.isEmpty && squashed(text).contains(needle)
    }

    /// White-space separated words, case-folded.
    static func words(_ text: String) -> [String] {
        text.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
    }

    static func folded(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    static func squashed(_ text: String) -> String {
        String(text.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) }.map(Character.init)).lowercased()
    }

}

/// One image's scores from one way of reading it (fractions, not percent).
struct ImageAccuracy: Sendable, Equatable {
    var cer: Double
    var wordError: Double
    var bagError: Double
    /// Whether NAME.key.json's `date` (`total`) appears in the text; nil when it has none.
    var dateFound: Bool?
    var totalFound: Bool?

    init(cer: Double, wordError: Double, bagError: Double, dateFound: Bool? = nil, totalFound: Bool? = nil) {
        self.cer = cer
        self.wordError = wordError
        self.bagError = bagError
        self.dateFound = dateFound
        self.totalFound = totalFound
    }

    /// Scores `text` against the truth and the key fields (`date`, `total`).
    init(truth: String, keyFields: [String: String], text: String) {
        cer = Accuracy.characterErrorRate(truth: truth, text: text)
        wordError = Accuracy.wordError(truth: truth, text: text).error
        bagError = Accuracy.bagError(truth: truth, text: text).error
        dateFound = keyFields["date"].map { Accuracy.contains(text, value: $0) }
        totalFound = keyFields["total"].map { Accuracy.contains(text, value: $0) }
    }
}

/// The scores of one way of reading over a group of images (means over the images).
public struct AccuracyScore: Sendable, Codable, Equatable {
    public var images: Int
    /// Character error rate, percent.
    public var cerPercent: Double
    /// Order-independent word error, percent.
    public var wordErrorPercent: Double
    /// Bag error (the datasets' measure), percent.
    public var bagErrorPercent: Double
    /// Images with key fields, and the share of those where each field was found, percent.
    public var keyFieldImages: Int
    public var datePercent: Double?
    public var totalPercent: Double?

    /// The means of `scores` (one per image); nil when there are none.
    static func pooled(_ scores: [ImageAccuracy]) -> AccuracyScore? {
        guard !scores.isEmpty else { return nil }
        func mean(_ v: [Double]) -> Double { (v.reduce(0, +) / Double(v.count) * 1_000).rounded() / 10 }
        func share(_ v: [Bool]) -> Double? { v.isEmpty ? nil : (Double(v.filter { $0 }.count) / Double(v.count) * 1_000).rounded() / 10 }
        let dates = scores.compactMap(\.dateFound), totals = scores.compactMap(\.totalFound)
        return AccuracyScore(images: scores.count, cerPercent: mean(scores.map(\.cer)), wordErrorPercent: mean(scores.map(\.wordError)),
                             bagErrorPercent: mean(scores.map(\.bagError)), keyFieldImages: max(dates.count, totals.count),
                             datePercent: share(dates), totalPercent: share(totals))
    }
}

/// The accuracy of Quire and the CLI on some of a set's images: all of them, one group (a subfolder,
/// or the manifest's group) or one half.
public struct OCRAccuracyRow: Sendable, Codable, Equatable {
    /// `all` (pooled over the set; named by its group when it has only one), `group`, or `half`.
    public enum Scope: String, Sendable, Codable { case all, group, half }

    /// The group's name, `half A` or `half B`, or `all`.
    public var group: String
    public var scope: Scope
    public var quire: AccuracyScore?
    public var cli: AccuracyScore?

    public init(group: String, scope: Scope, quire: AccuracyScore?, cli: AccuracyScore?) {
        self.group = group
        self.scope = scope
        self.quire = quire
        self.cli = cli
    }

    /// The rows for one set: pooled first, then each group (when there is more than one, in the
    /// order they first appear), then half A and half B. `groups[i]` and `halves[i]` label image `i`;
    /// `quire` and `cli` hold the scores of the images with a truth, by the same index.
    static func rows(groups: [String], halves: [Half], quire: [Int: ImageAccuracy], cli: [Int: ImageAccuracy]?) -> [OCRAccuracyRow] {
        selections(groups: groups, halves: halves).compactMap { name, scope, indices in
            let q = AccuracyScore.pooled(indices.compactMap { quire[$0] })
            let c = cli.flatMap { scores in AccuracyScore.pooled(indices.compactMap { scores[$0] }) }
            return q == nil && c == nil ? nil : OCRAccuracyRow(group: name, scope: scope, quire: q, cli: c)
        }
    }

    /// How a set's images are cut for its tables: all of them (named by their group when there is
    /// only one), each group when there is more than one (in the order they first appear), then half
    /// A and half B; by index into `groups` and `halves`, which label the same images.
    static func selections(groups: [String], halves: [Half]) -> [(name: String, scope: Scope, indices: [Int])] {
        var names: [String] = []
        for group in groups where !names.contains(group) { names.append(group) }
        var selections: [(name: String, scope: Scope, indices: [Int])] = [
            (names.count == 1 && !names[0].isEmpty ? names[0] : "all", .all, Array(groups.indices)),
        ]
        if names.count > 1 {
            selections += names.map { name in (name.isEmpty ? "(none)" : name, .group, groups.indices.filter { groups[$0] == name }) }
        }
        selections += Half.allCases.map { half in ("half \(half.rawValue)", .half, halves.indices.filter { halves[$0] == half }) }
        return selections
    }
}
