/*
 * test_common.c — the tools-common helpers: output-path safety (devices,
 * FIFOs, directories, inputs through symlinks, hard links and folders),
 * the library's refusal of non-regular outputs and its table of temporary
 * files, what an output keeps of the file it replaces (mode, owner, group;
 * a symbolic link stays a link and its target is replaced), and
 * whole-number / thread-count parsing.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "pool.h"
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
    ck_assert_msg(strstr(err.msg, "in.gguf: refusing to overwrite it"), "%s", err.msg);
    ck_assert_int_eq(outpath_check(hard, inputs, 3, &err), -1);
    /* a chain of two links, the second relative: still the input */
    char chain[256];
    ck_assert_int_eq(symlink("sym.gguf", in_dir(chain, "chain.gguf")), 0);
    ck_assert_int_eq(outpath_check(chain, inputs, 3, &err), -1);
    ck_assert_msg(strstr(err.msg, "is the input") && strstr(err.msg, "in.gguf: refusing to overwrite it"),
                  "%s", err.msg);
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

/* Writes `text` through an outfile to `path` and commits it: 0, or -1
 * with err. */
static int write_through(const char *path, const char *text, gguf_error *err)
{
    gguf_outfile o;
    if (gguf_outfile_open(&o, path, err))
        return -1;
    if (gguf_outfile_write(&o, text, strlen(text), err)) {
        gguf_outfile_discard(&o);
        return -1;
    }
    return gguf_outfile_commit(&o, err);
}

static void assert_holds(const char *path, const char *text)
{
    char buf[64] = { 0 };
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    ck_assert_str_eq(buf, text);
}

/* No ".NAME.tmp.XXXXXX" in directory d. */
static int temps_in(const char *d)
{
    char cmd[320];
    snprintf(cmd, sizeof cmd, "test -z \"$(find '%s' -name '.*.tmp.*')\"", d);
    return system(cmd) == 0 ? 0 : 1;
}

START_TEST(test_outfile_keeps_mode)
{
    make_dir();
    char a[256], b[256], c[256];
    gguf_error err;
    static const unsigned modes[] = { 0600, 0444, 0640, 0604, 0755, 0000 };
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        touch(in_dir(a, "a.gguf"), "old");
        ck_assert_int_eq(chmod(a, modes[i]), 0);
        ck_assert_int_eq(write_through(a, "new", &err), 0);
        struct stat st;
        ck_assert_int_eq(stat(a, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, modes[i]);
        ck_assert_int_eq(chmod(a, 0600), 0);
        assert_holds(a, "new");
        unlink(a);
    }
    /* a new file: what open(2) would give it */
    const mode_t mask = umask(022);
    ck_assert_int_eq(write_through(in_dir(b, "b.gguf"), "new", &err), 0);
    umask(077);
    ck_assert_int_eq(write_through(in_dir(c, "c.gguf"), "new", &err), 0);
    umask(mask);
    struct stat sb, sc;
    ck_assert_int_eq(stat(b, &sb), 0);
    ck_assert_int_eq(stat(c, &sc), 0);
    ck_assert_uint_eq(sb.st_mode & 07777, 0644);
    ck_assert_uint_eq(sc.st_mode & 07777, 0600);
    ck_assert_int_eq(temps_in(dir), 0);
    remove_dir();
}
END_TEST

/* As root: the replaced file's owner and group are kept. */
START_TEST(test_outfile_keeps_owner)
{
    make_dir();
    char a[256];
    gguf_error err;
    touch(in_dir(a, "a.gguf"), "old");
    ck_assert_int_eq(chown(a, 1234, 2345), 0);
    ck_assert_int_eq(chmod(a, 0640), 0);
    ck_assert_int_eq(write_through(a, "new", &err), 0);
    struct stat st;
    ck_assert_int_eq(stat(a, &st), 0);
    ck_assert_uint_eq(st.st_uid, 1234);
    ck_assert_uint_eq(st.st_gid, 2345);
    ck_assert_uint_eq(st.st_mode & 07777, 0640);
    assert_holds(a, "new");
    remove_dir();
}
END_TEST

/* What a process that may not give files away keeps: run as uid/gid 1234
 * with supplementary group 2345, replacing files of uid 4321 in a
 * directory it may write. Each case: the old file's group and mode, and
 * the output's owner, group and mode. */
