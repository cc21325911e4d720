/* image_files.h — what the image-path tests (tests/api/fused.c, tests/cli/ask.c) share: a python3
   that has Debian's PIL and numpy, random-noise test images written by it at test time (fresh
   content from the test RNG each run, never constant), the tiny random checkpoints of
   tests/reference/gen_tiny.py, and reading what the numpy reference writes. */
#ifndef SEER_TESTS_IMAGE_FILES_H
#define SEER_TESTS_IMAGE_FILES_H

#include <stddef.h>
#include <stdint.h>

/* A python3 that imports PIL and numpy ("python3" or Debian's /usr/bin/python3), or NULL. */
const char *if_python_pil(void);

/* Runs a shell command line (printf-style) quietly; its output is shown with diag() when it
   fails. Returns the exit status. */
int if_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes a w × h image of uniform random RGB noise to `path`; the format comes from the
   extension as PIL reads it (.png, .jpg, .bmp, .webp, …). 0 on success. */
int if_noise_image(const char *path, int w, int h);

/* Runs gen_tiny.py into `dir` (preset, seed; vision "" or "hd64"/"hd72"; mmproj types such as
   "f32,f16"). 0 on success. */
int if_gen_tiny(const char *dir, const char *preset, uint64_t seed, const char *vision, const char *mmproj_types);

/* What the API tests that chat about an image start from: the "tiny" preset with its vision tower
   (f32 mmproj) in test_tmp_dir()/tiny and a w × h noise PNG beside it; their paths go to hf (the HF
   directory) and png, each `size` bytes. 0 on success. */
int if_tiny_vision(uint64_t seed, int w, int h, char *hf, char *png, size_t size);

/* A whole little-endian f32 file as a malloc'ed array (*n values), or NULL. */
float *if_read_f32(const char *path, size_t *n);

#endif
