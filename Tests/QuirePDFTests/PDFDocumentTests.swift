import Foundation
import Imaging
import QuirePDF
import QuireRecognition
import Testing

/// PDFium as Quire drives it: files opened from memory (or refused with a typed reason), pages
/// inspected, rendered and read from their text layer, boxes in the pixels of the page at a resolution.
/// PDFium comes from scripts/install-pdfium, which `scripts/test` runs first.
@Suite("PDF documents")
struct PDFDocumentTests {
    init() throws {
        try #require(PDFDocument.isAvailable, "PDFium is not installed: \(PDFDocument.unavailableReason ?? "")")
    }

    @Test("a PDF is told from its first kilobyte, other files are not")
    func sniffing() {
        #expect(PDFDocument.sniff(Array("%PDF-1.7\n".utf8)))
        #expect(PDFDocument.sniff(Array(repeating: 0x20, count: 500) + Array("%PDF-1.4".utf8)))
        #expect(!PDFDocument.sniff(Array(repeating: 0x20, count: 1_100) + Array("%PDF-1.4".utf8)))
        #expect(!PDFDocument.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        #expect(!PDFDocument.sniff(Array("%PDF".utf8)))
    }

    @Test("a page's text layer gives its words where they are drawn")
    func textLayerWords() throws {
        var page = TestPDF.Page()
        page.texts = [.init(x: 72, y: 720, size: 12, string: "Quarterly report"), .init(x: 72, y: 700, size: 12, string: "Revenue rose (3%)")]
        let document = try PDFDocument(TestPDF(pages: [page]).bytes())
        #expect(document.pageCount == 1)
        let size = try document.pageSize(0)
        #expect(size.width == 612 && size.height == 792)
        let contents = try document.contents(0)
        #expect(contents.visibleCharacters == "Quarterlyreport".count + "Revenuerose(3%)".count)
        #expect(contents.invisibleCharacters == 0 && contents.unmappedCharacters == 0 && contents.imageCover == 0)

        let read = try document.textLayer(0, dpi: 300, language: "eng", symbols: true)
        #expect(read.width == 2_550 && read.height == 3_300)
        let lines = read.blocks.flatMap(\.children).flatMap(\.children)
        #expect(lines.map(\.text) == ["Quarterly report", "Revenue rose (3%)"])
        let first = lines[0].children[0]
        #expect(first.text == "Quarterly" && first.confidence == 1 && first.language == "eng")
        #expect(first.children.map(\.text).joined() == "Quarterly")
        // 72 pt from the left at 300 dpi is 300 px; the baseline 72 pt from the top, 300 px down, and
        // 12 pt capitals stand about 36 px above it.
        #expect(abs(first.box.x - 300) <= 3)
        #expect(first.box.y + first.box.height >= 290 && first.box.y + first.box.height <= 320)
        #expect(first.box.y >= 240 && first.box.y < 290)
        #expect(lines[1].box.y > lines[0].box.y + lines[0].box.height - 5)
        #expect(read.text == "Quarterly report\nRevenue rose (3%)\n")
    }

    @Test("two columns read column by column, each a block of its own")
    func columns() throws {
        var page = TestPDF.Page()
        for (i, y) in [700.0, 686, 672].enumerated() {
            page.texts.append(.init(x: 72, y: y, size: 11, string: "left line \(i + 1)"))
        }
        for (i, y) in [700.0, 686, 672].enumerated() {
            page.texts.append(.init(x: 330, y: y, size: 11, string: "right line \(i + 1)"))
        }
        let read = try PDFDocument(TestPDF(pages: [page]).bytes()).textLayer(0, dpi: 150, language: nil, symbols: false)
        #expect(read.blocks.map(\.text) == ["left line 1\nleft line 2\nleft line 3", "right line 1\nright line 2\nright line 3"])
        #expect(read.blocks[0].children[0].children[0].children[0].children.isEmpty, "no symbols asked for")
    }

