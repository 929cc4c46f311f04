import Imaging
import QuirePDF
import QuireRecognition
import Testing

/// The text layer's characters laid out in reading order, without PDFium: characters made here with
/// the boxes a page would give them.
@Suite("Text layer reading order")
struct TextLayerTests {
    /// `text` drawn from (x, y) left to right, each character `width` wide and 20 pixels high.
    static func run(_ text: String, x: Int, y: Int, width: Int = 10, turns: Int = 0) -> [LayerCharacter] {
        text.unicodeScalars.enumerated().map { i, scalar in
            LayerCharacter(scalar: scalar, box: PixelBox(x: x + i * width, y: y, width: width, height: 20), size: 20, quarterTurns: turns)
        }
    }
    static let lineBreak = LayerCharacter(scalar: "\n", box: PixelBox(x: 0, y: 0, width: 0, height: 0), size: 0)

    static func lines(_ page: RecognizedPage) -> [String] { page.blocks.flatMap(\.children).flatMap(\.children).map(\.text) }

    @Test("pieces of one line drawn out of order are put back together, left to right")
    func outOfOrder() {
        let characters = Self.run("world", x: 160, y: 100) + [Self.lineBreak] + Self.run("Hello", x: 100, y: 100)
        let page = TextLayer.page(characters, width: 1_000, height: 1_000, language: "eng", symbols: true)
        #expect(Self.lines(page) == ["Hello world"])
        let words = page.blocks[0].children[0].children[0].children
        #expect(words.map(\.text) == ["Hello", "world"])
        #expect(words[0].box == PixelBox(x: 100, y: 100, width: 50, height: 20))
        #expect(words[0].children.map(\.text) == ["H", "e", "l", "l", "o"])
        #expect(page.text == "Hello world\n")
    }

    @Test("a head over two columns and a foot across them read head, left column, right column, foot")
    func headColumnsFoot() {
        var characters = Self.run("A head across the page", x: 100, y: 50) + [Self.lineBreak]
        // The file draws the page row by row, both columns on each row: the reading order must not follow it.
        for (i, y) in [100, 125, 150].enumerated() {
            characters += Self.run("left \(i + 1)", x: 100, y: y) + Self.run("right \(i + 1)", x: 400, y: y) + [Self.lineBreak]
        }
        characters += Self.run("the foot, across both columns' width", x: 100, y: 300)
        let page = TextLayer.page(characters, width: 1_000, height: 1_000, language: nil, symbols: false)
        #expect(page.blocks.map(\.text) == ["A head across the page", "left 1\nleft 2\nleft 3", "right 1\nright 2\nright 3", "the foot, across both columns' width"])
        #expect(page.text == "A head across the page\n\nleft 1\nleft 2\nleft 3\n\nright 1\nright 2\nright 3\n\nthe foot, across both columns' width\n")
    }

    @Test("a gap wider than the font size parts two cells; a word space does not")
    func cells() {
        // "Name" then a gap of 3 font sizes, then "Total"; below, the same two cells again.
        let characters = Self.run("Name", x: 100, y: 100) + Self.run("Total", x: 200, y: 100) + [Self.lineBreak]
            + Self.run("Ann", x: 100, y: 125) + Self.run("12", x: 200, y: 125) + [Self.lineBreak]
            + Self.run("wide space", x: 100, y: 400) + Self.run("ok", x: 215, y: 400)
        let page = TextLayer.page(characters, width: 1_000, height: 1_000, language: nil, symbols: false)
        #expect(page.blocks.map(\.text) == ["Name\nAnn", "Total\n12", "wide space ok"])
    }

    @Test("a page of text drawn upside down is read from its own top, and its boxes stay where they are drawn")
    func upsideDown() {
        // Upside-down text runs right to left on the page, its first line at the bottom: each character
        // of "first line" stands left of the one before it, and each line above the one before.
        func turned(_ text: String, y: Int) -> [LayerCharacter] {
            text.unicodeScalars.enumerated().map { i, scalar in
                LayerCharacter(scalar: scalar, box: PixelBox(x: 900 - (i + 1) * 10, y: y, width: 10, height: 20), size: 20, quarterTurns: 2)
            }
        }
        let characters = turned("first line", y: 900) + [Self.lineBreak] + turned("second line", y: 875)
        let page = TextLayer.page(characters, width: 1_000, height: 1_000, language: nil, symbols: false)
        #expect(Self.lines(page) == ["first line\nsecond line"].flatMap { $0.split(separator: "\n").map(String.init) })
        let first = page.blocks[0].children[0].children[0]
        #expect(first.box == PixelBox(x: 800, y: 900, width: 100, height: 20))
        #expect(first.children[0].text == "first" && first.children[0].box == PixelBox(x: 850, y: 900, width: 50, height: 20))
    }

