import Foundation
import Testing
@testable import QuireBench

@Suite("quire bench ocr: pages read worse than the CLI")
struct WorseThanCLITests {
    static func score(_ file: String, quire: Double?, cli: Double?) -> OCRBenchImageScore {
        OCRBenchImageScore(file: file, group: "", half: .a, languages: "eng",
                           quire: quire.map { .init(cerPercent: $0, wordErrorPercent: 0, bagErrorPercent: 0) },
                           cli: cli.map { .init(cerPercent: $0, wordErrorPercent: 0, bagErrorPercent: 0) })
    }

    @Test("More than 1 point above the CLI's CER, the largest difference first, across sets")
    func find() {
        let worse = OCRBenchWorseImage.find([
            ("docs", Self.score("fedreg.p004.jpg", quire: 45.1, cli: 12.0)),
            ("docs", Self.score("lorem.p001.png", quire: 20.0, cli: 19.0)),   // exactly 1 point: not worse
            ("docs", Self.score("scotus.p001.png", quire: 3.0, cli: 8.0)),    // better
            ("receipts", Self.score("sroie_007.jpg", quire: 40.5, cli: 35.0)),
            ("receipts", Self.score("sroie_009.jpg", quire: 12.0, cli: nil)), // no CLI text to compare with
            ("degraded", Self.score("skew/page1-+8.png", quire: 7.25, cli: 2.0)),
            ("degraded", Self.score("clean/page1.png", quire: 1.21, cli: 0.2)),
        ])
        #expect(worse.map(\.file) == ["fedreg.p004.jpg", "sroie_007.jpg", "skew/page1-+8.png", "clean/page1.png"])
        #expect(worse.map(\.set) == ["docs", "receipts", "degraded", "degraded"])
        #expect(worse[0].quireCERPercent == 45.1 && worse[0].cliCERPercent == 12 && worse[0].differencePoints == 33.1)
        #expect(worse[2].differencePoints == 5.25)
        #expect(worse[3].differencePoints == 1.01)
    }

    @Test("Equal differences are ordered by set, then file")
    func ties() {
        let worse = OCRBenchWorseImage.find([
            ("b", Self.score("x", quire: 5, cli: 1)), ("a", Self.score("y", quire: 5, cli: 1)), ("a", Self.score("w", quire: 6, cli: 2)),
        ])
        #expect(worse.map { $0.set + "/" + $0.file } == ["a/w", "a/y", "b/x"])
    }
}

@Suite("quire bench ocr: the report")
struct OCRBenchReportTests {
    static let machine = MachineInfo(processors: 2, cpuModel: "Test CPU", os: "Linux 6.1", swift: "6.3", buildConfiguration: "release", libzmq: "4.3.4")

    static func row(_ name: String, rate: Double, vsCLI: Double?) -> OCRBenchRow {
        OCRBenchRow(name: name, setup: "2 x", images: 4, failures: 0, seconds: 2, imagesPerSecond: rate, cpuCores: 1.9, otherCores: 0.01,
                    vsCLI: vsCLI, vsRawPercent: 100, p50Ms: 500, p90Ms: 700, p99Ms: 800, oneInFlightP50Ms: name == "Quire" ? 300 : nil,
                    oneInFlightP90Ms: name == "Quire" ? 400 : nil, oneInFlightRequests: name == "Quire" ? 4 : nil, emptyResults: 0,
                    wordsFoundPercent: 90)
    }

    static func score(_ cer: Double, _ words: Double, _ bag: Double, date: Double? = nil, total: Double? = nil, images: Int = 4) -> AccuracyScore {
        AccuracyScore(images: images, cerPercent: cer, wordErrorPercent: words, bagErrorPercent: bag,
                      keyFieldImages: date == nil ? 0 : images, datePercent: date, totalPercent: total)
    }

