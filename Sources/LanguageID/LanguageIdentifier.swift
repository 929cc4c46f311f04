internal import CCLD2

/// One language found in a text: its BCP-47 tag as Quire reports languages (`it`, `zh-Hans`,
/// `zh-Hant`, `he`), the share of the text's letters in it, and how typical the text is of it.
public struct IdentifiedLanguage: Sendable, Equatable {
    public var language: String
    /// 0…100: the share of the letters looked at that are in this language.
    public var percent: Int
    /// 1.0 for ordinary text of the language; far from 1 for garbled text (a reading with the wrong
    /// script's models) or text of another language that shares its letters.
    public var score: Double

    public init(language: String, percent: Int, score: Double) {
        self.language = language
        self.percent = percent
        self.score = score
    }
}

/// What a text is written in, most of it first.
public struct LanguageIdentification: Sendable, Equatable {
    public var languages: [IdentifiedLanguage]
    /// Whether the first language is clearly ahead for a text this long: short text (a word, a
    /// price) rarely is.
    public var reliable: Bool
    /// Bytes of letters looked at.
    public var letterBytes: Int

    public init(languages: [IdentifiedLanguage], reliable: Bool, letterBytes: Int) {
        self.languages = languages
        self.reliable = reliable
        self.letterBytes = letterBytes
    }

    /// The first language, when one was found.
    public var first: IdentifiedLanguage? { languages.first }

    /// A confidence 0…1 for `language`: its share of the text, halved where the identification is
    /// not reliable.
    public func confidence(of language: IdentifiedLanguage) -> Double {
        Double(language.percent) / 100 * (reliable ? 1 : 0.5)
    }
}

/// Identifies the language of text read from a page: Google's Compact Language Detector 2 (CLD2,
/// Debian's `libcld2`, Apache-2.0), which is made for short and mixed text, 83 languages, in
/// microseconds per line. Pure and thread-safe: CLD2 keeps no state between calls.
public enum LanguageIdentifier {
    /// CLD2's version text.
    public static var version: String { String(cString: quire_language_identifier_version()) }

    /// The languages of `text`; `hints` (BCP-47 tags) make those languages likelier without
    /// excluding others.
    public static func identify(_ text: String, hints: [String] = []) -> LanguageIdentification {
        var guess = QuireLanguageGuess()
        let hintList = hints.compactMap(cld2Code(for:)).joined(separator: ",")
        var utf8 = Array(text.utf8)
        let length = Int32(clamping: utf8.count)
        utf8.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                if hintList.isEmpty {
                    quire_identify_language(chars.baseAddress, length, nil, &guess)
                } else {
                    hintList.withCString { quire_identify_language(chars.baseAddress, length, $0, &guess) }
                }
            }
        }
        let codes = [guess.codes.0, guess.codes.1, guess.codes.2]
        let percents = [guess.percents.0, guess.percents.1, guess.percents.2]
        let scores = [guess.scores.0, guess.scores.1, guess.scores.2]
        var languages: [IdentifiedLanguage] = []
        for index in 0..<3 {
            guard let code = codes[index], percents[index] > 0, let tag = bcp47(cld2: String(cString: code)) else { continue }
            if let existing = languages.firstIndex(where: { $0.language == tag }) {
                languages[existing].percent += Int(percents[index])
            } else {
                languages.append(IdentifiedLanguage(language: tag, percent: Int(percents[index]), score: scores[index]))
            }
        }
        return LanguageIdentification(languages: languages, reliable: guess.reliable != 0 && !languages.isEmpty, letterBytes: Int(guess.text_bytes))
    }

    /// CLD2's code → Quire's BCP-47 tag; nil for CLD2's "unknown" and its non-languages.
    static func bcp47(cld2 code: String) -> String? {
        switch code {
        case "un", "xxx", "": nil
        case "zh": "zh-Hans"
        case "iw": "he"
        case "jw": "jv"
        case "no": "nb"
        default: code.hasPrefix("xx-") ? nil : code
        }
    }

    /// Quire's tag → CLD2's code, for hints.
    static func cld2Code(for tag: String) -> String? {
        switch tag.lowercased() {
        case "": nil
        case "zh-hans", "zh-cn", "zh": "zh"
        case "zh-hant", "zh-tw", "zh-hk": "zh-Hant"
        case "he": "iw"
        case "nb", "nn": "no"
        default: String(tag.lowercased().split(separator: "-").first ?? "")
        }
    }
}
