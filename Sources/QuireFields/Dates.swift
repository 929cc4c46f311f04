/// The transaction's date and time: every date printed on the page is a candidate, and the one on a
/// `DATE` row, beside a time, highest on the page wins; `EXPIRY`/`VALID` dates never do.
enum Dates {
    struct Found {
        var row: Int
        var words: [Int]
        var iso: String
        var labelled: Bool
        /// Whether the order of day and month was printed unambiguously (a month name, a part > 12,
        /// year first) or settled by another date on the page, rather than by the country's convention.
        var decided: Bool
    }

    struct TimeFound {
        var row: Int
        var words: [Int]
        var iso: String
    }

    struct Result {
        var date: Found?
        var time: TimeFound?
        var candidates = 0
    }

    static func find(_ rows: [Row], country: Country) -> Result {
        struct Candidate {
            var row: Int, words: [Int], printed: Values.PrintedDate, score: Double, labelled: Bool
        }
        var candidates: [Candidate] = []
        var times: [TimeFound] = []
        for row in rows {
            let texts = row.words.map(\.text)
            let labelled = row.text.contains("DATE") || row.text.contains("TARIKH") || row.text.contains("DATED")
            let excluded = ["EXP", "VALID", "EXPIRY", "BEFORE", "DUE", "BIRTH"].contains { row.text.contains($0) }
            var index = 0
            while index < texts.count {
                var matched = false
                // The longest date starting here, of up to three words.
                for length in stride(from: min(3, texts.count - index), through: 1, by: -1) {
                    var text = texts[index..<(index + length)].joined(separator: " ")
                    // A label glued on (`DATE:19/10/2018`, `Dater11/03/18`, `[Sales]2018-01-05`) is cut.
                    if length == 1, text.first.map({ $0.isLetter || $0 == "[" || $0 == "(" }) == true, let digit = text.firstIndex(where: \.isNumber),
                       text[..<digit].allSatisfy({ $0.isLetter || ":[]()".contains($0) }), text[..<digit].count >= 3 { text = String(text[digit...]) }
                    if let printed = Values.date(text, labelled: labelled) {
                        var score = (labelled ? 3.0 : 0) - Double(row.index) * 0.02
                        if excluded { score -= 5 }
                        candidates.append(Candidate(row: row.index, words: Array(index..<(index + length)), printed: printed, score: score, labelled: labelled))
                        index += length
                        matched = true
                        break
                    }
                }
                if matched { continue }
                for length in [2, 1] where index + length <= texts.count {
                    var text = texts[index..<(index + length)].joined(separator: " ")
                    if length == 1, let colon = text.firstIndex(of: ":"), text[..<colon].allSatisfy(\.isLetter), !text[..<colon].isEmpty {
                        text = String(text[text.index(after: colon)...])
                    }
                    if let time = Values.time(text) {
                        // `2:32` alone is a time only beside a date or after a label; `PM` makes it one.
                        times.append(TimeFound(row: row.index, words: Array(index..<(index + length)),
                                               iso: two(time.hour) + ":" + two(time.minute) + ":" + two(time.second)))
                        index += length
                        matched = true
                        break
                    }
                }
                if !matched { index += 1 }
            }
        }
        var result = Result()
        result.candidates = candidates.count
        // A date beside a time is the transaction's.
        for index in candidates.indices where times.contains(where: { abs($0.row - candidates[index].row) <= 1 }) { candidates[index].score += 2 }
        // The page's own unambiguous numeric dates settle the order of its ambiguous ones.
        let settled = candidates.compactMap { $0.printed.dayFirst == nil ? nil : $0.printed }.first { $0.first != $0.second && ($0.first > 12 || $0.second > 12) }
        let dayFirst = settled.map { $0.dayFirst ?? true } ?? country.dayFirst
        guard let best = candidates.max(by: { $0.score < $1.score }) else { return result }
        let p = best.printed
        let order = p.dayFirst ?? dayFirst
        let (day, month) = order ? (p.first, p.second) : (p.second, p.first)
        guard Values.valid(year: p.year, month: month, day: day) else { return result }
        result.date = Found(row: best.row, words: best.words, iso: "\(p.year)-" + two(month) + "-" + two(day), labelled: best.labelled,
                            decided: p.dayFirst != nil || settled != nil || p.first == p.second)
        result.time = times.min { abs($0.row - best.row) < abs($1.row - best.row) }
        return result
    }

    static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
