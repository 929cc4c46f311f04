import QuireWire
/// Amounts on rows, and the choice among them of the subtotal, tax, tip and total by the checks a
/// receipt's own arithmetic allows.
extension Values {
    /// An amount where it stands: its row and the words it was read from (a symbol word before it included).
    struct Placed: Sendable, Equatable {
        var amount: Amount
        var row: Int
        var words: [Int]
    }

    /// The row's amounts left to right. `RM 60.30` (symbol a word apart) and `60 .30` (the decimals
    /// split off) are read as one.
    static func amountsIn(_ row: Row) -> [Placed] {
        var out: [Placed] = []
        var index = 0
        let words = row.words.map(\.text)
        while index < words.count {
            if var amount = amount(words[index]) {
                var used = [index]
                if amount.symbol == nil, index > 0 {
                    // `RM 0.02`, and `-RM 0.02` (a rounding down): the sign on the symbol's word.
                    let before = words[index - 1].uppercased().trimmingCharacters(in: ":")
                    let negative = before.hasPrefix("-")
                    if let symbol = symbols.first(where: { (negative ? String(before.dropFirst()) : before) == $0 }) {
                        amount.symbol = symbol; used.insert(index - 1, at: 0)
                        if negative, amount.value > 0 { amount.value = -amount.value }
                    }
                }
                out.append(Placed(amount: amount, row: row.index, words: used))
            } else if index + 1 < words.count, words[index + 1].hasPrefix("."), words[index].allSatisfy(\.isNumber),
                      let joined = amount(words[index] + words[index + 1]) {
                out.append(Placed(amount: joined, row: row.index, words: [index, index + 1]))
                index += 1
            } else if index + 1 < words.count, words[index].hasSuffix("."), words[index].dropLast().last?.isNumber == true,
                      words[index + 1].count == 2, words[index + 1].allSatisfy({ $0.isNumber || $0 == "O" || $0 == "o" }),
                      let joined = amount(words[index] + String(words[index + 1].map { $0.isNumber ? $0 : "0" })) {
                // `RM53. 6O`: the cents split off after the point, an O for a nought among them.
                out.append(Placed(amount: joined, row: row.index, words: [index, index + 1]))
                index += 1
            }
            index += 1
        }
        return out
    }
}

/// The money fields of a receipt, each an amount where it stands.
struct Money {
    var total: Values.Placed?
    var subtotal: Values.Placed?
    var tax: Values.Placed?
    var tip: Values.Placed?
    /// How the total was chosen (step parameter `total.rule`): 1 a total's label alone, 2 agreed by
    /// cash − change, 3 agreed by subtotal + tax (+ rounding), 4 the largest labelled amount, 5 an
    /// amount with a currency symbol after a rounding line.
    var totalRule = 0
    /// How many distinct amounts competed for the total, and how many checks agreed with the one chosen.
    var candidates = 0
    var agreeing = 0

    static func near(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 0.005 }

    /// A row cut after each amount that words of a label follow: `TOTAL SAVING 0.00 TOTAL 77.20` and
    /// `QTY 4 ROUNDING 0.00 TOTAL 12.00` are two labelled amounts side by side, as two-column
    /// receipts print them. An item's row (`NASI LEMAK 2 7.50 15.00`) has no label between its
    /// amounts and stays whole.
    static func segments(_ row: Row) -> [(text: String, amounts: [Values.Placed])] {
        let amounts = Values.amountsIn(row)
        guard amounts.count >= 2 else { return [(row.text, amounts)] }
        var out: [(text: String, amounts: [Values.Placed])] = []
        var start = 0
        var current: [Values.Placed] = []
        func text(_ words: ArraySlice<OCRResult.Word>) -> String { words.map(\.text).joined(separator: " ").uppercased() }
        for (i, amount) in amounts.enumerated() {
            current.append(amount)
            guard i + 1 < amounts.count, let end = amount.words.last, let next = amounts[i + 1].words.first, end + 1 < next else { continue }
            if row.words[(end + 1)..<next].map(\.text).joined().filter(\.isLetter).count >= 3 {
                out.append((text(row.words[start...end]), current))
                start = end + 1
                current = []
            }
        }
        out.append((text(row.words[start...]), current))
        return out
    }

