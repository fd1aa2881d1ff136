/*
 * test_chat_template.c — common/chat_template.c: the JSON forms (a string,
 * a list of named templates, null), name filtering, duplicates and bad
 * entries; a folder's sources in gguf-py's precedence with Python's newline
 * reading; the keys written and their order.
 */
#include "chat_template.h"
#include "testutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static json_value *parse(const char *s)
{
    gguf_error err;
    json_value *v = json_parse(s, strlen(s), &err);
    ck_assert_msg(v != NULL, "%s", err.msg);
    return v;
}

START_TEST(test_from_json)
{
    gguf_error err;
    chat_templates ct;
    json_value *v = parse("\"{{ x }}\"");
    ck_assert_int_eq(chat_templates_from_json(&ct, v, &err), 0);
    ck_assert_str_eq(ct.deflt, "{{ x }}");
    ck_assert_uint_eq(ct.n, 0);
    chat_templates_free(&ct);
    json_free(v);
    /* names: every character but [A-Za-z0-9] one '_' (a UTF-8 character
     * too); entries without a name or template skipped; default by name */
    v = parse("[{\"name\": \"tool use\", \"template\": \"T\"}, {\"name\": \"r\\u00e9g-2\", \"template\": \"R\"},"
              " {\"name\": \"x\", \"template\": null}, {\"template\": \"nameless\"},"
              " {\"name\": \"\", \"template\": \"empty\"}, {\"name\": \"default\", \"template\": \"D\"}]");
    ck_assert_int_eq(chat_templates_from_json(&ct, v, &err), 0);
    ck_assert_str_eq(ct.deflt, "D");
    ck_assert_uint_eq(ct.n, 2);
    ck_assert_str_eq(ct.names[0], "tool_use");
    ck_assert_str_eq(ct.texts[0], "T");
    ck_assert_str_eq(ct.names[1], "r_g_2");
    chat_templates_free(&ct);
    json_free(v);
    v = parse("null");
    ck_assert_int_eq(chat_templates_from_json(&ct, v, &err), 0);
    ck_assert(!ct.deflt && ct.n == 0);
    json_free(v);
    static const struct { const char *json, *msg; } bad[] = {
        { "5", "chat_template is neither a string nor a list of named templates" },
        { "[1]", "chat_template[0] is not an object with a name and a template" },
        { "[{\"name\": 1, \"template\": \"t\"}]", "chat_template[0].name is not a string" },
        { "[{\"name\": \"a\", \"template\": 2}]", "chat_template[0].template is not a string" },
        { "[{\"name\": \"a b\", \"template\": \"1\"}, {\"name\": \"a_b\", \"template\": \"2\"}]",
          "the chat template \"a_b\" is given twice" },
        { "\"a\\u0000b\"", "chat_template holds a NUL character" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        v = parse(bad[i].json);
        ck_assert_int_eq(chat_templates_from_json(&ct, v, &err), -1);
        ck_assert_str_eq(err.msg, bad[i].msg);
        ck_assert(!ct.deflt && ct.n == 0);
        json_free(v);
    }
}
END_TEST

static void put(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_from_folder)
{
    char dir[512], sub[600];
    snprintf(dir, sizeof dir, "%s/ct-%d", test_tmpdir(), (int)getpid());
    snprintf(sub, sizeof sub, "%s/additional_chat_templates", dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    put(dir, "chat_template.jinja", "a\r\nb\rc\n");
    put(dir, "additional_chat_templates/zeta.jinja", "Z");
    put(dir, "additional_chat_templates/alpha beta.jinja", "A");
    put(dir, "additional_chat_templates/.hidden.jinja", "H");
    put(dir, "additional_chat_templates/notes.txt", "N");
    put(dir, "chat_template.json", "{\"chat_template\": \"from json\"}");
    gguf_error err;
    chat_templates ct;
    json_value *tc = parse("{\"bos_token\": \"<s>\"}"), *empty = parse("{}");
    /* no tokenizer_config.json, or an empty one: none (gguf-py) */
    ck_assert_int_eq(chat_templates_from_folder(&ct, dir, NULL, &err), 0);
    ck_assert(!ct.deflt && ct.n == 0);
    ck_assert_int_eq(chat_templates_from_folder(&ct, dir, empty, &err), 0);
    ck_assert(!ct.deflt && ct.n == 0);
    /* the .jinja first, newlines as Python reads text; named ones by name */
    ck_assert_int_eq(chat_templates_from_folder(&ct, dir, tc, &err), 0);
    ck_assert_str_eq(ct.deflt, "a\nb\nc\n");
    ck_assert_uint_eq(ct.n, 2);
    ck_assert_str_eq(ct.names[0], "alpha_beta");
    ck_assert_str_eq(ct.names[1], "zeta");
    /* written: the named keys, their list, then the default */
    gguf_writer *w = gguf_writer_new();
    ck_assert_int_eq(chat_templates_write(&ct, w, &err), 0);
    char out[700];
    snprintf(out, sizeof out, "%s/ct.gguf", dir);
    ck_assert_msg(gguf_writer_begin(w, out, &err) == 0 && gguf_writer_finish(w, &err) == 0, "%s", err.msg);
    gguf_writer_free(w);
    gguf_file *f = gguf_open(out, 0, &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    static const char *const keys[] = { "tokenizer.chat_template.alpha_beta", "tokenizer.chat_template.zeta",
                                        "tokenizer.chat_templates", "tokenizer.chat_template" };
    ck_assert_uint_eq(gguf_n_kv(f), 4);
    for (uint64_t i = 0; i < 4; i++)
        ck_assert_str_eq(gguf_kv_at(f, i)->key, keys[i]);
    gguf_close(f);
    unlink(out);
    chat_templates_free(&ct);
    /* without the .jinja: chat_template.json; the config's key wins over both */
    snprintf(out, sizeof out, "%s/chat_template.jinja", dir);
    unlink(out);
    ck_assert_int_eq(chat_templates_from_folder(&ct, dir, tc, &err), 0);
    ck_assert_str_eq(ct.deflt, "from json");
    chat_templates_free(&ct);
    json_value *own = parse("{\"chat_template\": \"own\"}");
    ck_assert_int_eq(chat_templates_from_folder(&ct, dir, own, &err), 0);
    ck_assert_str_eq(ct.deflt, "own");
    chat_templates_free(&ct);
    /* a .jinja that is not UTF-8 */
    put(dir, "chat_template.jinja", "\xff");
    ck_assert_int_eq(chat_templates_from_folder(&ct, dir, tc, &err), -1);
    ck_assert_str_eq(err.msg, "chat_template.jinja: not UTF-8 text");
    json_free(own);
    json_free(tc);
    json_free(empty);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* additional_chat_templates/NAME.jinja: the stem filtered as a Python string
 * is (vocab.py reads the file name with surrogateescape): one '_' per UTF-8
 * character, one per byte that starts none. */
START_TEST(test_folder_names_non_ascii)
{
    char dir[512], sub[600];
    snprintf(dir, sizeof dir, "%s/ctn-%d", test_tmpdir(), (int)getpid());
    snprintf(sub, sizeof sub, "%s/additional_chat_templates", dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    put(dir, "chat_template.jinja", "D");
    put(dir, "additional_chat_templates/caf\xc3\xa9.jinja", "C");            /* café */
    put(dir, "additional_chat_templates/\xf0\x9f\x98\x80x.jinja", "E");    /* 😀x */
    put(dir, "additional_chat_templates/a\xff\x80\xe6\x97" "b.jinja", "I"); /* bytes that start none */
    gguf_error err;
    chat_templates ct;
    json_value *tc = parse("{\"bos_token\": \"<s>\"}");
    ck_assert_int_eq(chat_templates_from_folder(&ct, dir, tc, &err), 0);
    ck_assert_str_eq(ct.deflt, "D");
    ck_assert_uint_eq(ct.n, 3);
    /* by file name (bytes): a\xff..., caf\xc3\xa9, \xf0... */
    ck_assert_str_eq(ct.names[0], "a____b");
    ck_assert_str_eq(ct.texts[0], "I");
    ck_assert_str_eq(ct.names[1], "caf_");
    ck_assert_str_eq(ct.texts[1], "C");
    ck_assert_str_eq(ct.names[2], "_x");
    ck_assert_str_eq(ct.texts[2], "E");
    chat_templates_free(&ct);
    json_free(tc);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chat_template");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_from_json);
    tcase_add_test(tc, test_from_folder);
    tcase_add_test(tc, test_folder_names_non_ascii);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
