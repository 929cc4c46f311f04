internal import CLeptonica
#if canImport(Glibc)
import Glibc
#endif

/// The preprocessing steps Leptonica does for the OCR pipeline: grey conversion, measuring the text,
/// finding and correcting skew, evening out the light. Each returns a new image; the receiver is
/// left as it was.
extension Image {
    /// Samples per pixel (4 when the image has an alpha channel).
    public var samplesPerPixel: Int { Int(pixGetSpp(pix)) }

    /// The image as 8-bit grey. Transparent pixels become white first (a PNG whose background is
    /// transparent black would otherwise read as black paper).
    public func grey() throws(ImageError) -> Image {
        if depth == 8, pixGetColormap(pix) == nil { return try copy() }
        var source = pix
        var blended: UnsafeMutablePointer<PIX>?
        if depth == 32, samplesPerPixel == 4 {
            blended = pixAlphaBlendUniform(pix, 0xFFFF_FF00)
            if let blended { source = blended }
        }
        defer { if blended != nil { pixDestroy(&blended) } }
        guard let out = pixConvertTo8(source, 0) else { throw ImageError(.internalFailure, "grey conversion failed") }
        pixCopyResolution(out, pix)
        return Image(owning: out)
    }

    /// Black text on white as 1 bpp, by Otsu's threshold over the whole image.
    func binary() throws(ImageError) -> Image {
        let grey = depth == 8 && pixGetColormap(pix) == nil ? self : try self.grey()
        let threshold = Self.otsu(try grey.histogram())
        // pixThresholdToBinary: pixels below the threshold become foreground (black).
        guard let out = pixThresholdToBinary(grey.pix, Int32(threshold + 1)) else { throw ImageError(.internalFailure, "binarisation failed") }
        return Image(owning: out)
    }

    /// The counts of each grey level of an 8 bpp image without a colour map, sampled every `factor`
    /// pixels of every `factor` rows (by default a grid of about a million pixels, at least every
    /// pixel below 4 MP): the counts Leptonica's `pixGetGrayHistogram` gives, counted in four tables
    /// of integers, one for each byte of a 32-bit word, so that a run of one level (paper) does not
    /// make each count wait for the one before (a quarter of the time on this project's pages).
    func histogram(factor: Int? = nil) throws(ImageError) -> [Double] {
        guard depth == 8, pixGetColormap(pix) == nil, let data = pixGetData(pix) else {
            throw ImageError(.internalFailure, "a grey histogram needs an 8 bpp image without a colour map")
        }
        let step = max(1, factor ?? Int((Double(width * height) / 1_000_000).squareRoot()))
        let (wpl, width, height) = (Int(pixGetWpl(pix)), width, height)
        var tables = [UInt32](repeating: 0, count: 4 * 256)
        tables.withUnsafeMutableBufferPointer { t in
            for y in stride(from: 0, to: height, by: step) {
                let row = data + y * wpl
                if step == 1 {
                    let whole = width / 4
                    for i in 0..<whole {
                        let word = row[i]
                        t[Int(word >> 24)] &+= 1
                        t[256 + Int((word >> 16) & 0xFF)] &+= 1
                        t[512 + Int((word >> 8) & 0xFF)] &+= 1
                        t[768 + Int(word & 0xFF)] &+= 1
                    }
                    for x in (whole * 4)..<width { t[Int(Self.level(row, x))] &+= 1 }
                } else {
                    for x in stride(from: 0, to: width, by: step) { t[(x & 3) << 8 | Int(Self.level(row, x))] &+= 1 }
                }
            }
        }
        return (0..<256).map { level -> Double in
            let count: UInt32 = tables[level] + tables[256 + level] + tables[512 + level] + tables[768 + level]
            return Double(count)
        }
    }

    /// The level of pixel `x` of a row of an 8 bpp image, as Leptonica keeps it: four pixels to a
    /// 32-bit word, the first in its most significant byte (`GET_DATA_BYTE`).
    static func level(_ row: UnsafeMutablePointer<UInt32>, _ x: Int) -> UInt32 {
        (row[x >> 2] >> UInt32(8 * (3 - (x & 3)))) & 0xFF
    }

