import Foundation
import Imaging
import QuireFormats
import QuireRecognition
import QuireSupport
import QuireWire

extension Recognizer {
    /// One page read.
    struct PageRead {
        var page: OCRResult.Page
        var steps: [OCRResult.Step]
        var prepareSeconds: Double
        var recognizeSeconds: Double
        /// The engine that read the page, as `metadata.engine` names it.
        var engine = ""
        /// The reader the policy wanted for this page and this worker does not have (a worker that can
        /// hand the request to one that has it does: ``SceneHandOff``).
        var missing: EngineRole?
        /// The packs the page was read with.
        var languages: [String] = []
        /// The upright page as the page reader saw it (for script detection and the fields' second
        /// look); nil from the picture reader.
        var image: Image?
        /// ``image``'s pixels → the page's coordinates.
        var toPage: Affine?
        /// What orientation and script detection said of ``image``, where the orientation check asked it
        /// of that very picture: script detection takes it from here instead of asking again.
        var detected: Detected?

        /// One answer of orientation and script detection; `guess` nil where it could not tell.
        struct Detected { var guess: OrientationGuess? }
    }

    /// Reads one page as `policy` says: with its first reader, then with its second where the first
    /// reading asks for it, keeping the one the policy prefers; the `engine` step records what was
    /// measured and chosen. Making the engines is not counted in the page's times.
    func readPage(_ source: PageSource, number: Int, request: OCRRequest, mode: OCRRequest.Mode, outputs: Set<OCRRequest.Output>,
                  policy: EnginePolicy, plan: LanguagePlan, session: inout EngineSession) throws(WireError) -> PageRead {
        var read = try readPageInLanguage(source, number: number, request: request, mode: mode, outputs: outputs, policy: policy, plan: plan, session: &session)
        if request.fields?.contains(.receipt) == true {
            try findReceipt(in: &read, source: source, number: number, request: request, mode: mode, outputs: outputs, session: &session)
        }
        LanguageReport.annotate(&read.page, readWith: read.languages)
        read.image = nil
        guard !plan.hinted else { return read }
        // Without a hint, of the packs read with, those whose languages were found (the picture reader is
        // given Chinese and Japanese with English; an English sign names English only).
        var found: [String] = []
        for language in read.page.detectedLanguages ?? [] {
            if let pack = Languages.resolve(language.language, installed: Set(read.languages)), !found.contains(pack) { found.append(pack) }
        }
        read.languages = found.isEmpty ? Array(read.languages.prefix(1)) : found
        return read
    }

    /// ``readPage``'s reading before the languages are reported: with the first reader in the plan's
    /// languages, again in the languages that reading finds (``LanguagePlan``), then by the second
    /// reader where the policy asks for it.
    private func readPageInLanguage(_ source: PageSource, number: Int, request: OCRRequest, mode: OCRRequest.Mode, outputs: Set<OCRRequest.Output>,
                                    policy: EnginePolicy, plan: LanguagePlan, session: inout EngineSession) throws(WireError) -> PageRead {
        var read = try read(source, number: number, request: request, mode: mode, outputs: outputs, with: session.reader(policy.first))
        read.languages = policy.first == .page ? session.pageLanguages : session.pictureLanguages
        // A page with nothing to read is neither read in another script nor by the other engine.
        if read.steps.contains(where: { $0.step == "blank" && $0.applied }) { return read }
        if policy.first == .page, !plan.hinted {
            read = try detectLanguage(read, source: source, number: number, request: request, mode: mode, outputs: outputs, plan: plan, session: &session)
        }
        // The picture reader reads a page in its languages only (not a page found to be Korean).
        guard let second = policy.second, engines.pictureReaderReads(read.languages),
              var parameters = policy.secondReading(after: read.page) else { return read }
        let pictureLanguages = plan.pictureLanguages(engines.pictureLanguages, readWith: read.languages)
        guard let engine = try? session.reader(second, languages: second == .picture ? pictureLanguages : nil) else {
            parameters["sceneAvailable"] = 0
            read.steps.append(.init(step: "engine", applied: false, parameters: parameters))
            read.missing = second
            return read
        }
        let started = Instant.now()
        var other = try self.read(source, number: number, request: request, mode: mode, outputs: outputs, with: engine)
        let keep = policy.keepsSecond(other.page, over: read.page, parameters: &parameters)
        parameters["ms"] = started.millisecondsSince
        guard keep else {
            read.steps.append(.init(step: "engine", applied: false, parameters: parameters))
            read.recognizeSeconds += other.prepareSeconds + other.recognizeSeconds
            return read
        }
        other.steps = read.steps.filter { ["language", "script"].contains($0.step) } + [.init(step: "engine", applied: true, parameters: parameters)]
        other.languages = second == .picture ? pictureLanguages : read.languages
        other.prepareSeconds += read.prepareSeconds
        other.recognizeSeconds += read.recognizeSeconds
        return other
    }

