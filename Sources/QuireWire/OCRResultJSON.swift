import Foundation

// The OCR result's JSON, written directly: the same bytes as Foundation's `JSONEncoder` with
// `[.sortedKeys, .withoutEscapingSlashes]` gives for the synthesized `Codable` conformance (keys in
// UTF-8 order, an absent optional left out, `NullWhenAbsent` as `null`, a Double's `description`
// without a trailing ".0", strings escaped as swift-foundation's `JSONWriter` escapes them), at a
// fraction of the cost: `JSONEncoder` boxes every value of the page's hierarchy before it writes a
// byte, about 90 ms for an A4 page's 0.5 MB, 4% of the page. A test compares the two on real results.

/// A Double that JSON cannot hold (NaN, an infinity): `JSONEncoder` refuses them too.
public struct NonConformingNumber: Error, Sendable, Equatable {
    public let value: Double
}

extension OCRResult {
    /// The result as `JSONEncoder` with sorted keys and unescaped slashes encodes it.
    public func jsonBytes() throws(NonConformingNumber) -> [UInt8] {
        var w = ResultJSONWriter()
        w.bytes.reserveCapacity(4_096 + text.utf8.count * 256)
        try w.result(self)
        return w.bytes
    }
}

struct ResultJSONWriter {
    var bytes: [UInt8] = []

    // MARK: the result's types, members in sorted order

