import Foundation
import Imaging
import QuireRecognition
import Testing
import Tesseract
import QuireTestSupport

/// The patched engine's integer network copies each line's 3 × 3 neighbourhoods (`Convolve`) and pools
/// them (`Maxpool`) through row pointers taken once per layer (scripts/tesseract-patches/0016), where it
/// went through the array's per-element accessors and `StrideMap` indices recomputed for every
/// neighbour. The neighbours, the random values drawn for those outside the line and the maxima are the
/// same, so every line must read alike both ways: the same texts, boxes, confidences and baselines.
@Suite("Network rows: every line read as through the per-element accessors", .serialized)
struct NetworkRowsTests {
    @Test("Off and on, the same elements with the same texts, boxes, confidences and baselines")
    func rowsMatchAccessors() throws {
        guard ActivationsTests.switchedOn(Engine.setNetworkRows) else { return }
        defer { Engine.setNetworkRows(true) }
        // The four-tile page and the sample page at two sizes: lines of other lengths, each scaled
        // to the network's 36 rows, whose first and last rows have neighbours outside the line.
        let pages = try ActivationsTests.pages()
        let rows = try ActivationsTests.read(pages)
        #expect(Engine.setNetworkRows(false) == false)
        let accessors = try ActivationsTests.read(pages)
        ActivationsTests.expectSame(rows, accessors, pages: pages.count)
    }
}
