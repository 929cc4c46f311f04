/// The top of a receipt: who sold, where, and their phone. The name is the line right above the
/// address (a logo's text, a slogan or the cashier's scribble may stand higher), else the first line
/// that reads as a name; registration numbers, document titles, phone lines and dates are never it.
enum Header {
    /// What a line at the top of a receipt is.
    enum Kind: Equatable { case name, address, phone, registration, title, date, noise }

    static let streetWords: Set<String> = [
        "JALAN", "JLN", "JL", "LORONG", "LRG", "TAMAN", "TMN", "LOT", "NO", "BLOK", "BLOCK", "BANDAR", "KAMPUNG", "KG", "BATU",
        "PERSIARAN", "LEBUH", "LEBUHRAYA", "SEKSYEN", "SECTION", "SS", "STREET", "ST", "ROAD", "RD", "AVENUE", "AVE", "BLVD", "SUITE",
        "FLOOR", "LEVEL", "TINGKAT", "INDUSTRI", "PERINDUSTRIAN", "KAWASAN", "PUSAT", "PANGSAPURI", "MUKIM", "KM", "OFF", "PT",
        "GROUND", "UNIT", "WISMA", "MENARA", "KOMPLEKS",
    ]
    /// Place words that are also in shops' names (`INDAH GIFT`, `SRI BINTANG`): an address's only
    /// where the line has a number or a comma too.
    static let placeWords: Set<String> = ["JAYA", "UTAMA", "BARU", "INDAH", "PERDANA", "SERI", "SRI", "DESA", "BUKIT", "SEKSYEN", "PUSAT", "KAWASAN"]
    static let states: Set<String> = [
        "JOHOR", "SELANGOR", "KUALA", "LUMPUR", "PENANG", "PINANG", "PERAK", "KEDAH", "KELANTAN", "TERENGGANU", "PAHANG", "MELAKA",
        "MALACCA", "NEGERI", "SEMBILAN", "SABAH", "SARAWAK", "PERLIS", "PUTRAJAYA", "LABUAN", "MALAYSIA", "SINGAPORE", "BAHRU",
        "KL", "DARUL", "EHSAN", "TAKZIM", "SHAH", "ALAM", "PETALING", "KLANG", "SUBANG", "PUCHONG", "CHERAS", "KAJANG", "AMPANG",
        "SKUDAI", "SEREMBAN", "IPOH", "RAWANG", "SEMENYIH", "BANGI", "SETIA", "DAMANSARA", "KEPONG", "BALAKONG", "KEMBANGAN",
    ]
    static let companyWords: Set<String> = [
        "SDN", "BHD", "BERHAD", "ENTERPRISE", "ENTERPRISES", "TRADING", "PLT", "RESTORAN", "RESTAURANT", "KEDAI", "SYARIKAT",
        "PERNIAGAAN", "STORE", "STORES", "MART", "HARDWARE", "STATIONERY", "BAKERY", "CAFE", "LTD", "LIMITED", "INC", "LLC", "CO",
        "CORPORATION", "MARKET", "SUPERMARKET", "PHARMACY", "BOOKSTORE", "MINIMARKET", "HOLDINGS", "INDUSTRIES", "SERVICES",
    ]

