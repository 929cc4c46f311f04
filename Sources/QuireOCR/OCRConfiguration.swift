import Foundation
import QuireSupport

/// Limits and defaults of the OCR worker, every default in one place.
public struct OCRConfiguration: Sendable, Equatable {
    /// Where the `*.traineddata` packs are (`QUIRE_TESSDATA`; Debian's path by default).
    public var dataPath: String
    /// Languages when a request names none.
    public var defaultLanguages: [String]
    /// The largest image file accepted (bytes).
    public var maxImageBytes: Int
    /// The most pixels one page may have, read from the header before decoding (decompression bombs).
    public var maxPixels: Int
    /// The most pages one request may ask to read.
    public var maxPages: Int
    /// Pages larger than this are always scaled down to it for recognition.
    public var maxRecognitionPixels: Int
    /// Pages larger than this are measured on a reduced copy of about this many pixels (the glyph
    /// heights that decide the scale need no more).
    public var textSizeProbePixels: Int
    /// Scale pages for the size of their text, measured from the glyphs (not from the declared dpi,
    /// which phones and screenshots do not set and fax-like scans set wrongly).
    public var textScaling: Bool
    /// The median glyph height (pixels) pages with small or large text are scaled to.
    public var targetGlyphHeight: Double
    /// Pages whose median glyph is lower than this are enlarged to ``targetGlyphHeight``.
    public var smallGlyphHeight: Double
    /// Pages whose median glyph is higher than this are reduced to ``targetGlyphHeight`` (not in
    /// `text` mode): 12 MP photos of large print read as well at a third of the size, 3× faster.
    public var largeGlyphHeight: Double
    /// The largest enlargement.
    public var maxUpscale: Double
    /// In `document` mode, read only the box around the text when it leaves out a fifth of the page
    /// or more (a receipt on an A4 scan): fewer pixels to read, no specks in the margins.
    public var cropToText: Bool
    /// Find and correct skewed text lines (Leptonica), up to ``maxSkew`` degrees either way.
    public var deskew: Bool
    public var maxSkew: Double
    /// Skews smaller than this (degrees) are left alone: Tesseract reads them as they are.
    public var minSkew: Double
    /// Leptonica's confidence below which a measured skew is not trusted.
    public var skewConfidence: Double
    /// Detect quarter turns (OSD) in `document` mode when the request does not say.
    public var detectOrientation: Bool
    /// OSD's confidence needed to try a turn (the turned page is read again and kept only when it
    /// reads with more confidence).
    public var orientationConfidence: Double
    /// Pages whose words are read with a mean confidence (0…1) below this are checked for quarter
    /// turns; upright pages read above it and pay nothing for orientation detection.
    public var orientationCheckBelow: Double
    /// With `autoOrientation: true`, OSD's confidence at which its turn is applied before reading,
    /// without reading twice.
    public var trustedOrientationConfidence: Double
    /// How much more confidently (0…1) a turned page must read to be kept turned.
    public var orientationGain: Double
    /// Even out uneven light (background normalisation) when the paper's brightness varies by at
    /// least ``unevenLightSpread`` (0…255) across the page.
    public var evenLight: Bool
    public var unevenLightSpread: Int
    /// Darken faint print (faded thermal receipts): when the ink's median grey level is at least
    /// ``faintInkLevel`` (0 black … 255 white), the page goes through the tone curve
    /// `in^inkExponent` before it is scaled, so thin light strokes survive Tesseract's binarisation.
    public var darkenFaintInk: Bool
    public var faintInkLevel: Int
    public var inkExponent: Double
    /// In `document` mode, read single-column pages as one block (psm 6) and keep the full layout
    /// analysis (psm 3) for pages with columns side by side.
    public var chooseSegmentation: Bool
    /// Pages deskewed by less than this (degrees) keep the column measurement made before the
    /// deskew; more, and they get the full layout analysis.
    public var columnsKeptBelowSkew: Double
    /// In `document` mode, drop the words Tesseract makes of rules, borders and specks (no letter
    /// or digit, or at most two read with less than ``noiseConfidence``).
    public var dropNoiseWords: Bool
    public var noiseConfidence: Double
    /// Tesseract parameters set on every engine. By default `tessedit_do_invert=0`: Tesseract then
    /// does not read every line a second time inverted (white on black), which cost 5–15% of the time
    /// on the receipts and found nothing there (`QUIRE_TESSERACT_VARIABLES=name=value,…` adds or overrides).
    public var engineVariables: [String: String]
    /// Engines kept per worker thread (one per language set).
    public var enginesPerThread: Int

