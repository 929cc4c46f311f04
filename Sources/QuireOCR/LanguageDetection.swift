import LanguageID
import QuireSupport
import QuireRecognition
import QuireWire

/// Scripts as Tesseract's orientation and script detection (OSD) names them, and the packs that read
/// each: language packs, the most widely read first, then the script's own model (Debian's
/// `tesseract-ocr-script-*`, named after the script) for languages of that script with no pack here.
enum Scripts {
    static let packs: [String: [String]] = [
        "Latin": ["eng", "Latin"],
        "Han": ["chi_sim", "chi_tra", "HanS", "HanT"],
        "Japanese": ["jpn", "Japanese"],
        "Korean": ["kor", "Hangul"],
        "Hangul": ["kor", "Hangul"],
        "Cyrillic": ["rus", "ukr", "srp", "bul", "bel", "mkd", "Cyrillic"],
        "Greek": ["ell", "Greek"],
        "Arabic": ["ara", "fas", "urd", "Arabic"],
        "Hebrew": ["heb", "Hebrew"],
        "Thai": ["tha", "Thai"],
        "Devanagari": ["hin", "mar", "nep", "san", "Devanagari"],
        "Tamil": ["tam", "Tamil"],
        "Telugu": ["tel", "Telugu"],
        "Bengali": ["ben", "Bengali"],
        "Kannada": ["kan", "Kannada"],
        "Malayalam": ["mal", "Malayalam"],
        "Gujarati": ["guj", "Gujarati"],
        "Gurmukhi": ["pan", "Gurmukhi"],
        "Georgian": ["kat", "Georgian"],
        "Armenian": ["hye", "Armenian"],
    ]

    /// The script `pack` reads: Latin for every Latin-script language pack and for packs this table
    /// does not list.
    static func script(of pack: String) -> String {
        if let entry = packs.first(where: { $0.key != "Latin" && $0.key != "Hangul" && $0.value.contains(pack) }) { return entry.key }
        return "Latin"
    }

    /// Scripts OSD names rightly but unsurely, or not at all: Hangul's syllables are blobs its
    /// classifier splits (confidence 0 to 1.05 on the dev set's 8 Korean pages, every one named right;
    /// a one-line headline in large type named Latin, Greek, Arabic or Cyrillic at every scale tried).
    /// A guess of one of these is taken at any confidence, and a page OSD cannot place is tried in them.
    static let unsure: [String] = ["Korean", "Hangul"]

    /// Whether `pack` is a script model rather than a language's pack.
    static func isScriptModel(_ pack: String) -> Bool { pack.first?.isUppercase == true }
}

/// Which languages a request is read in. A request that names languages is read in those (a hint
/// narrows, and never reaches past what is installed). A request that names none is read first in
/// the worker's first language (English where it reads English: an English page pays for nothing
/// but identifying the language of what was read), and where that reading says otherwise, again:
///
/// 1. The first reading's text is identified (CLD2, microseconds). Where it is reliably another
///    language the worker reads in the same script (Italian read with the English pack), the page is
///    read again in that language, with the others found beside it (an Italian page with English lines).
/// 2. Where the reading is poor (the words mostly guessed, or no language identified), the page's
///    script comes from the picture (OSD), and the page is read with that script's first pack; that
///    reading is identified in turn and read once more where it names another pack of the script
///    (Traditional Chinese read with the Simplified pack, Serbian with the Russian one).
///
/// The reading with more confident words is kept; `metadata.steps` records each decision.
struct LanguagePlan {
    /// Whether the request named its languages.
    let hinted: Bool
    /// The packs a page may be read with: the request's, or every pack the worker reads.
    let candidates: [String]
    /// What every page is read with first.
    let initial: [String]
    let configuration: OCRConfiguration

    init(requested: [String]?, engines: any EngineFactory, configuration: OCRConfiguration) throws(WireError) {
        self.configuration = configuration
        if let requested, !requested.isEmpty {
            hinted = true
            candidates = try engines.resolveLanguages(requested)
            initial = candidates
            return
        }
        hinted = false
        let configured = configuration.defaultLanguages.filter { $0 != "auto" }
        if configured.isEmpty {
            candidates = Self.everyInstalled(engines.installedLanguages)
        } else {
            candidates = try engines.resolveLanguages(configured)
        }
        guard let first = candidates.first else {
            throw WireError(.unknownLanguage, "no language pack is installed")
        }
        initial = [first]
    }

