import Imaging
import QuireFields
import QuireRecognition
import QuireSupport
import QuireWire

extension Recognizer {
    /// The margin to each side of a date's and an amount's run cut for the second look, in text heights.
    static let dateMargin = 0.2
    static let amountMargin = 0.2
    /// ...and to each side of a run the first reading broke (`/01/20`, `3 0`): what it lost may lie beyond.
    static let brokenMargin = 1.5

    /// The second look a page's receipt fields take (``ReceiptRereading``): the runs of words that
    /// carry dates and money are cut from the image the page reader saw and read again by the line
    /// reader (the scene engine's recognizer, no detection); the readings taken replace the words.
    /// The `reread` step counts what was read and changed, and its cost. A worker without a line
    /// reader, or a page another engine read, keeps its reading. Takes the page's `analysis` and
    /// returns that of the page as it stands after the second look, which the fields are found from.
    func rereadFields(_ read: inout PageRead, _ analysis: ReceiptFields.Analysis, outputs: Set<OCRRequest.Output>,
                      locale: String?) -> ReceiptFields.Analysis {
        let started = Instant.now()
        guard let image = read.image, let toPage = read.toPage else { return analysis }
        let spans = ReceiptRereading.spans(analysis)
        guard !spans.isEmpty else { return analysis }
        guard let reader = engines.lineReader() else {
            read.steps.append(.init(step: "reread", applied: false, parameters: ["spans": Double(spans.count), "lineReader": 0]))
            return analysis
        }
        let fromPage = toPage.inverse
        func cut(_ box: OCRResult.Box, margin: Double) -> Image? {
            // A margin of a quarter of the text's height above and below, and some to each side (a digit
            // the first reading left out of the word): the recognizer's time grows with the width.
            let height = Double(box.height), side = height * margin
            let (x0, y0, x1, y1) = fromPage.pixelBox(x: Double(box.x) - side, y: Double(box.y) - height / 4, width: Double(box.width) + 2 * side,
                                                     height: height * 3 / 2, within: (image.width, image.height))
            guard x1 - x0 >= 4, y1 - y0 >= 4 else { return nil }
            return try? image.cropped(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
        }
        // Each span's crops: its box, and its row's band where it has one.
        var crops: [(span: Int, image: Image)] = []
        for (index, span) in spans.enumerated() {
            let margin = span.readsWhole ? (span.kind == .date ? Self.dateMargin : Self.amountMargin) : Self.brokenMargin
            for box in [span.box] + (span.band.map { [$0] } ?? []) {
                if let image = cut(box, margin: margin) { crops.append((index, image)) }
            }
        }
        var parameters: [String: Double] = ["spans": Double(Set(crops.map(\.span)).count), "crops": Double(crops.count)]
        // The dates and the total first: a total that settles (no rounding) the line reader reads
        // alike is confirmed, and the checks around it are not read.
        let first = crops.filter { spans[$0.span].kind == .date || spans[$0.span].settlesTotal }
        var rest = crops.filter { spans[$0.span].kind == .amount && !spans[$0.span].settlesTotal }
        var readings: [ReadLine]
        do throws(RecognitionError) {
            readings = try reader.readLines(first.map(\.image))
            if zip(first, readings).contains(where: { ReceiptRereading.confirms(spans[$0.span], reading: $1.text, confidence: $1.confidence) }) {
                parameters["confirmed"] = 1
                rest = []
            }
            readings += try reader.readLines(rest.map(\.image))
        } catch {
            parameters["failed"] = 1
            read.steps.append(.init(step: "reread", applied: false, parameters: parameters))
            return analysis
        }
        crops = first + rest
        // What was read: the confirmed total's checks were not.
        parameters["spans"] = Double(Set(crops.map(\.span)).count)
        parameters["crops"] = Double(crops.count)
        // Of a span's readings, the surest taken.
        var best: [Int: (text: String, confidence: Double)] = [:]
        for ((index, _), reading) in zip(crops, readings) {
            guard let text = ReceiptRereading.replacement(for: spans[index], reading: reading.text, confidence: reading.confidence),
                  best[index].map({ reading.confidence > $0.confidence }) ?? true else { continue }
            best[index] = (text, reading.confidence)
        }
        let taken = best.sorted { $0.key < $1.key }.map { (span: spans[$0.key], text: $0.value.text, confidence: $0.value.confidence) }
        let outcome = ReceiptRereading.apply(taken, to: &read.page)
        if outcome.changed > 0 { read.page.renderings = Self.renderings(of: read.page, outputs) }
        parameters["changed"] = Double(outcome.changed)
        parameters["dates"] = Double(outcome.dates)
        parameters["amounts"] = Double(outcome.amounts)
        parameters["minConfidence"] = ReceiptRereading.minConfidence
        let changed = outcome.changed > 0 ? ReceiptFields.Analysis(read.page, locale: locale) : analysis
        let seconds = Instant.now().seconds(since: started)
        parameters["ms"] = (seconds * 10_000).rounded() / 10
        read.recognizeSeconds += seconds
        read.steps.append(.init(step: "reread", applied: outcome.changed > 0, parameters: parameters))
        return changed
    }

    /// A receipt read as one block with tall lines in the lower half of its text (the layout step's
    /// `tallLines`: a total printed in double height, which a single block drops), fewer of which are
    /// in its reading than the layout analysis found (``tallLines(_:)``), and whose total no
    /// printed check agrees with, or that has none, is read again with the full layout analysis, which
    /// keeps such lines, and given its second look. The new reading is kept where a check agrees with its
    /// total and it lost no date the first found; the `layout` step says which (`fullLayoutForFields`:
    /// 1 kept, 0 tried and refused).
    func readTallLinesAgain(_ read: inout PageRead, analysis: inout ReceiptFields.Analysis, source: PageSource, number: Int, request: OCRRequest,
                            mode: OCRRequest.Mode, outputs: Set<OCRRequest.Output>, session: inout EngineSession) throws(WireError) {
        // Fewer tall lines read than the analysis found: none found is never fewer.
        guard read.image != nil, let layoutIndex = read.steps.lastIndex(where: { $0.step == "layout" }),
              read.steps[layoutIndex].parameters["singleBlock"] == 1,
              Self.tallLines(read.page) < Int(read.steps[layoutIndex].parameters["tallLines"] ?? 0),
              !analysis.totalAgreed else { return }
        let engine = try session.reader(.page, languages: read.languages)
        var again = try self.read(source, number: number, request: request, mode: mode, outputs: outputs, with: engine, layout: .page)
        again.languages = read.languages
        let locale = request.languages?.first
        let second = rereadFields(&again, ReceiptFields.Analysis(again.page, locale: locale), outputs: outputs, locale: locale)
        // Both readings' time is the page's, whichever is kept.
        let extra = again.prepareSeconds + again.recognizeSeconds
        // Kept where a check agrees with its total, and it lost no date the first reading found.
        guard second.totalAgreed, second.hasDate || !analysis.hasDate else {
            read.recognizeSeconds += extra
            read.steps[layoutIndex].parameters["fullLayoutForFields"] = 0
            return
        }
        again.prepareSeconds = read.prepareSeconds
        again.recognizeSeconds = read.recognizeSeconds + extra
        // The steps before the layout (scale, crop, deskew…) were the same; the reading's own steps are the new one's.
        var layout = read.steps[layoutIndex]
        layout.parameters["fullLayoutForFields"] = 1
        again.steps = read.steps.filter { ["language", "script"].contains($0.step) } + again.steps.filter { $0.step != "layout" } + [layout]
        read = again
        analysis = second
    }

    /// A page's receipt fields: its analysis, the second look at its dates and money, a reading with the
    /// full layout where a tall line was lost, then the receipt (`documents`: `[]` where none was
    /// found) and its `fields` step, whose `ms` counts the analysis and the fields.
    func findReceipt(in read: inout PageRead, source: PageSource, number: Int, request: OCRRequest, mode: OCRRequest.Mode,
                     outputs: Set<OCRRequest.Output>, session: inout EngineSession) throws(WireError) {
        let locale = request.languages?.first
        var started = Instant.now()
        var analysis = ReceiptFields.Analysis(read.page, locale: locale)
        var seconds = Instant.now().seconds(since: started)
        analysis = rereadFields(&read, analysis, outputs: outputs, locale: locale)
        try readTallLinesAgain(&read, analysis: &analysis, source: source, number: number, request: request, mode: mode, outputs: outputs,
                               session: &session)
        started = Instant.now()
        let reading = ReceiptFields.read(analysis)
        seconds += Instant.now().seconds(since: started)
        read.page.documents = reading.document.map { [$0] } ?? []
        var step = reading.step
        step.parameters["ms"] = (seconds * 1_000_000).rounded() / 1_000
        read.steps.append(step)
    }

    /// The read lines in the lower half of the page's text at least ``LayoutChoice/tallLine`` times as
    /// tall as the median line, as the layout step counts the analysis's: fewer than it found is a tall
    /// line the reading lost.
    static func tallLines(_ page: OCRResult.Page) -> Int {
        let lines = page.blocks.flatMap { $0.paragraphs.flatMap(\.lines) }.map { line in
            PixelBox(x: line.boundingBox.x, y: line.boundingBox.y, width: line.boundingBox.width, height: line.boundingBox.height)
        }
        let heights = lines.map(\.height).sorted()
        guard !heights.isEmpty else { return 0 }
        return LayoutChoice.tallLines(lines, lineHeight: Double(heights[heights.count / 2]))
    }
}
