import Foundation
import QuireClient
import QuireSupport
import QuireWire
import QuireWorker

/// The `ocr` worker service: frame 1 the JSON request, frame 2 the image bytes; the reply is one
/// JSON frame with the result (or a typed error), followed by one frame per binary output asked for
/// (`pdf`), as the result's `attachments` list them. The same handler serves `ocr.scene` on workers
/// that read photos for the others (``SceneHandOff``).
public enum OCRService {
    public static let name = OCRServiceName.page

    /// `name`: `ocr`, or `ocr.scene` on a worker with the scene engine that reads pictures for the
    /// others. `handOff`: where an `ocr` worker without the scene engine sends what needs it (nil: it
    /// reads everything with Tesseract).
    public static func make(configuration: OCRConfiguration, name: String = name, handOff: SceneHandOff? = nil) -> WorkerService {
        WorkerService(name: name, requiresJSONFrame: true) { OCRHandler(configuration: configuration, handOff: handOff) }
    }

    final class OCRHandler: RequestHandler {
        let recognizer: Recognizer
        let handOff: SceneHandOff?
        /// To the worker's own broker, made on the first hand-off.
        private let broker = BrokerConnection(timeout: 60_000, retries: 0, maxInFlight: 1)

        init(configuration: OCRConfiguration, handOff: SceneHandOff?) {
            recognizer = Recognizer(configuration: configuration)
            self.handOff = handOff
        }

        func handle(_ request: WorkerRequest) throws -> [[UInt8]] {
            guard request.body.count == 2 else {
                throw WireError(.badRequest, "an ocr request has 2 frames (JSON options, image bytes); got \(request.body.count)")
            }
            let options = try OCRRequest.parse(request.body[0])
            if let handOff, (options.engine ?? recognizer.configuration.defaultEngine) == .scene {
                return try handOff.handOn(request, client: try broker.client(request)).get()
            }
            let recognition = try recognizer.recognize(options, image: request.body[1])
            // `auto` found a photo read badly, which this worker cannot read otherwise: the photo
            // workers read it (again, with both engines); where there are none, Tesseract's reading stands.
            if let handOff, recognition.missing == .picture,
               case .success(let frames) = handOff.handOn(request, client: try broker.client(request)) {
                return frames
            }
            let wantsPDF = options.outputs?.contains(.pdf) == true
            return try Outputs.replyFrames(recognition.result, pdf: wantsPDF ? (request.body[1], Outputs.fontPath(dataPath: recognizer.configuration.dataPath)) : nil)
        }
    }
}
