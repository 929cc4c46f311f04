import Foundation
import Testing
@testable import SceneText

@Suite struct TextRegionsTests {
    /// A probability map with `value` inside the rectangle centred at (`cx`, `cy`), `w`×`h`, turned by
    /// `degrees` (clockwise on screen), and 0 elsewhere.
    func map(width: Int, height: Int, cx: Double, cy: Double, w: Double, h: Double, degrees: Double, value: Float = 0.9) -> [Float] {
        var m = [Float](repeating: 0, count: width * height)
        let a = degrees * .pi / 180
        for y in 0..<height {
            for x in 0..<width {
                let dx = Double(x) - cx, dy = Double(y) - cy
                let u = dx * cos(a) + dy * sin(a), v = -dx * sin(a) + dy * cos(a)
                if abs(u) <= w / 2 && abs(v) <= h / 2 { m[y * width + x] = value }
            }
        }
        return m
    }

    @Test func findsALevelRegionGrownByTheUnclipOffset() throws {
        let m = map(width: 200, height: 100, cx: 100, cy: 50, w: 120, h: 20, degrees: 0)
        let found = TextRegions().regions(in: m, width: 200, height: 100, targetWidth: 200, targetHeight: 100)
        let region = try #require(found.first)
        #expect(found.count == 1)
        // The mean over the rectangle, which takes in the dilated rim (probability 0).
        #expect(region.score > 0.8 && region.score < 0.9)
        // The mask (dilated one pixel up and left) spans x 40…160, y 40…60 as pixel centres: 120 × 20
        // between centres. Grown by area × 1.6 / perimeter = 120·20·1.6 / 280 ≈ 13.7 on each side.
        let (w, h) = region.size
        #expect(abs(w - (120 + 2 * 13.7)) < 2.5)
        #expect(abs(h - (20 + 2 * 13.7)) < 2.5)
        // Clockwise from the top-left.
        #expect(region.corners[0].x < region.corners[1].x && region.corners[0].y < region.corners[3].y)
        #expect(abs(region.corners[0].y - region.corners[1].y) < 1.5)
    }

    @Test func followsASlantedRegionAndScalesToThePicture() throws {
        let m = map(width: 200, height: 200, cx: 100, cy: 100, w: 140, h: 16, degrees: 20)
        let found = TextRegions().regions(in: m, width: 200, height: 200, targetWidth: 400, targetHeight: 400)
        let region = try #require(found.first)
        let c = region.corners
        // The top edge rises at 20° (y grows to the right on screen, clockwise turn).
        let angle = atan2(c[1].y - c[0].y, c[1].x - c[0].x) * 180 / .pi
        #expect(abs(angle - 20) < 3)
        // Scaled ×2 into the picture: the centre at (200, 200).
        let centre = (x: c.map(\.x).reduce(0, +) / 4, y: c.map(\.y).reduce(0, +) / 4)
        #expect(abs(centre.x - 200) < 3 && abs(centre.y - 200) < 3)
    }

    @Test func dropsFaintSmallAndLineThinRegions() {
        var m = map(width: 200, height: 100, cx: 60, cy: 50, w: 60, h: 20, degrees: 0, value: 0.4)  // above 0.3 but mean < 0.5
        let speck = map(width: 200, height: 100, cx: 160, cy: 20, w: 1, h: 1, degrees: 0)
        let hairline = map(width: 200, height: 100, cx: 150, cy: 80, w: 80, h: 0.5, degrees: 0)
        for i in m.indices { m[i] = max(m[i], speck[i], hairline[i]) }
        #expect(TextRegions().regions(in: m, width: 200, height: 100, targetWidth: 200, targetHeight: 100).isEmpty)
    }

    @Test func keepsSeparateRegionsApart() {
        var m = map(width: 300, height: 100, cx: 60, cy: 50, w: 80, h: 20, degrees: 0)
        let second = map(width: 300, height: 100, cx: 220, cy: 50, w: 80, h: 20, degrees: 0)
        for i in m.indices { m[i] = max(m[i], second[i]) }
        let found = TextRegions().regions(in: m, width: 300, height: 100, targetWidth: 300, targetHeight: 100)
        #expect(found.count == 2)
        #expect(Set(found.map { Int($0.minX / 100) }) == [0, 1])
    }

    @Test func minimumRectangleOfATurnedSquareIsTheSquare() {
        let square = [Point(x: 10, y: 0), Point(x: 20, y: 10), Point(x: 10, y: 20), Point(x: 0, y: 10)]
        let (corners, side) = TextRegions.minimumRectangle(TextRegions.convexHull(square))
        #expect(abs(side - 200.0.squareRoot()) < 1e-6)
        #expect(Set(corners.map { "\(Int($0.x.rounded())),\(Int($0.y.rounded()))" }) == ["10,0", "20,10", "10,20", "0,10"])
    }
}

