/* fuzz_image.c — libFuzzer target for media/: the bytes are opened as any input seer accepts
   (format from the magic bytes: JPEG, PNG, WebP, BMP, GIF, TIFF, PDF) and every page is decoded
   under small limits, so a mutated header claiming a huge size or page count is refused fast
   instead of timing out. Errors are expected; crashes, leaks, hangs and UB are findings.
   Seeds: any small image files (tests/media/pil_ref.py make DIR SEED writes a varied set). */
#include <stddef.h>
#include <stdint.h>

#include "media/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* poppler's fontconfig cache is suppressed for LeakSanitizer in cmake/lsan_suppressions.c. */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct media_limits lim = media_limits_default();
    lim.max_pixels = 4 << 20; /* 4 Mpx: a decode stays well under libFuzzer's 2 GB RSS limit */
    lim.dpi = 50;
    lim.max_pages = 4;
    media_doc *d = NULL;
    if (media_open_memory(data, size, "fuzz", &lim, &d) != 0)
        return 0;
    for (int p = 0; p < media_page_count(d); p++) {
        struct image_rgb8 im = {0};
        if (media_decode_page(d, p, &im) == 0 && im.width > 0) {
            /* touch the corners so a short buffer is an ASan finding, not a silent pass */
            volatile uint8_t sink = im.px[0] ^ im.px[((size_t)im.width * im.height - 1) * 3 + 2];
            (void)sink;
        }
        image_rgb8_free(&im);
        const double dpi = media_page_dpi(d, p); /* reads the file's own density fields */
        if (!(dpi >= 0 && dpi < 1e6))
            __builtin_trap();
    }
    media_close(d);
    return 0;
}
