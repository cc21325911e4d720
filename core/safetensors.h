/* safetensors.h — reader for Hugging Face safetensors checkpoints: one file, a sharded set named
   by model.safetensors.index.json, or a model directory holding either.
   Format: an 8-byte little-endian header length N, N bytes of JSON
   {"NAME": {"dtype": "BF16", "shape": [out, in], "data_offsets": [begin, end]}, "__metadata__": {…}},
   then the data section; offsets are relative to the data section. Files are mmapped; tensors
   come back as descriptors whose `data` points into the read-only mapping and that live as long
   as the handle.

   Shapes: HF stores PyTorch order ([out, in]); descriptors use ggml ne order (reversed), so an HF
   linear weight [out, in] has ne = {in, out}. Rank 0 becomes ne = {1}; rank 5..8 (the vision
   Conv3d kernel [Dv, 3, 2, 16, 16], spec §8) is folded into 4 dims by merging the innermost ones
   (ne = {16·16, 2, 3, Dv}); safetensors_tensor_shape gives the shape exactly as stored.

   Checks: dtypes F32/F16/BF16 only (others SEER_EUNSUPPORTED naming tensor and dtype); empty
   dimensions are SEER_EUNSUPPORTED; data_offsets must satisfy begin ≤ end ≤ data length and
   end − begin = elements × element size, and the address must be aligned to the element size;
   `__metadata__` is ignored; a tensor name in two shards, or an index entry missing from the
   shard it names, is SEER_EFORMAT. Messages name the file and the tensor. */
#ifndef SEER_CORE_SAFETENSORS_H
#define SEER_CORE_SAFETENSORS_H

#include <stdint.h>

#include "core/tensor.h"

#define SAFETENSORS_MAX_DIMS 8
#define SAFETENSORS_MAX_HEADER 100000000 /* bytes; the format's own limit */
#define SAFETENSORS_MAX_SHARDS 65536     /* shard files of one index (real checkpoints: tens) */

typedef struct safetensors safetensors;

/* One .safetensors file. */
int safetensors_open(const char *path, safetensors **out);
/* A sharded checkpoint: the index's weight_map names the shard of every tensor; each shard file
   (in the index's directory) is opened once. */
int safetensors_open_index(const char *index_path, safetensors **out);
/* A model directory: DIR/model.safetensors.index.json when present, else DIR/model.safetensors. */
int safetensors_open_dir(const char *dir, safetensors **out);
void safetensors_free(safetensors *st); /* NULL is fine */

const char *safetensors_path(const safetensors *st); /* what was opened */
int safetensors_n_files(const safetensors *st);
const char *safetensors_file_path(const safetensors *st, int i);

int64_t safetensors_n_tensors(const safetensors *st);
const tensor *safetensors_tensor(const safetensors *st, int64_t i);
const char *safetensors_tensor_name(const safetensors *st, int64_t i); /* full name */
const char *safetensors_tensor_file(const safetensors *st, int64_t i); /* the shard holding it */
/* Shape as stored (PyTorch order) into shape[0..rank); returns rank (0..SAFETENSORS_MAX_DIMS). */
int safetensors_tensor_shape(const safetensors *st, int64_t i, int64_t shape[SAFETENSORS_MAX_DIMS]);
int64_t safetensors_find(const safetensors *st, const char *name); /* index, or −1 */

#endif
