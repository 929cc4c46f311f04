import QuireSupport
/// The words receipts print beside their values, matched on a row's upper-cased words with one
/// letter's slack for words of five letters or more (`TOTA1`, `T0TAL`: small print misread).
enum Labels {
    /// What a row with an amount says that amount is.
    enum Kind: Int, Sendable, Equatable {
        case none = 0, total, subtotal, tax, rounding, cash, change, tip, discount, count
    }

    /// The row's words as letters only (`TOTAL:` → `TOTAL`, `(RM)` → `RM`), empty words dropped.
    static func words(_ text: String) -> [Substring] {
        text.split(whereSeparator: { !$0.isLetter && $0 != "/" && $0 != "&" && $0 != "@" }).map { word in
            Substring(word.filter { $0.isLetter })
        }.filter { !$0.isEmpty }
    }

    static func matches(_ word: Substring, _ label: String) -> Bool {
        if word == label { return true }
        guard label.count >= 5, abs(word.count - label.count) <= 1 else { return false }
        // One edit apart, two words of four letters or more share their first letter or their last.
        guard word.first == label.first || word.last == label.last else { return false }
        return editDistance(Array(word), Array(label)) <= 1
    }

    static func has(_ words: [Substring], _ label: String) -> Bool { words.contains { matches($0, label) } }

    /// Whether the words hold `phrase`'s words in a row (`SUB TOTAL`, `AMOUNT DUE`).
    static func has(_ words: [Substring], phrase: [String]) -> Bool {
        guard phrase.count <= words.count else { return false }
        for start in 0...(words.count - phrase.count) where zip(words[start...], phrase).allSatisfy({ matches($0, $1) }) { return true }
        return false
    }

    /// What kind of amount a row's label names; `.none` where it names none.
    static func kind(_ text: String) -> Kind {
        let w = words(text)
        if w.isEmpty { return .none }
        let joined = w.joined(separator: " ")
        let total = has(w, "TOTAL") || w.contains { $0 == "TOT" || $0 == "TTL" || $0.count > 5 && ($0.hasPrefix("TOTAL") || $0.hasSuffix("TOTAL")) }
        if has(w, "SUBTOTAL") || has(w, phrase: ["SUB", "TOTAL"]) || joined.contains("SUB TOT") || joined.contains("EXCL")
            || has(w, "EXCLUDING") || has(w, phrase: ["NET", "SALES"]) { return .subtotal }
        // `TOTAL ROUNDED`, `ROUNDED TOTAL`: the total after rounding, what is paid; `ROUNDING ADJ.`: the adjustment.
        let roundedTotal = total && has(w, "ROUNDED")
        if !roundedTotal, has(w, "ROUNDING") || has(w, "ROUNDED") || w.contains("ROUND") || w.contains("RND") || w.contains("ADJ") && !total { return .rounding }
        if has(w, "CHANGE") || w.contains("CHG") { return .change }
        if w.contains(where: { ["QTY", "QUANTITY", "ITEM", "ITEMS", "PCS", "UNITS", "NO"].contains($0) }) && total { return .count }
        if has(w, "DISCOUNT") || w.contains("DISC") || has(w, "SAVINGS") || has(w, "VOUCHER") { return .discount }
        let inclusive = has(w, "INCLUSIVE") || w.contains("INCL") || w.contains("INC") || has(w, "INCLUDING") || has(w, "INCLUDED") || joined.contains("CLUSIVE")
        let taxWords = ["GST", "SST", "VAT", "TAX"]
        let taxWord = w.contains { taxWords.contains(String($0)) } || joined.contains("GST")
        // `TOTAL GST`, `GST 6%`: the tax; `TOTAL … INCL GST`, `TOTAL SALES (INCLUSIVE OF GST)`: the total.
        let taxFirst = taxWords.contains(String(w[0])) || w.count > 1 && Labels.matches(w[0], "TOTAL") && taxWords.contains(String(w[1])) && !inclusive
        if taxWord && (taxFirst || !inclusive && !total) && !has(w, "INVOICE") { return .tax }
        // `(Total Included GST @ 4% 1.43)`: a note in brackets of the tax a total includes.
        let trimmed = text.trimmingCharacters(in: " ")
        if taxWord, trimmed.hasPrefix("("), trimmed.hasSuffix(")") { return .tax }
        if w.contains("TIP") || w.contains("TIPS") || has(w, "GRATUITY") { return .tip }
        if total || has(w, phrase: ["AMOUNT", "DUE"]) || has(w, "PAYABLE") || has(w, "NETT") || has(w, phrase: ["NET", "AMOUNT"]) || has(w, phrase: ["NET", "AMT"])
            || has(w, phrase: ["BALANCE", "DUE"]) || w.first == "AMOUNT" || w.first == "AMT" { return .total }
        // `GASH`: small print's C read as G.
        if w.contains(where: { ["CASH", "GASH", "TENDER", "TENDERED", "PAID", "PAY", "PAYMENT", "VISA", "MASTER", "MASTERCARD", "CARD", "CREDIT", "DEBIT", "AMEX"].contains($0) }) {
            return .cash
        }
        return .none
    }

    /// A total's label that says it is the final one (`GRAND TOTAL`, `NETT TOTAL`, `AMOUNT DUE`,
    /// `TOTAL INCL. GST`, `TOTAL (RM)`).
    static func isFinalTotal(_ text: String) -> Bool {
        let w = words(text)
        return has(w, "GRAND") || has(w, "NETT") || w.contains("NET") || w.contains("DUE") || has(w, "PAYABLE")
            || w.contains("INCL") || has(w, "INCLUSIVE") || w.contains("RM") || has(w, "ROUNDED")
    }
}
