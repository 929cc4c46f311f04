import Foundation
import QuireSupport
import QuireWire
import Imaging
import QuireRecognition

/// The steps between the decoded file and the engine, each kept only where the real-image benchmark
/// (`quire bench ocr`, docs/ocr.md) said it helps: text-size scaling, orientation, deskew, light,
/// and the choice of layout (`PageReading.swift`). Every step is recorded in the result's `metadata.steps`.
extension Recognizer {
    /// A page decoded, turned upright by its EXIF orientation, in grey and scaled for its text size.
    struct Prepared {
        var image: Image
        /// Recognition pixels per uploaded pixel.
        var scale: Double
        var quarterTurns: Int
        var mirrored: Bool
        /// Upright page coordinates (uploaded resolution) → stored pixel grid.
        var toStored: Affine
        var steps: [OCRResult.Step]
        /// Where `image` begins in the upright page scaled for recognition (it was cropped to the
        /// text when that saved pixels), recognition pixels.
        var origin: (x: Double, y: Double) = (0, 0)
        /// The skew of the upright page as measured in `prepare` (nil: the `deskew` step is off or the
        /// mode has none).
        var skew: Skew?

        struct Skew {
            var degrees: Double
            var confidence: Double
            var milliseconds: Double
        }
        /// The tones of ink and paper when this page has an `ink` step (a document, the step on).
        var tones: (ink: Int, paper: Int)?
        /// The paper's brightness spread (``Image/backgroundSpread(tiles:)``), measured on the upright
        /// page before it was scaled (nil: the `light` step is off).
        var backgroundSpread: Int?
        /// The share of thin glyphs lying on their side (``Probe/sideways``; nil: not measured).
        var sideways: Double?
        /// Nothing to read on the page (its `blank` step says why): it is returned empty, unread.
        var blank = false
    }

    /// A page ready for the engine, and how its pixels map back.
    struct PreparedPage {
        var image: Image
        /// Recognition pixels → upright page coordinates at the uploaded resolution.
        var toPage: Affine
        /// Upright page coordinates → stored pixel grid of the uploaded file.
        var toStored: Affine
        /// The upright page at the uploaded resolution.
        var size: (width: Int, height: Int)
        /// EXIF and detected quarter turns together.
        var quarterTurns: Int
        /// The skew corrected before reading, degrees (the page was turned clockwise by this much).
        var deskewAngle: Double
    }

    /// What a reduced copy of the page shows before it is read.
    struct Probe {
        /// The median glyph height, uploaded pixels; nil when too few glyphs were found.
        var glyphHeight: Double?
        /// The box around the text, upright page at the uploaded resolution.
        var textBox: PixelBox?
        /// The tones of ink and paper (``Image/tones()``); nil on a blank page, which is not measured.
        var tones: (ink: Int, paper: Int)?
        /// The share of thin glyphs lying on their side (``Image/glyphs()``): near 0 for upright
        /// Latin print, near 1 for a page turned by a quarter; nil with too few thin glyphs.
        var sideways: Double?
        /// The full decode, when probing had to make one (JPEG is probed from a cheap reduced decode).
        var full: Image?
        /// Set on a page with nothing to read (every pixel alike, or random noise): the `blank` step.
        var blank: OCRResult.Step?
    }

