import QuireWire

/// Azure AI Vision Image Analysis 4.0 (`POST …/computervision/imageanalysis:analyze?api-version=2023-10-01&features=read`),
/// as the `ImageAnalysisResult` of the 2023-10-01 swagger gives it. One image, so one page: a
/// multi-page TIFF answers with its first page read.
public enum ImageAnalysis {
    public static let apiVersion = "2023-10-01"
    public static let modelVersion = "2023-10-01"

    public struct Result: Codable, Sendable, Equatable {
        public var modelVersion: String
        public var metadata: Metadata
        public var readResult: ReadResult
    }

    public struct Metadata: Codable, Sendable, Equatable {
        public var width: Int
        public var height: Int
    }

    public struct ReadResult: Codable, Sendable, Equatable {
        public var blocks: [Block]
    }

    public struct Block: Codable, Sendable, Equatable {
        public var lines: [Line]
    }

    public struct Point: Codable, Sendable, Equatable {
        public var x: Int
        public var y: Int
    }

    public struct Line: Codable, Sendable, Equatable {
        public var text: String
        public var boundingPolygon: [Point]
        public var words: [Word]
    }

    public struct Word: Codable, Sendable, Equatable {
        public var text: String
        public var boundingPolygon: [Point]
        public var confidence: Double
    }

    public static func result(_ result: OCRResult) -> Result {
        guard let page = result.pages.first else {
            return Result(modelVersion: modelVersion, metadata: Metadata(width: 0, height: 0), readResult: ReadResult(blocks: []))
        }
        let geometry = PageGeometry(page)
        func polygon(_ points: [OCRResult.Point], _ box: OCRResult.Box) -> [Point] {
            geometry.quad(points, box: box).map { Point(x: $0.x, y: $0.y) }
        }
        // The service returns one block with every line of the image (the swagger's `blocks` has
        // `maxItems: 1`), so Tesseract's blocks are merged in reading order; no text, no block.
        let lines = page.blocks.flatMap { $0.paragraphs.flatMap(\.lines) }.map { line in
            Line(text: line.text, boundingPolygon: polygon(line.polygon, line.boundingBox), words: line.words.map { word in
                Word(text: word.text, boundingPolygon: polygon(word.polygon, word.boundingBox), confidence: AzureRead.rounded(word.confidence ?? 0))
            })
        }
        let blocks = lines.isEmpty ? [] : [Block(lines: lines)]
        return Result(modelVersion: modelVersion, metadata: Metadata(width: geometry.width, height: geometry.height),
                      readResult: ReadResult(blocks: blocks))
    }
}
