import Foundation
import QuireSupport
import QuireFields
import QuireWire
import Tesseract

/// `quire bench fields`: each receipt read once with `fields: ["receipt"]` and once without, one
/// right after the other (which first alternating), through the same in-process stack as `bench ocr`;
/// the fields scored against NAME.key.json, beside what the text alone holds.
extension OCRBenchmark {
    public func runFields() throws -> FieldsBenchReport {
        let problems = Problems()
        let installed = Set(Engine.installedLanguages(dataPath: options.configuration.dataPath))
        guard !installed.isEmpty else { throw BenchError("no Tesseract language packs in \(options.configuration.dataPath)") }
        var images: [BenchImage] = []
        for (directory, name) in zip(options.directories, OCRBenchOptions.setNames(options.directories)) {
            let scanned = try scan(directory, set: name, defaults: options.languages, installed: installed, problems: problems)
            images += scanned.images.filter { !$0.keyFields.isEmpty }
        }
        guard !images.isEmpty else { throw BenchError("no image with a NAME.key.json in \(options.directories.joined(separator: ", "))") }
        let warmUp = images.min { $0.width * $0.height < $1.width * $1.height } ?? images[0]
        let rig = QuireRig(logger: logger)
        defer { rig.tearDown() }
        try startQuire(rig, images: images, warmUps: [warmUp])
        rig.unhintedBodies = try images.map { [try requestFrame(languages: $0.languages, fields: [.receipt]), $0.bytes] }
        progress("fields: \(images.count) receipts, each read without fields and with, one in flight")
        let (without, with) = try quireSequentialPass(rig, images: images, indices: Array(images.indices), problems: problems, detect: true)
        guard let with else { throw BenchError("no reading with fields") }
        let decoder = JSONDecoder()
        var rows: [FieldsBenchRow] = []
        for reply in with.1 {
            let image = images[reply.image]
            guard let withoutMs = without.0.perImage[reply.image].map({ Double($0) / 1e6 }) else { continue }
            let result = reply.frame.flatMap { try? decoder.decode(OCRResult.self, from: Data($0)) }
            let fields = result?.pages.first?.documents?.first?.fields ?? [:]
            rows.append(FieldsBenchRow.score(id: image.id, half: image.half, key: image.keyFields, fields: fields,
                                             text: without.0.texts[reply.image] ?? "", textWithFields: result?.text ?? "", withMs: Double(reply.nanoseconds) / 1e6, withoutMs: withoutMs,
                                             fieldsMs: result?.metadata.steps.first { $0.step == "fields" }?.parameters["ms"],
                                             rereadMs: result?.metadata.steps.first { $0.step == "reread" }?.parameters["ms"] ?? 0,
                                             rereadCrops: result?.metadata.steps.first { $0.step == "reread" }?.parameters["crops"] ?? 0))
        }
        return FieldsBenchReport(machine: MachineInfo.current(), date: ISO8601DateFormatter().string(from: Date()),
                                 sets: OCRBenchOptions.setNames(options.directories), rows: rows.sorted { $0.id < $1.id },
                                 failures: problems.all.map { "\($0.file): \($0.message)" })
    }
}

/// One receipt's fields against its key: found, exact, right, and whether the text alone holds the key.
public struct FieldsBenchRow: Sendable, Codable, Equatable {
    public struct Mark: Sendable, Codable, Equatable {
        public var key: String
        public var content: String?
        public var value: String?
        public var found: Bool
        /// Case and spaces normalised, the content is the key (a currency symbol aside).
        public var exact: Bool
        /// Merchant, address: character error ≤ 20% (case, spaces and punctuation ignored); date: the
        /// same day; total: the same amount.
        public var right: Bool
        /// Date, total: the key appears in the text read without fields (white space ignored, case-folded).
        public var inText: Bool?
        /// Date, total: the key appears in the text read with fields, after their second look at the
        /// words that carry them.
        public var inTextWithFields: Bool?
    }

