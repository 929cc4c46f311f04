import Foundation
import Imaging
import QuireRecognition

/// The scene engine: PaddleOCR's PP-OCR models (a DB text detector and a CTC line recognizer) run
/// through ONNX Runtime, for what Tesseract, a page reader, reads badly: signs, screens,
/// whiteboards, handwriting. One per worker thread, as every ``TextRecognizer``.
public final class SceneEngine: TextRecognizer {
    /// How pictures are sized for the models.
    public struct Settings: Sendable {
        /// The detector sees the picture enlarged until its shorter side has this many pixels (RapidOCR
        /// says 736: on photos-dev, 640 read the whiteboards and a plaque better and no photo worse, with
        /// a quarter fewer pixels to detect; docs/benchmarks.md)...
        public var detectorMinSide = 640
        /// ...but never more than this many times: a word cropped tight is text enough, and a picture
        /// of 40 × 16 pixels made 1,280 × 736 took the detector a second.
        public var detectorMaxEnlargement = 4.0
        /// ...and reduced until its longer side has at most this many.
        public var detectorMaxSide = 2000
        /// A line read with fewer time steps per character than this is read again, stretched...
        public var minStepsPerCharacter = 2.5
        /// ...by at most this much.
        public var maxStretch = 1.5

        /// How much wider a line read as `line` must be read again to have ``minStepsPerCharacter``
        /// time steps per character; nil where it has them (or read nothing).
        public func stretch(_ line: CTCDecoder.Line, usedFraction: Double) -> Double? {
            let steps = Double(line.steps) * usedFraction, wanted = minStepsPerCharacter * Double(line.readingCount)
            return line.characters.isEmpty || steps >= wanted ? nil : min(maxStretch, wanted / steps)
        }
        /// Lines read with a lower mean character probability are dropped (noise the detector found).
        public var minLineConfidence = 0.5
        /// A picture in which no line is found is read whole, as one line (a word cropped tight, a curved
        /// sign), and kept when it reads with at least this mean character probability.
        public var wholePictureConfidence = 0.9
        /// Words read as no word of the language's list are replaced by the likeliest word of the list
        /// near them (``CTCDecoder/corrected(_:words:tolerance:scores:offset:classes:)``) where it is at most
        /// this much less likely (natural log); nil: words are read as the recognizer spells them.
        public var wordTolerance: Double? = 5
        /// ONNX Runtime's operator threads: one pool in the process, which every engine's models share
        /// and the first engine opened sizes (``OnnxModel``); by default one per core.
        public var threads = ProcessInfo.processInfo.activeProcessorCount
        /// Lines recognised together in one run of the recognizer.
        public var batch = 6
        public var regions = TextRegions()
        public init() {}
    }

    /// A picture whose every pixel is within this many levels of every other, in each colour, is blank.
    static let blankTolerance = 8
    /// The recognizer's input height, pixels (PP-OCR's line models).
    static let lineHeight = 48
    /// The narrowest recognizer input, pixels (PP-OCR pads shorter lines to 320 wide).
    static let minLineWidth = 320

    public let settings: Settings
    public let engineName: String
    /// The Tesseract languages of the pictures read next (set before each), the first of which the
    /// words are tagged with. Where none is written in Chinese or Japanese, only characters of the
    /// Latin-script alphabets are read: the models' other 14,000 characters are then only ways to be wrong.
    public var languages: [String] = ["eng"] {
        didSet {
            decoder = Self.decoder(dictionary, for: languages)
            latin = Self.latinFallback(dictionary, for: languages)
            words = Self.words(for: languages, settings)
        }
    }
    public var language: String { languages.first ?? "eng" }
    private let detector: OnnxModel
    private let recognizer: OnnxModel
    private let dictionary: CTCDecoder
    private var decoder: CTCDecoder
    /// Where Chinese or Japanese are read beside a first language in Latin script (a request without a
    /// language: the script is not known), the Latin-only decoder each line is read with unless most
    /// of it decodes to East Asian characters: a Latin line's stray Han is a way to be wrong.
    private var latin: CTCDecoder?
    /// The word list of the first of ``languages`` that has one installed.
    private var words: WordList?

