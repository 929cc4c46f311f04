internal import CLeptonica

extension Image {
    /// The vertical rules of the page: thin dark strokes standing at least `minLength` pixels tall,
    /// found on a binarised copy. A stroke is followed down the page a pixel left or right from one
    /// row to the next, at most one pixel in `drift` rows in all (a rule on a page skewed by less than
    /// the deskew step corrects), and may break for up to `maxGap` rows (a dashed rule, a scan's
    /// dropout). Strokes that end in adjacent columns are one rule, and a rule wider than `maxWidth`
    /// across (a black bar, a photo's edge, a dark margin) is none. Each rule is the box of its
    /// longest stroke: its rows, and the columns its ink covers.
    public func verticalRules(minLength: Int, maxWidth: Int, maxGap: Int = 2, drift: Int = 50) throws(ImageError) -> [PixelBox] {
        guard minLength > 0, width > 2, height >= minLength else { return [] }
        let binary = try binary()
        guard let data = pixGetData(binary.pix) else { return [] }
        let wpl = Int(pixGetWpl(binary.pix))
        let columns = width
        let (bestTop, bestBottom) = Self.longestStrokes(data: data, wordsPerLine: wpl, width: columns, height: height, maxGap: maxGap, drift: drift)
        func ink(_ x: Int, _ y: Int) -> Bool { (data[y * wpl + (x >> 5)] >> UInt32(31 - (x & 31))) & 1 == 1 }
        var rules: [PixelBox] = []
        var x = 0
        while x < columns {
            guard bestBottom[x] - bestTop[x] + 1 >= minLength else { x += 1; continue }
            var end = x
            var top = bestTop[x], bottom = bestBottom[x]
            while end + 1 < columns, bestBottom[end + 1] - bestTop[end + 1] + 1 >= minLength {
                end += 1
                top = min(top, bestTop[end]); bottom = max(bottom, bestBottom[end])
            }
            // Strokes slide sideways along a thick rule crossing their ends, so the columns they end in
            // overstate the width: the stroke is measured across, on nine rows along it, as the run of
            // ink that meets those columns (the median run; a rule crossing one of the rows is longer).
            var widths: [Int] = [], left = end, right = x
            for k in 1...9 {
                let y = top + (bottom - top) * k / 10
                guard let hit = (x...end).first(where: { ink($0, y) }) else { continue }
                var a = hit, b = hit
                while a > 0, ink(a - 1, y), hit - a <= maxWidth { a -= 1 }
                while b + 1 < columns, ink(b + 1, y), b - a <= maxWidth { b += 1 }
                widths.append(b - a + 1)
                if b - a + 1 <= maxWidth { left = min(left, a); right = max(right, b) }
            }
            widths.sort()
            if widths.count >= 5, widths[widths.count / 2] <= maxWidth, left <= right {
                rules.append(PixelBox(x: left, y: top, width: right - left + 1, height: bottom - top + 1))
            }
            x = end + 1
        }
        return rules
    }

    /// For each column of a 1 bpp image (`data`, `wordsPerLine` 32-bit words a row), the rows of the
    /// longest stroke ending in it (`top` > `bottom` where none), strokes followed as
    /// ``verticalRules(minLength:maxWidth:maxGap:drift:)`` says.
    static func longestStrokes(data: UnsafeMutablePointer<UInt32>, wordsPerLine wpl: Int, width: Int, height: Int,
                               maxGap: Int, drift: Int) -> (top: [Int], bottom: [Int]) {
        let columns = width, words = (columns + 31) / 32
        // The bits of a row's last word that are columns of the page (1 bpp, most significant bit
        // first within each 32-bit word; set bits are ink).
        let lastWord: UInt32 = columns % 32 == 0 ? .max : ~(UInt32.max >> UInt32(columns % 32))
        // The stroke reaching each column at the row before: where it started (row and column) and
        // how many rows it has gone without ink; startRow < 0 when none reaches it.
        var startRow = [Int](repeating: -1, count: columns), startColumn = [Int](repeating: 0, count: columns)
        var gap = [Int](repeating: 0, count: columns)
        // The columns a stroke reaches, as bits laid out as the page's: a column without ink that no
        // stroke reaches stays as it is, so only the columns set in a word's ink or here are visited
        // (most of a page is paper).
        var reached = [UInt32](repeating: 0, count: words)
        // The rows of the longest stroke ending in each column.
        var bestTop = [Int](repeating: 0, count: columns), bestBottom = [Int](repeating: -1, count: columns)
        for y in 0..<height {
            let row = data + y * wpl
            // Columns are updated in place from left to right; the last one updated is kept here as it
            // was at the row before, for its right neighbour to continue from.
            var before = (column: -2, startRow: -1, startColumn: 0)
            for word in 0..<words {
                let ink = row[word] & (word == words - 1 ? lastWord : .max)
                var visit = ink | reached[word]
                while visit != 0 {
                    let offset = visit.leadingZeroBitCount, bit = UInt32(0x8000_0000) >> UInt32(offset)
                    visit &= ~bit
                    let x = word * 32 + offset
                    let was = (column: x, startRow: startRow[x], startColumn: startColumn[x])
                    if ink & bit != 0 {
                        // Continue the longest stroke from this column or either neighbour.
                        var from: (row: Int, column: Int)?
                        for candidate in max(0, x - 1)...min(columns - 1, x + 1) {
                            let (start, column) = candidate == before.column ? (before.startRow, before.startColumn) : (startRow[candidate], startColumn[candidate])
                            guard start >= 0, abs(x - column) * drift <= max(drift, y - start) else { continue }
                            if let best = from, best.row <= start { continue }
                            from = (start, column)
                        }
                        (startRow[x], startColumn[x]) = from ?? (y, x)
                        gap[x] = 0
                        if y - startRow[x] > bestBottom[x] - bestTop[x] {
                            bestTop[x] = startRow[x]; bestBottom[x] = y
                        }
                        reached[word] |= bit
                    } else if gap[x] < maxGap {
                        gap[x] += 1
                    } else {
                        startRow[x] = -1; gap[x] = 0
                        reached[word] &= ~bit
                    }
                    before = was
                }
            }
        }
        return (bestTop, bestBottom)
    }
}