    public var id: String
    public var half: Half
    public var marks: [String: Mark]
    public var withMs: Double
    public var withoutMs: Double
    public var fieldsMs: Double?
    /// The second look's milliseconds (the `reread` step; 0 where there was none).
    public var rereadMs: Double?
    /// How many crops the second look read (0 where there was none): its cost, whatever the machine's load.
    public var rereadCrops: Double?

    static let names = ["company": "MerchantName", "address": "MerchantAddress", "date": "TransactionDate", "total": "Total"]

    static func letters(_ text: String) -> [Character] { Array(text.uppercased().filter { $0.isLetter || $0.isNumber }) }
    static func spaced(_ text: String) -> String {
        text.uppercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The character error of `text` against `truth`, case, spaces and punctuation ignored.
    public static func nearlyError(truth: String, text: String) -> Double {
        let a = letters(truth), b = letters(text)
        guard !a.isEmpty else { return b.isEmpty ? 0 : 1 }
        return Double(editDistance(a, b)) / Double(a.count)
    }

    static func amount(_ text: String) -> Double? {
        Double(text.filter { $0.isNumber || $0 == "." })
    }

    static func score(id: String, half: Half, key: [String: String], fields: [String: OCRResult.Field], text: String, textWithFields: String = "",
                      withMs: Double, withoutMs: Double, fieldsMs: Double?, rereadMs: Double? = nil, rereadCrops: Double? = nil) -> FieldsBenchRow {
        var marks: [String: Mark] = [:]
        for (name, fieldName) in names {
            guard let truth = key[name], !truth.isEmpty else { continue }
            let field = fields[fieldName]
            let content = field?.content
            var mark = Mark(key: truth, content: content, found: field != nil, exact: false, right: false)
            if let content {
                var normalised = spaced(content)
                if let symbol = field?.valueCurrency?.currencySymbol, normalised.hasPrefix(symbol) {
                    normalised = String(normalised.dropFirst(symbol.count)).trimmingCharacters(in: .whitespaces)
                }
                mark.exact = normalised == spaced(truth) || spaced(content) == spaced(truth)
            }
            switch name {
            case "date":
                mark.value = field?.valueDate
                mark.right = field?.valueDate != nil && field?.valueDate == ReceiptFields.isoDate(truth)
            case "total":
                let value = field?.valueCurrency?.amount
                mark.value = value.map { String(format: "%.2f", $0) }
                mark.right = value != nil && amount(truth).map { abs($0 - (value ?? .nan)) < 0.005 } == true
            default:
                mark.value = content
                mark.right = content.map { nearlyError(truth: truth, text: $0) <= 0.2 } ?? false
            }
            if name == "date" || name == "total" {
                mark.inText = Accuracy.contains(text, value: truth)
                mark.inTextWithFields = Accuracy.contains(textWithFields, value: truth)
            }
            marks[name] = mark
        }
        return FieldsBenchRow(id: id, half: half, marks: marks, withMs: withMs, withoutMs: withoutMs, fieldsMs: fieldsMs, rereadMs: rereadMs,
                              rereadCrops: rereadCrops)
    }
}

/// `bench fields`'s report: per field and half, and the time with fields over without.
public struct FieldsBenchReport: Sendable, Codable, Equatable {
    public var machine: MachineInfo
    public var date: String
    public var sets: [String]
    public var rows: [FieldsBenchRow]
    public var failures: [String]

    public func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    static func percent(_ part: Int, _ whole: Int) -> String {
        whole == 0 ? "–" : String(format: "%.1f%% (%d/%d)", Double(part) * 100 / Double(whole), part, whole)
    }