@Suite struct PixelsTests {
    func ramp(width: Int, height: Int) -> Pixels {
        var bytes: [UInt8] = []
        for y in 0..<height { for x in 0..<width { bytes += [UInt8(x * 10), UInt8(y * 10), 7] } }
        return Pixels(width: width, height: height, bytes: bytes)
    }

    @Test func turnsCounterClockwise() {
        let p = ramp(width: 3, height: 2)
        let t = p.turnedCounterClockwise()
        #expect(t.width == 2 && t.height == 3)
        // The top-right pixel (x 2, y 0) becomes the top-left one.
        #expect(Array(t.bytes[0..<3]) == [20, 0, 7])
        // The bottom-left pixel (x 0, y 1) becomes the bottom-right one.
        #expect(Array(t.bytes[(2 * 2 + 1) * 3..<(2 * 2 + 2) * 3]) == [0, 10, 7])
    }

    @Test func padsWithAColour() {
        let p = ramp(width: 2, height: 1).padded(top: 1, bottom: 0, left: 1, right: 2, with: (1, 2, 3))
        #expect(p.width == 5 && p.height == 2)
        #expect(Array(p.bytes[0..<3]) == [1, 2, 3])
        #expect(Array(p.bytes[(5 + 1) * 3..<(5 + 3) * 3]) == [0, 0, 7, 10, 0, 7])
        #expect(Array(p.bytes[(5 + 3) * 3..<(5 + 4) * 3]) == [1, 2, 3])
    }

    @Test func warpOfTheWholePictureIsThePicture() {
        let p = ramp(width: 6, height: 4)
        let corners = [Point(x: 0, y: 0), Point(x: 6, y: 0), Point(x: 6, y: 4), Point(x: 0, y: 4)]
        #expect(p.warped(corners, width: 6, height: 4) == p)
        #expect(p.resized(width: 6, height: 4) == p)
    }

    @Test("resizing samples every pixel as bilinear interpolation at its centre does", arguments: [(80, 48), (17, 9), (40, 23), (37, 64), (1, 1)])
    func resizeIsBilinearAtEveryPixel(size: (width: Int, height: Int)) {
        var state: UInt64 = 7
        let bytes = (0..<(37 * 23 * 3)).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        let p = Pixels(width: 37, height: 23, bytes: bytes)
        let resized = p.resized(width: size.width, height: size.height)
        let sx = 37.0 / Double(size.width), sy = 23.0 / Double(size.height)
        var expected: [UInt8] = []
        for y in 0..<size.height {
            for x in 0..<size.width {
                for c in 0..<3 {
                    let v = p.bilinear((Double(x) + 0.5) * sx - 0.5, (Double(y) + 0.5) * sy - 0.5, c)
                    expected.append(UInt8(min(255, max(0, v.rounded()))))
                }
            }
        }
        #expect(resized.width == size.width && resized.height == size.height && resized.bytes == expected)
    }

    @Test func warpStraightensATurnedQuadrilateral() {
        // The right half of the ramp, taken from its top-right corner round (turned a quarter).
        let p = ramp(width: 6, height: 4)
        let corners = [Point(x: 6, y: 0), Point(x: 6, y: 4), Point(x: 3, y: 4), Point(x: 3, y: 0)]
        let w = p.warped(corners, width: 4, height: 3)
        // Its first row runs down the picture's last column: x stays 5, y goes 0…3.
        let reds: [UInt8] = (0..<4).map { w.bytes[$0 * 3] }, greens: [UInt8] = (0..<4).map { w.bytes[$0 * 3 + 1] }
        #expect(reds == [50, 50, 50, 50])
        #expect(greens == [0, 10, 20, 30])
    }

    @Test func tensorIsBlueGreenRedFromMinusOneToOne() {
        let p = Pixels(width: 1, height: 1, bytes: [255, 0, 51])
        var t = [Float](repeating: 9, count: 6)
        p.writeTensor(into: &t, rowLength: 2)
        #expect(abs(t[0] - (51 * 2 / 255 - 1)) < 1e-6)   // blue plane
        #expect(t[2] == -1)                               // green plane
        #expect(t[4] == 1)                                // red plane
        #expect(t[1] == 9 && t[3] == 9 && t[5] == 9)      // the rest of each row untouched
    }

    @Test func borderColourIsTheMedianAroundTheEdge() {
        var p = Pixels(width: 20, height: 10, filledWith: (200, 210, 220))
        p = p.padded(top: 0, bottom: 0, left: 0, right: 0, with: (0, 0, 0))
        for i in stride(from: (5 * 20 + 5) * 3, to: (5 * 20 + 15) * 3, by: 3) { p.bytes[i] = 0 }
        #expect(p.borderColour == (200, 210, 220))
    }
}

