#ifndef QUIRE_TESSERACT_WALK_H
#define QUIRE_TESSERACT_WALK_H

#ifdef __cplusplus
extern "C" {
#endif

/// A left-to-right walk over a recognised page: Tesseract's `LTRResultIterator`, which the C API
/// does not offer.
///
/// `TessBaseAPIGetIterator` gives a `ResultIterator`, which walks in reading order for right-to-left
/// scripts too, and pays for it: each `Next(RIL_WORD)` and each `IsAtBeginningOf(RIL_TEXTLINE)`
/// rewinds a copy to the start of the page and walks forward to the current line
/// (`PAGE_RES_IT::restart_row`), and its line and paragraph texts do the same for each of their
/// words. Walking a page is then quadratic in its words: 5–6% of an A4 page's CPU time. The
/// left-to-right iterator moves and answers in constant time. When no word on the page runs right to
/// left, both give the same elements in the same order with the same texts.
typedef struct QuireWalk QuireWalk;

/// A walk at the start of the page `result_iterator` (a `TessResultIterator *`, left where it is)
/// belongs to; NULL when a word on the page runs right to left (or mixes directions): then only the
/// `ResultIterator` gives reading order.
QuireWalk *quire_walk_begin(void *result_iterator);

void quire_walk_end(QuireWalk *walk);

/// The walk as a `TessPageIterator *`, for the C API's page iterator functions (`Next`,
/// `IsAtBeginningOf`, `BoundingBox`, `Baseline`, `BlockType`): it is one.
void *quire_walk_page_iterator(QuireWalk *walk);

/// The text of the element at `level` (a `TessPageIteratorLevel`) that begins here, as
/// `TessResultIteratorGetUTF8Text`; free it with `TessDeleteText`. NULL past the end or in an image.
char *quire_walk_text(const QuireWalk *walk, int level);

/// As `TessResultIteratorConfidence`: 0–100, or 0 past the end.
float quire_walk_confidence(const QuireWalk *walk, int level);

/// As `TessResultIteratorWordRecognitionLanguage`; NULL when the word has none.
const char *quire_walk_word_language(const QuireWalk *walk);

/// The page's text as `TessBaseAPIGetUTF8Text` writes it for a page without right-to-left words
/// (paragraph by paragraph, images and rules left out), walked once; free it with `TessDeleteText`.
char *quire_walk_page_text(const QuireWalk *walk);

#ifdef __cplusplus
}
#endif

#endif