    /// Measures the page on a copy of at most ``OCRConfiguration/textSizeProbePixels`` turned upright:
    /// its glyphs' median height, the box around its text and how dark its ink is.
    func probe(_ source: PageSource) throws(ImageError) -> Probe {
        let pixels = Double(source.width * source.height)
        let probeScale = min(1, (Double(configuration.textSizeProbePixels) / pixels).squareRoot())
        var full: Image?
        var probe: Image
        if source.reducible {
            var reduction = 1
            while reduction < 8 && 1.0 / Double(reduction * 2) >= probeScale { reduction *= 2 }
            probe = try source.decode(reduction).grey()
            if reduction == 1 { full = probe }
        } else {
            let decoded = try source.decode(1)
            full = decoded
            probe = try decoded.grey()
        }
        // Nothing to read: no scaling, no glyph search (on noise it finds a component at every pixel),
        // no reading. Noise is judged before the probe is scaled: interpolation makes neighbouring
        // pixels alike. Blank is judged on the full decode where one was made: in colour (text in
        // colours of one grey) for every format but JPEG, whose probe is decoded grey.
        if let blank = try blankStep(probe, colour: full) { return Probe(full: full, blank: blank) }
        let factor = probeScale * Double(source.width) / Double(probe.width)
        if abs(factor - 1) > 0.01 { probe = try probe.scaled(by: factor) }
        let uploadedPerProbe = Double(source.width) / Double(probe.width)
        // Glyphs are measured on the upright page: a sideways page's glyph heights are its glyphs'
        // widths, and the text's box is wanted in upright coordinates.
        probe = try source.upright(probe).image
        let tones = try probe.tones()
        var (glyphs, standing, lying) = try probe.glyphs()
        var heights = glyphs.map(\.height).sorted()
        // Small print is enlarged, and each reading of it costs the more. Glyphs cut into slices by
        // blank rows (a damaged GIF's lost rows, a dot-matrix printer's dead pin) measure as their
        // slices: where filling one-row gaps at least doubles the median height, the filled glyphs are
        // measured instead. Print broken by wear gains less: at most 1.44× on the dev sets' receipts,
        // photos and pages (a damaged GIF's glyphs, 19 px in its clean rendering, measured 7 px as
        // slices and 17 px filled: 2.4×).
        if heights.count >= 12, Double(heights[heights.count / 2]) * uploadedPerProbe < configuration.smallGlyphHeight {
            let bridged = try probe.glyphs(bridgingRowGaps: 1)
            let bridgedHeights = bridged.upright.map(\.height).sorted()
            if bridgedHeights.count >= 12, bridgedHeights[bridgedHeights.count / 2] >= 2 * heights[heights.count / 2] {
                (glyphs, standing, lying) = bridged
                heights = bridgedHeights
            }
        }
        let sideways = standing + lying >= 20 ? Double(lying) / Double(standing + lying) : nil
        guard heights.count >= 12 else { return Probe(tones: tones, sideways: sideways, full: full) }
        let median = Double(heights[heights.count / 2])
        let text = Self.textBox(glyphs, glyphHeight: median).map { b in
            PixelBox(x: Int(Double(b.x) * uploadedPerProbe), y: Int(Double(b.y) * uploadedPerProbe),
                     width: Int((Double(b.width) * uploadedPerProbe).rounded(.up)), height: Int((Double(b.height) * uploadedPerProbe).rounded(.up)))
        }
        return Probe(glyphHeight: median * uploadedPerProbe, textBox: text,
                     tones: tones, sideways: sideways, full: full)
    }

    /// The `blank` step for a page with nothing to read, measured on `grey`, its decode before any
    /// scaling (a JPEG's reduced one): every pixel alike (`range` 0; judged on
    /// `colour`, the full decode, when there is one), or pixels as unrelated to their neighbours as
    /// random noise in both directions (`neighbourCorrelation` within ±`maxCorrelation`). nil for
    /// anything else.
    func blankStep(_ grey: Image, colour: Image?) throws(ImageError) -> OCRResult.Step? {
        let started = Instant.now()
        if try (colour ?? grey).isUniform(tolerance: 0) {
            return .init(step: "blank", applied: true, parameters: ["range": 0, "ms": started.millisecondsSince])
        }
        // About a million pairs of neighbours, however large the page.
        let step = max(2, Int((Double(grey.width * grey.height) / 1_000_000).squareRoot()))
        guard configuration.maxNoiseCorrelation > 0, let correlation = try grey.neighbourCorrelation(step: step),
              abs(correlation) < configuration.maxNoiseCorrelation else { return nil }
        return .init(step: "blank", applied: true, parameters: [
            "neighbourCorrelation": (correlation * 1_000).rounded() / 1_000, "maxCorrelation": configuration.maxNoiseCorrelation,
            "ms": started.millisecondsSince,
        ])
    }

