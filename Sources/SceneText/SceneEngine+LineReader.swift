import Imaging
import QuireRecognition

extension SceneEngine: LineReader {
    /// Reads each image as one line with the recognizer alone, no detection, at its own width (not
    /// padded to PP-OCR's 320: a crop of a few digits costs a third of that) and not stretched.
    public func readLines(_ images: [Image]) throws(RecognitionError) -> [ReadLine] {
        guard !images.isEmpty else { return [] }
        var crops: [Pixels] = []
        do throws(ImageError) {
            for image in images { crops.append(Pixels(width: image.width, height: image.height, bytes: try image.rgb())) }
        } catch {
            throw RecognitionError(.recognitionFailed, error.message)
        }
        do throws(SceneError) {
            // One at a time, each as wide as it is: a line padded to a wider one's width reads differently.
            return try crops.map { crop throws(SceneError) in
                let (line, _) = try recognize([crop], minWidth: 1)[0]
                return ReadLine(text: line.text, confidence: line.readingConfidence)
            }
        } catch {
            throw RecognitionError(.recognitionFailed, error.message)
        }
    }
}
