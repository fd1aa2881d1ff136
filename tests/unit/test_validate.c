/*
 * test_validate.c — gguf_open() and gguf_open_memory() reject every
 * malformed file of tests/unit/badgguf.h with the message of its rule, and
 * accept the valid ones.
 *
 * Every image is opened twice: from an exact-size heap copy (so ASan in
 * `make san` flags any read past the end) and from a file under GGUFKIT_TMP.
 * One test per rule (docs/validation.md maps rules to messages and tests),
 * one per 2024 GGUF CVE, and sweeps over every truncation and single-byte
 * corruption of the valid file. Successful opens are closed and failed ones
 * must free all they built: LeakSanitizer runs at the end of each forked
 * test, so a leak fails the test under `make san`.
 *
 * Not for: the accessors on a valid file beyond what shows the valid file
 * was read right (test_reader.c).
 */
#include <ggufkit/gguf.h>
#include "testutil.h"
#include "badgguf.h"

#include <unistd.h>

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

/* True when msg contains pat, where '*' in pat matches any run of
 * characters (the pieces must appear in order). */
static bool msg_matches(const char *msg, const char *pat)
{
    char piece[BG_EXPECT_MAX];
    const char *at = msg;
    while (*pat) {
        size_t n = strcspn(pat, "*");
        if (n >= sizeof piece)
            return false;
        memcpy(piece, pat, n);
        piece[n] = '\0';
        if (n) {
            const char *hit = strstr(at, piece);
            if (!hit)
                return false;
            at = hit + n;
        }
        pat += n;
        if (*pat == '*')
            pat++;
    }
    return true;
}

/* Opens n bytes of p from a heap copy of exactly n bytes. The copy is
 * returned in *copy and must outlive the file. */
static gguf_file *open_exact(const uint8_t *p, size_t n, uint8_t **copy, gguf_error *err)
{
    *copy = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(*copy);
    if (n)
        memcpy(*copy, p, n);
    return gguf_open_memory(*copy, n, err);
}

static void tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/validate-%ld-%s.gguf", test_tmpdir(), (long)getpid(), name);
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    ck_assert_msg(fp != NULL, "cannot create %s", path);
    ck_assert_uint_eq(fwrite(p, 1, n, fp), n);
    ck_assert_int_eq(fclose(fp), 0);
}

/* One verdict: accepted when ex is "", else rejected with a message that
 * matches ex and, like every parse error, starts with "offset ". */
static void check_verdict(const char *name, const char *how, gguf_file *f,
                          const gguf_error *err, const char *ex)
{
    if (!*ex) {
        ck_assert_msg(f != NULL, "%s (%s): valid image rejected: %s", name, how, err->msg);
        return;
    }
    ck_assert_msg(f == NULL, "%s (%s): bad image accepted (expected \"%s\")", name, how, ex);
    ck_assert_msg(strncmp(err->msg, "offset ", 7) == 0,
                  "%s (%s): message does not start with a byte offset: %s", name, how, err->msg);
    ck_assert_msg(msg_matches(err->msg, ex), "%s (%s): message\n  \"%s\"\ndoes not match\n  \"%s\"",
                  name, how, err->msg, ex);
}

/* Builds case c and checks both entry points against its expectation. */
static void run_case(const bg_case *c)
{
    bg_buf b = { 0 };
    char ex[BG_EXPECT_MAX];
    ck_assert_msg(c->build(c->arg, &b, ex, sizeof ex), "%s: out of memory building", c->name);

    gguf_error err = { 0 };
    uint8_t *copy;
    gguf_file *f = open_exact(b.p, b.len, &copy, &err);
    check_verdict(c->name, "memory", f, &err, ex);
    gguf_close(f);
    free(copy);

    char path[512];
    tmp_path(path, sizeof path, c->name);
    write_file(path, b.p, b.len);
    memset(&err, 0, sizeof err);
    f = gguf_open(path, 0, &err);
    check_verdict(c->name, "file", f, &err, ex);
    gguf_close(f);
    unlink(path);
    bg_free(&b);
}

