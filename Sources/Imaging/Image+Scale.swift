internal import CLeptonica

extension Image {
    /// Scaled by `factor` as Leptonica's `pixScale` scales it, to the byte. A grey image (8 bpp, no
    /// colour map) scaled by at least 0.7 is scaled here: linear interpolation in sixteenths of a
    /// pixel (`pixScaleGrayLI`), then, below 1.4, the unsharp mask that `pixScale` adds
    /// (`pixUnsharpMaskingGray2D`: 0.4 of each pixel's difference from its 5 × 5 mean added back).
    /// Leptonica works out each pixel's source place and weights from floats and reads its four
    /// source bytes through their words, for every pixel; here each column's place and weight are
    /// worked out once, each destination row blends its two source rows once per source column, and
    /// the mask's sums are carried in integers, which hold them exactly as Leptonica's floats do.
    /// Anything else (colour, 1 bpp, other factors, images too small to sharpen) is Leptonica's.
    /// Leptonica scales the stored resolution too; callers set it afterwards.
    public func scaled(by factor: Double) throws(ImageError) -> Image {
        #if _endian(little)
        if let scaled = try greyScaledLinearly(Float(factor)) { return scaled }
        #endif
        return try leptonicaScaled(by: factor)
    }

    /// `pixScale`'s own result (tests compare ``scaled(by:)`` with it).
    func leptonicaScaled(by factor: Double) throws(ImageError) -> Image {
        guard let out = pixScale(pix, Float(factor), Float(factor)) else { throw ImageError(.internalFailure, "scaling failed") }
        return Image(owning: out)
    }

    /// `pixScaleGeneral`'s linear interpolation of a grey image, and its sharpening below 1.4; nil
    /// where Leptonica scales otherwise (not 8 bpp grey, a factor under 0.7, 1, 2 or 4) or the result
    /// would be too small to sharpen as it does (under 5 pixels a side).
    func greyScaledLinearly(_ scale: Float) throws(ImageError) -> Image? {
        // Leptonica compares the float factor with double constants: 0.7 as a float is below 0.7.
        guard depth == 8, pixGetColormap(pix) == nil, Double(scale) >= 0.7, scale != 1, scale != 2, scale != 4 else { return nil }
        let ws = width, hs = height
        // Larger than any image Leptonica would make: left to it, to refuse.
        guard Double(scale) * Double(max(ws, hs)) < 1e8 else { return nil }
        // pixScaleGrayLI's size: a float product, rounded in double.
        let wd = Int(Int32(Double(scale * Float(ws)) + 0.5)), hd = Int(Int32(Double(scale * Float(hs)) + 0.5))
        let sharpen = Double(scale) < 1.4
        guard wd >= 1, hd >= 1, !sharpen || (wd >= 5 && hd >= 5) else { return nil }
        guard let interpolated = pixCreate(Int32(wd), Int32(hd), 8) else {
            throw ImageError(.tooManyPixels, "no memory for a \(wd)×\(hd) page")
        }
        pixCopyText(interpolated, pix)
        pixCopyResolution(interpolated, pix)
        pixCopyInputFormat(interpolated, pix)
        pixScaleResolution(interpolated, scale, scale)
        Self.interpolate(from: pix!, ws: ws, hs: hs, into: interpolated, wd: wd, hd: hd)
        guard sharpen else { return Image(owning: interpolated) }
        var owned: UnsafeMutablePointer<PIX>? = interpolated
        defer { pixDestroy(&owned) }
        // pixUnsharpMaskingGray2D: the two pixels along each edge are the interpolated ones (and the
        // copy's template takes their text, resolution and input format too).
        guard let sharpened = pixCopyBorder(nil, interpolated, 2, 2, 2, 2) else {
            throw ImageError(.tooManyPixels, "no memory for a \(wd)×\(hd) page")
        }
        Self.unsharpMask(interpolated, into: sharpened, width: wd, height: hd, fraction: 0.4)
        return Image(owning: sharpened)
    }