    public func markdown() -> String {
        var lines = ["Receipts as fields: \(sets.joined(separator: ", ")), \(rows.count) receipts", ""]
        lines.append("| field | scope | found | exact | right | right means | text baseline | text with fields | wrong, key not in text |")
        lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        let scopes: [(String, [FieldsBenchRow])] = [("all", rows), ("half A", rows.filter { $0.half == .a }), ("half B", rows.filter { $0.half == .b })]
        let measures = ["company": "≤ 20% CER", "address": "≤ 20% CER", "date": "same day", "total": "same amount"]
        for name in ["company", "address", "date", "total"] {
            for (scope, members) in scopes {
                let marks = members.compactMap { $0.marks[name] }
                let inText = marks.compactMap(\.inText), inTextWith = marks.compactMap(\.inTextWithFields)
                let missingText = marks.filter { !$0.right && $0.inText == false }.count
                lines.append("| \(FieldsBenchRow.names[name] ?? name) | \(scope) | \(Self.percent(marks.filter(\.found).count, marks.count)) | "
                    + "\(Self.percent(marks.filter(\.exact).count, marks.count)) | **\(Self.percent(marks.filter(\.right).count, marks.count))** | "
                    + "\(measures[name] ?? "") | \(inText.isEmpty ? "–" : Self.percent(inText.filter { $0 }.count, inText.count)) | "
                    + "\(inTextWith.isEmpty ? "–" : Self.percent(inTextWith.filter { $0 }.count, inTextWith.count)) | "
                    + "\(inText.isEmpty ? "–" : String(missingText)) |")
            }
        }
        lines.append("")
        lines.append("| scope | median ms without | median ms with | median ratio with/without | mean ratio | fields step, median ms | second look, median / mean ms | crops read again, mean |")
        lines.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for (scope, members) in scopes {
            let ratios = members.map { $0.withMs / max($0.withoutMs, 1e-6) }
            let ratio = OCRDetectionRow.median(ratios) ?? .nan, mean = ratios.isEmpty ? .nan : ratios.reduce(0, +) / Double(ratios.count)
            let without = OCRDetectionRow.median(members.map(\.withoutMs)) ?? .nan, with = OCRDetectionRow.median(members.map(\.withMs)) ?? .nan
            let step = OCRDetectionRow.median(members.compactMap(\.fieldsMs)) ?? .nan
            let looks = members.compactMap(\.rereadMs)
            let look = OCRDetectionRow.median(looks) ?? .nan, lookMean = looks.isEmpty ? .nan : looks.reduce(0, +) / Double(looks.count)
            let crops = members.compactMap(\.rereadCrops), cropMean = crops.isEmpty ? .nan : crops.reduce(0, +) / Double(crops.count)
            lines.append(String(format: "| %@ | %.0f | %.0f | %.3f | %.3f | %.2f | %.1f / %.1f | %.2f |", scope, without, with, ratio, mean, step, look, lookMean, cropMean))
        }
        lines.append("")
        lines.append("Found: the field is in the page's receipt; exact: its content is the key's text with case and spaces normalised (a "
            + "currency symbol aside); right: merchant and address within a character error of 20% of the key's letters and digits "
            + "(case, spaces and punctuation ignored: SROIE's keys are in capitals whatever the receipt prints), the date the same "
            + "day, the total the same amount. Text baseline: the key's date or total appears in the text read without fields "
            + "(white space ignored, case-folded, as bench ocr's date/total found); text with fields: in the text read with fields, "
            + "whose second look at the date's and the money rows' words puts the readings it takes into the text. Wrong, key not in text: receipts whose field "
            + "is wrong or missing and whose text lacks the key: the reading, not the fields, missed it. Time: each receipt read "
            + "without and with fields one right after the other, which first alternating, one in flight; the ratio is the median "
            + "of the per-receipt ratios. Half A and half B as bench ocr splits them (ids sorted, alternately).")
        lines.append("")
        lines.append("Machine: \(machine.processors) cores, \(machine.cpuModel), \(machine.os), Swift \(machine.swift) \(machine.buildConfiguration); \(date).")
        if !failures.isEmpty { lines.append(""); lines.append("Failures: " + failures.joined(separator: "; ")) }
        return lines.joined(separator: "\n")
    }
}
