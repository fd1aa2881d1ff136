/*
 * test_edit_actions.c — gguf-edit's action parser: typed values parsed in
 * full and range-checked, arrays, glob deletes, renames, what an action
 * list does to a key list (edit_plan_build), and a failed action leaving
 * the list as it was.
 */
#include <unistd.h>

#include "actions.h"
#include "testutil.h"

START_TEST(test_typed_values)
{
    edit_actions as = { 0 };
    gguf_error err = { 0 };
    ck_assert_int_eq(edit_parse(&as, "--set", "a.u8:u8=255", &err), 0);
    ck_assert_int_eq(edit_parse(&as, "--set", "a.i16:i16=-32768", &err), 0);
    ck_assert_int_eq(edit_parse(&as, "--set", "a.f:f64=0.5", &err), 0);
    ck_assert_int_eq(edit_parse(&as, "--set", "a.s:str=x=y", &err), 0);
    ck_assert_int_eq(edit_parse(&as, "--set-array", "a.arr:u32=1,2,3", &err), 0);
    ck_assert_int_eq(edit_parse(&as, "--set", "a.u64:u64=18446744073709551615", &err), 0);
    ck_assert_int_eq(edit_parse(&as, "--set", "a.s2:str= padded ", &err), 0); /* strings keep it */
    ck_assert_uint_eq(as.n, 7);
    char d[160];
    edit_describe(&as.a[0].v, d, sizeof d);
    ck_assert_str_eq(d, "u8 255");
    edit_describe(&as.a[1].v, d, sizeof d);
    ck_assert_str_eq(d, "i16 -32768");
    edit_describe(&as.a[2].v, d, sizeof d);
    ck_assert_str_eq(d, "f64 0.5");
    edit_describe(&as.a[3].v, d, sizeof d);
    ck_assert_str_eq(d, "str \"x=y\"");
    edit_describe(&as.a[4].v, d, sizeof d);
    ck_assert_str_eq(d, "arr[u32] of 3");
    edit_describe(&as.a[5].v, d, sizeof d);
    ck_assert_str_eq(d, "u64 18446744073709551615");
    ck_assert_str_eq(as.a[6].v.strs[0], " padded ");

    static const struct { const char *opt, *arg, *msg; } bad[] = {
        { "--set", "a:u8=256", "\"256\" is not a u8" },
        { "--set", "a:u8=-1", "\"-1\" is not a u8" },
        { "--set", "a:i8=12x", "\"12x\" is not a i8" },
        { "--set", "a:f32=1e39", "\"1e39\" is not a f32" },
        { "--set", "a:f32=nan", "\"nan\" is not a f32" },
        { "--set", "a:bool=yes", "\"yes\" is not a bool" },
        { "--set", "a:u128=1", "unknown type 'u128'" },
        { "--set", "=1", "a key of 1 to 65535 bytes" },
        { "--set", "novalue", "is not KEY=VALUE" },
        { "--set-array", "a=1,2", "give the element type" },
        { "--set-array", "a:i32=1,,2", "\"\" is not a i32" },
        { "--set-strings", "a=list.txt", "want KEY=@FILE" },
        { "--rename", "a=", "is not OLD=NEW" },
        { "--chat-template", "/nonexistent/t.jinja", "--chat-template /nonexistent/t.jinja: cannot open" },
        { "--bogus", "x", "unknown action --bogus" },
        /* numbers are parsed in full: no white space around them */
        { "--set", "a.b:u32= 5", "\" 5\" is not a u32" },
        { "--set", "a.b:u32=5 ", "\"5 \" is not a u32" },
        { "--set", "a.b:i64=\t-5", "is not a i64" },
        { "--set", "a.b:f32= 1.5", "\" 1.5\" is not a f32" },
        { "--set", "a.b:f64=1.5\n", "is not a f64" },
        { "--set", "a.b:u8=\v1", "is not a u8" },
        { "--set-array", "a.b:u16=1, 2", "\" 2\" is not a u16" },
        { "--set", "a.b:u64=18446744073709551616", "is not a u64" },
        { "--set", "a.b:i64=9223372036854775808", "is not a i64" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(edit_parse(&as, bad[i].opt, bad[i].arg, &err), -1);
        ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "%s %s: \"%s\"", bad[i].opt, bad[i].arg,
                      err.msg);
        ck_assert_uint_eq(as.n, 7); /* nothing left behind */
    }
    edit_free(&as);
}
END_TEST

