#ifndef QUIRE_CCLD2_H
#define QUIRE_CCLD2_H

#ifdef __cplusplus
extern "C" {
#endif

/// What CLD2 (Compact Language Detector 2, Debian's libcld2) found in a text: up to three languages,
/// most of the text first, as CLD2's codes (`it`, `zh`, `zh-Hant`, `iw`), each with the share of the
/// text's letters it covers and how typical the text is of it (1.0: ordinary text of that language).
typedef struct {
    const char *codes[3];
    int percents[3];
    double scores[3];
    /// Bytes of letters CLD2 looked at (markup, digits and punctuation are not counted).
    int text_bytes;
    /// Whether CLD2 judges the first language clearly ahead of the others for a text this long.
    int reliable;
} QuireLanguageGuess;

/// Identifies the language of `length` bytes of UTF-8 plain text; `hints` is a comma-separated list
/// of CLD2 language codes that are boosted (`"it,en"`), or NULL. Invalid UTF-8 past a valid prefix
/// is not looked at. The codes point to CLD2's static strings; an empty slot's code is NULL.
void quire_identify_language(const char *text, int length, const char *hints, QuireLanguageGuess *guess);

/// CLD2's version text.
const char *quire_language_identifier_version(void);

#ifdef __cplusplus
}
#endif

#endif