    /// The factor that brings glyphs of `height` uploaded pixels to the size Tesseract reads best.
    func textScale(glyphHeight height: Double?, mode: OCRRequest.Mode) -> Double {
        guard let height, height > 0 else { return 1 }
        if height < configuration.smallGlyphHeight {
            return min(configuration.maxUpscale, configuration.targetGlyphHeight / height)
        }
        // Sparse text (a sign with a small caption) has no typical size: the median is the large
        // text, and scaling to it lost the small words (90% found at full size, 67% at ×0.5).
        if height > configuration.largeGlyphHeight, mode != .text {
            return max(0.2, configuration.targetGlyphHeight / height)
        }
        return 1
    }

    /// The longest side Tesseract reads, pixels (`ImageThresholder::ThresholdToPix`).
    static let maxEngineSide = 32_767

    /// A document is cropped to its text when the box keeps at most this share of the page.
    static let cropWhenKept = 0.8

    /// The pixels that will be read at scale 1: the text's box when the page will be cropped to it
    /// (`textBox` given, as in `document` mode with cropping on), else the whole page.
    static func pixelsToRead(pixels: Int, textBox: PixelBox?) -> Int {
        guard let box = textBox, pixels > 0 else { return pixels }
        let boxed = box.width * box.height
        return Double(boxed) / Double(pixels) <= cropWhenKept ? boxed : pixels
    }

    /// `scale` held to the enlargement that keeps `pixelsToRead` within `budget` once enlarged; a
    /// reduction, or an enlargement within the budget, is returned as it is, and a page already over
    /// the budget is not enlarged at all.
    static func enlargement(_ scale: Double, pixelsToRead: Int, budget: Int) -> Double {
        guard scale > 1, pixelsToRead > 0, Double(pixelsToRead) * scale * scale > Double(budget) else { return scale }
        return max(1, (Double(budget) / Double(pixelsToRead)).squareRoot())
    }

