/*
 * test_emit.c — gguf-inspect's emitters (inspect/emit*.c): the same
 * document of a map and a table in text, JSON, YAML and Markdown, exact
 * output for each; escaping of control bytes, quotes, invalid UTF-8 and
 * Markdown specials; lists and units; a document with no section writes
 * nothing; streamed tables equal buffered ones.
 */
#include <stdio.h>
#include <stdlib.h>

#include "emit.h"
#include "emit_impl.h"
#include "testutil.h"

/* Runs fill() into an emitter of fmt on a memory stream; the output. */
static char *render(emit_format fmt, void (*fill)(emit *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(out);
    emit *e = emit_open(out, fmt, "Doc");
    ck_assert_ptr_nonnull(e);
    fill(e);
    ck_assert_int_eq(emit_close(e), 0);
    fclose(out);
    return buf;
}

static const emit_column cols[] = {
    { "name", NULL, 0 },
    { "n", NULL, EMIT_COL_RIGHT },
};

/* The map both documents start with. */
static void head_map(emit *e)
{
    emit_map_begin(e, NULL, NULL, 0);
    emit_field(e, "file", NULL, ev_str("a.gguf"));
    emit_field(e, "size", "file size", ev_unit(ev_uint(2048), EU_BYTES));
    emit_field(e, "ok", NULL, ev_bool(true));
    emit_map_end(e);
}

static void small_doc(emit *e)
{
    head_map(e);
    emit_table_begin(e, "rows", "Rows", cols, 2, 0);
    emit_value r1[] = { ev_str("x"), ev_int(-3) }, r2[] = { ev_str("longer"), ev_uint(12) };
    emit_row(e, r1);
    emit_row(e, r2);
    emit_table_end(e);
}

START_TEST(test_text)
{
    char *s = render(EMIT_TEXT, small_doc);
    ck_assert_str_eq(s, "file:      a.gguf\n"
                        "file size: 2048 (2.00 KiB)\n"
                        "ok:        true\n"
                        "\n"
                        "Rows\n"
                        "  NAME     N\n"
                        "  x       -3\n"
                        "  longer  12\n");
    free(s);
}
END_TEST

START_TEST(test_json)
{
    char *s = render(EMIT_JSON, small_doc);
    ck_assert_str_eq(s, "{\n"
                        "  \"file\": \"a.gguf\",\n"
                        "  \"size\": 2048,\n"
                        "  \"ok\": true,\n"
                        "  \"rows\": [\n"
                        "    {\"name\": \"x\", \"n\": -3},\n"
                        "    {\"name\": \"longer\", \"n\": 12}\n"
                        "  ]\n"
                        "}\n");
    free(s);
}
END_TEST

START_TEST(test_yaml_and_markdown)
{
    char *y = render(EMIT_YAML, small_doc);
    ck_assert_str_eq(y, "file: \"a.gguf\"\n"
                        "size: 2048\n"
                        "ok: true\n"
                        "rows:\n"
                        "  - {name: \"x\", n: -3}\n"
                        "  - {name: \"longer\", n: 12}\n");
    free(y);
    char *m = render(EMIT_MARKDOWN, small_doc);
    ck_assert_str_eq(m, "# `Doc`\n"
                        "\n"
                        "- file: `a.gguf`\n"
                        "- file size: 2048 (2.00 KiB)\n"
                        "- ok: true\n"
                        "\n"
                        "## Rows\n"
                        "\n"
                        "| name | n |\n"
                        "| --- | ---: |\n"
                        "| `x` | -3 |\n"
                        "| `longer` | 12 |\n\n");
    free(m);
}
END_TEST

static void odd_strings(emit *e)
{
    emit_map_begin(e, NULL, NULL, 0);
    emit_field(e, "ctl", NULL, ev_strn("a\001b\nc\"d\\", 8));
    emit_field(e, "bad", NULL, ev_strn("\377ok", 3));
    emit_field(e, "pipe", NULL, ev_str("x|y`z"));
    emit_map_end(e);
}

START_TEST(test_escaping)
{
    char *j = render(EMIT_JSON, odd_strings);
    ck_assert_ptr_nonnull(strstr(j, "\"ctl\": \"a\\u0001b\\nc\\\"d\\\\\",\n"));
    ck_assert_ptr_nonnull(strstr(j, "\"bad\": \"\\u00ffok\""));
    free(j);
    char *t = render(EMIT_TEXT, odd_strings);
    ck_assert_ptr_nonnull(strstr(t, "a\\x01b\\nc\"d\\\\"));
    ck_assert_ptr_nonnull(strstr(t, "\\xffok"));
    free(t);
    char *m = render(EMIT_MARKDOWN, odd_strings);
    ck_assert_ptr_nonnull(strstr(m, "- pipe: ``x\\|y`z``\n")); /* a raw pipe would split a cell */
    free(m);
    char *y = render(EMIT_YAML, odd_strings);
    ck_assert_ptr_nonnull(strstr(y, "ctl: \"a\\x01b\\nc\\\"d\\\\\"\n"));
    free(y);
}
END_TEST

static void nothing(emit *e)
{
    (void)e;
}

static void lists(emit *e)
{
    emit_value items[3] = { ev_int(1), ev_int(2), ev_int(3) };
    emit_map_begin(e, NULL, NULL, 0);
    emit_field(e, "l", NULL, ev_list(items, 3, 10));
    emit_field(e, "f", NULL, ev_f32(0.1f));
    emit_field(e, "none", NULL, ev_null());
    emit_field(e, "skipped", NULL, ev_absent());
    emit_map_end(e);
}

START_TEST(test_values)
{
    char *s = render(EMIT_TEXT, nothing);
    ck_assert_str_eq(s, ""); /* no section: nothing at all */
    free(s);
    s = render(EMIT_TEXT, lists);
    ck_assert_ptr_nonnull(strstr(s, "[1, 2, 3, ... (10 total)]"));
    ck_assert_ptr_nonnull(strstr(s, "0.1\n"));
    ck_assert_ptr_null(strstr(s, "skipped"));
    free(s);
    s = render(EMIT_JSON, lists);
    ck_assert_ptr_nonnull(strstr(s, "\"none\": null"));
    ck_assert_ptr_null(strstr(s, "skipped"));
    free(s);
    char f[40];
    format_float(f, 10000.0, false);
    ck_assert_str_eq(f, "10000.0");
    format_float(f, 1e-7, false);
    ck_assert_str_eq(f, "1.0e-07");
}
END_TEST

/* A table asked row by row gives what the buffered one gives. */
static int row_fn(void *ctx, uint64_t i, emit_value *cells)
{
    (void)ctx;
    static const char *const names[] = { "x", "longer" };
    cells[0] = ev_str(names[i]);
    cells[1] = i == 0 ? ev_int(-3) : ev_uint(12);
    return 0;
}

static void streamed_doc(emit *e)
{
    head_map(e);
    ck_assert_int_eq(emit_table_rows(e, "rows", "Rows", cols, 2, 0, 2, row_fn, NULL), 0);
}

START_TEST(test_streamed_rows)
{
    for (int fmt = EMIT_TEXT; fmt <= EMIT_MARKDOWN; fmt++) {
        char *a = render((emit_format)fmt, small_doc), *b = render((emit_format)fmt, streamed_doc);
        ck_assert_str_eq(a, b);
        free(a);
        free(b);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("emit");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_text);
    tcase_add_test(tc, test_json);
    tcase_add_test(tc, test_yaml_and_markdown);
    tcase_add_test(tc, test_escaping);
    tcase_add_test(tc, test_values);
    tcase_add_test(tc, test_streamed_rows);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
