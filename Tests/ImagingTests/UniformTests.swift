import Imaging
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