/* ---------------------------------------------------------------------------
 * Plans over a hand-made key list
 */

typedef struct fake_kvs {
    gguf_kv  kv[8];
    uint8_t  data[8][8];
    gguf_str str[8];
    const gguf_kv *ptr[8];
    size_t   n;
} fake_kvs;

static void fake_num(fake_kvs *f, const char *key, uint32_t type, uint64_t v)
{
    size_t i = f->n++;
    memcpy(f->data[i], &v, 8);
    f->kv[i] = (gguf_kv){ .key = key, .key_len = strlen(key), .type = type, .elem_type = type,
                          .n = 1, .data = f->data[i] };
    f->ptr[i] = &f->kv[i];
}

static void fake_str(fake_kvs *f, const char *key, const char *v)
{
    size_t i = f->n++;
    f->str[i] = (gguf_str){ v, strlen(v) };
    f->kv[i] = (gguf_kv){ .key = key, .key_len = strlen(key), .type = GGUF_VT_STR,
                          .elem_type = GGUF_VT_STR, .n = 1, .strs = &f->str[i] };
    f->ptr[i] = &f->kv[i];
}

/* Parses the actions (pairs of option, argument, ended by NULL). */
static void parse_all(edit_actions *as, const char *const *argv)
{
    gguf_error err = { 0 };
    for (size_t i = 0; argv[i]; i += 2)
        ck_assert_msg(edit_parse(as, argv[i], argv[i + 1], &err) == 0, "%s %s: %s", argv[i],
                      argv[i + 1], err.msg);
}

static const edit_key *find_key(const edit_plan *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (!p->keys[i].deleted && !strcmp(p->keys[i].name, name))
            return &p->keys[i];
    return NULL;
}

