import QuireWire
import Testing
@testable import QuireFields

/// A page of lines, each at its own height, its words spread left to right (10 px a character), as
/// a receipt printer lays them out.
func page(_ lines: [String], confidence: Double = 0.9) -> OCRResult.Page {
    var built: [OCRResult.Line] = []
    for (index, text) in lines.enumerated() {
        let y = 20 + index * 30
        var x = 10
        var words: [OCRResult.Word] = []
        for word in text.split(separator: " ") {
            let box = OCRResult.Box(x: x, y: y, width: word.count * 10, height: 20)
            words.append(OCRResult.Word(text: String(word), boundingBox: box, polygon: Geometry.polygon(box), confidence: confidence, languages: ["eng"],
                                        break: "space", symbols: []))
            x += word.count * 10 + 10
        }
        let box = Geometry.union(words.map(\.boundingBox))
        built.append(OCRResult.Line(text: text, boundingBox: box, polygon: Geometry.polygon(box), confidence: confidence, languages: ["eng"],
                                    baseline: nil, direction: "ltr", words: words))
    }
    let box = Geometry.union(built.map(\.boundingBox))
    let paragraph = OCRResult.Paragraph(text: lines.joined(separator: "\n"), boundingBox: box, polygon: Geometry.polygon(box), confidence: confidence,
                                        languages: ["eng"], lines: built)
    let block = OCRResult.Block(text: paragraph.text, boundingBox: box, polygon: Geometry.polygon(box), confidence: confidence, languages: ["eng"],
                                paragraphs: [paragraph])
    return OCRResult.Page(pageNumber: 1, width: 600, height: 30 * lines.count + 40, unit: "pixel", rotation: 0, mirrored: false, deskewAngle: 0,
                          transform: [1, 0, 0, 0, 1, 0], recognitionScale: 1, text: paragraph.text, confidence: confidence, languages: ["eng"],
                          blocks: [block], renderings: nil)
}

let malaysian = [
    "tan woon yann",
    "INDAH GIFT & HOME DECO",
    "27, JALAN DEDAP 13,",
    "TAMAN JOHOR JAYA,",
    "81100 JOHOR BAHRU, JOHOR.",
    "Tel:07-3507405 Fax:07-3558140",
    "RECEIPT",
    "19/10/2018 20:49:59 #01",
    "Desc/Item Qty Price Amt",
    "GF-TABLE LAMP/STITCH",
    "62483 1 55.90 55.90",
    "ST-PRIVILEGE CARD 1 4.41 4.41",
    "TOTAL: 60.31",
    "ROUNDING ADJ -0.01",
    "RM 60.30",
    "CASH 70.30",
    "CHANGE 10.00",
    "Thank You ! Please Come Again !",
]

