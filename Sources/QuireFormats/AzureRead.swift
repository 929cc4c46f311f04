import Foundation
import QuireWire

/// Azure Computer Vision Read 3.2 (`GET …/vision/v3.2/read/analyzeResults/{id}`), as its swagger
/// (`ComputerVision/stable/v3.2`, `ReadOperationResult`) and examples give it.
public enum AzureRead {
    /// `status` of a read operation (3.x spells them in lower camel case; 2.0 capitalises them).
    public enum Status: String, Codable, Sendable {
        case notStarted, running, succeeded, failed
    }

    /// The whole body of the operation result: the envelope the gateway answers a poll with.
    public struct OperationResult: Codable, Sendable, Equatable {
        public var status: Status
        /// ISO 8601 with milliseconds, UTC (`2019-10-03T14:32:04.236Z`).
        public var createdDateTime: String
        public var lastUpdatedDateTime: String
        /// Present once `status` is `succeeded`.
        public var analyzeResult: AnalyzeResult?
    }

    public struct AnalyzeResult: Codable, Sendable, Equatable {
        public var version: String
        public var modelVersion: String
        public var readResults: [ReadResult]
    }

    public struct ReadResult: Codable, Sendable, Equatable {
        public var page: Int
        /// The page's most likely language (BCP-47: `it`, `zh-Hant`, the codes of the 3.2 swagger's
        /// `OcrDetectionLanguage`), when known. Azure gives no confidence for it.
        public var language: String?
        public var angle: Double
        /// In `unit`s: pixels of an image; inches of a PDF page, as Azure gives them.
        public var width: Double
        public var height: Double
        /// `pixel` or `inch`.
        public var unit: String
        public var lines: [Line]
    }

    public struct Line: Codable, Sendable, Equatable {
        /// Only where the line's language differs from its page's (as in Azure's example).
        public var language: String?
        public var boundingBox: [Double]
        public var text: String
        public var appearance: Appearance
        public var words: [Word]
    }

    public struct Appearance: Codable, Sendable, Equatable {
        public var style: Style
    }

    public struct Style: Codable, Sendable, Equatable {
        /// `handwriting` or `other`.
        public var name: String
        public var confidence: Double
    }

    public struct Word: Codable, Sendable, Equatable {
        public var boundingBox: [Double]
        public var text: String
        public var confidence: Double
    }

    /// What Quire answers in `version` and `modelVersion`.
    public static let version = "v3.2"
    public static let modelVersion = "2022-04-30"

    /// The `analyzeResult` of a Quire result: one read result per page, lines in reading order. An
    /// image's page is measured in pixels; a PDF page in inches to four decimals, as Azure measures
    /// PDF pages (its coordinates over its `resolution`).
    ///
    /// Tesseract reads print and does not classify handwriting, so every line's style is `other`; its
    /// confidence is the line's recognition confidence (a line Tesseract read poorly is not vouched
    /// for as print either).
    ///
    /// A page's `language` is the one identified in it, else the first it was read with; a line's is
    /// given only where it differs from its page's, as in Azure's example (an English page with one
    /// Spanish line), and on a page where languages were identified only for lines identified
    /// themselves (`DetectedLanguages.Levels`).
    public static func analyzeResult(_ result: OCRResult) -> AnalyzeResult {
        AnalyzeResult(version: version, modelVersion: modelVersion, readResults: result.pages.map { page in
            let geometry = PageGeometry(page)
            let language = DetectedLanguages.main(page)
            let levels = DetectedLanguages.Levels(page)
            let perInch = page.resolution.flatMap { $0 > 0 ? Double($0) : nil }
            func measure(_ pixels: Int) -> Double { perInch.map { (Double(pixels) / $0 * 10_000).rounded() / 10_000 } ?? Double(pixels) }
            return ReadResult(
                page: page.pageNumber, language: language, angle: geometry.textAngle, width: measure(geometry.width), height: measure(geometry.height),
                unit: perInch == nil ? "pixel" : "inch",
                lines: page.lines.map { line in
                    Line(language: levels.own(line).flatMap { $0 == language ? nil : $0 },
                         boundingBox: geometry.flat(line.polygon, box: line.boundingBox).map(measure), text: line.text,
                         appearance: Appearance(style: Style(name: "other", confidence: rounded(line.confidence ?? 0))),
                         words: line.words.map { word in
                             Word(boundingBox: geometry.flat(word.polygon, box: word.boundingBox).map(measure), text: word.text,
                                  confidence: rounded(word.confidence ?? 0))
                         })
                })
        })
    }

