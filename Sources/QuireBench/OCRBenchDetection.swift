import Foundation
import QuireOCR

/// One image read by Quire twice, with its languages and without (`--detect`): what the detection
/// figures are made of. Fractions and nanoseconds, unrounded.
struct OCRDetectionSample: Sendable, Equatable {
    var group: String
    var half: Half
    /// The page's language as BCP-47 (`it`, `zh-Hans`): the manifest's first language; nil when the
    /// manifest names none (the image then does not count for the language's hits).
    var expected: String?
    /// The page language the reply without languages reported; nil when it reported none or failed.
    var reported: String?
    /// Whether the image was read with `eng` alone (from its manifest): English pages must not pay
    /// for detection.
    var englishOnly: Bool
    /// CER with the languages and without, when the image has a truth (a failed reading counts as no text).
    var hintedCER: Double?
    var unhintedCER: Double?
    /// One in flight, end to end; nil when that reading failed.
    var hintedNanoseconds: UInt64?
    var unhintedNanoseconds: UInt64?
    /// The detection's cost on each page of the reply without languages: its `script` and `language`
    /// steps' `ms` summed (0 where there is none); empty when the reading failed.
    var detectionMs: [Double]

    init(group: String = "", half: Half = .a, expected: String? = nil, reported: String? = nil, englishOnly: Bool = false,
         hintedCER: Double? = nil, unhintedCER: Double? = nil, hintedNanoseconds: UInt64? = nil, unhintedNanoseconds: UInt64? = nil,
         detectionMs: [Double] = []) {
        self.group = group
        self.half = half
        self.expected = expected
        self.reported = reported
        self.englishOnly = englishOnly
        self.hintedCER = hintedCER
        self.unhintedCER = unhintedCER
        self.hintedNanoseconds = hintedNanoseconds
        self.unhintedNanoseconds = unhintedNanoseconds
        self.detectionMs = detectionMs
    }

    /// The language a page should be reported in: its manifest's first pack as BCP-47 (`chi_sim+eng`
    /// → `zh-Hans`); nil when the packs are not the manifest's (`--languages` says nothing of the page).
    static func expectedLanguage(packs: [String], listed: Bool) -> String? {
        guard listed else { return nil }
        return packs.first.map(Languages.bcp47(forTesseract:))
    }

    /// Whether the reported language is the expected one: BCP-47 compares case-insensitively, and
    /// `zh-Hans` and `zh-Hant` are different languages here. Nil when nothing was expected.
    var languageRight: Bool? {
        expected.map { expected in reported.map { $0.lowercased() == expected.lowercased() } ?? false }
    }
}

/// Reading without languages against reading with them, over some of a set's images (all of them,
/// a group or a half), as issue 35 judges it: CER within 2 points, the page's language right on at
/// least 90 % of pages, English pages at most 1.10× their time with `eng`.
public struct OCRDetectionRow: Sendable, Codable, Equatable {
    /// The group's name, `half A` or `half B`, `all`, or a set's name in the run's summary.
    public var group: String
    public var scope: OCRAccuracyRow.Scope
    public var images: Int
    /// Images with a truth, and their mean CER read with the languages and without, percent.
    public var cerImages: Int
    public var cerHintedPercent: Double?
    public var cerUnhintedPercent: Double?
    /// Without minus with, in points (from the unrounded means).
    public var cerDifferencePoints: Double?
    /// Images whose manifest names their language, and how many of them the reply without languages
    /// reported it for (its page's first detected language, else its first language).
    public var languageImages: Int
    public var languageRight: Int
    public var languageRightPercent: Double?
    /// Pages read with `eng` alone, both ways, and the median over them of each page's time without
    /// languages over its time with them (one in flight, end to end).
    public var englishImages: Int
    public var englishTimeRatio: Double?
    /// Pages read without languages, and the median and p90 (nearest rank) of what detecting their
    /// language cost (the `script` and `language` steps' ms summed; 0 where they are absent).
    public var detectionPages: Int
    public var detectionP50Ms: Double?
    public var detectionP90Ms: Double?

