/// Printed values read from a few words: amounts, dates, times. Hand-written scanners rather than
/// regular expressions: a receipt has some hundred words and each is tried at every start, so the
/// whole page's fields cost about a millisecond.
enum Values {
    /// Letters the engine reads for digits in small print (`O` for `0`, `l` for `1`, `S` for `5`).
    static let confusions: [Character: Character] = [
        "O": "0", "o": "0", "D": "0", "Q": "0", "I": "1", "l": "1", "|": "1", "i": "1", "]": "1", "!": "1",
        "S": "5", "s": "5", "B": "8", "Z": "2", "z": "2",
    ]

    /// `chunk` with confusable letters read as digits, only where that is unambiguous: the chunk has at
    /// least two real digits, no other letters, and no more confused letters than a third of its digits
    /// (at least one). Nil where a letter is not confusable or there are too few digits.
    static func unconfused(_ chunk: Substring) -> String? {
        var digits = 0, confused = 0
        var out = ""
        out.reserveCapacity(chunk.utf8.count)
        for character in chunk {
            if character.isASCII, character.isNumber {
                digits += 1; out.append(character)
            } else if let digit = confusions[character] {
                confused += 1; out.append(digit)
            } else if character.isLetter {
                return nil
            } else {
                out.append(character)
            }
        }
        guard digits >= 2, confused <= max(1, digits / 3) else { return nil }
        return out
    }

    // MARK: - Amounts

    struct Amount: Sendable, Equatable {
        var value: Double
        /// The currency symbol printed on the word itself or the word before (`RM`, `$`).
        var symbol: String?
    }

    static let symbols = ["MYR", "RM", "USD", "US$", "S$", "SGD", "EUR", "GBP", "$", "€", "£", "¥", "RP"]

    /// An amount of money in one word: `60.30`, `RM60.30`, `-0.01`, `(0.01)`, `1,234.50`, `60,30`,
    /// `10.00SR` (a tax code glued to it), `6O.3O`. Two decimals are required: a quantity or a
    /// code is not money.
    static func amount(_ word: String) -> Amount? {
        var text = Substring(word.uppercased())
        var negative = false
        var symbol: String?
        // A minus counts where it opens the word (`-0.01`), not after other marks (`~—-31.00` is a dotted leader).
        let leadingMinus = text.first == "-"
        func trimPunctuation() {
            while let first = text.first, ":=(*#@>~—–_\"'«»“”‘’".contains(first) { if first == "(" { negative = true }; text = text.dropFirst() }
            while let last = text.last, ":;)*,'\".“”’«»".contains(last) { text = text.dropLast() }
        }
        trimPunctuation()
        if text.first == "-" { negative = leadingMinus; text = text.dropFirst() }
        for candidate in symbols where text.hasPrefix(candidate) {
            symbol = candidate; text = text.dropFirst(candidate.count); break
        }
        trimPunctuation()
        if text.first == "-" { negative = leadingMinus || symbol != nil; text = text.dropFirst() }
        if text.last == "-" { negative = true; text = text.dropLast() }
        // A tax code or a flag glued after the amount (`SR`, `ZR`, `S`, `T`, `X`).
        var trailing = 0
        while let last = text.last, last.isLetter, trailing < 2 { text = text.dropLast(); trailing += 1 }
        guard text.count >= 4, let mapped = unconfused(text) else { return nil }
        let chars = Array(mapped)
        let separator = chars[chars.count - 3]
        guard separator == "." || separator == ",", chars[chars.count - 2].isNumber, chars[chars.count - 1].isNumber else { return nil }
        var whole = ""
        var group = 0, sawComma = false
        for character in chars[..<(chars.count - 3)] {
            if character.isNumber { whole.append(character); group += 1 }
            else if character == "," && !whole.isEmpty && (sawComma ? group == 3 : group <= 3) { sawComma = true; group = 0 }
            else { return nil }
        }
        guard !whole.isEmpty, !sawComma || group == 3, whole.count <= 7,
              let value = Double(whole + "." + String(chars[(chars.count - 2)...])) else { return nil }
        return Amount(value: negative ? -value : value, symbol: symbol)
    }

    // MARK: - Dates

