import CTesseract
import CLeptonica
import Foundation
import Testing
import Imaging
import QuireRecognition
import Tesseract

/// Quire walks a page without right-to-left words with Tesseract's left-to-right iterator, which moves
/// in constant time, instead of the reading-order iterator the C API gives, whose every step rewinds
/// to the start of the page (`CTesseractWalk.h`). The two must give the same page.
@Suite("Result walk: left to right, the same page as Tesseract's reading order")
struct WalkTests {
    static let tessdata = "/usr/share/tesseract-ocr/5/tessdata"

    /// samples/hello.png four times, at two sizes, in two columns and two rows: blocks, paragraphs and
    /// lines of several words, and a last paragraph, whose text the two iterators end differently.
    static func page() throws -> Image {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../samples/hello.png")
        let bytes = Array(try Data(contentsOf: url))
        let tile = try Image.decode(bytes, format: .png).grey()
        let small = try tile.scaled(by: 0.7)
        let canvas = pixCreate(Int32(tile.width * 2), Int32(tile.height * 2), 8)!
        pixSetAll(canvas)
        let tiles = [(tile, 0, 0), (small, tile.width, 40), (small, 0, tile.height), (tile, tile.width, tile.height + 30)]
        for (image, x, y) in tiles {
            let png = try image.png()
            var source = png.withUnsafeBufferPointer { pixReadMem($0.baseAddress, $0.count) }
            #expect(pixGetDepth(source) == 8)
            pixRasterop(canvas, Int32(x), Int32(y), Int32(image.width), Int32(image.height), PIX_SRC, source, 0, 0)
            pixDestroy(&source)
        }
        var data: UnsafeMutablePointer<UInt8>?
        var size = 0
        pixWriteMemPng(&data, &size, canvas, 0)
        var c: UnsafeMutablePointer<PIX>? = canvas
        pixDestroy(&c)
        defer { free(data) }
        let page = try Image.decode(Array(UnsafeBufferPointer(start: data!, count: size)), format: .png)
        page.setResolution(300)
        return page
    }

    /// Every element, level by level: text, box, confidence, language and baseline.
    static func dump(_ element: RecognizedElement, depth: Int = 0) -> [String] {
        let b = element.box
        let baseline = element.baseline.map { "\($0.x1),\($0.y1),\($0.x2),\($0.y2)" } ?? "-"
        let line = "\(depth) \(element.text.debugDescription) \(b.x) \(b.y) \(b.width) \(b.height) \(element.confidence ?? -1) \(element.language ?? "-") \(baseline)"
        return [line] + element.children.flatMap { dump($0, depth: depth + 1) }
    }

    @Test("Texts, boxes, confidences, languages and baselines are the same at every level", arguments: [true, false])
    func samePage(symbols: Bool) throws {
        let image = try Self.page()
        func read(leftToRight: Bool) throws -> RecognizedPage {
            let engine = try Engine(dataPath: Self.tessdata, languages: "eng")
            engine.leftToRightWalk = leftToRight
            return try engine.recognize(image, layout: .page, symbols: symbols)
        }
        let fast = try read(leftToRight: true), logical = try read(leftToRight: false)
        // The page is one that exercises the walk: several blocks, paragraphs and lines.
        #expect(fast.blocks.count >= 2)
        #expect(fast.blocks.flatMap(\.children).count >= 4)
        #expect(fast.text.contains("quick brown fox"))
        #expect(fast.text == logical.text)
        #expect(fast.deskewAngle == logical.deskewAngle && fast.writingDirection == logical.writingDirection)
        let a = fast.blocks.flatMap { Self.dump($0) }, b = logical.blocks.flatMap { Self.dump($0) }
        #expect(a.count > 40)
        #expect(a == b)
    }
}
