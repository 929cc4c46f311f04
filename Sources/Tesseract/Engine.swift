internal import CTesseract
internal import CTesseractShim
internal import CTesseractWalk
import Imaging
import QuireRecognition
#if canImport(Glibc)
import Glibc
#endif

/// How Tesseract segments the page (its PSM numbers): what each ``Layout`` becomes.
enum PageSegmentation: Int32, Sendable {
    /// Fully automatic layout analysis: dense documents.
    case auto = 3
    /// One uniform block of text.
    case singleBlock = 6
    /// One text line.
    case singleLine = 7
    /// As much text as possible in no particular order: signs and photos.
    case sparse = 11

    init(_ layout: Layout) {
        switch layout {
        case .auto, .page: self = .auto
        case .singleBlock: self = .singleBlock
        case .singleLine: self = .singleLine
        case .sparse: self = .sparse
        }
    }
}

/// One Tesseract engine (`TessBaseAPI`), initialised once for a language set and reused.
///
/// Not `Sendable`: one engine per worker thread, created on it. Init costs ~60 ms; that is why the
/// worker keeps engines instead of starting the CLI per image.
public final class Engine: TextRecognizer, OrientationDetector {
    private let handle: OpaquePointer
    public let languages: String
    public let dataPath: String

    /// - Parameters:
    ///   - languages: Tesseract codes joined with `+`, such as `eng+deu`.
    ///   - variables: Tesseract parameters set while the engine loads, so that the ones read only
    ///     then (`load_system_dawg`, `load_freq_dawg`, …) take effect too.
    public init(dataPath: String, languages: String, variables: [(name: String, value: String)] = []) throws(RecognitionError) {
        guard let handle = TessBaseAPICreate() else { throw RecognitionError(.initFailed, "TessBaseAPICreate failed") }
        self.handle = handle
        self.languages = languages
        self.dataPath = dataPath
        var names = variables.map { strdup($0.name) }
        var values = variables.map { strdup($0.value) }
        defer { (names + values).forEach { free($0) } }
        let rc = TessBaseAPIInit4(handle, dataPath, languages, OEM_LSTM_ONLY, nil, 0, &names, &values, variables.count, 0)
        if rc != 0 {
            TessBaseAPIDelete(handle)
            throw RecognitionError(.initFailed, "Tesseract could not load '\(languages)' from \(dataPath)")
        }
        // Quire sets the resolution itself; this silences "Estimating resolution" chatter per page.
        _ = TessBaseAPISetVariable(handle, "debug_file", "/dev/null")
    }

    deinit {
        TessBaseAPIEnd(handle)
        TessBaseAPIDelete(handle)
    }

    public static var version: String { String(cString: TessVersion()) }

    public var engineName: String { "tesseract \(Self.version)" }

    /// The image whose layout analysis Tesseract holds (`regions(of:)`), until anything else is read;
    /// held so that it cannot be freed and another image take its place meanwhile.
    private var analysed: Image?

    /// Whether this engine keeps Tesseract's line images uncompressed while it recognises
    /// (`CTesseractShim.h`). The text, boxes and confidences are the same either way; only the time
    /// differs. It has effect only where the interposed `pixWriteMem` is bound (``lineImageShimBound``).
    public var rawLineImages = true

    /// Whether a page without right-to-left words is walked left to right (`CTesseractWalk.h`): the
    /// same elements, texts, boxes and confidences as Tesseract's reading-order iterator gives, in
    /// time linear in the words instead of quadratic. Off, every page takes the reading-order walk
    /// (tests compare the two).
    public var leftToRightWalk = true

    /// How many pages this engine has read another way after ``regions(of:)`` by segmenting them again
    /// from the binary image the analysis started from, instead of thresholding them again (tests).
    public private(set) var resegmentedPages = 0

    /// Sets one of the patched engine's switches (a C function taking 1 or 0 and returning whether
    /// the patched code runs now, or -1 where the linked Tesseract has no such switch).
    private static func flip(_ set: (Int32) -> Int32, _ on: Bool) -> Bool? {
        let state = set(on ? 1 : 0)
        return state < 0 ? nil : state == 1
    }

    /// Switches the patched engine's AVX2 activations on or off for every engine in the process: a
    /// switch for tests, which compare them with the scalar loops that machines without AVX2 run.
    /// Returns whether they run now (on, and the processor has AVX2), or nil when the linked Tesseract
    /// has no such switch (Debian's 5.3, which has no AVX2 activations at all).
    @discardableResult
    public static func setAVX2Activations(_ on: Bool) -> Bool? {
        Self.flip(quire_avx2_activations, on)
    }

