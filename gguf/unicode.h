/*
 * unicode.h — the Unicode facts the tokenizer needs: UTF-8 decoding the way
 * llama.cpp decodes (lenient: a bad byte becomes U+FFFD and decoding moves on
 * by one byte), UTF-8 encoding, the general category and White_Space
 * property of a code point (taken from PCRE2's Unicode tables, never from a
 * table of our own), and GPT-2's byte <-> code point mapping.
 *
 * Not for: normalisation, case mapping or regexes (tokenizer_bpe.c compiles
 * its own patterns).
 */
#ifndef GGUF_UNICODE_H
#define GGUF_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Code point classes, as llama.cpp's unicode_cpt_flags groups general
 * categories: one category bit, plus UCP_SPACE for White_Space. */
enum {
    UCP_UNDEFINED = 0x001, /* Cn (unassigned) and anything beyond U+10FFFF */
    UCP_NUMBER    = 0x002, /* N* */
    UCP_LETTER    = 0x004, /* L* */
    UCP_SEPARATOR = 0x008, /* Z* */
    UCP_MARK      = 0x010, /* M* */
    UCP_PUNCT     = 0x020, /* P* */
    UCP_SYMBOL    = 0x040, /* S* */
    UCP_CONTROL   = 0x080, /* Cc, Cf, Co, Cs */
    UCP_CATEGORY  = 0x0ff,
    UCP_SPACE     = 0x100  /* White_Space: Z* and U+0009..000D, U+0085 */
};

#define UCP_REPLACEMENT 0xFFFDu

/* Byte length of a UTF-8 sequence from its first byte alone (1 for
 * continuation bytes), as llama.cpp splits text into symbols. */
size_t gguf_utf8_seq_len(unsigned char lead);

/* Decodes the code point at s[*pos] (*pos < len) and advances *pos. Overlong
 * forms and surrogates decode as their value; a malformed or truncated
 * sequence gives U+FFFD and advances by one byte. */
uint32_t gguf_utf8_decode(const char *s, size_t len, size_t *pos);

/* Whether s[0..n) is strict UTF-8, as Python decodes it: no overlongs,
 * surrogates or code points past U+10FFFF. */
bool gguf_utf8_valid(const void *s, size_t n);

/* Encodes cp (<= 0x1FFFFF) into out; returns the byte count (1..4). */
size_t gguf_utf8_encode(uint32_t cp, char out[4]);

/* Loads the category tables once per process. 0, or -1 when the PCRE2 in
 * use has no Unicode support (then every class query says UCP_UNDEFINED). */
int gguf_unicode_init(void);

/* The UCP_* class bits of cp. Call gguf_unicode_init() first. */
unsigned gguf_unicode_class(uint32_t cp);

/* GPT-2's byte-level alphabet: printable Latin-1 bytes stand for themselves,
 * the other 68 bytes for U+0100.. in byte order. */
uint32_t gguf_byte_to_cp(uint8_t b);
/* The byte that cp stands for, or -1 when cp is not in the alphabet. */
int gguf_cp_to_byte(uint32_t cp);

#endif