@Suite("Receipt fields")
struct ReceiptFieldsTests {
    @Test("a Malaysian receipt: the name above the address, the rounded total agreed by cash and change")
    func malaysianReceipt() throws {
        let reading = ReceiptFields.read(page(malaysian))
        let document = try #require(reading.document)
        let fields = document.fields
        #expect(document.kind == "receipt")
        #expect(fields["MerchantName"]?.valueString == "INDAH GIFT & HOME DECO")
        #expect(fields["MerchantAddress"]?.content == "27, JALAN DEDAP 13, TAMAN JOHOR JAYA, 81100 JOHOR BAHRU, JOHOR.")
        #expect(fields["MerchantAddress"]?.valueAddress == OCRResult.Address(houseNumber: "27", road: "JALAN DEDAP 13",
                                                                            streetAddress: "27, JALAN DEDAP 13, TAMAN JOHOR JAYA", postalCode: "81100",
                                                                            city: "JOHOR BAHRU", state: "JOHOR"))
        #expect(fields["MerchantPhoneNumber"]?.valuePhoneNumber == "+6073507405")
        #expect(fields["TransactionDate"]?.valueDate == "2018-10-19")
        #expect(fields["TransactionDate"]?.content == "19/10/2018")
        #expect(fields["TransactionTime"]?.valueTime == "20:49:59")
        let total = try #require(fields["Total"]?.valueCurrency)
        #expect(total == OCRResult.Currency(amount: 60.30, currencyCode: "MYR", currencySymbol: "RM"))
        #expect(fields["Total"]?.content == "RM 60.30")
        // Where it stands: the words' box, on the 15th line.
        #expect(fields["Total"]?.boundingBox?.y == 20 + 14 * 30)
        #expect(reading.step.step == "fields")
        #expect(reading.step.applied)
        #expect((reading.step.parameters["total.agreeing"] ?? 0) >= 1)
        let items = try #require(fields["Items"]?.valueArray)
        try #require(items.count == 2)
        #expect(items[0].valueObject?["Description"]?.valueString == "GF-TABLE LAMP/STITCH")
        #expect(items[0].valueObject?["Quantity"]?.valueNumber == 1)
        #expect(items[0].valueObject?["Price"]?.valueCurrency?.amount == 55.90)
        #expect(items[0].valueObject?["TotalPrice"]?.valueCurrency?.amount == 55.90)
        #expect(items[1].valueObject?["Description"]?.valueString == "ST-PRIVILEGE CARD")
    }

    @Test("subtotal + tax = total picks the total among several labelled amounts")
    func arithmeticDecides() throws {
        let lines = ["CORNER CAFE SDN BHD", "12 JALAN SS 2/24,", "47300 PETALING JAYA", "DATE: 23 Mar 2018 2:32 PM",
                     "NASI LEMAK 2 7.50 15.00", "SUBTOTAL 15.00", "GST 6% 0.90", "TOTAL 15.90", "TOTAL QTY 2.00", "VISA 15.90"]
        let fields = try #require(ReceiptFields.read(page(lines)).document?.fields)
        #expect(fields["Total"]?.valueCurrency?.amount == 15.90)
        #expect(fields["Subtotal"]?.valueCurrency?.amount == 15.00)
        #expect(fields["TotalTax"]?.valueCurrency?.amount == 0.90)
        #expect(fields["TransactionDate"]?.valueDate == "2018-03-23")
        #expect(fields["TransactionTime"]?.valueTime == "14:32:00")
        #expect(fields["MerchantName"]?.content == "CORNER CAFE SDN BHD")
    }

    @Test("the rounded total is what is paid: below the rounding line, agreed by cash − change")
    func roundedTotal() throws {
        // sroie_002's bottom lines as Quire reads them.
        let lines = ["MR D.I.Y. (JOHOR) SDN BHD", "LOT 1851-A & 1851-B, JALAN KPB 6,", "43300 SERI KEMBANGAN, SELANGOR", "12-01-19 18:10",
                     "TOTAL RM 33.92", "ROUNDING ADJUSTME} -RM 0.02", "TOTAL ROUNDED RM 33.90", "CASH RM 50.00", "CHANGE RM 16.10"]
        let fields = try #require(ReceiptFields.read(page(lines)).document?.fields)
        #expect(fields["Total"]?.valueCurrency?.amount == 33.90)
        #expect(fields["Total"]?.content == "RM 33.90")
        // The rounding read as the negative amount it prints, so the arithmetic agrees twice.
        let step = ReceiptFields.read(page(lines)).step
        #expect(step.parameters["total.agreeing"] == 2)
    }

    @Test("two labelled amounts on one row are two; an item's row stays whole")
    func twoColumnRows() throws {
        // sroie_060's bottom as Quire reads it: the total shares its row with the savings.
        let lines = ["SEMBILAN MART SDN BHD", "NO 8, JALAN PERMAS 10/7,", "81750 MASAI, JOHOR", "03/04/2018 20:29:59",
                     "NASI LEMAK 2 7.50 15.00", "Qty 4 Rounding 0.00", "Total Saving 0.00 Total 77.20", "Cash 100.00", "Change 22.80"]
        let fields = try #require(ReceiptFields.read(page(lines)).document?.fields)
        #expect(fields["Total"]?.valueCurrency?.amount == 77.20)
        #expect(fields["Total"]?.content == "77.20")
        let items = try #require(fields["Items"]?.valueArray)
        #expect(items.count == 1 && items[0].valueObject?["TotalPrice"]?.valueCurrency?.amount == 15.00)
        // A note in brackets of the tax the total includes is not the total.
        let noted = lines.dropLast(3) + ["Pay 25.15", "Change 0.00", "(Total Included GST @ 4% 1.43)"]
        let paid = try #require(ReceiptFields.read(page(Array(noted))).document?.fields)
        #expect(paid["Total"]?.valueCurrency?.amount == 25.15)
        #expect(paid["TotalTax"]?.valueCurrency?.amount == 1.43)
        // Cents split off after the point, an O among them.
        let split = try #require(ReceiptFields.read(page(["KEDAI MAKAN SDN BHD", "12, JALAN SS 2/24,", "47300 PETALING JAYA", "SUBTOTAL RM53. 6O", "CASH RM100.00",
                                                          "CHANGE RM46.40"])).document?.fields)
        #expect(split["Total"]?.valueCurrency?.amount == 53.60)
        // `Net Amt` is a total's label.
        let net = try #require(ReceiptFields.read(page(["KEDAI BUKU SDN BHD", "12, JALAN SS 2/24,", "47300 PETALING JAYA", "Net Amt : 53.55"])).document?.fields)
        #expect(net["Total"]?.valueCurrency?.amount == 53.55)
    }

    @Test("a name with its company number after it is the name alone")
    func companyNumberAfterTheName() throws {
        for (line, name) in [("99 SPEED MART S/B (519537-X)", "99 SPEED MART S/B"), ("KING'S CONFECTIONERY S/B273500-U (KSB)", "KING'S CONFECTIONERY"),
                             ("AEON CO. (M) BHD (126926-H)", "AEON CO. (M) BHD")] {
            let lines = ["CASH SALE", line, "LOT P.T. 2811, JALAN ANGSA,", "TAMAN BERKELEY, 41150 KLANG, SELANGOR", "25/03/2018 19:12", "TOTAL 12.00"]
            let fields = try #require(ReceiptFields.read(page(lines)).document?.fields)
            #expect(fields["MerchantName"]?.valueString == name)
        }
    }

    @Test("a US receipt: month first, dollars, a tip")
    func usReceipt() throws {
        let lines = ["JOE'S DINER", "100 MAIN STREET", "SPRINGFIELD, IL 62701", "03/04/2019 7:15 PM", "BURGER 1 9.00 9.00",
                     "2 ICED TEA $4.00", "SUBTOTAL $9.00", "TAX $0.72", "TIP $2.00", "TOTAL $11.72"]
        let fields = try #require(ReceiptFields.read(page(lines)).document?.fields)
        #expect(fields["TransactionDate"]?.valueDate == "2019-03-04")
        #expect(fields["Total"]?.valueCurrency == OCRResult.Currency(amount: 11.72, currencyCode: "USD", currencySymbol: "$"))
        #expect(fields["Tip"]?.valueCurrency?.amount == 2.00)
        // A quantity before the name, as counter receipts print it.
        let items = try #require(fields["Items"]?.valueArray)
        try #require(items.count == 2)
        #expect(items[1].valueObject?["Description"]?.valueString == "ICED TEA")
        #expect(items[1].valueObject?["Quantity"]?.valueNumber == 2)
        #expect(items[1].valueObject?["TotalPrice"]?.valueCurrency?.amount == 4.00)
        // The ZIP after the state, as US addresses print it.
        #expect(fields["MerchantAddress"]?.valueAddress == OCRResult.Address(houseNumber: "100", road: "MAIN STREET", streetAddress: "100 MAIN STREET",
                                                                            postalCode: "62701", city: "SPRINGFIELD", state: "IL", countryRegion: "USA"))
        // The locale overrides the page's clues.
        let british = try #require(ReceiptFields.read(page(lines), locale: "en-GB").document?.fields)
        #expect(british["TransactionDate"]?.valueDate == "2019-04-03")
    }

    @Test("nothing a receipt has: no document, the step not applied")
    func notAReceipt() {
        let reading = ReceiptFields.read(page(["Lorem ipsum dolor sit amet", "consectetur adipiscing elit"]))
        #expect(reading.document?.fields["Total"] == nil)
        #expect(reading.document?.fields["TransactionDate"] == nil)
        let empty = ReceiptFields.read(page([]))
        #expect(empty.document == nil)
        #expect(!empty.step.applied)
    }

    @Test("dates as printed", arguments: [
        ("19/10/2018", "2018-10-19"), ("12-01-19", "2019-01-12"), ("2018-03-23", "2018-03-23"), ("23 Mar 2018", "2018-03-23"),
        ("MAR 23, 2018", "2018-03-23"), ("23.03.18", "2018-03-23"), ("1O/O3/2018", "2018-03-10"), ("DATE:25032018", "2018-03-25"),
        ("Dater11/03/18", "2018-03-11"), ("28 MAR 18", "2018-03-28"), ("9/3/2018", "2018-03-09"), ("[Sales]2018-01-05 22:55:25", "2018-01-05"),
    ])
    func dates(printed: String, iso: String) throws {
        let fields = try #require(ReceiptFields.read(page(["SHOP ENTERPRISE", "Date \(printed)", "TOTAL 5.00"])).document?.fields)
        #expect(fields["TransactionDate"]?.valueDate == iso)
    }

    @Test("a part above 12 elsewhere on the page settles the order of an ambiguous date")
    func otherDateDecides() throws {
        let fields = try #require(ReceiptFields.read(page(["SHOP", "DATE 04/05/2019 10:00", "TOTAL 5.00", "VALID UNTIL 12/25/2019"]),
                                                     locale: nil).document?.fields)
        #expect(fields["TransactionDate"]?.valueDate == "2019-04-05")
    }

    @Test("not dates, not amounts", arguments: ["1.50.00", "13/13/2018", "31/02/2018", "QTY 1/2", "12345"])
    func notDates(text: String) {
        #expect(Values.date(text, labelled: false) == nil)
    }

    @Test("amounts", arguments: [("60.30", 60.30), ("RM60.30", 60.30), ("-0.01", -0.01), ("(0.01)", -0.01), ("1,234.50", 1234.50),
                                 ("10.00SR", 10.00), ("6O.30", 60.30), ("~—-31.00", 31.00), ("92.80.", 92.80)])
    func amounts(text: String, value: Double) {
        #expect(Values.amount(text)?.value == value)
    }

    @Test("not amounts", arguments: ["6O.3O", "12345", "2018", "ABC.DE", "1.5", "12,34,5.00", "19/10/2018"])
    func notAmounts(text: String) {
        #expect(Values.amount(text) == nil)
    }

    @Test("times", arguments: [("14:32", "14:32:00"), ("14:32:05", "14:32:05"), ("2:32 PM", "14:32:00"), ("12:05AM", "00:05:00")])
    func times(text: String, iso: String) throws {
        let time = try #require(Values.time(text))
        #expect(Dates.two(time.hour) + ":" + Dates.two(time.minute) + ":" + Dates.two(time.second) == iso)
    }

    @Test("junk never crashes and never makes a total", arguments: ["", "::::", "-", "$", "RM", "(", "..", "9999999999.99", "--1.00-", "\u{0}"])
    func junk(text: String) {
        let reading = ReceiptFields.read(page(["TOTAL " + text, text]))
        #expect(reading.document?.fields["Total"] == nil)
    }
}
