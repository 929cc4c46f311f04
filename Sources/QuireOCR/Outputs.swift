import Foundation
import QuireFormats
import QuireWire
import Imaging
import QuirePDF
import QuireSupport
import QuireRecognition

/// The outputs people open in tools they already have, made from a result and the uploaded image:
/// a searchable PDF (`outputs: ["pdf"]`) and an overlay picture of the boxes (`quire recognize
/// --overlay`).
public enum Outputs {
    /// The upright page as the result's coordinates see it: the stored image decoded and turned
    /// (and mirrored) the way the page's `transform` says.
    static func uprightImage(_ bytes: [UInt8], header: Image.Header, page: OCRResult.Page) throws(ImageError) -> Image {
        let stored = try Image.decode(bytes, format: header.format, page: page.pageNumber - 1)
        let t = page.transform.count == 6 ? page.transform : [1, 0, 0, 0, 1, 0]
        let toStored = Affine(a: t[0], b: t[1], c: t[2], d: t[3], e: t[4], f: t[5])
        let w = Double(stored.width), h = Double(stored.height)
        // The quarter turns, then the mirror, whose map from stored to upright is the transform's inverse.
        for turns in 0..<4 {
            for mirror in [false, true] {
                var map = Affine.rotation(quarterTurns: turns, width: w, height: h)
                if mirror { map = map.then(.mirror(width: turns % 2 == 1 ? h : w)) }
                let back = map.then(toStored)
                guard abs(back.a - 1) < 1e-6, abs(back.b) < 1e-6, abs(back.d) < 1e-6, abs(back.e - 1) < 1e-6 else { continue }
                var image = try stored.rotated(quarterTurns: turns)
                if mirror { image = try image.flippedHorizontally() }
                image.setResolution(stored.resolution)
                return image
            }
        }
        return stored
    }

    /// Tesseract's glyphless font for PDF text layers: in the tessdata folder, else where Debian's
    /// libtesseract5 puts it (a folder of other language packs may not have it).
    public static func fontPath(dataPath: String) -> String {
        let own = dataPath + "/pdf.ttf"
        return FileManager.default.fileExists(atPath: own) ? own : "/usr/share/tesseract-ocr/5/tessdata/pdf.ttf"
    }

    /// The searchable PDF of `result`'s pages over the uploaded image. JPEG pages that need no
    /// turning keep their own bytes; other photos (JPEG, HEIC, WebP) are re-encoded as JPEG, and
    /// everything else is stored losslessly (flate).
    public static func pdf(_ result: OCRResult, image bytes: [UInt8], fontPath: String) throws(WireError) -> [UInt8] {
        guard let font = FileManager.default.contents(atPath: fontPath) else {
            throw WireError(.engineFailure, "the PDF font \(fontPath) is missing (it comes with Tesseract's language packs)")
        }
        do throws(ImageError) {
            let header = try Image.header(bytes)
            var pages: [SearchablePDF.Page] = []
            for page in result.pages {
                let image = try uprightImage(bytes, header: header, page: page)
                let upright = page.transform == [1, 0, 0, 0, 1, 0]
                let compressed: CompressedImage
                if header.format == .jpeg, upright, let asIs = Image.jpegAsIs(bytes) {
                    compressed = asIs
                } else {
                    compressed = try image.compressed(jpegQuality: [.jpeg, .heic, .webp].contains(header.format) ? 85 : nil)
                }
                let dpi = (70...2_400).contains(image.resolution) ? Double(image.resolution) : 72
                pages.append(SearchablePDF.Page(page: page, image: SearchablePDF.Image(
                    filter: compressed.encoding == .jpeg ? .dct : .flate, width: compressed.width, height: compressed.height,
                    bitsPerComponent: compressed.bitsPerComponent, components: compressed.components, predictor: compressed.predictor,
                    data: compressed.data), dpi: dpi))
            }
            return SearchablePDF.document(pages, font: Array(font), producer: "Quire (\(result.metadata.engine))", compress: Zlib.compress)
        } catch {
            throw Recognizer.wire(error)
        }
    }

    /// A result as reply frames: its JSON (the bytes JSONEncoder would write, sorted keys and unescaped
    /// slashes, at a tenth of its cost), then, given `pdf`, the searchable PDF of that uploaded file
    /// (``pdf(_:image:fontPath:)`` for an image, ``pdf(_:pdf:fontPath:)`` for a PDF) as frame 2, which the
    /// result's `attachments` names: binary outputs travel as frames, never base64 inside the JSON.
    /// Making the PDF counts in `encodeMs`.
    public static func replyFrames(_ result: OCRResult, pdf: (file: [UInt8], fontPath: String)? = nil) throws(WireError) -> [[UInt8]] {
        var result = result
        var attachments: [[UInt8]] = []
        if let pdf {
            let started = Instant.now()
            let made = PDFSniff.isPDF(pdf.file)
                ? try Self.pdf(result, pdf: pdf.file, fontPath: pdf.fontPath)
                : try Self.pdf(result, image: pdf.file, fontPath: pdf.fontPath)
            result.attachments = [.init(output: OCRRequest.Output.pdf.rawValue, frame: 2, mediaType: "application/pdf", size: made.count)]
            result.metadata.timings.encodeMs += Instant.now().seconds(since: started) * 1_000
            attachments.append(made)
        }
        do { return [try result.jsonBytes()] + attachments } catch {
            throw WireError(.internal, "the result holds a number JSON cannot carry (\(error.value))")
        }
    }

