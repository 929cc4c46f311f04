import Foundation
import QuireWire

/// A searchable PDF: each page's image with the recognised words over it as invisible text, so the
/// text can be selected, searched and copied in any viewer.
///
/// The text layer is built the way Tesseract's PDF renderer builds its own (its `GlyphLessFont`,
/// `pdf.ttf` from the tessdata folder, as a Type 0 font with UTF-16 codes, a ToUnicode map, text
/// render mode 3 and each word stretched to its box), but from the Quire result: the words land
/// where the result says, in the upright page at the uploaded resolution, whatever Quire scaled,
/// cropped or deskewed to read it. (Tesseract's renderer can only put the text where the engine saw
/// it, over the very image the engine read.)
public enum SearchablePDF {
    /// An image XObject's data.
    public struct Image: Sendable {
        public enum Filter: String, Sendable { case dct = "DCTDecode", flate = "FlateDecode" }
        public var filter: Filter
        public var width: Int
        public var height: Int
        public var bitsPerComponent: Int
        /// 1 (DeviceGray) or 3 (DeviceRGB).
        public var components: Int
        public var predictor: Bool
        public var data: [UInt8]

        public init(filter: Filter, width: Int, height: Int, bitsPerComponent: Int, components: Int, predictor: Bool, data: [UInt8]) {
            self.filter = filter
            self.width = width
            self.height = height
            self.bitsPerComponent = bitsPerComponent
            self.components = components
            self.predictor = predictor
            self.data = data
        }
    }

    /// One page: the result page and its upright image (page.width × page.height pixels), or no image:
    /// the text alone, to be laid over a page that has its picture already (a PDF upload's).
    public struct Page: Sendable {
        public var page: OCRResult.Page
        public var image: Image?
        /// Pixels per inch, for the page size in points.
        public var dpi: Double

        public init(page: OCRResult.Page, image: Image?, dpi: Double) {
            self.page = page
            self.image = image
            self.dpi = dpi
        }
    }

