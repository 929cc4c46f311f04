import QuireWire

/// The Quire result as Tesseract's TSV, row for row as `TessBaseAPI::GetTSVText` writes it, because
/// scripts (and pytesseract's `image_to_data`) split those columns by position and by level.
///
/// One row per page (level 1), block (2), paragraph (3), line (4) and word (5): `page_num` is the page's
/// number in the uploaded file; `block_num` counts blocks in the page, `par_num` paragraphs in the block,
/// `line_num` lines in the paragraph, `word_num` words in the line, all from 1, and 0 at the levels above
/// (the page row is `1 n 0 0 0 0`). `left top width height` are the result's boxes (pixels of the upright
/// uploaded page; the page row is `0 0 width height`). `conf` is `-1` except on words, where it is the
/// confidence as a percentage with six decimals (C++ `std::to_string` of Tesseract's float), or `-1`
/// when the result has none. `text` is empty except on words. Every row ends with a newline.
///
/// Differences from Tesseract: a block, paragraph or line without words is skipped and not counted
/// (Tesseract's iterator never stops on one either), and a tab or line break inside a word becomes a
/// space so that a word cannot break its row (Tesseract's words have none).
public enum TSV {
    /// The column names, the first line of a TSV file (without its newline).
    public static let header = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"

    /// A whole TSV file: the header line, then every page's rows.
    public static func document(_ result: OCRResult) -> String {
        var out = header + "\n"
        for page in result.pages { out += self.page(page) }
        return out
    }

    /// One page's rows without the header, as Tesseract's `GetTSVText` returns them: what the `ocr`
    /// service returns per page, and what `document` puts after the header.
    public static func page(_ page: OCRResult.Page) -> String {
        let n = page.pageNumber
        var out = row(1, n, 0, 0, 0, 0, OCRResult.Box(x: 0, y: 0, width: page.width, height: page.height), conf: "-1", text: "")
        var blockNumber = 0
        for block in page.blocks where block.hasWords {
            blockNumber += 1
            out += row(2, n, blockNumber, 0, 0, 0, block.boundingBox, conf: "-1", text: "")
            var paragraphNumber = 0
            for paragraph in block.paragraphs where paragraph.hasWords {
                paragraphNumber += 1
                out += row(3, n, blockNumber, paragraphNumber, 0, 0, paragraph.boundingBox, conf: "-1", text: "")
                var lineNumber = 0
                for line in paragraph.lines where line.hasWords {
                    lineNumber += 1
                    out += row(4, n, blockNumber, paragraphNumber, lineNumber, 0, line.boundingBox, conf: "-1", text: "")
                    for (index, word) in line.words.enumerated() {
                        let conf = word.confidence.map { RenderingSupport.fixed($0 * 100, places: 6) } ?? "-1"
                        out += row(5, n, blockNumber, paragraphNumber, lineNumber, index + 1, word.boundingBox, conf: conf, text: cell(word.text))
                    }
                }
            }
        }
        return out
    }

    private static func row(_ level: Int, _ page: Int, _ block: Int, _ paragraph: Int, _ line: Int, _ word: Int,
                            _ box: OCRResult.Box, conf: String, text: String) -> String {
        "\(level)\t\(page)\t\(block)\t\(paragraph)\t\(line)\t\(word)\t\(box.x)\t\(box.y)\t\(box.width)\t\(box.height)\t\(conf)\t\(text)\n"
    }

    /// `text` with the characters that would end a cell or a row (tab, and whatever `Character.isNewline`
    /// calls a line break: readers split rows on more than `\n`) turned into spaces.
    private static func cell(_ text: String) -> String {
        func breaks(_ c: Character) -> Bool { c == "\t" || c.isNewline }
        guard text.contains(where: breaks) else { return text }
        return String(text.map { breaks($0) ? " " : $0 })
    }
}
