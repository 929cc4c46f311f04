/// The reading order of detected lines, and their words' and characters' places along each line.
public enum SceneLayout {
    /// Groups lines into blocks and orders them: a line joins a block when it starts below the
    /// block's last line, no further than `gap` of its own height, and overlaps it across; blocks are
    /// read from the top, side-by-side blocks from the left; within a block, lines from the top, and
    /// lines on one row from the left. Returns the indices of `lines`, block by block.
    public static func blocks(_ lines: [DetectedText], gap: Double = 1.2) -> [[Int]] {
        let order = lines.indices.sorted { lines[$0].minY != lines[$1].minY ? lines[$0].minY < lines[$1].minY : lines[$0].minX < lines[$1].minX }
        var blocks: [[Int]] = []
        for i in order {
            let line = lines[i]
            let height = max(1, line.maxY - line.minY)
            let joined = blocks.indices.first { b in
                guard let last = blocks[b].last.map({ lines[$0] }) else { return false }
                let lastHeight = max(1, last.maxY - last.minY)
                let rowOverlap = min(last.maxY, line.maxY) - max(last.minY, line.minY)
                if rowOverlap > 0.5 * min(height, lastHeight) {
                    // Beside it on its row: a line the detector split at a wide space.
                    let gapX = max(line.minX - last.maxX, last.minX - line.maxX)
                    return gapX > -0.2 * height && gapX < 3 * height
                }
                let overlapX = min(last.maxX, line.maxX) - max(last.minX, line.minX)
                let below = line.minY - last.maxY
                return overlapX > 0 && below > -0.5 * height && below <= gap * height
            }
            if let b = joined { blocks[b].append(i) } else { blocks.append([i]) }
        }
        // Within a block: rows from the top, each row from the left.
        return blocks.map { block in
            var rows: [[Int]] = []
            for i in block.sorted(by: { lines[$0].minY < lines[$1].minY }) {
                let l = lines[i]
                if let r = rows.indices.last, let first = rows[r].first.map({ lines[$0] }),
                   min(first.maxY, l.maxY) - max(first.minY, l.minY) > 0.5 * min(first.maxY - first.minY, l.maxY - l.minY) {
                    rows[r].append(i)
                } else {
                    rows.append([i])
                }
            }
            return rows.flatMap { $0.sorted { lines[$0].minX < lines[$1].minX } }
        }
    }

    /// Where each character of `line` stands along the line, as fractions of its width: the start
    /// and end of each, halfway between the time steps of neighbouring characters (a character at
    /// the line's ends reaches as far as its neighbour on the other side).
    /// `usedFraction`: the share of the recognizer's input that was the line's image (the rest padding).
    public static func characterSpans(_ line: CTCDecoder.Line, usedFraction: Double = 1) -> [(start: Double, end: Double)] {
        let n = line.characters.count
        guard n > 0, line.steps > 0 else { return [] }
        // A time step's centre as a fraction of the line's image.
        let scale = 1 / (Double(line.steps) * usedFraction)
        let centres = line.characters.map { (Double($0.step) + 0.5) * scale }
        return (0..<n).map { i in
            let half = n == 1 ? 0.5 * scale * 2 : (i + 1 < n ? (centres[i + 1] - centres[i]) / 2 : (centres[i] - centres[i - 1]) / 2)
            let left = i > 0 ? (centres[i] + centres[i - 1]) / 2 : centres[i] - half
            let right = i + 1 < n ? (centres[i] + centres[i + 1]) / 2 : centres[i] + half
            return (min(1, max(0, left)), min(1, max(0, right)))
        }
    }

    /// The four corners of the part of the line `corners` (clockwise from its top-left) between the
    /// fractions `start` and `end` of its width.
    public static func slice(_ corners: [Point], from start: Double, to end: Double) -> [Point] {
        [corners[0].toward(corners[1], start), corners[0].toward(corners[1], end),
         corners[3].toward(corners[2], end), corners[3].toward(corners[2], start)]
    }
}