    @Test("invisible text (another program's OCR layer) is counted apart from what the page shows")
    func invisibleText() throws {
        var page = TestPDF.Page()
        page.texts = [.init(x: 72, y: 700, size: 12, string: "hidden words", mode: 3), .init(x: 72, y: 600, size: 12, string: "shown", mode: 0)]
        let contents = try PDFDocument(TestPDF(pages: [page]).bytes()).contents(0)
        #expect(contents.invisibleCharacters == "hiddenwords".count)
        #expect(contents.visibleCharacters == "shown".count)
    }

    @Test("a scanned page is a picture over the page: its cover, its resolution, and its pixels rendered")
    func scannedPage() throws {
        // 850×1100 pixels over 8.5×11 inches: a 100 dpi scan.
        let picture = TestPDF.Picture(x: 0, y: 0, width: 612, height: 792, columns: 850, rows: 1_100,
                                      grey: TestPDF.stripes(columns: 850, rows: 1_100, period: 50))
        let document = try PDFDocument(TestPDF(pages: [TestPDF.Page(pictures: [picture])]).bytes())
        let contents = try document.contents(0)
        #expect(contents.visibleCharacters == 0)
        #expect(abs(contents.imageCover - 1) < 0.001)
        #expect(abs((contents.imageResolution ?? 0) - 100) < 0.5)

        let image = try document.render(0, dpi: 100, maxPixels: 10_000_000)
        #expect(image.width == 850 && image.height == 1_100 && image.resolution == 100)
        let tones = try image.grey().tones()
        #expect(tones.ink < 40 && tones.paper > 215, "the picture's black bars on white: \(tones)")
        // Rows 50…99 of the picture are black from x = 85 to 764; rows 0…49 white.
        let grey = try image.grey()
        #expect(grey.greyLevel(x: 400, y: 75) < 40 && grey.greyLevel(x: 100, y: 75) < 40)
        #expect(grey.greyLevel(x: 400, y: 25) > 215 && grey.greyLevel(x: 40, y: 75) > 215)
    }

    @Test("a picture in a corner covers its share of the page")
    func pictureCover() throws {
        let picture = TestPDF.Picture(x: 0, y: 396, width: 306, height: 396, columns: 30, rows: 40, grey: [UInt8](repeating: 0, count: 1_200))
        var page = TestPDF.Page(pictures: [picture])
        page.texts = [.init(x: 330, y: 100, size: 12, string: "caption")]
        let contents = try PDFDocument(TestPDF(pages: [page]).bytes()).contents(0)
        #expect(abs(contents.imageCover - 0.25) < 0.001)
        // 30 pixels over 4.25 inches across, 40 over 5.5 inches down: about 7.2 pixels per inch.
        #expect(abs((contents.imageResolution ?? 0) - (30.0 * 40 / (4.25 * 5.5)).squareRoot()) < 0.01)
    }

    @Test("a turned page (/Rotate 90) is measured and read upright")
    func rotatedPage() throws {
        var page = TestPDF.Page(rotate: 90)
        page.texts = [.init(x: 72, y: 720, size: 12, string: "turned")]
        let document = try PDFDocument(TestPDF(pages: [page]).bytes())
        let size = try document.pageSize(0)
        #expect(size.width == 792 && size.height == 612)
        let read = try document.textLayer(0, dpi: 72, language: nil, symbols: true)
        #expect(read.width == 792 && read.height == 612)
        let word = try #require(read.blocks.first?.children.first?.children.first?.children.first)
        #expect(word.text == "turned")
        // Turned clockwise, the text near the page's top left runs down near the right edge: a box
        // taller than wide, inside the page, its letters one under another.
        #expect(word.box.height > word.box.width)
        #expect(word.children.count == 6 && zip(word.children, word.children.dropFirst()).allSatisfy { $0.box.y < $1.box.y })
        #expect(word.box.x > 600 && word.box.x + word.box.width <= 792)
        let image = try document.render(0, dpi: 72, maxPixels: 1_000_000)
        #expect(image.width == 792 && image.height == 612)
    }