START_TEST(test_plan)
{
    fake_kvs f = { 0 };
    fake_str(&f, "general.name", "x");
    fake_str(&f, "general.source.url", "u");
    fake_num(&f, "a.old", GGUF_VT_U16, 3);
    fake_num(&f, "gone.key", GGUF_VT_U32, 1);
    edit_actions as = { 0 };
    parse_all(&as, (const char *const[]){ "--delete", "general.source.*", "--rename", "a.old=a.new",
                                          "--set", "a.new:u32=9", "--set", "gone.key=1",
                                          "--delete", "gone.*", "--set", "added.k=5", NULL });
    edit_plan p;
    gguf_error err = { 0 };
    ck_assert_msg(edit_plan_build(&p, &as, f.ptr, f.n, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(p.n_file, 4);
    ck_assert_uint_eq(p.n, 5);
    ck_assert(p.keys[1].deleted);                             /* glob */
    ck_assert(!p.keys[0].deleted && !p.keys[0].value);        /* untouched */
    ck_assert_str_eq(p.keys[2].name, "a.new");                /* renamed, then its new name set */
    ck_assert(p.keys[2].value && p.keys[2].value->type == GGUF_VT_U32);
    ck_assert(p.keys[3].deleted);                             /* set, then deleted by a later glob */
    ck_assert(!p.keys[4].kv && !strcmp(p.keys[4].name, "added.k"));
    ck_assert_uint_eq(p.keys[4].value->type, GGUF_VT_I32);    /* inferred from the text */
    ck_assert(edit_key_changed(&p.keys[2]) && edit_key_changed(&p.keys[4]));
    ck_assert(!edit_key_changed(&p.keys[0]) && !edit_key_changed(&p.keys[1]));
    edit_plan_free(&p);
    edit_free(&as);
}
END_TEST

/* The actions run in order: a set names what exists at that point. */
START_TEST(test_plan_order)
{
    fake_kvs f = { 0 };
    fake_num(&f, "a", GGUF_VT_U16, 3);
    fake_num(&f, "b.kept", GGUF_VT_U8, 1);
    edit_plan p;
    gguf_error err = { 0 };
    static const struct { const char *const argv[9]; const char *msg; } bad[] = {
        /* a set of b adds it; the rename onto it then collides (the set is not lost) */
        { { "--set", "b=1", "--rename", "a=b", NULL }, "two keys would be named b" },
        { { "--rename", "no.such=x.y", NULL }, "--rename no.such=x.y: there is no such key to rename" },
        { { "--delete", "a", "--rename", "a=z", NULL }, "--rename a=z: that key is deleted by an earlier action" },
        { { "--delete", "*", "--rename", "a=z", NULL }, "deleted by an earlier action" },
        { { "--rename", "a=z", "--rename", "a=y", NULL }, "--rename a=y: there is no such key" },
        { { "--rename", "a=b.kept", NULL }, "two keys would be named b.kept" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        edit_actions as = { 0 };
        parse_all(&as, bad[i].argv);
        ck_assert_int_eq(edit_plan_build(&p, &as, f.ptr, f.n, &err), -1);
        ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "case %zu: %s", i, err.msg);
        edit_free(&as);
    }
    /* a rename, then a set of the old name: a new key, and the renamed one keeps its value */
    edit_actions as = { 0 };
    parse_all(&as, (const char *const[]){ "--rename", "a=b", "--set", "a=7", "--set", "b=5", NULL });
    ck_assert_msg(edit_plan_build(&p, &as, f.ptr, f.n, &err) == 0, "%s", err.msg);
    const edit_key *a = find_key(&p, "a"), *b = find_key(&p, "b");
    ck_assert(a && !a->kv && a->value->type == GGUF_VT_I32);
    ck_assert(b && b->kv == f.ptr[0] && b->value->type == GGUF_VT_U16); /* typed from the key it names */
    edit_plan_free(&p);
    edit_free(&as);
    /* a set, a rename of the added key, a delete and a revival in place */
    parse_all(&as, (const char *const[]){ "--set", "n.k:str=v", "--rename", "n.k=n.j", "--delete",
                                          "b.kept", "--set", "b.kept:u8=2", NULL });
    ck_assert_msg(edit_plan_build(&p, &as, f.ptr, f.n, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(p.n, 3);
    ck_assert_str_eq(p.keys[2].name, "n.j");
    ck_assert(!p.keys[1].deleted && p.keys[1].value && p.keys[1].value->type == GGUF_VT_U8);
    edit_plan_free(&p);
    edit_free(&as);
}
END_TEST

/* A key set to the value it has is no change (so a protected key needs no
 * --force for it); another type or value is. */
START_TEST(test_plan_same_value)
{
    fake_kvs f = { 0 };
    fake_num(&f, "llama.block_count", GGUF_VT_U32, 7);
    fake_str(&f, "general.name", "n");
    fake_num(&f, "x.f", GGUF_VT_F32, 0x3fc00000); /* 1.5f */
    static const struct { const char *opt, *arg; bool changed; } cases[] = {
        { "--set", "llama.block_count=7", false },
        { "--set", "llama.block_count:u32=7", false },
        { "--set", "llama.block_count:u64=7", true },
        { "--set", "llama.block_count=8", true },
        { "--set", "general.name=n", false },
        { "--set", "general.name=n2", true },
        { "--set", "x.f=1.5", false },
        { "--set", "x.f:f64=1.5", true },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        edit_actions as = { 0 };
        edit_plan p;
        gguf_error err = { 0 };
        parse_all(&as, (const char *const[]){ cases[i].opt, cases[i].arg, NULL });
        ck_assert_int_eq(edit_plan_build(&p, &as, f.ptr, f.n, &err), 0);
        bool changed = false;
        for (size_t k = 0; k < p.n; k++)
            changed |= edit_key_changed(&p.keys[k]);
        ck_assert_msg(changed == cases[i].changed, "case %zu (%s)", i, cases[i].arg);
        edit_plan_free(&p);
        edit_free(&as);
    }
}
END_TEST

/* Many keys: every set lands on its own key, a set of a key set before
 * replaces it, and a collision among them is found (the plan hashes names;
 * a quadratic one takes minutes here). */
START_TEST(test_plan_many_keys)
{
    enum { N = 200000 };
    edit_actions as = { 0 };
    gguf_error err = { 0 };
    char arg[64];
    for (int i = 0; i < N; i++) {
        snprintf(arg, sizeof arg, "k.x%d:u32=%d", i, i);
        ck_assert_int_eq(edit_parse(&as, "--set", arg, &err), 0);
    }
    ck_assert_int_eq(edit_parse(&as, "--set", "k.x17:u32=99", &err), 0);
    ck_assert_int_eq(edit_parse(&as, "--delete", "k.x18", &err), 0);
    edit_plan p;
    ck_assert_int_eq(edit_plan_build(&p, &as, NULL, 0, &err), 0);
    ck_assert_uint_eq(p.n, N);
    size_t alive = 0;
    for (size_t k = 0; k < p.n; k++) {
        uint32_t v;
        memcpy(&v, p.keys[k].value->data, 4);
        snprintf(arg, sizeof arg, "k.x%zu", k);
        ck_assert_str_eq(p.keys[k].name, arg);
        ck_assert_uint_eq(v, k == 17 ? 99 : k);
        alive += !p.keys[k].deleted;
    }
    ck_assert_uint_eq(alive, N - 1);
    edit_plan_free(&p);
    ck_assert_int_eq(edit_parse(&as, "--rename", "k.x5=k.x199999", &err), 0);
    ck_assert_int_eq(edit_plan_build(&p, &as, NULL, 0, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "two keys would be named k.x199999"));
    edit_free(&as);
}
END_TEST

/* ---------------------------------------------------------------------------
 * --from-json
 */

static char json_path[] = "/tmp/ggufkit-edit-json-XXXXXX";

static void write_json(const char *text, size_t len)
{
    strcpy(json_path, "/tmp/ggufkit-edit-json-XXXXXX");
    int fd = mkstemp(json_path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
}

/* Integers are stored exactly at any size the type holds (not through a
 * double: 2^53 + 1 stays odd). */
START_TEST(test_json_exact)
{
    static const char doc[] =
        "{\"a.u\": {\"type\": \"u64\", \"value\": 9007199254740993},\n"
        " \"a.m\": {\"type\": \"u64\", \"value\": 18446744073709551615},\n"
        " \"a.i\": {\"type\": \"i64\", \"value\": -9223372036854775808},\n"
        " \"a.arr\": {\"type\": \"arr[i64]\", \"value\": [9007199254740993, -9007199254740995]},\n"
        " \"a.f\": {\"type\": \"f32\", \"value\": 0.1}}";
    write_json(doc, sizeof doc - 1);
    edit_actions as = { 0 };
    gguf_error err = { 0 };
    int rc = edit_parse(&as, "--from-json", json_path, &err);
    unlink(json_path);
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_uint_eq(as.n, 5);
    uint64_t u;
    int64_t i[2];
    float f;
    memcpy(&u, as.a[0].v.data, 8);
    ck_assert_uint_eq(u, 9007199254740993ull);
    memcpy(&u, as.a[1].v.data, 8);
    ck_assert_uint_eq(u, UINT64_MAX);
    memcpy(i, as.a[2].v.data, 8);
    ck_assert(i[0] == INT64_MIN);
    memcpy(i, as.a[3].v.data, 16);
    ck_assert(i[0] == 9007199254740993ll && i[1] == -9007199254740995ll);
    memcpy(&f, as.a[4].v.data, 4);
    ck_assert(f == 0.1f);
    edit_free(&as);
}
END_TEST

START_TEST(test_json_errors)
{
    static const struct { const char *doc, *msg; } bad[] = {
        { "{\"a\": {\"type\": \"u64\", \"value\": 18446744073709551616}}", "\"18446744073709551616\" is not a u64" },
        { "{\"a\": {\"type\": \"u8\", \"value\": 300}}", "key 'a': \"300\" is not a u8" },
        { "{\"a\": {\"type\": \"u32\", \"value\": 1.5}}", "line 1: expected a whole number (no fraction or exponent) for u32, got 1.5" },
        { "{\"a\": {\"type\": \"u32\", \"value\": 1e3}}", "expected a whole number" },
        { "{\"a\": {\"type\": \"u32\", \"value\": \"7\"}}", "expected a number" },
        { "{\"a\": {\"type\": \"u128\", \"value\": 1}}", "want {\"type\"" },
        { "{\"\": {\"type\": \"u8\", \"value\": 1}}", "a key of 0 bytes (GGUF keys are 1 to 65535 bytes)" },
        { "{\"a\": {\"type\": \"arr[u8]\", \"value\": [1], \"count\": 2}}", "count says 2 but the value holds 1 items" },
        { "{\"a\": ", "line 1: the document ends where a value should be" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        write_json(bad[k].doc, strlen(bad[k].doc));
        edit_actions as = { 0 };
        gguf_error err = { 0 };
        int rc = edit_parse(&as, "--from-json", json_path, &err);
        unlink(json_path);
        ck_assert_int_eq(rc, -1);
        ck_assert_msg(strstr(err.msg, bad[k].msg) && strstr(err.msg, json_path), "case %zu: %s", k,
                      err.msg);
        ck_assert_uint_eq(as.n, 0);
        ck_assert_int_eq(err.code, GGUF_ERR_FORMAT); /* the file's content: exit 1, not a usage error */
        edit_free(&as);
    }
}
END_TEST

/* A key longer than GGUF allows is named as such (the JSON parser reads
 * keys of any length); one of 65535 bytes is fine. */
START_TEST(test_json_long_key)
{
    const size_t sizes[] = { 65535, 65536, 1 << 20 };
    for (size_t k = 0; k < 3; k++) {
        size_t n = sizes[k];
        char *doc = malloc(n + 64);
        ck_assert_ptr_nonnull(doc);
        doc[0] = '{', doc[1] = '"';
        memset(doc + 2, 'k', n);
        int tail = sprintf(doc + 2 + n, "\": {\"type\": \"u8\", \"value\": 1}}");
        write_json(doc, 2 + n + (size_t)tail);
        free(doc);
        edit_actions as = { 0 };
        gguf_error err = { 0 };
        int rc = edit_parse(&as, "--from-json", json_path, &err);
        unlink(json_path);
        if (n <= 65535) {
            ck_assert_msg(rc == 0, "%s", err.msg);
            ck_assert_uint_eq(strlen(as.a[0].key), n);
        } else {
            char want[64];
            snprintf(want, sizeof want, "a key of %zu bytes (GGUF keys are 1 to 65535 bytes)", n);
            ck_assert_int_eq(rc, -1);
            ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
        }
        edit_free(&as);
    }
}
END_TEST

/* --from-json files are held to 16 MiB, as documented (a sparse file: no
 * disk used). */
START_TEST(test_json_file_limit)
{
    strcpy(json_path, "/tmp/ggufkit-edit-json-XXXXXX");
    int fd = mkstemp(json_path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "{", 1), 1);
    ck_assert_int_eq(ftruncate(fd, (off_t)EDIT_MAX_FILE + 1), 0);
    close(fd);
    edit_actions as = { 0 };
    gguf_error err = { 0 };
    int rc = edit_parse(&as, "--from-json", json_path, &err);
    unlink(json_path);
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err.msg, "larger than 16 MiB") && strstr(err.msg, json_path), "%s", err.msg);
    ck_assert_int_eq(err.code, GGUF_ERR_LIMIT); /* an error about the file: exit 1 */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("edit_actions");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_typed_values);
    tcase_add_test(tc, test_plan);
    tcase_add_test(tc, test_plan_order);
    tcase_add_test(tc, test_plan_same_value);
    tcase_add_test(tc, test_plan_many_keys);
    tcase_add_test(tc, test_json_exact);
    tcase_add_test(tc, test_json_errors);
    tcase_add_test(tc, test_json_long_key);
    tcase_add_test(tc, test_json_file_limit);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
