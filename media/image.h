/* image.h — the one picture type every decoder in media/ produces and the preprocessing reads:
   8-bit RGB, row-major, no padding. Whatever a file holds (grayscale, bilevel, palette, 16-bit,
   CMYK, alpha) is converted to this at the decoding boundary, the way Hugging Face's
   load_image + convert_to_rgb turn a PIL image into RGB. */
#ifndef SEER_MEDIA_IMAGE_H
#define SEER_MEDIA_IMAGE_H

#include <stdint.h>

struct image_rgb8 {
    int32_t width, height;
    uint8_t *px; /* [height][width][3] R, G, B; seer_malloc'ed, released by image_rgb8_free */
};

/* Frees the pixels and zeroes *im; a zeroed image (or NULL) is fine. */
void image_rgb8_free(struct image_rgb8 *im);

#endif
