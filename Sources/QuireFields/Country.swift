import QuireWire

/// Where a receipt was printed, as far as it says: its currency, how its dates are ordered and its
/// phone numbers' country code. Malaysia's signs (`RM`, `SDN BHD`, its states, `GST ID`) are what the
/// development set shows; a locale's region counts first; outside the US dates are day first.
struct Country: Sendable, Equatable {
    var region: String?
    var dayFirst: Bool
    var currency: String?
    var symbol: String?
    var callingCode: String?

    static func of(_ rows: [Row], locale: String?) -> Country {
        let region = locale.flatMap { tag -> String? in
            let parts = tag.split(whereSeparator: { $0 == "-" || $0 == "_" })
            return parts.dropFirst().first { $0.count == 2 }.map { $0.uppercased() }
        }
        if let region { return known(region) }
        var malaysia = 0, states = 0
        var dollars = 0
        for row in rows {
            let words = Labels.words(row.text)
            if words.contains("RM") || words.contains("MYR") || row.text.contains("RM") && Values.amountsIn(row).contains(where: { $0.amount.symbol == "RM" }) { malaysia += 1 }
            if words.contains("SDN") || words.contains("BHD") || row.text.contains("S/B") || words.contains("MALAYSIA") || row.text.contains("+60") { malaysia += 1 }
            if words.contains(where: { Header.states.contains(String($0)) }) { malaysia += 1 }
            if row.text.contains("$") { dollars += 1 }
            // A US address ends with a state's two letters and a five-digit ZIP code.
            let tokens = row.text.split(separator: " ")
            if tokens.count >= 2, tokens.last?.count == 5, tokens.last?.allSatisfy(\.isNumber) == true,
               let state = tokens.dropLast().last?.filter(\.isLetter), state.count == 2, usStates.contains(state) { states += 1 }
        }
        if malaysia > 0 { return known("MY") }
        if states > 0 { return known("US") }
        _ = dollars
        return Country(region: nil, dayFirst: true, currency: nil, symbol: nil, callingCode: nil)
    }

    static let usStates: Set<String> = [
        "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS",
        "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV",
        "WI", "WY", "DC",
    ]

    static func known(_ region: String) -> Country {
        switch region {
        case "MY": Country(region: "MY", dayFirst: true, currency: "MYR", symbol: "RM", callingCode: "60")
        case "US": Country(region: "US", dayFirst: false, currency: "USD", symbol: "$", callingCode: "1")
        case "SG": Country(region: "SG", dayFirst: true, currency: "SGD", symbol: "$", callingCode: "65")
        case "GB": Country(region: "GB", dayFirst: true, currency: "GBP", symbol: "£", callingCode: "44")
        case "CA": Country(region: "CA", dayFirst: false, currency: "CAD", symbol: "$", callingCode: "1")
        case "DE", "FR", "IT", "ES", "NL", "AT", "BE", "PT", "IE", "FI":
            Country(region: region, dayFirst: true, currency: "EUR", symbol: "€", callingCode: nil)
        default: Country(region: region, dayFirst: true, currency: nil, symbol: nil, callingCode: nil)
        }
    }

    /// ISO 4217 for a printed symbol where the symbol alone says it.
    static func code(symbol: String?) -> String? {
        switch symbol {
        case "RM", "MYR": "MYR"
        case "€", "EUR": "EUR"
        case "£", "GBP": "GBP"
        case "S$", "SGD": "SGD"
        case "US$", "USD": "USD"
        default: nil
        }
    }

    /// E.164 where the country is known (`07-3507405` in Malaysia → `+6073507405`), else the digits.
    func e164(_ digits: String) -> String {
        guard let callingCode else { return digits }
        if digits.hasPrefix(callingCode) && digits.count > 9 { return "+" + digits }
        if digits.hasPrefix("0") { return "+" + callingCode + digits.dropFirst() }
        return callingCode == "1" && digits.count == 10 ? "+1" + digits : digits
    }

    /// The address split as its lines allow: the postcode and what follows it (city, state), the
    /// lines before as the street address.
    static func address(_ lines: [String]) -> OCRResult.Address {
        var address = OCRResult.Address()
        let joined = lines.joined(separator: " ")
        if let (index, city, state, zip) = lines.enumerated().lazy.compactMap({ i, line in usCityLine(line).map { (i, $0.0, $0.1, $0.2) } }).first,
           index > 0 {
            // A US address: the street, then "City, ST 97204" (the ZIP after the state).
            address.city = city
            address.state = state
            address.postalCode = zip
            address.countryRegion = "USA"
            address.streetAddress = lines[..<index].joined(separator: " ").trimmingCharacters(in: " ,")
        } else {
            let tokens = joined.split(separator: " ")
            if let index = tokens.firstIndex(where: { $0.count == 5 && $0.allSatisfy(\.isNumber) }) {
                // Malaysia's order: the street, then "81100 JOHOR BAHRU, JOHOR" (the postcode before the city).
                address.postalCode = String(tokens[index])
                let after = tokens[(index + 1)...].joined(separator: " ").split(separator: ",").map { $0.trimmingCharacters(in: " .") }.filter { !$0.isEmpty }
                address.city = after.first
                if after.count > 1 { address.state = after[1] }
                address.streetAddress = tokens[..<index].joined(separator: " ").trimmingCharacters(in: " ,")
            } else {
                address.streetAddress = joined
            }
            if joined.uppercased().contains("MALAYSIA") { address.countryRegion = "MYS" }
        }
        // "412 Harbor Street", "27, JALAN DEDAP 13, TAMAN …": a leading number is the house's, the
        // rest of that segment its road.
        if let street = address.streetAddress, let first = street.split(separator: ",").first {
            let words = first.split(separator: " ")
            if let number = words.first, number.first?.isNumber == true, number.count <= 6, words.count > 1 || street.contains(",") {
                address.houseNumber = String(number)
                let road = (words.count > 1 ? words.dropFirst().joined(separator: " ")
                            : street.split(separator: ",").dropFirst().first.map { $0.trimmingCharacters(in: " ") } ?? "")
                if !road.isEmpty { address.road = road }
            }
        }
        return address
    }

    /// "Portland, OR 97204" (or "97204-1234"): the city, the state's two letters and the ZIP.
    static func usCityLine(_ line: String) -> (String, String, String)? {
        let parts = line.split(separator: ",", maxSplits: 1).map { $0.trimmingCharacters(in: " .") }
        guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isLetter || $0 == " " || $0 == "." }) else { return nil }
        let rest = parts[1].split(separator: " ")
        guard rest.count == 2, rest[0].count == 2, rest[0].allSatisfy({ $0.isUppercase && $0.isASCII }) else { return nil }
        let zip = rest[1]
        let digits = zip.split(separator: "-")
        guard digits.first?.count == 5, digits.allSatisfy({ $0.allSatisfy(\.isNumber) }), digits.count <= 2 else { return nil }
        return (parts[0], String(rest[0]), String(zip))
    }
}

extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
