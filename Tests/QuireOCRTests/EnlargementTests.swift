import Testing
import Imaging
@testable import QuireOCR

/// How far small text is enlarged: to the glyph height Tesseract reads best, but not past the pixel
/// budget, counted on what will be read (the text's box when the page is cropped to it).
@Suite struct EnlargementTests {
    @Test func aPageCroppedToItsTextCountsTheBoxOnly() {
        // A receipt on an A4 scan: the box keeps a quarter of the page, so only it is read.
        let box = PixelBox(x: 100, y: 100, width: 500, height: 1_000)
        #expect(Recognizer.pixelsToRead(pixels: 2_000_000, textBox: box) == 500_000)
        // A page whose text fills it is read whole (the crop is not worth it above 0.8 of the page).
        let wide = PixelBox(x: 0, y: 0, width: 1_000, height: 1_700)
        #expect(Recognizer.pixelsToRead(pixels: 2_000_000, textBox: wide) == 2_000_000)
        // No box (not a document, or cropping off): the whole page.
        #expect(Recognizer.pixelsToRead(pixels: 2_000_000, textBox: nil) == 2_000_000)
    }

    @Test func enlargementStopsAtTheBudget() {
        // A 200 dpi letter page of 9-point print (3.74 MP) wants ×2.28; 8 MP allows ×1.46.
        let page = 1_700 * 2_200
        let held = Recognizer.enlargement(2.28, pixelsToRead: page, budget: 8_000_000)
        #expect(abs(held - 1.4626) < 0.001)
        #expect(Double(page) * held * held <= 8_000_001)
        // A receipt's box (0.5 MP) gets its whole ×2.8.
        #expect(Recognizer.enlargement(2.8, pixelsToRead: 500_000, budget: 8_000_000) == 2.8)
    }

    @Test func reductionsAndPagesOverTheBudgetAreNotEnlarged() {
        // A reduction is never touched by the enlargement budget.
        #expect(Recognizer.enlargement(0.5, pixelsToRead: 40_000_000, budget: 8_000_000) == 0.5)
        // A page already past the budget stays at its own size rather than being reduced.
        #expect(Recognizer.enlargement(2, pixelsToRead: 12_000_000, budget: 8_000_000) == 1)
        #expect(Recognizer.enlargement(1, pixelsToRead: 12_000_000, budget: 8_000_000) == 1)
    }
}