    /// Switches the patched engine's VNNI kernels for its int8 matrix products on or off for every
    /// engine in the process: a switch for tests, which compare them with the AVX2 kernels that
    /// processors without AVX512-VNNI run. Returns whether they run now (on, and the processor has
    /// them), or nil when the linked Tesseract has no such switch (Debian's 5.3).
    @discardableResult
    public static func setVNNI(_ on: Bool) -> Bool? {
        Self.flip(quire_vnni, on)
    }

    /// Switches the patched engine's line-finding openings by doubling on or off (off: Leptonica's
    /// `pixOpenBrick`, one rasterop per pixel of the brick) for every engine in the process: a switch
    /// for tests, which compare the two. Returns whether they run now, or nil when the linked Tesseract
    /// has no such switch (Debian's 5.3).
    @discardableResult
    public static func setDoublingOpenings(_ on: Bool) -> Bool? {
        Self.flip(quire_doubling_openings, on)
    }

    /// Switches the patched engine's class pruner that sums in lanes on or off (off: the loop feature by
    /// feature) for every engine in the process: a switch for tests, which compare the two. The class
    /// pruner is the legacy classifier's first step, which orientation and script detection runs on
    /// every glyph it looks at. Returns whether it runs now, or nil when the linked Tesseract has no
    /// such switch (Debian's 5.3).
    @discardableResult
    public static func setLaneClassPruner(_ on: Bool) -> Bool? {
        Self.flip(quire_lane_class_pruner, on)
    }

    /// Switches the patched engine's quick histogram and one-channel thresholding on or off (off: the
    /// loops pixel by pixel) for every engine in the process: a switch for tests, which compare the
    /// two. Tesseract binarises every image it is given with them (Otsu's threshold from the histogram),
    /// for reading, for the layout analysis and for orientation and script detection. Returns whether
    /// they run now, or nil when the linked Tesseract has no such switch (Debian's 5.3).
    @discardableResult
    public static func setQuickThreshold(_ on: Bool) -> Bool? {
        Self.flip(quire_quick_threshold, on)
    }

    /// Switches the patched engine's count of a rectangle's pixels where they lie on or off (off: the
    /// rectangle copied into an image of its own and counted there) for every engine in the process: a
    /// switch for tests, which compare the two. The layout analysis counts the pixels of its picture
    /// mask between and beside text partitions to decide what is text and what picture. Returns whether
    /// it runs now, or nil when the linked Tesseract has no such switch (Debian's 5.3).
    @discardableResult
    public static func setCountInPlace(_ on: Bool) -> Bool? {
        Self.flip(quire_count_in_place, on)
    }

    /// Switches the patched engine's row pointers in the network's `Convolve` and `Maxpool` layers on or
    /// off (off: the array's per-element accessors and `StrideMap` indices) for every engine in the
    /// process: a switch for tests, which compare the two. Every line the engine reads passes through
    /// both layers (its first 3 × 3 neighbourhoods and their pooling). Returns whether they run now, or
    /// nil when the linked Tesseract has no such switch (Debian's 5.3).
    @discardableResult
    public static func setNetworkRows(_ on: Bool) -> Bool? {
        Self.flip(quire_network_rows, on)
    }

    /// Switches the patched engine's fast paths over plain rows on or off (off: pixel by pixel) where it
    /// traces the outlines of a page's connected components, for every engine in the process: a switch
    /// for tests, which compare the two. Every layout analysis and every segmentation for reading
    /// traces them. Returns whether they run now, or nil when the linked Tesseract has no such switch
    /// (Debian's 5.3).
    @discardableResult
    public static func setEdgeRuns(_ on: Bool) -> Bool? {
        Self.flip(quire_edge_runs, on)
    }

    /// Switches the patched engine's quick check for boxes without picture pixels on or off (off:
    /// Leptonica's scan of each box, column by column) for every engine in the process: a switch for
    /// tests, which compare the two. The layout analysis asks it twice for each blob where it projects
    /// the page's text lines. Returns whether it runs now, or nil when the linked Tesseract has no such
    /// switch (Debian's 5.3).
    @discardableResult
    public static func setEmptyBoxCheck(_ on: Bool) -> Bool? {
        Self.flip(quire_empty_box_check, on)
    }

    /// Switches on or off, for every engine in the process, the patched engine's copy of the page's
    /// binary image that a page read as one block after ``regions(of:)`` is segmented from again
    /// (off: the page is given to the engine again and thresholded again): a switch for tests, which
    /// compare the two. Returns whether the copy is kept now, or nil when the linked Tesseract has no
    /// such switch (Debian's 5.3).
    @discardableResult
    public static func setKeepPageBinary(_ on: Bool) -> Bool? {
        Self.flip(quire_keep_page_binary, on)
    }