    /// `scaleGrayLILow`: each destination pixel from the four source pixels around its place, in
    /// sixteenths of a pixel; on the last row and column, a neighbour past the edge is the pixel
    /// itself, as in Leptonica.
    private static func interpolate(from pix: UnsafeMutablePointer<PIX>, ws: Int, hs: Int,
                                    into destination: UnsafeMutablePointer<PIX>, wd: Int, hd: Int) {
        let scx = Float(16.0 * Double(Float(ws)) / Double(Float(wd)))
        let scy = Float(16.0 * Double(Float(hs)) / Double(Float(hd)))
        let wm2 = ws - 2, hm2 = hs - 2
        // Each column's source pixel (as a byte offset in a row: Leptonica's 8 bpp pixel x is byte
        // x ^ 3 of its row on a little-endian machine), the next one's, and the sixteenths between.
        var left = [Int](repeating: 0, count: wd), right = [Int](repeating: 0, count: wd), fractions = [UInt32](repeating: 0, count: wd)
        for j in 0..<wd {
            let xpm = Int(Int32(scx * Float(j)))
            let xp = xpm >> 4
            left[j] = xp ^ 3
            right[j] = xp > wm2 ? xp ^ 3 : (xp + 1) ^ 3
            fractions[j] = UInt32(xpm & 0x0F)
        }
        let source = pixGetData(pix)!, destinationBytes = UnsafeMutableRawPointer(pixGetData(destination)!)
        let sourceWords = Int(pixGetWpl(pix)), destinationStride = Int(pixGetWpl(destination)) * 4
        // (16 − xf)(16 − yf)·v00 + xf(16 − yf)·v10 + (16 − xf)yf·v01 + xf·yf·v11 is
        // (16 − xf)·c(x) + xf·c(x + 1), where c = (16 − yf)·(row above) + yf·(row below): the same
        // integer (at most 65,280). c is worked out once per destination row for every source column,
        // in the source's order (four pixels to a word, the first in its most significant byte).
        var columns = [UInt32](repeating: 0, count: sourceWords * 4)
        columns.withUnsafeMutableBufferPointer { columns in
            left.withUnsafeBufferPointer { left in
                right.withUnsafeBufferPointer { right in
                    fractions.withUnsafeBufferPointer { fractions in
                        let c = columns.baseAddress!
                        for i in 0..<hd {
                            let ypm = Int(Int32(scy * Float(i)))
                            let yp = ypm >> 4, yf = UInt32(ypm & 0x0F)
                            let top = source + yp * sourceWords
                            // Past the last row, the row below is the row itself.
                            let below = yp > hm2 ? top : top + sourceWords
                            for k in 0..<sourceWords {
                                let a = top[k], b = below[k]
                                for byte in 0..<4 {
                                    let shift = UInt32(24 - 8 * byte)
                                    // Stored at x ^ 3, where the columns' offsets point.
                                    c[(4 * k + byte) ^ 3] = (16 &- yf) &* ((a >> shift) & 0xFF) &+ yf &* ((b >> shift) & 0xFF)
                                }
                            }
                            let out = destinationBytes + i * destinationStride
                            for j in 0..<wd {
                                let xf = fractions[j]
                                let sum = (16 &- xf) &* c[left[j]] &+ xf &* c[right[j]]
                                out.storeBytes(of: UInt8(truncatingIfNeeded: (sum &+ 128) >> 8), toByteOffset: j ^ 3, as: UInt8.self)
                            }
                        }
                    }
                }
            }
        }
    }

    /// `pixUnsharpMaskingGray2D` with a half-width of 2: inside a 2-pixel border, each pixel I with
    /// the mean L of its 5 × 5 neighbourhood becomes I + fraction (I − L), rounded and clipped.
    /// Leptonica sums in floats; every sum here is an integer under 2^24, which a float holds exactly,
    /// so the integer sums are its sums, and the mean and the rounding are computed as it does.
    private static func unsharpMask(_ source: UnsafeMutablePointer<PIX>, into destination: UnsafeMutablePointer<PIX>,
                                    width w: Int, height h: Int, fraction: Float) {
        let sourceBytes = UnsafeRawPointer(pixGetData(source)!), destinationBytes = UnsafeMutableRawPointer(pixGetData(destination)!)
        let sourceStride = Int(pixGetWpl(source)) * 4, destinationStride = Int(pixGetWpl(destination)) * 4
        // Each row's sums of 5 neighbours across, for the columns 2..<w-2, in a ring of the 5 rows a
        // destination row needs (row i in slot i % 5): the sums are integers, so their order is free.
        var across = [Int32](repeating: 0, count: w * 5)
        across.withUnsafeMutableBufferPointer { across in
            let sums = across.baseAddress!
            func sumAcross(_ i: Int) {
                let row = sourceBytes + i * sourceStride
                let into = sums + (i % 5) * w
                @inline(__always) func level(_ x: Int) -> Int32 { Int32(row.load(fromByteOffset: x ^ 3, as: UInt8.self)) }
                var sum = level(0) &+ level(1) &+ level(2) &+ level(3) &+ level(4)
                into[2] = sum
                for j in 3..<(w - 2) {
                    sum = sum &+ level(j + 2) &- level(j - 3)
                    into[j] = sum
                }
            }
            for i in 0..<4 { sumAcross(i) }
            let norm = Float(1.0 / 25.0)
            for i in 2..<(h - 2) {
                sumAcross(i + 2)
                let row = sourceBytes + i * sourceStride
                let out = destinationBytes + i * destinationStride
                let r0 = sums, r1 = r0 + w, r2 = r1 + w, r3 = r2 + w, r4 = r3 + w
                for j in 2..<(w - 2) {
                    let sum = r0[j] &+ r1[j] &+ r2[j] &+ r3[j] &+ r4[j]
                    let mean = norm * Float(sum)
                    let level = Float(row.load(fromByteOffset: j ^ 3, as: UInt8.self))
                    // (l_int32)(sval + fract * (sval - val) + 0.5): float arithmetic, then 0.5 added in double.
                    let value = Int32(Double(level + fraction * (level - mean)) + 0.5)
                    out.storeBytes(of: UInt8(truncatingIfNeeded: value < 0 ? 0 : value > 255 ? 255 : value), toByteOffset: j ^ 3, as: UInt8.self)
                }
            }
        }
    }
}