    /// The operation result for a poll: `analyzeResult` only when `status` is `succeeded`.
    public static func operationResult(status: Status, created: Date, lastUpdated: Date, result: OCRResult?) -> OperationResult {
        OperationResult(status: status, createdDateTime: timestamp(created), lastUpdatedDateTime: timestamp(lastUpdated),
                        analyzeResult: status == .succeeded ? result.map(analyzeResult) : nil)
    }

    /// `2019-10-03T14:32:04.236Z`.
    public static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// Confidences to three decimals, as Azure gives them.
    static func rounded(_ c: Double) -> Double { (min(1, max(0, c)) * 1_000).rounded() / 1_000 }
}

/// Azure Computer Vision Read 2.0 (`GET …/vision/v2.0/read/operations/{id}`), the shape Azure's iOS
/// tutorial decodes with Swift `Codable`: `boundingBox` is `[Int]`, a word's `confidence` is
/// `String?` and present (as `"Low"`) only for words read with low confidence. PDF pages too are
/// measured in whole pixels (of the page at its `resolution`), which that `[Int]` decodes.
public enum AzureReadV2 {
    /// 2.0 capitalises the status (`NotStarted`, `Running`, `Failed`, `Succeeded`).
    public enum Status: String, Codable, Sendable {
        case notStarted = "NotStarted", running = "Running", failed = "Failed", succeeded = "Succeeded"
    }

    public struct OperationResult: Codable, Sendable, Equatable {
        public var status: Status
        /// Present once `status` is `Succeeded`.
        public var recognitionResults: [RecognitionResult]?
    }

    public struct RecognitionResult: Codable, Sendable, Equatable {
        public var page: Int
        /// Degrees in [0, 360).
        public var clockwiseOrientation: Double
        public var width: Int
        public var height: Int
        public var unit: String
        public var lines: [Line]
    }

    public struct Line: Codable, Sendable, Equatable {
        public var boundingBox: [Int]
        public var text: String
        public var words: [Word]
    }

    public struct Word: Codable, Sendable, Equatable {
        public var boundingBox: [Int]
        public var text: String
        /// `"Low"`, or absent.
        public var confidence: String?
    }

    /// Below this word confidence (0…1) a word is marked `"Low"`, and drawn in the overlay's
    /// low-confidence colour.
    public static let lowConfidence = 0.6

    public static func operationResult(status: Status, result: OCRResult?, lowConfidence: Double = Self.lowConfidence) -> OperationResult {
        OperationResult(status: status, recognitionResults: status == .succeeded ? result.map { recognitionResults($0, lowConfidence: lowConfidence) } : nil)
    }

    public static func recognitionResults(_ result: OCRResult, lowConfidence: Double = Self.lowConfidence) -> [RecognitionResult] {
        result.pages.map { page in
            let geometry = PageGeometry(page)
            let angle = geometry.textAngle < 0 ? geometry.textAngle + 360 : geometry.textAngle
            return RecognitionResult(
                page: page.pageNumber, clockwiseOrientation: angle == 360 ? 0 : angle, width: geometry.width, height: geometry.height,
                unit: "pixel",
                lines: page.lines.map { line in
                    Line(boundingBox: geometry.flat(line.polygon, box: line.boundingBox), text: line.text, words: line.words.map { word in
                        Word(boundingBox: geometry.flat(word.polygon, box: word.boundingBox), text: word.text,
                             confidence: (word.confidence ?? 0) < lowConfidence ? "Low" : nil)
                    })
                })
        }
    }
}

extension OCRResult.Page {
    /// Every line of the page in reading order (blocks, then paragraphs).
    var lines: [OCRResult.Line] { blocks.flatMap { $0.paragraphs.flatMap(\.lines) } }
}
