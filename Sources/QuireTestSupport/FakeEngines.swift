import Imaging
import QuireRecognition
import QuireWire

/// A word a ``FakeRecognizer`` reads: its text, its box as fractions of the image it is shown (so that
/// it stands in the same place whatever the pipeline scaled the page to) and its confidence.
public struct FakeWord: Sendable {
    public var text: String
    public var box: (x: Double, y: Double, width: Double, height: Double)
    public var confidence: Double

    public init(_ text: String, at box: (x: Double, y: Double, width: Double, height: Double), confidence: Double = 0.95) {
        self.text = text
        self.box = box
        self.confidence = confidence
    }
}

/// An engine that reads the same words on every image, one line each, and remembers what it was shown:
/// the pipeline (prepare, choose, read, edit, build) runs on it without any engine installed.
public final class FakeRecognizer: TextRecognizer {
    public let engineName: String
    public let input: RecognizerInput
    public var words: [FakeWord]
    /// What it reads instead on an image taller than wide (a wide page turned a quarter); nil: `words`.
    public var wordsWhenTall: [FakeWord]?
    /// The size of each image it was asked to read, in order.
    public private(set) var shown: [(width: Int, height: Int)] = []

    public init(_ engineName: String, input: RecognizerInput = .preparedPage, words: [FakeWord]) {
        self.engineName = engineName
        self.input = input
        self.words = words
    }

    public func regions(of image: Image) throws(RecognitionError) -> [LayoutRegion] {
        let lines = words.map { box($0, image) }
        guard let x0 = lines.map(\.x).min(), let y0 = lines.map(\.y).min(),
              let x1 = lines.map({ $0.x + $0.width }).max(), let y1 = lines.map({ $0.y + $0.height }).max() else { return [] }
        return [LayoutRegion(kind: .text, box: PixelBox(x: x0, y: y0, width: x1 - x0, height: y1 - y0), lines: lines)]
    }

    public func recognize(_ image: Image, layout: Layout, symbols: Bool) throws(RecognitionError) -> RecognizedPage {
        shown.append((image.width, image.height))
        let words = image.height > image.width ? wordsWhenTall ?? words : words
        let lines = words.map { word -> RecognizedElement in
            let b = box(word, image)
            let symbolWidth = max(1, b.width / max(1, word.text.count))
            let symbols = symbols ? word.text.enumerated().map { i, c in
                RecognizedElement(text: String(c), box: PixelBox(x: b.x + i * symbolWidth, y: b.y, width: symbolWidth, height: b.height),
                                  confidence: word.confidence)
            } : []
            let read = RecognizedElement(text: word.text, box: b, confidence: word.confidence, language: "eng", children: symbols)
            return RecognizedElement(text: word.text + "\n", box: b, confidence: word.confidence, baseline: (b.x, b.y + b.height, b.x + b.width, b.y + b.height),
                                     children: [read])
        }
        let paragraph = RecognizedElement(text: lines.map(\.text).joined(), box: lines.first?.box ?? PixelBox(x: 0, y: 0, width: 0, height: 0),
                                          children: lines)
        let blocks = lines.isEmpty ? [] : [RecognizedElement(text: paragraph.text, box: paragraph.box, children: [paragraph])]
        return RecognizedPage(width: image.width, height: image.height, blocks: blocks, text: paragraph.text)
    }

    public func clear() {}

    func box(_ word: FakeWord, _ image: Image) -> PixelBox {
        PixelBox(x: Int(word.box.x * Double(image.width)), y: Int(word.box.y * Double(image.height)),
                 width: Int(word.box.width * Double(image.width)), height: Int(word.box.height * Double(image.height)))
    }
}

/// An ``EngineFactory`` that hands out fakes: a page reader, a picture reader or none, and counts what
/// was asked of it.
public final class FakeEngines: EngineFactory {
    public var page: FakeRecognizer?
    public var picture: FakeRecognizer?
    public let installedLanguages: Set<String>
    public let pictureLanguages: Set<String>
    /// The roles asked for, in order, with the languages.
    public private(set) var asked: [(role: EngineRole, languages: [String])] = []

    public init(page: FakeRecognizer?, picture: FakeRecognizer? = nil, installed: Set<String> = ["eng", "deu"], pictureLanguages: Set<String> = ["eng"]) {
        self.page = page
        self.picture = picture
        installedLanguages = installed
        self.pictureLanguages = pictureLanguages
    }

    /// Page readers for particular language sets (`"rus"`, `"ita+eng"`), where a test reads a page
    /// differently in each; `page` reads in the others.
    public var pagesByLanguages: [String: FakeRecognizer] = [:]
    /// What orientation and script detection says of every page; nil: no detector.
    public var detected: OrientationGuess?

    public func pageReader(languages: [String]) throws(WireError) -> any TextRecognizer {
        asked.append((.page, languages))
        guard let page = pagesByLanguages[languages.joined(separator: "+")] ?? page else { throw WireError(.engineFailure, "no page reader in this test") }
        return page
    }

    public func pictureReader(languages: [String]) throws(WireError) -> any TextRecognizer {
        asked.append((.picture, languages))
        guard let picture else { throw WireError(.engineFailure, "the scene engine is not available: none in this test") }
        return picture
    }

    public func orientationDetector() -> (any OrientationDetector)? {
        detected.map { guess in FakeDetector(guess) { [unowned self] in self.detections += 1 } }
    }
    /// How many times orientation and script detection was asked.
    public private(set) var detections = 0

    /// The reader of single lines; nil: none, as on a worker without the scene models.
    public var lines: FakeLineReader?
    public func lineReader() -> (any LineReader)? { lines }
}

/// A reader of single lines that reads the crops it is shown as it is told, in order, and remembers
/// their sizes.
public final class FakeLineReader: LineReader {
    public var readings: [ReadLine]
    public private(set) var shown: [(width: Int, height: Int)] = []

    public init(_ readings: [ReadLine]) { self.readings = readings }

    public func readLines(_ images: [Image]) throws(RecognitionError) -> [ReadLine] {
        images.map { image in
            shown.append((image.width, image.height))
            return readings.isEmpty ? ReadLine(text: "", confidence: 0) : readings.removeFirst()
        }
    }
}

/// An orientation and script detector that says the same of every image.
public final class FakeDetector: OrientationDetector {
    let guess: OrientationGuess
    let asked: () -> Void
    public init(_ guess: OrientationGuess, asked: @escaping () -> Void = {}) {
        self.guess = guess
        self.asked = asked
    }
    public func orientation(of image: Image) -> OrientationGuess? {
        asked()
        return guess
    }
}