    public init(
        dataPath: String = "/usr/share/tesseract-ocr/5/tessdata",
        defaultLanguages: [String] = ["eng"],
        maxImageBytes: Int = 40 << 20,
        maxPixels: Int = 60_000_000,
        maxPages: Int = 100,
        maxRecognitionPixels: Int = 16_000_000,
        textSizeProbePixels: Int = 3_000_000,
        textScaling: Bool = true,
        targetGlyphHeight: Double = 28,
        smallGlyphHeight: Double = 16,
        largeGlyphHeight: Double = 40,
        maxUpscale: Double = 4,
        cropToText: Bool = true,
        deskew: Bool = true,
        maxSkew: Double = 20,
        minSkew: Double = 0.3,
        skewConfidence: Double = 3,
        detectOrientation: Bool = true,
        orientationConfidence: Double = 0.3,
        orientationCheckBelow: Double = 0.5,
        orientationGain: Double = 0.1,
        trustedOrientationConfidence: Double = 1.5,
        evenLight: Bool = true,
        unevenLightSpread: Int = 60,
        darkenFaintInk: Bool = true,
        faintInkLevel: Int = 80,
        inkExponent: Double = 2,
        chooseSegmentation: Bool = true,
        columnsKeptBelowSkew: Double = 2,
        dropNoiseWords: Bool = true,
        noiseConfidence: Double = 0.5,
        engineVariables: [String: String] = ["tessedit_do_invert": "0"],
        enginesPerThread: Int = 3
    ) {
        self.dataPath = dataPath
        self.defaultLanguages = defaultLanguages
        self.maxImageBytes = maxImageBytes
        self.maxPixels = maxPixels
        self.maxPages = maxPages
        self.maxRecognitionPixels = maxRecognitionPixels
        self.textSizeProbePixels = textSizeProbePixels
        self.textScaling = textScaling
        self.targetGlyphHeight = targetGlyphHeight
        self.smallGlyphHeight = smallGlyphHeight
        self.largeGlyphHeight = largeGlyphHeight
        self.maxUpscale = maxUpscale
        self.cropToText = cropToText
        self.deskew = deskew
        self.maxSkew = maxSkew
        self.minSkew = minSkew
        self.skewConfidence = skewConfidence
        self.detectOrientation = detectOrientation
        self.orientationConfidence = orientationConfidence
        self.orientationCheckBelow = orientationCheckBelow
        self.orientationGain = orientationGain
        self.trustedOrientationConfidence = trustedOrientationConfidence
        self.evenLight = evenLight
        self.unevenLightSpread = unevenLightSpread
        self.darkenFaintInk = darkenFaintInk
        self.faintInkLevel = faintInkLevel
        self.inkExponent = inkExponent
        self.chooseSegmentation = chooseSegmentation
        self.columnsKeptBelowSkew = columnsKeptBelowSkew
        self.dropNoiseWords = dropNoiseWords
        self.noiseConfidence = noiseConfidence
        self.engineVariables = engineVariables
        self.enginesPerThread = enginesPerThread
    }

    public init(environment: [String: String]) throws(ConfigurationError) {
        self.init()
        let reader = EnvironmentReader(environment)
        if let v = reader.string("QUIRE_TESSDATA") { dataPath = v }
        if let v = reader.string("QUIRE_LANGUAGES") { defaultLanguages = v.split(separator: "+").map(String.init) }
        if let v = try reader.integer("QUIRE_MAX_IMAGE_BYTES", range: 1_024...(1 << 31)) { maxImageBytes = v }
        if let v = try reader.integer("QUIRE_MAX_PIXELS", range: 10_000...1_000_000_000) { maxPixels = v }
        if let v = try reader.integer("QUIRE_MAX_PAGES", range: 1...10_000) { maxPages = v }
        if let v = try reader.flag("QUIRE_OCR_TEXT_SCALING") { textScaling = v }
        if let v = try reader.number("QUIRE_OCR_TARGET_GLYPH_HEIGHT", range: 8...200) { targetGlyphHeight = v }
        if let v = try reader.number("QUIRE_OCR_SMALL_GLYPH_HEIGHT", range: 0...200) { smallGlyphHeight = v }
        if let v = try reader.number("QUIRE_OCR_LARGE_GLYPH_HEIGHT", range: 8...10_000) { largeGlyphHeight = v }
        if let v = try reader.flag("QUIRE_OCR_DESKEW") { deskew = v }
        if let v = try reader.flag("QUIRE_OCR_CROP") { cropToText = v }
        if let v = try reader.flag("QUIRE_OCR_ORIENTATION") { detectOrientation = v }
        if let v = try reader.flag("QUIRE_OCR_EVEN_LIGHT") { evenLight = v }
        if let v = try reader.integer("QUIRE_OCR_UNEVEN_LIGHT_SPREAD", range: 0...255) { unevenLightSpread = v }
        if let v = try reader.flag("QUIRE_OCR_FAINT_INK") { darkenFaintInk = v }
        if let v = try reader.integer("QUIRE_OCR_FAINT_INK_LEVEL", range: 0...255) { faintInkLevel = v }
        if let v = try reader.number("QUIRE_OCR_INK_EXPONENT", range: 1...4) { inkExponent = v }
        if let v = try reader.flag("QUIRE_OCR_CHOOSE_SEGMENTATION") { chooseSegmentation = v }
        if let v = try reader.flag("QUIRE_OCR_DROP_NOISE") { dropNoiseWords = v }
        if let v = reader.string("QUIRE_TESSERACT_VARIABLES") {
            for pair in v.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, !parts[0].isEmpty else {
                    throw ConfigurationError(source: "QUIRE_TESSERACT_VARIABLES", message: "'\(pair)' is not name=value")
                }
                engineVariables[parts[0]] = parts[1]
            }
        }
    }
}