    @Test("a rendering's pixels map to the page's own space, its /Rotate undone", arguments: [0, 90, 180, 270])
    func deviceToPage(rotate: Int) throws {
        let document = try PDFDocument(TestPDF(pages: [TestPDF.Page(width: 600, height: 400, rotate: rotate)]).bytes())
        let size = try document.pageSize(0)
        let (width, height) = (PDFDocument.pixels(size.width, dpi: 144), PDFDocument.pixels(size.height, dpi: 144))
        let map = try document.deviceToPage(0, width: width, height: height)
        func page(_ x: Double, _ y: Double) -> (Double, Double) { (map.a * x + map.b * y + map.c, map.d * x + map.e * y + map.f) }
        // The rendering's top-left corner is the page's corner that /Rotate turns to the top left.
        let topLeft: (Double, Double) = [0: (0, 400), 90: (0, 0), 180: (600, 0), 270: (600, 400)][rotate]!
        let corner = page(0, 0)
        #expect(abs(corner.0 - topLeft.0) < 0.01 && abs(corner.1 - topLeft.1) < 0.01, "\(corner)")
        // Two pixels at 144 dpi are one point, whichever way the page is turned.
        let next = page(2, 0)
        #expect(abs(((next.0 - corner.0) * (next.0 - corner.0) + (next.1 - corner.1) * (next.1 - corner.1)).squareRoot() - 1) < 0.001)
    }

    @Test("a page of another document is drawn over a page, which keeps what it had")
    func overlay() throws {
        var own = TestPDF.Page(rotate: 90)
        own.texts = [.init(x: 72, y: 700, size: 12, string: "underneath")]
        let document = try PDFDocument(TestPDF(pages: [own, TestPDF.Page()]).bytes())
        var layer = TestPDF.Page(width: 100, height: 50)
        layer.texts = [.init(x: 10, y: 10, size: 10, string: "over", mode: 3)]
        let source = try PDFDocument(TestPDF(pages: [layer]).bytes())
        let saved = try document.saving(overlays: [.init(sourcePage: 0, page: 0, matrix: Affine(a: 1, c: 300, e: 1, f: 200))], from: source)
        let reopened = try PDFDocument(saved)
        #expect(reopened.pageCount == 2)
        #expect(try reopened.pageSize(0) == (width: 792, height: 612), "its size and turn")
        let contents = try reopened.inspect(0, dpi: 72) { _ in false }.contents
        #expect(contents.visibleCharacters == "underneath".count && contents.invisibleCharacters == "over".count)
        #expect(try reopened.inspect(1, dpi: 72) { _ in false }.contents.visibleCharacters == 0, "the other page is as it was")
    }

    @Test("a page too large for the pixel budget is refused before it is rendered")
    func pageBomb() throws {
        // 200 inches wide: 60,000 pixels at 300 dpi.
        let document = try PDFDocument(TestPDF(pages: [TestPDF.Page(width: 14_400, height: 792)]).bytes())
        #expect(throws: PDFError.self) { try document.render(0, dpi: 300, maxPixels: 60_000_000) }
        do {
            _ = try document.render(0, dpi: 300, maxPixels: 60_000_000)
        } catch {
            #expect(error.code == .tooManyPixels)
            #expect(error.message.contains("200"))
        }
    }

    @Test("a landscape table drawn sideways on a page turned back (/Rotate 90) reads upright, row by row")
    func sidewaysOnTurnedPage() throws {
        // Text drawn running up the page (rotated 90° counterclockwise), the page shown turned 90°
        // clockwise: on the screen the rows run left to right, one under another.
        var page = TestPDF.Page(rotate: 90)
        page.operators = (0..<3).map { row in "BT /F1 12 Tf 0 1 -1 0 \(100 + 20 * row) 72 Tm (row \(row + 1) cell) Tj ET\n" }.joined()
        let read = try PDFDocument(TestPDF(pages: [page]).bytes()).textLayer(0, dpi: 72, language: nil, symbols: false)
        let lines = read.blocks.flatMap(\.children).flatMap(\.children)
        #expect(lines.map(\.text) == ["row 1 cell", "row 2 cell", "row 3 cell"])
        #expect(lines.allSatisfy { $0.box.width > $0.box.height }, "rows run across the turned page")
    }