    /// Each row's kind and amounts; a label whose amount is printed on the row below takes it from there.
    static func labelled(_ rows: [Row]) -> [(kind: Labels.Kind, final: Bool, placed: Values.Placed)] {
        var out: [(Labels.Kind, Bool, Values.Placed)] = []
        for (position, row) in rows.enumerated() {
            let parts = segments(row)
            if parts.count > 1 {
                for part in parts { if let last = part.amounts.last { out.append((Labels.kind(part.text), Labels.isFinalTotal(part.text), last)) } }
                continue
            }
            let kind = Labels.kind(row.text)
            var amounts = Values.amountsIn(row)
            if amounts.isEmpty, kind != .none, position + 1 < rows.count, Labels.kind(rows[position + 1].text) == .none {
                let next = rows[position + 1]
                if next.box.y - (row.box.y + row.box.height) < 2 * max(row.box.height, 1) { amounts = Values.amountsIn(next) }
            }
            guard let last = amounts.last else { continue }
            out.append((kind, Labels.isFinalTotal(row.text), last))
        }
        return out
    }

    static func find(_ rows: [Row]) -> Money {
        var money = Money()
        let labelled = labelled(rows)
        func values(_ kind: Labels.Kind) -> [Values.Placed] { labelled.filter { $0.kind == kind }.map(\.placed) }
        let subtotals = values(.subtotal), taxes = values(.tax), roundings = values(.rounding)
        let cashes = values(.cash).filter { $0.amount.value > 0 }, changes = values(.change).filter { $0.amount.value >= 0 }
        money.subtotal = subtotals.last { $0.amount.value > 0 }
        money.tax = taxes.last { $0.amount.value >= 0 }
        money.tip = values(.tip).last

        // Every positive amount on a total's, subtotal's or unlabelled row competes. The receipt's own
        // arithmetic outweighs a label: two agreeing checks beat a bare TOTAL, whose label may sit in a
        // tax summary below, and the amount a rounding line leads to (what is paid) beats the total
        // before it, even where its label is misread (`RH 60.30` under `ROUNDING ADJ -0.01`).
        var scores: [Double: (score: Double, placed: Values.Placed, rule: Int, agreeing: Int)] = [:]
        let maxLabelled = labelled.filter { [.total, .subtotal, .cash].contains($0.kind) }.map(\.placed.amount.value).max()
        for (kind, final, placed) in labelled where placed.amount.value > 0 {
            var score: Double
            var rule = 0
            switch kind {
            case .total: score = final ? 12 : 10; rule = 1
            case .subtotal: score = 4
            case .none: score = placed.amount.symbol != nil ? 3 : 0
            // Paid by card without change: the payment is the total.
            case .cash: score = changes.isEmpty ? 3 : 1
            default: continue
            }
            var agreeing = 0
            let value = placed.amount.value
            if let cash = cashes.last, let change = changes.last, near(cash.amount.value - change.amount.value, value) {
                score += 8; agreeing += 1; rule = max(rule, 2)
            }
            if let sub = money.subtotal {
                let tax = money.tax?.amount.value ?? 0, rounding = roundings.last?.amount.value ?? 0
                if sub.row != placed.row, near(sub.amount.value + tax + rounding, value) || near(sub.amount.value + tax, value) && (tax != 0 || rounding != 0)
                    || roundings.last != nil && near(sub.amount.value + rounding, value) && rounding != 0 {
                    score += 6; agreeing += 1; rule = max(rule, 3)
                }
            }
            // After a rounding line: the amount above it plus the rounding, printed below it.
            if let rounding = roundings.last, rounding.amount.value != 0, placed.row > rounding.row,
               labelled.contains(where: { [.total, .subtotal].contains($0.kind) && $0.placed.row < rounding.row && near($0.placed.amount.value + rounding.amount.value, value) }) {
                score += 11; agreeing += 1; rule = max(rule, 5)
            }
            if let maxLabelled, near(maxLabelled, value), kind != .cash { score += 1; if rule == 0 { rule = 4 } }
            let repeats = labelled.filter { near($0.placed.amount.value, value) && $0.placed.row != placed.row && [.total, .subtotal, .cash].contains($0.kind) }.count
            score += Double(min(repeats, 2))
            if let existing = scores[value], existing.score >= score { continue }
            scores[value] = (score, placed, rule, agreeing)
        }
        money.candidates = scores.count
        if let best = scores.values.max(by: { $0.score < $1.score || $0.score == $1.score && $0.placed.row < $1.placed.row }), best.score >= 3 {
            money.total = best.placed
            money.totalRule = best.rule == 0 ? 4 : best.rule
            money.agreeing = best.agreeing
        }
        // A subtotal equal to the total is not a second finding.
        if let sub = money.subtotal, let total = money.total, sub.row == total.row { money.subtotal = nil }
        return money
    }