/* Runs every case of one rule; a rule with no case is a mistake. */
static void run_rule(const char *rule)
{
    size_t n, ran = 0;
    const bg_case *cases = bg_cases(&n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(cases[i].rule, rule) == 0) {
            run_case(&cases[i]);
            ran++;
        }
    }
    ck_assert_msg(ran > 0, "no case for rule %s", rule);
}

/* The rules that have a test below; every case must belong to one. */
static const char *const rules[] = {
    "valid", "bad_magic", "version_unsupported", "version_1", "big_endian",
    "short_header", "tensor_count", "kv_count", "string_past_eof",
    "string_length_overflow", "array_past_eof", "array_size_overflow",
    "nested_array", "value_type", "array_elem_type", "bool_value",
    "duplicate_key", "empty_key", "key_length", "nul_in_name", "alignment_type",
    "alignment_pow2", "duplicate_tensor", "tensor_name_length", "n_dims",
    "dim_range", "element_count_overflow", "byte_size_overflow", "unknown_type",
    "removed_type", "block_size", "offset_unaligned", "overlap", "data_past_eof",
    "offset_size_overflow", "cve_2024_21802", "cve_2024_21825", "cve_2024_21836",
    "cve_2024_23496", "cve_2024_23605",
};

#define RULE_TEST(rule) \
    START_TEST(test_##rule) { run_rule(#rule); } END_TEST

/* ------------------------------------------------------------------------
 * The valid file
 * ------------------------------------------------------------------------ */

static void check_valid_contents(gguf_file *f, const bg_buf *b, const bg_layout *L)
{
    ck_assert_uint_eq(gguf_file_version(f), 3);
    ck_assert_uint_eq(gguf_alignment(f), 32);
    ck_assert_uint_eq(gguf_n_kv(f), BG_VALID_N_KV);
    ck_assert_uint_eq(gguf_n_tensors(f), BG_VALID_N_TENSORS);
    ck_assert_uint_eq(gguf_data_offset(f, 0), L->data_at);

    gguf_error err;
    gguf_str s;
    ck_assert_int_eq(gguf_get_str(f, "general.architecture", &s, &err), 0);
    ck_assert(gguf_str_eq(s, "llama"));
    ck_assert_int_eq(gguf_get_str(f, "general.name", &s, &err), 0);
    ck_assert(gguf_str_eq(s, "badgguf minimal"));
    uint32_t u32;
    ck_assert_int_eq(gguf_get_u32(f, "llama.context_length", &u32, &err), 0);
    ck_assert_uint_eq(u32, 128);
    float f32;
    ck_assert_int_eq(gguf_get_f32(f, "llama.rope.freq_base", &f32, &err), 0);
    ck_assert(f32 == 10000.0f);
    uint8_t u8;
    ck_assert(gguf_kv_u8(gguf_lookup_kv(f, "test.u8"), &u8));
    ck_assert_uint_eq(u8, 200);
    int16_t i16;
    ck_assert(gguf_kv_i16(gguf_lookup_kv(f, "test.i16"), &i16));
    ck_assert_int_eq(i16, -300);
    uint64_t u64;
    ck_assert_int_eq(gguf_get_u64(f, "test.u64", &u64, &err), 0);
    ck_assert(u64 == 0x123456789abcdef0ULL);
    int64_t i64;
    ck_assert(gguf_kv_i64(gguf_lookup_kv(f, "test.i64"), &i64));
    ck_assert(i64 == -5000000000LL);
    double f64;
    ck_assert(gguf_kv_f64(gguf_lookup_kv(f, "test.f64"), &f64));
    ck_assert(f64 == 0.5);
    bool bv;
    ck_assert_int_eq(gguf_get_bool(f, "tokenizer.ggml.add_bos_token", &bv, &err), 0);
    ck_assert(bv);

    const gguf_kv *kv = gguf_lookup_kv(f, "tokenizer.ggml.tokens");
    ck_assert_ptr_nonnull(kv);
    ck_assert_uint_eq(kv->type, GGUF_VT_ARR);
    ck_assert_uint_eq(kv->elem_type, GGUF_VT_STR);
    ck_assert_uint_eq(kv->n, 4);
    ck_assert(gguf_str_eq(kv->strs[0], "<unk>"));
    ck_assert(gguf_str_eq(kv->strs[3], "hello"));
    uint64_t n;
    const void *p = gguf_kv_array(gguf_lookup_kv(f, "tokenizer.ggml.scores"), GGUF_VT_F32, &n);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(n, 4);
    memcpy(&f32, (const uint8_t *)p + 12, 4);
    ck_assert(f32 == -1.5f);
    p = gguf_kv_array(gguf_lookup_kv(f, "tokenizer.ggml.token_type"), GGUF_VT_I32, &n);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(n, 4);
    int32_t i32;
    memcpy(&i32, p, 4);
    ck_assert_int_eq(i32, 2);
    kv = gguf_lookup_kv(f, "test.flags");
    ck_assert_ptr_nonnull(kv);
    ck_assert_uint_eq(kv->elem_type, GGUF_VT_BOOL);
    ck_assert_uint_eq(kv->n, 3);

    const gguf_tensor *t = gguf_lookup_tensor(f, "token_embd.weight");
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->type, GGUF_DT_F32);
    ck_assert_uint_eq(t->n_dims, 2);
    ck_assert(t->ne[0] == 8 && t->ne[1] == 2 && t->ne[2] == 1 && t->ne[3] == 1);
    ck_assert_int_eq(t->n_elements, 16);
    ck_assert_uint_eq(t->offset, 0);
    ck_assert_uint_eq(t->nbytes, 64);
    ck_assert_int_eq(memcmp(t->data, b->p + L->data_at, 64), 0);
    t = gguf_lookup_tensor(f, "blk.0.ffn_down.weight");
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->type, GGUF_DT_Q8_0);
    ck_assert_uint_eq(t->offset, 64);
    ck_assert_uint_eq(t->nbytes, 68);
    ck_assert_int_eq(memcmp(t->data, b->p + L->data_at + 64, 68), 0);
    ck_assert_ptr_null(gguf_lookup_tensor(f, "output.weight"));
}

