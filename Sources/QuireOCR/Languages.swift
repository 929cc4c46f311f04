import QuireRecognition
import QuireWire

/// Maps the language names apps use (BCP-47, as ML Kit, Cloud Vision and Azure take them) to
/// Tesseract's pack names, and back for the result.
public enum Languages {
    /// BCP-47 → Tesseract. Keys are lower-cased.
    static let toTesseract: [String: String] = [
        "en": "eng", "de": "deu", "fr": "fra", "es": "spa", "it": "ita", "pt": "por", "nl": "nld",
        "sv": "swe", "da": "dan", "nb": "nor", "no": "nor", "fi": "fin", "pl": "pol", "cs": "ces",
        "tr": "tur", "ru": "rus", "uk": "ukr", "el": "ell", "ar": "ara", "he": "heb", "fa": "fas",
        "hi": "hin", "mr": "mar", "ne": "nep", "sa": "san", "bn": "ben", "ta": "tam", "te": "tel",
        "th": "tha", "vi": "vie", "id": "ind", "ms": "msa",
        "zh": "chi_sim", "zh-hans": "chi_sim", "zh-cn": "chi_sim", "zh-sg": "chi_sim",
        "zh-hant": "chi_tra", "zh-tw": "chi_tra", "zh-hk": "chi_tra",
        "ja": "jpn", "ko": "kor",
        "sr": "srp", "bg": "bul", "mk": "mkd", "be": "bel", "ur": "urd", "kn": "kan", "ml": "mal", "gu": "guj", "pa": "pan",
        "ka": "kat", "hy": "hye", "am": "amh", "km": "khm", "lo": "lao", "my": "mya", "si": "sin", "sk": "slk", "sl": "slv",
        "hr": "hrv", "ro": "ron", "hu": "hun", "et": "est", "lv": "lav", "lt": "lit", "ca": "cat", "bs": "bos", "sq": "sqi",
        "is": "isl", "ga": "gle", "cy": "cym", "eu": "eus", "gl": "glg", "af": "afr", "sw": "swa", "tl": "tgl", "la": "lat",
        "az": "aze", "uz": "uzb", "kk": "kaz",
    ]

    /// Tesseract → BCP-47 for the result.
    static let toBCP47: [String: String] = {
        var map: [String: String] = [:]
        for (bcp, tess) in toTesseract where !bcp.contains("-") || bcp == "zh-hans" || bcp == "zh-hant" {
            if map[tess] == nil || bcp.count > (map[tess]?.count ?? 0) && bcp.hasPrefix("zh") { map[tess] = bcp }
        }
        map["chi_sim"] = "zh-Hans"
        map["chi_tra"] = "zh-Hant"
        map["nor"] = "nb"
        map["chi_sim_vert"] = "zh-Hans"
        map["chi_tra_vert"] = "zh-Hant"
        map["jpn_vert"] = "ja"
        map["kor_vert"] = "ko"
        return map
    }()

    /// The BCP-47 tag for a Tesseract pack name (`eng` → `en`); the pack name itself when unknown.
    public static func bcp47(forTesseract code: String) -> String {
        toBCP47[code] ?? code
    }

    /// Resolves a requested language (BCP-47 or a Tesseract pack name) to an installed pack.
    /// Returns nil when nothing installed matches.
    public static func resolve(_ requested: String, installed: Set<String>) -> String? {
        if installed.contains(requested) { return requested }
        let key = requested.lowercased()
        if let tess = toTesseract[key], installed.contains(tess) { return tess }
        // A region subtag we do not list (en-GB) falls back to the primary language; a script subtag
        // (zh-Hant, sr-Latn: four letters) does not, since another script's pack would misread it.
        let subtags = key.split(separator: "-")
        if subtags.count > 1, subtags[1].count != 4, let tess = toTesseract[String(subtags[0])], installed.contains(tess) {
            return tess
        }
        return nil
    }
}

extension EngineFactory {
    /// Resolves requested names (BCP-47 or Tesseract's) to installed packs, or `unknown_language`
    /// naming what is installed.
    func resolveLanguages(_ requested: [String]) throws(WireError) -> [String] {
        let installed = installedLanguages
        var packs: [String] = []
        for name in requested {
            guard let pack = Languages.resolve(name, installed: installed), pack != "osd" else {
                let list = installed.filter { $0 != "osd" }.sorted().joined(separator: ", ")
                throw WireError(.unknownLanguage, "no installed language pack for '\(name)'; installed: \(list)")
            }
            if !packs.contains(pack) { packs.append(pack) }
        }
        return packs
    }
}
