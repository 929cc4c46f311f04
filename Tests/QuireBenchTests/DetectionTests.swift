import Foundation
import Testing
@testable import QuireBench

@Suite("quire bench ocr --detect: scoring reading without languages")
struct DetectionScoringTests {
    @Test("The expected language is the manifest's first pack as BCP-47, zh-Hans and zh-Hant apart; none without lang")
    func expected() {
        #expect(OCRDetectionSample.expectedLanguage(packs: ["chi_sim", "eng"], listed: true) == "zh-Hans")
        #expect(OCRDetectionSample.expectedLanguage(packs: ["chi_tra"], listed: true) == "zh-Hant")
        #expect(OCRDetectionSample.expectedLanguage(packs: ["mar"], listed: true) == "mr")
        #expect(OCRDetectionSample.expectedLanguage(packs: ["ita"], listed: true) == "it")
        #expect(OCRDetectionSample.expectedLanguage(packs: ["eng"], listed: true) == "en")
        // --languages (no manifest lang) says nothing of what the page is.
        #expect(OCRDetectionSample.expectedLanguage(packs: ["eng"], listed: false) == nil)
    }

    @Test("Language right: case-insensitive, zh-Hans is not zh-Hant, nothing reported is wrong, no lang does not count")
    func languageRight() {
        let samples = [
            OCRDetectionSample(expected: "it", reported: "it"),
            OCRDetectionSample(expected: "zh-Hant", reported: "zh-Hans"),
            OCRDetectionSample(expected: "zh-Hans", reported: "ZH-hans"),
            OCRDetectionSample(expected: "mr", reported: nil),
            OCRDetectionSample(expected: nil, reported: "en"),
        ]
        #expect(samples.map(\.languageRight) == [true, false, true, false, nil])
        let row = OCRDetectionRow(group: "all", scope: .all, samples: samples)
        #expect(row.images == 5)
        #expect(row.languageImages == 4 && row.languageRight == 2 && row.languageRightPercent == 50)
        let third = OCRDetectionRow(group: "all", scope: .all, samples: Array(samples.prefix(3)))
        #expect(third.languageRightPercent == 66.7)
        #expect(OCRDetectionRow(group: "all", scope: .all, samples: [OCRDetectionSample(expected: nil, reported: "en")]).languageRightPercent == nil)
    }

    @Test("English time: the median of per-page ratios without/with, over eng-only pages read both ways")
    func englishRatio() {
        let ms: UInt64 = 1_000_000
        var samples = [
            OCRDetectionSample(englishOnly: true, hintedNanoseconds: 100 * ms, unhintedNanoseconds: 105 * ms),
            OCRDetectionSample(englishOnly: true, hintedNanoseconds: 100 * ms, unhintedNanoseconds: 120 * ms),
            OCRDetectionSample(englishOnly: true, hintedNanoseconds: 200 * ms, unhintedNanoseconds: 200 * ms),
            // Not English alone: however slow, it is not in the ratio.
            OCRDetectionSample(englishOnly: false, hintedNanoseconds: 100 * ms, unhintedNanoseconds: 900 * ms),
            // Failed without languages: no ratio.
            OCRDetectionSample(englishOnly: true, hintedNanoseconds: 100 * ms, unhintedNanoseconds: nil),
        ]
        var row = OCRDetectionRow(group: "all", scope: .all, samples: samples)
        #expect(row.englishImages == 3)
        #expect(row.englishTimeRatio == 1.05)
        // An even count takes the mean of the middle two: 1.05 and 1.2.
        samples.append(OCRDetectionSample(englishOnly: true, hintedNanoseconds: 100 * ms, unhintedNanoseconds: 130 * ms))
        row = OCRDetectionRow(group: "all", scope: .all, samples: samples)
        #expect(row.englishImages == 4 && row.englishTimeRatio == 1.125)
        #expect(OCRDetectionRow(group: "all", scope: .all, samples: [OCRDetectionSample(englishOnly: false)]).englishTimeRatio == nil)
    }

    @Test("Pooled CER with and without languages over the same images, and the difference in points from unrounded means")
    func cerDifference() {
        let samples = [
            OCRDetectionSample(hintedCER: 0.10, unhintedCER: 0.15),
            OCRDetectionSample(hintedCER: 0.30, unhintedCER: 0.40),
            OCRDetectionSample(hintedCER: 0.333, unhintedCER: 0.333),
            // No truth: not in either mean.
            OCRDetectionSample(hintedCER: nil, unhintedCER: nil),
        ]
        let row = OCRDetectionRow(group: "all", scope: .all, samples: samples)
        #expect(row.cerImages == 3)
        #expect(row.cerHintedPercent == 24.4 && row.cerUnhintedPercent == 29.4)
        #expect(row.cerDifferencePoints == 5)
        // Better without languages is a negative difference.
        let better = OCRDetectionRow(group: "all", scope: .all, samples: [OCRDetectionSample(hintedCER: 0.2, unhintedCER: 0.05)])
        #expect(better.cerDifferencePoints == -15)
        #expect(OCRDetectionRow(group: "all", scope: .all, samples: [OCRDetectionSample()]).cerDifferencePoints == nil)
    }

    @Test("Detection cost: nearest-rank median and p90 over every page, 0 ms pages included")
    func cost() {
        let samples = [
            OCRDetectionSample(detectionMs: [0, 2, 4, 6, 8]),
            OCRDetectionSample(detectionMs: [10, 12, 14, 16, 100]),
            OCRDetectionSample(detectionMs: []),
        ]
        let row = OCRDetectionRow(group: "all", scope: .all, samples: samples)
        #expect(row.detectionPages == 10)
        #expect(row.detectionP50Ms == 8 && row.detectionP90Ms == 16)
    }

