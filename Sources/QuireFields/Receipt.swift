import QuireWire

/// A receipt's fields from a read page, as Azure Document Intelligence's `prebuilt-receipt` names
/// them: `MerchantName`, `MerchantAddress`, `MerchantPhoneNumber`, `TransactionDate`,
/// `TransactionTime`, `Items`, `Subtotal`, `TotalTax`, `Tip`, `Total`. Pure: the page's lines, words
/// and boxes in, a document and the `fields` step that says how each was found out. A field the page
/// does not show is absent, never guessed.
public enum ReceiptFields {
    /// The document found on the page (nil: nothing a receipt has), and the step explaining it.
    public struct Reading: Sendable, Equatable {
        public var document: OCRResult.Document?
        public var step: OCRResult.Step
    }

    /// What a page holds of a receipt before its fields are written out: its rows, the country its
    /// text points to, its dates and its money. One analysis serves the second look at the words
    /// (``ReceiptRereading/spans(_:)``), the checks around it and the fields, for as long as the page
    /// is not changed.
    public struct Analysis {
        let rows: [Row]
        let country: Country
        let dates: Dates.Result
        let money: Money

        /// `locale` (`en-US`, `ms-MY`), where the request names one, decides the order of ambiguous
        /// dates before the page's own clues do.
        public init(_ page: OCRResult.Page, locale: String? = nil) {
            rows = Row.rows(of: page)
            country = Country.of(rows, locale: locale)
            dates = Dates.find(rows, country: country)
            money = Money.find(rows)
        }

        /// Whether a total was found that a printed check agrees with (cash − change, subtotal + tax,
        /// the rounded total).
        public var totalAgreed: Bool { money.total != nil && money.agreeing > 0 }
        /// Whether a transaction date was found.
        public var hasDate: Bool { dates.date != nil }
    }

    /// Reads a receipt's fields from `page`. `locale` (`en-US`, `ms-MY`), where the request names
    /// one, decides the order of ambiguous dates before the page's own clues do.
    public static func read(_ page: OCRResult.Page, locale: String? = nil) -> Reading {
        read(Analysis(page, locale: locale))
    }

