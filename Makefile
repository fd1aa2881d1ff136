# ggufkit — build, test, install.
#
#   make            libgguf (static + shared) and the tools into build/
#   make test       all tests: Check unit tests + e2e scripts, with a summary
#   make test T=x   one suite: a unit test (T=test_reader) or an e2e script (T=inspect)
#   make san        the same tests built with -fsanitize=address,undefined
#   make fuzz       libFuzzer harnesses (clang) into build-fuzz/
#   make install    PREFIX=/usr/local DESTDIR= : tools, library, headers, .pc
#   make help       every target and variable
#
# BUILD selects the output directory; SAN=1 adds the sanitizers.

CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
VERSION := 1.4.0

# --- dependencies (Debian packages, found with pkg-config) -----------------
# pkg-config name : Debian package
DEPS_TEST := check:check

PKG_CONFIG ?= pkg-config
ifeq ($(shell command -v $(PKG_CONFIG) >/dev/null 2>&1 && echo ok),)
  $(error pkg-config not found: run 'apt-get install pkg-config' (or 'make deps'))
endif

# Every library the build and the tests need (pkg-config name : Debian
# package), checked once up front so that a fresh machine hears of all the
# missing packages in one line, before any compiler output.
DEPS_ALL := libpcre2-8:libpcre2-dev yaml-0.1:libyaml-dev zlib:zlib1g-dev libxxhash:libxxhash-dev \
            nettle:nettle-dev $(DEPS_TEST)
NO_DEPS_GOALS := deps clean help uninstall
ifneq ($(filter-out $(NO_DEPS_GOALS),$(or $(MAKECMDGOALS),all)),)
  MISSING := $(foreach d,$(DEPS_ALL),$(if $(shell $(PKG_CONFIG) --exists $(word 1,$(subst :, ,$(d))) 2>/dev/null && echo ok),,$(word 2,$(subst :, ,$(d)))))
  ifneq ($(strip $(MISSING)),)
    $(error missing dependencies: run 'apt-get install $(strip $(MISSING))' (or 'make deps'))
  endif
endif
need = $(if $(shell $(PKG_CONFIG) --exists $(word 1,$(subst :, ,$(1))) 2>/dev/null && echo ok),,\
  $(error missing dependency $(word 1,$(subst :, ,$(1))): run 'apt-get install $(word 2,$(subst :, ,$(1)))'))

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wundef -Wno-format-truncation
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -D_FILE_OFFSET_BITS=64
OPT     ?= -O2 -g
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ifeq ($(SAN),1)
  OPT += $(SANFLAGS)
  LDSAN := $(SANFLAGS)
endif
ifneq ($(findstring clang,$(shell $(CC) --version 2>/dev/null | head -1)),)
  WARN := $(filter-out -Wno-format-truncation,$(WARN))
endif

# libgguf itself needs PCRE2 (the BPE pre-tokenizer regexes).
LIB_DEPS    := libpcre2-8:libpcre2-dev
LIB_CFLAGS  := $(shell $(PKG_CONFIG) --cflags libpcre2-8 2>/dev/null)
LIB_LIBS    := $(shell $(PKG_CONFIG) --libs libpcre2-8 2>/dev/null)

CFLAGS_ALL  = $(CSTD) $(WARN) $(OPT) -fPIC -Iinclude -Igguf $(LIB_CFLAGS) -DGGUFKIT_VERSION='"$(VERSION)"' $(CFLAGS)
# Every object also writes its header dependencies (.d, with empty rules for
# the headers so that a deleted header does not stop the build).
DEPFLAGS    = -MMD -MP
LDLIBS_ALL  = $(LIB_LIBS) -lm -pthread $(LDSAN) $(LDFLAGS)

