import Foundation
import QuireWire

/// The foreign shapes a Quire result converts to, by the names `quire recognize --format` takes.
/// The HTTP gateway answers with the same converters (the envelopes, with their times and statuses,
/// are in ``AzureRead/operationResult(status:created:lastUpdated:result:)`` and
/// ``AzureReadV2/operationResult(status:result:lowConfidence:)``).
public enum ResultFormat: String, Sendable, CaseIterable {
    /// Cloud Vision v1 `AnnotateImageResponse` (`textAnnotations`, `fullTextAnnotation`).
    case cloudVision = "cloud-vision"
    /// Azure Read 3.2: the operation result with `analyzeResult`.
    case azureRead = "azure-read"
    /// Azure Read 2.0: `{"status": "Succeeded", "recognitionResults": […]}`.
    case azureReadV2 = "azure-read-v2"
    /// Azure Image Analysis 4.0 with the `read` feature.
    case imageAnalysis = "image-analysis"

    /// The JSON of `result` in this shape. The mode it was read with picks Cloud Vision's feature
    /// (`text` is TEXT_DETECTION, anything else DOCUMENT_TEXT_DETECTION); `now` stamps Azure's times.
    public func render(_ result: OCRResult, now: Date = Date()) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        switch self {
        case .cloudVision:
            let feature: CloudVision.Feature = result.metadata.mode == CloudVision.Feature.textDetection.mode ? .textDetection : .documentTextDetection
            return try encoder.encode(CloudVision.response(result, feature: feature))
        case .azureRead:
            return try encoder.encode(AzureRead.operationResult(status: .succeeded, created: now, lastUpdated: now, result: result))
        case .azureReadV2:
            return try encoder.encode(AzureReadV2.operationResult(status: .succeeded, result: result))
        case .imageAnalysis:
            return try encoder.encode(ImageAnalysis.result(result))
        }
    }
}
