import Foundation
import FoundationXML
import QuireWire
import Testing
@testable import QuireFormats

/// A result built by hand so that every value the renderers write is known: a 600×400 page with two
/// blocks that have words and one that has none (between them, to show it is neither written nor
/// counted). Block 1 is one paragraph of two lines: "Alpha" (0.57, whose percentage is 56.99999…), a word made of
/// the five markup characters with no confidence and no language, the Hindi "नमस्ते" (0.5, `hi`) and
/// "Bravo" (0.875); block 2 has an empty paragraph, then one line without a baseline holding "Omega"
/// (1.0). Page 3 of the same file has one word, for documents of two pages.
private enum Sample {
    static func box(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> OCRResult.Box { .init(x: x, y: y, width: w, height: h) }

    static func word(_ text: String, _ b: OCRResult.Box, _ confidence: Double?, _ languages: [String], break brk: String = "space") -> OCRResult.Word {
        .init(text: text, boundingBox: b, polygon: [], confidence: confidence, languages: languages, break: brk, symbols: [])
    }

    static func line(_ b: OCRResult.Box, baseline: (Int, Int, Int, Int)?, direction: String = "ltr", _ words: [OCRResult.Word]) -> OCRResult.Line {
        .init(text: words.map(\.text).joined(separator: " "), boundingBox: b, polygon: [], confidence: nil, languages: [],
              baseline: baseline.map { .init(start: .init(x: $0.0, y: $0.1), end: .init(x: $0.2, y: $0.3)) }, direction: direction, words: words)
    }

    static func paragraph(_ b: OCRResult.Box, _ languages: [String], _ lines: [OCRResult.Line]) -> OCRResult.Paragraph {
        .init(text: "", boundingBox: b, polygon: [], confidence: nil, languages: languages, lines: lines)
    }

    static func block(_ b: OCRResult.Box, _ paragraphs: [OCRResult.Paragraph]) -> OCRResult.Block {
        .init(text: "", boundingBox: b, polygon: [], confidence: nil, languages: [], paragraphs: paragraphs)
    }

    static func page(number: Int, width: Int, height: Int, confidence: Double?, languages: [String], _ blocks: [OCRResult.Block]) -> OCRResult.Page {
        .init(pageNumber: number, width: width, height: height, unit: "pixel", rotation: 0, mirrored: false, deskewAngle: 0,
              transform: [1, 0, 0, 0, 1, 0], recognitionScale: 1, text: "", confidence: confidence, languages: languages,
              blocks: blocks, renderings: nil)
    }

    static let markup = "a&b<c>\"d'"

    static let first = page(number: 1, width: 600, height: 400, confidence: 0.8, languages: ["en", "hi"], [
        block(box(40, 30, 500, 120), [
            paragraph(box(40, 30, 500, 120), ["en"], [
                line(box(40, 30, 300, 50), baseline: (40, 72, 340, 75), [
                    word("Alpha", box(40, 30, 120, 50), 0.57, ["en"]),
                    word(markup, box(170, 32, 90, 45), nil, [], break: "line"),
                ]),
                line(box(40, 100, 480, 50), baseline: (50, 141, 510, 139), [
                    word("नमस्ते", box(40, 100, 200, 50), 0.5, ["hi"]),
                    word("Bravo", box(260, 102, 260, 48), 0.875, ["en"], break: "paragraph"),
                ]),
            ]),
        ]),
        block(box(10, 200, 20, 20), []),
        block(box(40, 250, 300, 60), [
            paragraph(box(40, 250, 10, 10), ["en"], [line(box(40, 250, 10, 10), baseline: nil, [])]),
            paragraph(box(40, 250, 300, 60), ["en"], [
                line(box(40, 250, 300, 60), baseline: nil, [word("Omega", box(40, 250, 300, 60), 1.0, ["en"], break: "paragraph")]),
            ]),
        ]),
    ])

    static let third = page(number: 3, width: 200, height: 100, confidence: nil, languages: [], [
        block(box(5, 5, 50, 20), [paragraph(box(5, 5, 50, 20), [], [line(box(5, 5, 50, 20), baseline: (5, 22, 55, 22), [word("Zulu", box(5, 5, 50, 20), 0.42, [])])])]),
    ])

    static func result(_ pages: [OCRResult.Page]) -> OCRResult {
        OCRResult(text: "", pages: pages, metadata: .init(engine: "tesseract 5.5.0", languages: ["en", "hi"], mode: "document", format: "png",
                                                          pageCount: 3, timings: .init(decodeMs: 0, recognizeMs: 0, encodeMs: 0), steps: []))
    }
}

/// A parsed XML document: every element in document order with its attributes and the text inside it
/// (nested elements' text included), or a thrown error when the text is not well-formed XML.
struct ParsedXML {
    struct Element {
        var name: String
        var attributes: [String: String]
        var text: String
    }

