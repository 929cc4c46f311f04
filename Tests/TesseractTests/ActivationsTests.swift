import Foundation
import Imaging
import QuireRecognition
import Testing
import Tesseract
import QuireTestSupport

/// The patched engine computes its LSTM activations 8 at a time with AVX2 where the processor has it
/// (scripts/tesseract-patches/0005); machines without AVX2 take the scalar loops. Both must read every
/// page alike: the same texts, boxes, confidences and baselines at every level.
@Suite("AVX2 activations: the scalar loops read every page the same", .serialized)
struct ActivationsTests {
    /// The pages: the four-tile page of WalkTests and samples/hello.png enlarged and reduced (other
    /// line heights, other numbers of time steps).
    static func pages() throws -> [Image] {
        let hello = try Image.decode(try TestImages.sample(), format: .png).grey()
        var pages = [try TestImages.helloTiles()]
        for factor in [0.6, 1.7] {
            let page = try hello.scaled(by: factor)
            page.setResolution(300)
            pages.append(page)
        }
        return pages
    }

    static func read(_ pages: [Image]) throws -> [[String]] {
        let engine = try Engine(dataPath: WalkTests.tessdata, languages: "eng")
        return try pages.map { page in try engine.recognize(page, layout: .page, symbols: true).blocks.flatMap { WalkTests.dump($0) } }
    }

    @Test("Off and on, the same elements with the same texts, boxes, confidences and baselines")
    func scalarMatchesAVX2() throws {
        let pages = try Self.pages()
        guard let running = Engine.setAVX2Activations(true) else {
            // Debian's 5.3 (the fallback engine) has neither the AVX2 activations nor the switch.
            #expect(!Engine.version.hasPrefix("5.5"), "the patched 5.5 build must have the switch")
            return
        }
        defer { Engine.setAVX2Activations(true) }
        // The machines this runs on have AVX2; without it both reads would take the scalar loops.
        try #require(running, "the processor has no AVX2: the comparison would compare the scalar loops with themselves")
        let vectorised = try Self.read(pages)
        #expect(Engine.setAVX2Activations(false) == false)
        let scalar = try Self.read(pages)
        Self.expectSame(vectorised, scalar, pages: pages.count)
    }

    /// Turns a patched engine's switch on, for a test that reads both ways: false where the linked
    /// Tesseract has no such switch, which only Debian's 5.3 (the fallback engine) may lack.
    static func switchedOn(_ set: (Bool) -> Bool?) -> Bool {
        guard set(true) != nil else {
            #expect(!Engine.version.hasPrefix("5.5"), "the patched 5.5 build must have the switch")
            return false
        }
        return true
    }

    /// Two readings of the same pages (each page's elements, as `WalkTests.dump` writes them) are the
    /// same, element for element, and each page read enough to compare, the sample's words among them.
    static func expectSame(_ first: [[String]], _ second: [[String]], pages: Int) {
        #expect(first.count == pages && second.count == pages)
        for (index, (a, b)) in zip(first, second).enumerated() {
            #expect(a.count > 20, "page \(index) read too little to compare: \(a.count) elements")
            #expect(a == b, "page \(index) differs: \(zip(a, b).first { $0 != $1 }.map { "\($0) / \($1)" } ?? "in length")")
        }
        #expect(first.joined().joined().contains("Quire"), "the pages were not read: \(first.first?.prefix(3) ?? [])")
    }
}
