/*
 * testutil.h — shared bits of the Check unit tests: fixture lookup and a
 * main() that runs one suite and reports skipped tests visibly.
 *
 * Tests that need ../shared/fixtures call fixture_path(); when the fixtures
 * are absent the test is not run and is counted as skipped in a line
 * "SKIPPED: N" that tests/run.sh adds to the summary.
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"

static inline const char *fixtures_dir(void)
{
    const char *d = getenv("GGUFKIT_FIXTURES");
    return d && *d ? d : "../shared/fixtures";
}

/* Full path of a fixture into buf, or NULL when it does not exist. */
static inline const char *fixture_path(char *buf, size_t size, const char *rel)
{
    struct stat st;
    snprintf(buf, size, "%s/%s", fixtures_dir(), rel);
    return stat(buf, &st) == 0 ? buf : NULL;
}

static inline int fixtures_present(void)
{
    struct stat st;
    return stat(fixtures_dir(), &st) == 0 && S_ISDIR(st.st_mode);
}

/* Every GGUF file in the fixtures (llama.cpp-made models and vocab files). */
static const char *const fixture_ggufs[] = {
    "reference/stories260K-f32.gguf", "reference/wp-llama-5m-f16.gguf",
    "reference/wp-llama-5m-Q4_K_M.gguf", "reference/wp-llama-5m-Q8_0.gguf",
    "reference/wp-llama-5m-Q2_K.gguf", "models/llama-2-tiny-random/llama-2-tiny-random.gguf",
    "vocab/ggml-vocab-llama-spm.gguf", "vocab/ggml-vocab-gpt-2.gguf",
    "vocab/ggml-vocab-phi-3.gguf", "vocab/ggml-vocab-deepseek-coder.gguf",
    "vocab/ggml-vocab-falcon.gguf", "vocab/ggml-vocab-starcoder.gguf",
    "vocab/ggml-vocab-mpt.gguf", "vocab/ggml-vocab-gpt-neox.gguf",
};
#define N_FIXTURE_GGUFS (sizeof fixture_ggufs / sizeof *fixture_ggufs)

/* Runs the suite; prints "SKIPPED: n" for tests not added for lack of
 * fixtures. Returns the process exit status. */
static inline int run_suite(Suite *s, int skipped)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (skipped)
        printf("SKIPPED: %d (fixtures not found in %s)\n", skipped, fixtures_dir());
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* A JSON document the test writes, parsed (the test fails if it does not
 * parse); free with json_free. */
static inline json_value *json_of_text(const char *s)
{
    gguf_error err;
    json_value *v = json_parse(s, strlen(s), &err);
    ck_assert_msg(v != NULL, "%s", err.msg);
    return v;
}

/* Temporary directory for a test's files (removed by tests/run.sh). */
static inline const char *test_tmpdir(void)
{
    const char *d = getenv("GGUFKIT_TMP");
    return d && *d ? d : "/tmp";
}

#endif
