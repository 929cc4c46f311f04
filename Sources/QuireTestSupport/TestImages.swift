import Foundation
import Imaging
internal import CLeptonica

/// Images the tests draw themselves: white paper with black boxes where glyphs stand, enough for the
/// pipeline's probe to measure a glyph height and a text box, and encoded as a real PNG.
public enum TestImages {
    /// A `width`×`height` PNG with rows of `glyphHeight`-high glyphs (each 0.6 as wide, a third apart)
    /// filling the box `text` (fractions of the page: x, y, width, height), rows 1.8 glyphs apart.
    /// With `blankRowEvery` n, every n-th row of the page is left white, cutting each glyph into slices
    /// (as a damaged GIF's lost rows or a dot-matrix printer's dead pin do).
    public static func page(width: Int, height: Int, glyphHeight: Int, text: (x: Double, y: Double, width: Double, height: Double) = (0.1, 0.1, 0.8, 0.8),
                            resolution: Int = 300, blankRowEvery: Int = 0) throws -> [UInt8] {
        var pixels = pagePixels(width: width, height: height, glyphHeight: glyphHeight, text: text)
        if blankRowEvery > 0 {
            for row in stride(from: 0, to: height, by: blankRowEvery) {
                pixels.replaceSubrange(row * width * 4..<(row + 1) * width * 4, with: repeatElement(255, count: width * 4))
            }
        }
        return try png(pixels, width: width, height: height, resolution: resolution)
    }

    /// A PNG of random grey noise: each pixel's level is `page`'s (white without one: 4-byte pixels as
    /// ``pagePixels``) moved by up to `amplitude` either way, from a fixed seed.
    public static func noise(width: Int, height: Int, amplitude: Int = 255, page: [UInt8]? = nil, seed: UInt64 = 1) throws -> [UInt8] {
        var pixels = page ?? [UInt8](repeating: 255, count: width * height * 4)
        var state = seed
        for p in stride(from: 0, to: pixels.count, by: 4) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407  // PCG's LCG step
            let shift = Int((state >> 33) % UInt64(2 * amplitude + 1)) - amplitude
            let level = UInt8(clamping: Int(pixels[p]) + shift)
            pixels[p] = level; pixels[p + 1] = level; pixels[p + 2] = level
        }
        return try png(pixels, width: width, height: height, resolution: 300)
    }

    private static func png(_ pixels: [UInt8], width: Int, height: Int, resolution: Int) throws -> [UInt8] {
        let image = try pixels.withUnsafeBytes { raw in
            try Image.bgrx(raw.baseAddress!, width: width, height: height, stride: width * 4, resolution: resolution)
        }
        return try image.png()
    }

    /// ``page(width:height:glyphHeight:text:resolution:)``'s pixels: rows of 4 bytes a pixel (blue,
    /// green, red, unused).
    public static func pagePixels(width: Int, height: Int, glyphHeight: Int,
                                  text: (x: Double, y: Double, width: Double, height: Double) = (0.1, 0.1, 0.8, 0.8)) -> [UInt8] {
        let stride = width * 4
        var pixels = [UInt8](repeating: 255, count: stride * height)
        let glyphWidth = max(1, glyphHeight * 6 / 10), pitch = glyphWidth + max(1, glyphWidth / 3)
        let x0 = Int(text.x * Double(width)), x1 = Int((text.x + text.width) * Double(width))
        var y = Int(text.y * Double(height))
        let y1 = Int((text.y + text.height) * Double(height))
        while y + glyphHeight <= y1 {
            var x = x0
            while x + glyphWidth <= x1 {
                for row in y..<(y + glyphHeight) {
                    for column in x..<(x + glyphWidth) {
                        let p = row * stride + column * 4
                        pixels[p] = 0; pixels[p + 1] = 0; pixels[p + 2] = 0
                    }
                }
                // A space after every fifth glyph, as between words.
                x += (x - x0) / pitch % 5 == 4 ? 2 * pitch : pitch
            }
            y += glyphHeight * 18 / 10
        }
        return pixels
    }
}

extension TestImages {
    /// The repository's sample page (samples/hello.png).
    public static func sample() throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../samples/hello.png")
        return Array(try Data(contentsOf: url))
    }

    /// samples/hello.png four times, at two sizes, in two columns and two rows, at 300 dpi: blocks,
    /// paragraphs and lines of several words, and a last paragraph. With `rules`, ruled like a table:
    /// a frame around it, a rule across between the rows of tiles and one down between the columns,
    /// each 3 pixels wide (far longer than the quarter inch Tesseract's line finder looks for). With
    /// `picture`, a block of random grey noise stands where the lower left tile would: a picture beside
    /// text for the layout analysis.
    public static func helloTiles(rules: Bool = false, picture: Bool = false) throws -> Image {
        let tile = try Image.decode(try sample(), format: .png).grey()
        let small = try tile.scaled(by: 0.7)
        guard let canvas = pixCreate(Int32(tile.width * 2), Int32(tile.height * 2), 8) else {
            throw ImageError(.internalFailure, "no canvas")
        }
        var c: UnsafeMutablePointer<PIX>? = canvas
        defer { pixDestroy(&c) }
        pixSetAll(canvas)
        var tiles = [(tile, 0, 0), (small, tile.width, 40), (small, 0, tile.height), (tile, tile.width, tile.height + 30)]
        if picture {
            tiles.remove(at: 2)
            var state: UInt64 = 1
            for y in (tile.height + 20)..<(tile.height * 2 - 20) {
                for x in 20..<(tile.width - 20) {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407  // PCG's LCG step
                    pixSetPixel(canvas, Int32(x), Int32(y), UInt32(state >> 56))
                }
            }
        }
        for (image, x, y) in tiles {
            let png = try image.png()
            var source = png.withUnsafeBufferPointer { pixReadMem($0.baseAddress, $0.count) }
            defer { pixDestroy(&source) }
            guard pixGetDepth(source) == 8 else { throw ImageError(.internalFailure, "a tile is not 8-bit grey") }
            pixRasterop(canvas, Int32(x), Int32(y), Int32(image.width), Int32(image.height), PIX_SRC, source, 0, 0)
        }
        if rules {
            let (w, h) = (tile.width * 2, tile.height * 2)
            for (x, y, width, height) in [(4, 4, w - 8, 3), (4, h - 7, w - 8, 3), (4, 4, 3, h - 8), (w - 7, 4, 3, h - 8),
                                          (4, tile.height + 15, w - 8, 3), (tile.width - 2, 4, 3, h - 8)] {
                pixRasterop(canvas, Int32(x), Int32(y), Int32(width), Int32(height), PIX_CLR, nil, 0, 0)
            }
        }
        var data: UnsafeMutablePointer<UInt8>?
        var size = 0
        pixWriteMemPng(&data, &size, canvas, 0)
        defer { free(data) }
        guard let data else { throw ImageError(.internalFailure, "the canvas could not be written") }
        let page = try Image.decode(Array(UnsafeBufferPointer(start: data, count: size)), format: .png)
        page.setResolution(300)
        return page
    }
}