    /// The PDF file. `font` is the glyphless TrueType font; `compress` deflates streams (zlib) when
    /// given — without it streams are stored as they are.
    public static func document(_ pages: [Page], font: [UInt8], producer: String, compress: (([UInt8]) -> [UInt8]?)? = nil) -> [UInt8] {
        var writer = Writer()
        let catalog = writer.reserve(), pagesObject = writer.reserve(), info = writer.reserve()
        let type0 = writer.reserve(), cidFont = writer.reserve(), descriptor = writer.reserve()
        let fontFile = writer.reserve(), toUnicode = writer.reserve(), cidToGID = writer.reserve()

        var pageObjects: [Int] = []
        for page in pages {
            let pageObject = writer.reserve(), contents = writer.reserve()
            pageObjects.append(pageObject)
            let scale = 72 / (page.dpi > 0 ? page.dpi : 72)
            let width = Double(page.page.width) * scale, height = Double(page.page.height) * scale
            let image = page.image.map { _ in writer.reserve() }
            writer.object(pageObject, """
                << /Type /Page /Parent \(pagesObject) 0 R /MediaBox [0 0 \(number(width)) \(number(height))] /Contents \(contents) 0 R \
                /Resources << \(image.map { "/XObject << /Im1 \($0) 0 R >> " } ?? "")/Font << /f-0-0 \(type0) 0 R >> >> >>
                """)
            let text = textLayer(page.page, scale: scale, width: width, height: height)
            writer.stream(contents, "", Array(((image == nil ? "" : "q \(number(width)) 0 0 \(number(height)) 0 0 cm /Im1 Do Q\n") + text).utf8),
                          compress: compress)
            guard let image, let i = page.image else { continue }
            var dictionary = "/Type /XObject /Subtype /Image /Width \(i.width) /Height \(i.height) /BitsPerComponent \(i.bitsPerComponent) "
                + "/ColorSpace \(i.components == 1 ? "/DeviceGray" : "/DeviceRGB") /Filter /\(i.filter.rawValue) /Interpolate true"
            if i.predictor {
                dictionary += " /DecodeParms << /Predictor 14 /Columns \(i.width) /Colors \(i.components) /BitsPerComponent \(i.bitsPerComponent) >>"
            }
            writer.stream(image, dictionary, i.data, compress: nil)
        }
        writer.object(catalog, "<< /Type /Catalog /Pages \(pagesObject) 0 R >>")
        writer.object(pagesObject, "<< /Type /Pages /Kids [\(pageObjects.map { "\($0) 0 R" }.joined(separator: " "))] /Count \(pageObjects.count) >>")
        writer.object(info, "<< /Producer \(literal(producer)) >>")
        writer.object(type0, """
            << /Type /Font /Subtype /Type0 /BaseFont /GlyphLessFont /Encoding /Identity-H /DescendantFonts [\(cidFont) 0 R] /ToUnicode \(toUnicode) 0 R >>
            """)
        writer.object(cidFont, """
            << /Type /Font /Subtype /CIDFontType2 /BaseFont /GlyphLessFont /CIDToGIDMap \(cidToGID) 0 R \
            /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor \(descriptor) 0 R /DW \(glyphWidth) >>
            """)
        writer.object(descriptor, """
            << /Type /FontDescriptor /FontName /GlyphLessFont /Ascent 1000 /CapHeight 1000 /Descent -1 /Flags 5 \
            /FontBBox [0 0 \(glyphWidth) 1000] /ItalicAngle 0 /StemV 80 /FontFile2 \(fontFile) 0 R >>
            """)
        writer.stream(fontFile, "/Length1 \(font.count)", font, compress: nil)
        writer.stream(toUnicode, "", Array(toUnicodeMap.utf8), compress: compress)
        // Every code shows the font's one glyph (glyph 1), as in Tesseract's renderer.
        writer.stream(cidToGID, "", [UInt8]((0..<65_536).flatMap { _ in [0, 1] as [UInt8] }), compress: compress)
        return writer.finish(root: catalog, info: info)
    }

    /// The glyph's advance in the font's 1000 units: half the font size.
    static let glyphWidth = 500

    /// Invisible text (render mode 3) for every word: upright, its baseline the bottom of its line's
    /// box, the font as tall as that box, stretched (`Tz`) to the word's width; a space after each
    /// word but a line's last, so that copied text has its spaces.
    static func textLayer(_ page: OCRResult.Page, scale: Double, width: Double, height: Double) -> String {
        var out = "BT\n3 Tr\n"
        for block in page.blocks {
            for paragraph in block.paragraphs {
                for line in paragraph.lines {
                    for (index, word) in line.words.enumerated() where !word.text.isEmpty {
                        // Upright, across the word's columns of its line's box: text set at an angle
                        // is what poppler (pdftotext, many viewers) splits into single letters, and
                        // words of a leaning line at different heights into different lines.
                        let p = corners(OCRResult.Box(x: word.boundingBox.x, y: line.boundingBox.y,
                                                      width: word.boundingBox.width, height: line.boundingBox.height))
                        func pdf(_ q: OCRResult.Point) -> (x: Double, y: Double) { (Double(q.x) * scale, height - Double(q.y) * scale) }
                        let bottomLeft = pdf(p[3]), bottomRight = pdf(p[2]), topLeft = pdf(p[0])
                        let dx = bottomRight.x - bottomLeft.x, dy = bottomRight.y - bottomLeft.y
                        let length = (dx * dx + dy * dy).squareRoot()
                        let size = max(1, ((topLeft.x - bottomLeft.x) * (topLeft.x - bottomLeft.x) + (topLeft.y - bottomLeft.y) * (topLeft.y - bottomLeft.y)).squareRoot())
                        guard length > 0 else { continue }
                        let (cos, sin) = (dx / length, dy / length)
                        let units = Array(word.text.utf16)
                        let stretch = 100 * length / (Double(units.count) * size * Double(glyphWidth) / 1000)
                        let last = index == line.words.count - 1
                        let hex = (units + (last ? [] : [0x20])).map { String(format: "%04X", Int($0)) }.joined()
                        out += "/f-0-0 \(number(size)) Tf \(number(stretch)) Tz \(number(cos)) \(number(sin)) \(number(-sin)) \(number(cos)) "
                            + "\(number(bottomLeft.x)) \(number(bottomLeft.y)) Tm <\(hex)> Tj\n"
                    }
                }
            }
        }
        return out + "ET\n"
    }