    /// Every installed pack, English first where it is installed, then language packs, then script models.
    static func everyInstalled(_ installed: Set<String>) -> [String] {
        let packs = installed.filter { $0 != "osd" && !$0.hasSuffix("_vert") && $0 != "equ" }
        return packs.sorted { a, b in
            let rank = { (p: String) in p == "eng" ? 0 : Scripts.isScriptModel(p) ? 2 : 1 }
            return (rank(a), a) < (rank(b), b)
        }
    }

    /// What the picture reader reads with: the request's languages; without a hint, the languages the
    /// page reader found (`packs`; the first language before it read) and the Chinese and Japanese
    /// packs the worker reads (the scene models read Han and kana only when
    /// asked to, and a photo of a Chinese sign says nothing to Tesseract's first reading).
    func pictureLanguages(_ pictureReads: Set<String>, readWith packs: [String]? = nil) -> [String] {
        guard !hinted else { return candidates }
        let first = (packs ?? initial).filter(pictureReads.contains)
        let cjk = candidates.filter { ["chi_sim", "chi_tra", "jpn"].contains($0) && pictureReads.contains($0) && !first.contains($0) }
        return first + cjk
    }

    /// The pack of the same script whose text the identifier cannot tell from this one's reading of it:
    /// Traditional Chinese read with the Simplified pack comes out in Simplified forms, and the other
    /// way round; nil for every other script.
    func sibling(of packs: [String]) -> [String]? {
        let pairs = [["chi_sim"]: ["chi_tra"], ["chi_tra"]: ["chi_sim"]]
        guard let other = pairs[packs], candidates.contains(other[0]) else { return nil }
        return other
    }

    /// Whether pages may be read again in other languages than the first.
    var detects: Bool { !hinted && candidates.count > 1 }

    /// The languages of `text`, tipped towards the languages it was read with.
    func identify(_ text: String, readWith packs: [String]) -> LanguageIdentification {
        LanguageIdentifier.identify(text, hints: packs.map(Languages.bcp47(forTesseract:)))
    }

    /// The packs to read a page again with, from what its reading with `current` identified; nil where
    /// the reading stands (the identified languages are what it was read with, or none is installed).
    func packs(for identification: LanguageIdentification, current: [String]) -> [String]? {
        guard identification.reliable else { return nil }
        var packs: [String] = []
        for language in identification.languages where language.percent >= configuration.secondLanguageShare || packs.isEmpty {
            // A language with no pack here keeps the reading it has: its script's own model read the
            // receipts CLD2 calls Malay (English with Malay words) worse than the English pack, at twice
            // the time.
            guard let pack = Languages.resolve(language.language, installed: Set(candidates)) else { continue }
            // Only within the script read: another script's text read with this one is garbage, and
            // the script from the picture decides that.
            guard Scripts.script(of: pack) == Scripts.script(of: current.first ?? pack), !packs.contains(pack) else { continue }
            packs.append(pack)
        }
        guard !packs.isEmpty, Set(packs) != Set(current) else { return nil }
        return packs
    }

    /// Whether the first reading is poor enough that the script must come from the picture: most words
    /// guessed, or text in which no language is found.
    func needsScript(confidence: Double, identification: LanguageIdentification, words: Int) -> Bool {
        if words == 0 || confidence < configuration.scriptBelowConfidence { return true }
        return !identification.reliable && identification.languages.isEmpty
    }

    /// Whether a reading with `packs` replaces the one before it: where its text is reliably identified
    /// as a language of the script it was read in and it is nearly as confident; in another script than
    /// the reading before, only from enough letters and with words mostly read confidently. OSD names
    /// the wrong script on handwriting and busy photos, and a wrong script's reading is garbage that can
    /// look confident: a few letters of it are not evidence.
    func keeps(_ confidence: Double, _ found: LanguageIdentification, readWith packs: [String], over previous: Double, readBefore: [String]) -> Bool {
        let script = Scripts.script(of: packs.first ?? "")
        let sameScript = script == Scripts.script(of: readBefore.first ?? "")
        guard found.reliable, sameScript || found.letterBytes >= configuration.scriptMinLetterBytes,
              let language = found.first?.language else { return false }
        let inScript = script == "Latin" || Languages.resolve(language, installed: Set(Scripts.packs[script] ?? [])) != nil
        return inScript && confidence >= previous - configuration.languageKeepMargin
            && (sameScript || confidence >= configuration.scriptKeepConfidence)
    }