    /// A receipt's fields from a page's analysis.
    public static func read(_ analysis: Analysis) -> Reading {
        let rows = analysis.rows, country = analysis.country
        var parameters: [String: Double] = ["rows": Double(rows.count)]
        parameters["dayFirst"] = country.dayFirst ? 1 : 0
        var fields: [String: OCRResult.Field] = [:]

        let header = Header.find(rows)
        if !header.name.isEmpty {
            var field = field(.string, rows: header.name)
            field.valueString = field.content
            fields["MerchantName"] = field
            parameters["merchant.rule"] = Double(header.nameRule)
            parameters["merchant.row"] = Double(header.name[0].index)
        }
        if !header.address.isEmpty {
            var field = field(.address, rows: header.address)
            field.content = header.address.map { $0.words.map(\.text).joined(separator: " ") }.joined(separator: " ")
            field.valueAddress = Country.address(header.address.map { $0.words.map(\.text).joined(separator: " ") })
            fields["MerchantAddress"] = field
            parameters["address.rows"] = Double(header.address.count)
        }
        if let phone = header.phone {
            var field = field(.phoneNumber, rows: phone.rows)
            field.content = phone.content
            field.valuePhoneNumber = country.e164(phone.digits)
            fields["MerchantPhoneNumber"] = field
        }

        let dates = analysis.dates
        parameters["date.candidates"] = Double(dates.candidates)
        if let date = dates.date {
            var field = field(.date, row: rows[date.row], words: date.words)
            field.valueDate = date.iso
            field.confidence *= date.decided ? 1 : 0.8
            fields["TransactionDate"] = field
            parameters["date.row"] = Double(date.row)
            parameters["date.labelled"] = date.labelled ? 1 : 0
        }
        if let time = dates.time {
            var field = field(.time, row: rows[time.row], words: time.words)
            field.valueTime = time.iso
            fields["TransactionTime"] = field
        }

        let money = analysis.money
        parameters["total.candidates"] = Double(money.candidates)
        func currency(_ placed: Values.Placed, agreement: Double) -> OCRResult.Field {
            var field = field(.currency, row: rows[placed.row], words: placed.words)
            let symbol = placed.amount.symbol ?? country.symbol
            field.valueCurrency = OCRResult.Currency(amount: placed.amount.value, currencyCode: Country.code(symbol: placed.amount.symbol) ?? country.currency,
                                                     currencySymbol: symbol)
            field.confidence *= agreement
            return field
        }
        if let total = money.total {
            fields["Total"] = currency(total, agreement: money.agreeing > 0 ? 1 : money.totalRule == 1 ? 0.85 : 0.6)
            parameters["total.rule"] = Double(money.totalRule)
            parameters["total.agreeing"] = Double(money.agreeing)
        }
        if let subtotal = money.subtotal { fields["Subtotal"] = currency(subtotal, agreement: money.totalRule == 3 ? 1 : 0.8) }
        if let tax = money.tax { fields["TotalTax"] = currency(tax, agreement: money.totalRule == 3 ? 1 : 0.8) }
        if let tip = money.tip { fields["Tip"] = currency(tip, agreement: 0.8) }

        let headerEnd = max(dates.date.map { $0.row + 1 } ?? 0, (header.address.last?.index ?? -1) + 1, (header.name.last?.index ?? -1) + 1)
        let items = Money.items(rows, after: headerEnd)
        parameters["items"] = Double(items.count)
        if !items.isEmpty {
            var array: [OCRResult.Field] = []
            for item in items {
                var members: [String: OCRResult.Field] = [:]
                let describing = item.description.sorted { $0.key < $1.key }
                var description = OCRResult.Field(type: .string, confidence: 0)
                let words = describing.flatMap { row, indices in indices.map { rows[row].words[$0] } }
                description = field(.string, words: words)
                description.valueString = description.content
                members["Description"] = description
                if let q = item.quantity {
                    var quantity = field(.number, row: rows[q.row], words: [q.word])
                    quantity.valueNumber = q.value
                    members["Quantity"] = quantity
                }
                let agree = item.price.map { price in Money.near(price.amount.value * (item.quantity?.value ?? 1), item.totalPrice.amount.value) } ?? false
                if let price = item.price { members["Price"] = currency(price, agreement: agree ? 1 : 0.7) }
                members["TotalPrice"] = currency(item.totalPrice, agreement: agree ? 1 : 0.8)
                var object = OCRResult.Field(type: .object, confidence: members.values.map(\.confidence).reduce(0, +) / Double(members.count))
                let boxes = describing.map { rows[$0.key].box } + [rows[item.totalPrice.row].box]
                object.boundingBox = Geometry.union(boxes)
                object.polygon = object.boundingBox.map(Geometry.polygon)
                object.content = describing.map { row, _ in rows[row].words.map(\.text).joined(separator: " ") }.joined(separator: "\n")
                    + (describing.contains { $0.key == item.totalPrice.row } ? "" : "\n" + rows[item.totalPrice.row].words.map(\.text).joined(separator: " "))
                object.valueObject = members
                array.append(object)
            }
            var field = OCRResult.Field(type: .array, confidence: array.map(\.confidence).reduce(0, +) / Double(array.count))
            field.valueArray = array
            fields["Items"] = field
        }

        parameters["fields"] = Double(fields.count)
        guard !fields.isEmpty else { return Reading(document: nil, step: OCRResult.Step(step: "fields", applied: false, parameters: parameters)) }
        let boxes = fields.values.compactMap(\.boundingBox) + (fields["Items"]?.valueArray?.compactMap(\.boundingBox) ?? [])
        let box = Geometry.union(boxes)
        let confidence = fields.values.map(\.confidence).reduce(0, +) / Double(fields.count)
        let document = OCRResult.Document(kind: "receipt", boundingBox: box, polygon: Geometry.polygon(box), confidence: Self.round(confidence),
                                          fields: fields)
        return Reading(document: document, step: OCRResult.Step(step: "fields", applied: true, parameters: parameters))
    }

    /// A date as printed (`19/10/2018`, `25 MAR 2018`, `25032018`) in ISO 8601, day first where the
    /// order is not printed; nil where it is not a date. What a benchmark compares its keys with.
    public static func isoDate(_ printed: String, dayFirst: Bool = true) -> String? {
        guard let p = Values.date(printed, labelled: true) else { return nil }
        let (day, month) = (p.dayFirst ?? dayFirst) ? (p.first, p.second) : (p.second, p.first)
        return "\(p.year)-" + Dates.two(month) + "-" + Dates.two(day)
    }

    static func round(_ value: Double) -> Double { (value * 1_000).rounded() / 1_000 }

    static func field(_ type: OCRResult.FieldType, words: [OCRResult.Word]) -> OCRResult.Field {
        let box = Geometry.union(words.map(\.boundingBox))
        return OCRResult.Field(type: type, content: words.map(\.text).joined(separator: " "), confidence: round(Row.confidence(words)),
                               boundingBox: box, polygon: Geometry.polygon(box))
    }

    static func field(_ type: OCRResult.FieldType, row: Row, words: [Int]) -> OCRResult.Field {
        field(type, words: words.filter { row.words.indices.contains($0) }.map { row.words[$0] })
    }

    static func field(_ type: OCRResult.FieldType, rows: [Row]) -> OCRResult.Field {
        var field = field(type, words: rows.flatMap(\.words))
        field.content = rows.map { $0.words.map(\.text).joined(separator: " ") }.joined(separator: " ")
        return field
    }
}