    /// Reads one page with `engine`, shown what it wants to see (``TextRecognizer/input``).
    func read(_ source: PageSource, number: Int, request: OCRRequest, mode: OCRRequest.Mode, outputs: Set<OCRRequest.Output>,
              with engine: any TextRecognizer, layout: Layout? = nil) throws(WireError) -> PageRead {
        switch engine.input {
        case .preparedPage:
            try readPreparedPage(source, number: number, request: request, mode: mode, outputs: outputs, engine: engine, layout: layout)
        case .picture(let maxSide):
            try readPicture(source, number: number, outputs: outputs, symbols: request.symbols ?? true, engine: engine, maxSide: maxSide)
        }
    }

    /// Prepares, reads and builds one page. Orientation is checked after reading, where it costs
    /// nothing for upright pages: a page read with low confidence is shown to orientation detection,
    /// and when it says the page is turned, it is turned and read again, and the better read is kept.
    func readPreparedPage(_ source: PageSource, number: Int, request: OCRRequest, mode: OCRRequest.Mode,
                          outputs: Set<OCRRequest.Output>, engine: any TextRecognizer, layout chosen: Layout? = nil) throws(WireError) -> PageRead {
        let t0 = Instant.now()
        let prepared = try prepare(source, request: request)
        var steps = prepared.steps
        var prepareSeconds = Instant.now().seconds(since: t0)
        var recognizeSeconds = 0.0
        if prepared.blank {
            // Nothing to read (a blank page, random noise): the page, empty, with its `blank` step.
            let size = prepared.quarterTurns % 2 == 1 ? (width: source.height, height: source.width) : (width: source.width, height: source.height)
            let empty = RecognizedPage(width: size.width, height: size.height, blocks: [], text: "")
            var built = ResultBuilder.page(empty, number: number, size: size, toPage: .identity, scale: 1, quarterTurns: prepared.quarterTurns,
                                           mirrored: prepared.mirrored, deskewAngle: 0, transform: prepared.toStored)
            built.renderings = Self.renderings(of: built, outputs)
            return PageRead(page: built, steps: steps, prepareSeconds: prepareSeconds, recognizeSeconds: 0, engine: engine.engineName)
        }

        let layout = chosen ?? layout(for: mode)
        let symbols = request.symbols ?? true
        func attempt(turns: Int, steps: inout [OCRResult.Step]) throws(WireError) -> (PreparedPage, RecognizedPage, Double) {
            let t1 = Instant.now()
            let page = try preprocess(prepared, source: source, mode: mode, turns: turns, steps: &steps)
            let t2 = Instant.now()
            let recognized: RecognizedPage
            do throws(RecognitionError) {
                let read = try engine.read(page.image, layout: layout, symbols: symbols, choice: configuration.layoutChoice)
                recognized = read.page
                if let step = read.step { steps.append(step) }
            } catch {
                throw WireError(.engineFailure, error.message)
            }
            prepareSeconds += t2.seconds(since: t1)
            recognizeSeconds += Instant.now().seconds(since: t2)
            return (page, recognized, recognized.meanWordConfidence)
        }

        // Orientation is detected before reading when asked for explicitly (a confident answer is
        // trusted: one read, not two), and when the page's thin glyphs lie on their side: a page turned
        // by a quarter, which would read as garbage first.
        let detect = request.autoOrientation ?? (mode == .document && configuration.detectOrientation)
        let sideways = detect && (prepared.sideways ?? 0) >= configuration.sidewaysGlyphs
        var firstTurns = 0
        if request.autoOrientation == true || sideways, let osd = engines.orientationDetector() {
            let started = Instant.now()
            let guess = osd.orientation(of: prepared.image)
            let trusted = request.autoOrientation == true ? configuration.trustedOrientationConfidence : configuration.orientationConfidence
            if let guess, guess.rotation != 0, guess.confidence >= trusted, !sideways || guess.rotation % 180 == 90 {
                firstTurns = guess.rotation / 90
                var parameters: [String: Double] = [
                    "rotation": Double(guess.rotation), "confidence": (guess.confidence * 100).rounded() / 100,
                    "minConfidence": trusted, "ms": started.millisecondsSince,
                ]
                if let share = prepared.sideways { parameters["sidewaysGlyphs"] = (share * 100).rounded() / 100 }
                steps.append(.init(step: "orientation", applied: true, parameters: parameters))
            }
            engine.clear()
            prepareSeconds += Instant.now().seconds(since: started)
        }
        var (page, recognized, confidence) = try attempt(turns: firstTurns, steps: &steps)
        var detected: PageRead.Detected?
        if detect, confidence < configuration.orientationCheckBelow, let osd = engines.orientationDetector() {
            var parameters: [String: Double] = ["minConfidence": configuration.orientationConfidence, "readConfidence": (confidence * 100).rounded() / 100]
            var candidates: [Int] = []
            if firstTurns == 0 {
                let started = Instant.now()
                let guess = osd.orientation(of: page.image)
                detected = .init(guess: guess)
                engine.clear()
                let turns = (guess?.confidence ?? 0) >= configuration.orientationConfidence ? (guess?.rotation ?? 0) / 90 : 0
                parameters["ms"] = started.millisecondsSince
                if let guess { parameters["rotation"] = Double(guess.rotation); parameters["confidence"] = (guess.confidence * 100).rounded() / 100 }
                prepareSeconds += Instant.now().seconds(since: started)
                // OSD on small print often knows the page is sideways but not which way: when its turn
                // reads no better, the opposite quarter turn is tried too.
                candidates = turns == 0 ? [] : [turns]
                if turns % 2 == 1 { candidates.append(4 - turns) }
            } else if firstTurns % 2 == 1 {
                // Turned before reading and still read badly: the other quarter turn.
                candidates = [4 - firstTurns]
            }
            var applied = false
            for candidate in candidates {
                var turnedSteps: [OCRResult.Step] = []
                let turned = try attempt(turns: candidate, steps: &turnedSteps)
                parameters["turnedConfidence"] = (turned.2 * 100).rounded() / 100
                // Kept only when clearly better, and read as confidently as an upright page that needs
                // no check: a wrong turn reads garbage with a similar confidence, and so does every turn
                // of a picture that is garbage whichever way up (a damaged file: 0.25 against 0).
                if turned.2 >= confidence + configuration.orientationGain, turned.2 >= configuration.orientationCheckBelow {
                    (page, recognized, confidence) = turned
                    detected = nil
                    steps = prepared.steps + turnedSteps
                    parameters["rotation"] = Double(candidate * 90)
                    applied = true
                    break
                }
            }
            if firstTurns == 0 || !candidates.isEmpty {
                steps.append(.init(step: "orientation", applied: applied, parameters: parameters))
            }
        }
        engine.clear()
        if mode == .document {
            steps += configuration.pageEdits.apply(to: &recognized, symbols: symbols)
        }
        var built = ResultBuilder.page(recognized, number: number, size: page.size, toPage: page.toPage, scale: prepared.scale,
                                       quarterTurns: page.quarterTurns, mirrored: prepared.mirrored, deskewAngle: page.deskewAngle,
                                       transform: page.toStored)
        built.renderings = Self.renderings(of: built, outputs)
        return PageRead(page: built, steps: steps, prepareSeconds: prepareSeconds, recognizeSeconds: recognizeSeconds, engine: engine.engineName,
                        image: page.image, toPage: page.toPage, detected: detected)
    }

