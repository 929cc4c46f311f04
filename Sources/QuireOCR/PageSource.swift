import Imaging

/// One page to read, before its pixels are decoded: its stored size, its EXIF orientation, and how
/// to decode it. A page of an image file decodes from the upload's bytes (a JPEG at 1/2, 1/4 or 1/8
/// of its size where that is all recognition needs); a PDF page comes already rendered.
struct PageSource {
    /// The stored page, pixels.
    var width: Int
    var height: Int
    /// EXIF orientation (1: as stored).
    var exif: Int
    /// Whether ``decode`` can make a reduced copy cheaply (JPEG's DCT scaling).
    var reducible: Bool
    /// The page's pixels, at 1/`reduction` of their size (1, 2, 4 or 8; above 1 only when ``reducible``).
    var decode: (_ reduction: Int) throws(ImageError) -> Image

    /// Page `page` (0-based) of an uploaded image file.
    static func file(_ bytes: [UInt8], header: Image.Header, page: Int, exif: Int) -> PageSource {
        PageSource(width: header.width, height: header.height, exif: exif, reducible: header.format == .jpeg) { reduction throws(ImageError) in
            try Image.decode(bytes, format: header.format, page: page, jpegReduction: reduction)
        }
    }

    /// A page already in pixels (a rendered PDF page).
    static func rendered(_ image: Image) -> PageSource {
        PageSource(width: image.width, height: image.height, exif: 1, reducible: false) { _ throws(ImageError) in image }
    }

    /// `image` (this page's pixels, at any scale) turned upright by the page's EXIF orientation, and the
    /// map from the stored page to the upright one at the uploaded resolution.
    func upright(_ image: Image) throws(ImageError) -> (image: Image, toUpright: Affine, quarterTurns: Int, mirrored: Bool) {
        let upright = uprightTransform()
        var image = image
        if upright.quarterTurns != 0 { image = try image.rotated(quarterTurns: upright.quarterTurns) }
        if upright.mirrored { image = try image.flippedHorizontally() }
        return (image, upright.toUpright, upright.quarterTurns, upright.mirrored)
    }

    /// The stored pixel grid → the upright page (EXIF orientation applied), both at the uploaded size.
    func uprightTransform() -> (toUpright: Affine, quarterTurns: Int, mirrored: Bool) {
        let (turns, mirror) = EXIFOrientation.correction(for: exif)
        var toUpright = Affine.rotation(quarterTurns: turns, width: Double(width), height: Double(height))
        if mirror { toUpright = toUpright.then(.mirror(width: Double(turns % 2 == 1 ? height : width))) }
        return (toUpright, turns, mirror)
    }
}
