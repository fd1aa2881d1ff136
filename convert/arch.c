/*
 * arch.c — checkpoint names against the registry's tensor tables (see arch.h).
 */
#include "arch.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const gguf_arch *arch_find(const char *hf_name) { return gguf_recipe_find_hf(hf_name); }

const char *arch_supported_list(void) { return gguf_recipe_hf_list(); }

/* Matches name against a pattern with at most two "%d"; *block and
 * *expert get the numbers (-1 for each "%d" the pattern lacks). */
static bool match_pattern(const char *pattern, const char *name, int *block, int *expert)
{
    int *num[2] = { block, expert };
    *block = *expert = -1;
    for (int k = 0;; k++) {
        const char *d = strstr(pattern, "%d");
        if (!d || k == 2)
            return !strcmp(pattern, name);
        size_t pre = (size_t)(d - pattern);
        if (strncmp(pattern, name, pre) != 0 || !isdigit((unsigned char)name[pre]))
            return false;
        const char *p = name + pre;
        long v = 0;
        while (isdigit((unsigned char)*p)) {
            v = v * 10 + (*p++ - '0');
            if (v > 1000000)
                return false;
        }
        *num[k] = (int)v;
        pattern = d + 2;
        name = p;
    }
}

/* The row whose checkpoint name (Hugging Face or Meta, from the recipe)
 * matches, in table order, with the formatted GGUF name and its recipe
 * names in *names; NULL if none. */
static const gguf_arch_tensor *find_row(const gguf_arch *a, bool meta, const char *name,
                                        char *out, size_t out_size, int *block, int *expert,
                                        const gguf_recipe_tensor **names)
{
    const gguf_recipe *r = gguf_recipe_of(a);
    const gguf_arch_tensor *t;
    for (size_t i = 0; r && (t = gguf_arch_tensor_at(a, i)); i++) {
        const gguf_recipe_tensor *n = gguf_recipe_tensor_of(r, gguf_arch_tensor_role(t));
        const char *from = !n ? NULL : meta ? n->meta : n->hf;
        if (!from || !match_pattern(from, name, block, expert))
            continue;
        if (*block >= 0)
            snprintf(out, out_size, gguf_arch_tensor_name(t), *block);
        else
            snprintf(out, out_size, "%s", gguf_arch_tensor_name(t));
        *names = n;
        return t;
    }
    return NULL;
}

/* name with every occurrence of strip taken out, in buf; false when it
 * does not fit. */
static bool strip_all(const char *name, const char *strip, char *buf, size_t size)
{
    const size_t sl = strlen(strip);
    size_t o = 0;
    for (const char *p = name; *p;) {
        if (!strncmp(p, strip, sl)) {
            p += sl;
            continue;
        }
        if (o + 1 >= size)
            return false;
        buf[o++] = *p++;
    }
    buf[o] = 0;
    return true;
}

int arch_map_name(const gguf_arch *a, const char *name, char *out, size_t out_size,
                  uint8_t *permute, int *block, int *expert, const gguf_arch_tensor **row)
{
    /* Gemma3Model.modify_tensors: "language_model." out of a name that has
     * it, else the vision tower's and projector's names dropped */
    const gguf_recipe *rc = gguf_recipe_of(a);
    char stripped[1024];
    if (!rc)
        return -1;
    if (rc->hf_strip && strstr(name, rc->hf_strip)) {
        if (!strip_all(name, rc->hf_strip, stripped, sizeof stripped))
            return -1;
        name = stripped;
    } else {
        for (const char *const *p = rc->hf_skip_prefix; p && *p; p++)
            if (!strncmp(name, *p, strlen(*p)))
                return 0;
    }
    size_t len = strlen(name);
    for (const char *const *s = rc->hf_skip; *s; s++) {
        size_t sl = strlen(*s);
        if (len >= sl && !strcmp(name + len - sl, *s))
            return 0;
    }
    const gguf_recipe_tensor *names;
    const gguf_arch_tensor *t = find_row(a, false, name, out, out_size, block, expert, &names);
    if (!t)
        return -1;
    *row = t;
    *permute = gguf_recipe_has(rc, GGUF_FACT_PERMUTE_QK) ? names->permute : GGUF_PERMUTE_NONE;
    return 1;
}

int arch_map_meta(const gguf_arch *a, const char *name, char *out, size_t out_size, int *block)
{
    int expert;
    const gguf_recipe_tensor *names;
    return find_row(a, true, name, out, out_size, block, &expert, &names) ? 1 : -1;
}

bool arch_per_expert(const gguf_arch *a, const gguf_arch_tensor *t)
{
    const gguf_recipe_tensor *n = gguf_recipe_tensor_of(gguf_recipe_of(a), gguf_arch_tensor_role(t));
    const char *d = n && n->hf ? strstr(n->hf, "%d") : NULL;
    return d && strstr(d + 2, "%d");
}
