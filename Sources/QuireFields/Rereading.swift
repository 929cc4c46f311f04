import QuireWire

/// The second look a receipt's fields take before they are found: the words that carry its dates
/// and the amounts of its total, subtotal, tax, rounding, cash and change rows, read again by another
/// engine (the worker's line reader) from the same pixels. Small thermal print reads `5` as `6`,
/// `1` as `7` and `0` as `8` in a page reader; a line reader trained on photographs of print reads
/// such digits better. A new reading replaces the words only where it is a valid date or an amount
/// the receipt can use, read confidently; the page's text then says it too.
public enum ReceiptRereading {
    /// A run of words of one line to read again.
    public struct Span: Sendable, Equatable {
        public enum Kind: Sendable, Equatable { case amount, date }
        public var kind: Kind
        /// The run's words, consecutive in one line.
        public var words: [WordPlace]
        /// The run's box, in page coordinates.
        public var box: OCRResult.Box
        /// Its words as first read, joined with spaces.
        public var text: String
        /// Where an amount's box is much taller than its row's words, the row's band down to the
        /// box's foot: the amount printed in double height fills the box, one under a pen's mark
        /// stands in the band. Both are read, and the surer reading taken.
        public var band: OCRResult.Box? = nil
        /// The amount the fields took for the total, on a receipt without a rounding row: where a second
        /// look reads it alike (``confirms(_:reading:confidence:)``), the checks around it are not read.
        /// Where the receipt rounds, which amount is the total (before or after the rounding) is what
        /// the checks decide.
        public var settlesTotal = false

        /// Whether the first reading already reads as what the run should hold (an amount, a valid
        /// date): a run that does not may have lost characters outside its words' boxes, and is cut
        /// wider.
        public var readsWhole: Bool {
            switch kind {
            case .amount: !text.contains(" ") && Values.amount(text) != nil
            case .date: ReceiptRereading.firstDate([text]) != nil
            }
        }
    }

    /// What a second look did: how many runs were read again, and how many were read differently
    /// and taken.
    public struct Outcome: Sendable, Equatable {
        public var read = 0
        public var changed = 0
        public var dates = 0
        public var amounts = 0
    }

    /// The most date runs and amount runs read again on a page: each costs some ten milliseconds.
    public static let maxDateSpans = 2
    public static let maxAmountSpans = 6
    /// A date whose every word the first reading gave at least this confidence is not read again (on
    /// receipts-dev the misread dates' words had 0.76 to 0.94; 40 % of the dates found reach it).
    public static let surelyRead = 0.95
    /// A new reading below this mean character probability is not taken.
    public static let minConfidence = 0.8

    /// The runs of `page` worth reading again, as the fields first found on it say:
    /// - the transaction date's words, unless they were read surely (``surelyRead``) or the same date is
    ///   printed on another row too; where no date was found, up to two words shaped like one
    ///   (``isDateShaped(_:onDateRow:)``), those on a `DATE` row first, then a year with the word before it;
    /// - where no total was found, or none that the receipt's arithmetic agrees with (cash − change,
    ///   subtotal + tax), the total's amount and those of the rows that check it: the runs of number
    ///   words (``numberRuns(_:)``) on rows a money label names, or on the row below where the label
    ///   stands alone; total, cash, change, subtotal, tax, rounding in that order. An amount read
    ///   surely is left out, and all of them where the total was read surely on a receipt without a
    ///   rounding row (``Span/settlesTotal``).
    /// A total that two printed amounts agree on is not read again.
    public static func spans(_ page: OCRResult.Page, locale: String? = nil) -> [Span] {
        spans(ReceiptFields.Analysis(page, locale: locale))
    }