# --- sources ---------------------------------------------------------------
LIB_SRC   := $(sort $(wildcard gguf/*.c))
LIB_HDR   := $(sort $(wildcard gguf/*.h))
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
# tools-common: terminal, argument and output-path helpers the tools share
# (linked into each tool, never installed)
COMMON_SRC:= $(sort $(wildcard common/*.c))
COMMON_OBJ:= $(COMMON_SRC:%.c=$(BUILD)/obj/%.o)
TOOLS     := inspect convert quantize run edit
TOOL_BINS := $(strip $(foreach t,$(TOOLS),$(if $(wildcard $(t)/*.c),$(BUILD)/gguf-$(t))))
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TTOOL_SRC := $(sort $(wildcard tests/tools/*.c))
TTOOL_BINS:= $(TTOOL_SRC:tests/tools/%.c=$(BUILD)/tests/tools/%)
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))


.PHONY: valgrind help
.PHONY: all lib tools test san fuzz install uninstall clean check-deps-test testbins deps sample demo
all: lib tools $(BUILD)/sample.gguf

# Installs the Debian packages the build and tests need (as root or via sudo).
deps:
	bash .ci/deps

# The README's first command: build, then inspect a small model the build
# generated itself.
sample: all
	$(BUILD)/gguf-inspect $(BUILD)/sample.gguf

# The README's main command: convert, quantize to every preset (and, with an
# imatrix gguf-run collects, to a mix chosen for each preset's size) and
# measure each against F32 with gguf-run; a table and an SVG of KLD against
# size (tests/tools/demo.sh).
demo: all $(BUILD)/tests/tools/mkhf
	@BUILD=$(BUILD) bash tests/tools/demo.sh

$(BUILD)/sample.gguf: $(BUILD)/tests/tools/mkmodel
	$(BUILD)/tests/tools/mkmodel $@ --dim 64 --layers 2 --ffn 192 --heads 4 --kv-heads 2 --vocab 320

lib: $(BUILD)/libgguf.a $(BUILD)/libgguf.so
deps-lib:
	$(foreach d,$(LIB_DEPS),$(call need,$(d)))
.PHONY: deps-lib
tools: $(TOOL_BINS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DEPFLAGS) $(CFLAGS_TOOL) -c $< -o $@

-include $(shell find $(BUILD) build-fuzz -name '*.d' 2>/dev/null)

# What compiles VERSION in is rebuilt when it changes: the stamp is
# rewritten only when its text differs.
$(BUILD)/version.stamp: FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = "$(VERSION)" ] || echo "$(VERSION)" > $@
$(BUILD)/obj/gguf/error.o $(BUILD)/obj/common/args.o $(BUILD)/tests/test_error: $(BUILD)/version.stamp
.PHONY: FORCE
FORCE:

$(BUILD)/libgguf.a: $(LIB_OBJ) | deps-lib
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libcommon.a: $(COMMON_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The library's objects export only what the public headers mark GGUF_API.
$(BUILD)/obj/gguf/%.o: CFLAGS_TOOL := -fvisibility=hidden

# The shared library: SONAME libgguf.so.MAJOR, file libgguf.so.VERSION;
# every symbol resolved at link time, except under the sanitizers (clang
# leaves their runtime to the executable).
SO_NO_UNDEF := $(if $(filter 1,$(SAN)),,-Wl,--no-undefined)
SOMAJOR := $(word 1,$(subst ., ,$(VERSION)))
$(BUILD)/libgguf.so: $(LIB_OBJ) | deps-lib
	$(CC) -shared -Wl,-soname,libgguf.so.$(SOMAJOR) $(SO_NO_UNDEF) -o $@.$(VERSION) $^ $(LDLIBS_ALL)
	ln -sf libgguf.so.$(VERSION) $(BUILD)/libgguf.so.$(SOMAJOR)
	ln -sf libgguf.so.$(SOMAJOR) $@

# Per-tool dependencies: pkg-config names (with their Debian package). Each tool is its main.c linked with an internal archive of the
# rest of its directory ($(BUILD)/libtool-NAME.a, which the unit tests and
# fuzzers link too), libcommon.a and libgguf.a.
DEPS_quantize   := yaml-0.1:libyaml-dev
DEPS_convert    := yaml-0.1:libyaml-dev zlib:zlib1g-dev
DEPS_edit       := yaml-0.1:libyaml-dev
DEPS_inspect    := libxxhash:libxxhash-dev nettle:nettle-dev
pkg_names = $(foreach d,$(1),$(word 1,$(subst :, ,$(d))))
tool_objs = $(patsubst %.c,$(2)/obj/%.o,$(filter-out $(1)/main.c,$(sort $(wildcard $(1)/*.c))))

define tool_rule
$(BUILD)/obj/$(1)/%.o: CFLAGS_TOOL := -Icommon $$(if $$(DEPS_$(1)),$$(shell $(PKG_CONFIG) --cflags $$(call pkg_names,$$(DEPS_$(1)))))
# (the folder too: an object whose source left it leaves the archive)
$(BUILD)/libtool-$(1).a: $$(call tool_objs,$(1),$(BUILD)) $(1)
	@rm -f $$@
	ar rcs $$@ $$(filter %.o,$$^)
$(BUILD)/gguf-$(1): $(BUILD)/obj/$(1)/main.o $(BUILD)/libtool-$(1).a $(BUILD)/libcommon.a $(BUILD)/libgguf.a | deps-$(1)
	$$(CC) -o $$@ $$^ $$(if $$(DEPS_$(1)),$$(shell $(PKG_CONFIG) --libs $$(call pkg_names,$$(DEPS_$(1))))) $$(LDLIBS_ALL)
deps-$(1):
	$$(foreach d,$$(DEPS_$(1)),$$(call need,$$(d)))
.PHONY: deps-$(1)
endef
$(foreach t,$(TOOLS),$(eval $(call tool_rule,$(t))))

# A fuzz harness sees every tool folder and links every tool's internal
# archive (FUZZ_ARCHIVES; the linker takes only the objects it needs), then
# the library, and every library the tools use.
TOOL_INCLUDES = -Icommon $(addprefix -iquote ,$(TOOLS))
TOOL_LIBS     = $(shell $(PKG_CONFIG) --libs yaml-0.1 zlib libxxhash nettle 2>/dev/null)

# The tool folder of the module each unit test (and test tool) tests: such
# a test sees include/, gguf/, common/, tests/unit and that one folder, and
# links that tool's archive alone; a test named nowhere here tests libgguf or
# common/ and sees no tool folder. One folder per test: a test that needs
# two tools' modules tests something that belongs in libgguf or common/.
TEST_MODULE_convert  := test_arch test_fp8 test_llama2c test_lora test_override test_qpack test_safetensors \
                        test_spm test_tiktoken test_tokjson test_torch mkmeta
TEST_MODULE_edit     := test_edit_actions test_lora_merge
TEST_MODULE_inspect  := test_emit test_memory test_check
TEST_MODULE_quantize := test_target
TEST_MODULE_run      := test_forward test_importance test_kernels test_kldstats
test_tool    = $(strip $(foreach t,$(TOOLS),$(if $(filter $(1),$(TEST_MODULE_$(t))),$(t))))
test_iquote  = -Icommon $(addprefix -iquote ,$(call test_tool,$(1)))
test_archive = $(foreach t,$(call test_tool,$(1)),$(BUILD)/libtool-$(t).a)
$(foreach u,$(UNIT_SRC:tests/unit/%.c=%) $(TTOOL_SRC:tests/tools/%.c=%),\
  $(if $(word 2,$(call test_tool,$(u))),$(error $(u) is in TEST_MODULE_ of two tools ($(call test_tool,$(u))): one module per test)))

# --- tests -----------------------------------------------------------------
CHECK_CFLAGS = $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell $(PKG_CONFIG) --libs check 2>/dev/null)

check-deps-test:
	$(foreach d,$(DEPS_TEST),$(call need,$(d)))

# A unit test: its source, its module's tool archive (if any), tools-common
# and the library (TEST_MODULE_* above).
define unit_rule
$(BUILD)/tests/$(1): tests/unit/$(1).c $(wildcard tests/unit/*.h) $(call test_archive,$(1)) $(BUILD)/libcommon.a $(BUILD)/libgguf.a | check-deps-test
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_ALL) $$(DEPFLAGS) $$(CHECK_CFLAGS) -Itests/unit $(call test_iquote,$(1)) -o $$@ $$< $(call test_archive,$(1)) $(BUILD)/libcommon.a $(BUILD)/libgguf.a $$(CHECK_LIBS) $$(TOOL_LIBS) $$(LDLIBS_ALL)
endef
$(foreach u,$(UNIT_SRC:tests/unit/%.c=%),$(eval $(call unit_rule,$(u))))

# A test tool (model generators) links the same way.
define ttool_rule
$(BUILD)/tests/tools/$(1): tests/tools/$(1).c $(wildcard tests/unit/*.h) $(call test_archive,$(1)) $(BUILD)/libcommon.a $(BUILD)/libgguf.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS_ALL) $$(DEPFLAGS) $(call test_iquote,$(1)) -o $$@ $$< $(call test_archive,$(1)) $(BUILD)/libcommon.a $(BUILD)/libgguf.a $$(TOOL_LIBS) $$(LDLIBS_ALL)
endef
$(foreach u,$(TTOOL_SRC:tests/tools/%.c=%),$(eval $(call ttool_rule,$(u))))

testbins: all $(UNIT_BINS) $(TTOOL_BINS)

# T=NAME runs one suite: a unit test binary (T=test_reader) or an e2e
# script (T=inspect for tests/e2e/inspect.sh).
test: testbins
	@BUILD=$(BUILD) TEST_CC="$(CC)" TEST_SANFLAGS="$(LDSAN)" bash tests/run.sh $(T)

# clang's UBSan checks more (e.g. pointer arithmetic on NULL) than gcc's.
SAN_CC ?= $(if $(shell command -v clang 2>/dev/null),clang,$(CC))
san:
	$(MAKE) BUILD=build-san SAN=1 CC=$(SAN_CC) test

# Every unit test under valgrind (memcheck, leaks), in-process.
valgrind: testbins
	@for t in $(UNIT_BINS); do echo "valgrind $$t"; \
	  CK_FORK=no GGUFKIT_FIXTURES=$${GGUFKIT_FIXTURES:-../shared/fixtures} valgrind -q --error-exitcode=9 \
	    --suppressions=tests/valgrind.supp --leak-check=full $$t >/dev/null || exit 1; done; echo "valgrind: clean"


# --- fuzzing (clang + libFuzzer) -------------------------------------------
FUZZ_CC    ?= clang
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_FLAGS := $(CSTD) -g -O1 $(FUZZ_SAN) -Iinclude -Igguf -Icommon $(LIB_CFLAGS) -DGGUFKIT_VERSION='"$(VERSION)"'
FUZZ_OBJ   := $(LIB_SRC:%.c=build-fuzz/obj/%.o) $(COMMON_SRC:%.c=build-fuzz/obj/%.o)
fuzz: $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(DEPFLAGS) $(TOOL_INCLUDES) -fsanitize=fuzzer-no-link -c $< -o $@
build-fuzz/libgguf-fuzz.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^
# The tools' parsers, built for the fuzzers, as internal archives too.
.SECONDEXPANSION:
# Objects and archives made by pattern rules stay (make would delete them as
# intermediate files). .PRECIOUS, not .SECONDARY: a missing object must
# still rebuild its archive.
.PRECIOUS: $(BUILD)/obj/%.o build-fuzz/obj/%.o build-fuzz/libtool-%.a
build-fuzz/libtool-%.a: $$(call tool_objs,$$*,build-fuzz)
	@rm -f $@
	ar rcs $@ $^
FUZZ_ARCHIVES = $(foreach t,$(TOOLS),build-fuzz/libtool-$(t).a)
build-fuzz/%: tests/fuzz/%.c $(FUZZ_ARCHIVES) build-fuzz/libgguf-fuzz.a
	$(FUZZ_CC) $(FUZZ_FLAGS) $(TOOL_INCLUDES) -fsanitize=fuzzer -o $@ $< $(FUZZ_ARCHIVES) build-fuzz/libgguf-fuzz.a $(TOOL_LIBS) $(LIB_LIBS) -lm -pthread

# --- install ---------------------------------------------------------------
DEST := $(DESTDIR)$(PREFIX)
PUB_HDR := $(sort $(wildcard include/ggufkit/*.h))
# Only the public headers are installed; for a system prefix (one the
# dynamic linker searches, e.g. /usr/local) ldconfig refreshes its cache.
install: all
	install -d $(DEST)/bin $(DEST)/lib $(DEST)/include/ggufkit $(DEST)/lib/pkgconfig
	$(if $(TOOL_BINS),install -m 755 $(TOOL_BINS) $(DEST)/bin/)
	install -m 644 $(BUILD)/libgguf.a $(DEST)/lib/
	install -m 755 $(BUILD)/libgguf.so.$(VERSION) $(DEST)/lib/libgguf.so.$(VERSION)
	ln -sf libgguf.so.$(VERSION) $(DEST)/lib/libgguf.so.$(SOMAJOR)
	ln -sf libgguf.so.$(SOMAJOR) $(DEST)/lib/libgguf.so
	install -m 644 $(PUB_HDR) $(DEST)/include/ggufkit/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' gguf/libgguf.pc.in > $(DEST)/lib/pkgconfig/libgguf.pc
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

uninstall:
	rm -f $(foreach t,$(TOOLS),$(DEST)/bin/gguf-$(t)) $(DEST)/lib/libgguf.* $(DEST)/lib/pkgconfig/libgguf.pc
	rm -rf $(DEST)/include/ggufkit

help:
	@echo "targets:"
	@echo "  all (default)  libgguf.a, libgguf.so and the tools into BUILD (build/)"
	@echo "  lib, tools     only the library, only the tools"
	@echo "  sample         build, then gguf-inspect the generated sample model"
	@echo "  demo           convert, quantize to every preset and a target-size mix each, measure, plot (tests/tools/demo.sh)"
	@echo "  test           every unit test and e2e script, with a summary line"
	@echo "  san            the same under AddressSanitizer + UBSan (clang), in build-san/"
	@echo "  valgrind       every unit test under valgrind"
	@echo "  fuzz           the libFuzzer harnesses into build-fuzz/ (tests/fuzz/campaign.sh runs them)"
	@echo "  install        tools, libgguf, public headers and libgguf.pc under DESTDIR/PREFIX"
	@echo "  uninstall      removes what install put there"
	@echo "  deps           apt-get install what the build and tests need (.ci/deps)"
	@echo "  clean          removes build/, build-san/, build-fuzz/"
	@echo "  help           this text"
	@echo "variables:"
	@echo "  BUILD=DIR          output directory (default build)"
	@echo "  SAN=1              compile with -fsanitize=address,undefined"
	@echo "  T=NAME             with test/san: one suite (test_reader, inspect, ...)"
	@echo "  PREFIX=/usr/local  install prefix; DESTDIR=DIR stages an install"
	@echo "  GGUFKIT_FIXTURES=DIR  the shared fixtures (default ../shared/fixtures)"
	@echo "  CC, CFLAGS, LDFLAGS   compiler and extra flags"

clean:
	rm -rf build build-san build-fuzz
