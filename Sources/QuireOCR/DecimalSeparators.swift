import Foundation
import Tesseract

/// Makes a page's amounts agree on their decimal separator. Thermal print's full stop is a dot with
/// a tail, and Tesseract reads some of them as commas (`33,90` among `12.50` and `4.20`). A page that
/// writes amounts with one separator (at least ``minimumAmounts`` of them, and at least
/// ``dominance`` times as many as with the other) gets the few others changed to it, so an app finds
/// `33.90` where the receipt says `33.90`. Only amounts with exactly two decimals and at most three
/// digits before them are touched (`1,250` and `1.250,00` are groupings, not decimals), and pages that
/// mix both separators evenly are left alone.
enum DecimalSeparators {
    static let minimumAmounts = 3
    static let dominance = 3

    /// An amount: anything but digits before, 1–3 digits, the separator, 2 digits, anything but digits after.
    struct Amount {
        var separatorOffset: Int
        var separator: Character
    }

    static func amount(_ text: String) -> Amount? {
        let characters = Array(text)
        guard let first = characters.firstIndex(where: \.isASCIIDigit),
              let last = characters.lastIndex(where: \.isASCIIDigit) else { return nil }
        let core = characters[first...last]
        guard core.count >= 4, core.count <= 6 else { return nil }
        let separatorOffset = last - 2
        let separator = characters[separatorOffset]
        guard separator == "." || separator == "," else { return nil }
        let digitsBefore = characters[first..<separatorOffset]
        guard digitsBefore.allSatisfy(\.isASCIIDigit), characters[last - 1].isASCIIDigit else { return nil }
        return Amount(separatorOffset: separatorOffset, separator: separator)
    }

    /// The page with its minority separators changed, how many words changed, and how many amounts
    /// were found with each separator.
    static func unify(_ page: RecognizedPage) -> (RecognizedPage, changed: Int, dots: Int, commas: Int) {
        var dots = 0, commas = 0
        for block in page.blocks {
            for paragraph in block.children {
                for line in paragraph.children {
                    for word in line.children {
                        guard let amount = amount(word.text) else { continue }
                        if amount.separator == "." { dots += 1 } else { commas += 1 }
                    }
                }
            }
        }
        let (majority, minority): (Character, Character)
        if dots >= minimumAmounts, commas > 0, dots >= dominance * commas {
            (majority, minority) = (".", ",")
        } else if commas >= minimumAmounts, dots > 0, commas >= dominance * dots {
            (majority, minority) = (",", ".")
        } else {
            return (page, 0, dots, commas)
        }
        var changed = 0
        let edited = page.editingWords { word in
            guard let amount = amount(word.text), amount.separator == minority else { return nil }
            var word = word
            var characters = Array(word.text)
            characters[amount.separatorOffset] = majority
            // Symbols are the word's characters one by one where Tesseract kept them so.
            if word.children.count == characters.count, word.children[amount.separatorOffset].text == String(minority) {
                word.children[amount.separatorOffset].text = String(majority)
            }
            word.text = String(characters)
            changed += 1
            return word
        }
        return (edited, changed, dots, commas)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
