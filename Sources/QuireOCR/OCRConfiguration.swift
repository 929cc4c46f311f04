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
    /// Pages larger than this are measured first (layout analysis on a small copy) and scaled so their
    /// median text line is about ``targetLineHeight`` pixels high: text in 12 MP photos is far larger
    /// than Tesseract needs (30% kept full accuracy on large text and cut recognition 3.6×), while
    /// small text keeps its resolution.
    public var textSizeProbePixels: Int
    /// The median text-line height (pixels) large pages are scaled to; Tesseract's LSTM reads lines
    /// normalised to 36 px, a little above that keeps every stroke.
    public var targetLineHeight: Double
    /// The smallest scale text-size probing may choose in `text` mode. Sparse text in a photo (a sign
    /// with a small caption) has no typical line: its median is the large text, and scaling to it
    /// lost half the small words at ×0.2. Document pages keep the full range (down to ×0.2).
    public var minimumSparseTextScale: Double
    /// The resolution assumed when a file declares none or an implausible one.
    public var fallbackDPI: Int
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
        targetLineHeight: Double = 40,
        minimumSparseTextScale: Double = 0.5,
        fallbackDPI: Int = 300,
        enginesPerThread: Int = 3
    ) {
        self.dataPath = dataPath
        self.defaultLanguages = defaultLanguages
        self.maxImageBytes = maxImageBytes
        self.maxPixels = maxPixels
        self.maxPages = maxPages
        self.maxRecognitionPixels = maxRecognitionPixels
        self.textSizeProbePixels = textSizeProbePixels
        self.targetLineHeight = targetLineHeight
        self.minimumSparseTextScale = minimumSparseTextScale
        self.fallbackDPI = fallbackDPI
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
    }
}