    struct NotWellFormed: Error, CustomStringConvertible {
        var description: String
    }

    var elements: [Element]

    init(_ xml: String) throws {
        final class Collector: NSObject, XMLParserDelegate {
            var elements: [Element] = []
            var open: [Int] = []
            var roots = 0
            var problem: String?

            func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
                        attributes attributeDict: [String: String] = [:]) {
                if open.isEmpty { roots += 1 }
                open.append(elements.count)
                elements.append(Element(name: elementName, attributes: attributeDict, text: ""))
            }

            func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
                guard let last = open.popLast(), elements[last].name == elementName else {
                    problem = problem ?? "</\(elementName)> closes something else"
                    return
                }
            }

            func parser(_ parser: XMLParser, foundCharacters string: String) {
                for index in open { elements[index].text += string }
            }

            func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
                problem = problem ?? "line \(parser.lineNumber): \(parseError)"
            }
        }
        let parser = XMLParser(data: Data(xml.utf8))
        let collector = Collector()
        parser.delegate = collector
        let parsed = parser.parse()
        // XMLParser can return true after an error it recovered from: every sign of trouble counts.
        if !parsed || parser.parserError != nil || collector.problem != nil || !collector.open.isEmpty || collector.roots != 1 {
            throw NotWellFormed(description: collector.problem ?? parser.parserError.map { "\($0)" } ?? "unclosed elements or several roots")
        }
        elements = collector.elements
    }

    func named(_ name: String) -> [Element] { elements.filter { $0.name == name } }

    func classed(_ name: String) -> [Element] { elements.filter { $0.attributes["class"] == name } }
}

@Suite("Rendering helpers")
struct RenderingSupportTests {
    @Test("fixed decimals as C's %f writes them")
    func fixed() {
        #expect(RenderingSupport.fixed(0.57 * 100, places: 6) == "57.000000")
        #expect(RenderingSupport.fixed(87.5, places: 6) == "87.500000")
        #expect(RenderingSupport.fixed(0.0000004, places: 6) == "0.000000")
        #expect(RenderingSupport.fixed(-0.0000004, places: 6) == "0.000000")
        #expect(RenderingSupport.fixed(-8.9565, places: 3) == "-8.957")
        #expect(RenderingSupport.fixed(12, places: 0) == "12")
    }

    @Test("short numbers drop trailing zeros and never write -0")
    func short() {
        #expect(RenderingSupport.short(0.01) == "0.01")
        #expect(RenderingSupport.short(-8) == "-8")
        #expect(RenderingSupport.short(-0.0001) == "0")
        #expect(RenderingSupport.short(12.5) == "12.5")
        #expect(RenderingSupport.short(0.96123456, places: 4) == "0.9612")
    }

    @Test("percentages truncate like Tesseract's cast, without losing 0.57 to 56")
    func percent() {
        #expect(0.57 * 100 < 57 && 0.29 * 100 < 29)
        #expect(RenderingSupport.percent(0.57) == 57)
        #expect(RenderingSupport.percent(0.29) == 29)
        #expect(RenderingSupport.percent(0.875) == 87)
        #expect(RenderingSupport.percent(0.999) == 99)
        #expect(RenderingSupport.percent(1.2) == 100)
        #expect(RenderingSupport.percent(-0.1) == 0)
    }

    @Test("markup characters escaped, tab and newline kept as references, other controls dropped")
    func escaped() {
        #expect(RenderingSupport.escaped(Sample.markup) == "a&amp;b&lt;c&gt;&quot;d&#39;")
        #expect(RenderingSupport.escaped("x\u{0}\u{1B}\ty\nz\u{FFFF}") == "x&#9;y&#10;z")
        #expect(RenderingSupport.escaped("नमस्ते") == "नमस्ते")
    }
}