    /// The text outputs asked for, rendered from the page's own result (its boxes are already those of
    /// the upright uploaded page): the whole file's document wrappers are the client's (`HOCR.document`).
    static func renderings(of page: OCRResult.Page, _ outputs: Set<OCRRequest.Output>) -> [String: String]? {
        var renderings: [String: String] = [:]
        for output in outputs {
            switch output {
            case .text: renderings[output.rawValue] = page.text
            case .hocr: renderings[output.rawValue] = HOCR.page(page)
            case .alto: renderings[output.rawValue] = ALTO.page(page)
            case .tsv: renderings[output.rawValue] = TSV.page(page)
            case .result, .pdf: break
            }
        }
        return renderings.isEmpty ? nil : renderings
    }

    /// The layout each mode asks of the engine: documents are ``Layout/auto`` (one block where the
    /// page is one column, the full layout analysis elsewhere) unless the choice is switched off.
    func layout(for mode: OCRRequest.Mode) -> Layout {
        switch mode {
        case .document: configuration.chooseLayout ? .auto : .page
        case .text: .sparse
        case .line: .singleLine
        }
    }
}

extension Instant {
    /// Milliseconds from this instant to now, to a tenth.
    var millisecondsSince: Double { (Instant.now().seconds(since: self) * 10_000).rounded() / 10 }
}
