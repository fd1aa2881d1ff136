/*
 * mkbad.c — writes the valid GGUF and every malformed variant of
 * tests/unit/badgguf.h into a directory, one DIR/NAME.gguf per case: the
 * seed corpus of the fuzzer, and files to try the tools on by hand.
 *
 *   mkbad DIR      (DIR is created if missing)
 *
 * Not for: deciding what is valid — test_validate.c checks the reader's
 * verdict on each of these images.
 */
#include "../unit/badgguf.h"

#include <errno.h>
#include <sys/stat.h>

static int write_image(const char *path, const bg_buf *b)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    size_t n = fwrite(b->p, 1, b->len, fp);
    int rc = fclose(fp);
    return n == b->len && rc == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: mkbad DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "mkbad: error: %s: %s\n", dir, strerror(errno));
        return 1;
    }

    size_t n;
    const bg_case *cases = bg_cases(&n);
    for (size_t i = 0; i < n; i++) {
        bg_buf b = { 0 };
        char ex[BG_EXPECT_MAX], path[4096];
        snprintf(path, sizeof path, "%s/%s.gguf", dir, cases[i].name);
        if (!cases[i].build(cases[i].arg, &b, ex, sizeof ex)) {
            fprintf(stderr, "mkbad: error: %s: out of memory\n", path);
            bg_free(&b);
            return 1;
        }
        if (write_image(path, &b) != 0) {
            fprintf(stderr, "mkbad: error: %s: %s\n", path, strerror(errno));
            bg_free(&b);
            return 1;
        }
        bg_free(&b);
    }
    printf("mkbad: wrote %zu files to %s\n", n, dir);
    return 0;
}
