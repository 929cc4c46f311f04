import Foundation
import Imaging
import QuireRecognition
import QuireTestSupport
import Testing

@testable import SceneText

/// ONNX Runtime runs the models with denormal floats flushed to zero (Sources/COnnxRuntime/shim.c), the
/// calling thread only for the length of a run: Tesseract, on the same worker thread, and Quire's
/// own code keep IEEE arithmetic. With the real models (scripts/install-onnxruntime).
@Suite struct ArithmeticTests {
    /// Half the smallest normal float, computed at run time: a denormal, or 0 where they are flushed.
    static func halfOfSmallestNormal() -> Float {
        let one = Float(ProcessInfo.processInfo.processorCount) / Float(ProcessInfo.processInfo.processorCount)
        return Float.leastNormalMagnitude * one / 2
    }

    @Test func aReadingLeavesTheCallingThreadsArithmeticAsItWas() throws {
        let models = ProcessInfo.processInfo.environment["QUIRE_SCENE_MODELS"] ?? "/opt/quire-onnxruntime/models"
        let engine = try SceneEngine(models: models)
        #expect(Self.halfOfSmallestNormal() > 0, "denormals were flushed before the models ran")
        let page = try Image.decode(try TestImages.sample(), format: .png)
        let read = try engine.recognize(page, layout: .sparse, symbols: false)
        #expect(read.text.contains("Quire"), "the detector and the recognizer did not run: \(read.text)")
        #expect(Self.halfOfSmallestNormal() > 0, "a run left this thread flushing denormals")
    }
}
