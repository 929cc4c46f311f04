/// Page selections as people write them and Azure's `pages` parameter takes them: `1-3,5`, `2`,
/// `4-4`. Numbers are 1-based; ranges ascend.
public enum PageRanges {
    /// The most page numbers one selection may name: a range like `1-999999999` is refused here
    /// rather than spelled out.
    public static let maxPages = 10_000

    /// The page numbers in `text`, in the order written (duplicates kept out), or nil when it is not
    /// a selection: an empty part, a number below 1, a range that descends, or more than ``maxPages``.
    public static func parse(_ text: String) -> [Int]? {
        var pages: [Int] = []
        var seen = Set<Int>()
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false).map { $0.trimmingSpaces }
            guard (1...2).contains(bounds.count), bounds.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) && $0.count <= 9 }),
                  let first = Int(bounds[0]), let last = Int(bounds[bounds.count - 1]), first >= 1, last >= first,
                  pages.count + (last - first + 1) <= maxPages else { return nil }
            for page in first...last where seen.insert(page).inserted { pages.append(page) }
        }
        return pages.isEmpty ? nil : pages
    }
}

private extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return s
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
