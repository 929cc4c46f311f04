import Foundation
import QuireSupport
import QuireWire
import Imaging
import QuireRecognition

/// Builds the Quire result, the one place that does: a recognized page's hierarchy with coordinates
/// back at the uploaded resolution, polygons, BCP-47 languages, word breaks; and the whole result
/// around the pages, with its metadata.
enum ResultBuilder {
    /// The result of a file (an image, a PDF) from its pages, with `metadata.engine` naming the
    /// engines that read them (`noEngine` where none did: a PDF read from its text layers alone) and
    /// `encodeMs` what building it took.
    static func result(pages: [OCRResult.Page], engines: [String], noEngine: @autoclosure () -> String, languages: [String],
                       mode: OCRRequest.Mode, format: String, pageCount: Int, decodeSeconds: Double, recognizeSeconds: Double,
                       steps: [OCRResult.Step]) -> OCRResult {
        let encodeStart = Instant.now()
        var result = OCRResult(
            text: pages.map(\.text).joined(separator: "\u{0C}"),
            pages: pages,
            metadata: .init(engine: engines.isEmpty ? noEngine() : engines.joined(separator: " + "), languages: languages.map(Languages.bcp47(forTesseract:)),
                            mode: mode.rawValue, format: format, pageCount: pageCount,
                            timings: .init(decodeMs: decodeSeconds * 1_000, recognizeMs: recognizeSeconds * 1_000, encodeMs: 0),
                            steps: steps))
        result.metadata.timings.encodeMs = Instant.now().seconds(since: encodeStart) * 1_000
        return result
    }