    /// The packs to try a page in where OSD could not name its script (no guess, or one below its
    /// confidence) and its first reading names no language: the first installed pack of the scripts
    /// OSD misses (``Scripts/unsure``). Nil where the first reading has too few glyphs (`glyphs`, its
    /// letters and digits) for a reading in that script ever to be kept: a Hangul syllable read with
    /// the Latin pack comes out as one or two letters, and a reading in another script is kept only
    /// from `scriptMinLetterBytes` of letters, three bytes a syllable; a sign's one word is never tried.
    func trialPacks(current: [String], glyphs: Int) -> [String]? {
        guard glyphs * 3 >= configuration.scriptMinLetterBytes else { return nil }
        return Scripts.unsure.lazy.compactMap { packs(forScript: $0, current: current) }.first
    }

    /// The packs for the script OSD found, or nil where it is the script read already or no pack for it
    /// is installed.
    func packs(forScript script: String, current: [String]) -> [String]? {
        guard let packs = Scripts.packs[script], let first = packs.first(where: candidates.contains) else { return nil }
        guard Scripts.script(of: first) != Scripts.script(of: current.first ?? first) else { return nil }
        return [first]
    }
}

/// Languages with their confidences at every level of a page: what CLD2 finds in each text, tipped
/// towards the languages it was read with. Lines too short to say anything of their own (a price, a
/// name) take their paragraph's.
enum LanguageReport {
    static func annotate(_ page: inout OCRResult.Page, readWith packs: [String]) {
        let hints = packs.map(Languages.bcp47(forTesseract:))
        func detected(_ text: String) -> [OCRResult.DetectedLanguage]? {
            let found = LanguageIdentifier.identify(text, hints: hints)
            guard !found.languages.isEmpty else { return nil }
            return found.languages.map { .init(language: $0.language, confidence: EnginePolicy.hundredths(found.confidence(of: $0))) }
        }
        // Too little text to identify (a sign's one word): the language it was read in, unreliably.
        page.detectedLanguages = detected(page.text)
            ?? (page.text.contains { $0.isLetter } ? packs.first.map { [.init(language: Languages.bcp47(forTesseract: $0), confidence: 0.5)] } : nil)
        for b in page.blocks.indices {
            page.blocks[b].detectedLanguages = detected(page.blocks[b].text)
            for p in page.blocks[b].paragraphs.indices {
                let paragraph = detected(page.blocks[b].paragraphs[p].text) ?? page.blocks[b].detectedLanguages
                page.blocks[b].paragraphs[p].detectedLanguages = paragraph
                for l in page.blocks[b].paragraphs[p].lines.indices {
                    let text = page.blocks[b].paragraphs[p].lines[l].text
                    let own = LanguageIdentifier.identify(text, hints: hints)
                    page.blocks[b].paragraphs[p].lines[l].detectedLanguages = own.reliable
                        ? own.languages.map { .init(language: $0.language, confidence: EnginePolicy.hundredths(own.confidence(of: $0))) }
                        : paragraph
                }
            }
        }
    }
}

