import QuireWire

/// The Quire result as ALTO 4.4 (https://www.loc.gov/standards/alto/, namespace `ns-v4#`), for the
/// library and archive tools (METS/ALTO viewers, Europeana, eScriptorium) that read ALTO rather than hOCR.
///
/// Tesseract's `altorenderer.cpp` writes ALTO 3; this follows version 4 of the standard and keeps
/// Tesseract's nesting otherwise, because its readers expect that nesting:
/// - ALTO has no paragraph element, so each Quire block is a `ComposedBlock` and each of its paragraphs
///   a `TextBlock` in it (Tesseract does the same): both levels survive, and a reader that only knows
///   `TextBlock` finds the paragraphs. `TextLine` > `String`, with an `SP` between two words of a line.
/// - The engine goes in `Description/Processing` (category `contentGeneration`), the element ALTO 4
///   introduced; `OCRProcessing`, which Tesseract writes, is deprecated since 4.0.
/// - Boxes are the result's (pixels of the upright uploaded page, `MeasurementUnit` pixel); `WC` is
///   the word's confidence 0…1 (Tesseract writes `0.` followed by its percentage, so 0.5 for 5%), left
///   out when the result has none; `PC` is the page's. `BASELINE` is the line's two baseline points,
///   `x1,y1 x2,y2` (ALTO 4.2's point list). `LANG` (`xsd:language`, BCP-47) is the language
///   identified in the text where there is one, else the model that read it: the page's on `Page`
///   (4.4, "default language for text on this page"), with the other languages written below it in
///   `OTHERLANGS` (4.4); the paragraph's on every `TextBlock` (as Tesseract writes it; `ComposedBlock`
///   has no `LANG`); a line's on `TextLine` and a word's on `String` only where it differs from what
///   it is in, since ALTO's lower levels override the default above them. `BASEDIRECTION` (4.3) marks
///   lines that do not read left to right.
/// - IDs are unique in a document of many pages (`xsd:ID`): each is prefixed with the page number and
///   counts through the page (`string_2_7` is page 2's seventh word); `PHYSICAL_IMG_NR` is the page's
///   1-based number in the uploaded file.
/// - Blocks, paragraphs and lines without words are left out (a `TextLine` needs a `String`).
public enum ALTO {
    /// ALTO 4's namespace.
    public static let namespace = "http://www.loc.gov/standards/alto/ns-v4#"

