import Foundation

/// Writes small PDFs for the tests: pages with Helvetica text (visible or invisible) and grey pictures,
/// each object at the offset its cross-reference table gives, as a PDF writer must.
struct TestPDF {
    struct Text {
        var x: Double, y: Double, size: Double
        var string: String
        /// 0 fill (visible), 3 invisible (an OCR layer).
        var mode = 0
    }

    struct Picture {
        /// Where it stands on the page, points from the bottom left.
        var x: Double, y: Double, width: Double, height: Double
        /// Its pixels: rows of grey bytes, top row first.
        var columns: Int, rows: Int
        var grey: [UInt8]
    }

    struct Page {
        var width = 612.0, height = 792.0
        var rotate = 0
        var texts: [Text] = []
        var pictures: [Picture] = []
        /// Content-stream operators drawn after the rest, as they are.
        var operators = ""
    }

    var pages: [Page]
    /// A standard security handler whose user password is not empty: opening needs a password.
    var encrypted = false
    /// The page tree's /Count, when it should lie.
    var declaredCount: Int?

    func bytes() -> [UInt8] {
        var objects: [[UInt8]] = []  // object n is objects[n - 1]
        func add(_ body: [UInt8]) -> Int { objects.append(body); return objects.count }
        func text(_ s: String) -> [UInt8] { Array(s.utf8) }
        let catalog = add([]), tree = add([]), font = add(text("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"))
        var kids: [Int] = []
        for page in pages {
            var content = ""
            var xobjects = ""
            for (i, picture) in page.pictures.enumerated() {
                let stream = text("<< /Type /XObject /Subtype /Image /Width \(picture.columns) /Height \(picture.rows) /ColorSpace /DeviceGray /BitsPerComponent 8 /Length \(picture.grey.count) >>\nstream\n") + picture.grey + text("\nendstream")
                let id = add(stream)
                xobjects += "/Im\(i) \(id) 0 R "
                content += "q \(picture.width) 0 0 \(picture.height) \(picture.x) \(picture.y) cm /Im\(i) Do Q\n"
            }
            for t in page.texts {
                let escaped = t.string.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "(", with: "\\(").replacingOccurrences(of: ")", with: "\\)")
                content += "BT /F1 \(t.size) Tf \(t.mode) Tr \(t.x) \(t.y) Td (\(escaped)) Tj ET\n"
            }
            content += page.operators
            let contents = add(text("<< /Length \(content.utf8.count) >>\nstream\n\(content)endstream"))
            let rotate = page.rotate == 0 ? "" : " /Rotate \(page.rotate)"
            let xobjectEntry = xobjects.isEmpty ? "" : " /XObject << \(xobjects)>>"
            kids.append(add(text("<< /Type /Page /Parent \(tree) 0 R /MediaBox [0 0 \(page.width) \(page.height)]\(rotate) /Resources << /Font << /F1 \(font) 0 R >>\(xobjectEntry) >> /Contents \(contents) 0 R >>")))
        }
        objects[catalog - 1] = text("<< /Type /Catalog /Pages \(tree) 0 R >>")
        objects[tree - 1] = text("<< /Type /Pages /Kids [\(kids.map { "\($0) 0 R" }.joined(separator: " "))] /Count \(declaredCount ?? kids.count) >>")
        var encrypt = ""
        if encrypted {
            // Revision 2 (RC4, 40 bits) with an /O and /U no empty password matches.
            let u = String(repeating: "7A", count: 32), o = String(repeating: "3C", count: 32)
            let id = add(text("<< /Filter /Standard /V 1 /R 2 /O <\(o)> /U <\(u)> /P -4 >>"))
            encrypt = " /Encrypt \(id) 0 R /ID [<00112233445566778899AABBCCDDEEFF> <00112233445566778899AABBCCDDEEFF>]"
        }
        var out = text("%PDF-1.7\n%\u{E2}\u{E3}\u{CF}\u{D3}\n")
        var offsets: [Int] = []
        for (i, body) in objects.enumerated() {
            offsets.append(out.count)
            out += text("\(i + 1) 0 obj\n") + body + text("\nendobj\n")
        }
        let xref = out.count
        out += text("xref\n0 \(objects.count + 1)\n0000000000 65535 f \n")
        for offset in offsets { out += text(String(format: "%010d 00000 n \n", offset)) }
        out += text("trailer\n<< /Size \(objects.count + 1) /Root \(catalog) 0 R\(encrypt) >>\nstartxref\n\(xref)\n%%EOF\n")
        return out
    }

    /// A `columns`×`rows` grey picture: white, with black bars across every `period`-th band of rows.
    static func stripes(columns: Int, rows: Int, period: Int = 8) -> [UInt8] {
        var grey = [UInt8](repeating: 255, count: columns * rows)
        for y in 0..<rows where (y / period) % 2 == 1 {
            for x in columns / 10..<columns * 9 / 10 { grey[y * columns + x] = 0 }
        }
        return grey
    }
}