    /// Whether every pixel is within `tolerance` levels of every other, in each colour: a blank page or
    /// a flat fill, on which there is nothing to read. Every pixel is looked at (a thin stroke on a
    /// large page is not sampled away), row by row, until two differ by more: a page with anything on
    /// it is told after a row or two, without a copy.
    public func isUniform(tolerance: Int) throws(ImageError) -> Bool {
        let plainAlready = pixGetColormap(pix) == nil && (depth == 8 || depth == 32 && samplesPerPixel != 4)
        let image = plainAlready ? self : try plain()
        guard let data = pixGetData(image.pix) else { throw ImageError(.internalFailure, "the image has no pixels") }
        let (wpl, width, height) = (Int(pixGetWpl(image.pix)), image.width, image.height)
        // A colour pixel's red, green and blue are the most significant three bytes of its 32-bit word
        // (the fourth is not colour).
        let shifts: [UInt32] = image.depth == 8 ? [0] : [24, 16, 8]
        var low = [UInt32](repeating: 255, count: shifts.count), high = [UInt32](repeating: 0, count: shifts.count)
        for y in 0..<height {
            let row = data + y * wpl
            for (channel, shift) in shifts.enumerated() {
                var (least, most) = (low[channel], high[channel])
                for x in 0..<width {
                    let level = image.depth == 8 ? Self.level(row, x) : (row[x] >> shift) & 0xFF
                    least = min(least, level); most = max(most, level)
                }
                if Int(most - least) > tolerance { return false }
                (low[channel], high[channel]) = (least, most)
            }
        }
        return true
    }

    /// How much neighbouring pixels say about each other: the correlation of each grey level with the
    /// one to its right and with the one below it, whichever is further from 0 (a dither or a
    /// checkerboard correlates negatively, rules in one direction only in that direction), on every
    /// `step`-th row and column. Near 1 on anything photographed or scanned (paper, strokes and shading
    /// span many pixels; the receipts, pages and photos of the dev sets measure 0.35 and more), near 0
    /// in both directions on random noise, where no pixel says anything about the next. nil when the
    /// pixels measured do not vary.
    public func neighbourCorrelation(step: Int = 2) throws(ImageError) -> Double? {
        let grey = depth == 8 && pixGetColormap(pix) == nil ? self : try self.grey()
        return withExtendedLifetime(grey) { grey.correlationOfNeighbours(step: step) }
    }

    /// ``neighbourCorrelation(step:)`` on an 8-bit grey image whose pixels stay alive meanwhile.
    private func correlationOfNeighbours(step: Int) -> Double? {
        guard width > 1, height > 1, let data = pixGetData(pix) else { return nil }
        let wpl = Int(pixGetWpl(pix))
        func level(_ row: UnsafeMutablePointer<UInt32>, _ x: Int) -> Double { Double(Self.level(row, x)) }
        var n = 0.0, sa = 0.0, saa = 0.0
        var sr = 0.0, srr = 0.0, sar = 0.0
        var sb = 0.0, sbb = 0.0, sab = 0.0
        for y in stride(from: 0, to: height - 1, by: max(1, step)) {
            let row = data + y * wpl, below = data + (y + 1) * wpl
            for x in stride(from: 0, to: width - 1, by: max(1, step)) {
                let a = level(row, x), r = level(row, x + 1), b = level(below, x)
                n += 1
                sa += a; saa += a * a
                sr += r; srr += r * r; sar += a * r
                sb += b; sbb += b * b; sab += a * b
            }
        }
        func correlation(_ so: Double, _ soo: Double, _ sao: Double) -> Double? {
            let spread = (n * saa - sa * sa) * (n * soo - so * so)
            return spread > 0 ? (n * sao - sa * so) / spread.squareRoot() : nil
        }
        switch (correlation(sr, srr, sar), correlation(sb, sbb, sab)) {
        case let (right?, down?): return abs(right) >= abs(down) ? right : down
        case let (one?, nil), let (nil, one?): return one
        case (nil, nil): return nil
        }
    }

    /// The tones of ink and paper, 0 (black) … 255, split by Otsu's threshold. `ink`: the median
    /// grey level of the dark side (faded thermal print reads about 100–180, laser print below 60).
    /// `paper`: the level of the darkest tenth of the light side (clean paper about 210–255; grain,
    /// grey paper or shadow lower).
    public func tones() throws(ImageError) -> (ink: Int, paper: Int) {
        let grey = depth == 8 && pixGetColormap(pix) == nil ? self : try self.grey()
        let counts = try grey.histogram()
        let threshold = Self.otsu(counts)
        func level(at share: Double, in range: ClosedRange<Int>) -> Int {
            let total = counts[range].reduce(0, +)
            var seen = 0.0
            for level in range {
                seen += counts[level]
                if seen >= share * total { return level }
            }
            return range.upperBound
        }
        return (level(at: 0.5, in: 0...threshold), level(at: 0.1, in: min(255, threshold + 1)...255))
    }