    @Test("a page copied into a PDF of its own keeps its text, size and turn")
    func extractPage() throws {
        var pages = (1...3).map { n -> TestPDF.Page in
            var page = TestPDF.Page()
            page.texts = [.init(x: 72, y: 700, size: 12, string: "page \(n) text")]
            return page
        }
        pages[1].rotate = 90
        pages[1].width = 500
        let document = try PDFDocument(TestPDF(pages: pages).bytes())
        let single = try PDFDocument(document.extractPage(1))
        #expect(single.pageCount == 1)
        let size = try single.pageSize(0)
        #expect(size.width == 792 && size.height == 500, "turned, as the original page")
        #expect(try single.textLayer(0, dpi: 72, language: nil, symbols: false).text == "page 2 text\n")
        #expect(throws: PDFError.self) { try document.extractPage(7) }
    }

    @Test("a page that takes too long to draw is given up between its objects, and the document still serves")
    func renderDeadline() throws {
        // 200,000 small filled squares: a second or more of drawing at 300 dpi.
        var page = TestPDF.Page()
        page.operators = String(repeating: "10 10 2 2 re f\n", count: 200_000)
        let document = try PDFDocument(TestPDF(pages: [page, TestPDF.Page()]).bytes())
        // A deadline of 1 ms: PDFium asks every 100 objects whether to go on, so it is asked long before
        // the 200,000th, however fast this machine draws (20 ms was once not enough on a CI run).
        let started = ContinuousClock.now
        #expect(throws: PDFError.self) { try document.render(0, dpi: 300, maxPixels: 60_000_000, seconds: 0.001) }
        #expect(ContinuousClock.now - started < .seconds(1), "given up near its deadline, not after drawing everything")
        do { _ = try document.render(0, dpi: 300, maxPixels: 60_000_000, seconds: 0.001) } catch {
            #expect(error.code == .pageFailed && error.message == "page 1 took longer than 1 ms to render")
        }
        // The next page, and the same page with time enough, render.
        _ = try document.render(1, dpi: 72, maxPixels: 1_000_000, seconds: 0.02)
        let whole = try document.render(0, dpi: 72, maxPixels: 1_000_000, seconds: 60)
        #expect(try whole.grey().greyLevel(x: 11, y: 792 - 11) < 50, "the squares are drawn")
    }

    @Test("files that are not PDFs, damaged ones, encrypted ones and empty ones are refused with their reason")
    func refusals() throws {
        func code(_ bytes: [UInt8]) -> PDFError.Code? {
            do { _ = try PDFDocument(bytes); return nil } catch { return error.code }
        }
        #expect(code(Array("%PDF-1.7\nnot really a PDF at all\n".utf8)) == .corrupt)
        #expect(code(Array("%PDF-".utf8)) == .corrupt)
        #expect(code(TestPDF(pages: [TestPDF.Page()], encrypted: true).bytes()) == .passwordProtected)
        #expect(code(TestPDF(pages: []).bytes()) == .noPages)
        // A page tree that claims pages it does not have: the ones it has are counted.
        var lying = TestPDF(pages: [TestPDF.Page()])
        lying.declaredCount = 5
        let document = try PDFDocument(lying.bytes())
        #expect(document.pageCount >= 1)
    }

    @Test("a file cut short is rebuilt from what is left (PDFium repairs its cross-references) or refused as corrupt")
    func truncated() throws {
        var page = TestPDF.Page()
        page.texts = [.init(x: 72, y: 700, size: 12, string: "still here")]
        let whole = TestPDF(pages: [page, page]).bytes()
        for cut in stride(from: 20, to: whole.count, by: max(1, whole.count / 40)) {
            do {
                let document = try PDFDocument(Array(whole[..<cut]))
                for index in 0..<document.pageCount {
                    _ = try? document.textLayer(index, dpi: 72, language: nil, symbols: true)
                    _ = try? document.render(index, dpi: 36, maxPixels: 1_000_000)
                }
            } catch {
                #expect([.corrupt, .noPages].contains(error.code), "cut at \(cut): \(error)")
            }
        }
        // A cross-reference table whose offsets all point to the wrong place: the objects are found anyway.
        let text = String(decoding: whole, as: UTF8.self)
        let table = try #require(text.range(of: "xref\n"))
        let broken = text[..<table.lowerBound] + text[table.lowerBound...].replacingOccurrences(of: "\n00000", with: "\n00009")
        #expect(broken != text)
        let repaired = try PDFDocument(Array(broken.utf8))
        #expect(repaired.pageCount == 2)
        #expect(try repaired.textLayer(1, dpi: 72, language: nil, symbols: false).text == "still here\n")
    }
}

