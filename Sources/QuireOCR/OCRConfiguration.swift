import Foundation
import QuireRecognition
import QuireSupport
import QuireWire
import SceneText

/// Limits and defaults of the OCR worker, every default in one place.
public struct OCRConfiguration: Sendable, Equatable {
    /// Where the `*.traineddata` packs are (`QUIRE_TESSDATA`; Debian's path by default).
    public var dataPath: String = "/usr/share/tesseract-ocr/5/tessdata"
    /// What a request that names no language is read in: `auto`, every installed pack, detected page by
    /// page (docs/ocr.md "Languages"); a list, those, detected among them, the first read first; one
    /// language, every page in it.
    public var defaultLanguages: [String] = ["auto"]
    /// Without a hint, a language the first reading identifies on at least this share of a page's letters
    /// (percent) is read beside the page's main one (an Italian page with English lines: `ita+eng`).
    public var secondLanguageShare: Int = 20
    /// Without a hint, a first reading whose words' mean confidence is below this has its script
    /// detected from the picture (OSD) and is read again with that script's pack where it differs.
    public var scriptBelowConfidence: Double = 0.6
    /// ...and where OSD names the script with at least this confidence (its own scale: 0 and up).
    public var scriptConfidence: Double = 0.3
    /// The fewest glyphs orientation and script detection looks at before it answers (Tesseract's
    /// `min_characters_to_try`, 50 by default: more than a sign has).
    public var scriptMinGlyphs: Int = 10
    /// A reading in the languages found is kept unless its words' mean confidence is this much below
    /// the first reading's.
    public var languageKeepMargin: Double = 0.05
    /// A reading in another script is kept only where its text has at least this many bytes of letters
    /// (UTF-8: 20 Han or Devanagari letters, 30 Cyrillic) reliably in one of that script's languages.
    public var scriptMinLetterBytes: Int = 60
    /// ...and whose words' mean confidence is at least this: a wrong script's reading guesses.
    public var scriptKeepConfidence: Double = 0.6
    /// The largest image file accepted (bytes).
    public var maxImageBytes: Int = 40 << 20
    /// The most pixels one page may have, read from the header before decoding (decompression bombs).
    public var maxPixels: Int = 60_000_000
    /// The most pages one request may ask to read.
    public var maxPages: Int = 100
    /// The longest a PDF page may take to render for OCR (milliseconds); past it the page gets an error.
    public var pdfRenderTimeoutMs: Int = 30_000
    /// Pages larger than this are always scaled down to it for recognition.
    public var maxRecognitionPixels: Int = 16_000_000
    /// Pages larger than this are measured on a reduced copy of about this many pixels (the glyph
    /// heights that decide the scale need no more).
    public var textSizeProbePixels: Int = 3_000_000
    /// A page whose neighbouring pixels correlate less than this (``Image/neighbourCorrelation(step:)``)
    /// is random noise and is returned empty without being read; so is a page whose every pixel is
    /// alike. Measured on the text-size probe (0: never).
    public var maxNoiseCorrelation: Double = 0.1
    /// Scale pages for the size of their text, measured from the glyphs (not from the declared dpi,
    /// which phones and screenshots do not set and fax-like scans set wrongly).
    public var textScaling: Bool = true
    /// The median glyph height (pixels) pages with small or large text are scaled to.
    public var targetGlyphHeight: Double = 28
    /// Pages whose median glyph is lower than this are enlarged to ``targetGlyphHeight``.
    public var smallGlyphHeight: Double = 16
    /// Pages whose median glyph is higher than this are reduced to ``targetGlyphHeight`` (not in
    /// `text` mode): 12 MP photos of large print read as well at a third of the size, 3× faster.
    public var largeGlyphHeight: Double = 40
    /// The largest enlargement.
    public var maxUpscale: Double = 4
    /// Enlarging stops where the pixels to read (the text's box when the page is cropped to it, else
    /// the page) would pass this: Tesseract's layout analysis and its line recognizer both cost more
    /// with every pixel, so a full page of small print is enlarged less than a receipt.
    public var maxEnlargedPixels: Int = 8_000_000
    /// In `document` mode, read only the box around the text when it leaves out a fifth of the page
    /// or more (a receipt on an A4 scan): fewer pixels to read, no specks in the margins.
    public var cropToText: Bool = true
    /// Find and correct skewed text lines (Leptonica), up to ``maxSkew`` degrees either way.
    public var deskew: Bool = true
    public var maxSkew: Double = 20
    /// Skews smaller than this (degrees) are left alone: Tesseract reads them as they are.
    public var minSkew: Double = 0.3
    /// Leptonica's confidence below which a measured skew is not trusted.
    public var skewConfidence: Double = 3
    /// Detect quarter turns (OSD) in `document` mode when the request does not say.
    public var detectOrientation: Bool = true
    /// OSD's confidence needed to try a turn (the turned page is read again and kept only when it
    /// reads with more confidence).
    public var orientationConfidence: Double = 0.3
    /// Pages whose words are read with a mean confidence (0…1) below this are checked for quarter
    /// turns; upright pages read above it and pay nothing for orientation detection.
    public var orientationCheckBelow: Double = 0.5
    /// With `autoOrientation: true`, OSD's confidence at which its turn is applied before reading,
    /// without reading twice.
    public var trustedOrientationConfidence: Double = 1.5
    /// Pages on which at least this share of the thin, full-size glyphs lie on their side (0…1) are
    /// shown to orientation detection before they are read: a page turned by a quarter (upright
    /// pages stay under 0.65, receipts' dashes included; turned ones measure 0.98 and more).
    public var sidewaysGlyphs: Double = 0.85
    /// How much more confidently (0…1) a turned page must read to be kept turned; it must also read at
    /// least at ``orientationCheckBelow``, as an upright page does (real turned pages kept read at 0.96).
    public var orientationGain: Double = 0.1
    /// Even out uneven light (background normalisation) when the paper's brightness varies by at
    /// least ``unevenLightSpread`` (0…255) across the page.
    public var evenLight: Bool = true
    public var unevenLightSpread: Int = 60
    /// Darken the ink before reading documents: the grey page goes through the tone curve
    /// `in^inkExponent` (levels as 0…1) after the light is evened out, so thin, light strokes (faded thermal
    /// receipts, JPEG-softened scans) survive Tesseract's binarisation; white and black stay as they
    /// are. Pages whose paper is grainy or grey (its darkest tenth below ``darkenInkMinPaper``,
    /// 0 black … 255 white) are left alone: the curve would turn that paper as dark as the print.
    public var darkenInk: Bool = true
    public var darkenInkMinPaper: Int = 200
    public var inkExponent: Double = 3
    /// Paper greyer than this (its darkest tenth, 0…255) is first stretched to white: the curve then
    /// starts from the paper's own level, and its grain, everything lighter than that, turns white.
    /// 256 stretches every page, 0 none (the receipts: word error −0.9 at 240; at 250, 5 dates lost).
    public var whitenPaperBelow: Int = 240
    /// In `document` mode, let the page's regions choose its layout (``LayoutChoice``): one block
    /// where the text is one column everywhere (a receipt, a letter, a form), the engine's full layout
    /// analysis where columns stand side by side or a ruled grid holds the text. Off, every document is
    /// read with the full analysis, as the `tesseract` CLI reads it.
    public var chooseLayout: Bool = true
    /// What the layout choice counts as a column and as a grid.
    public var layoutChoice = LayoutChoice()
    /// In `document` mode, drop the words Tesseract makes of rules, borders and specks (no letter
    /// or digit, or at most two read with less than ``noiseConfidence``).
    public var dropNoiseWords: Bool = true
    public var noiseConfidence: Double = 0.5
    /// In `document` mode, change the few amounts written with the page's other decimal separator
    /// (`33,90` among `12.50`s) to the one it uses (``DecimalSeparators``).
    public var unifyDecimals: Bool = true
    /// In `document` mode, split the words Tesseract runs together across an empty cell of a
    /// monospaced line (`TOTALGST` on a receipt; ``MonospaceSpaces``). Needs the symbol level.
    public var monospaceSpaces: Bool = true
    /// In `document` mode, split the words Tesseract runs together where a lower-case letter meets a
    /// capital across a gap (`TotalGST`; ``CaseSpaces``). Needs the symbol level.
    public var caseSpaces: Bool = true
    /// In `document` mode, make round the bracket pairs Tesseract reads as two kinds within a word
    /// (`Tax($}`; ``Brackets``).
    public var matchBrackets: Bool = true
    /// Keep the text lines Tesseract cuts out for its line recognizer uncompressed instead of its PNG
    /// round trip (`CTesseractShim.h`): the same text, with about 8% less CPU time on the receipts.
    public var rawLineImages: Bool = true
    /// Tesseract parameters set on every engine (`QUIRE_TESSERACT_VARIABLES=name=value,…` adds or
    /// overrides). By default `tessedit_do_invert=0`: Tesseract then does not read every line a second
    /// time inverted (white on black), which cost 5–15% of the time on the receipts and found nothing
    /// there; and `textord_all_prop=1`: its layout analysis skips the fixed-pitch tests of every row
    /// (the line recognizer finds the spaces itself), 3–5% of the CPU time on the receipts, and not
    /// one of the 120 read differently.
    public var engineVariables: [String: String] = ["tessedit_do_invert": "0", "textord_all_prop": "1"]
    /// Engines kept per worker thread (one per language set).
    public var enginesPerThread: Int = 3
    /// The scene engine's models (`det.onnx`, `rec.onnx`; scripts/install-onnxruntime puts them here).
    public var sceneModels: String = "/opt/quire-onnxruntime/models"
    /// ONNX Runtime's operator threads for the scene models: one pool in the process, shared by every
    /// worker thread's models; 0: one per core.
    public var sceneThreads: Int = 0
    /// The scene engine replaces a word read as no word of the language's list (Debian's `wamerican`
    /// and the like in /usr/share/dict) by the likeliest word of the list near it...
    public var sceneWords: Bool = true
    /// ...when that word is at most this much less likely than the reading (natural log).
    public var sceneWordTolerance: Double = 5
    /// The scene detector sees a picture enlarged until its shorter side has this many pixels (at most
    /// four times; ``SceneEngine/Settings/detectorMinSide``).
    public var sceneDetectorSide: Int = SceneEngine.Settings().detectorMinSide
    /// The engine of a request that names none.
    public var defaultEngine: OCRRequest.Engine = .auto
    /// `auto` shows a page to the scene engine too when Tesseract read fewer than this many words with
    /// a confidence of 0.8 or more: a photo (signs, handwriting, whiteboards, screens read badly) rather
    /// than a page. The real receipts and documents have at least 11; the photos that read badly, at most 3.
    public var sceneBelowConfidentWords: Int = 10
    /// ...and when those are fewer than this share of its words: a small page with one smeared line
    /// (4 of 5 words read confidently) stays Tesseract's; of the photos it read badly, at most half.
    public var sceneBelowConfidentShare: Double = 0.6
    /// ...and keeps the scene engine's reading when its mean word confidence is this much higher (0…1).
    public var sceneGain: Double = 0.2
    /// ...and, where the scene engine finds no text at all, returns none when Tesseract's words were read
    /// with a mean confidence below this: a photo without text gives an empty result, not noise.
    public var noTextBelow: Double = 0.5


