/*
 * test_json.c — the JSON reader: values and accessors, escapes, document
 * order and duplicates, the fixture config files, and errors with lines.
 */
#include "json.h"
#include "testutil.h"
#include <math.h>
#include <unistd.h>

static json_value *parse(const char *s, gguf_error *err)
{
    err->msg[0] = 0;
    return json_parse(s, strlen(s), err);
}

START_TEST(test_values)
{
    gguf_error err;
    json_value *v = parse("{\"n\": 42, \"neg\": -7, \"f\": 1e-05, \"x\": 2.5, \"s\": \"a\\\"b\\u00e9\\ud83d\\ude00\","
                          " \"t\": true, \"no\": false, \"z\": null, \"a\": [1, [2], {}],"
                          " \"big\": 9007199254740993, \"dup\": 1, \"dup\": 2}", &err);
    ck_assert_msg(v != NULL, "%s", err.msg);
    ck_assert_int_eq(v->type, JSON_OBJECT);
    ck_assert_uint_eq(v->n, 12);
    ck_assert_str_eq(v->keys[0], "n"); /* document order */
    int64_t i;
    double d;
    ck_assert(json_int(json_get(v, "n"), &i) && i == 42);
    ck_assert(json_int(json_get(v, "neg"), &i) && i == -7);
    ck_assert(!json_int(json_get(v, "f"), &i)); /* not integral */
    ck_assert(json_num(json_get(v, "f"), &d) && d == 1e-05);
    ck_assert(json_num(json_get(v, "x"), &d) && d == 2.5);
    ck_assert_str_eq(json_str(json_get(v, "s")), "a\"b\xc3\xa9\xf0\x9f\x98\x80");
    ck_assert_int_eq(json_get(v, "t")->type, JSON_BOOL);
    ck_assert(json_get(v, "t")->b && !json_get(v, "no")->b);
    ck_assert_int_eq(json_get(v, "z")->type, JSON_NULL);
    const json_value *a = json_get(v, "a");
    ck_assert_uint_eq(a->n, 3);
    ck_assert_int_eq(a->items[1]->type, JSON_ARRAY);
    ck_assert_int_eq(a->items[2]->type, JSON_OBJECT);
    ck_assert(json_int(json_get(v, "big"), &i) && i == 9007199254740993LL); /* exact, not via double */
    ck_assert(json_int(json_get(v, "dup"), &i) && i == 2); /* last wins */
    ck_assert_ptr_null(json_get(v, "missing"));
    ck_assert_ptr_null(json_str(json_get(v, "n")));
    ck_assert_uint_eq(json_get(v, "a")->line, 1);
    json_free(v);
}
END_TEST

/* Raw characters JSON allows in strings but YAML refuses or folds: DEL,
 * C1 controls (Llama 2's vocabulary has them), NEL, LS, PS, BOM, U+FFFF —
 * each must come back as itself, next to escapes and surrogate pairs. */
START_TEST(test_yaml_unsafe_chars)
{
    static const char *const raw[] = { "\x7f", "\xc2\x80", "\xc2\x85", "\xc2\x9f", "\xe2\x80\xa8",
                                       "\xe2\x80\xa9", "\xef\xbb\xbf", "\xef\xbf\xbf" };
    for (size_t i = 0; i < sizeof raw / sizeof *raw; i++) {
        char doc[128], want[64];
        snprintf(doc, sizeof doc, "{\"%s\": [\"a%sb\\n\\ud83d\\ude00%s\"]}", raw[i], raw[i], raw[i]);
        snprintf(want, sizeof want, "a%sb\n\xf0\x9f\x98\x80%s", raw[i], raw[i]);
        gguf_error err;
        json_value *v = parse(doc, &err);
        ck_assert_msg(v != NULL, "case %zu: %s", i, err.msg);
        ck_assert_str_eq(v->keys[0], raw[i]);
        ck_assert_str_eq(json_str(v->items[0]->items[0]), want);
        json_free(v);
    }
}
END_TEST

/* Found by fuzz_tokjson: a run of DEL bytes (one byte, six escaped)
 * overflowed the rewrite buffer sized for three. */