/// Accents a generator drew as characters of their own, put onto their letters.
@Suite("Accents drawn apart")
struct ComposedAccentsTests {
    static func characters(_ parts: [(Character, Int, Int)]) -> [LayerCharacter] {
        parts.map { LayerCharacter(scalar: $0.0.unicodeScalars.first!, box: PixelBox(x: $0.1, y: 10, width: $0.2, height: 12), size: 12) }
    }

    static func text(_ characters: [LayerCharacter]) -> String { String(String.UnicodeScalarView(characters.map(\.scalar))) }

    @Test("a letter and the accent over it become the accented letter, whichever is drawn first")
    func composed() {
        // "Agência" as e + ˆ over it; "Aviação" with ¸ under c and ˜ over a, one of them drawn before its letter.
        let agencia = Self.characters([("A", 0, 8), ("g", 8, 6), ("e", 14, 6), ("ˆ", 15, 4), ("n", 20, 6), ("c", 26, 6), ("i", 32, 3), ("a", 35, 6)])
        #expect(Self.text(TextLayer.composed(agencia)) == "Agência")
        let aviacao = Self.characters([("A", 0, 8), ("v", 8, 6), ("i", 14, 3), ("a", 17, 6), ("¸", 24, 4), ("c", 23, 6), ("˜", 30, 4), ("a", 29, 6),
                                       ("o", 35, 6)])
        #expect(Self.text(TextLayer.composed(aviacao)) == "Aviação")
    }

    @Test("an accent beside a letter, or with no precomposed letter, stays as it is")
    func untouched() {
        let apart = Self.characters([("r", 0, 5), ("o", 5, 6), ("c", 11, 6), ("k", 17, 6), ("´", 24, 3), ("n", 28, 6)])
        #expect(Self.text(TextLayer.composed(apart)) == "rock´n")
        let none = Self.characters([("q", 0, 6), ("ˇ", 1, 4)])
        #expect(Self.text(TextLayer.composed(none)) == "qˇ")
    }
}

/// A footnote's raised number before its text is a word of its own, as it reads.
@Suite("Superscripts in a text layer")
struct SuperscriptTests {
    /// Characters on one line: (text, x, width, size, bottom of its box); boxes as tall as their size.
    static func line(_ parts: [(String, Int, Int, Double, Int)]) -> [LayerCharacter] {
        parts.flatMap { part -> [LayerCharacter] in
            let (text, x, width, size, bottom) = part
            return text.unicodeScalars.enumerated().map { index, scalar in
                LayerCharacter(scalar: scalar, box: PixelBox(x: x + index * width, y: bottom - Int(size), width: width, height: Int(size)), size: size)
            }
        }
    }

    static func text(_ characters: [LayerCharacter]) -> String {
        TextLayer.page(characters, width: 2_000, height: 200, language: nil, symbols: false).text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a raised number set close before a word parts from it; a lowered one and one after a word do not")
    func footnotes() {
        // "10" at 24 px, its bottom 12 px above the 40 px text's, touching the "A".
        #expect(Self.text(Self.line([("10", 100, 12, 24, 88), ("A flight", 124, 20, 40, 100)])) == "10 A flight")
        // A lowered 2 between H and O: a subscript, the same word.
        #expect(Self.text(Self.line([("H", 100, 20, 40, 100), ("2", 120, 12, 24, 108), ("O", 132, 20, 40, 100)])) == "H2O")
        // A mark after its word ("threshold,11 the"): nothing before it changes.
        #expect(Self.text(Self.line([("threshold,", 100, 20, 40, 100), ("11", 300, 12, 24, 88), (" ", 324, 20, 40, 100), ("the", 344, 20, 40, 100)]))
                == "threshold,11 the")
    }
}