    /// The post-edits of a `document` page, in the order they run (see each type).
    public var pageEdits: [any PageEdit] {
        var edits: [any PageEdit] = []
        if dropNoiseWords { edits.append(NoiseWords(maxConfidence: noiseConfidence)) }
        if unifyDecimals { edits.append(Decimals()) }
        if matchBrackets { edits.append(BracketPairs()) }
        if monospaceSpaces || caseSpaces { edits.append(WordSpaces(monospace: monospaceSpaces, caseChange: caseSpaces)) }
        return edits
    }

    /// Every default as declared above.
    public init() {}

    /// The defaults, overridden by the `QUIRE_*` variables of ``settings`` where set. Values that do not
    /// parse are reported, not ignored.
    public init(environment: [String: String]) throws(ConfigurationError) {
        self.init()
        try Self.settings.applyEnvironment(environment, to: &self)
    }

    /// What `quire worker ocr` and `quire up` let their users set, each setting declared once.
    public static let settings: [Setting<OCRConfiguration>] = [
        Setting(\.dataPath, flag: "tessdata", variable: "QUIRE_TESSDATA", .string("DIR"), help: "the folder of the *.traineddata language packs"),
        Setting(\.defaultLanguages, flag: "languages", variable: "QUIRE_LANGUAGES", .list(separator: "+", placeholder: "L"),
                help: "what a request that names no language is read in: auto (detected among every installed pack), eng+ita (detected among these), eng (always English)"),
        Setting(\.secondLanguageShare, variable: "QUIRE_OCR_SECOND_LANGUAGE_SHARE", .integer(1...100),
                help: "without a hint, a language found on at least this percentage of a page is read beside its main one"),
        Setting(\.scriptBelowConfidence, variable: "QUIRE_OCR_SCRIPT_BELOW_CONFIDENCE", .number(0...1.01),
                help: "without a hint, a first reading less confident than this has its script detected from the picture"),
        Setting(\.scriptConfidence, variable: "QUIRE_OCR_SCRIPT_CONFIDENCE", .number(0...100),
                help: "...and is read again with that script's pack where OSD names it with at least this confidence"),
        Setting(\.languageKeepMargin, variable: "QUIRE_OCR_LANGUAGE_KEEP_MARGIN", .number(0...1),
                help: "a reading in the languages found is kept unless its mean confidence is this much below the first reading's"),
        Setting(\.scriptMinLetterBytes, variable: "QUIRE_OCR_SCRIPT_MIN_LETTER_BYTES", .integer(0...100_000),
                help: "a reading in another script is kept only where this many bytes of its letters are reliably in one of its languages"),
        Setting(\.scriptKeepConfidence, variable: "QUIRE_OCR_SCRIPT_KEEP_CONFIDENCE", .number(0...1),
                help: "...and only where its words' mean confidence is at least this"),
        Setting(\.scriptMinGlyphs, variable: "QUIRE_OCR_SCRIPT_MIN_GLYPHS", .integer(1...1_000),
                help: "the fewest glyphs script detection looks at before it answers"),
        Setting(\.maxImageBytes, variable: "QUIRE_MAX_IMAGE_BYTES", .integer(1_024...(1 << 31)), help: "the largest image file accepted (bytes)"),
        Setting(\.maxPixels, variable: "QUIRE_MAX_PIXELS", .integer(10_000...1_000_000_000), help: "the largest page in pixels, checked before decoding"),
        Setting(\.maxPages, variable: "QUIRE_MAX_PAGES", .integer(1...10_000), help: "the most pages one request may read (PDF, multi-page TIFF)"),
        Setting(\.pdfRenderTimeoutMs, variable: "QUIRE_PDF_RENDER_TIMEOUT_MS", .integer(100...600_000),
                help: "the longest a PDF page may take to render for OCR; past it the page gets an error and the others are read"),
        Setting(\.textScaling, variable: "QUIRE_OCR_TEXT_SCALING", .onOff,
                help: "scale pages for their glyphs' height"),
        Setting(\.targetGlyphHeight, variable: "QUIRE_OCR_TARGET_GLYPH_HEIGHT", .number(8...200), help: "the glyph height (px) small and large text is scaled to"),
        Setting(\.smallGlyphHeight, variable: "QUIRE_OCR_SMALL_GLYPH_HEIGHT", .number(0...200), help: "glyphs lower than this are enlarged (at most ×4)"),
        Setting(\.maxEnlargedPixels, variable: "QUIRE_OCR_MAX_ENLARGED_PIXELS", .integer(100_000...1_000_000_000),
                help: "enlarging small text stops where the pixels to read would pass this"),
        Setting(\.largeGlyphHeight, variable: "QUIRE_OCR_LARGE_GLYPH_HEIGHT", .number(8...10_000), help: "glyphs higher than this are reduced (not in `text` mode)"),
        Setting(\.cropToText, variable: "QUIRE_OCR_CROP", .onOff, help: "read documents cut to the box around their text"),
        Setting(\.deskew, variable: "QUIRE_OCR_DESKEW", .onOff, help: "find and correct skew up to 20°"),
        Setting(\.evenLight, variable: "QUIRE_OCR_EVEN_LIGHT", .onOff, help: "normalise the background of unevenly lit pages"),
        Setting(\.unevenLightSpread, variable: "QUIRE_OCR_UNEVEN_LIGHT_SPREAD", .integer(0...255),
                help: "the paper-brightness spread (0…255) that counts as uneven"),
        Setting(\.darkenInk, variable: "QUIRE_OCR_INK", .onOff, help: "darken the ink (tone curve) so faint strokes survive binarisation"),
        Setting(\.darkenInkMinPaper, variable: "QUIRE_OCR_INK_MIN_PAPER", .integer(0...255),
                help: "darken only pages whose paper's darkest tenth is at least this grey (0 black…255)"),
        Setting(\.inkExponent, variable: "QUIRE_OCR_INK_EXPONENT", .number(1...4), help: "the tone curve's exponent (1: unchanged)"),
        Setting(\.whitenPaperBelow, variable: "QUIRE_OCR_WHITEN_PAPER_BELOW", .integer(0...256),
                help: "before darkening, stretch paper greyer than this (0…255) to white (0: never)"),
        Setting(\.chooseLayout, variable: "QUIRE_OCR_LAYOUT", .onOff,
                help: "read one-column documents as one block and the rest with the full layout analysis (off: the full analysis always)"),
        Setting(\.layoutChoice.minColumnWidth, variable: "QUIRE_OCR_MIN_COLUMN_WIDTH", .number(0...1_000),
                help: "text side by side counts as columns from this many line heights wide"),
        Setting(\.layoutChoice.minGridRule, variable: "QUIRE_OCR_MIN_GRID_RULE", .number(0...1_000),
                help: "a vertical rule between text counts as a table's grid from this many line heights long"),
        Setting(\.layoutChoice.minCuttingRule, variable: "QUIRE_OCR_MIN_CUTTING_RULE", .number(0...2),
                help: "vertical rules this share of the page's height long, with text on both sides, cut it into columns read in turn (above 1: never)"),
        Setting(\.layoutChoice.minRuledColumnWidth, variable: "QUIRE_OCR_MIN_RULED_COLUMN_WIDTH", .number(0...1_000),
                help: "long rules cut only where every column between them is this many line heights wide (narrower: a table's grid)"),
        Setting(\.detectOrientation, variable: "QUIRE_OCR_ORIENTATION", .onOff, help: "check quarter turns of documents that read with low confidence"),
        Setting(\.sidewaysGlyphs, variable: "QUIRE_OCR_SIDEWAYS_GLYPHS", .number(0...1.01),
                help: "detect the orientation before reading where this share of thin glyphs lies on its side (above 1: never)"),
        Setting(\.maxNoiseCorrelation, variable: "QUIRE_OCR_NOISE_CORRELATION", .number(0...1),
                help: "return a page empty, unread, where neighbouring pixels correlate less than this (random noise; 0: never)"),
        Setting(\.dropNoiseWords, variable: "QUIRE_OCR_DROP_NOISE", .onOff, help: "drop the words made of rules, borders and specks"),
        Setting(\.unifyDecimals, variable: "QUIRE_OCR_DECIMALS", .onOff,
                help: "give a page's few odd amounts (33,90 among 12.50s) the decimal separator it uses"),
        Setting(\.monospaceSpaces, variable: "QUIRE_OCR_MONOSPACE_SPACES", .onOff,
                help: "split words run together across an empty cell of a monospaced line (TOTALGST on a receipt)"),
        Setting(\.caseSpaces, variable: "QUIRE_OCR_CASE_SPACES", .onOff,
                help: "split words run together where a lower-case letter meets a capital across a gap (TotalGST)"),
        Setting(\.matchBrackets, variable: "QUIRE_OCR_BRACKETS", .onOff,
                help: "make round a word's bracket pair read as two kinds (Tax($} on a receipt)"),
        Setting(\.rawLineImages, variable: "QUIRE_OCR_RAW_LINE_IMAGES", .onOff,
                help: "skip Tesseract's PNG round trip of each text line it reads (the same text, less time)"),
        Setting(\.sceneModels, flag: "scene-models", variable: "QUIRE_SCENE_MODELS", .string("DIR"),
                help: "the scene engine's models (det.onnx, rec.onnx) for signs, screens, whiteboards and handwriting"),
        Setting(\.sceneThreads, variable: "QUIRE_SCENE_THREADS", .integer(0...64),
                help: "ONNX Runtime's threads for the scene models, one pool shared by every worker thread of the process (0: one per core)"),
        Setting(\.sceneWords, variable: "QUIRE_SCENE_WORDS", .onOff,
                help: "the scene engine reads a word spelled as no word of the language's list (/usr/share/dict) as the likeliest word of the list near it"),
        Setting(\.sceneWordTolerance, variable: "QUIRE_SCENE_WORD_TOLERANCE", .number(0...100),
                help: "how much less likely (natural log) than the reading the word of the list may be"),
        Setting(\.sceneDetectorSide, variable: "QUIRE_SCENE_DETECTOR_SIDE", .integer(32...2000),
                help: "the scene detector sees a picture enlarged until its shorter side has this many pixels (at most 4 times)"),
        Setting(\.defaultEngine, variable: "QUIRE_OCR_ENGINE", .choice(noun: "engine", placeholder: "E"),
                help: "the engine of a request that names none: auto (chosen by the picture), tesseract or scene"),
        Setting(\.sceneBelowConfidentWords, variable: "QUIRE_OCR_SCENE_BELOW_WORDS", .integer(0...100_000),
                help: "auto reads a page with the scene engine too when Tesseract read fewer words than this with confidence 0.8 or more (0: never)"),
        Setting(\.sceneBelowConfidentShare, variable: "QUIRE_OCR_SCENE_BELOW_SHARE", .number(0...1.01),
                help: "...and when those are fewer than this share of its words"),
        Setting(\.sceneGain, variable: "QUIRE_OCR_SCENE_GAIN", .number(0...1),
                help: "auto keeps the scene engine's reading when its mean confidence is this much higher than Tesseract's"),
        Setting(\.noTextBelow, variable: "QUIRE_OCR_NO_TEXT_BELOW", .number(0...1.01),
                help: "auto returns no text where the scene engine finds none and Tesseract's mean confidence is below this"),
        Setting(variable: "QUIRE_TESSERACT_VARIABLES", .engineVariables,
                help: "Tesseract parameters, `name=value,…` (added to or overriding the default)",
                set: { configuration, variables in configuration.engineVariables.merge(variables) { _, new in new } },
                get: { $0.engineVariables }),
    ]
}

extension SettingValue where Value == [String: String] {
    /// Tesseract parameters: `name=value,name=value`.
    static var engineVariables: Self {
        Self(placeholder: "NAME=VALUE,…", expectation: "name=value pairs separated by commas",
             parse: { text in
                 var variables: [String: String] = [:]
                 for pair in text.split(separator: ",") {
                     let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                     guard parts.count == 2, !parts[0].isEmpty else { return nil }
                     variables[parts[0]] = parts[1]
                 }
                 return variables
             },
             format: { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") })
    }
}