    /// A PDF upload made searchable, as OCRmyPDF makes it: every page kept as it is (its content,
    /// text, fonts and pictures untouched; the file is written again around them), with the words of
    /// each page read by OCR laid over it as invisible text where the page shows them.
    /// Pages read from their own text layer, and pages that failed, get nothing: the first have their
    /// text already. The text layer is ``SearchablePDF``'s, each page's placed by the map from the
    /// result's upright coordinates to the rendering the page was read from (`transform`) and from that
    /// rendering to the page's own space (its `/Rotate` and boxes, as PDFium rendered it).
    public static func pdf(_ result: OCRResult, pdf original: [UInt8], fontPath: String) throws(WireError) -> [UInt8] {
        guard let font = FileManager.default.contents(atPath: fontPath) else {
            throw WireError(.engineFailure, "the PDF font \(fontPath) is missing (it comes with Tesseract's language packs)")
        }
        let readFromLayer = Set(result.metadata.steps.filter { $0.step == "textLayer" && $0.applied }.compactMap(\.page))
        do throws(PDFError) {
            let document = try PDFDocument(original)
            var layers: [SearchablePDF.Page] = []
            var overlays: [PDFDocument.Overlay] = []
            for page in result.pages where page.error == nil && !readFromLayer.contains(page.pageNumber) && !page.blocks.isEmpty {
                guard let resolution = page.resolution, resolution > 0, (1...document.pageCount).contains(page.pageNumber) else { continue }
                let dpi = Double(resolution)
                let index = page.pageNumber - 1
                let size = try document.pageSize(index)
                let rendered = (width: PDFDocument.pixels(size.width, dpi: dpi), height: PDFDocument.pixels(size.height, dpi: dpi))
                // The text layer's page: the upright page in points, y up; then its pixels, y down; the
                // rendering's pixels; the page's space.
                let toUpright = Affine(a: dpi / 72, b: 0, c: 0, d: 0, e: -dpi / 72, f: Double(page.height))
                let t = page.transform.count == 6 ? page.transform : [1, 0, 0, 0, 1, 0]
                let toRendering = Affine(a: t[0], b: t[1], c: t[2], d: t[3], e: t[4], f: t[5])
                let toPage = try document.deviceToPage(index, width: rendered.width, height: rendered.height)
                overlays.append(.init(sourcePage: layers.count, page: index, matrix: toUpright.then(toRendering).then(toPage)))
                layers.append(SearchablePDF.Page(page: page, image: nil, dpi: dpi))
            }
            guard !layers.isEmpty else { return original }
            let text = try PDFDocument(SearchablePDF.document(layers, font: Array(font), producer: "Quire (\(result.metadata.engine))",
                                                              compress: Zlib.compress))
            return try document.saving(overlays: overlays, from: text)
        } catch {
            throw WireError(.engineFailure, "the searchable PDF could not be made: \(error.message)")
        }
    }

    /// Colours of the overlay: lines blue, words green, words read with low confidence red.
    public static let lineColour: (UInt8, UInt8, UInt8) = (30, 90, 255)
    public static let wordColour: (UInt8, UInt8, UInt8) = (0, 160, 60)
    public static let lowConfidenceColour: (UInt8, UInt8, UInt8) = (230, 20, 20)

    /// A PNG of the first page (upright, as the result's coordinates are) with every line's and
    /// word's polygon drawn on it: words below `lowConfidence` in red. Deskewed pages show their
    /// boxes leaning with the text.
    public static func overlay(_ result: OCRResult, image bytes: [UInt8], page number: Int = 1,
                               lowConfidence: Double = AzureReadV2.lowConfidence) throws(WireError) -> [UInt8] {
        guard let page = result.pages.first(where: { $0.pageNumber == number }) ?? result.pages.first else {
            throw WireError(.badRequest, "the result has no pages to draw")
        }
        do throws(ImageError) {
            let header = try Image.header(bytes)
            let image = try uprightImage(bytes, header: header, page: page).colour()
            let width = max(1, Int((Double(max(image.width, image.height)) / 800).rounded()))
            func points(_ polygon: [OCRResult.Point], _ box: OCRResult.Box) -> [(x: Double, y: Double)] {
                (polygon.count == 4 ? polygon : SearchablePDF.corners(box)).map { (Double($0.x), Double($0.y)) }
            }
            for block in page.blocks {
                for paragraph in block.paragraphs {
                    for line in paragraph.lines {
                        image.stroke(points(line.polygon, line.boundingBox), rgb: lineColour, width: width + 1)
                        for word in line.words {
                            let low = (word.confidence ?? 0) < lowConfidence
                            image.stroke(points(word.polygon, word.boundingBox), rgb: low ? lowConfidenceColour : wordColour, width: width)
                        }
                    }
                }
            }
            return try image.png()
        } catch {
            throw Recognizer.wire(error)
        }
    }
}
