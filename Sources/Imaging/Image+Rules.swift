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
        // The stroke reaching each column at the row before: where it started (row and column) and
        // how many rows it has gone without ink; startRow < 0 when none reaches it.
        var startRow = [Int](repeating: -1, count: columns), startColumn = [Int](repeating: 0, count: columns)
        var gap = [Int](repeating: 0, count: columns)
        var nextRow = startRow, nextColumn = startColumn, nextGap = gap
        // The rows of the longest stroke ending in each column.
        var bestTop = [Int](repeating: 0, count: columns), bestBottom = [Int](repeating: -1, count: columns)
        for y in 0..<height {
            let row = data + y * wpl
            for x in 0..<columns {
                // 1 bpp, most significant bit first within each 32-bit word; set bits are ink.
                let ink = (row[x >> 5] >> UInt32(31 - (x & 31))) & 1 == 1
                if ink {
                    // Continue the longest stroke from this column or either neighbour.
                    var from = -1
                    for candidate in max(0, x - 1)...min(columns - 1, x + 1) where startRow[candidate] >= 0 {
                        let drifted = abs(x - startColumn[candidate]) * drift <= max(drift, y - startRow[candidate])
                        if drifted, from < 0 || startRow[candidate] < startRow[from] { from = candidate }
                    }
                    if from >= 0 {
                        nextRow[x] = startRow[from]; nextColumn[x] = startColumn[from]
                    } else {
                        nextRow[x] = y; nextColumn[x] = x
                    }
                    nextGap[x] = 0
                    if y - nextRow[x] > bestBottom[x] - bestTop[x] {
                        bestTop[x] = nextRow[x]; bestBottom[x] = y
                    }
                } else if startRow[x] >= 0, gap[x] < maxGap {
                    nextRow[x] = startRow[x]; nextColumn[x] = startColumn[x]; nextGap[x] = gap[x] + 1
                } else {
                    nextRow[x] = -1; nextGap[x] = 0
                }
            }
            swap(&startRow, &nextRow); swap(&startColumn, &nextColumn); swap(&gap, &nextGap)
        }
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
}