    /// ``spans(_:locale:)`` from a page's analysis.
    public static func spans(_ analysis: ReceiptFields.Analysis) -> [Span] {
        let rows = analysis.rows
        var dates: [Span] = [], amounts: [Span] = []
        func span(_ kind: Span.Kind, _ row: Row, _ indices: [Int]) -> Span? {
            guard let first = indices.first.map({ row.places[$0] }),
                  indices.allSatisfy({ row.places[$0].block == first.block && row.places[$0].paragraph == first.paragraph && row.places[$0].line == first.line }),
                  zip(indices, indices.dropFirst()).allSatisfy({ row.places[$1].word == row.places[$0].word + 1 }) else { return nil }
            var box = Geometry.union(indices.map { row.words[$0].boundingBox })
            // A date whose box a mark above or below stretched stands where the row's words stand; an
            // amount may also be printed taller than its label (a total in double height): ``Span/band``.
            let tops = row.words.map(\.boundingBox.y).sorted(), bottoms = row.words.map { $0.boundingBox.y + $0.boundingBox.height }.sorted()
            let top = tops[tops.count / 2], bottom = bottoms[bottoms.count / 2]
            var band: OCRResult.Box?
            if bottom > top, box.height > 3 * (bottom - top) / 2 {
                if kind == .date {
                    box = OCRResult.Box(x: box.x, y: top, width: box.width, height: bottom - top)
                } else {
                    let foot = box.y + box.height
                    band = OCRResult.Box(x: box.x, y: min(top, foot - (bottom - top)), width: box.width, height: foot - min(top, foot - (bottom - top)))
                }
            }
            return Span(kind: kind, words: indices.map { row.places[$0] }, box: box, text: indices.map { row.words[$0].text }.joined(separator: " "),
                        band: band)
        }
        // Words every one of which the first reading gave at least ``surelyRead``.
        func surely(_ row: Row, _ indices: [Int]) -> Bool { indices.compactMap { row.words[$0].confidence }.min().map { $0 >= surelyRead } ?? false }
        let found = analysis.dates
        if let date = found.date, let row = rows.first(where: { $0.index == date.row }), let span = span(.date, row, date.words) {
            // A date printed twice and read alike both times is not read a third time, nor one read surely.
            let printed = date.words.map { row.words[$0].text.uppercased() }.joined(separator: " ")
            if rows.filter({ $0.text.contains(printed) }).count < 2 && !surely(row, date.words) { dates.append(span) }
        } else {
            var shaped: [(labelled: Bool, span: Span)] = []
            for row in rows {
                let dateRow = row.text.contains("DATE") || row.text.contains("TARIKH")
                for (i, word) in row.words.enumerated() where isDateShaped(word.text, onDateRow: dateRow) {
                    if let span = span(.date, row, [i]) { shaped.append((dateRow, span)) }
                }
            }
            // A year alone (`2018`) with the word before it: the rest of the date misread as letters (`cee 2018`).
            var years: [Span] = []
            for row in rows {
                for (i, word) in row.words.enumerated() where i > 0 && isYear(word.text) && row.words[i - 1].text.count <= 8 {
                    if let span = span(.date, row, [i - 1, i]) { years.append(span) }
                }
            }
            dates = (shaped.filter(\.labelled) + shaped.filter { !$0.labelled }).map(\.span) + years
        }
        let money = analysis.money
        if money.total == nil || money.agreeing == 0 {
            // The checks that settle a total first: the total itself, what was paid and given back,
            // then the subtotal, the tax and the rounding.
            let priority: [Labels.Kind: Int] = [.total: 1, .cash: 2, .change: 3, .subtotal: 4, .tax: 5, .rounding: 6]
            var ranked: [(rank: Int, row: Int, span: Span)] = []
            var totalSure = false
            // Each row's label, named once.
            let labels = rows.map { Labels.kind($0.text) }
            let rounds = labels.contains(.rounding)
            for (position, row) in rows.enumerated() {
                let kinds = [labels[position]] + Money.segments(row).map { Labels.kind($0.text) }
                guard let rank = kinds.compactMap({ priority[$0] }).min() else { continue }
                var runs = numberRuns(row)
                var source = row
                if runs.isEmpty, position + 1 < rows.count, labels[position + 1] == .none {
                    source = rows[position + 1]
                    runs = numberRuns(source)
                }
                for run in runs.reversed() {
                    guard var span = span(.amount, source, run) else { continue }
                    let isTotal = money.total.map { total in total.row == source.index && total.words.contains { source.places[$0] == span.words.last } } ?? false
                    span.settlesTotal = isTotal && !rounds
                    // An amount read surely is not read again; a total that settles read surely needs no check read again either.
                    if span.readsWhole && surely(source, run) { totalSure = totalSure || span.settlesTotal; continue }
                    ranked.append((isTotal ? 0 : rank, source.index, span))
                }
            }
            // By rank, the lowest row first within one (the final total, the last payment).
            amounts = totalSure ? [] : ranked.sorted { ($0.rank, -$0.row) < ($1.rank, -$1.row) }.map(\.span)
        }
        // Each run once: a date's words are not an amount's too.
        var seen: Set<[WordPlace]> = []
        let kept = dates.prefix(maxDateSpans).filter { seen.insert($0.words).inserted }
        return kept + amounts.filter { seen.insert($0.words).inserted }.prefix(maxAmountSpans)
    }