START_TEST(test_outfile_owner_not_kept_never_widens)
{
    static const struct {
        gid_t gid;
        unsigned mode, want_mode;
        gid_t want_gid;
    } cases[] = {
        { 4321, 0640, 0600, 1234 },  /* group lost: its read goes with it */
        { 4321, 0664, 0644, 1234 },  /* group lost: keeps what others had */
        { 4321, 0604, 0604, 1234 },  /* others' read stays others' */
        { 2345, 0640, 0640, 2345 },  /* a group of ours: kept, and its bits */
        { 4321, 02775, 0755, 1234 }, /* setgid and group write lost with the group */
        { 2345, 04750, 0750, 2345 }, /* setuid lost with the owner */
    };
    make_dir();
    ck_assert_int_eq(chown(dir, 1234, 1234), 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char a[256];
        touch(in_dir(a, "a.gguf"), "old");
        ck_assert_int_eq(chown(a, 4321, cases[i].gid), 0);
        ck_assert_int_eq(chmod(a, cases[i].mode), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            const gid_t groups[] = { 2345 };
            gguf_error err;
            if (setgroups(1, groups) || setgid(1234) || setuid(1234))
                _exit(3);
            _exit(write_through(a, "new", &err) ? 4 : 0);
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "case %zu: child status %d", i, status);
        struct stat st;
        ck_assert_int_eq(stat(a, &st), 0);
        ck_assert_msg(st.st_uid == 1234 && st.st_gid == cases[i].want_gid &&
                          (st.st_mode & 07777) == cases[i].want_mode,
                      "case %zu: %u:%u %04o, expected 1234:%u %04o", i, (unsigned)st.st_uid,
                      (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777), (unsigned)cases[i].want_gid,
                      cases[i].want_mode);
        assert_holds(a, "new");
    }
    ck_assert_int_eq(temps_in(dir), 0);
    remove_dir();
}
END_TEST

/* A link stays a link: the file its chain ends at is replaced, in its own
 * directory, whether the links are relative or absolute. */