START_TEST(test_valid_opens)
{
    bg_buf b = { 0 };
    bg_layout L = bg_valid_image(&b);
    ck_assert(!b.oom);
    ck_assert_uint_eq(L.size, b.len);
    ck_assert_uint_eq(L.data_end, L.data_at + 64 + 68);

    gguf_error err = { 0 };
    uint8_t *copy;
    gguf_file *f = open_exact(b.p, b.len, &copy, &err);
    ck_assert_msg(f != NULL, "valid image rejected: %s", err.msg);
    check_valid_contents(f, &b, &L);
    gguf_close(f);
    free(copy);

    char path[512];
    tmp_path(path, sizeof path, "valid");
    write_file(path, b.p, b.len);
    f = gguf_open(path, 0, &err);
    ck_assert_msg(f != NULL, "valid file rejected: %s", err.msg);
    check_valid_contents(f, &b, &L);
    gguf_close(f);
    unlink(path);
    bg_free(&b);
}
END_TEST

/* ------------------------------------------------------------------------
 * One test per rule (cases in badgguf.h)
 * ------------------------------------------------------------------------ */

RULE_TEST(valid)
RULE_TEST(bad_magic)
RULE_TEST(version_unsupported)
RULE_TEST(version_1)
RULE_TEST(big_endian)
RULE_TEST(short_header)
RULE_TEST(tensor_count)
RULE_TEST(kv_count)
RULE_TEST(string_past_eof)
RULE_TEST(string_length_overflow)
RULE_TEST(array_past_eof)
RULE_TEST(array_size_overflow)
RULE_TEST(nested_array)
RULE_TEST(value_type)
RULE_TEST(array_elem_type)
RULE_TEST(bool_value)
RULE_TEST(duplicate_key)
RULE_TEST(empty_key)
RULE_TEST(key_length)
RULE_TEST(nul_in_name)
RULE_TEST(alignment_type)
RULE_TEST(alignment_pow2)
RULE_TEST(duplicate_tensor)
RULE_TEST(tensor_name_length)
RULE_TEST(n_dims)
RULE_TEST(dim_range)
RULE_TEST(element_count_overflow)
RULE_TEST(byte_size_overflow)
RULE_TEST(unknown_type)
RULE_TEST(removed_type)
RULE_TEST(block_size)
RULE_TEST(offset_unaligned)
RULE_TEST(overlap)
RULE_TEST(data_past_eof)
RULE_TEST(offset_size_overflow)

