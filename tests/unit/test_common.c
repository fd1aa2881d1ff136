/*
 * test_common.c — the tools-common helpers: output-path safety (devices,
 * FIFOs, directories, inputs through symlinks, hard links and folders),
 * the library's refusal of non-regular outputs and its table of temporary
 * files, and whole-number / thread-count parsing.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "outfile.h"
#include "outpath.h"
#include "signals.h"
#include "testutil.h"

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/ggufkit-common-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static const char *in_dir(char *buf, const char *name)
{
    snprintf(buf, 256, "%s/%s", dir, name);
    return buf;
}

static void touch(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static int count_entries(void)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 0", dir);
    return system(cmd) == 0 ? 0 : 1;
}

START_TEST(test_new_and_regular_outputs_pass)
{
    make_dir();
    char in[256], out[256], other[256];
    touch(in_dir(in, "in.gguf"), "input");
    touch(in_dir(other, "old.gguf"), "old output");
    const char *inputs[] = { in, NULL };
    gguf_error err;
    ck_assert_int_eq(outpath_check(in_dir(out, "new.gguf"), inputs, 2, &err), 0);
    ck_assert_int_eq(outpath_check(other, inputs, 2, &err), 0);
    ck_assert_int_eq(outpath_check(in_dir(out, "no/such/dir.gguf"), inputs, 2, &err), 0);
    ck_assert_int_eq(outpath_check("", inputs, 2, &err), -1);
    remove_dir();
}
END_TEST

START_TEST(test_non_regular_targets_refused)
{
    make_dir();
    char fifo[256], sub[256];
    ck_assert_int_eq(mkfifo(in_dir(fifo, "fifo"), 0600), 0);
    ck_assert_int_eq(mkdir(in_dir(sub, "sub"), 0700), 0);
    gguf_error err;
    ck_assert_int_eq(outpath_check(fifo, NULL, 0, &err), -1);
    ck_assert_str_eq(err.msg, "is a FIFO, not a regular file: refusing to write over it");
    ck_assert_int_eq(outpath_check(sub, NULL, 0, &err), -1);
    ck_assert_str_eq(err.msg, "is a directory, not a regular file: refusing to write over it");
    /* only stat()ed, never opened */
    ck_assert_int_eq(outpath_check("/dev/null", NULL, 0, &err), -1);
    ck_assert_str_eq(err.msg, "is a character device, not a regular file: refusing to write over it");
    remove_dir();
}
END_TEST

START_TEST(test_inputs_refused_through_links_and_folders)
{
    make_dir();
    char in[256], sym[256], hard[256], folder[256], inner[256], cfg[256];
    touch(in_dir(in, "in.gguf"), "input");
    ck_assert_int_eq(symlink(in, in_dir(sym, "sym.gguf")), 0);
    ck_assert_int_eq(link(in, in_dir(hard, "hard.gguf")), 0);
    ck_assert_int_eq(mkdir(in_dir(folder, "model"), 0700), 0);
    touch(in_dir(inner, "model/model.safetensors"), "weights");
    const char *inputs[] = { NULL, in, folder };
    gguf_error err;
    ck_assert_int_eq(outpath_check(in, inputs, 3, &err), -1);
    ck_assert_str_eq(err.msg, "is an input of this run: refusing to overwrite it");
    ck_assert_int_eq(outpath_check(sym, inputs, 3, &err), -1);
    ck_assert_int_eq(outpath_check(hard, inputs, 3, &err), -1);
    ck_assert_int_eq(outpath_check(inner, inputs, 3, &err), -1);
    ck_assert_msg(strstr(err.msg, "model.safetensors: refusing to overwrite it"), "%s", err.msg);
    /* the same folder, a file not in it: fine */
    ck_assert_int_eq(outpath_check(in_dir(cfg, "model/out.gguf"), inputs, 3, &err), 0);
    remove_dir();
}
END_TEST

START_TEST(test_outfile_refuses_non_regular)
{
    make_dir();
    char fifo[256], sub[256];
    ck_assert_int_eq(mkfifo(in_dir(fifo, "fifo"), 0600), 0);
    ck_assert_int_eq(mkdir(in_dir(sub, "sub"), 0700), 0);
    gguf_outfile o;
    gguf_error err;
    ck_assert_int_eq(gguf_outfile_open(&o, fifo, &err), -1);
    ck_assert_msg(strstr(err.msg, "is a FIFO, not a regular file"), "%s", err.msg);
    ck_assert_int_eq(gguf_outfile_open(&o, sub, &err), -1);
    ck_assert_msg(strstr(err.msg, "is a directory"), "%s", err.msg);
    unlink(fifo);
    rmdir(sub);
    ck_assert_int_eq(count_entries(), 0); /* no temporary file left */
    remove_dir();
}
END_TEST

