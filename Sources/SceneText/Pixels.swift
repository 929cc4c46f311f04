/// A colour picture as rows of red, green, blue bytes: what the scene engine resizes, crops and feeds
/// to its models. Plain Swift, so that every step can be tested without a model.
public struct Pixels: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var bytes: [UInt8]

    public init(width: Int, height: Int, bytes: [UInt8]) {
        precondition(bytes.count == width * height * 3, "\(width)×\(height) RGB pixels need \(width * height * 3) bytes")
        self.width = width
        self.height = height
        self.bytes = bytes
    }

    /// A picture of one colour.
    public init(width: Int, height: Int, filledWith rgb: (UInt8, UInt8, UInt8)) {
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for i in stride(from: 0, to: bytes.count, by: 3) { (bytes[i], bytes[i + 1], bytes[i + 2]) = rgb }
        self.init(width: width, height: height, bytes: bytes)
    }

    /// Channel `c` of the pixel at (`x`, `y`), the nearest edge pixel outside the picture.
    @inline(__always) func sample(_ x: Int, _ y: Int, _ c: Int) -> Float {
        let cx = min(max(x, 0), width - 1), cy = min(max(y, 0), height - 1)
        return Float(bytes[(cy * width + cx) * 3 + c])
    }

    /// Bilinear interpolation at (`x`, `y`) in pixel-centre coordinates, edges replicated.
    @inline(__always) func bilinear(_ x: Double, _ y: Double, _ c: Int) -> Float {
        let x0 = Int(x.rounded(.down)), y0 = Int(y.rounded(.down))
        let fx = Float(x - Double(x0)), fy = Float(y - Double(y0))
        let top = sample(x0, y0, c) * (1 - fx) + sample(x0 + 1, y0, c) * fx
        let bottom = sample(x0, y0 + 1, c) * (1 - fx) + sample(x0 + 1, y0 + 1, c) * fx
        return top * (1 - fy) + bottom * fy
    }

    /// The picture resized to `width`×`height` (bilinear, pixel centres aligned as image libraries do).
    /// The same arithmetic as ``bilinear(_:_:_:)`` at every pixel, with each column's and each row's
    /// neighbours and weights worked out once: the detector's input is up to a million pixels.
    public func resized(width newWidth: Int, height newHeight: Int) -> Pixels {
        let sx = Double(width) / Double(newWidth), sy = Double(height) / Double(newHeight)
        /// For each output coordinate: the two source coordinates either side (edges replicated) and
        /// the weight of the second.
        func taps(_ count: Int, _ scale: Double, _ limit: Int) -> [(Int, Int, Float)] {
            (0..<count).map { i in
                let at = (Double(i) + 0.5) * scale - 0.5
                let first = Int(at.rounded(.down))
                return (min(max(first, 0), limit - 1), min(max(first + 1, 0), limit - 1), Float(at - Double(first)))
            }
        }
        let columns = taps(newWidth, sx, width), rows = taps(newHeight, sy, height)
        var out = [UInt8](repeating: 0, count: newWidth * newHeight * 3)
        out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { b in
                for (y, (y0, y1, fy)) in rows.enumerated() {
                    let top = y0 * width * 3, bottom = y1 * width * 3
                    for (x, (x0, x1, fx)) in columns.enumerated() {
                        let target = (y * newWidth + x) * 3
                        for c in 0..<3 {
                            let upper = Float(b[top + x0 * 3 + c]) * (1 - fx) + Float(b[top + x1 * 3 + c]) * fx
                            let lower = Float(b[bottom + x0 * 3 + c]) * (1 - fx) + Float(b[bottom + x1 * 3 + c]) * fx
                            o[target + c] = UInt8(min(255, max(0, (upper * (1 - fy) + lower * fy).rounded())))
                        }
                    }
                }
            }
        }
        return Pixels(width: newWidth, height: newHeight, bytes: out)
    }

    /// The quadrilateral `corners` (clockwise from its top-left, in this picture's pixel coordinates)
    /// straightened into a `width`×`height` picture: a perspective warp, edges replicated.
    public func warped(_ corners: [Point], width newWidth: Int, height newHeight: Int) -> Pixels {
        let target = [Point(x: 0, y: 0), Point(x: Double(newWidth), y: 0), Point(x: Double(newWidth), y: Double(newHeight)), Point(x: 0, y: Double(newHeight))]
        guard let h = Homography(from: target, to: corners) else {
            return Pixels(width: newWidth, height: newHeight, filledWith: (255, 255, 255))
        }
        // Corner coordinates are pixel edges; sampling is at pixel centres.
        return mapped(width: newWidth, height: newHeight) { x, y in
            let p = h.apply(Point(x: Double(x) + 0.5, y: Double(y) + 0.5))
            return (p.x - 0.5, p.y - 0.5)
        }
    }

    /// The picture turned a quarter counter-clockwise (a line written bottom to top becomes level).
    public func turnedCounterClockwise() -> Pixels {
        var out = [UInt8](repeating: 0, count: bytes.count)
        for y in 0..<height {
            for x in 0..<width {
                // (x, y) goes to (y, width - 1 - x) in a height×width picture
                let o = ((width - 1 - x) * height + y) * 3, i = (y * width + x) * 3
                out[o] = bytes[i]; out[o + 1] = bytes[i + 1]; out[o + 2] = bytes[i + 2]
            }
        }
        return Pixels(width: height, height: width, bytes: out)
    }

    /// The picture on a border of `top`/`bottom` rows and `left`/`right` columns of `rgb`.
    public func padded(top: Int, bottom: Int, left: Int, right: Int, with rgb: (UInt8, UInt8, UInt8)) -> Pixels {
        var out = Pixels(width: width + left + right, height: height + top + bottom, filledWith: rgb)
        for y in 0..<height {
            let source = y * width * 3, target = ((y + top) * out.width + left) * 3
            out.bytes.replaceSubrange(target..<(target + width * 3), with: bytes[source..<(source + width * 3)])
        }
        return out
    }

    /// The median of each channel over a sample of the picture's border: the colour around the text.
    public var borderColour: (UInt8, UInt8, UInt8) {
        var channels: [[UInt8]] = [[], [], []]
        let step = max(1, (width + height) / 200)
        for x in stride(from: 0, to: width, by: step) {
            for y in [0, height - 1] { for c in 0..<3 { channels[c].append(bytes[(y * width + x) * 3 + c]) } }
        }
        for y in stride(from: 0, to: height, by: step) {
            for x in [0, width - 1] { for c in 0..<3 { channels[c].append(bytes[(y * width + x) * 3 + c]) } }
        }
        let medians = channels.map { $0.sorted()[$0.count / 2] }
        return (medians[0], medians[1], medians[2])
    }

    /// The picture as the PP-OCR models take it: channels first, in blue, green, red order (the
    /// models were trained on OpenCV's pictures), each byte scaled to -1…1, into `tensor` from
    /// `offset`, `rowLength` values per row (the rest of a row is left as it is).
    public func writeTensor(into tensor: inout [Float], offset: Int = 0, rowLength: Int? = nil) {
        let row = rowLength ?? width
        let plane = row * height
        tensor.withUnsafeMutableBufferPointer { t in
            bytes.withUnsafeBufferPointer { b in
                for y in 0..<height {
                    for x in 0..<width {
                        let i = (y * width + x) * 3
                        for c in 0..<3 {
                            t[offset + c * plane + y * row + x] = Float(b[i + 2 - c]) * (2.0 / 255.0) - 1
                        }
                    }
                }
            }
        }
    }

    private func mapped(width newWidth: Int, height newHeight: Int, _ source: (Int, Int) -> (Double, Double)) -> Pixels {
        var out = [UInt8](repeating: 0, count: newWidth * newHeight * 3)
        for y in 0..<newHeight {
            for x in 0..<newWidth {
                let (sx, sy) = source(x, y)
                let o = (y * newWidth + x) * 3
                for c in 0..<3 { out[o + c] = UInt8(min(255, max(0, bilinear(sx, sy, c).rounded()))) }
            }
        }
        return Pixels(width: newWidth, height: newHeight, bytes: out)
    }
}