/* The 2024 CVEs against ggml's gguf.c (TALOS-2024-1912..1916): each builds
 * the input shape that overflowed an allocation there and expects a clean
 * rejection before anything is sized from the bad field. */
RULE_TEST(cve_2024_21825) /* TALOS-2024-1912: array count x element size */
RULE_TEST(cve_2024_23496) /* TALOS-2024-1913: gguf_fread_str length + 1 */
RULE_TEST(cve_2024_21802) /* TALOS-2024-1914: n_dims into ne[4] */
RULE_TEST(cve_2024_21836) /* TALOS-2024-1915: n_tensors x sizeof info */
RULE_TEST(cve_2024_23605) /* TALOS-2024-1916: n_kv x sizeof kv */

/* Every case in the catalogue belongs to a rule tested above, and names
 * are unique (mkbad writes NAME.gguf). */
START_TEST(test_catalogue_complete)
{
    size_t n;
    const bg_case *cases = bg_cases(&n);
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++)
            known = known || strcmp(cases[i].rule, rules[r]) == 0;
        ck_assert_msg(known, "case %s: rule %s has no test", cases[i].name, cases[i].rule);
        for (size_t j = 0; j < i; j++)
            ck_assert_msg(strcmp(cases[i].name, cases[j].name) != 0, "duplicate case %s",
                          cases[i].name);
    }
}
END_TEST

/* ------------------------------------------------------------------------
 * Sweeps over the valid file
 * ------------------------------------------------------------------------ */

/* Every prefix of the valid file: rejected while it ends before the last
 * tensor's data does; past that only alignment padding is missing, so it
 * may open. Never a crash or an over-read. */
START_TEST(test_truncation_every_byte)
{
    bg_buf b = { 0 };
    bg_layout L = bg_valid_image(&b);
    ck_assert(!b.oom);
    char path[512];
    tmp_path(path, sizeof path, "truncated");
    for (size_t len = 0; len <= b.len; len++) {
        gguf_error err = { 0 };
        uint8_t *copy;
        gguf_file *f = open_exact(b.p, len, &copy, &err);
        if (len < L.data_end) {
            ck_assert_msg(f == NULL, "prefix of %zu bytes accepted", len);
            ck_assert_msg(strncmp(err.msg, "offset ", 7) == 0, "prefix of %zu bytes: %s", len,
                          err.msg);
        } else {
            ck_assert_msg(f != NULL, "prefix of %zu bytes rejected: %s", len, err.msg);
        }
        gguf_close(f);
        free(copy);

        write_file(path, b.p, len);
        gguf_error ferr = { 0 };
        f = gguf_open(path, 0, &ferr);
        ck_assert_msg((f == NULL) == (len < L.data_end), "file prefix of %zu bytes: %s", len,
                      ferr.msg);
        if (!f)
            ck_assert_str_eq(ferr.msg, err.msg);
        gguf_close(f);
    }
    unlink(path);
    bg_free(&b);
}
END_TEST

