import Foundation
import Imaging
import QuireRecognition
import Testing
import Tesseract
import QuireTestSupport

/// The patched engine's class pruner (the legacy classifier's first step, which orientation and script
/// detection runs four times on every glyph it looks at) sums each pruner set's weights in 8-bit lanes
/// over all of a glyph's features (scripts/tesseract-patches/0013) instead of adding them to memory
/// feature by feature. The sums are the same integers, so orientation and script detection must
/// answer alike both ways, to the last digit of both confidences.
@Suite("The class pruner in lanes: orientation and script detection answer as with the loop feature by feature", .serialized)
struct ClassPrunerTests {
    /// OSD's answers for the sample page turned each way, at two sizes, as text a comparison prints.
    static func guesses() throws -> [String] {
        let engine = try Engine(dataPath: WalkTests.tessdata, languages: "osd")
        // As Quire's workers ask it (InstalledEngines): the sample has fewer glyphs than Tesseract's 50.
        engine.setVariable("min_characters_to_try", "10")
        let hello = try Image.decode(try TestImages.sample(), format: .png).grey()
        var answers: [String] = []
        for factor in [1.0, 1.7] {
            let page = factor == 1 ? hello : try hello.scaled(by: factor)
            for turns in 0..<4 {
                let turned = try page.rotated(quarterTurns: turns)
                turned.setResolution(300)
                guard let guess = engine.orientation(of: turned) else {
                    answers.append("×\(factor) \(turns): none")
                    continue
                }
                answers.append("×\(factor) \(turns): \(guess.rotation)° \(guess.confidence) \(guess.script) \(guess.scriptConfidence)")
            }
        }
        return answers
    }

    @Test("Off and on, the same rotation, script and confidences for every turn of the page")
    func lanesMatchTheLoop() throws {
        guard ActivationsTests.switchedOn(Engine.setLaneClassPruner) else { return }
        defer { Engine.setLaneClassPruner(true) }
        let lanes = try Self.guesses()
        #expect(Engine.setLaneClassPruner(false) == false)
        let loop = try Self.guesses()
        #expect(lanes == loop)
        // Something was compared: OSD named the sample's script, and turned it back, every time.
        for (index, answer) in lanes.enumerated() {
            let turns = index % 4
            #expect(answer.contains(" Latin "), "\(answer)")
            #expect(answer.contains(": \((360 - 90 * turns) % 360)° "), "the turn back for \(turns) quarter turns: \(answer)")
        }
    }
}