    func prepare(_ source: PageSource, request: OCRRequest) throws(WireError) -> Prepared {
        do throws(ImageError) {
            let pixels = source.width * source.height
            let mode = request.mode ?? .document
            var steps: [OCRResult.Step] = []
            var scale = 1.0
            var decoded: Image?
            var textBox: PixelBox?
            var sideways: Double?
            // Tones are kept only for pages that have an ink step.
            var tones: (ink: Int, paper: Int)?
            if configuration.textScaling || configuration.cropToText || configuration.darkenInk {
                let started = Instant.now()
                let measured = try probe(source)
                if let blank = measured.blank {
                    // Nothing to read: the page as uploaded, upright, and no other step.
                    let upright = source.uprightTransform()
                    let image: Image
                    if let full = measured.full { image = full } else { image = try source.decode(8) }
                    var prepared = Prepared(image: try source.upright(image).image, scale: 1,
                                            quarterTurns: upright.quarterTurns, mirrored: upright.mirrored, toStored: upright.toUpright.inverse,
                                            steps: [blank])
                    prepared.blank = true
                    return prepared
                }
                decoded = measured.full
                textBox = measured.textBox
                if mode == .document && configuration.darkenInk { tones = measured.tones }
                scale = configuration.textScaling ? textScale(glyphHeight: measured.glyphHeight, mode: mode) : 1
                var parameters: [String: Double] = ["targetGlyphHeight": configuration.targetGlyphHeight]
                let toRead = Self.pixelsToRead(pixels: pixels, textBox: mode == .document && configuration.cropToText ? textBox : nil)
                let enlarged = Self.enlargement(scale, pixelsToRead: toRead, budget: configuration.maxEnlargedPixels)
                if enlarged < scale {
                    parameters["wanted"] = (scale * 1_000).rounded() / 1_000
                    parameters["maxEnlargedPixels"] = Double(configuration.maxEnlargedPixels)
                    scale = enlarged
                }
                parameters["ms"] = started.millisecondsSince
                if let height = measured.glyphHeight { parameters["glyphHeight"] = height }
                sideways = measured.sideways
                steps.append(.init(step: "scale", applied: abs(scale - 1) > 0.01, parameters: parameters))
            }
            if Double(pixels) * scale * scale > Double(configuration.maxRecognitionPixels) {
                scale = (Double(configuration.maxRecognitionPixels) / Double(pixels)).squareRoot()
            }
            // Tesseract refuses a page longer than 32,767 pixels on a side (its coordinates are 16-bit):
            // a longer one (a long receipt scanned whole, within the pixel limit) is read reduced to fit.
            let longest = Double(max(source.width, source.height))
            if longest * scale > Double(Self.maxEngineSide) { scale = Double(Self.maxEngineSide) / longest }
            // A JPEG can be decoded at 1/2, 1/4 or 1/8 size for a fraction of the cost.
            var reduction = 1
            if source.reducible, decoded == nil {
                while reduction < 8 && 1.0 / Double(reduction * 2) >= scale { reduction *= 2 }
            }
            var image: Image
            if let decoded { image = decoded } else {
                image = try source.decode(reduction)
            }
            let fileDPI = image.resolution * reduction
            image = try image.grey()
            // The light is measured once, here, on the page as uploaded. The ink is darkened before the
            // page is enlarged: enlarged from darkened greys, thin strokes stay whole (the receipts' dates
            // and totals found: 91% and 90%, against 88% each when darkened after enlarging).
            let spread = configuration.evenLight ? try image.backgroundSpread() : nil
            // An unevenly lit page is darkened after the `light` step (see `preprocess`).
            if let tones, !Self.isUneven(spread, configuration) { try darkenInk(&image, tones: tones, steps: &steps) }
            // Decoded pixels per uploaded pixel (fewer when a JPEG was decoded reduced).
            let decodedPerUploaded = Double(image.width) / Double(source.width)
            // Transform from stored (at uploaded resolution) to upright, inverted below.
            let turned = try source.upright(image)
            image = turned.image
            let (toUpright, turns, mirror) = (turned.toUpright, turned.quarterTurns, turned.mirrored)
            // Documents are cropped to their text when that leaves out at least a fifth of the pixels,
            // before the page is enlarged or deskewed: neither spends time on the margins.
            var origin = (x: 0.0, y: 0.0)
            if mode == .document, configuration.cropToText, let box = textBox {
                let x0 = max(0, Int(Double(box.x) * decodedPerUploaded)), y0 = max(0, Int(Double(box.y) * decodedPerUploaded))
                let x1 = min(image.width, Int((Double(box.x + box.width) * decodedPerUploaded).rounded(.up)))
                let y1 = min(image.height, Int((Double(box.y + box.height) * decodedPerUploaded).rounded(.up)))
                let kept = Double(max(0, x1 - x0) * max(0, y1 - y0)) / Double(max(1, image.width * image.height))
                let apply = x1 > x0 && y1 > y0 && kept <= Self.cropWhenKept
                steps.append(.init(step: "crop", applied: apply, parameters: ["kept": (kept * 1_000).rounded() / 1_000]))
                if apply {
                    image = try image.cropped(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
                    origin = (Double(x0), Double(y0))
                }
            }
            // The skew is measured on the smaller of the page as decoded and as scaled: the angle is
            // the same, the pixels to search fewer (see `preprocess`).
            let factor = scale / decodedPerUploaded
            var skew: Prepared.Skew?
            if factor > 1.01 { skew = try measureSkew(image, mode: mode) }
            var actualScale = decodedPerUploaded
            if abs(factor - 1) > 0.01 {
                let before = (width: image.width, height: image.height)
                image = try image.scaled(by: factor)
                // Recognition pixels per decoded pixel, as Leptonica rounded the new size.
                let grown = (x: Double(image.width) / Double(before.width), y: Double(image.height) / Double(before.height))
                actualScale *= grown.x
                origin = (origin.x * grown.x, origin.y * grown.y)
            }
            if skew == nil { skew = try measureSkew(image, mode: mode) }
            if let index = steps.firstIndex(where: { $0.step == "scale" }) { steps[index].parameters["factor"] = (actualScale * 1_000).rounded() / 1_000 }
            // Tesseract's resolution: what the request or the file says, at the scale read. Text
            // brought to the target size reads as 300 dpi print; with no resolution at all Tesseract
            // estimates it from the text, as the CLI does (told 300 dpi, it takes sign-sized letters
            // for pictures and reads nothing).
            let declared = request.dpi ?? ((70...2_400).contains(fileDPI) ? fileDPI : 0)
            if abs(actualScale - 1) > 0.01 && actualScale > 1 {
                image.setResolution(declared > 0 ? Int((Double(declared) * actualScale).rounded()) : 300)
            } else {
                image.setResolution(declared > 0 ? Int((Double(declared) * actualScale).rounded()) : 0)
            }
            var prepared = Prepared(image: image, scale: actualScale, quarterTurns: turns, mirrored: mirror, toStored: toUpright.inverse,
                                    steps: steps, tones: tones, backgroundSpread: spread)
            prepared.origin = origin
            prepared.sideways = sideways
            prepared.skew = skew
            return prepared
        } catch {
            throw Self.wire(error)
        }
    }

    /// Quarter turns, deskew and light, in that order, on the prepared page.
    func preprocess(_ prepared: Prepared, source: PageSource, mode: OCRRequest.Mode, turns: Int,
                    steps: inout [OCRResult.Step]) throws(WireError) -> PreparedPage {
        do throws(ImageError) {
            var image = prepared.image
            var quarterTurns = prepared.quarterTurns
            var toStored = prepared.toStored
            let dpi = image.resolution
            // Upright page (uploaded resolution) → recognition pixels: the scale, the crop, any quarter
            // turn, then any deskew.
            var forward = Affine(a: prepared.scale, b: 0, c: -prepared.origin.x, d: 0, e: prepared.scale, f: -prepared.origin.y)
            // Quarter turns found by orientation detection (see `readPage`), applied before the deskew.
            if turns != 0 {
                // The page as EXIF left it, at the uploaded resolution (exact, not from scaled pixels).
                let sideways = prepared.quarterTurns % 2 == 1
                let before = Affine.rotation(quarterTurns: turns,
                                             width: Double(sideways ? source.height : source.width),
                                             height: Double(sideways ? source.width : source.height))
                forward = before.inverse.then(forward)
                    .then(Affine.rotation(quarterTurns: turns, width: Double(image.width), height: Double(image.height)))
                image = try image.rotated(quarterTurns: turns)
                image.setResolution(dpi)
                toStored = before.inverse.then(toStored)
                quarterTurns += turns
            }
            let sideways = quarterTurns % 2 == 1
            let size = (width: sideways ? source.height : source.width, height: sideways ? source.width : source.height)
            var deskewAngle = 0.0
            // A quarter turn found after reading leaves the skew as it was, but lines that stood
            // sideways when it was measured gave no angle: measured again on the turned page.
            if let found = turns == 0 ? prepared.skew : try measureSkew(image, mode: mode) {
                let angle = found.degrees, confidence = found.confidence
                let apply = confidence >= configuration.skewConfidence && abs(angle) >= configuration.minSkew
                steps.append(.init(step: "deskew", applied: apply, parameters: [
                    "angle": (angle * 100).rounded() / 100, "confidence": (confidence * 100).rounded() / 100,
                    "minConfidence": configuration.skewConfidence, "minAngle": configuration.minSkew,
                    "ms": found.milliseconds,
                ]))
                if apply {
                    let (turned, grown) = try image.rotated(degrees: angle)
                    forward = forward.then(.turn(degrees: angle, aboutX: Double(image.width) / 2, y: Double(image.height) / 2,
                                                 shiftX: Double(grown.x), y: Double(grown.y)))
                    image = turned
                    image.setResolution(dpi)
                    deskewAngle = angle
                }
            }
            if let spread = prepared.backgroundSpread {
                let started = Instant.now()
                let apply = Self.isUneven(spread, configuration)
                steps.append(.init(step: "light", applied: apply, parameters: [
                    "backgroundSpread": Double(spread), "minSpread": Double(configuration.unevenLightSpread), "ms": started.millisecondsSince,
                ]))
                if apply {
                    image = try image.normalisedBackground()
                    image.setResolution(dpi)
                }
            }
            // On an unevenly lit page the ink is darkened after the background is evened out (darkened
            // first, the shadows turn as dark as the print).
            if Self.isUneven(prepared.backgroundSpread, configuration), let tones = prepared.tones {
                try darkenInk(&image, tones: tones, steps: &steps)
            }
            return PreparedPage(image: image, toPage: forward.inverse, toStored: toStored, size: size, quarterTurns: quarterTurns,
                                deskewAngle: deskewAngle)
        } catch {
            throw Self.wire(error)
        }
    }

    /// The page's skew (Leptonica's sweep and search over ±`maxSkew`), or nil when the mode or the
    /// configuration has no `deskew` step. A page with no measurable skew gives angle 0, confidence 0.
    func measureSkew(_ image: Image, mode: OCRRequest.Mode) throws(ImageError) -> Prepared.Skew? {
        guard mode != .line && configuration.deskew else { return nil }
        let started = Instant.now()
        let found = try image.skew(range: configuration.maxSkew)
        return Prepared.Skew(degrees: found?.degrees ?? 0, confidence: found?.confidence ?? 0, milliseconds: started.millisecondsSince)
    }

    /// Whether a page with this background spread is lit unevenly enough for the `light` step (nil:
    /// the step is off).
    static func isUneven(_ spread: Int?, _ configuration: OCRConfiguration) -> Bool {
        spread.map { $0 >= configuration.unevenLightSpread } ?? false
    }

    /// Darkens the ink of `image` by the tone curve unless its paper is grainy or grey (the curve
    /// would make the paper's darker tenth as dark as print) or the page is already black on white
    /// (ink 0, paper 255: a rendered page or a bilevel scan has no faint stroke to save, and the curve
    /// only thickens the anti-aliased edges of its small print), and records the step.
    func darkenInk(_ image: inout Image, tones: (ink: Int, paper: Int), steps: inout [OCRResult.Step]) throws(ImageError) {
        let started = Instant.now()
        let apply = tones.paper >= configuration.darkenInkMinPaper && !(tones.ink == 0 && tones.paper == 255)
        // Grey paper is stretched to white first (``OCRConfiguration/whitenPaperBelow``).
        let white = tones.paper < configuration.whitenPaperBelow ? max(1, tones.paper) : 255
        if apply {
            let dpi = image.resolution
            image = try image.toneCurve(exponent: configuration.inkExponent, white: white)
            image.setResolution(dpi)
        }
        steps.append(.init(step: "ink", applied: apply, parameters: [
            "inkLevel": Double(tones.ink), "paperLevel": Double(tones.paper), "minPaperLevel": Double(configuration.darkenInkMinPaper),
            "exponent": configuration.inkExponent, "white": Double(apply ? white : 255), "ms": started.millisecondsSince,
        ]))
    }
}