/* Every byte of the valid file set to 0x00, 0x01, 0x7f, 0x80 and 0xff in
 * turn: each image opens or is rejected with an offset message; no crash,
 * no over-read, no leak. */
START_TEST(test_corrupt_every_byte)
{
    static const uint8_t values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
    bg_buf b = { 0 };
    bg_valid_image(&b);
    ck_assert(!b.oom);
    for (size_t at = 0; at < b.len; at++) {
        uint8_t orig = b.p[at];
        for (size_t v = 0; v < sizeof values; v++) {
            b.p[at] = values[v];
            gguf_error err = { 0 };
            uint8_t *copy;
            gguf_file *f = open_exact(b.p, b.len, &copy, &err);
            if (!f)
                ck_assert_msg(strncmp(err.msg, "offset ", 7) == 0,
                              "byte %zu = 0x%02x: %s", at, values[v], err.msg);
            gguf_close(f);
            free(copy);
        }
        b.p[at] = orig;
    }
    bg_free(&b);
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *validate_suite(void)
{
    Suite *s = suite_create("validate");
    TCase *tc = tcase_create("rules");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_valid_opens);
    tcase_add_test(tc, test_valid);
    tcase_add_test(tc, test_bad_magic);
    tcase_add_test(tc, test_version_unsupported);
    tcase_add_test(tc, test_version_1);
    tcase_add_test(tc, test_big_endian);
    tcase_add_test(tc, test_short_header);
    tcase_add_test(tc, test_tensor_count);
    tcase_add_test(tc, test_kv_count);
    tcase_add_test(tc, test_string_past_eof);
    tcase_add_test(tc, test_string_length_overflow);
    tcase_add_test(tc, test_array_past_eof);
    tcase_add_test(tc, test_array_size_overflow);
    tcase_add_test(tc, test_nested_array);
    tcase_add_test(tc, test_value_type);
    tcase_add_test(tc, test_array_elem_type);
    tcase_add_test(tc, test_bool_value);
    tcase_add_test(tc, test_duplicate_key);
    tcase_add_test(tc, test_empty_key);
    tcase_add_test(tc, test_key_length);
    tcase_add_test(tc, test_nul_in_name);
    tcase_add_test(tc, test_alignment_type);
    tcase_add_test(tc, test_alignment_pow2);
    tcase_add_test(tc, test_duplicate_tensor);
    tcase_add_test(tc, test_tensor_name_length);
    tcase_add_test(tc, test_n_dims);
    tcase_add_test(tc, test_dim_range);
    tcase_add_test(tc, test_element_count_overflow);
    tcase_add_test(tc, test_byte_size_overflow);
    tcase_add_test(tc, test_unknown_type);
    tcase_add_test(tc, test_removed_type);
    tcase_add_test(tc, test_block_size);
    tcase_add_test(tc, test_offset_unaligned);
    tcase_add_test(tc, test_overlap);
    tcase_add_test(tc, test_data_past_eof);
    tcase_add_test(tc, test_offset_size_overflow);
    tcase_add_test(tc, test_catalogue_complete);
    suite_add_tcase(s, tc);

    TCase *cve = tcase_create("cve");
    tcase_add_test(cve, test_cve_2024_21825);
    tcase_add_test(cve, test_cve_2024_23496);
    tcase_add_test(cve, test_cve_2024_21802);
    tcase_add_test(cve, test_cve_2024_21836);
    tcase_add_test(cve, test_cve_2024_23605);
    suite_add_tcase(s, cve);

    TCase *sweep = tcase_create("sweep");
    tcase_set_timeout(sweep, 300);
    tcase_add_test(sweep, test_truncation_every_byte);
    tcase_add_test(sweep, test_corrupt_every_byte);
    suite_add_tcase(s, sweep);
    return s;
}

int main(void)
{
    return run_suite(validate_suite(), 0);
}