    @Test("Rows are cut as the accuracy rows: pooled, each group, each half")
    func rows() {
        let samples = [
            OCRDetectionSample(group: "sign", half: .a, expected: "en", reported: "en"),
            OCRDetectionSample(group: "menu", half: .b, expected: "it", reported: "en"),
            OCRDetectionSample(group: "sign", half: .b, expected: "th", reported: "th"),
        ]
        let rows = OCRDetectionRow.rows(samples)
        #expect(rows.map(\.group) == ["all", "sign", "menu", "half A", "half B"])
        #expect(rows.map(\.scope) == [.all, .group, .group, .half, .half])
        #expect(rows.map(\.languageRight) == [2, 2, 0, 1, 1])
        #expect(rows.map(\.images) == [3, 2, 1, 1, 2])
    }
}

@Suite("quire bench ocr --detect: reading a reply's detection")
struct DetectionSummaryTests {
    static func decode(_ json: String) throws -> DetectionSummary {
        try JSONDecoder().decode(DetectionSummary.self, from: Data(json.utf8))
    }

    @Test("The first detected language, else the page's first language; script and language steps summed per page")
    func detected() throws {
        let summary = try Self.decode("""
            {"text": "x", "pages": [
               {"pageNumber": 1, "languages": ["en"], "detectedLanguages": [{"language": "it", "confidence": 0.9}, {"language": "en", "confidence": 0.1}]},
               {"pageNumber": 2, "languages": ["en"]}],
             "metadata": {"steps": [
               {"page": 1, "step": "scale", "applied": true, "parameters": {"ms": 50, "factor": 1}},
               {"page": 1, "step": "script", "applied": true, "parameters": {"ms": 1.5}},
               {"page": 1, "step": "language", "applied": true, "parameters": {"ms": 2, "confidence": 0.9}},
               {"page": 2, "step": "language", "applied": false, "parameters": {}}]}}
            """)
        #expect(summary.reportedLanguage == "it")
        #expect(summary.detectionMs == [3.5, 0])
    }

    @Test("A worker without detection: the page's languages, and no cost")
    func before() throws {
        let summary = try Self.decode("""
            {"pages": [{"pageNumber": 1, "languages": ["en", "fr"]}], "metadata": {"steps": [{"page": 1, "step": "layout", "applied": true, "parameters": {"ms": 9}}]}}
            """)
        #expect(summary.reportedLanguage == "en")
        #expect(summary.detectionMs == [0])
        let empty = try Self.decode(#"{"pages": [{"pageNumber": 1, "languages": []}], "metadata": {}}"#)
        #expect(empty.reportedLanguage == nil && empty.detectionMs == [0])
    }
}

@Suite("quire bench ocr --detect: the table")
struct DetectionTableTests {
    static let rows = OCRDetectionRow.rows([
        OCRDetectionSample(group: "sign", half: .a, expected: "en", reported: "en", englishOnly: true, hintedCER: 0.1, unhintedCER: 0.1,
                           hintedNanoseconds: 100_000_000, unhintedNanoseconds: 103_000_000, detectionMs: [0]),
        OCRDetectionSample(group: "screen", half: .b, expected: "mr", reported: "en", hintedCER: 0.2, unhintedCER: 0.9,
                           hintedNanoseconds: 100_000_000, unhintedNanoseconds: 100_000_000, detectionMs: [0]),
    ])

    @Test("After the set's accuracy table, with the footnote; absent without --detect")
    func table() throws {
        var receipts = OCRBenchReportTests.receipts
        #expect(!OCRBenchReportTests.report(sets: [receipts], worse: []).markdown().contains("page language right"))
        receipts.detection = Self.rows
        let text = OCRBenchReportTests.report(sets: [receipts], worse: []).markdown()
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex(of: "| group | images | CER with languages | CER without | difference "
            + "| page language right | English time without / with | detection ms p50 | detection ms p90 |"))
        let accuracy = try #require(lines.firstIndex { $0.hasPrefix("| receipt | 4 | 35.0 % |") })
        #expect(header > accuracy)
        #expect(lines[header + 2] == "| all | 2 | 15.0 % | 50.0 % | +35.0 | 1 of 2 (50.0 %) | 1.03× (1 page) | 0.0 | 0.0 |")
        #expect(lines[header + 3] == "| sign | 1 | 10.0 % | 10.0 % | +0.0 | 1 of 1 (100.0 %) | 1.03× (1 page) | 0.0 | 0.0 |")
        #expect(lines[header + 4] == "| screen | 1 | 20.0 % | 90.0 % | +70.0 | 0 of 1 (0.0 %) | – | 0.0 | 0.0 |")
        #expect(lines.contains { $0.hasPrefix("Without languages (--detect):") && $0.contains("English time at most 1.10×") })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(OCRBenchReportTests.report(sets: [receipts], worse: []).json().utf8)) as? [String: Any])
        let sets = try #require(object["sets"] as? [[String: Any]])
        let detection = try #require(sets.first?["detection"] as? [[String: Any]])
        #expect(detection.first?["language_right_percent"] as? Double == 50)
        #expect(detection.first?["english_time_ratio"] as? Double == 1.03)
        #expect(detection.first?["cer_difference_points"] as? Double == 35)
    }
}