    static func set(_ name: String, accuracy: [OCRAccuracyRow], worse: Int, vsCLI: Double, scores: Int = 4) -> OCRBenchSet {
        OCRBenchSet(
            name: name, directory: "/tmp/" + name, manifest: name != "degraded", images: 4, imageBytes: 2_500_000, formats: ["png"],
            largestPixels: "1700×2200", languages: name == "docs" ? ["eng": 3, "fra": 1] : ["eng": 4],
            rows: [row("Quire", rate: 2.5, vsCLI: vsCLI), row("tesseract CLI", rate: 2.5 / vsCLI, vsCLI: 1), row("raw engine", rate: 2.4, vsCLI: 1.3)],
            breakdown: nil, noisyPasses: [], passesUsed: 1, recognitionScales: [1, 1, 1], accuracy: accuracy, slowerThanCLI: [],
            worseThanCLI: worse,
            scores: (0..<scores).map { WorseThanCLITests.score("p\($0).png", quire: 10, cli: 10) },
            problems: name == "docs" ? [OCRBenchProblem(set: "docs", file: "menu.png", phase: "scan", message: "language tha not installed")] : [],
            nonImageFiles: 0, unlistedImageFiles: name == "docs" ? 11 : 0)
    }

    static func report(sets: [OCRBenchSet], worse: [OCRBenchWorseImage]) -> OCRBenchReport {
        OCRBenchReport(
            machine: machine, mode: "document", psm: 3, languages: "eng", workers: 2, inFlight: 4, repeats: 1, tesseractVersion: "5.3.0",
            cli: "`tesseract IMG stdout -l LANG --psm 3`", ompThreadLimit: "1", passes: 1, scalingDisabled: false,
            summary: sets.map(OCRBenchSetSummary.init), sets: sets, worseThanCLI: worse, loadAverageBefore: 0.1, loadAverageAfter: 0.2)
    }

    static let docs = set("docs", accuracy: [
        OCRAccuracyRow(group: "all", scope: .all, quire: score(29.6, 10.2, 18.4), cli: score(15.1, 9.8, 17.0)),
        OCRAccuracyRow(group: "prose", scope: .group, quire: score(5.0, 4.0, 7.5, images: 2), cli: score(4.0, 4.0, 7.0, images: 2)),
        OCRAccuracyRow(group: "tables", scope: .group, quire: score(54.2, 16.4, 29.3, images: 2), cli: score(26.2, 15.6, 27.0, images: 2)),
        OCRAccuracyRow(group: "half A", scope: .half, quire: score(20.0, 9.0, 15.0, images: 2), cli: score(14.0, 9.0, 16.0, images: 2)),
        OCRAccuracyRow(group: "half B", scope: .half, quire: score(39.2, 11.4, 21.8, images: 2), cli: score(16.2, 10.6, 18.0, images: 2)),
    ], worse: 2, vsCLI: 0.94)
    static let receipts = set("receipts", accuracy: [
        OCRAccuracyRow(group: "receipt", scope: .all, quire: score(35.0, 23.9, 41.2, date: 90.8, total: 91.6),
                       cli: score(38.9, 34.1, 57.9, date: 74.2, total: 81.5)),
    ], worse: 0, vsCLI: 1.38)
    static let worse = [
        OCRBenchWorseImage(file: "fedreg.p004.jpg", set: "docs", quireCERPercent: 45.1, cliCERPercent: 12),
        OCRBenchWorseImage(file: "scores.p002.jpg", set: "docs", quireCERPercent: 30, cliCERPercent: 20.5),
    ]

