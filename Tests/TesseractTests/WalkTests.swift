import CTesseract
import CLeptonica
import Foundation
import Testing
import Imaging
import QuireRecognition
import Tesseract
import QuireTestSupport

/// Quire walks a page without right-to-left words with Tesseract's left-to-right iterator, which moves
/// in constant time, instead of the reading-order iterator the C API gives, whose every step rewinds
/// to the start of the page (`CTesseractWalk.h`). The two must give the same page.
@Suite("Result walk: left to right, the same page as Tesseract's reading order")
struct WalkTests {
    static let tessdata = "/usr/share/tesseract-ocr/5/tessdata"

    static func page() throws -> Image { try TestImages.helloTiles() }

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
