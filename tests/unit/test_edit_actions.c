/*
 * test_edit_actions.c — gguf-edit's action parser: typed values parsed in
 * full and range-checked, arrays, glob deletes, renames, what an action
 * list does to a key, and a failed action leaving the list as it was.
 */
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
    ck_assert_uint_eq(as.n, 5);
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
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(edit_parse(&as, bad[i].opt, bad[i].arg, &err), -1);
        ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "%s %s: \"%s\"", bad[i].opt, bad[i].arg,
                      err.msg);
        ck_assert_uint_eq(as.n, 5); /* nothing left behind */
    }
    edit_free(&as);
}
END_TEST

START_TEST(test_fates)
{
    edit_actions as = { 0 };
    gguf_error err = { 0 };
    ck_assert_int_eq(edit_parse(&as, "--delete", "general.source.*", &err), 0);
    ck_assert_int_eq(edit_parse(&as, "--rename", "a.old=a.new", &err), 0);
    ck_assert_int_eq(edit_parse(&as, "--set", "a.new:u32=9", &err), 0);
    ck_assert_int_eq(edit_parse(&as, "--set", "gone.key=1", &err), 0);
    ck_assert_int_eq(edit_parse(&as, "--delete", "gone.*", &err), 0);
    edit_fate f = edit_fate_of(&as, "general.source.url");
    ck_assert(f.deleted);
    f = edit_fate_of(&as, "general.name");
    ck_assert(!f.deleted && !strcmp(f.name, "general.name") && !f.value);
    f = edit_fate_of(&as, "a.old"); /* renamed, then its new name set */
    ck_assert(!f.deleted && !strcmp(f.name, "a.new") && f.value && f.value->type == GGUF_VT_U32);
    f = edit_fate_of(&as, "gone.key"); /* set, then deleted by a later glob */
    ck_assert(f.deleted);
    edit_free(&as);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("edit_actions");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_typed_values);
    tcase_add_test(tc, test_fates);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
