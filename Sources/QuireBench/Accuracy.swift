import Foundation

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

    /// Levenshtein distance, two rows.
    static func editDistance<T: Equatable>(_ a: [T], _ b: [T]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            let x = a[i - 1]
            for j in 1...b.count {
                let substitution = previous[j - 1] + (x == b[j - 1] ? 0 : 1)
                current[j] = min(substitution, previous[j] + 1, current[j - 1] + 1)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

/// The scores of one way of reading over a group of images (means over the images).
public struct AccuracyScore: Sendable, Codable, Equatable {
    public var images: Int
    /// Character error rate, percent.
    public var cerPercent: Double
    /// Order-independent word error, percent.
    public var wordErrorPercent: Double
    /// Images with key fields, and the share of those where each field was found, percent.
    public var keyFieldImages: Int
    public var datePercent: Double?
    public var totalPercent: Double?

    /// Scores `texts` (by image index) against the images' truths; nil when none has a truth.
    static func score(_ texts: [Int: String], images: [OCRBenchmark.BenchImage], indices: [Int]) -> AccuracyScore? {
        var cer: [Double] = [], wer: [Double] = [], dates: [Bool] = [], totals: [Bool] = []
        for index in indices {
            guard let truth = images[index].truthText else { continue }
            let text = texts[index] ?? ""
            cer.append(Accuracy.characterErrorRate(truth: truth, text: text))
            wer.append(Accuracy.wordError(truth: truth, text: text).error)
            if let date = images[index].keyFields["date"] { dates.append(Accuracy.contains(text, value: date)) }
            if let total = images[index].keyFields["total"] { totals.append(Accuracy.contains(text, value: total)) }
        }
        guard !cer.isEmpty else { return nil }
        func mean(_ v: [Double]) -> Double { (v.reduce(0, +) / Double(v.count) * 1_000).rounded() / 10 }
        func share(_ v: [Bool]) -> Double? { v.isEmpty ? nil : (Double(v.filter { $0 }.count) / Double(v.count) * 1_000).rounded() / 10 }
        return AccuracyScore(images: cer.count, cerPercent: mean(cer), wordErrorPercent: mean(wer),
                             keyFieldImages: max(dates.count, totals.count), datePercent: share(dates), totalPercent: share(totals))
    }
}

/// The accuracy of Quire and the CLI on one group of images (a subfolder, or the manifest's group).
public struct OCRAccuracyRow: Sendable, Codable, Equatable {
    public var group: String
    public var quire: AccuracyScore?
    public var cli: AccuracyScore?
}