    /// - Parameters:
    ///   - toPage: recognition pixels → upright page coordinates (undoes the scale and any deskew).
    ///   - deskewAngle: the skew corrected before reading, degrees.
    static func page(_ page: RecognizedPage, number: Int, size: (width: Int, height: Int), toPage: Affine, scale: Double, quarterTurns: Int,
                     mirrored: Bool, deskewAngle corrected: Double, transform: Affine) -> OCRResult.Page {
        func box(_ b: PixelBox) -> OCRResult.Box {
            let (x0, y0, x1, y1) = toPage.pixelBox(x: Double(b.x), y: Double(b.y), width: Double(b.width), height: Double(b.height), within: size)
            return OCRResult.Box(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
        }
        // The recognised rectangle's own corners in page coordinates, clockwise from top-left: on a
        // deskewed page they lean with the text, where the box around them would not (Azure's and
        // Cloud Vision's quads are made from these).
        let turned = abs(toPage.b) > 1e-9 || abs(toPage.d) > 1e-9
        func polygon(_ r: PixelBox, _ b: OCRResult.Box, corners: [(x: Double, y: Double)]? = nil) -> [OCRResult.Point] {
            if let corners, corners.count == 4 {
                return corners.map { c in
                    let p = toPage.apply(c.x, c.y)
                    return .init(x: min(size.width, max(0, Int(p.x.rounded()))), y: min(size.height, max(0, Int(p.y.rounded()))))
                }
            }
            guard turned else {
                return [.init(x: b.x, y: b.y), .init(x: b.x + b.width, y: b.y),
                        .init(x: b.x + b.width, y: b.y + b.height), .init(x: b.x, y: b.y + b.height)]
            }
            return [(r.x, r.y), (r.x + r.width, r.y), (r.x + r.width, r.y + r.height), (r.x, r.y + r.height)].map { x, y in
                let p = toPage.apply(Double(x), Double(y))
                return .init(x: min(size.width, max(0, Int(p.x.rounded()))), y: min(size.height, max(0, Int(p.y.rounded()))))
            }
        }
        let slack = max(2, Int((2 * scale).rounded(.up)))
        func point(_ x: Int, _ y: Int) -> OCRResult.Point {
            let p = toPage.apply(Double(x), Double(y))
            return .init(x: Int(p.x.rounded()), y: Int(p.y.rounded()))
        }
        func languages(_ words: [RecognizedElement]) -> [String] {
            var seen: [String] = []
            for word in words {
                if let l = word.language.map(Languages.bcp47(forTesseract:)), !seen.contains(l) { seen.append(l) }
            }
            return seen
        }
        func clean(_ text: String) -> String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

        var blocks: [OCRResult.Block] = []
        var allWords: [RecognizedElement] = []
        var confidences: [Double] = []
        for block in page.blocks {
            var paragraphs: [OCRResult.Paragraph] = []
            var blockWords: [RecognizedElement] = []
            for paragraph in block.children {
                var lines: [OCRResult.Line] = []
                var paragraphWords: [RecognizedElement] = []
                for (lIndex, line) in paragraph.children.enumerated() {
                    let lastLine = lIndex == paragraph.children.count - 1
                    var words: [OCRResult.Word] = []
                    for (wIndex, word) in line.children.enumerated() {
                        let lastWord = wIndex == line.children.count - 1
                        let text = clean(word.text)
                        let brk = !lastWord ? "space" : (lastLine ? "paragraph" : (text.hasSuffix("-") ? "hyphen" : "line"))
                        let b = box(word.box)
                        words.append(OCRResult.Word(
                            text: text, boundingBox: b, polygon: polygon(word.box, b, corners: word.corners), confidence: word.confidence,
                            languages: word.language.map { [Languages.bcp47(forTesseract: $0)] } ?? [],
                            break: brk,
                            symbols: word.children.map { s in
                                let sb = box(s.box)
                                return OCRResult.Symbol(text: clean(s.text), boundingBox: sb, polygon: polygon(s.box, sb, corners: s.corners), confidence: s.confidence)
                            }))
                        if let c = word.confidence { confidences.append(c) }
                    }
                    // Tesseract's line box can leave out a pixel or two (uploaded) of its words' boxes: the
                    // line is grown to cover them, not further (chi_sim's word boxes can be far off).
                    let lineBox = line.children.reduce(line.box) { $0.covering($1.box, slack: slack) }
                    let lb = box(lineBox)
                    lines.append(OCRResult.Line(
                        text: clean(line.text), boundingBox: lb, polygon: polygon(lineBox, lb, corners: line.corners), confidence: line.confidence,
                        languages: languages(line.children),
                        baseline: line.baseline.map { OCRResult.Baseline(start: point($0.x1, $0.y1), end: point($0.x2, $0.y2)) },
                        direction: page.writingDirection, words: words))
                    paragraphWords += line.children
                }
                let pb = box(paragraph.box)
                paragraphs.append(OCRResult.Paragraph(text: clean(paragraph.text), boundingBox: pb, polygon: polygon(paragraph.box, pb),
                                                      confidence: paragraph.confidence, languages: languages(paragraphWords), lines: lines))
                blockWords += paragraphWords
            }
            let bb = box(block.box)
            blocks.append(OCRResult.Block(text: clean(block.text), boundingBox: bb, polygon: polygon(block.box, bb), confidence: block.confidence,
                                          languages: languages(blockWords), paragraphs: paragraphs))
            allWords += blockWords
        }
        // Tesseract's page iterator reports no skew outside OSD layout analysis (0 for a page turned
        // by 3°). Measure what is left from the baselines instead: the median angle, in degrees, by
        // which the lines rise to the right (turn the page clockwise by this much to level them).
        var angles: [Double] = []
        for block in page.blocks {
            for paragraph in block.children {
                for line in paragraph.children {
                    if let b = line.baseline, b.x2 - b.x1 > 0 {
                        angles.append(atan2(Double(b.y1 - b.y2), Double(b.x2 - b.x1)) * 180 / .pi)
                    }
                }
            }
        }
        angles.sort()
        let deskewAngle = corrected + (angles.isEmpty ? page.deskewAngle : angles[angles.count / 2])
        let width = size.width
        let height = size.height
        return OCRResult.Page(
            pageNumber: number, width: width, height: height, unit: "pixel",
            rotation: ((quarterTurns % 4) + 4) % 4 * 90, mirrored: mirrored,
            deskewAngle: (deskewAngle * 100).rounded() / 100,
            transform: transform.array, recognitionScale: (scale * 10_000).rounded() / 10_000,
            text: page.text, confidence: confidences.isEmpty ? nil : confidences.reduce(0, +) / Double(confidences.count),
            languages: languages(allWords), blocks: blocks, renderings: nil)
    }
}
