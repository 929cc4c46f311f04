import Foundation
import QuireRecognition
import QuireWire

/// Which engine reads a page: the request's `engine` (`tesseract | scene | auto`) as a policy over the
/// engines a worker has, not a branch of the pipeline. `tesseract` reads with the page reader, `scene`
/// with the picture reader, and `auto` with the page reader first and the picture reader too where
/// the first reading looks like a photo read badly (few words read confidently, and most not),
/// keeping the clearly more confident of the two. The `engine` step records what was measured.
struct EnginePolicy {
    /// The reader that reads every page, and the one that may read it again.
    var first: EngineRole
    var second: EngineRole?
    let configuration: OCRConfiguration

    /// The plan for `choice` (the worker's default when nil) and `languages`: `unknown_language` for
    /// the picture reader with a language its models do not read; `auto` reads with the page reader
    /// alone where they do not.
    init(_ choice: OCRRequest.Engine?, languages: [String], engines: any EngineFactory, configuration: OCRConfiguration) throws(WireError) {
        self.configuration = configuration
        switch choice ?? configuration.defaultEngine {
        case .tesseract:
            first = .page
        case .scene:
            guard engines.pictureReaderReads(languages) else {
                throw WireError(.unknownLanguage, "the scene engine reads Latin-script languages, Chinese and Japanese, not "
                                    + languages.filter { !engines.pictureLanguages.contains($0) }.joined(separator: ", ") + "; use engine tesseract or auto")
            }
            first = .picture
        case .auto:
            first = .page
            second = engines.pictureReaderReads(languages) ? .picture : nil
        }
    }

    /// Whether a page read by the first reader is worth the second reader's time, with what was
    /// measured for the `engine` step; nil when it is not (or there is no second reader).
    func secondReading(after page: OCRResult.Page) -> [String: Double]? {
        guard second != nil else { return nil }
        let words = page.blocks.flatMap { $0.paragraphs.flatMap { $0.lines.flatMap(\.words) } }
        let confident = words.filter { ($0.confidence ?? 0) >= 0.8 }.count
        let confidence = page.confidence ?? 0
        // Above 1 - gain the second reader could not win: not worth its time.
        guard confident < configuration.sceneBelowConfidentWords,
              Double(confident) < configuration.sceneBelowConfidentShare * Double(words.count) || words.isEmpty,
              confidence < 1 - configuration.sceneGain else { return nil }
        return [
            "words": Double(words.count), "confidentWords": Double(confident), "minConfidentWords": Double(configuration.sceneBelowConfidentWords),
            "minConfidentShare": configuration.sceneBelowConfidentShare, "confidence": Self.hundredths(confidence),
        ]
    }

    /// Whether the second reading is kept over the first: where it is clearly the more confident, and
    /// where it found no text while the first reading's words were mostly guesses. What it measured
    /// goes into `parameters`.
    func keepsSecond(_ page: OCRResult.Page, over first: OCRResult.Page, parameters: inout [String: Double]) -> Bool {
        let confidence = first.confidence ?? 0, secondConfidence = page.confidence ?? 0
        let found = !page.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        parameters["sceneConfidence"] = Self.hundredths(secondConfidence)
        parameters["sceneLines"] = Double(page.blocks.reduce(0) { $0 + $1.paragraphs.reduce(0) { $0 + $1.lines.count } })
        parameters["minGain"] = configuration.sceneGain
        if !found { parameters["noTextBelow"] = configuration.noTextBelow }
        return found ? secondConfidence >= confidence + configuration.sceneGain : confidence < configuration.noTextBelow
    }

    static func hundredths(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