    /// A whole ALTO document: `Description` (pixels, the image's name when given, the engine from
    /// `result.metadata.engine`), then every page of the result in `Layout`.
    public static func document(_ result: OCRResult, imageName: String? = nil) -> String {
        let engine = result.metadata.engine
        let name = engine.split(separator: " ", maxSplits: 1).first.map(String.init) ?? engine
        let version = engine.split(separator: " ", maxSplits: 1).dropFirst().first.map(String.init)
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <alto xmlns="\(namespace)" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="\(namespace) http://www.loc.gov/alto/v4/alto-4-4.xsd" SCHEMAVERSION="4.4">
            \t<Description>
            \t\t<MeasurementUnit>pixel</MeasurementUnit>

            """
        if let imageName {
            out += "\t\t<sourceImageInformation>\n\t\t\t<fileName>\(RenderingSupport.escaped(imageName))</fileName>\n\t\t</sourceImageInformation>\n"
        }
        out += "\t\t<Processing ID=\"OCR_0\">\n"
        out += "\t\t\t<processingCategory>contentGeneration</processingCategory>\n"
        out += "\t\t\t<processingSoftware>\n"
        out += "\t\t\t\t<softwareName>\(RenderingSupport.escaped(name))</softwareName>\n"
        if let version { out += "\t\t\t\t<softwareVersion>\(RenderingSupport.escaped(version))</softwareVersion>\n" }
        out += "\t\t\t</processingSoftware>\n"
        out += "\t\t</Processing>\n"
        out += "\t</Description>\n\t<Layout>\n"
        for page in result.pages {
            out += self.page(page)
        }
        out += "\t</Layout>\n</alto>\n"
        return out
    }

    /// One page's `<Page>` element, as Tesseract's `GetAltoText` returns it: the fragment `document`
    /// puts in `Layout`, and what the `ocr` service returns per page.
    public static func page(_ page: OCRResult.Page) -> String {
        let p = page.pageNumber
        let pageLanguage = DetectedLanguages.main(page)
        let levels = DetectedLanguages.Levels(page)
        // Everything below the page, written first so that the page can list its other languages.
        var body = ""
        var others: [String] = []
        func lang(_ language: String?, unless parent: String?) -> String {
            guard let language, language != parent else { return "" }
            if language != pageLanguage, !others.contains(language) { others.append(language) }
            return " LANG=\"\(RenderingSupport.escaped(language))\""
        }
        var blockCount = 0, paragraphCount = 0, lineCount = 0, wordCount = 0
        for block in page.blocks where block.hasWords {
            blockCount += 1
            body += "\t\t\t\t<ComposedBlock ID=\"cblock_\(p)_\(blockCount)\"\(position(block.boundingBox))>\n"
            let blockLanguage = levels.own(block) ?? pageLanguage
            for paragraph in block.paragraphs where paragraph.hasWords {
                paragraphCount += 1
                let ownLanguage = levels.own(paragraph)
                let language = ownLanguage ?? blockLanguage
                body += "\t\t\t\t\t<TextBlock ID=\"block_\(p)_\(paragraphCount)\"\(position(paragraph.boundingBox))"
                body += lang(language, unless: nil)
                body += ">\n"
                for line in paragraph.lines where line.hasWords {
                    lineCount += 1
                    let lineLanguage = levels.own(line) ?? language
                    var out = "\t\t\t\t\t\t<TextLine ID=\"line_\(p)_\(lineCount)\"\(position(line.boundingBox))"
                    if let baseline = line.baseline {
                        out += " BASELINE=\"\(baseline.start.x),\(baseline.start.y) \(baseline.end.x),\(baseline.end.y)\""
                    }
                    if ["rtl", "ttb", "btt"].contains(line.direction) {
                        out += " BASEDIRECTION=\"\(line.direction)\""
                    }
                    out += lang(lineLanguage, unless: language)
                    out += ">\n"
                    for (index, word) in line.words.enumerated() {
                        wordCount += 1
                        out += "\t\t\t\t\t\t\t<String ID=\"string_\(p)_\(wordCount)\"\(position(word.boundingBox))"
                        if let confidence = word.confidence { out += " WC=\"\(score(confidence))\"" }
                        out += " CONTENT=\"\(RenderingSupport.escaped(word.text))\""
                        out += lang(levels.own(word, in: line), unless: lineLanguage)
                        out += "/>"
                        if index + 1 < line.words.count {
                            out += space(between: word.boundingBox, and: line.words[index + 1].boundingBox, vertical: line.direction == "ttb")
                        }
                        out += "\n"
                    }
                    out += "\t\t\t\t\t\t</TextLine>\n"
                    body += out
                }
                body += "\t\t\t\t\t</TextBlock>\n"
            }
            body += "\t\t\t\t</ComposedBlock>\n"
        }
        for detected in page.detectedLanguages ?? [] where detected.language != pageLanguage && !others.contains(detected.language) {
            others.append(detected.language)
        }
        var out = "\t\t<Page WIDTH=\"\(page.width)\" HEIGHT=\"\(page.height)\" PHYSICAL_IMG_NR=\"\(p)\" ID=\"page_\(p)\""
        if let confidence = page.confidence { out += " PC=\"\(score(confidence))\"" }
        if let pageLanguage { out += " LANG=\"\(RenderingSupport.escaped(pageLanguage))\"" }
        if !others.isEmpty { out += " OTHERLANGS=\"\(RenderingSupport.escaped(others.joined(separator: " ")))\"" }
        out += ">\n"
        out += "\t\t\t<PrintSpace HPOS=\"0\" VPOS=\"0\" WIDTH=\"\(page.width)\" HEIGHT=\"\(page.height)\">\n"
        out += body
        out += "\t\t\t</PrintSpace>\n\t\t</Page>\n"
        return out
    }

    /// ` HPOS="x" VPOS="y" WIDTH="w" HEIGHT="h"`.
    private static func position(_ box: OCRResult.Box) -> String {
        " HPOS=\"\(box.x)\" VPOS=\"\(box.y)\" WIDTH=\"\(box.width)\" HEIGHT=\"\(box.height)\""
    }

    /// A confidence 0…1 to four decimals at most (`0.9612`, `1`), clamped to the schema's range.
    private static func score(_ value: Double) -> String {
        RenderingSupport.short(min(1, max(0, value)), places: 4)
    }

    /// The `SP` between two words of a line: the gap from the end of the first to the start of the
    /// next, whichever side the next is on (right-to-left lines run leftwards), never negative where
    /// the boxes overlap; down the page for a top-to-bottom line.
    private static func space(between a: OCRResult.Box, and b: OCRResult.Box, vertical: Bool) -> String {
        if vertical {
            let top = min(a.y + a.height, b.y + b.height)
            let height = max(0, max(a.y, b.y) - top)
            return "<SP HEIGHT=\"\(height)\" VPOS=\"\(top)\" HPOS=\"\(a.x)\"/>"
        }
        let left = b.x >= a.x ? a.x + a.width : b.x + b.width
        let width = max(0, (b.x >= a.x ? b.x : a.x) - left)
        return "<SP WIDTH=\"\(width)\" VPOS=\"\(a.y)\" HPOS=\"\(left)\"/>"
    }
}