    mutating func result(_ r: OCRResult) throws(NonConformingNumber) {
        bytes.append(UInt8(ascii: "{"))
        if let attachments = r.attachments {
            key("attachments", first: true)
            array(attachments) { w, a in w.attachment(a) }
            key("metadata")
        } else {
            key("metadata", first: true)
        }
        try metadata(r.metadata)
        key("pages")
        try array(r.pages) { w, p throws(NonConformingNumber) in try w.page(p) }
        key("text")
        string(r.text)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func attachment(_ a: OCRResult.Attachment) {
        key("frame", open: true); int(a.frame)
        key("mediaType"); string(a.mediaType)
        key("output"); string(a.output)
        key("size"); int(a.size)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func box(_ b: OCRResult.Box) {
        key("height", open: true); int(b.height)
        key("width"); int(b.width)
        key("x"); int(b.x)
        key("y"); int(b.y)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func point(_ p: OCRResult.Point) {
        key("x", open: true); int(p.x)
        key("y"); int(p.y)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func polygon(_ points: [OCRResult.Point]) {
        array(points) { w, p in w.point(p) }
    }

    mutating func symbol(_ s: OCRResult.Symbol) throws(NonConformingNumber) {
        key("boundingBox", open: true); box(s.boundingBox)
        key("confidence"); try optionalDouble(s.confidence)
        key("polygon"); polygon(s.polygon)
        key("text"); string(s.text)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func word(_ v: OCRResult.Word) throws(NonConformingNumber) {
        key("boundingBox", open: true); box(v.boundingBox)
        key("break"); string(v.break)
        key("confidence"); try optionalDouble(v.confidence)
        key("languages"); strings(v.languages)
        key("polygon"); polygon(v.polygon)
        key("symbols"); try array(v.symbols) { w, s throws(NonConformingNumber) in try w.symbol(s) }
        key("text"); string(v.text)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func line(_ l: OCRResult.Line) throws(NonConformingNumber) {
        if let baseline = l.baseline {
            key("baseline", open: true)
            key("end", open: true); point(baseline.end)
            key("start"); point(baseline.start)
            bytes.append(UInt8(ascii: "}"))
            key("boundingBox")
        } else {
            key("boundingBox", open: true)
        }
        box(l.boundingBox)
        key("confidence"); try optionalDouble(l.confidence)
        try detectedLanguages(l.detectedLanguages)
        key("direction"); string(l.direction)
        key("languages"); strings(l.languages)
        key("polygon"); polygon(l.polygon)
        key("text"); string(l.text)
        key("words"); try array(l.words) { w, v throws(NonConformingNumber) in try w.word(v) }
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func paragraph(_ p: OCRResult.Paragraph) throws(NonConformingNumber) {
        key("boundingBox", open: true); box(p.boundingBox)
        key("confidence"); try optionalDouble(p.confidence)
        try detectedLanguages(p.detectedLanguages)
        key("languages"); strings(p.languages)
        key("lines"); try array(p.lines) { w, l throws(NonConformingNumber) in try w.line(l) }
        key("polygon"); polygon(p.polygon)
        key("text"); string(p.text)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func block(_ b: OCRResult.Block) throws(NonConformingNumber) {
        key("boundingBox", open: true); box(b.boundingBox)
        key("confidence"); try optionalDouble(b.confidence)
        try detectedLanguages(b.detectedLanguages)
        key("languages"); strings(b.languages)
        key("paragraphs"); try array(b.paragraphs) { w, p throws(NonConformingNumber) in try w.paragraph(p) }
        key("polygon"); polygon(b.polygon)
        key("text"); string(b.text)
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func page(_ p: OCRResult.Page) throws(NonConformingNumber) {
        key("blocks", open: true); try array(p.blocks) { w, b throws(NonConformingNumber) in try w.block(b) }
        key("confidence"); try optionalDouble(p.confidence)
        key("deskewAngle"); try double(p.deskewAngle)
        try detectedLanguages(p.detectedLanguages)
        if let documents = p.documents {
            // Rare and small: Foundation writes them, in the same form.
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(documents) else { throw NonConformingNumber(value: .nan) }
            key("documents"); bytes.append(contentsOf: data)
        }
        if let error = p.error {
            key("error")
            key("code", open: true); string(error.code.rawValue)
            key("message"); string(error.message)
            bytes.append(UInt8(ascii: "}"))
        }
        key("height"); int(p.height)
        key("languages"); strings(p.languages)
        key("mirrored"); bool(p.mirrored)
        key("pageNumber"); int(p.pageNumber)
        key("recognitionScale"); try double(p.recognitionScale)
        if let renderings = p.renderings {
            key("renderings")
            bytes.append(UInt8(ascii: "{"))
            for (i, (name, value)) in sortedByKey(renderings).enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                string(name); bytes.append(UInt8(ascii: ":")); string(value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
        if let resolution = p.resolution { key("resolution"); int(resolution) }
        key("rotation"); int(p.rotation)
        key("text"); string(p.text)
        key("transform"); try array(p.transform) { w, d throws(NonConformingNumber) in try w.double(d) }
        key("unit"); string(p.unit)
        key("width"); int(p.width)
        bytes.append(UInt8(ascii: "}"))
    }

    /// `"detectedLanguages":[{"confidence":…,"language":…},…]`, left out when nil.
    mutating func detectedLanguages(_ items: [OCRResult.DetectedLanguage]?) throws(NonConformingNumber) {
        guard let items else { return }
        key("detectedLanguages")
        try array(items) { w, item throws(NonConformingNumber) in
            w.key("confidence", open: true); try w.double(item.confidence)
            w.key("language"); w.string(item.language)
            w.bytes.append(UInt8(ascii: "}"))
        }
    }

    mutating func metadata(_ m: OCRResult.Metadata) throws(NonConformingNumber) {
        key("engine", open: true); string(m.engine)
        key("format"); string(m.format)
        key("languages"); strings(m.languages)
        key("mode"); string(m.mode)
        key("pageCount"); int(m.pageCount)
        key("steps"); try array(m.steps) { w, s throws(NonConformingNumber) in try w.step(s) }
        key("timings")
        key("decodeMs", open: true); try double(m.timings.decodeMs)
        key("encodeMs"); try double(m.timings.encodeMs)
        key("recognizeMs"); try double(m.timings.recognizeMs)
        bytes.append(UInt8(ascii: "}"))
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func step(_ s: OCRResult.Step) throws(NonConformingNumber) {
        key("applied", open: true); bool(s.applied)
        key("page"); int(s.page)
        key("parameters")
        bytes.append(UInt8(ascii: "{"))
        for (i, (name, value)) in sortedByKey(s.parameters).enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            string(name); bytes.append(UInt8(ascii: ":")); try double(value)
        }
        bytes.append(UInt8(ascii: "}"))
        key("step"); string(s.step)
        bytes.append(UInt8(ascii: "}"))
    }

    // MARK: JSON values

    /// `"name":`, after a comma unless it is the object's first member (`open` also writes the `{`).
    mutating func key(_ name: StaticString, first: Bool = false, open: Bool = false) {
        if open { bytes.append(UInt8(ascii: "{")) } else if !first { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        literal(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func array<T, E: Error>(_ items: [T], _ element: (inout ResultJSONWriter, T) throws(E) -> Void) throws(E) {
        bytes.append(UInt8(ascii: "["))
        for (i, item) in items.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            try element(&self, item)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func strings(_ items: [String]) {
        array(items) { w, s in w.string(s) }
    }

    /// The members of a dictionary in the order `JSONEncoder`'s `.sortedKeys` writes them on Linux: the
    /// keys' UTF-8 bytes, lexicographically.
    func sortedByKey<V>(_ dictionary: [String: V]) -> [(String, V)] {
        dictionary.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, $0.value) }
    }

    mutating func int(_ value: Int) {
        bytes.append(contentsOf: String(value).utf8)  // a small string: no allocation
    }

    mutating func bool(_ value: Bool) {
        literal(value ? "true" : "false")
    }

    mutating func literal(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func double(_ value: Double) throws(NonConformingNumber) {
        guard value.isFinite else { throw NonConformingNumber(value: value) }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    mutating func optionalDouble(_ value: Double?) throws(NonConformingNumber) {
        if let value { try double(value) } else { literal("null") }
    }

    /// A string as swift-foundation's `JSONWriter` escapes it without escaping slashes: `"`, `\`, the
    /// short escapes `\b \f \n \r \t`, other control characters as `\u00XX` (lower-case hex), everything
    /// else as its UTF-8 bytes.
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var mark = 0
            for (i, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                if i > mark { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<i])) }
                mark = i + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
                }
            }
            if utf8.count > mark { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