@Suite("hOCR from the result")
struct HOCRRenderingTests {
    @Test("a page's fragment, verbatim")
    func pageVerbatim() {
        let expected = """
              <div class='ocr_page' id='page_1' lang='en' title='image "scan &amp; co.png"; bbox 0 0 600 400; ppageno 0'>
               <div class='ocr_carea' id='block_1_1' title="bbox 40 30 540 150">
                <p class='ocr_par' id='par_1_1' lang='en' title="bbox 40 30 540 150">
                 <span class='ocr_line' id='line_1_1' title="bbox 40 30 340 80; baseline 0.01 -8">
                  <span class='ocrx_word' id='word_1_1' title='bbox 40 30 160 80; x_wconf 57'>Alpha</span>
                  <span class='ocrx_word' id='word_1_2' title='bbox 170 32 260 77'>a&amp;b&lt;c&gt;&quot;d&#39;</span>
                 </span>
                 <span class='ocr_line' id='line_1_2' title="bbox 40 100 520 150; baseline -0.004 -8.957">
                  <span class='ocrx_word' id='word_1_3' title='bbox 40 100 240 150; x_wconf 50' lang='hi'>नमस्ते</span>
                  <span class='ocrx_word' id='word_1_4' title='bbox 260 102 520 150; x_wconf 87'>Bravo</span>
                 </span>
                </p>
               </div>
               <div class='ocr_carea' id='block_1_2' title="bbox 40 250 340 310">
                <p class='ocr_par' id='par_1_2' lang='en' title="bbox 40 250 340 310">
                 <span class='ocr_line' id='line_1_3' title="bbox 40 250 340 310">
                  <span class='ocrx_word' id='word_1_5' title='bbox 40 250 340 310; x_wconf 100'>Omega</span>
                 </span>
                </p>
               </div>
              </div>

            """
        #expect(HOCR.page(Sample.first, imageName: "scan & co.png") == expected)
    }

    @Test("the document parses as XML with one element per level and the result's words")
    func documentStructure() throws {
        let xml = try ParsedXML(HOCR.document(Sample.result([Sample.first]), imageName: "scan & co.png"))
        #expect(xml.elements.first?.name == "html")
        #expect(xml.elements.first?.attributes["xml:lang"] == "en")
        #expect(xml.named("title").map(\.text) == ["scan & co.png"])
        let meta = Dictionary(xml.named("meta").compactMap { m in m.attributes["name"].map { ($0, m.attributes["content"] ?? "") } }, uniquingKeysWith: { a, _ in a })
        #expect(meta["ocr-system"] == "tesseract 5.5.0")
        #expect(meta["ocr-capabilities"] == "ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf ocrp_lang ocrp_dir")
        #expect(meta["ocr-number-of-pages"] == "1")
        #expect(meta["ocr-langs"] == "en hi")

        let pages = xml.classed("ocr_page")
        #expect(pages.map { $0.attributes["title"] } == ["image \"scan & co.png\"; bbox 0 0 600 400; ppageno 0"])
        #expect(xml.classed("ocr_carea").map { $0.attributes["id"] } == ["block_1_1", "block_1_2"])
        #expect(xml.classed("ocr_par").map { $0.attributes["id"] } == ["par_1_1", "par_1_2"])
        #expect(xml.classed("ocr_line").map { $0.attributes["title"] } == [
            "bbox 40 30 340 80; baseline 0.01 -8", "bbox 40 100 520 150; baseline -0.004 -8.957", "bbox 40 250 340 310",
        ])
        let words = xml.classed("ocrx_word")
        #expect(words.map(\.text) == ["Alpha", Sample.markup, "नमस्ते", "Bravo", "Omega"])
        #expect(words.map { $0.attributes["id"] } == ["word_1_1", "word_1_2", "word_1_3", "word_1_4", "word_1_5"])
        #expect(words.map { $0.attributes["lang"] } == [nil, nil, "hi", nil, nil])
        #expect(words.map { $0.attributes["title"] } == [
            "bbox 40 30 160 80; x_wconf 57", "bbox 170 32 260 77", "bbox 40 100 240 150; x_wconf 50",
            "bbox 260 102 520 150; x_wconf 87", "bbox 40 250 340 310; x_wconf 100",
        ])
        // What the interop tests look for in the service's output.
        let text = HOCR.page(Sample.first)
        #expect(text.contains(">Alpha<") && text.contains("bbox 0 0 600 400"))
        #expect(!text.contains("image "))
    }

    @Test("the baseline is Tesseract's slope and offset from the line box's bottom-left corner")
    func baseline() throws {
        let lines = Sample.first.blocks[0].paragraphs[0].lines
        let level = try #require(HOCR.baseline(lines[0]))
        #expect(level.slope == 0.01 && level.offset == -8)
        let falling = try #require(HOCR.baseline(lines[1]))
        #expect(falling.slope == -0.004 && falling.offset == -8.957)
        #expect(HOCR.baseline(Sample.first.blocks[2].paragraphs[1].lines[0]) == nil)
        let vertical = Sample.line(Sample.box(0, 0, 10, 100), baseline: (5, 0, 5, 100), [])
        #expect(HOCR.baseline(vertical) == nil)
    }

    @Test("two pages: ids carry each page's number and stay unique")
    func twoPages() throws {
        let xml = try ParsedXML(HOCR.document(Sample.result([Sample.first, Sample.third])))
        #expect(xml.classed("ocr_page").map { $0.attributes["title"] } == ["bbox 0 0 600 400; ppageno 0", "bbox 0 0 200 100; ppageno 2"])
        let ids = xml.elements.compactMap { $0.attributes["id"] }
        #expect(Set(ids).count == ids.count)
        #expect(xml.classed("ocrx_word").last?.attributes["id"] == "word_3_1")
        #expect(xml.classed("ocr_par").last?.attributes["lang"] == nil)
        #expect(xml.classed("ocr_line").last?.attributes["title"] == "bbox 5 5 55 25; baseline 0 -3")
    }

    @Test("right-to-left paragraphs say so; a control character in a word does not break the XML")
    func directionAndControls() throws {
        let page = Sample.page(number: 1, width: 400, height: 100, confidence: nil, languages: ["he"], [
            Sample.block(Sample.box(150, 10, 250, 40), [Sample.paragraph(Sample.box(150, 10, 250, 40), ["he"], [
                Sample.line(Sample.box(150, 10, 250, 40), baseline: (150, 45, 400, 45), direction: "rtl", [
                    Sample.word("שלום", Sample.box(300, 10, 100, 40), 0.9, ["he"]),
                    Sample.word("x\u{1}\ty", Sample.box(150, 10, 130, 40), 0.9, ["he"]),
                ]),
            ])]),
        ])
        let xml = try ParsedXML(HOCR.document(Sample.result([page])))
        #expect(xml.classed("ocr_par").first?.attributes["dir"] == "rtl")
        #expect(xml.classed("ocr_line").first?.attributes["dir"] == nil)
        #expect(xml.classed("ocrx_word").map(\.text) == ["שלום", "x\ty"])
    }
}