    static func words(for languages: [String], _ settings: Settings) -> WordList? {
        settings.wordTolerance == nil ? nil : languages.lazy.compactMap { WordList.forLanguage($0) }.first
    }

    static let eastAsianPacks: Set<String> = ["chi_sim", "chi_tra", "jpn", "chi_sim_vert", "chi_tra_vert", "jpn_vert"]

    static func decoder(_ full: CTCDecoder, for languages: [String]) -> CTCDecoder {
        languages.contains(where: eastAsianPacks.contains) ? full : full.restricted(to: CTCDecoder.isLatinScript)
    }

    static func latinFallback(_ full: CTCDecoder, for languages: [String]) -> CTCDecoder? {
        guard let first = languages.first, !eastAsianPacks.contains(first), languages.contains(where: eastAsianPacks.contains) else { return nil }
        return full.restricted(to: CTCDecoder.isLatinScript)
    }

    /// Whether most of a line's letters are outside the Latin-script alphabets (digits and marks, which
    /// both scripts' lines hold, are not counted), and at least two: a lone Han character on a picture
    /// of Latin text is a mark read as one.
    static func mostlyEastAsian(_ line: CTCDecoder.Line) -> Bool {
        let letters = line.characters.filter { $0.text.unicodeScalars.contains { $0.properties.isAlphabetic } }
        let eastAsian = letters.filter { !CTCDecoder.isLatinScript($0.text) }.count
        return eastAsian >= 2 && eastAsian * 2 > letters.count
    }

    /// Whether ONNX Runtime is there, and why not.
    public static var unavailableReason: String? { OnnxModel.unavailableReason }
    /// The ONNX Runtime loaded, or nil.
    public static var runtimeVersion: String? { OnnxModel.version }

