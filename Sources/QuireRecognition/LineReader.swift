import Imaging

/// One line image read: the text and the mean probability of its characters (0…1).
public struct ReadLine: Sendable, Equatable {
    public var text: String
    public var confidence: Double

    public init(text: String, confidence: Double) {
        self.text = text
        self.confidence = confidence
    }
}

/// An engine that reads pictures of single lines, no detection: the second look a page's fields take
/// at the words that carry them (``EngineFactory/lineReader()``).
public protocol LineReader: AnyObject {
    /// Reads each image as one line of text, in order.
    func readLines(_ images: [Image]) throws(RecognitionError) -> [ReadLine]
}
