import QuireOCR
import QuireSupport
import Testing

/// The OCR worker's settings as declared: defaults on the properties, variables from the declarations.
@Suite struct OCRConfigurationSettingsTests {
    @Test func noVariablesMeanTheDefaults() throws {
        #expect(try OCRConfiguration(environment: [:]) == OCRConfiguration())
        #expect(OCRConfiguration().engineVariables == ["tessedit_do_invert": "0", "textord_all_prop": "1"])
    }

    @Test func variablesOverrideTheDefaults() throws {
        let configuration = try OCRConfiguration(environment: [
            "QUIRE_LANGUAGES": "eng+deu", "QUIRE_OCR_DESKEW": "off", "QUIRE_OCR_TARGET_GLYPH_HEIGHT": "30.5",
            "QUIRE_TESSERACT_VARIABLES": "preserve_interword_spaces=1, tessedit_do_invert=1", "QUIRE_MAX_PAGES": "",
        ])
        #expect(configuration.defaultLanguages == ["eng", "deu"])
        #expect(configuration.deskew == false)
        #expect(configuration.targetGlyphHeight == 30.5)
        #expect(configuration.engineVariables == ["preserve_interword_spaces": "1", "tessedit_do_invert": "1", "textord_all_prop": "1"])
        #expect(configuration.maxPages == 100, "an empty variable counts as unset")
    }

    @Test("a bad value names its variable", arguments: [
        ("QUIRE_OCR_DESKEW", "sometimes", "'sometimes' is not on or off"),
        ("QUIRE_MAX_PIXELS", "12", "'12' is not an integer in 10000…1000000000"),
        ("QUIRE_OCR_LARGE_GLYPH_HEIGHT", "2", "'2' is not a number in 8.0…10000.0"),
        ("QUIRE_TESSERACT_VARIABLES", "novalue", "'novalue' is not name=value pairs separated by commas"),
    ])
    func badValue(variable: String, value: String, message: String) {
        #expect(throws: ConfigurationError(source: variable, message: message)) {
            try OCRConfiguration(environment: [variable: value])
        }
    }

    @Test("the default --help shows is the default a setting applies")
    func shownDefaultsRoundTrip() {
        for setting in OCRConfiguration.settings {
            var configuration = OCRConfiguration()
            let shown = setting.shown(in: configuration)
            #expect(setting.apply(shown, to: &configuration), "\(setting.variable ?? "?"): '\(shown)'")
            #expect(configuration == OCRConfiguration(), "\(setting.variable ?? "?"): '\(shown)'")
        }
    }
}