    /// Whether a word looks like a date, however misread: two or three groups of one to four digits
    /// between `/` or `-`, three between dots (`19/10/2018`, `/01/20`, `2018-03-16`, `19.10.18`), four to eight
    /// digits in all; on a `DATE` row also four to eight digits with a letter or two misread among
    /// them that are not an amount (`2032018`, `20/0a/204£`).
    static func isDateShaped(_ text: String, onDateRow: Bool) -> Bool {
        let digits = text.filter(\.isNumber).count
        guard (4...8).contains(digits), !text.contains(":") else { return false }
        let core = text.drop { !$0.isNumber }.reversed().drop { !$0.isNumber }.reversed()
        let groups = String(core).split(separator: "/", omittingEmptySubsequences: false).flatMap { $0.split(separator: "-", omittingEmptySubsequences: false) }
            .flatMap { $0.split(separator: ".", omittingEmptySubsequences: false) }
        // Two groups only between `/` or `-` (`/01/20`): `10.00` is an amount.
        let wanted = core.contains("/") || core.contains("-") ? 2...3 : 3...3
        if wanted.contains(groups.count), groups.allSatisfy({ (1...4).contains($0.count) && $0.allSatisfy(\.isNumber) }) { return true }
        return onDateRow && Values.amount(text) == nil && core.filter(\.isLetter).count <= 2
    }

    /// A year as receipts print it: four digits from 2000 to 2039.
    static func isYear(_ text: String) -> Bool {
        text.count == 4 && text.allSatisfy(\.isNumber) && Int(text).map { (2000...2039).contains($0) } == true
    }

    /// The row's runs of words of one line that may hold an amount, each read again as one: a word
    /// that reads as an amount alone (`141.08`, `RM13.00`); or consecutive number words (a digit, at
    /// most two letters) and short words between them that together hold two to nine digits
    /// (`593, 10`, `RNa 00`, `3 0`: an amount the first reading broke).
    static func numberRuns(_ row: Row) -> [[Int]] {
        var runs: [[Int]] = []
        var current: [Int] = []
        func close() {
            let digits = current.map { row.words[$0].text.filter(\.isNumber).count }.reduce(0, +)
            if (2...9).contains(digits) { runs.append(current) }
            current = []
        }
        for (i, word) in row.words.enumerated() {
            let text = word.text
            let sameLine = current.last.map { last in
                let a = row.places[last], b = row.places[i]
                return a.block == b.block && a.paragraph == b.paragraph && a.line == b.line && b.word == a.word + 1
            } ?? true
            if !sameLine { close() }
            if Values.amount(text) != nil {
                close()
                if text.filter(\.isNumber).count <= 9 { runs.append([i]) }
                continue
            }
            let numberWord = text.contains(where: \.isNumber) && text.filter(\.isLetter).count <= 2 && !text.contains(":") && !text.contains("%")
            let short = text.count <= 3 && !text.contains(where: \.isNumber)
            if numberWord || short && i + 1 < row.words.count { current.append(i) } else { close() }
        }
        close()
        return runs
    }