    /// The figures of `samples`, one per image.
    init(group: String, scope: OCRAccuracyRow.Scope, samples: [OCRDetectionSample]) {
        self.group = group
        self.scope = scope
        images = samples.count
        let cers = samples.compactMap { sample in sample.hintedCER.flatMap { h in sample.unhintedCER.map { (h, $0) } } }
        cerImages = cers.count
        if !cers.isEmpty {
            let hinted = cers.map(\.0).reduce(0, +) / Double(cers.count)
            let unhinted = cers.map(\.1).reduce(0, +) / Double(cers.count)
            cerHintedPercent = (hinted * 1_000).rounded() / 10
            cerUnhintedPercent = (unhinted * 1_000).rounded() / 10
            cerDifferencePoints = ((unhinted - hinted) * 10_000).rounded() / 100
        }
        let verdicts = samples.compactMap(\.languageRight)
        languageImages = verdicts.count
        languageRight = verdicts.filter { $0 }.count
        languageRightPercent = verdicts.isEmpty ? nil : (Double(languageRight) / Double(verdicts.count) * 1_000).rounded() / 10
        let ratios = samples.compactMap { sample -> Double? in
            guard sample.englishOnly, let hinted = sample.hintedNanoseconds, let unhinted = sample.unhintedNanoseconds, hinted > 0 else { return nil }
            return Double(unhinted) / Double(hinted)
        }
        englishImages = ratios.count
        englishTimeRatio = Self.median(ratios).map(round3)
        let costs = samples.flatMap(\.detectionMs).sorted()
        detectionPages = costs.count
        detectionP50Ms = Self.nearestRank(costs, 50).map(round2)
        detectionP90Ms = Self.nearestRank(costs, 90).map(round2)
    }

    /// The rows for one set, as its accuracy rows are cut: pooled, each group (when there is more
    /// than one), half A and half B.
    static func rows(_ samples: [OCRDetectionSample]) -> [OCRDetectionRow] {
        OCRAccuracyRow.selections(groups: samples.map(\.group), halves: samples.map(\.half)).compactMap { name, scope, indices in
            indices.isEmpty ? nil : OCRDetectionRow(group: name, scope: scope, samples: indices.map { samples[$0] })
        }
    }

    /// The middle value (the mean of the two middle ones for an even count); nil for none.
    static func median(_ values: [Double]) -> Double? {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return nil }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// The nearest-rank percentile of sorted values, as the latency figures take it; nil for none.
    static func nearestRank(_ sorted: [Double], _ percent: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        return sorted[max(0, min(sorted.count - 1, Int((percent / 100 * Double(sorted.count)).rounded(.up)) - 1))]
    }
}

/// The parts of a reply without languages that the detection figures read: each page's languages,
/// and the `script` and `language` steps (both optional: a worker without detection has neither).
struct DetectionSummary: Decodable, Sendable, Equatable {
    struct DetectedLanguage: Decodable, Sendable, Equatable {
        var language: String
    }
    struct Page: Decodable, Sendable, Equatable {
        var pageNumber: Int?
        var languages: [String]?
        var detectedLanguages: [DetectedLanguage]?
    }
    struct Step: Decodable, Sendable, Equatable {
        var page: Int?
        var step: String
        var parameters: [String: Double]?
    }
    struct Metadata: Decodable, Sendable, Equatable {
        var steps: [Step]?
    }
    var pages: [Page]
    var metadata: Metadata

    /// The first page's language: its most likely detected language, else the first language of
    /// its words; nil when it has neither.
    var reportedLanguage: String? {
        guard let page = pages.first else { return nil }
        return page.detectedLanguages?.first?.language ?? page.languages?.first
    }

    /// Each page's detection cost in ms: its `script` and `language` steps' `ms` summed, 0 without them.
    var detectionMs: [Double] {
        pages.enumerated().map { position, page in
            let number = page.pageNumber ?? position + 1
            return (metadata.steps ?? []).filter { ($0.page ?? 1) == number && ($0.step == "script" || $0.step == "language") }
                .reduce(0) { $0 + ($1.parameters?["ms"] ?? 0) }
        }
    }
}
