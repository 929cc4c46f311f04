// See include/CTesseractWalk.h. Tesseract's C++ headers come from scripts/build-tesseract's 5.5 build
// when it is there (Package.swift puts /opt/quire-tesseract/include first), Debian's 5.3 otherwise.
#include "CTesseractWalk.h"

#include <cstring>
#include <string>

#include <tesseract/ltrresultiterator.h>
#include <tesseract/publictypes.h>
#include <tesseract/resultiterator.h>

using tesseract::LTRResultIterator;
using tesseract::PageIteratorLevel;

struct QuireWalk {
    LTRResultIterator it;
    explicit QuireWalk(const LTRResultIterator &from) : it(from) {}
};

static char *copied(const std::string &text) {
    char *out = new char[text.size() + 1];
    std::memcpy(out, text.c_str(), text.size() + 1);
    return out;
}

extern "C" QuireWalk *quire_walk_begin(void *result_iterator) {
    if (!result_iterator) return nullptr;
    auto *logical = static_cast<tesseract::ResultIterator *>(result_iterator);
    auto *walk = new QuireWalk(*logical);
    walk->it.Begin();
    // One right-to-left (or mixed) word and the reading order may differ from left to right.
    bool leftToRight = true;
    do {
        if (walk->it.Empty(tesseract::RIL_WORD)) continue;
        auto direction = walk->it.WordDirection();
        if (direction == tesseract::DIR_RIGHT_TO_LEFT || direction == tesseract::DIR_MIX) {
            leftToRight = false;
            break;
        }
    } while (walk->it.Next(tesseract::RIL_WORD));
    if (!leftToRight) {
        delete walk;
        return nullptr;
    }
    walk->it.Begin();
    return walk;
}

extern "C" void quire_walk_end(QuireWalk *walk) { delete walk; }

extern "C" void *quire_walk_page_iterator(QuireWalk *walk) {
    return static_cast<tesseract::PageIterator *>(&walk->it);
}

// The left-to-right iterator ends the text of a line, paragraph or block that closes a paragraph
// with a blank line (the paragraph separator); the reading-order iterator does so only when something
// follows on the page (its IsAtBeginningOf is false past the end). This takes the blank line off the
// text of an element at `it` when nothing follows it.
static void endOfPage(const LTRResultIterator &it, PageIteratorLevel level, std::string &text) {
    // Only an element that closes a paragraph can be the page's last; ask the iterator only then.
    if (text.size() < 2 || text.compare(text.size() - 2, 2, "\n\n") != 0) return;
    LTRResultIterator next(it);
    if (!next.Next(level)) text.pop_back();
}

extern "C" char *quire_walk_text(const QuireWalk *walk, int level) {
    auto l = static_cast<PageIteratorLevel>(level);
    char *raw = walk->it.GetUTF8Text(l);
    if (!raw || l == tesseract::RIL_WORD || l == tesseract::RIL_SYMBOL) return raw;
    std::string text(raw);
    delete[] raw;
    endOfPage(walk->it, l, text);
    return copied(text);
}

extern "C" float quire_walk_confidence(const QuireWalk *walk, int level) {
    return walk->it.Confidence(static_cast<PageIteratorLevel>(level));
}

extern "C" const char *quire_walk_word_language(const QuireWalk *walk) {
    return walk->it.WordRecognitionLanguage();
}

extern "C" char *quire_walk_page_text(const QuireWalk *walk) {
    // TessBaseAPI::GetUTF8Text: every paragraph's text but those of images and rules, each as
    // quire_walk_text gives it.
    LTRResultIterator it(walk->it);
    it.Begin();
    std::string text;
    do {
        if (it.Empty(tesseract::RIL_PARA)) continue;
        switch (it.BlockType()) {
            case tesseract::PT_FLOWING_IMAGE:
            case tesseract::PT_HEADING_IMAGE:
            case tesseract::PT_PULLOUT_IMAGE:
            case tesseract::PT_HORZ_LINE:
            case tesseract::PT_VERT_LINE:
                continue;
            default:
                break;
        }
        char *raw = it.GetUTF8Text(tesseract::RIL_PARA);
        if (!raw) continue;
        std::string paragraph(raw);
        delete[] raw;
        endOfPage(it, tesseract::RIL_PARA, paragraph);
        text += paragraph;
    } while (it.Next(tesseract::RIL_PARA));
    return copied(text);
}
