/// A text region the detector found: four corners clockwise from the top-left (the text's own
/// top-left, wherever it leans), in the picture's pixels, and the detector's mean certainty inside.
public struct DetectedText: Sendable, Equatable {
    public var corners: [Point]
    public var score: Double

    public init(corners: [Point], score: Double) {
        self.corners = corners
        self.score = score
    }

    /// The length of the top edge and of the left edge.
    public var size: (width: Double, height: Double) {
        (max(corners[0].distance(to: corners[1]), corners[3].distance(to: corners[2])),
         max(corners[0].distance(to: corners[3]), corners[1].distance(to: corners[2])))
    }

    /// The same rectangle read from its top-right corner down: a line written top to bottom, whose
    /// text's top-left corner is the rectangle's top-right one.
    public var readDownward: DetectedText {
        DetectedText(corners: [corners[1], corners[2], corners[3], corners[0]], score: score)
    }

    public var minY: Double { corners.map(\.y).min()! }
    public var maxY: Double { corners.map(\.y).max()! }
    public var minX: Double { corners.map(\.x).min()! }
    public var maxX: Double { corners.map(\.x).max()! }
}

/// Differentiable Binarization's post-processing: the detector's map of how likely each pixel is
/// text, turned into one rotated rectangle per region of text (Liao et al., "Real-time Scene Text
/// Detection with Differentiable Binarization", 2020; the steps and defaults are PaddleOCR's).
public struct TextRegions: Sendable {
    /// A pixel is text above this probability.
    public var threshold: Float = 0.3
    /// A region is kept when the mean probability inside its rectangle reaches this.
    public var minScore: Double = 0.5
    /// The detector is trained on shrunk regions: each rectangle grows by its area × this ÷ perimeter.
    public var unclipRatio: Double = 1.6
    /// Rectangles with a side shorter than this (map pixels) are noise.
    public var minSide: Double = 3
    /// At most this many regions are looked at.
    public var maxCandidates = 1000

    public init() {}

