// A C face for CLD2's C++ API: Swift sees plain structs and never a C++ type.
#include "CCLD2.h"

#include <cstdio>  // compact_lang_det.h names FILE without including it
#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>

namespace CLD2 {
const char *LanguageCode(Language lang);  // cld2/internal/lang_script.h, exported by libcld2
}

extern "C" void quire_identify_language(const char *text, int length, const char *hints, QuireLanguageGuess *guess) {
    CLD2::CLDHints cldHints = {hints, nullptr, CLD2::UNKNOWN_ENCODING, CLD2::UNKNOWN_LANGUAGE};
    CLD2::Language languages[3] = {CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE};
    int percents[3] = {0, 0, 0};
    double scores[3] = {0, 0, 0};
    int textBytes = 0, validPrefix = 0;
    bool reliable = false;
    CLD2::ExtDetectLanguageSummaryCheckUTF8(text, length, true, &cldHints, 0, languages, percents, scores,
                                            nullptr, &textBytes, &reliable, &validPrefix);
    for (int i = 0; i < 3; i++) {
        guess->codes[i] = languages[i] == CLD2::UNKNOWN_LANGUAGE ? nullptr : CLD2::LanguageCode(languages[i]);
        guess->percents[i] = percents[i];
        guess->scores[i] = scores[i];
    }
    guess->text_bytes = textBytes;
    guess->reliable = reliable ? 1 : 0;
}

extern "C" const char *quire_language_identifier_version(void) {
    return CLD2::DetectLanguageVersion();
}