    @Test("Several sets: a summary first, then each set's tables under its name, then the worse pages")
    func severalSets() throws {
        let text = Self.report(sets: [Self.docs, Self.receipts], worse: Self.worse).markdown()
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "| set | images | Quire vs CLI | CER Quire / CLI | word error Quire / CLI | bag error Quire / CLI "
            + "| date found Quire / CLI | total found Quire / CLI | worse than CLI |")
        #expect(lines[2] == "| docs | 4 | 0.94× | 29.6 % / 15.1 % | 10.2 % / 9.8 % | 18.4 % / 17.0 % | – | – | 2 of 4 |")
        #expect(lines[3] == "| receipts | 4 | 1.38× | 35.0 % / 38.9 % | 23.9 % / 34.1 % | 41.2 % / 57.9 % | 90.8 % / 74.2 % | 91.6 % / 81.5 % | 0 of 4 |")
        let docs = try #require(lines.firstIndex(of: "**docs**")), receipts = try #require(lines.firstIndex(of: "**receipts**"))
        #expect(docs < receipts)
        #expect(lines[docs + 2].hasPrefix("| 4 images, 2 workers | images/s | vs CLI |"))
        #expect(lines.contains("| Quire (2 x) | 2.50 | 0.94× | 100.0 % | 500 | 700 | 800 | 300 | 400 | 90.0 % | 1.90 | 0.01 |"))
        // The docs' accuracy table has no key-field columns; the receipts' has.
        #expect(lines.contains("| group | images | CER Quire | CER CLI | word error Quire | word error CLI | bag error Quire | bag error CLI |"))
        #expect(lines.contains("| half B | 2 | 39.2 % | 16.2 % | 11.4 % | 10.6 % | 21.8 % | 18.0 % |"))
        #expect(lines.contains("| tables | 2 | 54.2 % | 26.2 % | 16.4 % | 15.6 % | 29.3 % | 27.0 % |"))
        #expect(lines.contains("| receipt | 4 | 35.0 % | 38.9 % | 23.9 % | 34.1 % | 41.2 % | 57.9 % | 90.8 % / 74.2 % | 91.6 % / 81.5 % |"))
        #expect(lines.contains { $0.hasPrefix("Images: 4 (png, up to 1700×2200 px, 2.5 MB) from /tmp/docs, as its manifest.tsv lists them")
            && $0.contains("11 other image files not listed") && $0.hasSuffix("; languages eng ×3, fra ×1.") })
        #expect(lines.contains("Left out: menu.png: language tha not installed."))
        #expect(lines.contains("Read worse than the CLI (Quire's CER more than 1 point above the CLI's on the same image, this run): docs 2 of 4, receipts 0 of 4:"))
        let table = try #require(lines.firstIndex(of: "| image | set | CER Quire | CER CLI | difference |"))
        #expect(table > receipts)
        #expect(lines[table + 2] == "| fedreg.p004.jpg | docs | 45.1 % | 12.0 % | +33.1 |")
        #expect(lines[table + 3] == "| scores.p002.jpg | docs | 30.0 % | 20.5 % | +9.5 |")
        #expect(lines.contains { $0.hasPrefix("Machine: 2 CPUs (nproc), Test CPU") })
    }

    @Test("One set: no summary and no heading, its tables first, as before")
    func oneSet() {
        let text = Self.report(sets: [Self.receipts], worse: []).markdown()
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0].hasPrefix("| 4 images, 2 workers | images/s |"))
        #expect(!text.contains("| set | images |") && !text.contains("**receipts**"))
        #expect(lines.contains("Read worse than the CLI (Quire's CER more than 1 point above the CLI's on the same image, this run): 0 of 4."))
        #expect(!text.contains("| image |"))
    }

    @Test("The JSON carries the summary, the sets with every image's scores, and the worse pages")
    func json() throws {
        let report = Self.report(sets: [Self.docs, Self.receipts], worse: Self.worse)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let summary = try #require(object["summary"] as? [[String: Any]])
        #expect(summary.map { $0["set"] as? String } == ["docs", "receipts"])
        #expect(summary[1]["quire_vs_cli"] as? Double == 1.38)
        #expect((summary[0]["cli"] as? [String: Any])?["bag_error_percent"] as? Double == 17)
        let worse = try #require(object["worse_than_cli"] as? [[String: Any]])
        #expect(worse.first?["quire_cer_percent"] as? Double == 45.1 && worse.first?["set"] as? String == "docs")
        let sets = try #require(object["sets"] as? [[String: Any]])
        #expect((sets[0]["scores"] as? [[String: Any]])?.count == 4)
        #expect((sets[0]["accuracy"] as? [[String: Any]])?.map { $0["scope"] as? String } == ["all", "group", "group", "half", "half"])
        #expect(sets[0]["unlisted_image_files"] as? Int == 11)
    }
}
