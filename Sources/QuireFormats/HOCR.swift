import QuireWire

/// The Quire result as hOCR 1.2 (http://kba.github.io/hocr-spec/1.2/), laid out as Tesseract's
/// `hocrrenderer.cpp` writes it, because the tools that read hOCR (hocr-tools, OCRmyPDF's hocrtransform,
/// viewers) were written against Tesseract's output.
///
/// It is rendered from the result rather than taken from Tesseract, so that its boxes are the result's
/// boxes (pixels of the upright uploaded page) whatever scaling or deskewing Quire did before reading,
/// and so that the CLI and the gateway can render a stored result again.
///
/// What differs from Tesseract's own hOCR, and why:
/// - `lang` holds the result's BCP-47 tags (`en`, `hi`), as HTML's `lang` wants, not Tesseract's pack
///   names (`eng`); so `ocrp_lang` (and `ocrp_dir`) are listed in `ocr-capabilities`, as the spec requires
///   of a document that carries those attributes. It is the language identified in the text where there
///   is one, else the model that read it. Every `ocr_par` has it, as in Tesseract's output (tools look
///   for it there); a page, block, line or word has it only where it differs from what it is in (HTML's
///   `lang` is inherited): a page from the document's, a block from its page's, a line from its
///   paragraph's, a word from its line's.
/// - A word without a confidence has no `x_wconf` (Tesseract always has one); no `x_size`,
///   `x_descenders`, `x_ascenders`, font or character boxes: the result does not keep them.
/// - `image` is in the page's title only when the caller names the image (Tesseract writes `"unknown"`).
/// - A line reading against its paragraph's direction gets its own `dir`, since the result keeps the
///   direction per line (Tesseract puts `dir` on paragraphs and words).
///
/// As in Tesseract, ids count through the page (`block_1_2` is the page's second block, whatever
/// paragraph or line it is in), prefixed with the page number; `ppageno` is that number less one (the
/// spec's physical page number counts the front cover as 0); the page's `bbox` is `0 0 width height`.
public enum HOCR {
    /// What this renderer can write, for `<meta name='ocr-capabilities'>`.
    public static let capabilities = "ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf ocrp_lang ocrp_dir"

