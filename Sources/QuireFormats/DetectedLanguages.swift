import QuireWire

/// The language of each level of a result, as every format here reports it: what the worker's
/// identifier found (`detectedLanguages`, most likely first) wins over the models the text was read
/// with (`languages`), because a page read without a hint is read with more models than it has
/// languages. Each API then says it in its own fields (Cloud Vision's `detectedLanguages` and
/// `locale`, Azure Read's `language`, hOCR's `lang`, ALTO's `LANG`).
///
/// The tags are the result's BCP-47 (`it`, `zh-Hant`), written unchanged: Azure Read 3.2 lists
/// `zh-Hans` and `zh-Hant` among its language codes (`OcrDetectionLanguage` in the 3.2 swagger), Cloud
/// Vision takes BCP-47 and names Traditional Chinese `zh-Hant` in its language guide, and hOCR's `lang`
/// and ALTO's `LANG` (`xsd:language`) are BCP-47 by definition.
enum DetectedLanguages {
    /// What a paragraph holds: its own identification, else its lines' put together, each language
    /// weighted by how much of the paragraph's text its lines hold (the share a language has, which
    /// is what a confidence says); nil when neither the paragraph nor any of its lines has one.
    static func of(_ paragraph: OCRResult.Paragraph) -> [OCRResult.DetectedLanguage]? {
        if let own = paragraph.detectedLanguages, !own.isEmpty { return own }
        return combined(paragraph.lines.map { ($0.detectedLanguages, weight($0.text)) })
    }

    /// The languages of several texts in one list: each language's confidence is the mean of its
    /// confidences weighted by the length of each text (a text where it was not found counts as 0),
    /// most likely first, ties in the order first met. Texts without an identification are left out.
    static func combined(_ parts: [([OCRResult.DetectedLanguage]?, Int)]) -> [OCRResult.DetectedLanguage]? {
        let known = parts.compactMap { part in part.0.flatMap { $0.isEmpty ? nil : ($0, max(1, part.1)) } }
        let total = known.reduce(0) { $0 + $1.1 }
        guard total > 0 else { return nil }
        var order: [String] = []
        var sums: [String: Double] = [:]
        for (languages, weight) in known {
            for detected in languages {
                if sums[detected.language] == nil { order.append(detected.language) }
                sums[detected.language, default: 0] += detected.confidence * Double(weight)
            }
        }
        let ranked = order.enumerated().sorted { a, b in
            let (x, y) = (sums[a.element] ?? 0, sums[b.element] ?? 0)
            return x != y ? x > y : a.offset < b.offset
        }
        return ranked.map { OCRResult.DetectedLanguage(language: $0.element, confidence: (sums[$0.element] ?? 0) / Double(total)) }
    }

    /// A page's most likely language (Azure's `readResults[].language`, Cloud Vision's `locale`, ALTO's
    /// `Page/@LANG`): the first identified, else the first model it was read with.
    static func main(_ page: OCRResult.Page) -> String? { page.detectedLanguages?.first?.language ?? page.languages.first }

    /// The languages of the levels of one page, each for saying where it differs from what it is in.
    ///
    /// On a page where anything was identified, a block, paragraph, line or word has a language of
    /// its own only where it was identified (a paragraph: its own or its lines'; a word: its line's):
    /// the rest were read with whatever models the worker tried and say nothing about their language,
    /// so they take their parent's. On a page where nothing was identified (a request with a hint, an
    /// older worker) each level's language is the first model it was read with, as before.
    struct Levels {
        /// Whether the identifier found something anywhere on the page.
        let identified: Bool

        init(_ page: OCRResult.Page) {
            func found(_ detected: [OCRResult.DetectedLanguage]?) -> Bool { !(detected ?? []).isEmpty }
            identified = found(page.detectedLanguages) || page.blocks.contains { block in
                found(block.detectedLanguages) || block.paragraphs.contains { paragraph in
                    found(paragraph.detectedLanguages) || paragraph.lines.contains { found($0.detectedLanguages) }
                }
            }
        }

        func own(_ detected: [OCRResult.DetectedLanguage]?, _ languages: [String]) -> String? {
            detected?.first?.language ?? (identified ? nil : languages.first)
        }

        func own(_ block: OCRResult.Block) -> String? { own(block.detectedLanguages, block.languages) }

        func own(_ paragraph: OCRResult.Paragraph) -> String? { own(DetectedLanguages.of(paragraph), paragraph.languages) }

        func own(_ line: OCRResult.Line) -> String? { own(line.detectedLanguages, line.languages) }

        /// The identifier reads lines, not single words: a word's language is its line's, else (nothing
        /// identified on the page) the model that read it.
        func own(_ word: OCRResult.Word, in line: OCRResult.Line) -> String? { own(line.detectedLanguages, word.languages) }
    }

    /// Characters that count towards a text's weight: every one but white space.
    private static func weight(_ text: String) -> Int { text.unicodeScalars.filter { !$0.properties.isWhitespace }.count }
}
