import Testing
import Imaging
import QuireRecognition
import Tesseract

@Suite("Ink: how dark the print is, and the tone curve that darkens it")
struct InkTests {
    /// An 8-bit grey PGM of one row: `ink` pixels of grey `inkLevel`, then `paper` pixels of white.
    static func page(inkLevels: [UInt8], paper: Int) throws -> Image {
        let pixels = inkLevels + [UInt8](repeating: 255, count: paper)
        let bytes = Array("P5\n\(pixels.count) 1\n255\n".utf8) + pixels
        return try Image.decode(bytes, format: .pnm)
    }

    @Test("Ink: the median grey on the dark side of Otsu's threshold; paper: the darkest tenth of the light side")
    func tones() throws {
        // Faded thermal print: strokes of grey 140–160 on white paper.
        let faded = try Self.page(inkLevels: [140, 150, 150, 160, 150], paper: 95)
        #expect(try faded.tones().ink == 150)
        #expect(try faded.tones().paper == 255)
        // Laser print: black strokes.
        let laser = try Self.page(inkLevels: [0, 10, 20, 10, 10], paper: 95)
        #expect(try laser.tones().ink == 10)
        // Grainy paper: a fifth of it at grey 190.
        let grainy = try Self.page(inkLevels: [0, 0, 0, 0, 0] + [UInt8](repeating: 190, count: 20), paper: 75)
        #expect(try grainy.tones().paper == 190)
    }

    @Test("The tone curve in^3 darkens the mid greys and keeps black and white")
    func toneCurve() throws {
        let image = try Self.page(inkLevels: [0, 64, 128, 192], paper: 1)
        let darker = try image.toneCurve(exponent: 3)
        let levels = (0..<5).map { darker.greyLevel(x: $0, y: 0) }
        // 255 · (x/255)^3, rounded: 0, 4, 32, 109, 255 (±1 for Leptonica's rounding).
        for (level, expected) in zip(levels, [0, 4, 32, 109, 255]) {
            #expect(abs(level - expected) <= 1, "got \(levels)")
        }
        // Exponent 1 leaves the page as it is.
        let same = try image.toneCurve(exponent: 1)
        #expect((0..<5).map { same.greyLevel(x: $0, y: 0) } == [0, 64, 128, 192, 255])
    }

    @Test("With white at the paper's level, the paper and its grain turn white and the curve starts from there")
    func whitenedPaper() throws {
        let image = try Self.page(inkLevels: [0, 100, 150, 200, 230], paper: 1)
        let out = try image.toneCurve(exponent: 3, white: 200)
        let levels = (0..<6).map { out.greyLevel(x: $0, y: 0) }
        // 255 · (x/200)^3 up to 200, white above: 0, 32, 108, 255, 255, 255 (±1 for Leptonica's rounding).
        for (level, expected) in zip(levels, [0, 32, 108, 255, 255, 255]) {
            #expect(abs(level - expected) <= 1, "got \(levels)")
        }
    }
}
