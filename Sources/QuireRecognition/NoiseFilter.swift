import Foundation
import Imaging

/// Drops the "words" Tesseract makes of things that are not text: rules, borders, dotted separators,
/// specks (`|`, `—`, `ee`, `~~`). On the receipts these were a fifth of everything read; removing
/// them cut the word error by about 6 points and lost no date or total (docs/ocr.md).
enum NoiseFilter {
    /// Marks that mean something on their own (a quantity sign, a currency, a colon in a table).
    static let meaningfulMarks: Set<String> = ["-", ":", "@", "&", "#", "$", "%", "/", "+", "*", "=", "!", "?", "€", "£", "¥"]

    /// Whether a word is noise: nothing but marks that mean nothing alone, or at most two letters
    /// and digits read with less than `maxConfidence`.
    static func isNoise(_ word: RecognizedElement, maxConfidence: Double) -> Bool {
        let text = word.text.trimmingCharacters(in: .whitespacesAndNewlines)
        // Chinese, Japanese and Korean are read a character or two a word, and their full-width
        // commas and stops stand alone: a word of them is text, however unsure.
        if !text.isEmpty, text.unicodeScalars.allSatisfy({ isEastAsian($0) || isEastAsianPunctuation($0) }) { return false }
        let alphanumerics = text.unicodeScalars.filter { $0.properties.isAlphabetic || $0.properties.numericType != nil }.count
        if alphanumerics == 0 { return !meaningfulMarks.contains(text) }
        return alphanumerics <= 2 && (word.confidence ?? 0) < maxConfidence
    }

    /// Han, kana and Hangul.
    static func isEastAsian(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3040...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7AF, 0xF900...0xFAFF, 0x20000...0x2FA1F: true
        default: false
        }
    }

    /// CJK symbols and punctuation (、。「」) and the full-width forms (，！？：；).
    static func isEastAsianPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        (0x3001...0x303F).contains(scalar.value) || (0xFF01...0xFF65).contains(scalar.value)
    }

    /// The page without its noise words (and without lines, paragraphs and blocks left empty), with
    /// the texts of what lost words rebuilt; and how many words were dropped.
    static func filter(_ page: RecognizedPage, maxConfidence: Double) -> (RecognizedPage, dropped: Int) {
        let (filtered, dropped) = page.rebuilt { word in isNoise(word, maxConfidence: maxConfidence) ? [] : nil }
        return (filtered, dropped)
    }
}