    static func kind(_ row: Row) -> Kind {
        let text = row.text
        let words = Labels.words(text)
        let letters = text.filter(\.isLetter).count, digits = text.filter(\.isNumber).count
        if text.contains("REG") && (text.contains("CO") || text.contains("NO") || text.contains("GST") || text.contains("SST"))
            || text.contains("GST ID") || text.contains("GST NO") || text.contains("SST ID") || text.contains("ROC") && digits >= 4
            || text.contains("COMPANY NO") || text.contains("BUSINESS") && digits >= 4 || isRegistrationNumber(text) {
            return .registration
        }
        if words.contains(where: { ["TEL", "PHONE", "TELEPHONE", "FAX", "HP", "EMAIL", "WWW", "HTTP", "WEBSITE", "MOBILE"].contains($0) })
            || text.contains("@") || text.contains(".COM") || text.hasPrefix("T:") || text.hasPrefix("T.") && digits >= 6 {
            return .phone
        }
        if Labels.has(words, "INVOICE") || Labels.has(words, "RECEIPT") || words.contains("WELCOME") || Labels.has(words, "SIMPLIFIED")
            || words.contains("BILL") || words == ["CASH", "SALE"] || words.contains("THANK") || words.contains("COPY") { return .title }
        let tokens = text.split(separator: " ")
        if tokens.contains(where: { Values.date(String($0), labelled: false) != nil || Values.time(String($0)) != nil }) { return .date }
        if isAddress(text, words: words) { return .address }
        // A line with a price is an item, not a name.
        if !Values.amountsIn(row).isEmpty { return .noise }
        if letters < 3 || Double(letters) < 0.5 * Double(text.filter { !$0.isWhitespace }.count) { return .noise }
        return .name
    }

    /// The row without the company number printed after a name (`99 SPEED MART S/B (519537-X)`,
    /// `KING'S CONFECTIONERY S/B273500-U`): its words before the first bracket that five digits follow,
    /// or before a word of five digits or more with a dash. The row itself where there is none.
    static func withoutCompanyNumber(_ row: Row) -> Row {
        let texts = row.words.map(\.text)
        guard let cut = texts.indices.dropFirst().first(where: { i in
            let word = texts[i]
            // The bracketed group itself holds the digits: `(M)` in `AEON CO. (M) BHD` is the name's.
            if word.first.map({ "({[".contains($0) }) == true {
                let group = texts[i...].prefix { !$0.contains(where: { ")}]".contains($0) }) } + texts[i...].drop { !$0.contains(where: { ")}]".contains($0) }) }.prefix(1)
                if group.joined().filter(\.isNumber).count >= 5 { return true }
            }
            return word.filter(\.isNumber).count >= 5 && word.contains("-")
        }) else { return row }
        var out = row
        out.words = Array(row.words[..<cut])
        out.text = out.words.map(\.text).joined(separator: " ").uppercased()
        out.box = Geometry.union(out.words.map(\.boundingBox))
        return out
    }

    /// `(1234567-X)`, `(001234567-K)`: a Malaysian company number in brackets.
    static func isRegistrationNumber(_ text: String) -> Bool {
        guard let open = text.firstIndex(of: "(") else { return false }
        let inside = text[text.index(after: open)...].prefix { $0 != ")" }
        let digits = inside.filter(\.isNumber).count
        return digits >= 5 && inside.contains("-") && inside.filter(\.isLetter).count <= 2
    }

    static func hasPostcode(_ text: String) -> Bool {
        text.split(whereSeparator: { !$0.isNumber }).contains { $0.count == 5 }
            && !text.contains(":")
    }

    static func isAddress(_ text: String, words: [Substring]) -> Bool {
        if hasPostcode(text) { return true }
        let numbered = text.contains(where: \.isNumber) || text.contains(",")
        let street = words.filter { streetWords.contains(String($0)) || numbered && placeWords.contains(String($0)) }.count
        let state = words.filter { states.contains(String($0)) }.count
        // `27, JALAN DEDAP 13,`: a number then a comma opens an address line.
        let opensNumbered = text.first?.isNumber == true && text.prefix(8).contains(",")
        return street >= 1 && (words.count <= 6 || street >= 2 || text.contains(",")) || state >= 1 && words.count <= 4 || opensNumbered
            || text.hasSuffix(",") && text.filter(\.isNumber).count > 0
    }

    static func isCompany(_ row: Row) -> Bool {
        Labels.words(row.text).contains { companyWords.contains(String($0)) } || row.text.contains("S/B") || row.text.contains("SDN.")
    }