    /// Item lines: rows above the first subtotal/total/tax row and below the header whose last word is
    /// an amount and whose label names nothing; a row with no description of its own takes the row
    /// above's (`GF-TABLE LAMP` / `62483 1 55.90 55.90`).
    struct Item {
        var description: [Int: [Int]]  // row → word indices
        var quantity: (row: Int, word: Int, value: Double)?
        var price: Values.Placed?
        var totalPrice: Values.Placed
    }

    static func items(_ rows: [Row], after headerEnd: Int) -> [Item] {
        let end = rows.firstIndex { row in
            let kind = Labels.kind(row.text), amounts = Values.amountsIn(row).count
            return [.total, .subtotal, .tax, .rounding].contains(kind) && amounts > 0 || kind == .cash && amounts == 1
        } ?? rows.count
        guard headerEnd < end else { return [] }
        var items: [Item] = []
        var usedAsDescription: Set<Int> = []
        for index in headerEnd..<end {
            let row = rows[index]
            let amounts = Values.amountsIn(row)
            // `CARD` in an item's name is not a payment where the row has its price and total.
            let kind = Labels.kind(row.text)
            guard let last = amounts.last, last.words.last == row.words.count - 1, kind == .none || kind == .cash && amounts.count >= 2 else { continue }
            let firstAmountWord = amounts.first?.words.first ?? row.words.count
            var describing = Array(0..<firstAmountWord)
            var quantity: (row: Int, word: Int, value: Double)?
            // The number right before the prices is the quantity (`2`, `2X`, `X2`, `1.000`).
            if let q = describing.last, let value = Self.quantity(row.words[q].text) {
                quantity = (index, q, value); describing.removeLast()
            } else if describing.count >= 2, let q = describing.first, let value = Self.quantity(row.words[q].text) {
                // Or the number before the name, as counter receipts print it (`2 Latte $9.00`).
                quantity = (index, q, value); describing.removeFirst()
            }
            var description: [Int: [Int]] = [:]
            let letters = describing.map { row.words[$0].text.filter(\.isLetter).count }.reduce(0, +)
            if letters >= 3 { description[index] = describing }
            if letters < 3, index > headerEnd, !usedAsDescription.contains(index - 1), Values.amountsIn(rows[index - 1]).isEmpty,
               Labels.kind(rows[index - 1].text) == .none, rows[index - 1].text.filter(\.isLetter).count >= 3 {
                description[index - 1] = Array(rows[index - 1].words.indices)
                usedAsDescription.insert(index - 1)
            }
            guard !description.isEmpty else { continue }
            let price = amounts.count >= 2 ? amounts[amounts.count - 2] : nil
            items.append(Item(description: description, quantity: quantity, price: price, totalPrice: last))
        }
        return items
    }

    static func quantity(_ word: String) -> Double? {
        var text = Substring(word.uppercased())
        if text.hasPrefix("X") { text = text.dropFirst() }
        if text.hasSuffix("X") || text.hasSuffix("@") { text = text.dropLast() }
        guard !text.isEmpty, text.count <= 6, text.allSatisfy({ $0.isNumber || $0 == "." }), let value = Double(text), value > 0, value < 1000 else { return nil }
        return value
    }
}