    /// The grey image through the tone curve `out = in^exponent`, levels as 0…1 with `white` as 1
    /// (every level from `white` up turns white): an exponent above 1 darkens the mid greys, so faint
    /// strokes survive binarisation; black stays.
    public func toneCurve(exponent: Double, white: Int = 255) throws(ImageError) -> Image {
        let grey = depth == 8 && pixGetColormap(pix) == nil ? self : try self.grey()
        // Leptonica's gamma maps x to x^(1/gamma).
        guard let out = pixGammaTRC(nil, grey.pix, Float(1 / exponent), 0, Int32(max(1, min(255, white)))) else {
            throw ImageError(.internalFailure, "tone curve failed")
        }
        pixCopyResolution(out, pix)
        return Image(owning: out)
    }

    /// The grey level of one pixel of an 8 bpp image (0 black … 255 white).
    public func greyLevel(x: Int, y: Int) -> Int {
        var value: UInt32 = 0
        _ = pixGetPixel(pix, Int32(x), Int32(y), &value)
        return Int(value)
    }

    /// Otsu's threshold for a 256-bin histogram: the grey level that best splits it in two classes.
    static func otsu(_ counts: [Double]) -> Int {
        let total = counts.reduce(0, +)
        guard total > 0 else { return 127 }
        let sum = counts.enumerated().reduce(0.0) { $0 + Double($1.offset) * $1.element }
        var weightBelow = 0.0, sumBelow = 0.0, best = -1.0, threshold = 127
        for level in 0..<255 {
            weightBelow += counts[level]
            sumBelow += Double(level) * counts[level]
            let weightAbove = total - weightBelow
            guard weightBelow > 0, weightAbove > 0 else { continue }
            let meanBelow = sumBelow / weightBelow, meanAbove = (sum - sumBelow) / weightAbove
            let between = weightBelow * weightAbove * (meanBelow - meanAbove) * (meanBelow - meanAbove)
            if between > best { best = between; threshold = level }
        }
        return threshold
    }

    /// The boxes of the connected components that look like glyphs (pixels of this image): not
    /// specks, not rules, not pictures. Found on a binarised copy.
    public func glyphBoxes() throws(ImageError) -> [PixelBox] {
        try glyphs().upright
    }

    /// The glyph-sized components of a binarised copy: those that stand upright as letters do (at
    /// least 4 px high, at most three times as wide as high, at most 8 times as high as wide), and how
    /// many thin, full-size ones lie on their side against how many stand. Thin means 2.5 to 8 times
    /// longer than thick; full-size that the long side reaches the median long side of all the
    /// glyph-sized components. Upright Latin print has many standing ones (`l`, `1`, `I`, `f`) and few
    /// lying ones (dashes are shorter than letters); a page turned by a quarter has them the other
    /// way round.
    ///
    /// - Parameter rowGaps: where above 0, gaps of up to this many blank rows within a glyph are
    ///   filled first (a vertical closing): a glyph cut into slices by blank rows (a damaged GIF's
    ///   lost rows, a dot-matrix printer's dead pin) is measured whole.
    public func glyphs(bridgingRowGaps rowGaps: Int = 0) throws(ImageError) -> (upright: [PixelBox], thinStanding: Int, thinLying: Int) {
        var binary = try binary()
        if rowGaps > 0 {
            guard let closed = pixCloseSafeBrick(nil, binary.pix, 1, Int32(rowGaps + 1)) else {
                throw ImageError(.internalFailure, "closing the rows' gaps failed")
            }
            binary = Image(owning: closed)
        }
        guard let boxa = pixConnCompBB(binary.pix, 8) else { return ([], 0, 0) }
        var boxes: UnsafeMutablePointer<BOXA>? = boxa
        defer { boxaDestroy(&boxes) }
        let count = Int(boxaGetCount(boxa))
        var glyphs: [PixelBox] = []
        glyphs.reserveCapacity(count)
        var components: [(long: Int, short: Int, standing: Bool)] = []
        let tallest = max(8, height / 4), widest = max(8, width / 4)
        for index in 0..<count {
            var x: Int32 = 0, y: Int32 = 0, w: Int32 = 0, h: Int32 = 0
            guard boxaGetBoxGeometry(boxa, Int32(index), &x, &y, &w, &h) == 0 else { continue }
            // Glyphs are at least 4 px high, at most three times as wide as high (ligatures, "m"),
            // at most 8 times as high as wide ("l", "1" are thin but not rules).
            if h >= 4, h <= tallest, w <= 3 * h, h <= 8 * max(1, w) {
                glyphs.append(PixelBox(x: Int(x), y: Int(y), width: Int(w), height: Int(h)))
            }
            // Glyph-sized either way up.
            if max(w, h) >= 4, h <= tallest, w <= widest, max(w, h) <= 8 * max(1, min(w, h)) {
                components.append((Int(max(w, h)), Int(min(w, h)), h >= w))
            }
        }
        let longs = components.map(\.long).sorted()
        guard !longs.isEmpty else { return (glyphs, 0, 0) }
        let full = longs[longs.count / 2]
        var standing = 0, lying = 0
        for c in components where c.long >= full && 2 * c.long >= 5 * c.short {
            if c.standing { standing += 1 } else { lying += 1 }
        }
        return (glyphs, standing, lying)
    }