START_TEST(test_remove_temps)
{
    make_dir();
    char a[256], b[256];
    gguf_outfile oa, ob;
    gguf_error err;
    ck_assert_int_eq(gguf_outfile_open(&oa, in_dir(a, "a.gguf"), &err), 0);
    ck_assert_int_eq(gguf_outfile_open(&ob, in_dir(b, "b.gguf"), &err), 0);
    ck_assert_int_eq(gguf_outfile_write(&oa, "x", 1, &err), 0);
    ck_assert_int_eq(count_entries(), 1);
    gguf_outfile_remove_temps();
    ck_assert_int_eq(count_entries(), 0);
    gguf_outfile_discard(&oa);
    gguf_outfile_discard(&ob);
    /* a committed file is not a temporary any more */
    ck_assert_int_eq(gguf_outfile_open(&oa, a, &err), 0);
    ck_assert_int_eq(gguf_outfile_commit(&oa, &err), 0);
    gguf_outfile_remove_temps();
    ck_assert_int_eq(access(a, F_OK), 0);
    remove_dir();
}
END_TEST

START_TEST(test_signal_removes_temps)
{
    make_dir();
    char a[256];
    in_dir(a, "a.gguf");
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        cli_cleanup_on_signals();
        gguf_outfile o;
        gguf_error err;
        if (gguf_outfile_open(&o, a, &err))
            _exit(3);
        raise(SIGTERM);
        _exit(4); /* not reached */
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status));
    ck_assert_int_eq(WTERMSIG(status), SIGTERM);
    ck_assert_int_eq(count_entries(), 0);
    remove_dir();
}
END_TEST

START_TEST(test_parse_long)
{
    long v;
    ck_assert(cli_parse_long("42", 1, 100, &v) && v == 42);
    ck_assert(!cli_parse_long("1abc", 1, 100, &v));
    ck_assert(!cli_parse_long("", 1, 100, &v));
    ck_assert(!cli_parse_long(" ", 1, 100, &v));
    ck_assert(!cli_parse_long("0", 1, 100, &v));
    ck_assert(!cli_parse_long("101", 1, 100, &v));
    ck_assert(!cli_parse_long("-1", 0, 100, &v));
    ck_assert(!cli_parse_long("99999999999999999999", 0, 100, &v));
    ck_assert(!cli_parse_long("1e3", 0, 10000, &v));
    double d;
    ck_assert(cli_parse_double("0.5", 0, 1, &d) && d == 0.5);
    ck_assert(!cli_parse_double("2", 0, 1, &d));
    ck_assert(!cli_parse_double("nan", 0, 1, &d));
    ck_assert(!cli_parse_double("inf", 0, 1e300, &d));
    ck_assert(!cli_parse_double("0.5x", 0, 1, &d));
}
END_TEST

START_TEST(test_threads)
{
    int t;
    char max[16], over[16];
    snprintf(max, sizeof max, "%d", cli_max_threads());
    snprintf(over, sizeof over, "%d", cli_max_threads() + 1);
    ck_assert(cli_max_threads() >= 4 && cli_max_threads() <= 1024);
    ck_assert(cli_parse_threads("test", "1", &t) && t == 1);
    ck_assert(cli_parse_threads("test", max, &t) && t == cli_max_threads());
    ck_assert(!cli_parse_threads("test", over, &t));
    ck_assert(!cli_parse_threads("test", "100000", &t));
    ck_assert(!cli_parse_threads("test", "0", &t));
    ck_assert(!cli_parse_threads("test", "2x", &t));
    ck_assert_int_eq(cli_default_threads(), cli_available_cores());
}
END_TEST

int main(void)
{
    Suite *s = suite_create("common");
    TCase *tc = tcase_create("common");
    tcase_add_test(tc, test_new_and_regular_outputs_pass);
    tcase_add_test(tc, test_non_regular_targets_refused);
    tcase_add_test(tc, test_inputs_refused_through_links_and_folders);
    tcase_add_test(tc, test_outfile_refuses_non_regular);
    tcase_add_test(tc, test_remove_temps);
    tcase_add_test(tc, test_signal_removes_temps);
    tcase_add_test(tc, test_parse_long);
    tcase_add_test(tc, test_threads);
    suite_add_tcase(s, tc);
    return run_suite(s, 0);
}
