/*
 * test_recipe.c — --tensor-type rules and YAML recipes: what a valid recipe
 * sets, the order rules apply in, and an error naming the line for every
 * kind of bad recipe.
 */
#include "recipe.h"
#include "testutil.h"
#include <ggufkit/gguf.h>

static int parse(recipe *r, const char *yaml, gguf_error *err)
{
    recipe_init(r);
    err->msg[0] = 0;
    return recipe_parse_yaml(r, yaml, strlen(yaml), err);
}

START_TEST(test_full_recipe)
{
    recipe r;
    gguf_error err;
    const char *yaml = "# comment\n"
                       "preset: Q4_K_M\n"
                       "output_tensor_type: q8_0\n"
                       "token_embedding_type: Q4_k\n"
                       "pure: false\n"
                       "tensors:\n"
                       "  - match: 'blk\\.[0-3]\\.ffn_down\\.weight'\n"
                       "    type: q6_K\n"
                       "  - match: ffn_down\n"
                       "    type: Q5_K\n"
                       "  - {match: 'attn_v\\.weight$', type: q8_0}\n";
    ck_assert_msg(parse(&r, yaml, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(r.preset, "Q4_K_M");
    ck_assert_int_eq(r.output_type, GGUF_DT_Q8_0);
    ck_assert_int_eq(r.token_embedding_type, GGUF_DT_Q4_K);
    ck_assert_int_eq(r.pure, 0);
    ck_assert_int_eq(r.n_rules, 3);
    /* first match wins */
    ck_assert_int_eq(recipe_match(&r, "blk.2.ffn_down.weight"), GGUF_DT_Q6_K);
    ck_assert_int_eq(recipe_match(&r, "blk.12.ffn_down.weight"), GGUF_DT_Q5_K);
    ck_assert_int_eq(recipe_match(&r, "blk.0.attn_v.weight"), GGUF_DT_Q8_0);
    ck_assert_int_eq(recipe_match(&r, "blk.0.attn_q.weight"), -1);
    recipe_free(&r);
}
END_TEST

START_TEST(test_command_line_rules_come_first)
{
    recipe r;
    gguf_error err;
    recipe_init(&r);
    ck_assert_int_eq(recipe_add_rule_arg(&r, "ffn_down=q8_0", &err), 0);
    ck_assert_int_eq(recipe_add_rule_arg(&r, "a=b=q4_0", &err), 0); /* last '=' splits */
    const char *yaml = "tensors:\n  - match: ffn\n    type: q2_K\n";
    ck_assert_int_eq(recipe_parse_yaml(&r, yaml, strlen(yaml), &err), 0);
    ck_assert_int_eq(recipe_match(&r, "blk.1.ffn_down.weight"), GGUF_DT_Q8_0);
    ck_assert_int_eq(recipe_match(&r, "blk.1.ffn_up.weight"), GGUF_DT_Q2_K);
    ck_assert_int_eq(recipe_match(&r, "xa=b"), GGUF_DT_Q4_0);
    ck_assert_int_eq(r.output_type, -1);
    ck_assert_int_eq(r.pure, -1);
    ck_assert_ptr_null(r.preset);
    recipe_free(&r);
}
END_TEST

/* Each bad recipe fails with a message that contains the given text. */
static const struct {
    const char *yaml, *want;
} bad[] = {
    { "", "empty recipe" },
    { "- a\n- b\n", "line 1: a recipe is a mapping" },
    { "preset: Q4_K_M\ncolour: blue\n", "line 2: unknown key 'colour'" },
    { "output_tensor_type: q9_9\n", "q9_9" },
    { "output_tensor_type: [q8_0]\n", "line 1: output_tensor_type must be a type name" },
    { "pure: maybe\n", "line 1: pure must be true or false" },
    { "tensors: q8_0\n", "line 1: tensors must be a list" },
    { "tensors:\n  - q8_0\n", "line 2: each tensors entry is {match: REGEX, type: TYPE}" },
    { "tensors:\n  - match: x\n", "line 2: a tensors entry needs match: and type:" },
    { "tensors:\n  - match: x\n    type: q8_0\n    why: no\n", "line 4: unknown key 'why'" },
    { "tensors:\n  - match: 'a('\n    type: q8_0\n", "line 2: " },
    { "tensors:\n  - match: x\n    type: nope\n", "line 2: " },
    { "preset: [1\n", "line " },
    { "a: b\n  c: d\n", "line 2" },
    { "preset: {}\n", "line 1: preset must be a name" },
};

START_TEST(test_bad_recipe)
{
    recipe r;
    gguf_error err;
    ck_assert_int_eq(parse(&r, bad[_i].yaml, &err), -1);
    ck_assert_msg(strstr(err.msg, bad[_i].want) != NULL, "recipe %d: got '%s', want '%s'", _i,
                  err.msg, bad[_i].want);
    recipe_free(&r);
}
END_TEST

START_TEST(test_bad_rule_args)
{
    recipe r;
    gguf_error err;
    recipe_init(&r);
    ck_assert_int_eq(recipe_add_rule_arg(&r, "noequals", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "PATTERN=TYPE"));
    ck_assert_int_eq(recipe_add_rule_arg(&r, "=q8_0", &err), -1);
    ck_assert_int_eq(recipe_add_rule_arg(&r, "x=", &err), -1);
    ck_assert_int_eq(recipe_add_rule_arg(&r, "x=q7_7", &err), -1);
    ck_assert_int_eq(recipe_add_rule_arg(&r, "[=q8_0", &err), -1);
    ck_assert_int_eq(r.n_rules, 0);
    recipe_free(&r);
}
END_TEST

START_TEST(test_missing_file)
{
    recipe r;
    gguf_error err;
    recipe_init(&r);
    ck_assert_int_eq(recipe_load_yaml(&r, "/nonexistent/recipe.yaml", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot open"));
    recipe_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("recipe");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_full_recipe);
    tcase_add_test(tc, test_command_line_rules_come_first);
    tcase_add_loop_test(tc, test_bad_recipe, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, test_bad_rule_args);
    tcase_add_test(tc, test_missing_file);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
