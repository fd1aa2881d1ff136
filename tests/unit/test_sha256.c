/*
 * test_sha256.c — SHA-256 against the FIPS 180-4 / NIST example vectors.
 */
#include <ggufkit/gguf.h>
#include "testutil.h"

START_TEST(test_vectors)
{
    char hex[65];
    gguf_sha256_hex("", 0, hex);
    ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    gguf_sha256_hex("abc", 3, hex);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    gguf_sha256_hex(two, strlen(two), hex);
    ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}
END_TEST

START_TEST(test_million_a_streamed)
{
    /* one million 'a' fed in uneven pieces exercises the buffering */
    static char a[1000];
    memset(a, 'a', sizeof a);
    gguf_sha256_ctx c;
    gguf_sha256_init(&c);
    size_t done = 0, step = 1;
    while (done < 1000000) {
        size_t k = step < 1000000 - done ? step : 1000000 - done;
        k = k > sizeof a ? sizeof a : k;
        gguf_sha256_update(&c, a, k);
        done += k;
        step = step * 7 % 997 + 1;
    }
    uint8_t d[32];
    char hex[65];
    gguf_sha256_final(&c, d);
    gguf_sha256_to_hex(d, hex);
    ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sha256");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_vectors);
    tcase_add_test(tc, test_million_a_streamed);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