extension Recognizer {
    /// The first reading of a page sent without a hint, kept or replaced by readings in the languages
    /// it finds (``LanguagePlan``); the `language` step records what was identified, the `script` step
    /// what OSD saw where it was asked, and neither counts the readings again in its `ms`.
    func detectLanguage(_ first: PageRead, source: PageSource, number: Int, request: OCRRequest, mode: OCRRequest.Mode,
                        outputs: Set<OCRRequest.Output>, plan: LanguagePlan, session: inout EngineSession) throws(WireError) -> PageRead {
        var detectSeconds = 0.0
        var started = Instant.now()
        var kept = first
        let identification = plan.identify(first.page.text, readWith: kept.languages)
        var parameters = Self.parameters(identification)
        var scriptStep: OCRResult.Step?
        var next: [String]?
        if plan.detects {
            next = plan.packs(for: identification, current: kept.languages)
            let words = first.page.blocks.reduce(0) { $0 + $1.paragraphs.reduce(0) { $0 + $1.lines.reduce(0) { $0 + $1.words.count } } }
            if next == nil, plan.needsScript(confidence: first.page.confidence ?? 0, identification: identification, words: words),
               let image = first.image, let osd = engines.orientationDetector() {
                let osdStarted = Instant.now()
                // The orientation check may have asked OSD of this very picture already (a poorly read
                // page is checked): its answer names the script too.
                let guess = first.detected.map(\.guess) ?? osd.orientation(of: image)
                var scriptParameters: [String: Double] = ["ms": osdStarted.millisecondsSince, "minConfidence": configuration.scriptConfidence]
                if first.detected != nil { scriptParameters["fromOrientation"] = 1 }
                if let guess { scriptParameters[guess.script] = EnginePolicy.hundredths(guess.scriptConfidence) }
                if let guess, guess.scriptConfidence >= (Scripts.unsure.contains(guess.script) ? 0 : configuration.scriptConfidence) {
                    next = plan.packs(forScript: guess.script, current: kept.languages)
                } else if !identification.reliable {
                    // OSD could not say: the scripts it misses are tried.
                    let glyphs = first.page.text.reduce(0) { $0 + ($1.isLetter || $1.isNumber ? 1 : 0) }
                    next = plan.trialPacks(current: kept.languages, glyphs: glyphs)
                    if next != nil { scriptParameters["trial"] = 1 }
                }
                scriptStep = .init(step: "script", applied: next != nil, parameters: scriptParameters)
            }
        }
        detectSeconds += Instant.now().seconds(since: started)
        var rereads = 0
        var tried: Set<[String]> = [kept.languages]
        // A script's first pack, then at most one more of the same script (chi_sim, then chi_tra).
        while let packs = next, rereads < 3, !tried.contains(packs) {
            rereads += 1
            tried.insert(packs)
            var other = try read(source, number: number, request: request, mode: mode, outputs: outputs, with: session.reader(.page, languages: packs))
            other.languages = packs
            started = Instant.now()
            let found = plan.identify(other.page.text, readWith: packs)
            // The other pack of a pair the identifier cannot tell apart (chi_sim, chi_tra) is kept only
            // where its words are more confident; any other reading as ``LanguagePlan/keeps`` says.
            let sibling = plan.sibling(of: kept.languages) == packs
            let better = sibling ? (other.page.confidence ?? 0) > (kept.page.confidence ?? 0)
                : plan.keeps(other.page.confidence ?? 0, found, readWith: packs, over: kept.page.confidence ?? 0, readBefore: kept.languages)
            if better {
                other.prepareSeconds += kept.prepareSeconds
                other.recognizeSeconds += kept.recognizeSeconds
                other.steps = kept.steps.filter { $0.step == "script" } + other.steps
                kept = other
                parameters = Self.parameters(found)
                next = sibling ? nil : plan.packs(for: found, current: packs)
            } else {
                kept.recognizeSeconds += other.prepareSeconds + other.recognizeSeconds
                next = nil
            }
            // A Traditional Chinese page read with the Simplified pack reads as Simplified text, and its
            // identification cannot tell: the other pack reads it too.
            if next == nil, !sibling, kept.languages == packs, let pair = plan.sibling(of: packs), !tried.contains(pair) { next = pair }
            detectSeconds += Instant.now().seconds(since: started)
        }
        parameters["rereads"] = Double(rereads)
        parameters["ms"] = (detectSeconds * 10_000).rounded() / 10
        if let scriptStep { kept.steps.append(scriptStep) }
        kept.steps.append(.init(step: "language", applied: kept.languages != first.languages, parameters: parameters))
        return kept
    }

    /// The `language` step's parameters: each language identified with its share of the text (0…1),
    /// and whether the identification is reliable.
    static func parameters(_ identification: LanguageIdentification) -> [String: Double] {
        var parameters: [String: Double] = ["reliable": identification.reliable ? 1 : 0]
        for language in identification.languages { parameters[language.language] = Double(language.percent) / 100 }
        // How ordinary the text is for its first language (1: ordinary; far from 1: garbled).
        if let first = identification.first { parameters["score"] = EnginePolicy.hundredths(first.score) }
        return parameters
    }
}
