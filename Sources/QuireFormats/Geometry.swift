import Foundation
import QuireWire

/// Where a Quire page's coordinates land in the uploaded file, for the foreign shapes.
///
/// Quire's coordinates are pixels of the upright page (EXIF orientation and any detected quarter turn
/// applied). Azure and Cloud Vision give coordinates "relative to the top-left of the original image"
/// with quads that turn with the text, and report the text's angle beside them. So every point goes
/// through the page's `transform` to the stored pixel grid of the uploaded file, and the polygon's
/// first corner stays the text's top-left: a word in a photo stored sideways gets a quad whose
/// first corner is wherever the word begins.
public struct PageGeometry: Sendable, Equatable {
    /// The page's `transform`: page (x, y) → stored grid (a·x + b·y + c, d·x + e·y + f).
    public var transform: [Double]
    /// The stored pixel grid's size (the page's size, swapped for a quarter turn).
    public var width: Int
    public var height: Int
    /// The clockwise angle of the text in the stored image, degrees in (-180, 180]: Azure Read 3.2's
    /// `angle` (2.0's `clockwiseOrientation` is the same in [0, 360)).
    public var textAngle: Double

    public init(_ page: OCRResult.Page) {
        transform = page.transform.count == 6 ? page.transform : [1, 0, 0, 0, 1, 0]
        let sideways = ((page.rotation / 90) % 2 + 2) % 2 == 1
        width = sideways ? page.height : page.width
        height = sideways ? page.width : page.height
        // The page was turned clockwise by `rotation` to be upright and by `deskewAngle` more to level
        // the lines, so in the stored image the text leans the other way.
        textAngle = Self.normalised(-(Double(page.rotation) + page.deskewAngle))
    }

    /// Degrees into (-180, 180], to two decimals (Azure's precision).
    static func normalised(_ degrees: Double) -> Double {
        var d = degrees.truncatingRemainder(dividingBy: 360)
        if d <= -180 { d += 360 }
        if d > 180 { d -= 360 }
        let rounded = (d * 100).rounded() / 100
        return rounded == 0 ? 0 : rounded
    }

    /// A page point in the stored grid, whole pixels within the image.
    public func stored(_ p: OCRResult.Point) -> OCRResult.Point {
        let t = transform
        let x = t[0] * Double(p.x) + t[1] * Double(p.y) + t[2]
        let y = t[3] * Double(p.x) + t[4] * Double(p.y) + t[5]
        return .init(x: min(width, max(0, Int(x.rounded()))), y: min(height, max(0, Int(y.rounded()))))
    }

    /// The element's quad in the stored grid, clockwise from the text's top-left corner.
    public func quad(_ polygon: [OCRResult.Point], box: OCRResult.Box) -> [OCRResult.Point] {
        let corners = polygon.count == 4 ? polygon : [
            .init(x: box.x, y: box.y), .init(x: box.x + box.width, y: box.y),
            .init(x: box.x + box.width, y: box.y + box.height), .init(x: box.x, y: box.y + box.height),
        ]
        return corners.map(stored)
    }

    /// Azure's flat `boundingBox`: x1, y1, … x4, y4.
    public func flat(_ polygon: [OCRResult.Point], box: OCRResult.Box) -> [Int] {
        quad(polygon, box: box).flatMap { [$0.x, $0.y] }
    }
}
