internal import CLeptonica

extension Image {
    /// An RGB image made from rows of 4-byte pixels in blue, green, red, unused order (what PDF
    /// renderers such as PDFium write), at `resolution` pixels per inch.
    public static func bgrx(_ pixels: UnsafeRawPointer, width: Int, height: Int, stride: Int, resolution: Int) throws(ImageError) -> Image {
        guard width > 0, height > 0, stride >= width * 4 else {
            throw ImageError(.internalFailure, "a \(width)×\(height) pixel buffer with rows of \(stride) bytes")
        }
        guard let pix = pixCreate(Int32(width), Int32(height), 32) else {
            throw ImageError(.tooManyPixels, "no memory for a \(width)×\(height) page")
        }
        let words = Int(pixGetWpl(pix))
        let data = pixGetData(pix)!
        for y in 0..<height {
            let source = pixels.advanced(by: y * stride).assumingMemoryBound(to: UInt8.self)
            let row = data.advanced(by: y * words)
            for x in 0..<width {
                let p = source.advanced(by: x * 4)
                // Leptonica's 32-bit pixel: red in the most significant byte, then green, blue, alpha.
                row[x] = UInt32(p[2]) << 24 | UInt32(p[1]) << 16 | UInt32(p[0]) << 8 | 0xFF
            }
        }
        pixSetResolution(pix, Int32(resolution), Int32(resolution))
        pixSetSpp(pix, 3)
        return Image(owning: pix)
    }
}

extension Image {
    /// The pixels as rows of red, green, blue bytes, whatever the image's depth (grey repeats its level
    /// in each; transparency is blended onto white), for engines that read colour themselves.
    public func rgb() throws(ImageError) -> [UInt8] {
        let colour = try plain()
        guard let source = colour.depth == 32 ? colour.pix : pixConvertTo32(colour.pix) else {
            throw ImageError(.internalFailure, "conversion to RGB failed")
        }
        var converted: UnsafeMutablePointer<PIX>? = source == colour.pix ? nil : source
        defer { if converted != nil { pixDestroy(&converted) } }
        let width = self.width, height = self.height
        let words = Int(pixGetWpl(source))
        let data = pixGetData(source)!
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        bytes.withUnsafeMutableBufferPointer { out in
            for y in 0..<height {
                let row = data.advanced(by: y * words)
                for x in 0..<width {
                    let p = row[x], o = (y * width + x) * 3
                    out[o] = UInt8(truncatingIfNeeded: p >> 24)
                    out[o + 1] = UInt8(truncatingIfNeeded: p >> 16)
                    out[o + 2] = UInt8(truncatingIfNeeded: p >> 8)
                }
            }
        }
        return bytes
    }
}
