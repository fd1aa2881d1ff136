/*
 * torch.h — PyTorch checkpoints (torch.save's zip format: .bin, .pth, .pt)
 * as a list of tensors, without Python.
 *
 * The archive's data.pkl is interpreted as data, never executed: a small
 * pickle machine (protocol 2 to 5 opcodes) builds tuples, lists, dicts,
 * strings and numbers, and accepts only these globals —
 * torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter,
 * collections.OrderedDict and the torch *Storage classes. Anything else
 * is refused with its name. Tensors must be contiguous views of their
 * storage (archive entry .../data/KEY). The state dict is the top-level
 * dict of tensors, or the first dict of tensors one level down (a
 * checkpoint with {"model": state_dict, ...}).
 */
#ifndef CONVERT_TORCH_H
#define CONVERT_TORCH_H

#include "safetensors.h"

/* Opens a checkpoint; tensors come in state-dict order, dtypes named as in
 * safetensors ("F32", "F16", "BF16", ...). Close with st_close. */
int torch_open(const char *path, st_file *f, gguf_error *err);

/* The same over an archive in memory (not copied). */
int torch_parse(const uint8_t *data, size_t size, st_file *f, gguf_error *err);

#endif
