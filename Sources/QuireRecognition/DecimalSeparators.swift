import Foundation
import Imaging

/// Makes a page's amounts agree on their decimal separator. Thermal print's full stop is a dot with
/// a tail, and Tesseract reads some of them as commas (`33,90` among `12.50` and `4.20`). A page that
/// writes amounts with one separator (at least ``minimumAmounts`` of them, and at least
/// ``dominance`` times as many as with the other) gets the few others changed to it, so an app finds
/// `33.90` where the receipt says `33.90`. Only amounts with exactly two decimals and at most three
/// digits before them are touched (`1,250` and `1.250,00` are groupings, not decimals), and pages that
/// mix both separators evenly are left alone.
enum DecimalSeparators {
    static let minimumAmounts = 3
    /// Twice as many: three times left the misread commas of pages such as 10 dots against 5 commas;
    /// on the receipts twice changed 29 amounts more, none of them one the receipt writes so.
    static let dominance = 2

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

    /// Thermal print's monospaced amounts have the full stop in a cell of its own, and Tesseract often
    /// breaks the word after it: `55. 00`. A word ending in a digit and a full stop, followed on its
    /// line by a word of exactly two digits no further away than that word is high, is one amount.
    /// Commas are left apart (`4, 30` is as often a list as an amount), and so are farther words
    /// (`Lot 38. 39`). Returns the page and how many amounts were joined.
    static func joinSplitAmounts(_ page: RecognizedPage) -> (RecognizedPage, joined: Int) {
        let (out, joined) = page.rebuilt(lines: { words in
            var kept: [RecognizedElement] = []
            var joined = 0
            var index = 0
            while index < words.count {
                let word = words[index]
                if index + 1 < words.count, let merged = joinedAmount(word, words[index + 1]) {
                    kept.append(merged)
                    joined += 1
                    index += 2
                } else {
                    kept.append(word)
                    index += 1
                }
            }
            return joined > 0 ? (kept, joined) : nil
        })
        return (out, joined)
    }

    /// `first` and `second` as one word when they are an amount broken after its full stop.
    static func joinedAmount(_ first: RecognizedElement, _ second: RecognizedElement) -> RecognizedElement? {
        let head = Array(first.text), tail = Array(second.text)
        guard head.count >= 2, head.last == ".", head[head.count - 2].isASCIIDigit,
              tail.count == 2, tail.allSatisfy(\.isASCIIDigit) else { return nil }
        let a = first.box, b = second.box
        let gap = b.x - (a.x + a.width)
        guard gap <= b.height, b.x + b.width > a.x + a.width else { return nil }
        var word = first
        word.text = first.text + second.text
        let x0 = min(a.x, b.x), y0 = min(a.y, b.y)
        word.box = PixelBox(x: x0, y: y0, width: max(a.x + a.width, b.x + b.width) - x0, height: max(a.y + a.height, b.y + b.height) - y0)
        switch (first.confidence, second.confidence) {
        case let (a?, b?): word.confidence = min(a, b)
        case let (a, b): word.confidence = a ?? b
        }
        word.children = first.children + second.children
        return word
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