    /// The text regions in a `width`×`height` probability map (row by row from its first element: an
    /// array, or the detector's output where it lies), their corners scaled to a
    /// `targetWidth`×`targetHeight` picture.
    public func regions<Map: RandomAccessCollection<Float>>(in map: Map, width: Int, height: Int, targetWidth: Int, targetHeight: Int) -> [DetectedText]
    where Map.Index == Int {
        precondition(map.startIndex == 0 && map.count >= width * height)
        // The text mask, dilated by one pixel up and to the left (a 2×2 kernel) so that a region
        // broken by one pixel stays whole.
        var mask = [Bool](repeating: false, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                var on = false
                for dy in 0...1 where y - dy >= 0 {
                    for dx in 0...1 where x - dx >= 0 && map[(y - dy) * width + x - dx] > threshold { on = true }
                }
                mask[y * width + x] = on
            }
        }
        var found: [DetectedText] = []
        let sx = Double(targetWidth) / Double(width), sy = Double(targetHeight) / Double(height)
        for component in Self.components(mask, width: width, height: height).prefix(maxCandidates) {
            let hull = Self.convexHull(component)
            let (box, side) = Self.minimumRectangle(hull)
            guard side >= minSide else { continue }
            let score = Self.meanInside(box, map: map, width: width, height: height)
            guard score >= minScore else { continue }
            let (grown, grownSide) = Self.unclip(box, ratio: unclipRatio)
            guard grownSide >= minSide + 2 else { continue }
            let corners = grown.map { p in
                Point(x: min(Double(targetWidth), max(0, (p.x * sx).rounded())), y: min(Double(targetHeight), max(0, (p.y * sy).rounded())))
            }
            found.append(DetectedText(corners: corners, score: score))
        }
        return found
    }

    /// The 8-connected regions of `mask`, each as the points of its pixels that touch the outside
    /// (enough for the hull), in the order a raster scan meets them.
    static func components(_ mask: [Bool], width: Int, height: Int) -> [[Point]] {
        var label = [Int32](repeating: 0, count: mask.count)
        var regions: [[Point]] = []
        var stack: [Int] = []
        for start in 0..<mask.count where mask[start] && label[start] == 0 {
            let id = Int32(regions.count + 1)
            var edge: [Point] = []
            label[start] = id
            stack.append(start)
            while let i = stack.popLast() {
                let x = i % width, y = i / width
                var border = false
                for dy in -1...1 {
                    for dx in -1...1 where dx != 0 || dy != 0 {
                        let nx = x + dx, ny = y + dy
                        guard nx >= 0, ny >= 0, nx < width, ny < height else { border = true; continue }
                        let n = ny * width + nx
                        if !mask[n] { border = true } else if label[n] == 0 {
                            label[n] = id
                            stack.append(n)
                        }
                    }
                }
                if border { edge.append(Point(x: Double(x), y: Double(y))) }
            }
            regions.append(edge)
        }
        return regions
    }

    /// The convex hull, counter-clockwise in image coordinates (Andrew's monotone chain).
    static func convexHull(_ points: [Point]) -> [Point] {
        let sorted = points.sorted { $0.x != $1.x ? $0.x < $1.x : $0.y < $1.y }
        guard sorted.count > 2 else { return sorted }
        func cross(_ o: Point, _ a: Point, _ b: Point) -> Double { (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x) }
        var lower: [Point] = [], upper: [Point] = []
        for p in sorted {
            while lower.count >= 2 && cross(lower[lower.count - 2], lower[lower.count - 1], p) <= 0 { lower.removeLast() }
            lower.append(p)
        }
        for p in sorted.reversed() {
            while upper.count >= 2 && cross(upper[upper.count - 2], upper[upper.count - 1], p) <= 0 { upper.removeLast() }
            upper.append(p)
        }
        return Array(lower.dropLast() + upper.dropLast())
    }

    /// The smallest-area rectangle around a convex hull (one of its sides lies along a hull edge),
    /// its corners in ``ordered(_:)`` order, and its shorter side.
    static func minimumRectangle(_ hull: [Point]) -> (corners: [Point], shortSide: Double) {
        guard let first = hull.first else { return ([], 0) }
        var best: (area: Double, corners: [Point], side: Double) = (.infinity, [first, first, first, first], 0)
        let edges = hull.count > 1 ? hull.count : 0
        for i in 0..<max(edges, 1) {
            var ux = 1.0, uy = 0.0
            if edges > 0 {
                let a = hull[i], b = hull[(i + 1) % hull.count]
                let length = a.distance(to: b)
                if length < 1e-9 { continue }
                (ux, uy) = ((b.x - a.x) / length, (b.y - a.y) / length)
            }
            var minU = Double.infinity, maxU = -Double.infinity, minV = Double.infinity, maxV = -Double.infinity
            for p in hull {
                let u = p.x * ux + p.y * uy, v = -p.x * uy + p.y * ux
                minU = min(minU, u); maxU = max(maxU, u); minV = min(minV, v); maxV = max(maxV, v)
            }
            let area = (maxU - minU) * (maxV - minV)
            if area < best.area {
                let corners = [(minU, minV), (maxU, minV), (maxU, maxV), (minU, maxV)].map { u, v in
                    Point(x: u * ux - v * uy, y: u * uy + v * ux)
                }
                best = (area, corners, min(maxU - minU, maxV - minV))
            }
        }
        return (ordered(best.corners), best.side)
    }

    /// A rectangle's corners as the text reads them: of the two leftmost, the upper is the top-left
    /// and the lower the bottom-left; of the two rightmost, the upper is the top-right.
    static func ordered(_ corners: [Point]) -> [Point] {
        let byX = corners.sorted { $0.x != $1.x ? $0.x < $1.x : $0.y < $1.y }
        let (topLeft, bottomLeft) = byX[1].y > byX[0].y ? (byX[0], byX[1]) : (byX[1], byX[0])
        let (topRight, bottomRight) = byX[3].y > byX[2].y ? (byX[2], byX[3]) : (byX[3], byX[2])
        return [topLeft, topRight, bottomRight, bottomLeft]
    }

    /// The mean of `map` over the pixels whose centres lie inside the rectangle.
    static func meanInside<Map: RandomAccessCollection<Float>>(_ box: [Point], map: Map, width: Int, height: Int) -> Double where Map.Index == Int {
        let x0 = max(0, Int(box.map(\.x).min()!.rounded(.down))), x1 = min(width - 1, Int(box.map(\.x).max()!.rounded(.up)))
        let y0 = max(0, Int(box.map(\.y).min()!.rounded(.down))), y1 = min(height - 1, Int(box.map(\.y).max()!.rounded(.up)))
        guard x0 <= x1, y0 <= y1 else { return 0 }
        var sum = 0.0, count = 0
        for y in y0...y1 {
            for x in x0...x1 where contains(box, Point(x: Double(x), y: Double(y))) {
                sum += Double(map[y * width + x])
                count += 1
            }
        }
        return count == 0 ? 0 : sum / Double(count)
    }

    /// Whether `p` lies inside or on the convex quadrilateral `q`.
    static func contains(_ q: [Point], _ p: Point) -> Bool {
        var sign = 0.0
        for i in 0..<q.count {
            let a = q[i], b = q[(i + 1) % q.count]
            let c = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
            if abs(c) < 1e-9 { continue }
            if sign == 0 { sign = c } else if (c > 0) != (sign > 0) { return false }
        }
        return true
    }

    /// The rectangle grown on every side by its area × `ratio` ÷ its perimeter (the offset the
    /// detector's training shrank it by), and the grown rectangle's shorter side.
    static func unclip(_ box: [Point], ratio: Double) -> (corners: [Point], shortSide: Double) {
        let w = box[0].distance(to: box[1]), h = box[1].distance(to: box[2])
        guard w + h > 0 else { return (box, 0) }
        let d = w * h * ratio / (2 * (w + h))
        // Unit vectors along the top edge and down the left edge.
        let ux = w > 0 ? (box[1].x - box[0].x) / w : 1, uy = w > 0 ? (box[1].y - box[0].y) / w : 0
        let vx = h > 0 ? (box[2].x - box[1].x) / h : -uy, vy = h > 0 ? (box[2].y - box[1].y) / h : ux
        let signs: [(Double, Double)] = [(-1, -1), (1, -1), (1, 1), (-1, 1)]
        let grown = zip(box, signs).map { p, s in Point(x: p.x + d * (s.0 * ux + s.1 * vx), y: p.y + d * (s.0 * uy + s.1 * vy)) }
        return (ordered(grown), min(w, h) + 2 * d)
    }
}