START_TEST(test_del_run_regression)
{
    static const char doc[] = "{\"\x7f\x7f\x7f\x7f\x7f\x7f\x7f\xef" "adde";
    gguf_error err;
    ck_assert_ptr_null(json_parse(doc, sizeof doc - 1, &err)); /* truncated: an error, not a crash */
    static const char ok[] = "{\"\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\": 1}";
    json_value *v = json_parse(ok, sizeof ok - 1, &err);
    ck_assert_msg(v != NULL, "%s", err.msg);
    ck_assert_str_eq(v->keys[0], "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f");
    json_free(v);
}
END_TEST

static const struct {
    const char *text, *want;
} bad[] = {
    { "", "empty document" },
    { "{\"a\": [1, 2}", "line 1" },
    { "{\n\"a\": 1,\n\"b\": tru\n}", "line 3: 'tru' is not a JSON value" },
    { "a: 1\n", "line 1: 'a' is not a JSON value" },
    { "{\"a\": &x 1, \"b\": *x}", "not JSON" },
    { "{\"a\": !!str 1}", "not JSON" },
    { "{a: 1}", "object keys are quoted strings" },
    { "{\"a\": 'single'}", "not JSON" },
    { "{\"a\": 01}", "'01' is not a JSON value" },
    { "{\"a\": 1.}", "is not a JSON value" },
    { "[1]\n---\n[2]", "more than one document" },
    { "[1,]", "line 1: expected a value, found ']'" },
    { "{\"a\": 1,}", "line 1: object keys are quoted strings" },
    { "{\"a\" 1}", "line 1: expected ':' after an object key" },
    { "[1 2]", "line 1: expected ',' or ']'" },
    { "{\"a\": [1,\n2", "line 2: expected ',' or ']' before the end of the document" },
    { "{\"a\": \"b", "line 1: a string without its closing quote" },
    { "[\"a\nb\"]", "line 1: a raw control character (0x0a) in a string" },
    { "[\"a\\xb\"]", "line 1: bad escape '\\x' in a string" },
    { "[\"\\u12\"]", "bad escape '\\u' in a string" },
    { "[\"\\ud83d\"]", "a lone UTF-16 surrogate \\ud83d" },
    { "[\"\\ude00\\ud83d\"]", "a lone UTF-16 surrogate \\ude00" },
    { "[\"\\ud83d\\u0041\"]", "a lone UTF-16 surrogate" },
    { "[\"\xc0\x80\"]", "invalid UTF-8 in a string" },      /* overlong NUL */
    { "[\"\xed\xa0\x80\"]", "invalid UTF-8 in a string" }, /* a surrogate */
    { "[\"\xf5\x80\x80\x80\"]", "invalid UTF-8 in a string" },
    { "[\"\xe2\x82\"]", "invalid UTF-8 in a string" },      /* cut short */
    { "{\"a\\u0000b\": 1}", "NUL in an object key" },
    { "[tru\xc3\xa9]", "is not a JSON value" },
    { "{\"a\": # comment\n1}", "not JSON" },
    { "   \n  ", "empty document" },
};

/* TextModel's {**config, **config["text_config"]}: text_config's members
 * win, the others stay; text_config is emptied, and everything is freed
 * once (the test runs under ASan/valgrind in make san). */
START_TEST(test_object_absorb)
{
    const char *doc = "{\"architectures\": [\"X\"], \"hidden_size\": 8, \"vocab_size\": 3,\n"
                      " \"text_config\": {\"hidden_size\": 2560, \"num_hidden_layers\": 34}}";
    gguf_error err;
    json_value *v = json_parse(doc, strlen(doc), &err);
    ck_assert_ptr_nonnull(v);
    json_value *tc = (json_value *)json_get(v, "text_config");
    ck_assert_int_eq(json_object_absorb(v, tc), 0);
    int64_t x;
    ck_assert(json_int(json_get(v, "hidden_size"), &x) && x == 2560);
    ck_assert(json_int(json_get(v, "num_hidden_layers"), &x) && x == 34);
    ck_assert(json_int(json_get(v, "vocab_size"), &x) && x == 3);
    ck_assert_uint_eq(json_get(v, "num_hidden_layers")->line, 2);
    ck_assert_uint_eq(tc->n, 0);
    ck_assert_ptr_nonnull(json_get(v, "text_config"));
    ck_assert_int_eq(json_object_absorb(v, tc), 0); /* empty: nothing to move */
    ck_assert_int_eq(json_object_absorb(v, v), -1);
    ck_assert_int_eq(json_object_absorb(v, (json_value *)json_get(v, "architectures")), -1);
    json_free(v);
}
END_TEST

