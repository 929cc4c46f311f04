import QuireWire
import Testing

@Suite("Page selections (1-3,5)")
struct PageRangesTests {
    @Test("numbers and ranges, in the order written, each page once", arguments: [
        ("1", [1]), ("1-3,5", [1, 2, 3, 5]), ("5,1-2", [5, 1, 2]), (" 2 - 4 , 7 ", [2, 3, 4, 7]), ("3-3", [3]), ("1-3,2-4", [1, 2, 3, 4]),
    ])
    func selections(_ text: String, _ pages: [Int]) {
        #expect(PageRanges.parse(text) == pages)
    }

    @Test("what is not a selection is refused", arguments: ["", ",", "1,", "0", "-1", "3-1", "1-", "a", "1.5", "1--2", "1-2-3", "９", "1e3", "99999999999"])
    func refusals(_ text: String) {
        #expect(PageRanges.parse(text) == nil)
    }

    @Test("a selection of more pages than any request may read is refused, not spelled out")
    func bombs() {
        #expect(PageRanges.parse("1-\(PageRanges.maxPages)")?.count == PageRanges.maxPages)
        #expect(PageRanges.parse("1-\(PageRanges.maxPages + 1)") == nil)
        #expect(PageRanges.parse("1-999999999") == nil)
    }
}
