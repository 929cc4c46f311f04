import Imaging
import QuireFields
import QuireRecognition
import QuireSupport
import QuireWire

extension Recognizer {
    /// The margin to each side of a date's and an amount's run cut for the second look, in text heights.
    static let dateMargin = 0.3
    static let amountMargin = 0.3
    /// ...and to each side of a run the first reading broke (`/01/20`, `3 0`): what it lost may lie beyond.
    static let brokenMargin = 1.5

    /// The second look a page's receipt fields take (``ReceiptRereading``): the runs of words that
    /// carry dates and money are cut from the image the page reader saw and read again by the line
    /// reader (the scene engine's recognizer, no detection); the readings taken replace the words.
    /// The `reread` step counts what was read and changed, and its cost. A worker without a line
    /// reader, or a page another engine read, keeps its reading.
    func rereadFields(_ read: inout PageRead, outputs: Set<OCRRequest.Output>, locale: String?) {
        guard let image = read.image, let toPage = read.toPage else { return }
        let started = Instant.now()
        let spans = ReceiptRereading.spans(read.page, locale: locale)
        guard !spans.isEmpty else { return }
        guard let reader = engines.lineReader() else {
            read.steps.append(.init(step: "reread", applied: false, parameters: ["spans": Double(spans.count), "lineReader": 0]))
            return
        }
        let fromPage = toPage.inverse
        var cut: [(ReceiptRereading.Span, Image)] = []
        for span in spans {
            // A margin of a fifth of the text's height above and below, and some to each side (a digit
            // the first reading left out of the word): the recognizer's time grows with the width.
            let box = span.box
            let height = Double(box.height)
            let side = height * (span.readsWhole ? (span.kind == .date ? Self.dateMargin : Self.amountMargin) : Self.brokenMargin)
            let (x0, y0, x1, y1) = fromPage.pixelBox(x: Double(box.x) - side, y: Double(box.y) - height / 5, width: Double(box.width) + 2 * side,
                                                     height: height * 7 / 5, within: (image.width, image.height))
            guard x1 - x0 >= 4, y1 - y0 >= 4, let crop = try? image.cropped(x: x0, y: y0, width: x1 - x0, height: y1 - y0) else { continue }
            cut.append((span, crop))
        }
        var parameters: [String: Double] = ["spans": Double(cut.count)]
        var readings: [ReadLine] = []
        do throws(RecognitionError) {
            readings = try reader.readLines(cut.map(\.1))
        } catch {
            parameters["failed"] = 1
            read.steps.append(.init(step: "reread", applied: false, parameters: parameters))
            return
        }
        var taken: [(span: ReceiptRereading.Span, text: String, confidence: Double)] = []
        for ((span, _), reading) in zip(cut, readings) {
            if let text = ReceiptRereading.replacement(for: span, reading: reading.text, confidence: reading.confidence) {
                taken.append((span, text, reading.confidence))
            }
        }
        let outcome = ReceiptRereading.apply(taken, to: &read.page)
        if outcome.changed > 0 { read.page.renderings = Self.renderings(of: read.page, outputs) }
        parameters["changed"] = Double(outcome.changed)
        parameters["dates"] = Double(outcome.dates)
        parameters["amounts"] = Double(outcome.amounts)
        parameters["minConfidence"] = ReceiptRereading.minConfidence
        let seconds = Instant.now().seconds(since: started)
        parameters["ms"] = (seconds * 10_000).rounded() / 10
        read.recognizeSeconds += seconds
        read.steps.append(.init(step: "reread", applied: outcome.changed > 0, parameters: parameters))
    }
}
