import Imaging

/// One element of the layout as an engine recognised it, at any level.
public struct RecognizedElement: Sendable {
    public var text: String
    public var box: PixelBox
    /// 0…1, or nil when Tesseract gives none.
    public var confidence: Double?
    /// Tesseract's language code for words (`eng`), nil elsewhere.
    public var language: String?
    /// Lines: the baseline's end points.
    public var baseline: (x1: Int, y1: Int, x2: Int, y2: Int)?
    public var children: [RecognizedElement]
    /// The element's own four corners, clockwise from its top-left, where they lean away from `box`
    /// (an engine that finds slanted text gives them); nil: `box`'s corners.
    public var corners: [(x: Double, y: Double)]?

    public init(text: String, box: PixelBox, confidence: Double? = nil, language: String? = nil,
                baseline: (x1: Int, y1: Int, x2: Int, y2: Int)? = nil, children: [RecognizedElement] = [],
                corners: [(x: Double, y: Double)]? = nil) {
        self.text = text
        self.box = box
        self.confidence = confidence
        self.language = language
        self.baseline = baseline
        self.children = children
        self.corners = corners
    }
}

/// A page's recognition result: blocks > paragraphs > lines > words > symbols.
public struct RecognizedPage: Sendable {
    public var width: Int
    public var height: Int
    public var blocks: [RecognizedElement]
    /// The skew Tesseract measured, in degrees (positive: clockwise).
    public var deskewAngle: Double
    /// Left to right, right to left or top to bottom, as Tesseract saw the first block.
    public var writingDirection: String
    public var text: String

    public init(width: Int, height: Int, blocks: [RecognizedElement], deskewAngle: Double = 0, writingDirection: String = "ltr", text: String) {
        self.width = width
        self.height = height
        self.blocks = blocks
        self.deskewAngle = deskewAngle
        self.writingDirection = writingDirection
        self.text = text
    }
}

/// Orientation and script detection (OSD) result.
public struct OrientationGuess: Sendable, Equatable {
    /// Degrees the page must be turned clockwise to be upright: 0, 90, 180 or 270.
    public var rotation: Int
    public var confidence: Double
    /// The script most of the page's glyphs are in, as Tesseract's OSD names it (`Latin`, `Han`,
    /// `Japanese`, `Korean`, `Cyrillic`, `Devanagari`…), and how sure it is (OSD's own scale, 0 and up).
    public var script: String
    public var scriptConfidence: Double

    public init(rotation: Int, confidence: Double, script: String, scriptConfidence: Double = 0) {
        self.rotation = rotation
        self.confidence = confidence
        self.script = script
        self.scriptConfidence = scriptConfidence
    }
}