    /// The text a new reading of `span` gives it, nil where it is not taken: a date must read as a
    /// valid date (the label glued before it kept: `DATE:`), an amount as one amount of the same
    /// sign; a reading that says what the page already says changes nothing.
    public static func replacement(for span: Span, reading: String, confidence: Double) -> String? {
        guard confidence >= minConfidence else { return nil }
        let words = reading.split(separator: " ").map(String.init)
        switch span.kind {
        case .amount:
            // The amount the reading ends with: its last word, or its last two joined (`593, 10`).
            let tail2 = words.suffix(2).joined(), tail1 = words.last ?? ""
            guard let new = Values.amount(tail2) ?? Values.amount(tail1) else { return nil }
            let text = Values.amount(tail2) != nil ? tail2 : tail1
            // A run of several words was no amount to the fields (`593, 10`): any reading of one is new.
            let old = span.text.contains(" ") ? nil : Values.amount(span.text)
            if let old, old.value == new.value { return nil }
            // A sign the second look does not see (a minus read as a dash, or not read) is the first's.
            if let old, abs(old.value) == abs(new.value) { return nil }
            return text
        case .date:
            guard let new = firstDate(words) else { return nil }
            if let old = firstDate([span.text]), old.printed == new.printed { return nil }
            let prefix = span.text.prefix { !$0.isNumber }
            let label = prefix.count >= 3 && prefix.allSatisfy({ $0.isLetter || ":.".contains($0) }) ? String(prefix) : ""
            return label + new.text
        }
    }

    /// Whether a new reading of an amount's `span` says what the first one did, confidently: two
    /// engines agree on it.
    public static func confirms(_ span: Span, reading: String, confidence: Double) -> Bool {
        guard span.kind == .amount, confidence >= minConfidence, !span.text.contains(" "), let old = Values.amount(span.text) else { return false }
        let words = reading.split(separator: " ").map(String.init)
        guard let new = Values.amount(words.suffix(2).joined()) ?? Values.amount(words.last ?? "") else { return false }
        return new.value == old.value
    }

    /// The first valid date among `words` (a label glued on cut off), with the text it was read from.
    static func firstDate(_ words: [String]) -> (text: String, printed: Values.PrintedDate)? {
        for word in words {
            var text = Substring(word)
            if let digit = text.firstIndex(where: \.isNumber), text[..<digit].allSatisfy({ $0.isLetter || ":[]()#".contains($0) }) { text = text[digit...] }
            while let last = text.last, !last.isNumber && !last.isLetter { text = text.dropLast() }
            guard let printed = Values.date(String(text), labelled: true),
                  Values.valid(year: printed.year, month: printed.second, day: printed.first) || Values.valid(year: printed.year, month: printed.first, day: printed.second)
            else { continue }
            return (String(text), printed)
        }
        return nil
    }

