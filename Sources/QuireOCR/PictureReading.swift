import Foundation
import Imaging
import QuireRecognition
import QuireSupport
import QuireWire

extension Recognizer {
    /// Reads one page with an engine that wants the picture (``RecognizerInput/picture(maxSide:)``):
    /// turned upright by its EXIF orientation, in colour, reduced only where its longer side is over
    /// `maxSide` pixels.
    func readPicture(_ source: PageSource, number: Int, outputs: Set<OCRRequest.Output>, symbols: Bool,
                     engine: any TextRecognizer, maxSide: Int) throws(WireError) -> PageRead {
        let t0 = Instant.now()
        let image: Image, toUpright: Affine, turns: Int, mirror: Bool
        do throws(ImageError) {
            var reduction = 1
            while source.reducible && reduction < 8 && max(source.width, source.height) / (reduction * 2) >= maxSide {
                reduction *= 2
            }
            var decoded = try source.decode(reduction)
            let largest = max(decoded.width, decoded.height)
            if largest > maxSide { decoded = try decoded.scaled(by: Double(maxSide) / Double(largest)) }
            (image, toUpright, turns, mirror) = try source.upright(decoded)
        } catch {
            throw Self.wire(error)
        }
        let upright = turns % 2 == 1 ? (width: source.height, height: source.width) : (width: source.width, height: source.height)
        let scale = Double(image.width) / Double(upright.width)
        let t1 = Instant.now()
        let recognized: RecognizedPage
        do throws(RecognitionError) {
            recognized = try engine.recognize(image, layout: .sparse, symbols: symbols)
        } catch {
            throw WireError(.engineFailure, error.message)
        }
        var built = ResultBuilder.page(recognized, number: number, size: upright, toPage: Affine(a: 1 / scale, e: 1 / scale), scale: scale,
                                       quarterTurns: turns, mirrored: mirror, deskewAngle: 0, transform: toUpright.inverse)
        built.renderings = Self.renderings(of: built, outputs)
        return PageRead(page: built, steps: [], prepareSeconds: t1.seconds(since: t0), recognizeSeconds: Instant.now().seconds(since: t1),
                        engine: engine.engineName)
    }
}
