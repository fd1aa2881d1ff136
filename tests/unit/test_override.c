/*
 * test_override.c — `--metadata` overrides: which keys are written with
 * which types, list forms, entry lists, and the type errors.
 */
#include "override.h"
#include "testutil.h"

START_TEST(test_apply)
{
    json_value *doc = json_of_text("{\"general.name\": \"N\", \"general.license\": [\"mit\", \"gpl\"],"
                            " \"general.languages\": [\"en\", \"fr\"], \"ignored.key\": [1],"
                            " \"general.datasets\": [{\"name\": \"D0\"}, {\"url\": \"u\", \"doi\": \"d\"}]}");
    gguf_error err;
    ck_assert_str_eq(override_name(doc), "N");
    gguf_writer *w = gguf_writer_new();
    ck_assert_int_eq(gguf_writer_set_str(w, "general.name", "old"), 0);
    ck_assert_msg(override_apply(doc, w, &err) == 0, "%s", err.msg);
    char path[512];
    snprintf(path, sizeof path, "%s/override.gguf", test_tmpdir());
    ck_assert_msg(gguf_writer_begin(w, path, &err) == 0, "%s", err.msg);
    ck_assert_msg(gguf_writer_finish(w, &err) == 0, "%s", err.msg);
    gguf_file *f = gguf_open(path, 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    gguf_str s;
    ck_assert(gguf_get_str(f, "general.name", &s, &err) == 0 && gguf_str_eq(s, "N"));
    ck_assert(gguf_get_str(f, "general.license", &s, &err) == 0 && gguf_str_eq(s, "mit,gpl"));
    const gguf_kv *langs = gguf_lookup_kv(f, "general.languages");
    ck_assert(langs && langs->type == GGUF_VT_ARR && langs->elem_type == GGUF_VT_STR);
    ck_assert_uint_eq(langs->n, 2);
    uint32_t count;
    ck_assert(gguf_get_u32(f, "general.dataset.count", &count, &err) == 0 && count == 2);
    ck_assert(gguf_get_str(f, "general.dataset.0.name", &s, &err) == 0 && gguf_str_eq(s, "D0"));
    ck_assert(gguf_get_str(f, "general.dataset.1.doi", &s, &err) == 0 && gguf_str_eq(s, "d"));
    ck_assert_ptr_null(gguf_lookup_kv(f, "general.dataset.1.name"));
    ck_assert_ptr_null(gguf_lookup_kv(f, "ignored.key"));
    ck_assert_uint_eq(gguf_n_kv(f), 7); /* name, license, languages, count, three entries */
    gguf_close(f);
    gguf_writer_free(w);
    json_free(doc);
}
END_TEST

static const struct {
    const char *doc, *want;
} bad[] = {
    { "[1]", "not a JSON object" },
    { "{\"general.author\": 1}", "general.author must be a string" },
    { "{\"general.license\": [\"a\", 2]}", "general.license must be a string" },
    { "{\"general.tags\": \"x\"}", "general.tags must be a list of strings" },
    { "{\"general.base_models\": {}}", "must be a list of objects" },
    { "{\"general.base_models\": [\"x\"]}", "entries must be objects" },
    { "{\"general.datasets\": [{\"name\": \"a\"}, {\"url\": false}]}", "general.datasets[1].url must be a string" },
};

START_TEST(test_bad)
{
    json_value *doc = json_of_text(bad[_i].doc);
    gguf_error err = { 0 };
    ck_assert_int_eq(override_check(doc, &err), -1);
    ck_assert_msg(strstr(err.msg, bad[_i].want), "'%s' lacks '%s'", err.msg, bad[_i].want);
    json_free(doc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("override");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_apply);
    tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof *bad));
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