    struct Found {
        var name: [Row] = []
        var address: [Row] = []
        var phone: (rows: [Row], digits: String, content: String)?
        /// Which rule placed the name: 1 above the address, 2 a company's name, 3 the first name-like line.
        var nameRule = 0
    }

    /// The name, address and phone among the rows above the first amount or the first date.
    static func find(_ rows: [Row]) -> Found {
        var found = Found()
        let limit = rows.firstIndex { row in Values.amountsIn(row).contains { _ in true } && Labels.kind(row.text) != .none } ?? rows.count
        let rowsAtTop = Array(rows.prefix(min(limit, 14)))
        // A name with its company number after it is the name alone.
        let top = rowsAtTop.map { row -> Row in
            let trimmed = withoutCompanyNumber(row)
            return trimmed.words.count < row.words.count && kind(trimmed) == .name ? trimmed : row
        }
        let kinds = top.map(kind)
        // The address: the first run of address lines (a registration line may sit inside it).
        if let start = kinds.firstIndex(of: .address) {
            var end = start
            var index = start + 1
            while index < top.count, index - start < 6 {
                if kinds[index] == .address { end = index }
                else if kinds[index] == .name, index + 1 < top.count, kinds[index + 1] == .address, top[index].text.count < 30 { end = index }
                else if kinds[index] != .name || top[index].text.contains(",") == false { break }
                else { end = index }
                index += 1
            }
            found.address = Array(top[start...end]).filter { kind($0) != .registration }
            // The name: the nearest name line above the address, with the line before it when that one
            // is the first half of a two-line name (`MR D.I.Y. (JOHOR)` / `SDN BHD`).
            if let above = kinds[..<start].lastIndex(of: .name) {
                found.name = [top[above]]
                found.nameRule = 1
                let words = Labels.words(top[above].text)
                if above > 0, kinds[above - 1] == .name, words.count <= 3, words.allSatisfy({ companyWords.contains(String($0)) }) {
                    found.name.insert(top[above - 1], at: 0)
                }
                // A company's name higher up beats a branch or slogan line just above the address.
                if !isCompany(top[above]), let company = kinds[..<above].indices.last(where: { kinds[$0] == .name && isCompany(top[$0]) }) {
                    found.name = [top[company]]
                    found.nameRule = 2
                }
            }
        }
        if found.name.isEmpty {
            if let company = top.indices.first(where: { kinds[$0] == .name && isCompany(top[$0]) }) {
                found.name = [top[company]]; found.nameRule = 2
            } else if let first = top.indices.first(where: { kinds[$0] == .name && top[$0].confidence >= 0.5 }) {
                found.name = [top[first]]; found.nameRule = 3
            }
        }
        found.phone = phone(in: rows.prefix(max(limit, 1) + 2))
        return found
    }

    /// The digits after `TEL`/`PHONE` (up to `FAX`), else a phone-shaped number at the top
    /// (`03-2141 0000`, `07-3507405`).
    static func phone(in rows: ArraySlice<Row>) -> (rows: [Row], digits: String, content: String)? {
        for row in rows {
            let upper = row.text
            guard let range = ["TELEPHONE", "PHONE", "TEL", "H/P", "HP", "T:"].lazy.compactMap({ upper.range(of: $0) }).first else { continue }
            var tail = upper[range.upperBound...]
            if let fax = tail.range(of: "FAX") { tail = tail[..<fax.lowerBound] }
            let content = tail.drop { !$0.isNumber && $0 != "+" && $0 != "(" }.prefix { $0.isNumber || " -+()/".contains($0) }
            let trimmed = content.trimmingSuffix { " -/(".contains($0) }
            let digits = trimmed.filter(\.isNumber)
            if (7...13).contains(digits.count) { return ([row], String(digits), String(trimmed)) }
        }
        return nil
    }
}

extension Substring {
    func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var out = self
        while let last = out.last, predicate(last) { out = out.dropLast() }
        return out
    }
}
