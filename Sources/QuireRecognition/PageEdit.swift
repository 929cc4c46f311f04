import QuireWire

/// One change made to a page after an engine has read it, whichever engine that was: it edits the
/// recognized page and records what it did as a step of the result's `metadata.steps`.
///
/// The edits a worker makes are a list of these values built from its configuration
/// (`OCRConfiguration.pageEdits`), applied in order, each tested on its own without an engine.
public protocol PageEdit: Sendable {
    /// The step's name in `metadata.steps`.
    var step: String { get }
    /// Whether it needs each character's box: a page read without symbols is left as it is, and the
    /// step is not recorded.
    var needsSymbols: Bool { get }
    /// Edits `page`; returns whether anything changed and the figures the step reports.
    func apply(to page: inout RecognizedPage) -> (applied: Bool, parameters: [String: Double])
}

extension PageEdit {
    public var needsSymbols: Bool { false }
}

extension Array where Element == any PageEdit {
    /// Applies the edits in order to `page` and returns their steps. Edits that need symbols are
    /// skipped when the page was read without them.
    public func apply(to page: inout RecognizedPage, symbols: Bool) -> [OCRResult.Step] {
        var steps: [OCRResult.Step] = []
        for edit in self where symbols || !edit.needsSymbols {
            let (applied, parameters) = edit.apply(to: &page)
            steps.append(OCRResult.Step(step: edit.step, applied: applied, parameters: parameters))
        }
        return steps
    }
}

/// Drops the words made of rules, borders and specks (``NoiseFilter``).
public struct NoiseWords: PageEdit {
    /// Words of at most two letters or digits read with less confidence than this (0…1) are noise.
    public var maxConfidence: Double
    public init(maxConfidence: Double) { self.maxConfidence = maxConfidence }

    public var step: String { "noise" }

    public func apply(to page: inout RecognizedPage) -> (applied: Bool, parameters: [String: Double]) {
        let dropped: Int
        (page, dropped) = NoiseFilter.filter(page, maxConfidence: maxConfidence)
        return (dropped > 0, ["wordsDropped": Double(dropped), "maxConfidence": maxConfidence])
    }
}

/// Joins amounts broken after the full stop (`55. 00`) and gives a page's few odd amounts the
/// decimal separator its others use (``DecimalSeparators``).
public struct Decimals: PageEdit {
    public init() {}

    public var step: String { "decimals" }

    public func apply(to page: inout RecognizedPage) -> (applied: Bool, parameters: [String: Double]) {
        let (whole, joined) = DecimalSeparators.joinSplitAmounts(page)
        let (unified, changed, dots, commas) = DecimalSeparators.unify(whole)
        page = unified
        return (changed + joined > 0, [
            "wordsChanged": Double(changed), "amountsWithDot": Double(dots), "amountsWithComma": Double(commas),
            "amountsJoined": Double(joined),
        ])
    }
}

/// Makes round the bracket pairs read as two kinds within a word (`Tax($}`; ``Brackets``).
public struct BracketPairs: PageEdit {
    public init() {}

    public var step: String { "brackets" }

    public func apply(to page: inout RecognizedPage) -> (applied: Bool, parameters: [String: Double]) {
        let changed: Int
        (page, changed) = Brackets.mend(page)
        return (changed > 0, ["wordsChanged": Double(changed)])
    }
}

/// Splits the words Tesseract runs together: across an empty cell of a monospaced line
/// (``MonospaceSpaces``), and where a small letter meets a capital across a gap (``CaseSpaces``).
public struct WordSpaces: PageEdit {
    public var monospace: Bool
    public var caseChange: Bool
    public init(monospace: Bool, caseChange: Bool) {
        self.monospace = monospace
        self.caseChange = caseChange
    }

    public var step: String { "spaces" }
    public var needsSymbols: Bool { true }

    public func apply(to page: inout RecognizedPage) -> (applied: Bool, parameters: [String: Double]) {
        var parameters: [String: Double] = [:]
        var split = 0
        if monospace {
            let (spaced, cells, monospaced) = MonospaceSpaces.split(page)
            page = spaced
            split += cells
            parameters.merge(["wordsSplit": Double(cells), "monospacedLines": Double(monospaced), "minCells": MonospaceSpaces.minimumCells]) { $1 }
        }
        if caseChange {
            let (spaced, cases) = CaseSpaces.split(page)
            page = spaced
            split += cases
            parameters.merge(["caseSplits": Double(cases), "minCaseGap": CaseSpaces.minimumGap]) { $1 }
        }
        return (split > 0, parameters)
    }
}
