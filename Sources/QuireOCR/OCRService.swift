import Foundation
import QuireSupport
import QuireWire
import QuireWorker

/// The `ocr` worker service: frame 1 the JSON request, frame 2 the image bytes; the reply is one
/// JSON frame with the result (or a typed error), followed by one frame per binary output asked for
/// (`pdf`), as the result's `attachments` list them.
public enum OCRService {
    public static let name = "ocr"

    public static func make(configuration: OCRConfiguration) -> WorkerService {
        WorkerService(name: name, requiresJSONFrame: true) { OCRHandler(configuration: configuration) }
    }

    final class OCRHandler: RequestHandler {
        let recognizer: Recognizer

        init(configuration: OCRConfiguration) {
            recognizer = Recognizer(configuration: configuration)
        }

        func handle(_ request: WorkerRequest) throws -> [[UInt8]] {
            guard request.body.count == 2 else {
                throw WireError(.badRequest, "an ocr request has 2 frames (JSON options, image bytes); got \(request.body.count)")
            }
            let options = try OCRRequest.parse(request.body[0])
            var (result, _) = try recognizer.recognize(options, image: request.body[1])
            // Binary outputs travel as frames after the JSON (never base64 inside it); the result
            // says which frame holds what.
            var attachments: [[UInt8]] = []
            if options.outputs?.contains(.pdf) == true {
                let started = Instant.now()
                let fontPath = Outputs.fontPath(dataPath: recognizer.configuration.dataPath)
                let pdf = PDFSniff.isPDF(request.body[1])
                    ? try Outputs.pdf(result, pdf: request.body[1], fontPath: fontPath)
                    : try Outputs.pdf(result, image: request.body[1], fontPath: fontPath)
                result.attachments = [.init(output: OCRRequest.Output.pdf.rawValue, frame: 2, mediaType: "application/pdf", size: pdf.count)]
                result.metadata.timings.encodeMs += Instant.now().seconds(since: started) * 1_000
                attachments.append(pdf)
            }
            // The bytes JSONEncoder (sorted keys, unescaped slashes) would write, at a tenth of its cost.
            do { return [try result.jsonBytes()] + attachments } catch {
                throw WireError(.internal, "the result holds a number JSON cannot carry (\(error.value))")
            }
        }
    }
}
