import QuireWire

/// What the hOCR, ALTO and TSV renderers share: markup-safe text and numbers written the same way on
/// every machine (no locale, no `String(format:)`), so that a rendering is a pure function of the result.
enum RenderingSupport {
    /// `text` made safe for XML character data and for attribute values in either quote style.
    ///
    /// Tesseract's `HOcrEscape` escapes the five markup characters; this does the same and also drops
    /// what XML 1.0 cannot carry at all (C0 controls other than tab, newline and carriage return, lone
    /// surrogates cannot occur in a Swift `String`, U+FFFE and U+FFFF), and writes tab, newline and
    /// carriage return as character references so that an attribute keeps them instead of a parser
    /// turning them into spaces.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t": out += "&#9;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `x` with exactly `places` decimals, rounded half away from zero, `-` only when something non-zero
    /// is left: C's `%.*f` for the magnitudes a page has (Tesseract's TSV prints `%f`, six places).
    static func fixed(_ x: Double, places: Int) -> String {
        guard x.isFinite else { return "0" }
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let magnitude = (x.magnitude * Double(scale)).rounded()
        // Beyond what an Int64 holds no page coordinate or confidence goes; say it plainly rather than trap.
        guard magnitude < 9e18 else { return String(x) }
        let scaled = Int64(magnitude)
        let whole = String(scaled / scale)
        var digits = ""
        if places > 0 {
            let fraction = String(scaled % scale)
            digits = "." + String(repeating: "0", count: places - fraction.count) + fraction
        }
        return (x < 0 && scaled != 0 ? "-" : "") + whole + digits
    }

    /// `x` rounded to `places` decimals and written without trailing zeros (`0.015`, `-9`, `12.5`): what a
    /// C++ stream prints for Tesseract's `round(v * 1000) / 1000`, except that it never writes `-0`.
    static func short(_ x: Double, places: Int = 3) -> String {
        var s = fixed(x, places: places)
        if s.contains(".") {
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
        }
        return s
    }

    /// A confidence (0…1) as Tesseract's integer percentage: truncated like its `static_cast<int>`, after
    /// a nudge so that 0.57 (whose product with 100 is 56.99999…) is 57 and not 56; clamped to 0…100.
    static func percent(_ confidence: Double) -> Int {
        guard confidence.isFinite else { return 0 }
        return Int(min(100, max(0, (confidence * 100 + 1e-6).rounded(.down))))
    }

    /// The box's right and bottom edges (exclusive, like Tesseract's), for `bbox x0 y0 x1 y1`.
    static func corners(_ box: OCRResult.Box) -> (left: Int, top: Int, right: Int, bottom: Int) {
        (box.x, box.y, box.x + box.width, box.y + box.height)
    }
}

/// Tesseract's renderers walk a result iterator that never stops on an element without words, so a
/// block, paragraph or line with none is neither written nor counted; these say which ones to keep.
extension OCRResult.Line {
    var hasWords: Bool { !words.isEmpty }
}

extension OCRResult.Paragraph {
    var hasWords: Bool { lines.contains(where: \.hasWords) }
}

extension OCRResult.Block {
    var hasWords: Bool { paragraphs.contains(where: \.hasWords) }
}
