import Testing
@testable import LanguageID

@Suite struct LanguageIdentifierTests {
    /// A sentence or two of each language, as a page or a sign gives them.
    @Test(arguments: [
        ("The committee met on Tuesday to review the budget and agreed to publish the minutes next week.", "en"),
        ("La città si trova sulla riva del fiume e conserva ancora le mura medievali e una bella piazza.", "it"),
        ("Le conseil municipal s'est réuni mardi soir pour examiner le budget de l'année prochaine.", "fr"),
        ("Die Gemeinde hat beschlossen, die alte Brücke im nächsten Frühjahr vollständig zu erneuern.", "de"),
        ("今天天气很好，我们一起去公园散步，然后在附近的餐厅吃午饭。", "zh-Hans"),
        ("今天天氣很好，我們一起去公園散步，然後在附近的餐廳吃午飯。", "zh-Hant"),
        ("今日はとても良い天気なので、公園を散歩してから近くの店で昼ご飯を食べました。", "ja"),
        ("오늘은 날씨가 좋아서 공원을 산책하고 근처 식당에서 점심을 먹었습니다.", "ko"),
        ("Сегодня хорошая погода, и мы пошли гулять в парк, а потом пообедали в кафе.", "ru"),
        ("Σήμερα ο καιρός είναι καλός και πήγαμε βόλτα στο πάρκο πριν από το μεσημεριανό.", "el"),
        ("आज मौसम बहुत अच्छा है, इसलिए हम पार्क में टहलने गए और फिर पास के होटल में खाना खाया।", "hi"),
        ("היום מזג האוויר נעים ולכן הלכנו לטייל בפארק ואחר כך אכלנו ארוחת צהריים.", "he"),
    ])
    func identifiesTheLanguageOfASentence(text: String, language: String) {
        let found = LanguageIdentifier.identify(text)
        #expect(found.first?.language == language)
        #expect(found.reliable)
        #expect(found.letterBytes > 0)
    }

    @Test func mixedTextNamesBothLanguages() {
        let text = """
            La città si trova sulla riva del fiume e conserva ancora le mura medievali, una bella piazza \
            e molte chiese antiche che i visitatori amano fotografare durante la primavera e l'estate.
            The museum is open every day except Monday.
            """
        let found = LanguageIdentifier.identify(text)
        #expect(Set(found.languages.map(\.language).prefix(2)) == ["it", "en"])
        #expect(found.languages.allSatisfy { $0.percent > 10 })
    }

    @Test func textWithNoLettersNamesNothing() {
        let found = LanguageIdentifier.identify("12.50  3 x 4.00  = 12.00 ---")
        #expect(found.languages.isEmpty)
        #expect(!found.reliable)
        #expect(LanguageIdentifier.identify("").languages.isEmpty)
    }

    @Test func confidenceIsTheShareHalvedWhenUnreliable() {
        let reliable = LanguageIdentification(languages: [.init(language: "it", percent: 80, score: 1)], reliable: true, letterBytes: 200)
        #expect(reliable.confidence(of: reliable.languages[0]) == 0.8)
        var unreliable = reliable
        unreliable.reliable = false
        #expect(unreliable.confidence(of: unreliable.languages[0]) == 0.4)
    }

    @Test func codesMapToQuireTags() {
        #expect(LanguageIdentifier.bcp47(cld2: "iw") == "he")
        #expect(LanguageIdentifier.bcp47(cld2: "zh") == "zh-Hans")
        #expect(LanguageIdentifier.bcp47(cld2: "zh-Hant") == "zh-Hant")
        #expect(LanguageIdentifier.bcp47(cld2: "un") == nil)
        #expect(LanguageIdentifier.cld2Code(for: "zh-Hant") == "zh-Hant")
        #expect(LanguageIdentifier.cld2Code(for: "he") == "iw")
        #expect(LanguageIdentifier.cld2Code(for: "en-GB") == "en")
    }
}