    /// The layout analysis's count of a box's black pixels in a 1-bit `mask` (Tesseract's coordinates:
    /// y up; the box clipped to `imageBox`, both turned by `rotation`, a unit vector at a multiple of a
    /// quarter turn, into the mask's frame), as the picture mask is counted; for tests, which compare
    /// the count in place (``setCountInPlace(_:)``) with the copy's. nil when the linked Tesseract has
    /// no such function (Debian's 5.3).
    public static func countInRotatedBox(_ mask: Image, box: (left: Int, bottom: Int, right: Int, top: Int),
                                         imageBox: (left: Int, bottom: Int, right: Int, top: Int), rotation: (x: Float, y: Float)) -> Int? {
        let count = quire_count_in_rotated_box(UnsafeMutablePointer(mask.unsafePix), Int32(box.left), Int32(box.bottom), Int32(box.right), Int32(box.top),
                                               Int32(imageBox.left), Int32(imageBox.bottom), Int32(imageBox.right), Int32(imageBox.top),
                                               rotation.x, rotation.y)
        return count < 0 ? nil : Int(count)
    }

    /// Whether the interposed `pixWriteMem` is the one Tesseract's calls reach (tests check it, so that
    /// a linker change that drops it is noticed).
    public static var lineImageShimBound: Bool { quire_raw_line_images_interposed() != 0 }