START_TEST(test_errors)
{
    gguf_error err;
    ck_assert_ptr_null(parse(bad[_i].text, &err));
    ck_assert_msg(strstr(err.msg, bad[_i].want) != NULL, "case %d: got '%s', want '%s'", _i,
                  err.msg, bad[_i].want);
}
END_TEST

/* JSON's keys have no length limit (libyaml, the reader before, took a
 * key only within 1024 characters of its ':', and a 2000-byte key came
 * back as "'' is not a JSON value"); white space, line breaks included,
 * may come between a key and its ':'. */
START_TEST(test_long_keys)
{
    const size_t sizes[] = { 1023, 1024, 2000, 70000, 1 << 20 };
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        char *doc = malloc(n + 64);
        ck_assert_ptr_nonnull(doc);
        memcpy(doc, "{\"s\": 1,\n\"", 10);
        memset(doc + 10, 'k', n);
        size_t len = 10 + n + (size_t)sprintf(doc + 10 + n, "\"\n\n  : [\"x\"],\n\"z\": true}");
        gguf_error err;
        json_value *v = json_parse(doc, len, &err);
        free(doc);
        ck_assert_msg(v != NULL, "%zu: %s", n, err.msg);
        ck_assert_uint_eq(v->n, 3);
        ck_assert_uint_eq(strlen(v->keys[1]), n);
        ck_assert_str_eq(json_str(v->items[1]->items[0]), "x");
        ck_assert_uint_eq(v->items[1]->line, 4); /* lines are counted across the break */
        ck_assert_uint_eq(json_get(v, "z")->line, 5);
        json_free(v);
    }
}
END_TEST

/* Strings: escapes, \u0000 inside a value, raw tab, a byte-order mark;
 * numbers keep their text (integers of any size exactly). */
START_TEST(test_strings_numbers)
{
    static const char doc[] = "\xef\xbb\xbf{\"e\": \"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20ac\","
                              " \"nul\": \"a\\u0000b\", \"tab\": \"a\tb\", \"u64\": 18446744073709551615,"
                              " \"neg\": -0, \"nan\": NaN, \"inf\": -Infinity, \"f\": 1.5e-3}";
    gguf_error err;
    json_value *v = json_parse(doc, sizeof doc - 1, &err);
    ck_assert_msg(v != NULL, "%s", err.msg);
    ck_assert_str_eq(json_str(json_get(v, "e")), "\"\\/\b\f\n\r\tA\xc3\xa9\xe2\x82\xac");
    const json_value *nul = json_get(v, "nul");
    ck_assert_uint_eq(nul->len, 3);
    ck_assert(!memcmp(nul->str, "a\0b", 4));
    ck_assert_str_eq(json_str(json_get(v, "tab")), "a\tb");
    const json_value *u = json_get(v, "u64");
    ck_assert(u->integral && !strcmp(u->str, "18446744073709551615"));
    int64_t i;
    ck_assert(!json_int(u, &i)); /* beyond int64 */
    ck_assert(json_int(json_get(v, "neg"), &i) && i == 0);
    double d;
    ck_assert(json_num(json_get(v, "nan"), &d) && isnan(d));
    ck_assert(json_num(json_get(v, "inf"), &d) && isinf(d) && d < 0);
    ck_assert(!json_get(v, "nan")->integral);
    ck_assert(json_num(json_get(v, "f"), &d) && d == 1.5e-3 && !strcmp(json_get(v, "f")->str, "1.5e-3"));
    json_free(v);
}
END_TEST

/* An object of 200,000 members (gguf-edit --from-json's largest) comes
 * back whole and in order. */