@Suite struct SceneLayoutTests {
    func line(_ x: Double, _ y: Double, _ w: Double, _ h: Double) -> DetectedText {
        DetectedText(corners: [Point(x: x, y: y), Point(x: x + w, y: y), Point(x: x + w, y: y + h), Point(x: x, y: y + h)], score: 0.9)
    }

    @Test func readsColumnsOneAfterTheOther() {
        // Two columns of three lines, given in a jumbled order, and a title across both, further above
        // them than a line's height: a block of its own.
        let lines = [line(300, 100, 200, 20), line(0, 100, 200, 20), line(0, 130, 200, 20), line(300, 130, 200, 20),
                     line(0, 160, 200, 20), line(300, 160, 200, 20), line(0, 40, 500, 30)]
        let blocks = SceneLayout.blocks(lines)
        #expect(blocks == [[6], [1, 2, 4], [0, 3, 5]])
        // Closer, the title heads the left column's block.
        var closer = lines
        closer[6] = line(0, 75, 500, 20)
        #expect(SceneLayout.blocks(closer) == [[6, 1, 2, 4], [0, 3, 5]])
    }

    @Test func wordsOnOneRowStayInOneBlockFromTheLeft() {
        let lines = [line(120, 10, 60, 20), line(0, 12, 100, 20), line(0, 200, 100, 20)]
        #expect(SceneLayout.blocks(lines) == [[1, 0], [2]])
    }

    @Test func characterSpansMeetHalfwayAndSliceTheLine() {
        let chars = [CTCDecoder.Character(text: "a", step: 1, confidence: 1), CTCDecoder.Character(text: "b", step: 3, confidence: 1),
                     CTCDecoder.Character(text: "c", step: 5, confidence: 1)]
        let spans = SceneLayout.characterSpans(CTCDecoder.Line(characters: chars, steps: 10), usedFraction: 0.8)
        // Step centres at 1.5, 3.5, 5.5 of 8 used steps.
        let expected = [(0.5, 2.5), (2.5, 4.5), (4.5, 6.5)].map { ($0.0 / 8, $0.1 / 8) }
        for (s, e) in zip(spans, expected) { #expect(abs(s.start - e.0) < 1e-9 && abs(s.end - e.1) < 1e-9) }
        let slice = SceneLayout.slice([Point(x: 0, y: 0), Point(x: 80, y: 0), Point(x: 80, y: 10), Point(x: 0, y: 10)], from: 0.25, to: 0.5)
        #expect(slice == [Point(x: 20, y: 0), Point(x: 40, y: 0), Point(x: 40, y: 10), Point(x: 20, y: 10)])
    }

    @Test func aLineReadWithTooFewStepsPerCharacterIsReadAgainWider() {
        func line(_ characters: Int, steps: Int) -> CTCDecoder.Line {
            CTCDecoder.Line(characters: (0..<characters).map { CTCDecoder.Character(text: "a", step: $0, confidence: 1) }, steps: steps)
        }
        let settings = SceneEngine.Settings()
        // 64 steps, 80 % of them the line's: 51.2 steps for 28 characters, 2.5 wanted each.
        #expect(abs((settings.stretch(line(28, steps: 64), usedFraction: 0.8) ?? 0) - 70 / 51.2) < 1e-9)
        #expect(settings.stretch(line(40, steps: 64), usedFraction: 0.8) == 1.5)  // at most 1.5
        #expect(settings.stretch(line(20, steps: 64), usedFraction: 0.8) == nil)  // 2.56 a character
        #expect(settings.stretch(line(0, steps: 64), usedFraction: 1) == nil)
    }

    @Test func marginsMakeALineShapedPictureTallEnough() {
        #expect(SceneEngine.margins(width: 400, height: 300) == (30, 30))
        #expect(SceneEngine.margins(width: 1600, height: 100) == (10, 50))
        #expect(SceneEngine.margins(width: 50, height: 40) == (8, 8))
    }
}

@Suite struct DetectorSizeTests {
    @Test func aPictureIsEnlargedTowardTheShorterSideButAtMostFourTimesAndReducedToTheLongerOne() {
        let settings = SceneEngine.Settings()
        // A photo: its shorter side made 640.
        #expect(SceneEngine.detectorSize(width: 400, height: 300, settings) == (864, 640))
        // A word cropped tight, 40 × 16 with its margins 56 × 32: four times, not 23.
        #expect(SceneEngine.detectorSize(width: 56, height: 32, settings) == (224, 128))
        // A long line: its longer side held to 2,000.
        #expect(SceneEngine.detectorSize(width: 4_000, height: 100, settings) == (2_016, 64))
        // Never below one block of 32.
        #expect(SceneEngine.detectorSize(width: 3, height: 2, settings) == (32, 32))
    }
}
