import Imaging
import QuireWire
import Testing
@testable import QuireRecognition

/// The post-edits as values: each edits a page and reports its own step; a list runs them in order.
@Suite("PageEdit: each post-edit edits the page and records its step")
struct PageEditTests {
    static func page(_ rows: [[String]]) -> RecognizedPage { DecimalSeparatorsTests.page(rows) }
    static func words(_ page: RecognizedPage) -> [String] { DecimalSeparatorsTests.words(page) }

    /// A page whose words carry their confidence, so the noise filter has something to weigh.
    static func page(_ words: [(String, Double)]) -> RecognizedPage {
        var page = Self.page([words.map(\.0)])
        for index in words.indices {
            page.blocks[0].children[0].children[0].children[index].confidence = words[index].1
        }
        return page
    }

    @Test("noise: rules and specks go, words and meaningful marks stay; the count and threshold are reported")
    func noise() {
        var page = Self.page([("TOTAL", 0.9), ("|", 0.9), ("—", 0.8), (":", 0.9), ("ee", 0.3), ("ee", 0.7), ("12.50", 0.9)])
        let (applied, parameters) = NoiseWords(maxConfidence: 0.5).apply(to: &page)
        #expect(applied)
        #expect(Self.words(page) == ["TOTAL", ":", "ee", "12.50"])
        #expect(parameters == ["wordsDropped": 3, "maxConfidence": 0.5])
        var clean = Self.page([("TOTAL", 0.9)])
        #expect(NoiseWords(maxConfidence: 0.5).apply(to: &clean).applied == false)
    }

    @Test("noise: Chinese characters and full-width punctuation stay however unsure; a speck beside them goes")
    func noiseKeepsEastAsianText() {
        var page = Self.page([("臺北", 0.3), ("，", 0.4), ("市", 0.2), ("。", 0.9), ("す", 0.1), ("~", 0.3), ("한", 0.3)])
        _ = NoiseWords(maxConfidence: 0.5).apply(to: &page)
        #expect(Self.words(page) == ["臺北", "，", "市", "。", "す", "한"])
    }

    @Test("decimals: a split amount is joined and an odd separator unified, in one step")
    func decimals() {
        var page = Self.page([["Nasi", "12.50"], ["Teh", "4.20"], ["Cash", "50.00"], ["TOTAL", "33,90"]])
        let (applied, parameters) = Decimals().apply(to: &page)
        #expect(applied)
        #expect(Self.words(page).last == "33.90")
        #expect(parameters["wordsChanged"] == 1 && parameters["amountsWithDot"] == 3 && parameters["amountsWithComma"] == 1)
        #expect(parameters["amountsJoined"] == 0)
    }

    @Test("brackets: a word's mismatched pair is made round")
    func brackets() {
        var page = Self.page([["Tax($}", "5.27"]])
        let (applied, parameters) = BracketPairs().apply(to: &page)
        #expect(applied && parameters == ["wordsChanged": 1])
        #expect(Self.words(page) == ["Tax($)", "5.27"])
    }

    @Test("spaces: needs symbols, reports each rule's figures only when that rule is on")
    func spaces() {
        #expect(WordSpaces(monospace: true, caseChange: true).needsSymbols)
        var page = Self.page([["Total"]])
        let both = WordSpaces(monospace: true, caseChange: true).apply(to: &page)
        #expect(!both.applied)
        #expect(Set(both.parameters.keys) == ["wordsSplit", "monospacedLines", "minCells", "caseSplits", "minCaseGap"])
        let caseOnly = WordSpaces(monospace: false, caseChange: true).apply(to: &page)
        #expect(Set(caseOnly.parameters.keys) == ["caseSplits", "minCaseGap"])
    }

    @Test("A list runs its edits in order and returns one step each; symbol edits are skipped without symbols")
    func list() {
        let edits: [any PageEdit] = [NoiseWords(maxConfidence: 0.5), Decimals(), BracketPairs(), WordSpaces(monospace: true, caseChange: true)]
        var page = Self.page([["|", "Tax($}", "5.27"]])
        let steps = edits.apply(to: &page, symbols: true)
        #expect(steps.map(\.step) == ["noise", "decimals", "brackets", "spaces"])
        #expect(steps.map(\.applied) == [true, false, true, false])
        #expect(Self.words(page) == ["Tax($)", "5.27"])
        var withoutSymbols = Self.page([["Tax($}"]])
        #expect(edits.apply(to: &withoutSymbols, symbols: false).map(\.step) == ["noise", "decimals", "brackets"])
    }
}