@Suite("ALTO from the result")
struct ALTORenderingTests {
    @Test("a page's fragment, verbatim")
    func pageVerbatim() {
        let expected = """
            \t\t<Page WIDTH="600" HEIGHT="400" PHYSICAL_IMG_NR="1" ID="page_1" PC="0.8" LANG="en" OTHERLANGS="hi">
            \t\t\t<PrintSpace HPOS="0" VPOS="0" WIDTH="600" HEIGHT="400">
            \t\t\t\t<ComposedBlock ID="cblock_1_1" HPOS="40" VPOS="30" WIDTH="500" HEIGHT="120">
            \t\t\t\t\t<TextBlock ID="block_1_1" HPOS="40" VPOS="30" WIDTH="500" HEIGHT="120" LANG="en">
            \t\t\t\t\t\t<TextLine ID="line_1_1" HPOS="40" VPOS="30" WIDTH="300" HEIGHT="50" BASELINE="40,72 340,75">
            \t\t\t\t\t\t\t<String ID="string_1_1" HPOS="40" VPOS="30" WIDTH="120" HEIGHT="50" WC="0.57" CONTENT="Alpha"/><SP WIDTH="10" VPOS="30" HPOS="160"/>
            \t\t\t\t\t\t\t<String ID="string_1_2" HPOS="170" VPOS="32" WIDTH="90" HEIGHT="45" CONTENT="a&amp;b&lt;c&gt;&quot;d&#39;"/>
            \t\t\t\t\t\t</TextLine>
            \t\t\t\t\t\t<TextLine ID="line_1_2" HPOS="40" VPOS="100" WIDTH="480" HEIGHT="50" BASELINE="50,141 510,139">
            \t\t\t\t\t\t\t<String ID="string_1_3" HPOS="40" VPOS="100" WIDTH="200" HEIGHT="50" WC="0.5" CONTENT="नमस्ते" LANG="hi"/><SP WIDTH="20" VPOS="100" HPOS="240"/>
            \t\t\t\t\t\t\t<String ID="string_1_4" HPOS="260" VPOS="102" WIDTH="260" HEIGHT="48" WC="0.875" CONTENT="Bravo"/>
            \t\t\t\t\t\t</TextLine>
            \t\t\t\t\t</TextBlock>
            \t\t\t\t</ComposedBlock>
            \t\t\t\t<ComposedBlock ID="cblock_1_2" HPOS="40" VPOS="250" WIDTH="300" HEIGHT="60">
            \t\t\t\t\t<TextBlock ID="block_1_2" HPOS="40" VPOS="250" WIDTH="300" HEIGHT="60" LANG="en">
            \t\t\t\t\t\t<TextLine ID="line_1_3" HPOS="40" VPOS="250" WIDTH="300" HEIGHT="60">
            \t\t\t\t\t\t\t<String ID="string_1_5" HPOS="40" VPOS="250" WIDTH="300" HEIGHT="60" WC="1" CONTENT="Omega"/>
            \t\t\t\t\t\t</TextLine>
            \t\t\t\t\t</TextBlock>
            \t\t\t\t</ComposedBlock>
            \t\t\t</PrintSpace>
            \t\t</Page>

            """
        #expect(ALTO.page(Sample.first) == expected)
    }

