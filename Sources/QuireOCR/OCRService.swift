import Foundation
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
            let (result, _) = try recognizer.recognize(options, image: request.body[1])
            let wantsPDF = options.outputs?.contains(.pdf) == true
            return try Outputs.replyFrames(result, pdf: wantsPDF ? (request.body[1], Outputs.fontPath(dataPath: recognizer.configuration.dataPath)) : nil)
        }
    }
}