    /// A date as printed, its parts not yet ordered where they are ambiguous.
    struct PrintedDate: Sendable, Equatable {
        var year: Int
        /// Both orders of a numeric `a/b/y` date; a month name or a year-first date fixes them.
        var first: Int, second: Int
        /// Nil: `first` is the day when day-first, else the month; true: `first` is the day; false: the month.
        var dayFirst: Bool?
    }

    static let months: [String: Int] = [
        "JAN": 1, "JANUARY": 1, "FEB": 2, "FEBRUARY": 2, "MAR": 3, "MARCH": 3, "MAC": 3, "APR": 4, "APRIL": 4, "MAY": 5, "MEI": 5,
        "JUN": 6, "JUNE": 6, "JUL": 7, "JULY": 7, "AUG": 8, "AUGUST": 8, "OGOS": 8, "SEP": 9, "SEPT": 9, "SEPTEMBER": 9,
        "OCT": 10, "OCTOBER": 10, "OKT": 10, "NOV": 11, "NOVEMBER": 11, "DEC": 12, "DECEMBER": 12, "DIS": 12,
    ]

    /// A year as printed: two digits are this century's; four must fall in 1990…2099.
    static func year(_ digits: String) -> Int? {
        guard let value = Int(digits) else { return nil }
        switch digits.count {
        case 2: return 2000 + value
        case 4: return (1990...2099).contains(value) ? value : nil
        default: return nil
        }
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func valid(year: Int, month: Int, day: Int) -> Bool {
        (1...12).contains(month) && day >= 1 && day <= daysIn(month: month, year: year)
    }

    /// Splits text into digit runs and letter runs, dropping separators; `separators` collects the
    /// characters between parts.
    static func parts(_ text: Substring) -> (parts: [String], separators: [String]) {
        var parts: [String] = [], separators: [String] = []
        var current = "", between = ""
        var kind = 0  // 1 digits, 2 letters
        func flush() {
            if !current.isEmpty { if !parts.isEmpty { separators.append(between) }; parts.append(current); between = "" }
            current = ""
        }
        for character in text {
            let k = character.isASCII && character.isNumber ? 1 : character.isLetter ? 2 : 0
            if k == 0 { flush(); between.append(character); kind = 0; continue }
            if k != kind { flush() }
            kind = k
            current.append(character)
        }
        flush()
        return (parts, separators)
    }

    /// A date in a few words: `19/10/2018`, `12-01-19`, `2018-03-23`, `23.03.18`, `23 Mar 2018`,
    /// `MAR 23, 2018`, `23-MAR-18`, `DATE:25032018` style eight digits (only where `labelled`).
    /// The whole text must be the date (a trailing `,` or `;` aside), so `1/2` in `QTY 1/2` is not one.
    static func date(_ raw: String, labelled: Bool) -> PrintedDate? {
        let upper = raw.uppercased()
        var text = Substring(upper)
        while let last = text.last, ",;:.)".contains(last) { text = text.dropLast() }
        while let first = text.first, "(:".contains(first) { text = text.dropFirst() }
        guard text.count >= 6 else { return nil }
        // Confusions only inside a numeric date (one chunk, no spaces): `19/1O/2018`.
        if !text.contains(" "), text.contains(where: { "/-.".contains($0) }), let mapped = unconfused(text),
           let date = numeric(Substring(mapped)) {
            return date
        }
        let (parts, separators) = parts(text)
        if parts.count == 3, parts.allSatisfy({ $0.first?.isNumber == true }) { return numeric(text) }
        if parts.count == 3 {
            // 23 MAR 2018, 23-MAR-18
            if let month = months[parts[1]], let day = Int(parts[0]), parts[0].count <= 2, let year = year(parts[2]),
               separators.allSatisfy({ $0.count <= 2 }), valid(year: year, month: month, day: day) {
                return PrintedDate(year: year, first: day, second: month, dayFirst: true)
            }
            // MAR 23, 2018
            if let month = months[parts[0]], let day = Int(parts[1]), parts[1].count <= 2, let year = year(parts[2]),
               separators.allSatisfy({ $0.count <= 2 }), valid(year: year, month: month, day: day) {
                return PrintedDate(year: year, first: month, second: day, dayFirst: false)
            }
        }
        if labelled, parts.count == 1, parts[0].count == 8, let compact = compact(parts[0]) { return compact }
        return nil
    }

    /// `ddmmyyyy` or `yyyymmdd`.
    static func compact(_ digits: String) -> PrintedDate? {
        let d = Array(digits).map { Int(String($0)) ?? -1 }
        guard !d.contains(-1) else { return nil }
        let yearFirst = d[0] * 1000 + d[1] * 100 + d[2] * 10 + d[3]
        if (1990...2099).contains(yearFirst), valid(year: yearFirst, month: d[4] * 10 + d[5], day: d[6] * 10 + d[7]) {
            return PrintedDate(year: yearFirst, first: d[6] * 10 + d[7], second: d[4] * 10 + d[5], dayFirst: true)
        }
        let year = d[4] * 1000 + d[5] * 100 + d[6] * 10 + d[7]
        guard (1990...2099).contains(year) else { return nil }
        let a = d[0] * 10 + d[1], b = d[2] * 10 + d[3]
        guard valid(year: year, month: b, day: a) || valid(year: year, month: a, day: b) else { return nil }
        return PrintedDate(year: year, first: a, second: b, dayFirst: nil)
    }

    /// Three digit groups with one separator between them, the same twice: `/`, `-` or `.`.
    static func numeric(_ text: Substring) -> PrintedDate? {
        let (parts, separators) = parts(text)
        guard parts.count == 3, separators.count == 2, separators[0] == separators[1], ["/", "-", ".", " / ", " - "].contains(separators[0]),
              parts.allSatisfy({ $0.allSatisfy(\.isNumber) }) else { return nil }
        if parts[0].count == 4, let year = year(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), parts[1].count <= 2, parts[2].count <= 2,
           valid(year: year, month: month, day: day) {
            return PrintedDate(year: year, first: day, second: month, dayFirst: true)
        }
        guard parts[0].count <= 2, parts[1].count <= 2, let a = Int(parts[0]), let b = Int(parts[1]), let year = year(parts[2]) else { return nil }
        // A dotted `1.50.00` is a price, not a date: a two-digit year after dots must follow two-digit parts.
        if separators[0] == ".", parts[2].count == 2, parts[0].count != 2 || parts[1].count != 2 { return nil }
        let dayMonth = valid(year: year, month: b, day: a), monthDay = valid(year: year, month: a, day: b)
        guard dayMonth || monthDay else { return nil }
        return PrintedDate(year: year, first: a, second: b, dayFirst: dayMonth && monthDay ? nil : dayMonth)
    }

    // MARK: - Times

    struct PrintedTime: Sendable, Equatable {
        var hour: Int, minute: Int, second: Int
    }

    /// A time in one or two words: `14:32`, `14:32:05`, `2:32 PM`, `2:32PM`, `02:32:05 P.M.`.
    static func time(_ raw: String) -> PrintedTime? {
        var text = Substring(raw.uppercased())
        while let last = text.last, ",;)".contains(last) { text = text.dropLast() }
        var meridiem: String?
        for suffix in ["P.M.", "A.M.", "PM", "AM", "P.M", "A.M"] where text.hasSuffix(suffix) {
            meridiem = suffix.hasPrefix("P") ? "PM" : "AM"
            text = text.dropLast(suffix.count)
            while text.last == " " { text = text.dropLast() }
            break
        }
        guard text.contains(":"), let mapped = unconfused(text) else { return nil }
        let pieces = mapped.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(pieces.count), pieces.allSatisfy({ !$0.isEmpty && $0.count <= 2 && $0.allSatisfy(\.isNumber) }),
              pieces.dropFirst().allSatisfy({ $0.count == 2 }),
              var hour = Int(pieces[0]), let minute = Int(pieces[1]) else { return nil }
        let second = pieces.count == 3 ? Int(pieces[2]) ?? 0 : 0
        guard minute < 60, second < 60 else { return nil }
        if let meridiem {
            guard (1...12).contains(hour) else { return nil }
            if meridiem == "PM", hour < 12 { hour += 12 }
            if meridiem == "AM", hour == 12 { hour = 0 }
        } else {
            guard hour < 24 else { return nil }
        }
        return PrintedTime(hour: hour, minute: minute, second: second)
    }
}