    /// Puts the new readings taken into `page`: a run's words become one word with the new text, its
    /// symbols spread evenly over its box, and the line's, paragraph's, block's and page's texts say it.
    public static func apply(_ readings: [(span: Span, text: String, confidence: Double)], to page: inout OCRResult.Page) -> Outcome {
        var outcome = Outcome()
        // From the last word of the page backwards, so that merging a run keeps earlier places valid.
        let ordered = readings.sorted { a, b in
            let x = a.span.words[0], y = b.span.words[0]
            return (x.block, x.paragraph, x.line, x.word) > (y.block, y.paragraph, y.line, y.word)
        }
        for (span, text, confidence) in ordered {
            outcome.read += 1
            guard let first = span.words.first, let last = span.words.last,
                  page.blocks.indices.contains(first.block), page.blocks[first.block].paragraphs.indices.contains(first.paragraph),
                  page.blocks[first.block].paragraphs[first.paragraph].lines.indices.contains(first.line) else { continue }
            var line = page.blocks[first.block].paragraphs[first.paragraph].lines[first.line]
            guard line.words.indices.contains(last.word), first.word <= last.word,
                  line.words[first.word...last.word].map(\.text).joined(separator: " ") == span.text else { continue }
            let oldLine = line.text
            var word = line.words[first.word]
            word.text = text
            word.boundingBox = span.box
            word.polygon = Geometry.polygon(span.box)
            word.confidence = (confidence * 1_000).rounded() / 1_000
            word.break = line.words[last.word].break
            if !word.symbols.isEmpty || !line.words[first.word].symbols.isEmpty { word.symbols = symbols(text, in: span.box, confidence: word.confidence) }
            line.words.replaceSubrange(first.word...last.word, with: [word])
            line.text = replacing(span.text, with: text, occurrence: 0, in: oldLine) ?? line.words.map(\.text).joined(separator: " ")
            // Which of the texts' occurrences of the line this is: those in the lines before it (`13.70`
            // is in `Total 13.70` too).
            func before(_ lines: [OCRResult.Line]) -> Int { lines.map { occurrences(of: oldLine, in: $0.text) }.reduce(0, +) }
            let paragraph = page.blocks[first.block].paragraphs[first.paragraph]
            let inParagraph = before(Array(paragraph.lines[..<first.line]))
            let block = page.blocks[first.block]
            let inBlock = before(block.paragraphs[..<first.paragraph].flatMap(\.lines)) + inParagraph
            let inPage = before(page.blocks[..<first.block].flatMap { $0.paragraphs.flatMap(\.lines) }) + inBlock
            page.blocks[first.block].paragraphs[first.paragraph].lines[first.line] = line
            if let text = replacing(oldLine, with: line.text, occurrence: inParagraph, in: paragraph.text) {
                page.blocks[first.block].paragraphs[first.paragraph].text = text
            }
            if let text = replacing(oldLine, with: line.text, occurrence: inBlock, in: block.text) { page.blocks[first.block].text = text }
            if let text = replacing(oldLine, with: line.text, occurrence: inPage, in: page.text) { page.text = text }
            outcome.changed += 1
            if span.kind == .date { outcome.dates += 1 } else { outcome.amounts += 1 }
        }
        return outcome
    }

    /// Where `old` stands in `text`, as character offsets, without overlaps.
    static func offsets(of old: String, in text: String) -> [Int] {
        let needle = Array(old), haystack = Array(text)
        guard !needle.isEmpty, needle.count <= haystack.count else { return [] }
        var found: [Int] = []
        var start = 0
        while start + needle.count <= haystack.count {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) {
                found.append(start)
                start += needle.count
            } else {
                start += 1
            }
        }
        return found
    }

    static func occurrences(of old: String, in text: String) -> Int { offsets(of: old, in: text).count }

    /// `text` with its `occurrence`-th (0-based) `old` replaced by `new`; nil where it has not that many.
    static func replacing(_ old: String, with new: String, occurrence: Int, in text: String) -> String? {
        let found = offsets(of: old, in: text)
        guard found.indices.contains(occurrence) else { return nil }
        let characters = Array(text), start = found[occurrence]
        return String(characters[..<start]) + new + String(characters[(start + old.count)...])
    }

    /// `text`'s characters spread evenly over `box`, left to right.
    static func symbols(_ text: String, in box: OCRResult.Box, confidence: Double?) -> [OCRResult.Symbol] {
        let characters = Array(text)
        guard !characters.isEmpty else { return [] }
        return characters.enumerated().map { i, character in
            let x0 = box.x + box.width * i / characters.count, x1 = box.x + box.width * (i + 1) / characters.count
            let b = OCRResult.Box(x: x0, y: box.y, width: max(0, x1 - x0), height: box.height)
            return OCRResult.Symbol(text: String(character), boundingBox: b, polygon: Geometry.polygon(b), confidence: confidence)
        }
    }
}