    /// A whole XHTML document: Tesseract's header (`ocr-system` from `result.metadata.engine`), every page
    /// of the result, the closing tags. `imageName` is the document's `<title>` and each page's `image`.
    public static func document(_ result: OCRResult, imageName: String? = nil) -> String {
        let language = result.metadata.languages.first.map { " xml:lang=\"\(RenderingSupport.escaped($0))\" lang=\"\(RenderingSupport.escaped($0))\"" } ?? ""
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
                "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
            <html xmlns="http://www.w3.org/1999/xhtml"\(language)>
             <head>
              <title>\(RenderingSupport.escaped(imageName ?? ""))</title>
              <meta http-equiv="Content-Type" content="text/html;charset=utf-8"/>
              <meta name='ocr-system' content='\(RenderingSupport.escaped(result.metadata.engine))' />
              <meta name='ocr-capabilities' content='\(capabilities)'/>
              <meta name='ocr-number-of-pages' content='\(result.pages.count)'/>

            """
        if !result.metadata.languages.isEmpty {
            out += "  <meta name='ocr-langs' content='\(RenderingSupport.escaped(result.metadata.languages.joined(separator: " ")))'/>\n"
        }
        out += " </head>\n <body>\n"
        for page in result.pages {
            out += self.page(page, imageName: imageName, documentLanguage: result.metadata.languages.first)
        }
        out += " </body>\n</html>\n"
        return out
    }

    /// One page's `<div class='ocr_page'>` and everything in it, as Tesseract's `GetHOCRText` returns it
    /// (the fragment `document` puts in `<body>`, and what the `ocr` service returns per page).
    /// `documentLanguage` is the `lang` of the document the fragment goes into: the page says its own
    /// language where it differs (a fragment on its own, nil here, always says it when known).
    public static func page(_ page: OCRResult.Page, imageName: String? = nil, documentLanguage: String? = nil) -> String {
        let p = page.pageNumber
        let image = imageName.map { "image \"\(RenderingSupport.escaped($0))\"; " } ?? ""
        let pageLanguage = DetectedLanguages.main(page)
        let levels = DetectedLanguages.Levels(page)
        var out = "  <div class='ocr_page' id='page_\(p)'\(lang(pageLanguage, unless: documentLanguage)) title='\(image)bbox 0 0 \(page.width) \(page.height); ppageno \(p - 1)'>\n"
        var blockCount = 0, paragraphCount = 0, lineCount = 0, wordCount = 0
        for block in page.blocks where block.hasWords {
            blockCount += 1
            let blockLanguage = levels.own(block) ?? pageLanguage
            out += "   <div class='ocr_carea' id='block_\(p)_\(blockCount)'\(lang(blockLanguage, unless: pageLanguage ?? documentLanguage))\(title(block.boundingBox))>"
            for paragraph in block.paragraphs where paragraph.hasWords {
                paragraphCount += 1
                let lines = paragraph.lines.filter(\.hasWords)
                let rightToLeft = lines.allSatisfy { $0.direction == "rtl" }
                let ownLanguage = levels.own(paragraph)
                let language = ownLanguage ?? blockLanguage
                out += "\n    <p class='ocr_par'"
                if rightToLeft { out += " dir='rtl'" }
                out += " id='par_\(p)_\(paragraphCount)'\(lang(language, unless: nil))"
                out += "\(title(paragraph.boundingBox))>"
                for line in lines {
                    lineCount += 1
                    let lineLanguage = levels.own(line) ?? language
                    out += "\n     <span class='ocr_line'"
                    if line.direction == "rtl", !rightToLeft { out += " dir='rtl'" }
                    if line.direction == "ltr", rightToLeft { out += " dir='ltr'" }
                    out += " id='line_\(p)_\(lineCount)'\(lang(lineLanguage, unless: language))\(title(line.boundingBox, baseline: baseline(line)))>"
                    for word in line.words {
                        wordCount += 1
                        let (l, t, r, b) = RenderingSupport.corners(word.boundingBox)
                        out += "\n      <span class='ocrx_word' id='word_\(p)_\(wordCount)' title='bbox \(l) \(t) \(r) \(b)"
                        if let confidence = word.confidence { out += "; x_wconf \(RenderingSupport.percent(confidence))" }
                        out += "'"
                        out += lang(levels.own(word, in: line), unless: lineLanguage)
                        out += ">\(RenderingSupport.escaped(word.text))</span>"
                    }
                    out += "\n     </span>"
                }
                out += "\n    </p>\n"
            }
            out += "   </div>\n"
        }
        out += "  </div>\n"
        return out
    }

    /// The line's `baseline` property, `slope offset`, as Tesseract computes it: the line through the
    /// baseline's two points in the coordinates of the line's box with its bottom-left corner as origin,
    /// `y = slope·x + offset`, so `offset` is how far the baseline's left end lies below the box's bottom
    /// (negative: above it); both rounded to three decimals. None without a baseline, or for a vertical one.
    public static func baseline(_ line: OCRResult.Line) -> (slope: Double, offset: Double)? {
        guard let baseline = line.baseline, baseline.start.x != baseline.end.x else { return nil }
        let left = line.boundingBox.x, bottom = line.boundingBox.y + line.boundingBox.height
        let x1 = Double(baseline.start.x - left), y1 = Double(baseline.start.y - bottom)
        let x2 = Double(baseline.end.x - left), y2 = Double(baseline.end.y - bottom)
        let slope = (y2 - y1) / (x2 - x1)
        let offset = y1 - slope * x1
        return ((slope * 1000).rounded() / 1000, (offset * 1000).rounded() / 1000)
    }

    /// ` lang='…'` when `language` is known and is not `parent` (which the element inherits); else nothing.
    private static func lang(_ language: String?, unless parent: String?) -> String {
        guard let language, language != parent else { return "" }
        return " lang='\(RenderingSupport.escaped(language))'"
    }

    /// ` title="bbox l t r b[; baseline s o]"`: double quotes here, as Tesseract writes blocks, paragraphs
    /// and lines (pages and words take single quotes), for the tools that match its text.
    private static func title(_ box: OCRResult.Box, baseline: (slope: Double, offset: Double)? = nil) -> String {
        let (l, t, r, b) = RenderingSupport.corners(box)
        var s = " title=\"bbox \(l) \(t) \(r) \(b)"
        if let baseline { s += "; baseline \(RenderingSupport.short(baseline.slope)) \(RenderingSupport.short(baseline.offset))" }
        return s + "\""
    }
}
