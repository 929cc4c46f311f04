/// Fields read from a page as a kind of document says them: a receipt's merchant, date and total.
/// A request asks for them with `fields` (``OCRRequest/fields``); each page that has them carries
/// them in ``OCRResult/Page/documents``. The shape follows Azure AI Document Intelligence's typed
/// fields, so that its prebuilt models map onto it one to one: a value of its type (`valueDate`,
/// `valueCurrency`…), the text as printed (`content`), a confidence and where it stands.
extension OCRResult {
    /// One document found on a page: a receipt, with its fields by name (`MerchantName`, `Total`…).
    public struct Document: Codable, Sendable, Equatable {
        /// What kind of document: `receipt`.
        public var kind: String
        public var boundingBox: Box
        public var polygon: [Point]
        /// How sure the fields as a whole are (0…1): the mean of their confidences.
        public var confidence: Double
        /// Each field found; a field not found is absent, never guessed.
        public var fields: [String: Field]

        public init(kind: String, boundingBox: Box, polygon: [Point], confidence: Double, fields: [String: Field]) {
            self.kind = kind
            self.boundingBox = boundingBox
            self.polygon = polygon
            self.confidence = confidence
            self.fields = fields
        }
    }

    /// A field's value, as Document Intelligence types it.
    public enum FieldType: String, Codable, Sendable, Equatable {
        case string, date, time, number, integer, currency, phoneNumber, address, array, object
    }

    /// An amount of money: the amount and, where the page says it, the currency.
    public struct Currency: Codable, Sendable, Equatable {
        public var amount: Double
        /// ISO 4217 (`MYR`, `EUR`), where the symbol or the country says which.
        public var currencyCode: String?
        /// The symbol as printed (`RM`, `$`, `€`).
        public var currencySymbol: String?

        public init(amount: Double, currencyCode: String? = nil, currencySymbol: String? = nil) {
            self.amount = amount
            self.currencyCode = currencyCode
            self.currencySymbol = currencySymbol
        }
    }

    /// An address, split as far as its text allows; `streetAddress` is its first line or lines.
    public struct Address: Codable, Sendable, Equatable {
        public var houseNumber: String?
        public var road: String?
        public var streetAddress: String?
        public var postalCode: String?
        public var city: String?
        public var state: String?
        public var countryRegion: String?

        public init(houseNumber: String? = nil, road: String? = nil, streetAddress: String? = nil, postalCode: String? = nil,
                    city: String? = nil, state: String? = nil, countryRegion: String? = nil) {
            self.houseNumber = houseNumber
            self.road = road
            self.streetAddress = streetAddress
            self.postalCode = postalCode
            self.city = city
            self.state = state
            self.countryRegion = countryRegion
        }
    }

    /// One field: exactly one `value…` member, the one its `type` names (none for an array or object
    /// whose members are in `valueArray` / `valueObject`).
    public struct Field: Codable, Sendable, Equatable {
        public var type: FieldType
        /// The text the value was read from, as printed.
        public var content: String?
        /// How sure the value is (0…1).
        public var confidence: Double
        /// Where the text stands on its page (absent for an array or object that is only its members).
        public var boundingBox: Box?
        public var polygon: [Point]?
        public var valueString: String?
        /// ISO 8601 `YYYY-MM-DD`.
        public var valueDate: String?
        /// ISO 8601 `hh:mm:ss`.
        public var valueTime: String?
        public var valueNumber: Double?
        public var valueInteger: Int?
        public var valueCurrency: Currency?
        /// E.164 where the country is known (`+60 3-2141 0000` → `+60321410000`), else the digits as printed.
        public var valuePhoneNumber: String?
        public var valueAddress: Address?
        public var valueArray: [Field]?
        public var valueObject: [String: Field]?

        public init(type: FieldType, content: String? = nil, confidence: Double, boundingBox: Box? = nil, polygon: [Point]? = nil) {
            self.type = type
            self.content = content
            self.confidence = confidence
            self.boundingBox = boundingBox
            self.polygon = polygon
        }
    }
}
