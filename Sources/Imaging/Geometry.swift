import Foundation

/// A box in an image's pixels: left, top, width and height.
public struct PixelBox: Sendable, Equatable {
    public var x: Int, y: Int, width: Int, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) { self.x = x; self.y = y; self.width = width; self.height = height }

    /// This box grown on each side where `other` sticks out of it by at most `slack` pixels.
    public func covering(_ other: PixelBox, slack: Int) -> PixelBox {
        func grow(_ mine: Int, _ theirs: Int, outward: Bool) -> Int {
            let by = outward ? theirs - mine : mine - theirs
            return by > 0 && by <= slack ? theirs : mine
        }
        let x0 = grow(x, other.x, outward: false), y0 = grow(y, other.y, outward: false)
        let x1 = grow(x + width, other.x + other.width, outward: true), y1 = grow(y + height, other.y + other.height, outward: true)
        return PixelBox(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

/// A 2-D affine map x' = a·x + b·y + c, y' = d·x + e·y + f.
public struct Affine: Equatable, Sendable {
    public var a = 1.0, b = 0.0, c = 0.0, d = 0.0, e = 1.0, f = 0.0

    public init(a: Double = 1, b: Double = 0, c: Double = 0, d: Double = 0, e: Double = 1, f: Double = 0) {
        self.a = a; self.b = b; self.c = c; self.d = d; self.e = e; self.f = f
    }

    public static let identity = Affine()

    /// `other` after `self`.
    public func then(_ o: Affine) -> Affine {
        Affine(a: o.a * a + o.b * d, b: o.a * b + o.b * e, c: o.a * c + o.b * f + o.c,
               d: o.d * a + o.e * d, e: o.d * b + o.e * e, f: o.d * c + o.e * f + o.f)
    }

    public var inverse: Affine {
        let det = a * e - b * d
        guard det != 0 else { return .identity }
        let ia = e / det, ib = -b / det, id = -d / det, ie = a / det
        return Affine(a: ia, b: ib, c: -(ia * c + ib * f), d: id, e: ie, f: -(id * c + ie * f))
    }

    /// Turning a `width`×`height` image clockwise by `quarterTurns` quarter turns.
    public static func rotation(quarterTurns: Int, width: Double, height: Double) -> Affine {
        switch ((quarterTurns % 4) + 4) % 4 {
        case 1: Affine(a: 0, b: -1, c: height, d: 1, e: 0, f: 0)
        case 2: Affine(a: -1, b: 0, c: width, d: 0, e: -1, f: height)
        case 3: Affine(a: 0, b: 1, c: 0, d: -1, e: 0, f: width)
        default: .identity
        }
    }

    public static func mirror(width: Double) -> Affine { Affine(a: -1, b: 0, c: width, d: 0, e: 1, f: 0) }

    public var array: [Double] { [a, b, c, d, e, f].map { $0 == 0 ? 0 : $0 } }
}

extension Affine {
    /// Turning by `degrees` clockwise (image coordinates, y down) about (x, y), then shifting by
    /// (shiftX, shiftY): what `Image.rotated(degrees:)` does to its pixels.
    public static func turn(degrees: Double, aboutX x: Double, y: Double, shiftX: Double, y shiftY: Double) -> Affine {
        let r = degrees * .pi / 180
        let cos = Foundation.cos(r), sin = Foundation.sin(r)
        // p' = R (p - c) + c + shift
        return Affine(a: cos, b: -sin, c: x - cos * x + sin * y + shiftX,
                      d: sin, e: cos, f: y - sin * x - cos * y + shiftY)
    }

    public func apply(_ x: Double, _ y: Double) -> (x: Double, y: Double) { (a * x + b * y + c, d * x + e * y + f) }

    /// The whole pixels covering the image of a rectangle: the box around its mapped corners, left and
    /// top rounded down, right and bottom up, within a `size` page.
    public func pixelBox(x: Double, y: Double, width: Double, height: Double, within size: (width: Int, height: Int))
        -> (x0: Int, y0: Int, x1: Int, y1: Int) {
        let corners = [apply(x, y), apply(x + width, y), apply(x + width, y + height), apply(x, y + height)]
        let xs = corners.map(\.x), ys = corners.map(\.y)
        let x0 = min(size.width, max(0, Int((xs.min() ?? 0).rounded(.down))))
        let y0 = min(size.height, max(0, Int((ys.min() ?? 0).rounded(.down))))
        let x1 = min(size.width, max(x0, Int((xs.max() ?? 0).rounded(.up))))
        let y1 = min(size.height, max(y0, Int((ys.max() ?? 0).rounded(.up))))
        return (x0, y0, x1, y1)
    }

    /// The factor by which lengths change (the scale part of a scale-and-turn map).
    public var lengthScale: Double { (a * a + d * d).squareRoot() }

    public var isIdentity: Bool { self == .identity }
}