    /// The skew of the text lines, in degrees: the clockwise turn that levels them (positive when the
    /// lines rise to the right, as `rotated(degrees:)` takes it), and Leptonica's confidence in it (about 3 or more is a
    /// clear answer). nil when no skew can be measured (a blank page).
    ///
    /// - Parameter range: the largest skew looked for, in degrees either way.
    public func skew(range: Double) throws(ImageError) -> (degrees: Double, confidence: Double)? {
        let binary = try binary()
        var angle: Float = 0, confidence: Float = 0
        // Sweep at a quarter of the size in 1° steps over the range, then a binary search at half size
        // down to 0.01°: Leptonica's own defaults for pixFindSkew, with the range widened.
        let reduction: Int32 = binary.width >= 1_200 ? 4 : (binary.width >= 600 ? 2 : 1)
        let ok = pixFindSkewSweepAndSearch(binary.pix, &angle, &confidence, reduction, max(1, reduction / 2),
                                           Float(range), 1, 0.01)
        guard ok == 0 else { return nil }
        return (Double(angle), Double(confidence))
    }

    /// Turned by `degrees` about its centre (positive: clockwise), on a canvas large enough that no
    /// corner is cut off, the new area white. Returns the image and the offset of the old canvas'
    /// centre to the new one (the new canvas is larger by twice that).
    public func rotated(degrees: Double) throws(ImageError) -> (image: Image, grownBy: (x: Int, y: Int)) {
        let radians = Float(degrees * .pi / 180)
        // Leptonica embeds the image in a larger canvas first when it is given its own size.
        guard let out = pixRotate(pix, radians, Int32(L_ROTATE_AREA_MAP), Int32(L_BRING_IN_WHITE),
                                  Int32(width), Int32(height)) else {
            throw ImageError(.internalFailure, "rotation by \(degrees)° failed")
        }
        pixCopyResolution(out, pix)
        let image = Image(owning: out)
        return (image, ((image.width - width) / 2, (image.height - height) / 2))
    }

    /// The background (paper) brought to an even white, for pages lit unevenly: a photo with a
    /// shadow, a scan with a dark fold. 8-bit grey in and out.
    public func normalisedBackground() throws(ImageError) -> Image {
        let grey = depth == 8 && pixGetColormap(pix) == nil ? self : try self.grey()
        guard let out = pixBackgroundNormSimple(grey.pix, nil, nil) else {
            throw ImageError(.internalFailure, "background normalisation failed")
        }
        pixCopyResolution(out, pix)
        return Image(owning: out)
    }

    /// How unevenly the page is lit: the spread of the paper's brightness between the brightest and
    /// darkest parts of a coarse grid, 0 (even) … 255. Measured on the grey image's tile maxima.
    public func backgroundSpread(tiles: Int = 8) throws(ImageError) -> Int {
        let grey = depth == 8 && pixGetColormap(pix) == nil ? self : try self.grey()
        guard let data = pixGetData(grey.pix) else { return 0 }
        let wpl = Int(pixGetWpl(grey.pix))
        let tileW = max(1, width / tiles), tileH = max(1, height / tiles)
        var brightest: [Int] = []
        for ty in 0..<tiles {
            for tx in 0..<tiles {
                // The paper in a tile: the 90th percentile of a sample of its pixels.
                var histogram = [Int](repeating: 0, count: 256)
                var samples = 0
                var y = ty * tileH
                while y < min(height, (ty + 1) * tileH) {
                    let row = data + y * wpl
                    var x = tx * tileW
                    while x < min(width, (tx + 1) * tileW) {
                        // GET_DATA_BYTE: bytes are in big-endian order within each 32-bit word.
                        let word = row[x >> 2]
                        let value = Int((word >> UInt32(8 * (3 - (x & 3)))) & 0xFF)
                        histogram[value] += 1
                        samples += 1
                        x += 3
                    }
                    y += 3
                }
                guard samples > 0 else { continue }
                var seen = 0
                for value in stride(from: 255, through: 0, by: -1) {
                    seen += histogram[value]
                    if seen * 10 >= samples { brightest.append(value); break }
                }
            }
        }
        guard let high = brightest.max(), let low = brightest.min() else { return 0 }
        return high - low
    }
}
