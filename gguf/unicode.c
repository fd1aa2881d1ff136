/*
 * unicode.c — UTF-8 coding, code point classes and GPT-2's byte alphabet for
 * the tokenizer (see unicode.h).
 *
 * Classes come from PCRE2's Unicode tables: a code point's general category
 * is the one of \p{L} \p{N} \p{P} \p{M} \p{S} \p{Z} \p{Cn} that matches it,
 * anything else being a control (Cc Cf Co Cs). The Basic Multilingual Plane
 * is classified once per process into a table; the rarer code points above
 * it are classified on demand.
 *
 * Not for: anything that needs the text's words (tokenizer_bpe.c).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <stdlib.h>

#include "unicode.h"

bool gguf_utf8_valid(const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3
                   : c >= 0xF0 && c < 0xF5 ? 4 : 0;
        if (!len || i + len > n)
            return false;
        for (size_t k = 1; k < len; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
        if ((c == 0xE0 && s[i + 1] < 0xA0) || (c == 0xED && s[i + 1] >= 0xA0) ||
            (c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] >= 0x90))
            return false;
        i += len;
    }
    return true;
}

size_t gguf_utf8_seq_len(unsigned char lead)
{
    if (lead < 0xC0)
        return 1;
    if (lead < 0xE0)
        return 2;
    if (lead < 0xF0)
        return 3;
    return 4;
}

static bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

uint32_t gguf_utf8_decode(const char *s, size_t len, size_t *pos)
{
    const unsigned char *u = (const unsigned char *)s + *pos;
    size_t left = len - *pos;
    if (u[0] < 0x80) {
        *pos += 1;
        return u[0];
    }
    /* The lead byte alone decides the length; every continuation byte must
     * be there. Overlong forms are not refused (llama.cpp does not). */
    size_t n = u[0] < 0xC0 ? 0 : u[0] < 0xE0 ? 2 : u[0] < 0xF0 ? 3 : u[0] < 0xF8 ? 4 : 0;
    if (n == 0 || left < n) {
        *pos += 1;
        return UCP_REPLACEMENT;
    }
    for (size_t i = 1; i < n; i++)
        if (!is_cont(u[i])) {
            *pos += 1;
            return UCP_REPLACEMENT;
        }
    uint32_t cp = u[0] & (0x7F >> n);
    for (size_t i = 1; i < n; i++)
        cp = cp << 6 | (u[i] & 0x3F);
    *pos += n;
    return cp;
}

size_t gguf_utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18 & 0x07));
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ---- classes ------------------------------------------------------------ */

/* One alternative per category, in the order of the class bits they give. */
static const char category_pattern[] =
    "(\\p{L})|(\\p{N})|(\\p{P})|(\\p{M})|(\\p{S})|(\\p{Z})|(\\p{Cn})";
static const unsigned category_of_group[] = {
    UCP_LETTER, UCP_NUMBER, UCP_PUNCT, UCP_MARK, UCP_SYMBOL, UCP_SEPARATOR, UCP_UNDEFINED
};

static pthread_once_t  init_once = PTHREAD_ONCE_INIT;
static pcre2_code     *category_re;
static uint16_t       *bmp_class; /* 65536 entries, filled by init */

static unsigned classify(pcre2_match_data *md, uint32_t cp)
{
    if (cp > 0x10FFFF)
        return UCP_UNDEFINED;
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return UCP_CONTROL; /* surrogates: Cs, and not valid UTF-8 for PCRE2 */
    char buf[4];
    size_t n = gguf_utf8_encode(cp, buf);
    int rc = pcre2_match(category_re, (PCRE2_SPTR)buf, n, 0,
                         PCRE2_ANCHORED | PCRE2_NO_UTF_CHECK, md, NULL);
    unsigned cls = rc > 1 ? category_of_group[rc - 2] : UCP_CONTROL;
    /* White_Space is the separators plus six controls. */
    if (cls == UCP_SEPARATOR || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85)
        cls |= UCP_SPACE;
    return cls;
}

static void unicode_init_once(void)
{
    int errcode;
    PCRE2_SIZE erroff;
    uint32_t has_unicode = 0;
    pcre2_config(PCRE2_CONFIG_UNICODE, &has_unicode);
    if (!has_unicode)
        return;
    category_re = pcre2_compile((PCRE2_SPTR)category_pattern, PCRE2_ZERO_TERMINATED,
                                PCRE2_UTF | PCRE2_UCP, &errcode, &erroff, NULL);
    if (!category_re)
        return;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(category_re, NULL);
    uint16_t *table = malloc(65536 * sizeof *table);
    if (!md || !table) {
        pcre2_match_data_free(md);
        free(table);
        pcre2_code_free(category_re);
        category_re = NULL;
        return;
    }
    for (uint32_t cp = 0; cp < 65536; cp++)
        table[cp] = (uint16_t)classify(md, cp);
    pcre2_match_data_free(md);
    bmp_class = table;
}

int gguf_unicode_init(void)
{
    pthread_once(&init_once, unicode_init_once);
    return bmp_class ? 0 : -1;
}

unsigned gguf_unicode_class(uint32_t cp)
{
    if (cp < 65536)
        return bmp_class ? bmp_class[cp] : UCP_UNDEFINED;
    if (!category_re || cp > 0x10FFFF)
        return UCP_UNDEFINED;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(category_re, NULL);
    if (!md)
        return UCP_UNDEFINED;
    unsigned cls = classify(md, cp);
    pcre2_match_data_free(md);
    return cls;
}

/* ---- GPT-2 byte alphabet ------------------------------------------------- */

/* Bytes that print as themselves in Latin-1: '!'..'~', U+00A1..U+00AC,
 * U+00AE..U+00FF. The others (controls, space, DEL, NBSP, soft hyphen) are
 * numbered from U+0100 upwards in byte order. */
static bool byte_is_visible(unsigned b)
{
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

uint32_t gguf_byte_to_cp(uint8_t b)
{
    if (byte_is_visible(b))
        return b;
    uint32_t n = 0;
    for (unsigned c = 0; c < b; c++)
        n += !byte_is_visible(c);
    return 256 + n;
}

int gguf_cp_to_byte(uint32_t cp)
{
    if (cp < 256)
        return byte_is_visible(cp) ? (int)cp : -1;
    uint32_t n = 256;
    for (unsigned c = 0; c < 256; c++)
        if (!byte_is_visible(c) && n++ == cp)
            return (int)c;
    return -1;
}