/// A point in pixel coordinates.
public struct Point: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }

    func distance(to o: Point) -> Double { ((x - o.x) * (x - o.x) + (y - o.y) * (y - o.y)).squareRoot() }
    /// The point `t` of the way from `self` to `o`.
    func toward(_ o: Point, _ t: Double) -> Point { Point(x: x + (o.x - x) * t, y: y + (o.y - y) * t) }
}

/// The projective map that takes four points to four others.
struct Homography {
    var m: [Double]  // 3×3, row by row

    init?(from source: [Point], to target: [Point]) {
        // Eight equations in the eight unknowns h0…h7 (h8 = 1), solved by Gaussian elimination.
        var a = [[Double]](repeating: [Double](repeating: 0, count: 9), count: 8)
        for i in 0..<4 {
            let (x, y, u, v) = (source[i].x, source[i].y, target[i].x, target[i].y)
            a[2 * i] = [x, y, 1, 0, 0, 0, -u * x, -u * y, u]
            a[2 * i + 1] = [0, 0, 0, x, y, 1, -v * x, -v * y, v]
        }
        for col in 0..<8 {
            guard let pivot = (col..<8).max(by: { abs(a[$0][col]) < abs(a[$1][col]) }), abs(a[pivot][col]) > 1e-12 else { return nil }
            a.swapAt(col, pivot)
            for r in 0..<8 where r != col {
                let f = a[r][col] / a[col][col]
                if f != 0 { for c in col..<9 { a[r][c] -= f * a[col][c] } }
            }
        }
        m = (0..<8).map { a[$0][8] / a[$0][$0] } + [1]
    }

    func apply(_ p: Point) -> Point {
        let w = m[6] * p.x + m[7] * p.y + m[8]
        return Point(x: (m[0] * p.x + m[1] * p.y + m[2]) / w, y: (m[3] * p.x + m[4] * p.y + m[5]) / w)
    }
}
