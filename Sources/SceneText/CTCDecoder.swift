/// Greedy CTC decoding (Graves et al., 2006) of a line recognizer's output: at each time step the
/// likeliest class; repeats merged, blanks dropped. Class 0 is the blank, classes 1…n the
/// dictionary's characters, and the class after them a space (PaddleOCR's convention).
public struct CTCDecoder: Sendable {
    public let characters: [String]
    /// Each character's class (the first, should the dictionary hold one twice).
    let classIndex: [String: Int]
    /// The classes that may be read (the blank always may); nil: all of them.
    public var allowed: [Bool]?

    /// `dictionary`: the model's characters, one per class from class 1 on.
    public init(dictionary: [String]) {
        characters = [""] + dictionary + [" "]
        classIndex = Dictionary(characters.enumerated().dropFirst().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The decoder reading only characters `keep` accepts (the blank and the space always).
    public func restricted(to keep: (String) -> Bool) -> CTCDecoder {
        var decoder = self
        decoder.allowed = characters.enumerated().map { index, character in index == 0 || character == " " || keep(character) }
        return decoder
    }

    /// Whether a character belongs to the scripts written with the Latin alphabet: letters, digits,
    /// punctuation and symbols below the CJK blocks (U+2E80), outside the full-width forms.
    public static func isLatinScript(_ character: String) -> Bool {
        character.unicodeScalars.allSatisfy { $0.value < 0x2E80 && !(0x0590...0x08FF).contains($0.value) }
    }

    /// One character read: its text, the time step where it was read, and its probability.
    public struct Character: Sendable, Equatable {
        public var text: String
        public var step: Int
        public var confidence: Double
    }

    /// A decoded line: its characters, and the number of time steps the line's image spanned.
    public struct Line: Sendable, Equatable {
        public var characters: [Character]
        public var steps: Int
        /// The mean probability and the number of the characters as decoded, before words were
        /// corrected (nil: as ``characters``): what decides between two readings of a line.
        public var decoded: (confidence: Double, count: Int)?
        public var text: String { characters.map(\.text).joined() }
        public var readingConfidence: Double { decoded?.confidence ?? confidence }
        public var readingCount: Int { decoded?.count ?? characters.count }

        public init(characters: [Character], steps: Int, decoded: (confidence: Double, count: Int)? = nil) {
            self.characters = characters
            self.steps = steps
            self.decoded = decoded
        }

        public static func == (a: Line, b: Line) -> Bool {
            a.characters == b.characters && a.steps == b.steps && a.decoded?.confidence == b.decoded?.confidence && a.decoded?.count == b.decoded?.count
        }
        /// The mean of the characters' probabilities (0 for a line without any).
        public var confidence: Double {
            characters.isEmpty ? 0 : characters.map(\.confidence).reduce(0, +) / Double(characters.count)
        }
    }

    /// Decodes `steps` time steps of `classes` scores each (probabilities, as the models' softmax
    /// gives them), starting at `offset` in `scores`; only the first `usedSteps` are read (the rest is
    /// padding of a batch's wider lines).
    public func decode(_ scores: UnsafeBufferPointer<Float>, offset: Int = 0, steps: Int, classes: Int, usedSteps: Int? = nil) -> Line {
        let used = min(steps, usedSteps ?? steps)
        var out: [Character] = []
        var previous = -1
        let allowed = self.allowed.map { $0.count == classes ? $0 : nil } ?? nil
        for t in 0..<used {
            let base = offset + t * classes
            var best = 0
            var bestScore = scores[base]
            if let allowed {
                for c in 1..<classes where allowed[c] && scores[base + c] > bestScore {
                    best = c
                    bestScore = scores[base + c]
                }
            } else {
                for c in 1..<classes where scores[base + c] > bestScore {
                    best = c
                    bestScore = scores[base + c]
                }
            }
            defer { previous = best }
            guard best != 0, best != previous, best < characters.count else { continue }
            out.append(Character(text: characters[best], step: t, confidence: Double(bestScore)))
        }
        // A line's own spaces at its ends are the model's, not the text's.
        while out.first?.text == " " { out.removeFirst() }
        while out.last?.text == " " { out.removeLast() }
        return Line(characters: out, steps: used)
    }
}
