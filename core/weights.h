/* weights.h — one view over the tensors of a model, whether they come from a GGUF file or a set
   of safetensors files, so config checks (lm/config.c, vision/config.c), `seer info` and the
   model loaders look tensors up the same way. A `weights` borrows its reader: it is valid as
   long as the gguf / safetensors handle it was made from. Shapes have two spellings:
   descriptors use ggml ne order; weights_file_shape gives the shape as the file states it (ne
   order with the stored n_dims for GGUF, PyTorch order for safetensors), which is what error
   messages print so users recognise it. */
#ifndef SEER_CORE_WEIGHTS_H
#define SEER_CORE_WEIGHTS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/gguf.h"
#include "core/safetensors.h"

#define WEIGHTS_MAX_DIMS 8

enum weights_kind { WEIGHTS_GGUF, WEIGHTS_SAFETENSORS };

struct weights {
    enum weights_kind kind;
    const gguf *g;         /* WEIGHTS_GGUF */
    const safetensors *st; /* WEIGHTS_SAFETENSORS */
};

struct weights weights_from_gguf(const gguf *g);
struct weights weights_from_safetensors(const safetensors *st);

const char *weights_path(const struct weights *w); /* the file, index or directory opened */
int64_t weights_count(const struct weights *w);
const tensor *weights_tensor(const struct weights *w, int64_t i);
const char *weights_name(const struct weights *w, int64_t i);
const char *weights_file(const struct weights *w, int64_t i); /* the file holding tensor i */
int64_t weights_find(const struct weights *w, const char *name); /* index, or −1 */
/* The shape as the file states it (see above) into shape[0..rank); returns rank. */
int weights_file_shape(const struct weights *w, int64_t i, int64_t shape[WEIGHTS_MAX_DIMS]);

/* Flags for weights_expect. */
enum {
    WEIGHTS_OPTIONAL = 1,   /* absence is fine (*found says whether it is there) */
    WEIGHTS_FLOAT_ONLY = 2, /* must be F32/F16/BF16 (norms, biases, small vectors) */
};

/* Checks that tensor `name` exists with the shape `shape[0..rank)` given in the file's own order
   (above). GGUF shapes compare with trailing 1s ignored, as ggml pads ne with 1s; safetensors
   shapes compare exactly. Errors (SEER_EFORMAT):
     "FILE: tensor 'NAME' is missing (expected shape [..])"
     "FILE: tensor 'NAME' has shape [..], expected [..] for this architecture"
     "FILE: tensor 'NAME' has type q4_0, expected f32, f16 or bf16" */
int weights_expect(const struct weights *w, const char *name, int rank, const int64_t *shape, unsigned flags,
                   bool *found);

/* Formats "[a, b, c]" into buf (truncating safely). */
void weights_format_shape(char *buf, size_t cap, int rank, const int64_t *shape);

#endif