START_TEST(test_outfile_follows_symlinks)
{
    make_dir();
    char blobs[256], snap[256], blob[256], rel[256], abs_[256], chain[256], sub[256];
    ck_assert_int_eq(mkdir(in_dir(blobs, "blobs"), 0755), 0);
    ck_assert_int_eq(mkdir(in_dir(snap, "snap"), 0755), 0);
    ck_assert_int_eq(mkdir(in_dir(sub, "snap/sub"), 0755), 0);
    touch(in_dir(blob, "blobs/abc"), "old");
    ck_assert_int_eq(chmod(blob, 0640), 0);
    ck_assert_int_eq(symlink("../blobs/abc", in_dir(rel, "snap/rel.gguf")), 0);
    ck_assert_int_eq(symlink(blob, in_dir(abs_, "snap/abs.gguf")), 0);
    /* two links, the second relative to its own directory, not the first's */
    ck_assert_int_eq(symlink("../rel.gguf", in_dir(chain, "snap/sub/chain.gguf")), 0);
    gguf_error err;
    const char *links[] = { rel, abs_, chain };
    const char *texts[] = { "through rel", "through abs", "through chain" };
    for (int i = 0; i < 3; i++) {
        ck_assert_msg(write_through(links[i], texts[i], &err) == 0, "%s", err.msg);
        struct stat st;
        ck_assert_int_eq(lstat(links[i], &st), 0);
        ck_assert(S_ISLNK(st.st_mode));
        assert_holds(blob, texts[i]);
        ck_assert_int_eq(stat(blob, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0640);
    }
    char buf[64];
    ssize_t k = readlink(chain, buf, sizeof buf);
    ck_assert_int_eq(k, 11);
    ck_assert_int_eq(memcmp(buf, "../rel.gguf", 11), 0);
    ck_assert_int_eq(temps_in(dir), 0);
    remove_dir();
}
END_TEST

/* A dangling link is written through (its target created, as open(2)
 * does); one into a missing directory, or a loop, is an error naming the
 * path given. */
START_TEST(test_outfile_dangling_and_looping_links)
{
    make_dir();
    char dang[256], target[256], nodir[256], l1[256], l2[256];
    ck_assert_int_eq(symlink("made.gguf", in_dir(dang, "dang.gguf")), 0);
    gguf_error err;
    ck_assert_int_eq(write_through(dang, "made", &err), 0);
    struct stat st;
    ck_assert_int_eq(lstat(dang, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    assert_holds(in_dir(target, "made.gguf"), "made");

    ck_assert_int_eq(symlink("no/such/dir/x.gguf", in_dir(nodir, "nodir.gguf")), 0);
    ck_assert_int_eq(write_through(nodir, "x", &err), -1);
    ck_assert_msg(strstr(err.msg, "cannot create a temporary file next to") &&
                      strstr(err.msg, "no/such/dir/x.gguf (where the link") && strstr(err.msg, nodir) &&
                      strstr(err.msg, "No such file or directory"),
                  "%s", err.msg);

    ck_assert_int_eq(symlink("l2", in_dir(l1, "l1")), 0);
    ck_assert_int_eq(symlink("l1", in_dir(l2, "l2")), 0);
    ck_assert_int_eq(write_through(l1, "x", &err), -1);
    ck_assert_msg(strstr(err.msg, "cannot follow the symbolic link: Too many levels of symbolic links") &&
                      strstr(err.msg, l1),
                  "%s", err.msg);
    ck_assert_int_eq(lstat(l1, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(temps_in(dir), 0);
    remove_dir();
}
END_TEST

/* A link to a FIFO through a chain is refused as the FIFO is. */
START_TEST(test_outfile_link_to_non_regular)
{
    make_dir();
    char fifo[256], l1[256], l2[256];
    ck_assert_int_eq(mkfifo(in_dir(fifo, "fifo"), 0600), 0);
    ck_assert_int_eq(symlink("fifo", in_dir(l1, "l1")), 0);
    ck_assert_int_eq(symlink(l1, in_dir(l2, "l2")), 0);
    gguf_error err;
    ck_assert_int_eq(write_through(l2, "x", &err), -1);
    ck_assert_msg(strstr(err.msg, "is a FIFO, not a regular file"), "%s", err.msg);
    ck_assert_int_eq(temps_in(dir), 0);
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

/* What cli_cleanup_on_signals leaves and takes: a signal ignored at entry
 * stays ignored, one at its default gets the handler, SIGXFSZ is ignored. */
START_TEST(test_signal_dispositions)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_DFL);
        signal(SIGXFSZ, SIG_DFL);
        cli_cleanup_on_signals();
        struct sigaction in, term, xfsz;
        if (sigaction(SIGINT, NULL, &in) || sigaction(SIGTERM, NULL, &term) || sigaction(SIGXFSZ, NULL, &xfsz))
            _exit(2);
        _exit(in.sa_handler != SIG_IGN ? 3
              : term.sa_handler == SIG_DFL || term.sa_handler == SIG_IGN ? 4
              : xfsz.sa_handler != SIG_IGN ? 5 : 0);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
}
END_TEST

/* Past a file-size limit a write is an error naming the output ("File too
 * large"), not SIGXFSZ's silent death, and discarding leaves nothing. */
START_TEST(test_file_size_limit_is_an_error)
{
    make_dir();
    char a[256];
    in_dir(a, "a.gguf");
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        cli_cleanup_on_signals();
        const struct rlimit lim = { 1024, 1024 };
        if (setrlimit(RLIMIT_FSIZE, &lim))
            _exit(2);
        static char block[8192];
        gguf_outfile o;
        gguf_error err;
        if (gguf_outfile_open(&o, a, &err))
            _exit(3);
        int rc = gguf_outfile_write(&o, block, sizeof block, &err);
        if (rc == 0)
            rc = gguf_outfile_commit(&o, &err);
        else
            gguf_outfile_discard(&o);
        _exit(rc == 0 ? 4 : strstr(err.msg, "a.gguf") && strstr(err.msg, "File too large") ? 0 : 5);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
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
    ck_assert(cli_max_threads() >= 4 && cli_max_threads() <= POOL_MAX_THREADS);
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
    tcase_add_test(tc, test_outfile_keeps_mode);
    /* giving files away (chown) and dropping to another user need root */
    if (geteuid() == 0) {
        tcase_add_test(tc, test_outfile_keeps_owner);
        tcase_add_test(tc, test_outfile_owner_not_kept_never_widens);
    }
    tcase_add_test(tc, test_outfile_follows_symlinks);
    tcase_add_test(tc, test_outfile_dangling_and_looping_links);
    tcase_add_test(tc, test_outfile_link_to_non_regular);
    tcase_add_test(tc, test_remove_temps);
    tcase_add_test(tc, test_signal_removes_temps);
    tcase_add_test(tc, test_signal_dispositions);
    tcase_add_test(tc, test_file_size_limit_is_an_error);
    tcase_add_test(tc, test_parse_long);
    tcase_add_test(tc, test_threads);
    suite_add_tcase(s, tc);
    const int rc = run_suite(s, 0);
    if (geteuid() != 0)
        printf("SKIPPED: 2 (owner tests need root)\n");
    return rc;
}