    /// Language packs installed in `dataPath` (file names `*.traineddata`).
    public static func installedLanguages(dataPath: String) -> [String] {
        guard let dir = opendir(dataPath) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasSuffix(".traineddata") { names.append(String(name.dropLast(".traineddata".count))) }
        }
        return names.sorted()
    }

    /// Sets one of Tesseract's parameters (`tessedit_do_invert`, `thresholding_method`, …) for every
    /// page this engine reads from now on. False when Tesseract does not know the name or the value.
    @discardableResult
    public func setVariable(_ name: String, _ value: String) -> Bool {
        TessBaseAPISetVariable(handle, name, value) != 0
    }

    /// Recognises `image` and returns the hierarchy down to words, and to symbols when `symbols` is
    /// true (walking every symbol costs time a reader that shows words does not need). The resolution
    /// must already be set on the image.
    public func recognize(_ image: Image, layout: Layout, symbols: Bool = true) throws(RecognitionError) -> RecognizedPage {
        let segmentation = PageSegmentation(layout)
        // The layout analysis `regions(of:)` made of this image is what the full analysis would make
        // again: Tesseract's Recognize reuses the blocks it found. Read another way, the page is
        // segmented again from the binary image that analysis was made from, where the engine kept it.
        if analysed === image, segmentation == .auto {
            // Nothing to load.
        } else if analysed === image, quire_resegment(handle, segmentation.rawValue) == 1 {
            resegmentedPages += 1
        } else {
            load(image, segmentation)
        }
        analysed = nil
        // Tesseract's line images skip their PNG round trip while it recognises (CTesseractShim.h).
        quire_raw_line_images(rawLineImages ? 1 : 0)
        let status = TessBaseAPIRecognize(handle, nil)
        quire_raw_line_images(0)
        guard status == 0 else {
            throw RecognitionError(.recognitionFailed, "Tesseract failed to recognise the image")
        }
        var page = RecognizedPage(width: image.width, height: image.height, blocks: [], deskewAngle: 0, writingDirection: "ltr", text: "")
        guard let iterator = TessBaseAPIGetIterator(handle) else {
            page.text = Self.taken(TessBaseAPIGetUTF8Text(handle))
            return page
        }
        defer { TessResultIteratorDelete(iterator) }
        // Tesseract's reading-order texts keep the gaps between words when preserve_interword_spaces is
        // set; the left-to-right iterator's do not, so that setting takes the reading-order walk.
        var preserveSpaces: Int32 = 0
        _ = TessBaseAPIGetBoolVariable(handle, "preserve_interword_spaces", &preserveSpaces)
        let walk = leftToRightWalk && preserveSpaces == 0 ? quire_walk_begin(UnsafeMutableRawPointer(iterator)) : nil
        defer { if let walk { quire_walk_end(walk) } }
        page.text = Self.taken(walk.map { quire_walk_page_text($0) } ?? TessBaseAPIGetUTF8Text(handle))
        let pageIterator = walk.map { OpaquePointer(quire_walk_page_iterator($0)) } ?? TessResultIteratorGetPageIterator(iterator)

        var orientation = ORIENTATION_PAGE_UP, direction = WRITING_DIRECTION_LEFT_TO_RIGHT, order = TEXTLINE_ORDER_TOP_TO_BOTTOM
        var deskew: Float = 0
        TessPageIteratorOrientation(pageIterator, &orientation, &direction, &order, &deskew)
        page.deskewAngle = Double(deskew) * 180 / .pi
        switch direction {
        case WRITING_DIRECTION_RIGHT_TO_LEFT: page.writingDirection = "rtl"
        case WRITING_DIRECTION_TOP_TO_BOTTOM: page.writingDirection = "ttb"
        default: page.writingDirection = "ltr"
        }

        func element(_ level: TessPageIteratorLevel) -> RecognizedElement {
            var l: Int32 = 0, t: Int32 = 0, r: Int32 = 0, b: Int32 = 0
            _ = TessPageIteratorBoundingBox(pageIterator, level, &l, &t, &r, &b)
            let raw = Int32(level.rawValue)
            let text = Self.taken(walk.map { quire_walk_text($0, raw) } ?? TessResultIteratorGetUTF8Text(iterator, level))
            let c = walk.map { quire_walk_confidence($0, raw) } ?? TessResultIteratorConfidence(iterator, level)
            var e = RecognizedElement(text: text, box: PixelBox(x: Int(l), y: Int(t), width: Int(r - l), height: Int(b - t)),
                                      confidence: c >= 0 ? min(1, Double(c) / 100) : nil, language: nil, baseline: nil, children: [])
            if level == RIL_WORD, let language = walk.map({ quire_walk_word_language($0) }) ?? TessResultIteratorWordRecognitionLanguage(iterator) {
                e.language = String(cString: language)
            }
            if level == RIL_TEXTLINE {
                var x1: Int32 = 0, y1: Int32 = 0, x2: Int32 = 0, y2: Int32 = 0
                if TessPageIteratorBaseline(pageIterator, level, &x1, &y1, &x2, &y2) != 0 {
                    e.baseline = (Int(x1), Int(y1), Int(x2), Int(y2))
                }
            }
            return e
        }

        // Walk symbol by symbol, opening a new element at each level where Tesseract says one begins.
        var blocks: [RecognizedElement] = []
        repeat {
            // ResultIterator::IsAtBeginningOf(line, paragraph or block) rewinds a copy of the iterator to
            // the start of the page and walks forward to the current line: O(words on the page) per
            // call (the left-to-right walk answers at once). Asked for every symbol, that made the
            // reading-order walk quadratic (~0.3-0.5 s per A4 page). A line can only begin where a word
            // begins, a paragraph or block only where a line begins, so ask in that order and only when
            // the answer can be yes.
            let wordStart = TessPageIteratorIsAtBeginningOf(pageIterator, RIL_WORD) != 0
            let lineStart = wordStart && TessPageIteratorIsAtBeginningOf(pageIterator, RIL_TEXTLINE) != 0
            let paragraphStart = lineStart && TessPageIteratorIsAtBeginningOf(pageIterator, RIL_PARA) != 0
            let blockStart = paragraphStart && TessPageIteratorIsAtBeginningOf(pageIterator, RIL_BLOCK) != 0
            if blockStart { blocks.append(element(RIL_BLOCK)) }
            guard !blocks.isEmpty else { continue }
            var block = blocks.removeLast()
            if paragraphStart || block.children.isEmpty { block.children.append(element(RIL_PARA)) }
            var paragraph = block.children.removeLast()
            if lineStart || paragraph.children.isEmpty { paragraph.children.append(element(RIL_TEXTLINE)) }
            var line = paragraph.children.removeLast()
            if wordStart || line.children.isEmpty { line.children.append(element(RIL_WORD)) }
            var word = line.children.removeLast()
            if symbols { word.children.append(element(RIL_SYMBOL)) }
            line.children.append(word)
            paragraph.children.append(line)
            block.children.append(paragraph)
            blocks.append(block)
        } while TessPageIteratorNext(pageIterator, symbols ? RIL_SYMBOL : RIL_WORD) != 0
        // Drop elements Tesseract reports without any text (image blocks, noise).
        page.blocks = blocks.compactMap(Self.pruned)
        return page
    }

    /// The text Tesseract returned, freed.
    private static func taken(_ raw: UnsafeMutablePointer<CChar>?) -> String {
        guard let raw else { return "" }
        defer { TessDeleteText(raw) }
        return String(cString: raw)
    }

    private static func pruned(_ element: RecognizedElement) -> RecognizedElement? {
        var e = element
        if !e.children.isEmpty {
            e.children = e.children.compactMap(pruned)
            if e.children.isEmpty { return nil }
        }
        return e.text.trimmingWhitespace.isEmpty && e.children.isEmpty ? nil : e
    }

    /// Orientation and script detection. Needs `osd` among the loaded languages; nil when Tesseract
    /// cannot tell (too little text) or OSD is not loaded.
    public func orientation(of image: Image) -> OrientationGuess? {
        analysed = nil
        TessBaseAPISetPageSegMode(handle, PSM_OSD_ONLY)
        TessBaseAPISetImage2(handle, .init(image.unsafePix))
        if image.resolution > 0 { TessBaseAPISetSourceResolution(handle, Int32(image.resolution)) }
        var degrees: Int32 = 0
        var confidence: Float = 0
        var script: UnsafePointer<CChar>?
        var scriptConfidence: Float = 0
        guard TessBaseAPIDetectOrientationScript(handle, &degrees, &confidence, &script, &scriptConfidence) != 0 else { return nil }
        // Tesseract reports the counter-clockwise rotation the page has; turning it back is clockwise.
        return OrientationGuess(rotation: (360 - Int(degrees)) % 360, confidence: Double(confidence),
                                script: script.map { String(cString: $0) } ?? "", scriptConfidence: Double(scriptConfidence))
    }

    /// The binary image Tesseract makes of `image` before it analyses or reads it (its thresholding,
    /// Otsu's by default), or nil where it makes none.
    public func thresholded(_ image: Image) -> Image? {
        analysed = nil
        load(image, .auto)
        return TessBaseAPIGetThresholdedImage(handle).map { Image(adopting: OpaquePointer($0)) }
    }

    /// Frees the last image and results (the engine stays initialised).
    public func clear() {
        analysed = nil
        TessBaseAPIClear(handle)
    }

    /// Gives Tesseract `image` to read with `segmentation`, at the image's resolution.
    private func load(_ image: Image, _ segmentation: PageSegmentation) {
        TessBaseAPISetPageSegMode(handle, TessPageSegMode(rawValue: UInt32(segmentation.rawValue)))
        TessBaseAPISetImage2(handle, .init(image.unsafePix))
        let dpi = image.resolution
        if dpi > 0 { TessBaseAPISetSourceResolution(handle, Int32(dpi)) }
    }

    /// Tesseract's full layout analysis (psm 3) of `image`: its blocks as regions, with their text
    /// lines. The analysis is kept for a `recognize(image, layout: .page)` that follows.
    public func regions(of image: Image) throws(RecognitionError) -> [LayoutRegion] {
        load(image, .auto)
        analysed = nil
        // Tesseract keeps the blocks it found; a Recognize with the same image and mode reads them.
        guard let iterator = TessBaseAPIAnalyseLayout(handle) else { return [] }
        defer { TessPageIteratorDelete(iterator) }
        analysed = image
        func box(_ level: TessPageIteratorLevel) -> PixelBox {
            var l: Int32 = 0, t: Int32 = 0, r: Int32 = 0, b: Int32 = 0
            _ = TessPageIteratorBoundingBox(iterator, level, &l, &t, &r, &b)
            return PixelBox(x: Int(l), y: Int(t), width: Int(r - l), height: Int(b - t))
        }
        var regions: [LayoutRegion] = []
        repeat {
            if regions.isEmpty || TessPageIteratorIsAtBeginningOf(iterator, RIL_BLOCK) != 0 {
                regions.append(LayoutRegion(kind: Self.kind(TessPageIteratorBlockType(iterator)), box: box(RIL_BLOCK)))
            }
            if [.text, .table, .vertical].contains(regions[regions.count - 1].kind) {
                regions[regions.count - 1].lines.append(box(RIL_TEXTLINE))
            }
        } while TessPageIteratorNext(iterator, RIL_TEXTLINE) != 0
        return regions
    }

    /// Tesseract's block types as region kinds: headings, pull-outs, captions and equations are text.
    static func kind(_ type: TessPolyBlockType) -> LayoutRegion.Kind {
        switch type {
        case PT_FLOWING_TEXT, PT_HEADING_TEXT, PT_PULLOUT_TEXT, PT_CAPTION_TEXT, PT_EQUATION, PT_INLINE_EQUATION: .text
        case PT_TABLE: .table
        case PT_VERTICAL_TEXT: .vertical
        case PT_FLOWING_IMAGE, PT_HEADING_IMAGE, PT_PULLOUT_IMAGE: .picture
        case PT_HORZ_LINE, PT_VERT_LINE: .rule
        default: .noise
        }
    }
}

extension String {
    var trimmingWhitespace: Substring {
        var s = self[...]
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return s
    }
}