    @Test("the document parses as ALTO 4 with blocks, paragraphs, lines and words in place")
    func documentStructure() throws {
        let text = ALTO.document(Sample.result([Sample.first]), imageName: "scan & co.png")
        #expect(text.contains("<alto") && text.hasSuffix("</alto>\n") && text.contains("CONTENT=\"Alpha\""))
        let xml = try ParsedXML(text)
        let root = try #require(xml.elements.first)
        #expect(root.name == "alto")
        #expect(root.attributes["xmlns"] == "http://www.loc.gov/standards/alto/ns-v4#")
        #expect(root.attributes["SCHEMAVERSION"] == "4.4")
        #expect(xml.named("MeasurementUnit").map(\.text) == ["pixel"])
        #expect(xml.named("fileName").map(\.text) == ["scan & co.png"])
        #expect(xml.named("Processing").map { $0.attributes["ID"] } == ["OCR_0"])
        #expect(xml.named("processingCategory").map(\.text) == ["contentGeneration"])
        #expect(xml.named("softwareName").map(\.text) == ["tesseract"])
        #expect(xml.named("softwareVersion").map(\.text) == ["5.5.0"])
        #expect(xml.named("Layout").count == 1)
        #expect(xml.named("Page").map { $0.attributes["PHYSICAL_IMG_NR"] } == ["1"])
        #expect(xml.named("PrintSpace").map { $0.attributes["WIDTH"] } == ["600"])
        #expect(xml.named("ComposedBlock").count == 2)
        #expect(xml.named("TextBlock").map { $0.attributes["ID"] } == ["block_1_1", "block_1_2"])
        #expect(xml.named("TextLine").map { $0.attributes["BASELINE"] } == ["40,72 340,75", "50,141 510,139", nil])
        let strings = xml.named("String")
        #expect(strings.map { $0.attributes["CONTENT"] } == ["Alpha", Sample.markup, "नमस्ते", "Bravo", "Omega"])
        #expect(strings.map { $0.attributes["WC"] } == ["0.57", nil, "0.5", "0.875", "1"])
        #expect(strings.map { [$0.attributes["HPOS"], $0.attributes["VPOS"], $0.attributes["WIDTH"], $0.attributes["HEIGHT"]] } == [
            ["40", "30", "120", "50"], ["170", "32", "90", "45"], ["40", "100", "200", "50"], ["260", "102", "260", "48"], ["40", "250", "300", "60"],
        ])
        #expect(xml.named("SP").count == 2)
    }

    @Test("without an image name there is no sourceImageInformation; two pages keep their IDs apart")
    func twoPages() throws {
        let xml = try ParsedXML(ALTO.document(Sample.result([Sample.first, Sample.third])))
        #expect(xml.named("sourceImageInformation").isEmpty)
        #expect(xml.named("Page").map { $0.attributes["ID"] } == ["page_1", "page_3"])
        #expect(xml.named("Page").map { $0.attributes["PC"] } == ["0.8", nil])
        #expect(xml.named("String").last?.attributes["ID"] == "string_3_1")
        let ids = xml.elements.compactMap { $0.attributes["ID"] }
        #expect(Set(ids).count == ids.count)
    }

    @Test("a right-to-left line: BASEDIRECTION, and the space runs leftwards to the next word")
    func rightToLeft() throws {
        let page = Sample.page(number: 1, width: 400, height: 100, confidence: nil, languages: ["he"], [
            Sample.block(Sample.box(150, 10, 250, 40), [Sample.paragraph(Sample.box(150, 10, 250, 40), ["he"], [
                Sample.line(Sample.box(150, 10, 250, 40), baseline: nil, direction: "rtl", [
                    Sample.word("שלום", Sample.box(300, 10, 100, 40), 0.9, ["he"]),
                    Sample.word("עולם", Sample.box(150, 12, 130, 38), 0.9, ["he"]),
                ]),
            ])]),
        ])
        let xml = try ParsedXML(ALTO.document(Sample.result([page])))
        #expect(xml.named("TextLine").first?.attributes["BASEDIRECTION"] == "rtl")
        let space = try #require(xml.named("SP").first)
        #expect(space.attributes == ["HPOS": "280", "VPOS": "10", "WIDTH": "20"])
    }
}