    @Test("text running down the page (a turned table heading) is read down, beside text that runs across")
    func downwards() {
        let across = Self.run("across the page", x: 100, y: 100)
        // Running down: each character below the one before, on a page of 1,000 × 1,000.
        let down = "down".unicodeScalars.enumerated().map { i, scalar in
            LayerCharacter(scalar: scalar, box: PixelBox(x: 700, y: 300 + i * 10, width: 20, height: 10), size: 20, quarterTurns: 1)
        }
        let page = TextLayer.page(across + [Self.lineBreak] + down, width: 1_000, height: 1_000, language: nil, symbols: false)
        #expect(page.blocks.map(\.text) == ["across the page", "down"])
        #expect(page.blocks[1].box == PixelBox(x: 700, y: 300, width: 20, height: 40))
    }

    @Test("a transcript's line numbers in the margin read with the lines they number, empty numbered rows in place")
    func lineNumbers() {
        // The file draws the margin's numbers first, then the text: rows 1, 2 and 4 have text, row 3 none.
        var characters = Self.run("Official transcript", x: 300, y: 20) + [Self.lineBreak]
        for (i, y) in [100, 125, 150, 175].enumerated() {
            characters += Self.run("\(i + 1)", x: 40, y: y) + [Self.lineBreak]
        }
        for (text, y) in [("IN THE SUPREME COURT", 100), ("MICHAEL A. KNOWLES,", 125), ("Petitioner", 175)] {
            characters += Self.run(text, x: 200, y: y) + [Self.lineBreak]
        }
        // A caption's colons, a column of their own further right, belong to their rows too.
        characters += Self.run(":", x: 700, y: 125) + [Self.lineBreak] + Self.run(":", x: 700, y: 150) + [Self.lineBreak]
        let page = TextLayer.page(characters, width: 1_000, height: 1_000, language: nil, symbols: false)
        #expect(page.blocks.map(\.text) == ["Official transcript", "1 IN THE SUPREME COURT\n2 MICHAEL A. KNOWLES, :\n3 :\n4 Petitioner"])
        let first = page.blocks[1].children[0].children[0]
        #expect(first.children.map(\.text) == ["1", "IN", "THE", "SUPREME", "COURT"])
        #expect(first.box == PixelBox(x: 40, y: 100, width: 360, height: 20))
    }

    @Test("a column of numbers that do not count up by one (a table's amounts), or are not line numbers, stays a column")
    func amountsAreNotLineNumbers() {
        var characters: [LayerCharacter] = []
        for (i, y) in [100, 125, 150].enumerated() {
            characters += Self.run(["12", "40", "7"][i], x: 40, y: y) + Self.run(["apples", "pears", "plums"][i], x: 200, y: y) + [Self.lineBreak]
        }
        let page = TextLayer.page(characters, width: 1_000, height: 1_000, language: nil, symbols: false)
        #expect(page.blocks.map(\.text) == ["12\n40\n7", "apples\npears\nplums"])
        // Nor do numbers too long to be line numbers, signed ones, or one past the largest integer.
        for column in [["123456", "123457", "123458"], ["+1", "+2", "+3"], ["9223372036854775806", "9223372036854775807", "9223372036854775808"]] {
            var drawn: [LayerCharacter] = []
            for (i, y) in [100, 125, 150].enumerated() {
                drawn += Self.run(column[i], x: 40, y: y) + Self.run("row", x: 400, y: y) + [Self.lineBreak]
            }
            let read = TextLayer.page(drawn, width: 1_000, height: 1_000, language: nil, symbols: false)
            #expect(read.blocks.map(\.text) == [column.joined(separator: "\n"), "row\nrow\nrow"])
        }
    }
}
