import Foundation
import QuireWire
import Testing
@testable import QuireFormats

@Suite("Searchable PDF")
struct SearchablePDFTests {
    /// A 2×2 grey image stored as is, and a stand-in font (the real one is Tesseract's pdf.ttf).
    static let image = SearchablePDF.Image(filter: .flate, width: 2, height: 2, bitsPerComponent: 8, components: 1, predictor: false, data: [1, 2, 3, 4])
    static let font: [UInt8] = Array("not really a font".utf8)

    func bytes(dpi: Double = 72) throws -> [UInt8] {
        let page = try Fixture.result("upright.json").pages[0]
        return SearchablePDF.document([.init(page: page, image: Self.image, dpi: dpi)], font: Self.font, producer: "test")
    }

    func document(dpi: Double = 72) throws -> String { String(decoding: try bytes(dpi: dpi), as: UTF8.self) }

    @Test("the cross-reference table points at every object")
    func crossReferences() throws {
        let bytes = try bytes()
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        #expect(text(0..<9) == "%PDF-1.5\n")
        // The second line marks the file binary: four bytes above 127.
        #expect(bytes[10..<14].allSatisfy { $0 > 127 })
        let tail = text(bytes.count - 40..<bytes.count)
        #expect(tail.hasSuffix("%%EOF\n"))
        let start = try #require(tail.range(of: "startxref\n"))
        let xref = try #require(Int(tail[start.upperBound...].prefix { $0.isNumber }))
        let table = text(xref..<bytes.count).split(separator: "\n")
        #expect(table[0] == "xref")
        let count = try #require(Int(table[1].split(separator: " ")[1]))
        #expect(count == 13)
        for n in 1..<count {
            let offset = try #require(Int(table[2 + n].prefix(10)))
            #expect(text(offset..<offset + "\(n) 0 obj".utf8.count) == "\(n) 0 obj")
        }
        #expect(text(xref..<bytes.count).contains("/Size \(count) /Root 1 0 R"))
    }

    @Test("a page the size of the image at its resolution, the image drawn over all of it")
    func pageSize() throws {
        #expect(try document().contains("/MediaBox [0 0 600 400]"))
        #expect(try document(dpi: 300).contains("/MediaBox [0 0 144 96]"))
        #expect(try document().contains("q 600 0 0 400 0 0 cm /Im1 Do Q"))
    }

    @Test("every word is invisible UTF-16 text on its line's baseline, stretched to its box, spaces between words")
    func words() throws {
        let pdf = try document()
        #expect(pdf.contains("3 Tr"))
        // "Tabs": x 0…153; its line spans y 43…95, so the baseline is at 400 − 95 = 305 and the font
        // 52 points tall; 4 glyphs of 26 points stretched to 153: 147.115%. A space follows.
        #expect(pdf.contains("/f-0-0 52 Tf 147.115 Tz 1 0 0 1 0 305 Tm <00540061006200730020> Tj"))
        // "VS" ends its line: no space after it.
        #expect(pdf.contains("Tm <00560053> Tj"))
        #expect(pdf.contains("/ToUnicode") && pdf.contains("<0000> <FFFF> <0000>"))
        #expect(pdf.contains("/FontFile2") && pdf.contains("not really a font"))
    }

    @Test("streams are deflated when a compressor is given")
    func compression() throws {
        let page = try Fixture.result("upright.json").pages[0]
        let bytes = SearchablePDF.document([.init(page: page, image: Self.image, dpi: 72)], font: Self.font, producer: "test",
                                           compress: { _ in [0x78, 0x9C] })
        let pdf = String(decoding: bytes, as: UTF8.self)
        #expect(!pdf.contains("3 Tr"))
        #expect(pdf.contains("/Filter /FlateDecode /Length 2"))
    }
}