@Suite("TSV from the result")
struct TSVRenderingTests {
    @Test("a page's rows, verbatim, without the header")
    func pageVerbatim() {
        let expected = [
            "1\t1\t0\t0\t0\t0\t0\t0\t600\t400\t-1\t",
            "2\t1\t1\t0\t0\t0\t40\t30\t500\t120\t-1\t",
            "3\t1\t1\t1\t0\t0\t40\t30\t500\t120\t-1\t",
            "4\t1\t1\t1\t1\t0\t40\t30\t300\t50\t-1\t",
            "5\t1\t1\t1\t1\t1\t40\t30\t120\t50\t57.000000\tAlpha",
            "5\t1\t1\t1\t1\t2\t170\t32\t90\t45\t-1\t\(Sample.markup)",
            "4\t1\t1\t1\t2\t0\t40\t100\t480\t50\t-1\t",
            "5\t1\t1\t1\t2\t1\t40\t100\t200\t50\t50.000000\tनमस्ते",
            "5\t1\t1\t1\t2\t2\t260\t102\t260\t48\t87.500000\tBravo",
            "2\t1\t2\t0\t0\t0\t40\t250\t300\t60\t-1\t",
            "3\t1\t2\t1\t0\t0\t40\t250\t300\t60\t-1\t",
            "4\t1\t2\t1\t1\t0\t40\t250\t300\t60\t-1\t",
            "5\t1\t2\t1\t1\t1\t40\t250\t300\t60\t100.000000\tOmega",
        ].map { $0 + "\n" }.joined()
        #expect(TSV.page(Sample.first) == expected)
    }

    @Test("the document is the exact header, then each page's rows with its own page number")
    func document() {
        let text = TSV.document(Sample.result([Sample.first, Sample.third]))
        let rows = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.split(separator: "\t", omittingEmptySubsequences: false) }
        #expect(text.hasPrefix("level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"))
        #expect(text.hasSuffix("5\t3\t1\t1\t1\t1\t5\t5\t50\t20\t42.000000\tZulu\n"))
        #expect(rows.dropFirst().dropLast().allSatisfy { $0.count == 12 })
        #expect(rows.dropFirst().dropLast().map { $0[1] } == Array(repeating: "1", count: 13) + Array(repeating: "3", count: 5))
        #expect(rows.last == [""])
    }

    @Test("word rows are the result's words and boxes, in order (what the interop test compares)")
    func wordsMatchResult() {
        let rows = TSV.page(Sample.first).split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        let fromTSV = rows.filter { $0[0] == "5" }.map { [$0[11], $0[6], $0[7], $0[8], $0[9]] }
        let fromResult = Sample.first.blocks.flatMap(\.paragraphs).flatMap(\.lines).flatMap(\.words).map {
            [$0.text, String($0.boundingBox.x), String($0.boundingBox.y), String($0.boundingBox.width), String($0.boundingBox.height)]
        }
        #expect(fromTSV == fromResult)
    }

    @Test("a tab or line break inside a word becomes a space, keeping twelve columns")
    func separatorsInWords() {
        let page = Sample.page(number: 1, width: 100, height: 50, confidence: nil, languages: [], [
            Sample.block(Sample.box(0, 0, 100, 50), [Sample.paragraph(Sample.box(0, 0, 100, 50), [], [
                Sample.line(Sample.box(0, 0, 100, 50), baseline: nil, [Sample.word("a\tb\nc\u{2028}d", Sample.box(0, 0, 100, 50), nil, [])]),
            ])]),
        ])
        #expect(TSV.page(page).hasSuffix("5\t1\t1\t1\t1\t1\t0\t0\t100\t50\t-1\ta b c d\n"))
    }
}
