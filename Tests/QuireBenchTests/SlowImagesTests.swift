import Testing
@testable import QuireBench

@Suite("quire bench ocr: the images read more than 20% slower than the CLI")
struct SlowImagesTests {
    @Test("Only images over the margin are named, slowest first, with the raw engine's time and the scale")
    func find() {
        let ms: UInt64 = 1_000_000
        let quire: [Int: UInt64] = [0: 1_300 * ms, 1: 1_100 * ms, 2: 900 * ms, 3: 2_000 * ms, 4: 5_000 * ms]
        let cli: [Int: UInt64] = [0: 1_000 * ms, 1: 1_000 * ms, 2: 1_000 * ms, 3: 1_000 * ms]
        let raw: [Int: UInt64] = [0: 1_250 * ms, 3: 1_900 * ms]
        let slow = OCRBenchSlowImage.find(quire: quire, cli: cli, raw: raw, names: ["a", "b", "c", "d", "e"], scales: [3: 2.8])
        // b is 10% slower (within the margin), c faster; e has no CLI time to compare with.
        #expect(slow.map(\.file) == ["d", "a"])
        #expect(slow[0].quireMs == 2_000 && slow[0].cliMs == 1_000 && slow[0].rawMs == 1_900 && slow[0].scale == 2.8)
        #expect(slow[0].ratio == 2)
        #expect(slow[1].rawMs == 1_250 && slow[1].scale == nil)
        // Exactly 20% slower is not over the margin.
        #expect(OCRBenchSlowImage.find(quire: [0: 1_200 * ms], cli: [0: 1_000 * ms], raw: [:], names: ["x"], scales: [:]).isEmpty)
    }
}