    /// A box's corners, clockwise from top-left (for results older than leaning polygons).
    public static func corners(_ b: OCRResult.Box) -> [OCRResult.Point] {
        [.init(x: b.x, y: b.y), .init(x: b.x + b.width, y: b.y), .init(x: b.x + b.width, y: b.y + b.height), .init(x: b.x, y: b.y + b.height)]
    }

    /// Codes are UTF-16 code units; each maps to itself.
    static let toUnicodeMap = """
        /CIDInit /ProcSet findresource begin
        12 dict begin
        begincmap
        /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
        /CMapName /Adobe-Identity-UCS def
        /CMapType 2 def
        1 begincodespacerange
        <0000> <FFFF>
        endcodespacerange
        1 beginbfrange
        <0000> <FFFF> <0000>
        endbfrange
        endcmap
        CMapName currentdict /CMap defineresource pop
        end
        end

        """

    /// A PDF number: at most three decimals, no exponent.
    static func number(_ x: Double) -> String {
        guard x.isFinite else { return "0" }
        let s = String(format: "%.3f", x)
        var t = Substring(s)
        while t.contains("."), t.last == "0" { t = t.dropLast() }
        if t.last == "." { t = t.dropLast() }
        return t == "-0" ? "0" : String(t)
    }

    /// A PDF literal string, ASCII only.
    static func literal(_ s: String) -> String {
        "(" + s.unicodeScalars.map { c -> String in
            switch c {
            case "(", ")", "\\": return "\\" + String(c)
            case " "..."~": return String(c)
            default: return "?"
            }
        }.joined() + ")"
    }

    /// Objects in order, their offsets, the cross-reference table.
    struct Writer {
        var bytes: [UInt8] = Array("%PDF-1.5\n%\u{00E2}\u{00E3}\u{00CF}\u{00D3}\n".unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) })
        var offsets: [Int: Int] = [:]
        var count = 0

        mutating func reserve() -> Int { count += 1; return count }

        mutating func object(_ number: Int, _ body: String) {
            offsets[number] = bytes.count
            bytes += Array("\(number) 0 obj\n\(body)\nendobj\n".utf8)
        }

        mutating func stream(_ number: Int, _ dictionary: String, _ data: [UInt8], compress: (([UInt8]) -> [UInt8]?)?) {
            var data = data
            var dictionary = dictionary
            if let compress, let deflated = compress(data) {
                data = deflated
                dictionary += " /Filter /FlateDecode"
            }
            offsets[number] = bytes.count
            bytes += Array("\(number) 0 obj\n<< \(dictionary) /Length \(data.count) >>\nstream\n".utf8)
            bytes += data
            bytes += Array("\nendstream\nendobj\n".utf8)
        }

        mutating func finish(root: Int, info: Int) -> [UInt8] {
            let xref = bytes.count
            var table = "xref\n0 \(count + 1)\n0000000000 65535 f \n"
            for n in 1...max(1, count) {
                table += String(format: "%010d 00000 n \n", offsets[n] ?? 0)
            }
            table += "trailer\n<< /Size \(count + 1) /Root \(root) 0 R /Info \(info) 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
            return bytes + Array(table.utf8)
        }
    }
}