START_TEST(test_many_members)
{
    enum { N = 200000 };
    char *doc = malloc((size_t)N * 64 + 8);
    ck_assert_ptr_nonnull(doc);
    size_t len = 0;
    doc[len++] = '{';
    for (int i = 0; i < N; i++)
        len += (size_t)sprintf(doc + len, "%s\"k.x%d\": {\"type\": \"u32\", \"value\": %d}", i ? ",\n" : "", i, i);
    doc[len++] = '}';
    gguf_error err;
    json_value *v = json_parse(doc, len, &err);
    free(doc);
    ck_assert_msg(v != NULL, "%s", err.msg);
    ck_assert_uint_eq(v->n, N);
    for (int i = 0; i < N; i += 9973) {
        char key[32];
        int64_t x;
        snprintf(key, sizeof key, "k.x%d", i);
        ck_assert_str_eq(v->keys[i], key);
        ck_assert(json_int(json_get(v->items[i], "value"), &x) && x == i);
        ck_assert_uint_eq(v->items[i]->line, (size_t)i + 1);
    }
    json_free(v);
}
END_TEST

START_TEST(test_depth_limit)
{
    enum { N = JSON_MAX_DEPTH + 10 };
    char s[2 * N + 1];
    for (int i = 0; i < N; i++) {
        s[i] = '[';
        s[N + i] = ']';
    }
    s[2 * N] = 0;
    gguf_error err;
    ck_assert_ptr_null(parse(s, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "nested deeper"));
    s[N - 10] = 0; /* JSON_MAX_DEPTH '[' and no ']' is a syntax error, not a crash */
    ck_assert_ptr_null(parse(s, &err));
}
END_TEST

/* A file past JSON_MAX_FILE is refused after reading at most that much (a
 * sparse file: no disk used), not read into all of memory. */
START_TEST(test_file_size_limit)
{
    char path[] = "/tmp/ggufkit-json-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "[", 1), 1);
    ck_assert_int_eq(ftruncate(fd, (off_t)JSON_MAX_FILE + 2), 0);
    close(fd);
    gguf_error err;
    json_value *v = json_load_file(path, &err);
    unlink(path);
    ck_assert_ptr_null(v);
    ck_assert_msg(strstr(err.msg, "larger than 256 MiB"), "%s", err.msg);
}
END_TEST

START_TEST(test_fixture_files)
{
    static const char *const files[] = { "models/wp-llama-5m/hf/config.json",
                                         "models/llama3rope-rand/config.json",
                                         "tokenizers/llama3/tokenizer.json" };
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char path[1024];
        gguf_error err;
        ck_assert_ptr_nonnull(fixture_path(path, sizeof path, files[f]));
        json_value *v = json_load_file(path, &err);
        ck_assert_msg(v != NULL, "%s: %s", files[f], err.msg);
        ck_assert_int_eq(v->type, JSON_OBJECT);
        if (f < 2) {
            int64_t n;
            ck_assert(json_int(json_get(v, "vocab_size"), &n) && n == 4096);
            ck_assert_str_eq(json_str(json_get(v, "architectures")->items[0]), "LlamaForCausalLM");
        } else {
            const json_value *merges = json_get(json_get(v, "model"), "merges");
            ck_assert_uint_eq(merges->n, 280147);
        }
        json_free(v);
    }
    gguf_error err;
    ck_assert_ptr_null(json_load_file("/nonexistent.json", &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot open"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_values);
    tcase_add_loop_test(tc, test_errors, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, test_depth_limit);
    tcase_add_test(tc, test_file_size_limit);
    tcase_add_test(tc, test_yaml_unsafe_chars);
    tcase_add_test(tc, test_del_run_regression);
    tcase_add_test(tc, test_object_absorb);
    tcase_add_test(tc, test_long_keys);
    tcase_add_test(tc, test_strings_numbers);
    tcase_add_test(tc, test_many_members);
    int skipped = 0;
    if (fixtures_present())
        tcase_add_test(tc, test_fixture_files);
    else
        skipped++;
    suite_add_tcase(s, tc);
    return run_suite(s, skipped);
}
