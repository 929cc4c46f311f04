import CLeptonica
import Imaging
import Testing
import Tesseract
import QuireTestSupport

/// The patched engine counts the black pixels of a box of the page's picture mask where they lie
/// (scripts/tesseract-patches/0015) instead of copying the box into an image of its own and counting
/// that. The layout analysis asks for such counts between and beside text partitions, to tell text
/// from picture; the two must count alike for every box, inside, across or outside the image's edges,
/// at every quarter turn, on masks whose rows end anywhere in a 32-bit word.
@Suite("Pixels of the picture mask counted where they lie, as in a copy", .serialized)
struct CountInPlaceTests {
    /// A `width`×`height` 1-bit mask, each pixel black with probability `density`, from `seed`, and
    /// how many are black.
    static func mask(width: Int, height: Int, density: Double, seed: UInt64) throws -> (Image, Int) {
        let pix = try #require(pixCreate(Int32(width), Int32(height), 1))
        var random = SplitMix64(seed: seed)
        var black = 0
        for y in 0..<height {
            for x in 0..<width where Double(random.next() % 1_000) < density * 1_000 {
                pixSetPixel(pix, Int32(x), Int32(y), 1)
                black += 1
            }
        }
        return (Image(adopting: OpaquePointer(pix)), black)
    }

    @Test("Off and on, the same counts for random boxes on random masks at each quarter turn")
    func inPlaceMatchesCopy() throws {
        guard ActivationsTests.switchedOn(Engine.setCountInPlace) else { return }
        defer { Engine.setCountInPlace(true) }
        var random = SplitMix64(seed: 15)
        var boxes = 0, nonZero = 0
        for (index, (width, height)) in [(1, 1), (31, 7), (32, 9), (33, 40), (64, 3), (95, 61), (211, 97)].enumerated() {
            let (mask, total) = try Self.mask(width: width, height: height, density: index % 2 == 0 ? 0.5 : 0.05, seed: UInt64(index))
            for rotation: (x: Float, y: Float) in [(1, 0), (0, 1), (-1, 0), (0, -1)] {
                // The image box before the turn: the mask is the image turned by `rotation`.
                let (w, h) = rotation.x == 0 ? (height, width) : (width, height)
                let image = (left: 0, bottom: 0, right: w, top: h)
                var cases = [(left: 0, bottom: 0, right: w, top: h), (left: -5, bottom: -5, right: w + 5, top: h + 5)]
                for _ in 0..<60 {
                    let x0 = Int(random.next() % UInt64(w + 20)) - 10, y0 = Int(random.next() % UInt64(h + 20)) - 10
                    let x1 = x0 + Int(random.next() % UInt64(w + 10)) + 1, y1 = y0 + Int(random.next() % UInt64(h + 10)) + 1
                    cases.append((x0, y0, x1, y1))
                }
                for (n, box) in cases.enumerated() {
                    Engine.setCountInPlace(true)
                    let inPlace = try #require(Engine.countInRotatedBox(mask, box: box, imageBox: image, rotation: rotation))
                    Engine.setCountInPlace(false)
                    let copied = try #require(Engine.countInRotatedBox(mask, box: box, imageBox: image, rotation: rotation))
                    #expect(inPlace == copied, "\(width)×\(height) mask, rotation \(rotation), box \(box): \(inPlace) in place, \(copied) copied")
                    if n < 2 { #expect(inPlace == total, "the whole image's box counts every pixel: \(inPlace) of \(total)") }
                    boxes += 1
                    nonZero += copied > 0 ? 1 : 0
                }
            }
        }
        #expect(nonZero * 3 > boxes, "too few boxes held a pixel to compare: \(nonZero) of \(boxes)")
    }
}
