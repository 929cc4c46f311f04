import CLeptonica
@testable import Imaging
import Testing

/// A blank picture is told from one with anything on it, however thin.
@Suite struct UniformTests {
    /// A `width`×`height` picture of `fill`, with the pixels at `marks` set to their colours.
    func picture(_ width: Int, _ height: Int, fill: (UInt8, UInt8, UInt8), marks: [(x: Int, y: Int, rgb: (UInt8, UInt8, UInt8))] = []) throws -> Image {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for i in 0..<(width * height) { (pixels[4 * i], pixels[4 * i + 1], pixels[4 * i + 2]) = (fill.2, fill.1, fill.0) }
        for mark in marks {
            let i = mark.y * width + mark.x
            (pixels[4 * i], pixels[4 * i + 1], pixels[4 * i + 2]) = (mark.rgb.2, mark.rgb.1, mark.rgb.0)
        }
        return try pixels.withUnsafeBytes { try Image.bgrx($0.baseAddress!, width: width, height: height, stride: width * 4, resolution: 300) }
    }

    @Test func aBlankPageAndAFlatFillAreUniform() throws {
        #expect(try picture(2550, 3300, fill: (255, 255, 255)).isUniform(tolerance: 8))
        #expect(try picture(640, 480, fill: (200, 30, 90), marks: [(5, 5, (204, 34, 94))]).isUniform(tolerance: 8))
        #expect(try picture(640, 480, fill: (255, 255, 255)).grey().isUniform(tolerance: 8))
    }

    @Test func onePixelOfInkOnALargePageIsNotUniform() throws {
        #expect(try !picture(2550, 3300, fill: (255, 255, 255), marks: [(1_777, 2_901, (120, 120, 120))]).isUniform(tolerance: 8))
        #expect(try !picture(2550, 3300, fill: (255, 255, 255), marks: [(1_777, 2_901, (120, 120, 120))]).grey().isUniform(tolerance: 8))
    }

    @Test func colourOnlyTextIsNotUniform() throws {
        // Red on green of about the same brightness: the colours differ, so the picture is not blank.
        #expect(try !picture(300, 200, fill: (0, 150, 0), marks: [(10, 10, (255, 60, 60))]).isUniform(tolerance: 8))
    }
}

/// A page is told blank or not on its own pixels, whatever their layout: grey rows whose width is not
/// a whole number of 32-bit words, and the channels of a colour pixel each on its own.
@Suite struct UniformLayoutTests {
    /// A grey page of `width` × `height` at `level`, with one pixel set to `mark`, as PGM.
    func grey(_ width: Int, _ height: Int, level: UInt8, mark: (x: Int, y: Int, level: UInt8)?) throws -> Image {
        var pixels = [UInt8](repeating: level, count: width * height)
        if let mark { pixels[mark.y * width + mark.x] = mark.level }
        return try Image.decode(Array("P5\n\(width) \(height)\n255\n".utf8) + pixels, format: .pnm)
    }

    @Test("a mark in the last column of a row 4n+1, 4n+2 or 4n+3 pixels wide is seen", arguments: [1, 2, 3, 5, 6, 7, 33])
    func lastColumn(width: Int) throws {
        #expect(try grey(width, 9, level: 240, mark: nil).isUniform(tolerance: 0))
        #expect(try !grey(width, 9, level: 240, mark: (width - 1, 8, 10)).isUniform(tolerance: 0))
        #expect(try !grey(width, 9, level: 240, mark: (0, 8, 10)).isUniform(tolerance: 0))
        #expect(try grey(width, 9, level: 240, mark: (width - 1, 4, 232)).isUniform(tolerance: 8))
    }

    @Test("red, green and blue are each looked at", arguments: [0, 1, 2])
    func eachChannel(channel: Int) throws {
        var pixels = [UInt8](repeating: 128, count: 20 * 10 * 4)
        pixels[(7 * 20 + 13) * 4 + channel] = 20
        let marked = try pixels.withUnsafeBytes { try Image.bgrx($0.baseAddress!, width: 20, height: 10, stride: 80, resolution: 300) }
        #expect(try !marked.isUniform(tolerance: 8))
    }

    @Test("the fourth byte of a colour pixel is not colour")
    func spareByte() throws {
        let pix = try #require(pixCreate(20, 10, 32))
        let data = try #require(pixGetData(pix))
        for i in 0..<(20 * 10) { data[i] = 0x8080_8000 | UInt32(i & 0xFF) }
        pixSetSpp(pix, 3)
        #expect(try Image(owning: pix).isUniform(tolerance: 0))
    }
}