    /// Opens `det.onnx` and `rec.onnx` in `models` (scripts/install-onnxruntime puts them in
    /// /opt/quire-onnxruntime/models); the recognizer's dictionary comes from its metadata.
    public init(models: String, languages: [String] = ["eng"], settings: Settings = Settings()) throws(SceneError) {
        if let reason = OnnxModel.unavailableReason { throw SceneError(reason) }
        self.settings = settings
        detector = try OnnxModel(path: models + "/det.onnx", threads: settings.threads)
        recognizer = try OnnxModel(path: models + "/rec.onnx", threads: settings.threads)
        guard let dictionary = recognizer.metadata("character"), !dictionary.isEmpty else {
            throw SceneError("\(models)/rec.onnx has no character dictionary in its metadata")
        }
        let full = CTCDecoder(dictionary: dictionary.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        self.dictionary = full
        self.languages = languages
        decoder = Self.decoder(full, for: languages)
        latin = Self.latinFallback(full, for: languages)
        words = Self.words(for: languages, settings)
        let modelName = (try? String(contentsOfFile: models + "/models-version", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        engineName = "pp-ocr \(modelName ?? "models"), onnxruntime \(OnnxModel.version ?? "?")"
    }

    /// The picture in colour, at most twice what the detector looks at: plenty for the line crops.
    public var input: RecognizerInput { .picture(maxSide: 2 * settings.detectorMaxSide) }

    public func regions(of image: Image) throws(RecognitionError) -> [LayoutRegion] { [] }

    public func clear() {}

    /// Reads the picture's text lines; `layout` is not used (the detector finds the lines).
    public func recognize(_ image: Image, layout: Layout, symbols: Bool) throws(RecognitionError) -> RecognizedPage {
        let pixels: Pixels
        do throws(ImageError) {
            // A blank picture (a PDF page whose drawing was refused, a flat fill) has no line to find:
            // the detector and the whole-picture reading would spend seconds to say so.
            if try image.isUniform(tolerance: Self.blankTolerance) { return page([], width: image.width, height: image.height, symbols: symbols) }
            pixels = Pixels(width: image.width, height: image.height, bytes: try image.rgb())
        } catch {
            throw RecognitionError(.recognitionFailed, error.message)
        }
        do throws(SceneError) {
            return try read(pixels, symbols: symbols)
        } catch {
            throw RecognitionError(.recognitionFailed, error.message)
        }
    }

    /// The margin the picture gets before detection: text that touches the edge (a photo cropped to
    /// one line or one word) is otherwise not found. A line-shaped picture gets enough above and
    /// below to be an eighth as high as it is wide.
    static func margins(width: Int, height: Int) -> (x: Int, y: Int) {
        let margin = max(8, min(width, height) / 10)
        let lineShaped = max(0, (width / 8 - height) / 2)
        return (margin, max(margin, lineShaped))
    }

    func read(_ picture: Pixels, symbols: Bool) throws(SceneError) -> RecognizedPage {
        let margin = Self.margins(width: picture.width, height: picture.height)
        let padded = picture.padded(top: margin.y, bottom: margin.y, left: margin.x, right: margin.x, with: picture.borderColour)
        var found = try detect(padded)
        // A region standing upright is read turned a quarter counter-clockwise: its text's top-left
        // corner is the region's top-right one.
        for i in found.indices where Self.standsUpright(found[i]) { found[i] = found[i].readDownward }
        var lines: [(text: DetectedText, line: CTCDecoder.Line, usedFraction: Double)] = []
        let decoded = try readLines(found.map { crop(padded, $0) })
        for (i, (line, used)) in decoded.enumerated() {
            guard !line.characters.isEmpty, line.readingConfidence >= settings.minLineConfidence else { continue }
            var text = found[i]
            text.corners = text.corners.map { Point(x: $0.x - Double(margin.x), y: $0.y - Double(margin.y)) }
            lines.append((text, line, used))
        }
        // A picture without a line found (a word cropped tight, a curved sign), and a line-shaped one
        // whose lines all stand on one row (a crop of one handwritten line, which the detector
        // splits), is also read whole, as one line: kept where it reads better than the lines did.
        let lineShaped = picture.width >= 4 * picture.height
        let oneRow = lines.allSatisfy { a in lines.allSatisfy { b in min(a.text.maxY, b.text.maxY) > max(a.text.minY, b.text.minY) } }
        if lines.isEmpty || lineShaped && oneRow {
            let upright = picture.height >= 2 * picture.width
            if let (line, used) = try readLines([upright ? picture.turnedCounterClockwise() : picture]).first, !line.characters.isEmpty {
                let read = lines.reduce(0.0) { $0 + $1.line.readingConfidence * Double($1.line.readingCount) }
                    / Double(max(1, lines.reduce(0) { $0 + $1.line.readingCount }))
                if lines.isEmpty ? line.readingConfidence >= settings.wholePictureConfidence : line.readingConfidence > read {
                    let (w, h) = (Double(picture.width), Double(picture.height))
                    let whole = DetectedText(corners: [Point(x: 0, y: 0), Point(x: w, y: 0), Point(x: w, y: h), Point(x: 0, y: h)], score: 0)
                    lines = [(upright ? whole.readDownward : whole, line, used)]
                }
            }
        }
        return page(lines, width: picture.width, height: picture.height, symbols: symbols)
    }

    /// The size the detector sees a picture at: enlarged toward ``Settings/detectorMinSide`` on its
    /// shorter side (at most ``Settings/detectorMaxEnlargement`` times), reduced to
    /// ``Settings/detectorMaxSide`` on its longer side, in multiples of 32.
    static func detectorSize(width: Int, height: Int, _ settings: Settings) -> (width: Int, height: Int) {
        let (w, h) = (Double(width), Double(height))
        var ratio = max(1, min(settings.detectorMaxEnlargement, Double(settings.detectorMinSide) / min(w, h)))
        if max(w, h) * ratio > Double(settings.detectorMaxSide) { ratio = Double(settings.detectorMaxSide) / max(w, h) }
        return (max(32, Int((w * ratio / 32).rounded()) * 32), max(32, Int((h * ratio / 32).rounded()) * 32))
    }

    /// The detector's text regions, in the picture's pixels.
    func detect(_ picture: Pixels) throws(SceneError) -> [DetectedText] {
        let (dw, dh) = Self.detectorSize(width: picture.width, height: picture.height, settings)
        let resized = picture.resized(width: dw, height: dh)
        var input = [Float](repeating: 0, count: 3 * dw * dh)
        resized.writeTensor(into: &input)
        return try detector.run(input, shape: [1, 3, dh, dw]) { map, shape throws(SceneError) in
            guard shape.count == 4, shape[2] * shape[3] <= map.count else { throw SceneError("the detector's output has the shape \(shape)") }
            return settings.regions.regions(in: map, width: shape[3], height: shape[2], targetWidth: picture.width, targetHeight: picture.height)
        }
    }

    /// Whether a region is at least half as tall again as it is wide: a line written top to bottom.
    static func standsUpright(_ region: DetectedText) -> Bool {
        let (w, h) = region.size
        return h >= 1.5 * w
    }

    /// The region straightened into a level line, read from its text's top-left corner (an upright
    /// region's corners already start from its top-right, ``read(_:symbols:)``).
    func crop(_ picture: Pixels, _ region: DetectedText) -> Pixels {
        let (w, h) = region.size
        return picture.warped(region.corners, width: max(1, Int(w)), height: max(1, Int(h)))
    }

    /// Reads line images, those of similar shape together (each batch is as wide as its widest line).
    /// CTC needs a time step for each character and a blank between two alike: a line read with fewer
    /// than ``Settings/minStepsPerCharacter`` steps per character (handwriting written close, where the
    /// recognizer's 8 pixels a step hold most of a letter) is read again stretched that far (at most
    /// ``Settings/maxStretch``), and the more confident reading kept.
    func readLines(_ crops: [Pixels]) throws(SceneError) -> [(CTCDecoder.Line, Double)] {
        func batches(_ indices: [Int], stretch: [Int: Double]) throws(SceneError) -> [Int: (CTCDecoder.Line, Double)] {
            let order = indices.sorted { Double(crops[$0].width) / Double(crops[$0].height) < Double(crops[$1].width) / Double(crops[$1].height) }
            var read: [Int: (CTCDecoder.Line, Double)] = [:]
            var start = 0
            while start < order.count {
                let batch = Array(order[start..<min(order.count, start + settings.batch)])
                for (i, result) in zip(batch, try recognize(batch.map { crops[$0] }, stretch: batch.map { stretch[$0] ?? 1 })) { read[i] = result }
                start += settings.batch
            }
            return read
        }
        var read = try batches(Array(crops.indices), stretch: [:])
        var stretch: [Int: Double] = [:]
        for (i, (line, used)) in read { stretch[i] = settings.stretch(line, usedFraction: used) }
        if !stretch.isEmpty {
            for (i, again) in try batches(Array(stretch.keys), stretch: stretch) where again.0.readingConfidence > read[i]!.0.readingConfidence {
                read[i] = again
            }
        }
        return crops.indices.map { read[$0]! }
    }

    /// Recognises a batch of line images, each widened by its `stretch`, padded to the widest and at
    /// least `minWidth`; for each, the decoded line and the share of the input's width its image filled.
    func recognize(_ crops: [Pixels], stretch: [Double]? = nil, minWidth: Int = SceneEngine.minLineWidth) throws(SceneError) -> [(CTCDecoder.Line, Double)] {
        let height = Self.lineHeight
        let widths = crops.indices.map { i in
            min(4096, Int((Double(height) * Double(crops[i].width) / Double(crops[i].height) * (stretch?[i] ?? 1)).rounded(.up)))
        }
        let inputWidth = max(minWidth, widths.max() ?? 0)
        var input = [Float](repeating: 0, count: crops.count * 3 * height * inputWidth)
        for (i, crop) in crops.enumerated() {
            crop.resized(width: max(1, widths[i]), height: height).writeTensor(into: &input, offset: i * 3 * height * inputWidth, rowLength: inputWidth)
        }
        return try recognizer.run(input, shape: [crops.count, 3, height, inputWidth]) { buffer, shape throws(SceneError) in
            guard shape.count == 3, shape[0] == crops.count, shape[0] * shape[1] * shape[2] <= buffer.count else {
                throw SceneError("the recognizer's output has the shape \(shape)")
            }
            return crops.indices.map { i in
                let offset = i * shape[1] * shape[2]
                var lineDecoder = decoder
                var line = decoder.decode(buffer, offset: offset, steps: shape[1], classes: shape[2])
                if let latin, !Self.mostlyEastAsian(line) {
                    lineDecoder = latin
                    line = latin.decode(buffer, offset: offset, steps: shape[1], classes: shape[2])
                }
                if let words, let tolerance = settings.wordTolerance {
                    line = lineDecoder.corrected(line, words: words, tolerance: tolerance, scores: buffer, offset: offset, classes: shape[2])
                }
                return (line, Double(widths[i]) / Double(inputWidth))
            }
        }
    }

    /// The page: blocks of lines in reading order, each line's words and characters placed along it.
    func page(_ lines: [(text: DetectedText, line: CTCDecoder.Line, usedFraction: Double)], width: Int, height: Int, symbols: Bool) -> RecognizedPage {
        func box(_ corners: [Point]) -> PixelBox {
            let x0 = max(0, Int(corners.map(\.x).min()!.rounded(.down))), y0 = max(0, Int(corners.map(\.y).min()!.rounded(.down)))
            let x1 = min(width, Int(corners.map(\.x).max()!.rounded(.up))), y1 = min(height, Int(corners.map(\.y).max()!.rounded(.up)))
            return PixelBox(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
        }
        func pairs(_ corners: [Point]) -> [(x: Double, y: Double)] { corners.map { ($0.x, $0.y) } }
        var blocks: [RecognizedElement] = []
        for block in SceneLayout.blocks(lines.map(\.text)) {
            var elements: [RecognizedElement] = []
            for index in block {
                let (region, line, used) = lines[index]
                let spans = SceneLayout.characterSpans(line, usedFraction: used)
                var words: [RecognizedElement] = []
                var current: [Int] = []
                func closeWord() {
                    guard let first = current.first, let last = current.last else { return }
                    let corners = SceneLayout.slice(region.corners, from: spans[first].start, to: spans[last].end)
                    let characters = current.map { line.characters[$0] }
                    let children: [RecognizedElement] = symbols ? current.map { i in
                        let c = SceneLayout.slice(region.corners, from: spans[i].start, to: spans[i].end)
                        return RecognizedElement(text: line.characters[i].text, box: box(c), confidence: line.characters[i].confidence, corners: pairs(c))
                    } : []
                    words.append(RecognizedElement(text: characters.map(\.text).joined(), box: box(corners),
                                                   confidence: characters.map(\.confidence).reduce(0, +) / Double(characters.count),
                                                   language: language, children: children, corners: pairs(corners)))
                    current = []
                }
                for (i, character) in line.characters.enumerated() {
                    if character.text == " " { closeWord() } else { current.append(i) }
                }
                closeWord()
                let c = region.corners
                elements.append(RecognizedElement(text: words.map(\.text).joined(separator: " "), box: box(c), confidence: line.confidence,
                                                  baseline: (Int(c[3].x.rounded()), Int(c[3].y.rounded()), Int(c[2].x.rounded()), Int(c[2].y.rounded())),
                                                  children: words, corners: pairs(c)))
            }
            let text = elements.map(\.text).joined(separator: "\n")
            let covering = box(block.flatMap { lines[$0].text.corners })
            let confidence = elements.map { $0.confidence ?? 0 }.reduce(0, +) / Double(elements.count)
            let paragraph = RecognizedElement(text: text, box: covering, confidence: confidence, children: elements)
            blocks.append(RecognizedElement(text: text, box: covering, confidence: confidence, children: [paragraph]))
        }
        return RecognizedPage(width: width, height: height, blocks: blocks, text: blocks.map(\.text).joined(separator: "\n\n") + (blocks.isEmpty ? "" : "\n"))
    }
}
